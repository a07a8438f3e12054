//! What a tool call did to the work, read from its input and response: the todo list it set,
//! the task it created or updated, the plan it proposed, the lines it changed, the subagent it
//! launched, whether a shell command changes files. The fold keeps these so that the context
//! after a compaction can say where the work stands.
//!
//! Shapes by host (captured payloads where they exist; where none exists yet the shape comes
//! from the host's documentation or source, marked "(docs)"):
//!
//! - Claude Code `TodoWrite`: `{"todos": [{"content", "status", "activeForm"}]}` (docs);
//!   `TaskCreate`: input `{"subject", "description", "activeForm"?}`, response
//!   `{"task": {"id", "subject"}}`; `TaskUpdate`: `{"taskId", "status"?, "subject"?}` with
//!   status `pending | in_progress | completed | deleted` (docs); `ExitPlanMode`:
//!   `{"plan": "<markdown>"}` (docs); `Edit`: `{"old_string", "new_string"}`, `MultiEdit`:
//!   `{"edits": [{"old_string", "new_string"}]}`, `Write`: `{"content"}`; their response may
//!   carry `structuredPatch: [{"lines": ["-a", "+b", " c"]}]` and Write's `type: create|update`
//!   (docs); `Task` / `Agent`: `{"subagent_type", "description", "prompt"}`.
//! - Codex `update_plan`: `{"explanation"?, "plan": [{"step", "status"}]}` (docs).
//! - Gemini CLI `write_todos`: `{"todos": [{"description", "status"}]}`, status also
//!   `cancelled` (docs).
//!
//! Every reader here is lenient: a field of the wrong type reads as absent, and an input
//! that does not have the expected shape gives `None`, never an error.

use serde::Deserialize;

use super::RawJson;

use super::lenient::{Obj, Str};

/// A todo's status, as every host's spelling maps onto it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
    /// Gemini `cancelled`; Claude's `deleted` removes the task instead.
    Cancelled,
}

impl TodoStatus {
    pub fn parse(s: &str) -> Option<TodoStatus> {
        Some(
            match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "pending" | "todo" | "not_started" | "open" => TodoStatus::Pending,
                "in_progress" | "active" | "doing" | "started" => TodoStatus::InProgress,
                "completed" | "complete" | "done" | "finished" => TodoStatus::Completed,
                "cancelled" | "canceled" | "skipped" => TodoStatus::Cancelled,
                _ => return None,
            },
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
            TodoStatus::Cancelled => "cancelled",
        }
    }

    /// Still to do (pending or in progress).
    pub fn open(self) -> bool {
        matches!(self, TodoStatus::Pending | TodoStatus::InProgress)
    }
}

/// One item of a todo list as a tool set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoInput {
    pub text: String,
    pub status: TodoStatus,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TodoItem<'a> {
    #[serde(borrow)]
    content: Str<'a>,
    #[serde(borrow)]
    description: Str<'a>,
    #[serde(borrow)]
    step: Str<'a>,
    #[serde(borrow)]
    subject: Str<'a>,
    #[serde(borrow)]
    status: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ListInput<'a> {
    #[serde(borrow)]
    todos: Option<Vec<Obj<TodoItem<'a>>>>,
    #[serde(borrow)]
    plan: Option<Vec<Obj<TodoItem<'a>>>>,
}

fn object<'a, T: Deserialize<'a> + Default>(raw: Option<RawJson<'a>>) -> Option<T> {
    let raw = raw?;
    if !super::is_object(raw.get()) {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// Tools that replace the whole todo list: Claude `TodoWrite`, Gemini `write_todos`, Codex
/// `update_plan`.
pub(crate) fn is_todo_list_tool(tool: &str) -> bool {
    matches!(tool, "TodoWrite" | "write_todos" | "update_plan")
}

/// The list a todo-list tool set, in its order. Items without text or with an unknown status
/// are skipped; `None` if the input holds no list at all.
pub fn todo_list(tool: &str, input: Option<RawJson<'_>>) -> Option<Vec<TodoInput>> {
    if !is_todo_list_tool(tool) {
        return None;
    }
    let l: ListInput = object(input)?;
    let items = l.todos.or(l.plan)?;
    Some(
        items
            .into_iter()
            .filter_map(|i| i.0)
            .filter_map(|i| {
                let text = i
                    .content
                    .0
                    .or(i.description.0)
                    .or(i.step.0)
                    .or(i.subject.0)?;
                let status = i.status.as_deref().and_then(TodoStatus::parse)?;
                Some(TodoInput {
                    text: text.into_owned(),
                    status,
                })
            })
            .collect(),
    )
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TaskInput<'a> {
    #[serde(borrow, rename = "taskId")]
    task_id: Str<'a>,
    #[serde(borrow)]
    subject: Str<'a>,
    #[serde(borrow)]
    status: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TaskResponse<'a> {
    #[serde(borrow)]
    task: Obj<TaskRef<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TaskRef<'a> {
    #[serde(borrow)]
    id: Str<'a>,
}

/// A task-list change (Claude Code `TaskCreate` / `TaskUpdate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskChange {
    /// A new task; its id from the response when it has one.
    Create { id: Option<String>, subject: String },
    /// `status` None: only other fields changed. `deleted` removes the task.
    Update {
        id: String,
        status: Option<TodoStatus>,
        deleted: bool,
        subject: Option<String>,
    },
}

/// The task-list change a `TaskCreate` / `TaskUpdate` call made.
pub fn task_change(
    tool: &str,
    input: Option<RawJson<'_>>,
    response: Option<RawJson<'_>>,
) -> Option<TaskChange> {
    let i: TaskInput = object(input)?;
    match tool {
        "TaskCreate" => {
            let id = object::<TaskResponse>(response)
                .and_then(|r| r.task.0)
                .and_then(|t| t.id.0)
                .map(|s| s.into_owned());
            Some(TaskChange::Create {
                id,
                subject: i.subject.0?.into_owned(),
            })
        }
        "TaskUpdate" => {
            let status = i.status.as_deref();
            Some(TaskChange::Update {
                id: i.task_id.0?.into_owned(),
                status: status.and_then(TodoStatus::parse),
                deleted: status == Some("deleted"),
                subject: i.subject.0.map(|s| s.into_owned()),
            })
        }
        _ => None,
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PlanInput<'a> {
    #[serde(borrow)]
    plan: Str<'a>,
}

/// The plan an `ExitPlanMode` call proposed (its markdown text).
pub fn proposed_plan(tool: &str, input: Option<RawJson<'_>>) -> Option<String> {
    if tool != "ExitPlanMode" {
        return None;
    }
    let p: PlanInput = object(input)?;
    p.plan.0.map(|s| s.into_owned())
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AgentInput<'a> {
    #[serde(borrow)]
    subagent_type: Str<'a>,
    #[serde(borrow)]
    description: Str<'a>,
    #[serde(borrow)]
    prompt: Str<'a>,
    /// Codex `spawn_agent`.
    #[serde(borrow)]
    message: Str<'a>,
}

/// A subagent launch: its type (when the tool names one) and what it was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCall {
    pub agent_type: Option<String>,
    pub description: String,
}

/// The subagent a `Task` / `Agent` / `spawn_agent` call launches.
pub fn agent_call(tool: &str, input: Option<RawJson<'_>>) -> Option<AgentCall> {
    if !matches!(tool, "Task" | "Agent" | "spawn_agent") {
        return None;
    }
    let a: AgentInput = object(input)?;
    let description = a.description.0.or(a.prompt.0).or(a.message.0)?;
    Some(AgentCall {
        agent_type: a.subagent_type.0.map(|s| s.into_owned()),
        description: description.into_owned(),
    })
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EditPair<'a> {
    #[serde(borrow)]
    old_string: Str<'a>,
    #[serde(borrow)]
    new_string: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ChangeInput<'a> {
    #[serde(borrow)]
    old_string: Str<'a>,
    #[serde(borrow)]
    new_string: Str<'a>,
    #[serde(borrow)]
    content: Str<'a>,
    #[serde(borrow)]
    edits: Option<Vec<Obj<EditPair<'a>>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Hunk<'a> {
    #[serde(borrow)]
    lines: Option<Vec<Str<'a>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ChangeResponse<'a> {
    #[serde(borrow, rename = "type")]
    kind: Str<'a>,
    #[serde(borrow, rename = "structuredPatch")]
    patch: Option<Vec<Obj<Hunk<'a>>>>,
}

/// What a file-changing call did to the file's lines, as far as its input and response tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineChange {
    /// Lines added and removed, when known.
    pub added: Option<u64>,
    pub removed: Option<u64>,
    /// The host says the call created the file (Claude Write `type: "create"`), or updated it.
    pub created: Option<bool>,
    /// The file's line count after a whole-file write.
    pub lines_after: Option<u64>,
}

/// Lines of a text, as an editor counts them (a final newline ends the last line).
pub(crate) fn line_count(s: &str) -> u64 {
    if s.is_empty() {
        0
    } else {
        s.lines().count() as u64
    }
}

/// Lines added and removed between two texts (a line diff).
pub(crate) fn diff_lines(old: &str, new: &str) -> (u64, u64) {
    use similar::{ChangeTag, TextDiff};
    let (mut added, mut removed) = (0, 0);
    for c in TextDiff::from_lines(old, new).iter_all_changes() {
        match c.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

/// The line change of an Edit / MultiEdit / Write call: from the response's structured patch
/// when there is one (exact), else from the input (a line diff of old and new strings; a
/// Write's line count).
pub fn line_change(
    tool: &str,
    input: Option<RawJson<'_>>,
    response: Option<RawJson<'_>>,
) -> LineChange {
    let mut c = LineChange::default();
    let resp: Option<ChangeResponse> = object(response);
    if let Some(r) = &resp {
        c.created = match r.kind.as_deref() {
            Some("create") => Some(true),
            Some("update") => Some(false),
            _ => None,
        };
        if let Some(hunks) = &r.patch {
            let (mut a, mut d) = (0, 0);
            for h in hunks.iter().filter_map(|h| h.0.as_ref()) {
                for l in h.lines.iter().flatten().filter_map(|l| l.as_deref()) {
                    if l.starts_with('+') {
                        a += 1;
                    } else if l.starts_with('-') {
                        d += 1;
                    }
                }
            }
            if !hunks.is_empty() {
                c.added = Some(a);
                c.removed = Some(d);
            }
        }
    }
    let Some(i) = object::<ChangeInput>(input) else {
        return c;
    };
    if let Some(content) = i.content.as_deref() {
        c.lines_after = Some(line_count(content));
    }
    if c.added.is_some() {
        return c;
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let (Some(o), Some(n)) = (i.old_string.as_deref(), i.new_string.as_deref()) {
        pairs.push((o.to_owned(), n.to_owned()));
    }
    for e in i.edits.iter().flatten().filter_map(|e| e.0.as_ref()) {
        if let (Some(o), Some(n)) = (e.old_string.as_deref(), e.new_string.as_deref()) {
            pairs.push((o.to_owned(), n.to_owned()));
        }
    }
    if !pairs.is_empty() && matches!(tool, "Edit" | "MultiEdit" | "replace" | "edit_file") {
        let (mut a, mut d) = (0, 0);
        for (o, n) in &pairs {
            let (x, y) = diff_lines(&with_newline(o), &with_newline(n));
            a += x;
            d += y;
        }
        c.added = Some(a);
        c.removed = Some(d);
    }
    c
}

/// Old and new strings are fragments of lines: end both with a newline so that a change
/// inside one line counts as one line removed and one added.
fn with_newline(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_owned()
    } else {
        format!("{s}\n")
    }
}

/// Shell tools, by name on any host.
pub fn is_shell_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Bash"
            | "run_shell_command"
            | "shell"
            | "exec"
            | "execute_command"
            | "local_shell"
            | "run_commands"
    )
}

/// Commands (the first word of any part of a pipeline or list) that change files.
const MUTATING_COMMANDS: &[&str] = &[
    "rm", "mv", "cp", "touch", "mkdir", "rmdir", "tee", "patch", "truncate", "ln", "chmod",
    "install", "dd", "unzip", "tar",
];

/// `git` subcommands that change the working tree.
const MUTATING_GIT: &[&str] = &[
    "checkout",
    "switch",
    "reset",
    "restore",
    "apply",
    "am",
    "merge",
    "rebase",
    "pull",
    "stash",
    "revert",
    "cherry-pick",
    "mv",
    "rm",
    "clean",
];

/// Whether a shell command changes files in ways the fold cannot follow: a command from
/// `MUTATING_COMMANDS`, `sed -i`, a `git` subcommand from `MUTATING_GIT`, or an output
/// redirection to a file. A heuristic on the command text, so deterministic; it errs toward
/// saying yes.
pub fn shell_mutates(command: &str) -> bool {
    let redirect = command.match_indices('>').any(|(i, _)| {
        let rest = &command[i + 1..];
        let prev = command[..i].chars().last();
        // `2>&1`, `>&2` and `> /dev/null` write no file.
        !rest.starts_with('&')
            && !rest.trim_start().starts_with("/dev/null")
            && !matches!(prev, Some('-' | '='))
    });
    if redirect {
        return true;
    }
    command
        .split(['|', ';', '&', '\n', '(', ')'])
        .map(|part| {
            part.split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect::<Vec<_>>()
        })
        .any(|words| match words.as_slice() {
            [] => false,
            ["sudo", rest @ ..] | rest @ [..] => match rest {
                [cmd, ..] if MUTATING_COMMANDS.contains(cmd) => true,
                ["sed", args @ ..] => args.iter().any(|a| a.starts_with("-i")),
                ["git", sub, ..] => MUTATING_GIT.contains(sub),
                _ => false,
            },
        })
}

/// The exit status a host's error text starts with: Claude Code's `Exit code 2`, Gemini's
/// `Exit Code: 2`.
pub fn exit_code_in(text: &str) -> Option<i64> {
    let first = text.trim_start().lines().next()?.trim();
    let lower = first.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("exit code")
        .or_else(|| lower.strip_prefix("exit status"))?;
    let rest = rest.trim_start_matches([':', ' ']);
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &'static str) -> RawJson<'static> {
        serde_json::from_str::<&serde_json::value::RawValue>(json)
            .unwrap()
            .into()
    }

    #[test]
    fn todo_lists_of_every_host() {
        let claude = raw(
            r#"{"todos":[{"content":"a","status":"completed","activeForm":"A"},{"content":"b","status":"in_progress"},{"content":"c","status":"pending"},{"status":"pending"},{"content":"d","status":"weird"}]}"#,
        );
        let l = todo_list("TodoWrite", Some(claude)).unwrap();
        assert_eq!(
            l.iter()
                .map(|t| (t.text.as_str(), t.status))
                .collect::<Vec<_>>(),
            [
                ("a", TodoStatus::Completed),
                ("b", TodoStatus::InProgress),
                ("c", TodoStatus::Pending)
            ]
        );
        let gemini = raw(r#"{"todos":[{"description":"x","status":"cancelled"}]}"#);
        assert_eq!(
            todo_list("write_todos", Some(gemini)).unwrap()[0].status,
            TodoStatus::Cancelled
        );
        let codex = raw(r#"{"explanation":"e","plan":[{"step":"s1","status":"in_progress"}]}"#);
        assert_eq!(todo_list("update_plan", Some(codex)).unwrap()[0].text, "s1");
        assert!(todo_list("Bash", Some(codex)).is_none());
        assert!(todo_list("TodoWrite", Some(raw("[1]"))).is_none());
    }

    #[test]
    fn tasks() {
        let c = task_change(
            "TaskCreate",
            Some(raw(r#"{"subject":"Write tests","description":"d"}"#)),
            Some(raw(r#"{"task":{"id":"7","subject":"Write tests"}}"#)),
        );
        assert_eq!(
            c,
            Some(TaskChange::Create {
                id: Some("7".into()),
                subject: "Write tests".into()
            })
        );
        let u = task_change(
            "TaskUpdate",
            Some(raw(r#"{"taskId":"7","status":"deleted"}"#)),
            None,
        );
        assert!(matches!(u, Some(TaskChange::Update { deleted: true, .. })));
    }

    #[test]
    fn line_changes() {
        let e = raw(r#"{"file_path":"a","old_string":"x\ny","new_string":"x\nz\nw"}"#);
        let c = line_change("Edit", Some(e), None);
        assert_eq!((c.added, c.removed), (Some(2), Some(1)));
        let w = raw(r#"{"file_path":"a","content":"1\n2\n3\n"}"#);
        let r = raw(r#"{"type":"create","structuredPatch":[]}"#);
        let c = line_change("Write", Some(w), Some(r));
        assert_eq!(
            (c.created, c.lines_after, c.added),
            (Some(true), Some(3), None)
        );
        let r = raw(r#"{"type":"update","structuredPatch":[{"lines":["-a","+b","+c"," d"]}]}"#);
        let c = line_change("Write", Some(w), Some(r));
        assert_eq!(
            (c.added, c.removed, c.created),
            (Some(2), Some(1), Some(false))
        );
        let m = raw(
            r#"{"edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":""}]}"#,
        );
        let c = line_change("MultiEdit", Some(m), None);
        assert_eq!((c.added, c.removed), (Some(1), Some(2)));
    }

    #[test]
    fn shell_mutation_heuristic() {
        for yes in [
            "rm -rf target",
            "echo hi > notes.txt",
            "sed -i 's/a/b/' f",
            "cd x && git checkout main",
            "FOO=1 mv a b",
            "cat a | tee b",
        ] {
            assert!(shell_mutates(yes), "{yes}");
        }
        for no in [
            "ls -la",
            "cargo test 2>&1",
            "git status",
            "grep -r x . > /dev/null",
            "echo hello",
            "make check",
        ] {
            assert!(!shell_mutates(no), "{no}");
        }
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code_in("Exit code 2\nls: x"), Some(2));
        assert_eq!(exit_code_in("Exit Code: 101"), Some(101));
        assert_eq!(exit_code_in("ls: x"), None);
    }
}
