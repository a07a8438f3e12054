//! What is searched: one document per journal record that says something a person looks for
//! (a prompt, the assistant's closing message, a tool call with a bounded excerpt of its
//! outcome or error, a failure, a compaction summary, a todo list, a subagent, a note), read
//! from the record through the event model every other reader uses ([`Event::parse`]).
//! Records that say nothing of the kind (a SessionStart, the hook's own injections, webhook
//! attempts) make no document.
//!
//! Everything here is a pure function of the record's bytes, so the index is the same whoever
//! builds it, and when.

use serde::Serialize;

use crate::context::text::{clean, cut, one_line};
use crate::event::tool_effects::{is_shell_tool, todo_list};
use crate::event::{Event, EventKind, RawJson};
use crate::format::payload;

/// The longest text kept per document, by what it is (Unicode scalar values): enough to find
/// a record and show why it matched, never a whole tool output.
const PROMPT_MAX: usize = 4000;
const REPLY_MAX: usize = 4000;
const SUMMARY_MAX: usize = 8000;
const OUTPUT_MAX: usize = 1500;
const ERROR_MAX: usize = 1500;
const DETAIL_MAX: usize = 1000;
const OTHER_MAX: usize = 2000;

/// What a document is; `--kind` and the `kind:` field select by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DocKind {
    /// A prompt (the user's, or one the host or a parent session sent).
    Prompt,
    /// The assistant's closing message of a turn.
    Reply,
    /// A completed tool call (its command, path or pattern, and an excerpt of its outcome).
    Tool,
    /// A tool call as it started (found with `--kind call`: a call that never completed
    /// has only this).
    Call,
    /// A tool call or a turn that failed, with its error.
    Failure,
    /// A compaction: the host's summary, or the instructions it was given.
    Compact,
    /// A todo list or a task as a tool set it.
    Todo,
    /// A subagent started or stopped (its task, its result).
    Subagent,
    /// A notification, or a note a hook author set (`sjournal context set`).
    Note,
    /// A reviewed (accepted) memory item of the project or the global scope.
    Memory,
    /// Anything else with text: input that was not JSON, an unknown event's message.
    Other,
}

impl DocKind {
    pub const ALL: [DocKind; 11] = [
        DocKind::Prompt,
        DocKind::Reply,
        DocKind::Tool,
        DocKind::Call,
        DocKind::Failure,
        DocKind::Compact,
        DocKind::Todo,
        DocKind::Subagent,
        DocKind::Note,
        DocKind::Memory,
        DocKind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Prompt => "prompt",
            DocKind::Reply => "reply",
            DocKind::Tool => "tool",
            DocKind::Call => "call",
            DocKind::Failure => "failure",
            DocKind::Compact => "compact",
            DocKind::Todo => "todo",
            DocKind::Subagent => "subagent",
            DocKind::Note => "note",
            DocKind::Memory => "memory",
            DocKind::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<DocKind> {
        DocKind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
    }

    /// Searched when no kind is asked for: every kind but `call` (a completed call is
    /// found as `tool` or `failure`, with its outcome; its start would only repeat it).
    pub fn default_set() -> Vec<DocKind> {
        DocKind::ALL
            .into_iter()
            .filter(|k| *k != DocKind::Call)
            .collect()
    }
}

/// Where the record behind a document stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A record of the session's journal that `verify` checks.
    Journal,
    /// A CRC-valid record found after damage in the journal (the chain is broken before it:
    /// `sjournal verify` reports the damage, `sjournal repair` rebuilds the journal), or the
    /// damaged record itself as far as its bytes read.
    Damaged,
    /// A record of the session's rescue journal (events the damaged journal refused).
    Rescued,
    /// A spooled event not yet merged into the journal: it has no seq or hash yet.
    Pending,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Journal => "journal",
            Status::Damaged => "damaged",
            Status::Rescued => "rescued",
            Status::Pending => "pending",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::Journal,
            Status::Damaged,
            Status::Rescued,
            Status::Pending,
        ]
        .into_iter()
        .find(|k| k.as_str().eq_ignore_ascii_case(s))
    }
}

/// The searchable content of one record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Content {
    pub kind: Option<DocKind>,
    /// The tool's name as the host gave it.
    pub tool: Option<String>,
    /// Paths the record names (as the journal has them: absolute on most hosts).
    pub files: Vec<String>,
    pub failed: bool,
    /// The working directory the event reports (the session's project is read from it).
    pub cwd: Option<String>,
    /// The text searched and shown: cleaned, bounded.
    pub text: String,
}

/// The searchable content of the record (`kind`, `payload` as the journal holds them); its
/// `kind` is None when the record makes no document (its `cwd` may still be known).
pub fn content(seq: u64, kind: &str, payload_bytes: &[u8]) -> Content {
    if payload::is_system_kind(kind) {
        return system(seq, kind, payload_bytes).unwrap_or_default();
    }
    let Ok(raw) = payload::decode_event(seq, payload_bytes) else {
        return Content::default();
    };
    content_of_json(kind, raw)
}

/// The content of an event's JSON text (a pending spool record's).
pub fn content_of_json(kind: &str, raw_json: &str) -> Content {
    if payload::is_system_kind(kind) {
        return Content::default();
    }
    let raw = crate::event::lenient::text(raw_json);
    let e = Event::parse(kind, &raw);
    let mut c = event(&e).unwrap_or_default();
    c.cwd = e.cwd.as_deref().map(str::to_owned);
    c
}

fn system(seq: u64, kind: &str, bytes: &[u8]) -> Option<Content> {
    match kind {
        payload::KIND_UNPARSED => {
            let u: payload::Unparsed = payload::decode_system(seq, bytes).ok()?;
            let text = String::from_utf8_lossy(&u.raw);
            Some(Content {
                kind: Some(DocKind::Other),
                text: bounded(&text, OTHER_MAX),
                ..Default::default()
            })
        }
        payload::KIND_CONTEXT_SET => {
            let v: serde_json::Value = payload::decode_system(seq, bytes).ok()?;
            let text = v.get("text")?.as_str()?;
            let key = v.get("key").and_then(|k| k.as_str()).unwrap_or("");
            Some(Content {
                kind: Some(DocKind::Note),
                text: bounded(&format!("{key}: {text}"), OTHER_MAX),
                ..Default::default()
            })
        }
        _ => None,
    }
}

fn event(e: &Event<'_>) -> Option<Content> {
    let mut c = Content {
        cwd: e.cwd.as_deref().map(str::to_owned),
        ..Default::default()
    };
    let mut text: Vec<String> = Vec::new();
    match e.kind {
        EventKind::UserPromptSubmit => {
            c.kind = Some(DocKind::Prompt);
            text.push(bounded(e.prompt.as_deref()?, PROMPT_MAX));
        }
        // A prompt that is no turn of this session (a subagent's task, the host's own) still
        // reads as a prompt.
        EventKind::Other if e.prompt.is_some() => {
            c.kind = Some(DocKind::Prompt);
            text.push(bounded(e.prompt.as_deref()?, PROMPT_MAX));
        }
        EventKind::Stop => {
            c.kind = Some(DocKind::Reply);
            text.push(bounded(e.message.as_deref()?, REPLY_MAX));
        }
        EventKind::StopFailure => {
            c.kind = Some(DocKind::Failure);
            c.failed = true;
            text.push(bounded(
                e.error.as_deref().or(e.message.as_deref())?,
                ERROR_MAX,
            ));
        }
        EventKind::PostCompact => {
            c.kind = Some(DocKind::Compact);
            text.push(bounded(e.summary.as_deref()?, SUMMARY_MAX));
        }
        EventKind::PreCompact => {
            c.kind = Some(DocKind::Compact);
            text.push(bounded(e.custom_instructions.as_deref()?, OTHER_MAX));
        }
        EventKind::SubagentStart | EventKind::SubagentStop => {
            // Claude Code's compactor stops as an agent of type "": its message is the summary.
            let compactor =
                e.kind == EventKind::SubagentStop && e.agent_type.as_deref() == Some("");
            c.kind = Some(if compactor {
                DocKind::Compact
            } else {
                DocKind::Subagent
            });
            let parts: Vec<&str> = [e.agent_type.as_deref(), e.message.as_deref()]
                .into_iter()
                .flatten()
                .filter(|s| !s.is_empty())
                .collect();
            if parts.is_empty() {
                return None;
            }
            let max = if compactor { SUMMARY_MAX } else { REPLY_MAX };
            text.push(bounded(&parts.join(": "), max));
        }
        EventKind::TaskCreated | EventKind::TaskCompleted => {
            c.kind = Some(DocKind::Todo);
            text.push(bounded(e.task_subject.as_deref()?, OTHER_MAX));
        }
        EventKind::Notification => {
            c.kind = Some(DocKind::Note);
            text.push(bounded(e.message.as_deref()?, OTHER_MAX));
        }
        EventKind::PreToolUse | EventKind::PostToolUse | EventKind::PostToolUseFailure => {
            tool_call(e, &mut c, &mut text)?;
        }
        _ => {
            // An event this list does not know, with a message or an error: searchable as is.
            let t = e.message.as_deref().or(e.error.as_deref())?;
            c.kind = Some(DocKind::Other);
            c.failed = e.error.is_some();
            text.push(bounded(t, OTHER_MAX));
        }
    }
    if let Some(p) = e.file_path.as_deref() {
        push_file(&mut c.files, p);
    }
    if let Some((_, p)) = &e.file_touch {
        push_file(&mut c.files, p);
    }
    text.retain(|t| !t.is_empty());
    if text.is_empty() && c.files.is_empty() && c.tool.is_none() {
        return None;
    }
    c.text = text.join("\n");
    Some(c)
}

fn tool_call(e: &Event<'_>, c: &mut Content, text: &mut Vec<String>) -> Option<()> {
    let tool = e.tool.as_ref()?;
    let input = e.tool_input();
    c.tool = Some(tool.name.to_string());
    for (_, p) in input.touched(&tool.name) {
        push_file(&mut c.files, p);
    }
    if let Some(p) = input.path() {
        push_file(&mut c.files, p);
    }
    let failed = e.kind == EventKind::PostToolUseFailure
        || tool.failed
        || tool.exit_code.is_some_and(|x| x != 0);
    c.failed = failed && e.kind != EventKind::PreToolUse;
    c.kind = Some(if e.kind == EventKind::PreToolUse {
        DocKind::Call
    } else if c.failed {
        DocKind::Failure
    } else if todo_list(&tool.name, tool.input).is_some() {
        DocKind::Todo
    } else {
        DocKind::Tool
    });
    let detail = tool
        .detail
        .clone()
        .or_else(|| input.detail())
        .map(|d| bounded(&d, DETAIL_MAX));
    if let Some(d) = detail {
        text.push(d);
    }
    if let Some(items) = todo_list(&tool.name, tool.input) {
        let lines: Vec<String> = items
            .iter()
            .map(|i| format!("[{}] {}", i.status.as_str(), one_line(&i.text)))
            .collect();
        text.push(bounded(&lines.join("\n"), OTHER_MAX));
    }
    if e.kind != EventKind::PreToolUse {
        if let Some(err) = e.error.as_deref() {
            text.push(bounded(err, ERROR_MAX));
        }
        // The outcome of a shell command or a failed call: what a person searches for
        // ("which command printed this?"). A read file's content or an edit's diff would only
        // repeat the file.
        if c.failed || is_shell_tool(&tool.name) || !tool.name.is_empty() {
            if let Some(r) = tool
                .response
                .filter(|_| response_wanted(&tool.name, c.failed))
            {
                let out = strings_of(r, OUTPUT_MAX);
                if !out.is_empty() {
                    text.push(out);
                }
            }
        }
    }
    Some(())
}

/// Whether an excerpt of a call's response is worth indexing: a failure's, a shell command's,
/// a search's (grep, glob, web): not a read file's content or a file change's echo.
fn response_wanted(tool: &str, failed: bool) -> bool {
    failed || crate::event::tools::file_op(tool).is_none()
}

/// The string values of a JSON response, in order, up to `max` characters: a plain string as
/// it is; an object's or array's strings joined by line breaks (Claude's `stdout`/`stderr`,
/// Gemini's `llmContent`, MCP tools' `content[].text`).
fn strings_of(r: RawJson<'_>, max: usize) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(r.get()) else {
        return bounded(r.get(), max);
    };
    let mut out = String::new();
    collect(&v, &mut out, max * 4);
    bounded(&out, max)
}

fn collect(v: &serde_json::Value, out: &mut String, budget: usize) {
    if out.len() >= budget {
        return;
    }
    match v {
        serde_json::Value::String(s) if !s.trim().is_empty() => {
            if !out.is_empty() {
                out.push('\n');
            }
            let room = budget.saturating_sub(out.len());
            let mut end = s.len().min(room);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            out.push_str(&s[..end]);
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect(x, out, budget)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect(x, out, budget)),
        _ => {}
    }
}

fn push_file(files: &mut Vec<String>, p: &str) {
    let p = one_line(p);
    if !p.is_empty() && !files.contains(&p) {
        files.push(p);
    }
}

/// `s` cleaned (control characters and escapes out) and cut to `max` characters.
pub fn bounded(s: &str, max: usize) -> String {
    cut(clean(s).trim(), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(kind: &str, json: &str) -> Option<Content> {
        Some(content_of_json(kind, json)).filter(|c| c.kind.is_some())
    }

    #[test]
    fn a_prompt_is_a_prompt() {
        let x = c(
            "UserPromptSubmit",
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/p","prompt":"fix the migration"}"#,
        )
        .unwrap();
        assert_eq!(x.kind, Some(DocKind::Prompt));
        assert_eq!(x.text, "fix the migration");
        assert_eq!(x.cwd.as_deref(), Some("/p"));
    }

    #[test]
    fn a_failed_shell_command_is_a_failure_with_its_error() {
        let x = c(
            "PostToolUseFailure",
            r#"{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"Bash","tool_input":{"command":"cargo test"},"tool_use_id":"t","error":"Exit code 101\nerror[E0425]: cannot find value"}"#,
        )
        .unwrap();
        assert_eq!(x.kind, Some(DocKind::Failure));
        assert!(x.failed);
        assert_eq!(x.tool.as_deref(), Some("Bash"));
        assert!(x.text.contains("cargo test"));
        assert!(x.text.contains("E0425"));
    }

    #[test]
    fn an_edit_names_its_file_and_not_its_content() {
        let x = c(
            "PostToolUse",
            r#"{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Edit","tool_input":{"file_path":"/p/src/loader.rs","old_string":"a","new_string":"b"},"tool_response":{"filePath":"/p/src/loader.rs","oldString":"a"}}"#,
        )
        .unwrap();
        assert_eq!(x.kind, Some(DocKind::Tool));
        assert_eq!(x.files, vec!["/p/src/loader.rs"]);
        assert!(!x.text.contains("oldString"));
    }

    #[test]
    fn a_session_start_makes_no_document() {
        assert!(c(
            "SessionStart",
            r#"{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}"#
        )
        .is_none());
    }

    #[test]
    fn a_todo_list_is_a_todo() {
        let x = c(
            "PostToolUse",
            r#"{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"TodoWrite","tool_input":{"todos":[{"content":"write the loader","status":"in_progress","activeForm":"x"}]},"tool_response":{}}"#,
        )
        .unwrap();
        assert_eq!(x.kind, Some(DocKind::Todo));
        assert!(x.text.contains("write the loader"), "{}", x.text);
    }
}
