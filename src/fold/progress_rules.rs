//! Folding what recovery needs (`progress.rs`): the rules, one per concern. Each reads only the
//! event and the state, like the rest of the fold.
//!
//! - Requests: the first prompt is the original request; every prompt's sentences that pass
//!   the marker rule (`instructions.rs`) and a compaction's custom instructions are standing
//!   instructions (the same text given again moves to the end).
//! - Todos: a whole-list tool (TodoWrite, write_todos, update_plan) replaces the list when it
//!   succeeds; TaskCreate / TaskUpdate and the TaskCreated / TaskCompleted events edit it by
//!   task id.
//! - Plan: ExitPlanMode's PreToolUse proposes; its PostToolUse approves, its failure or denial
//!   refuses.
//! - Failures (main agent only; interruptions are not failures): keyed by tool and normalised
//!   detail; a later success of the same key resolves it, and so does a success of the same
//!   shell command family (the same words but for options: `make -j1 check` after
//!   `make check`), noted as the variant that worked.
//! - Where the turn left off: a prompt opens it (running), Stop ends it (stopped, with the tail
//!   of the last assistant message), StopFailure (failed), and SessionEnd or a new
//!   SessionStart other than compact while it runs mark it interrupted, with the calls still
//!   open. Its last main-agent tool actions are kept.
//! - Files: a change's line counts (`event::tool_effects::line_change`), created when the host says so
//!   or when a file's first touch is a write; shell commands that change files are counted.
//! - Subagents: a launch (Task / Agent / spawn_agent) gives the next matching SubagentStart
//!   its description; SubagentStop its result. Agents with `agent_type` "" are the host's own
//!   (Claude Code's compactor): their last message is the open compaction's summary.
//! - Seen: `sjournal.injected` records add their items (key → hash), but for `mode`
//!   `subagent` (a subagent's context is its own); a new compaction, a clear or a startup
//!   resets it, a resume or fork keeps it. Every injection but the recovery block leaves out
//!   the items seen with the same hash. A `recovery` record whose `event_seq` is at or after
//!   the last compaction answers it (`compactions.last.recovered_seq`; a record without
//!   `mode`: the one at that compaction's SessionStart); until then the next SessionStart or
//!   UserPromptSubmit gets the recovery block.

use serde::Deserialize;

use super::bounded::{assign, assign_opt, cut, cut_in_place, cut_str, key};
use super::events::Input;
use super::{
    Action, Background, Failure, FileStats, Instruction, Launch, Plan, RecordView, Resolution,
    State, Todo,
};
use crate::event::lenient::{Obj, Str};
use crate::event::tool_effects::{self as effects, TaskChange, TodoStatus};
use crate::event::{Event, EventKind, FileOp};
use crate::format::payload::Injected;
use crate::limits::{
    BACKGROUND_KEPT, DETAIL_MAX_BYTES, ERROR_LINE_MAX_BYTES, ERROR_TAIL_LINES, FAILURES_KEPT,
    INSTRUCTIONS_KEPT, INSTRUCTION_MAX_BYTES, LAUNCHES_KEPT, LEFT_OFF_MAX_BYTES, NAME_MAX_BYTES,
    PLAN_HEAD_MAX_BYTES, SEEN_MAX, SUBAGENT_TEXT_MAX_BYTES, SUMMARY_MAX_BYTES, TODOS_MAX,
    TODO_TEXT_MAX_BYTES, TURN_ACTIONS_KEPT,
};

pub(super) const STOPPED: &str = "stopped";
pub(super) const FAILED: &str = "failed";
pub(super) const INTERRUPTED: &str = "interrupted";

// A turn keeps at least its last action (`tool_ends` makes room before it adds one).
const _: () = assert!(TURN_ACTIONS_KEPT > 0);

/// The last `max` bytes of `s`, at a character boundary.
fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_owned()
}

/// Whitespace runs collapsed to one space, trimmed: how details and instructions compare.
pub fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_words(&mut out, s.split_whitespace());
    out
}

/// Appends `words` to `out`, one space between them (what `join(" ")` gives, without the
/// vector of words: the fold does this on every tool call).
fn push_words<'a>(out: &mut String, words: impl Iterator<Item = &'a str>) {
    for (i, w) in words.enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
    }
}

/// `squash(a) == squash(b)`, without building either.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// A shell command's family: its words that are not options (do not start with `-`), after
/// leading `VAR=value` assignments. Two commands of the same family differ only in their
/// options (`make check` and `make -j1 check`, `cargo test -p m0` and `cargo test -p m0
/// --release`), so one passing fixes the other's failure; `cargo test -p m1` is another
/// family than `cargo test -p m0`.
pub fn command_family(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    push_words(&mut out, family_words(command));
    out
}

/// The words of `command`'s family ([`command_family`] joins them).
fn family_words(command: &str) -> impl Iterator<Item = &str> {
    command
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .filter(|w| !w.starts_with('-'))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct BackgroundTask<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow, rename = "type")]
    kind: Str<'a>,
    #[serde(borrow)]
    status: Str<'a>,
    #[serde(borrow)]
    description: Str<'a>,
}

impl State {
    /// Before the event's own bookkeeping closes the turn: a turn that ends without its Stop
    /// was interrupted.
    pub(super) fn work_before(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        let ends = match e.kind {
            EventKind::SessionEnd => true,
            EventKind::SessionStart => e.source.as_deref() != Some("compact"),
            _ => false,
        };
        if ends && self.left_off.running.is_some() {
            self.turn_interrupted(rec);
        }
    }

    /// The turn under way ends without its Stop: interrupted, with the calls still open.
    fn turn_interrupted(&mut self, rec: &RecordView<'_>) {
        let mut open: Vec<Action> = self
            .tools
            .open
            .values()
            .filter(|c| c.agent_id.is_none())
            .map(|c| Action {
                seq: c.seq,
                tool: c.tool.clone(),
                detail: c.detail.clone(),
                outcome: "open".into(),
                exit_code: None,
            })
            .collect();
        open.sort_by_key(|a| a.seq);
        let lo = &mut self.left_off;
        let run = lo.running.take().unwrap_or_default();
        *lo = super::LeftOff {
            turn: run.turn,
            prompt_seq: run.prompt_seq,
            outcome: INTERRUPTED.into(),
            end_seq: Some(rec.seq),
            message: None,
            actions: run.actions,
            open_calls: open,
            running: None,
        };
    }

    /// After the event's own bookkeeping. `compactions` is the compaction count before it.
    pub(super) fn work_after<'a>(
        &mut self,
        e: &Event<'a>,
        input: &Input<'_, 'a>,
        rec: &RecordView<'_>,
        compactions: u64,
    ) {
        self.first_identity(e);
        match e.kind {
            EventKind::SessionStart => {
                if matches!(e.source.as_deref(), Some("clear" | "startup")) {
                    self.reset_seen(rec.seq);
                }
            }
            EventKind::UserPromptSubmit => self.prompted(rec),
            EventKind::PreToolUse => self.tool_starts(e, rec),
            EventKind::PostToolUse | EventKind::PostToolUseFailure => self.tool_ends(e, input, rec),
            EventKind::PermissionDenied
                if e.tool.as_ref().is_some_and(|t| t.name == "ExitPlanMode") =>
            {
                if let Some(p) = self.plan.as_mut() {
                    p.approved = Some(false);
                }
            }
            EventKind::SubagentStart | EventKind::SubagentStop => self.subagent_work(e),
            EventKind::Stop => {
                if self.turns.last_prompt_seq == Some(rec.seq) {
                    // A turn reported only once it ended (OpenClaw onPostTurn).
                    self.prompted(rec);
                }
                self.turn_stopped(e, rec, false);
                self.background_from(e);
            }
            EventKind::StopFailure => self.turn_stopped(e, rec, true),
            EventKind::TaskCreated | EventKind::TaskCompleted => self.task_event(e, rec),
            EventKind::PreCompact => {
                if let Some(ci) = e.custom_instructions.as_deref().map(str::trim) {
                    if !ci.is_empty() {
                        self.instruction(ci, "compact", rec.seq);
                    }
                }
            }
            _ => {}
        }
        if self.compactions.count > compactions {
            let turn = self.turns.count;
            if let Some(c) = self.compactions.last.as_mut() {
                c.turn = turn;
            }
            self.reset_seen(rec.seq);
        }
    }

    fn first_identity(&mut self, e: &Event<'_>) {
        let id = &mut self.identity;
        if id.project_dir.is_none() {
            id.project_dir = e.cwd.as_deref().map(key);
        }
        if id.first_model.is_none() {
            id.first_model = e.model.as_deref().map(key);
        }
        if id.first_permission_mode.is_none() {
            id.first_permission_mode = e.permission_mode.as_deref().map(key);
        }
    }

    fn reset_seen(&mut self, seq: u64) {
        self.seen.since_seq = seq;
        self.seen.items.clear();
    }

    /// The prompt the fold just kept (`State::prompts`' last) opens a turn.
    fn prompted(&mut self, rec: &RecordView<'_>) {
        if self.left_off.running.is_some() {
            // A new prompt while a turn was under way: it ended without its Stop.
            self.turn_interrupted(rec);
        }
        self.left_off.running = Some(super::Running {
            turn: self.turns.count,
            prompt_seq: rec.seq,
            actions: Default::default(),
        });
        let Some(p) = self.prompts.back_mut().filter(|p| p.seq == rec.seq) else {
            return;
        };
        if self.requests.original.is_none() {
            self.requests.original = Some(p.clone());
        }
        // The text is lent out while its instructions are kept (they change no prompt),
        // rather than the prompt cloned for every turn.
        let text = std::mem::take(&mut p.text);
        for s in super::instructions::instructions(&text) {
            self.instruction(s, "prompt", rec.seq);
        }
        self.prompts.back_mut().expect("just seen").text = text;
    }

    fn instruction(&mut self, text: &str, source: &str, seq: u64) {
        let text = cut(text, INSTRUCTION_MAX_BYTES).0;
        let r = &mut self.requests;
        r.instructions.retain(|i| !same_words(&i.text, &text));
        r.instructions.push_back(Instruction {
            seq,
            turn: self.turns.count,
            source: source.into(),
            text,
        });
        while r.instructions.len() > INSTRUCTIONS_KEPT {
            r.instructions.pop_front();
            r.forgotten += 1;
        }
    }

    fn tool_starts(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        let Some(t) = &e.tool else { return };
        if let Some(call) = effects::agent_call(&t.name, t.input) {
            let l = &mut self.subagents.launches;
            l.push_back(Launch {
                seq: rec.seq,
                agent_type: call.agent_type.as_deref().map(key),
                description: cut(&call.description, SUBAGENT_TEXT_MAX_BYTES).0,
            });
            while l.len() > LAUNCHES_KEPT {
                l.pop_front();
            }
        }
        if let Some(plan) = effects::proposed_plan(&t.name, t.input) {
            self.plan = Some(Plan {
                seq: rec.seq,
                turn: self.turns.count,
                head: cut(plan.trim(), PLAN_HEAD_MAX_BYTES).0,
                approved: None,
            });
        }
    }

    fn tool_ends<'a>(&mut self, e: &Event<'a>, input: &Input<'_, 'a>, rec: &RecordView<'_>) {
        let Some(t) = &e.tool else { return };
        let input = input.get();
        let detail = t
            .detail
            .clone()
            .or_else(|| input.detail())
            .map(|d| {
                let mut d = squash(&d);
                cut_in_place(&mut d, DETAIL_MAX_BYTES);
                d
            })
            .unwrap_or_default();
        let main = e.agent_id.is_none();
        if let (true, Some(run)) = (main, self.left_off.running.as_mut()) {
            // The window is full: the action that falls out lends its buffers to the new one.
            let mut dropped = None;
            while run.actions.len() >= TURN_ACTIONS_KEPT {
                dropped = run.actions.pop_front();
            }
            let mut a = dropped.unwrap_or_default();
            // Every field set (a field added to `Action` must be set here, or this does not
            // compile): nothing of the dropped action stays.
            let Action {
                seq,
                tool,
                detail: action_detail,
                outcome,
                exit_code,
            } = &mut a;
            *seq = rec.seq;
            assign(tool, cut_str(&t.name, NAME_MAX_BYTES).0);
            assign_opt(
                action_detail,
                (!detail.is_empty()).then_some(detail.as_str()),
            );
            assign(outcome, if t.failed { FAILED } else { "ok" });
            *exit_code = t.exit_code;
            run.actions.push_back(a);
        }
        if effects::is_shell_tool(&t.name) && effects::shell_mutates(&detail) {
            self.files.shell_mutations += 1;
        }
        if t.failed {
            if main && !t.interrupted {
                self.failed(e, &t.name, &detail, rec);
            }
            if t.name == "ExitPlanMode" {
                if let Some(p) = self.plan.as_mut() {
                    p.approved = Some(false);
                }
            }
            return;
        }
        self.succeeded(&t.name, &detail, rec);
        if let Some(list) = effects::todo_list(&t.name, t.input) {
            let todos = &mut self.todos;
            todos.items = list
                .into_iter()
                .take(TODOS_MAX)
                .map(|i| Todo {
                    id: None,
                    text: cut(&i.text, TODO_TEXT_MAX_BYTES).0,
                    status: i.status.as_str().into(),
                })
                .collect();
            self.todo_changed(&t.name, rec);
        }
        if let Some(change) = effects::task_change(&t.name, t.input, t.read_response()) {
            self.task_change(change);
            self.todo_changed(&t.name, rec);
        }
        if t.name == "ExitPlanMode" {
            let turn = self.turns.count;
            let p = self.plan.get_or_insert_with(|| Plan {
                seq: rec.seq,
                turn,
                ..Default::default()
            });
            p.approved = Some(true);
        }
        if let Some(call) = effects::agent_call(&t.name, t.input) {
            // The subagent ran synchronously and is done: its launch no longer waits.
            let d = cut(&call.description, SUBAGENT_TEXT_MAX_BYTES).0;
            if let Some(i) = self
                .subagents
                .launches
                .iter()
                .position(|l| l.description == d)
            {
                self.subagents.launches.remove(i);
            }
        }
        if crate::event::tools::file_op(&t.name).is_some_and(|op| op != FileOp::Read) {
            let touched: Vec<(FileOp, String)> = input
                .touched(&t.name)
                .into_iter()
                .map(|(op, p)| (op, p.to_owned()))
                .collect();
            let single = touched.len() == 1;
            for (op, path) in touched {
                let change = if single {
                    effects::line_change(&t.name, t.input, t.read_response())
                } else {
                    effects::LineChange::default()
                };
                if let Some(f) = self.files.by_path.get_mut(&path) {
                    sized(f, op, change);
                }
            }
        }
    }

    fn failed(&mut self, e: &Event<'_>, tool: &str, detail: &str, rec: &RecordView<'_>) {
        let t = e.tool.as_ref().expect("a failed call has a tool");
        let response_text = t
            .read_response()
            .filter(|r| r.get().starts_with('"'))
            .and_then(|r| serde_json::from_str::<String>(r.get()).ok());
        let error = e
            .error
            .as_deref()
            .map(str::to_owned)
            .or(response_text)
            .unwrap_or_default();
        let exit_code = t.exit_code.or_else(|| effects::exit_code_in(&error));
        let mut lines: Vec<&str> = error
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if lines
            .first()
            .is_some_and(|l| effects::exit_code_in(l).is_some())
        {
            lines.remove(0);
        }
        let error_tail: Vec<String> = lines[lines.len().saturating_sub(ERROR_TAIL_LINES)..]
            .iter()
            .map(|l| cut(l, ERROR_LINE_MAX_BYTES).0)
            .collect();
        let k = failure_key(tool, detail);
        let items = &mut self.failures.items;
        let (first_seq, count, identical, fixed_before) =
            match items.iter().position(|f| f.key == k) {
                Some(i) => {
                    let old = items.remove(i).expect("found");
                    let same = old.error_tail == error_tail && old.exit_code == exit_code;
                    (
                        old.first_seq,
                        old.count + 1,
                        old.identical + u64::from(same),
                        old.resolved.or(old.fixed_before),
                    )
                }
                None => (rec.seq, 1, 0, None),
            };
        items.push_back(Failure {
            key: k,
            tool: key(tool),
            detail: detail.to_owned(),
            tool_use_id: t.use_id.as_deref().map(key),
            exit_code,
            error_tail,
            first_seq,
            seq: rec.seq,
            turn: self.turns.count,
            count,
            identical,
            resolved: None,
            fixed_before,
        });
        while items.len() > FAILURES_KEPT {
            items.pop_front();
            self.failures.forgotten += 1;
        }
    }

    fn succeeded(&mut self, tool: &str, detail: &str, rec: &RecordView<'_>) {
        if self.failures.items.is_empty() {
            return;
        }
        let shell = effects::is_shell_tool(tool);
        // `command_family(detail)` is not empty: compared word by word below, unbuilt.
        let has_family = family_words(detail).next().is_some();
        let turn = self.turns.count;
        for f in self
            .failures
            .items
            .iter_mut()
            .filter(|f| f.resolved.is_none())
        {
            let variant = if is_failure_key(&f.key, tool, detail) {
                None
            } else if shell && f.tool == tool && has_family {
                if !family_words(&f.detail).eq(family_words(detail)) {
                    continue;
                }
                Some(detail.to_owned())
            } else {
                continue;
            };
            f.resolved = Some(Resolution {
                seq: rec.seq,
                turn,
                variant,
            });
        }
    }

    fn todo_changed(&mut self, tool: &str, rec: &RecordView<'_>) {
        let t = &mut self.todos;
        t.tool = Some(key(tool));
        t.seq = rec.seq;
        t.turn = self.turns.count;
    }

    fn task_change(&mut self, change: TaskChange) {
        let t = &mut self.todos;
        match change {
            TaskChange::Create { id, subject } => {
                let id = id.unwrap_or_else(|| (t.next_id + 1).to_string());
                if let Ok(n) = id.parse::<u64>() {
                    t.next_id = t.next_id.max(n);
                }
                if t.items.iter().any(|i| i.id.as_deref() == Some(&id))
                    || t.items.len() >= TODOS_MAX
                {
                    return;
                }
                t.items.push(Todo {
                    id: Some(key(&id)),
                    text: cut(&subject, TODO_TEXT_MAX_BYTES).0,
                    status: TodoStatus::Pending.as_str().into(),
                });
            }
            TaskChange::Update {
                id,
                status,
                deleted,
                subject,
            } => {
                if deleted {
                    t.items.retain(|i| i.id.as_deref() != Some(&id));
                    return;
                }
                let Some(item) = t.items.iter_mut().find(|i| i.id.as_deref() == Some(&id)) else {
                    return;
                };
                if let Some(s) = status {
                    item.status = s.as_str().into();
                }
                if let Some(s) = subject {
                    item.text = cut(&s, TODO_TEXT_MAX_BYTES).0;
                }
            }
        }
    }

    /// Claude Code's TaskCreated / TaskCompleted events (the task tools' own hooks).
    fn task_event(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        let Some(id) = e.task_id.as_deref() else {
            return;
        };
        let change = if e.kind == EventKind::TaskCreated {
            let Some(subject) = e.task_subject.as_deref() else {
                return;
            };
            TaskChange::Create {
                id: Some(id.to_owned()),
                subject: subject.to_owned(),
            }
        } else {
            TaskChange::Update {
                id: id.to_owned(),
                status: Some(TodoStatus::Completed),
                deleted: false,
                subject: None,
            }
        };
        self.task_change(change);
        self.todo_changed(e.name.as_ref(), rec);
    }

    fn subagent_work(&mut self, e: &Event<'_>) {
        if e.agent_type.as_deref() == Some("") {
            return;
        }
        let id = e.agent_id.as_deref().unwrap_or("");
        let turn = self.turns.count;
        let launches = &mut self.subagents.launches;
        let Some(s) = self.subagents.by_id.get_mut(id) else {
            return;
        };
        if e.kind == EventKind::SubagentStart {
            s.turn = turn;
            if s.description.is_none() {
                let ty = e.agent_type.as_deref();
                if let Some(i) = launches
                    .iter()
                    .position(|l| l.agent_type.is_none() || l.agent_type.as_deref() == ty)
                {
                    s.description = launches.remove(i).map(|l| l.description);
                }
            }
        } else if let Some(m) = e.message.as_deref() {
            s.result = Some(cut(m.trim(), SUBAGENT_TEXT_MAX_BYTES).0);
        }
    }

    /// An agent of the host's own (`agent_type` ""): its stop carries the compaction summary
    /// when a compaction is under way.
    pub(super) fn internal_agent(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        if e.kind != EventKind::SubagentStop {
            return;
        }
        self.subagents.internal_stops += 1;
        let Some(summary) = e.message.as_deref() else {
            return;
        };
        let open = self
            .compactions
            .last
            .as_mut()
            .filter(|c| c.pre_seq.is_some() && c.resumed_seq.is_none() && c.post_seq.is_none());
        if let Some(c) = open {
            c.summary = Some(cut(summary, SUMMARY_MAX_BYTES).0);
            c.summary_seq = Some(rec.seq);
        }
    }

    fn turn_stopped(&mut self, e: &Event<'_>, rec: &RecordView<'_>, failed: bool) {
        let turns = self.turns.count;
        let lo = &mut self.left_off;
        let run = lo.running.take().unwrap_or(super::Running {
            turn: turns,
            prompt_seq: 0,
            actions: Default::default(),
        });
        lo.turn = run.turn;
        lo.prompt_seq = run.prompt_seq;
        lo.actions = run.actions;
        assign(&mut lo.outcome, if failed { FAILED } else { STOPPED });
        lo.end_seq = Some(rec.seq);
        lo.open_calls.clear();
        let text = if failed {
            e.error.as_deref()
        } else {
            e.message.as_deref()
        };
        lo.message = text
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| tail(t, LEFT_OFF_MAX_BYTES));
    }

    fn background_from(&mut self, e: &Event<'_>) {
        let Some(raw) = e.background_tasks else {
            return;
        };
        let Ok(tasks) = serde_json::from_str::<Vec<Obj<BackgroundTask>>>(raw.get()) else {
            return;
        };
        self.background = tasks
            .into_iter()
            .filter_map(|t| t.0)
            .take(BACKGROUND_KEPT)
            .map(|t| Background {
                id: key(t.id.as_deref().unwrap_or("")),
                kind: key(t.kind.as_deref().unwrap_or("")),
                status: key(t.status.as_deref().unwrap_or("")),
                description: cut(
                    t.description.as_deref().unwrap_or(""),
                    SUBAGENT_TEXT_MAX_BYTES,
                )
                .0,
            })
            .collect();
    }

    /// An `sjournal.injected` record: its items are now seen; a recovery block answers the
    /// compaction before it.
    pub(super) fn note_injected(&mut self, i: &Injected, rec: &RecordView<'_>) {
        // A subagent's context is its own: the main model has not seen what it was shown.
        let main = i.mode.as_deref() != Some("subagent");
        if main {
            self.note_injected_block(i, rec);
        }
        for item in i.items.iter().filter(|_| main) {
            let seen = &mut self.seen.items;
            if seen.len() < SEEN_MAX || seen.contains_key(&item.key) {
                seen.insert(key(&item.key), key(&item.hash));
            }
        }
        if let Some(c) = self.compactions.last.as_mut() {
            let answers = match i.mode.as_deref() {
                Some(m) => m == "recovery" && i.event_seq >= c.seq,
                // Written before injections named their mode: the one at the compaction's
                // SessionStart answered it.
                None => c.resumed_seq == Some(i.event_seq),
            };
            if answers && c.recovered_seq.is_none() {
                c.recovered_seq = Some(rec.seq);
            }
        }
    }
}

/// How failures of the same call are recognised: the tool and its normalised detail.
pub fn failure_key(tool: &str, detail: &str) -> String {
    // `key(&format!("{tool} {}", squash(detail)))`, built in one allocation.
    let mut out = String::with_capacity(tool.len() + 1 + detail.len());
    out.push_str(tool);
    out.push(' ');
    push_words(&mut out, detail.split_whitespace());
    cut_in_place(&mut out, NAME_MAX_BYTES);
    out
}

/// `key == failure_key(tool, detail)`, without building the key where it cannot have been
/// cut (the fold asks this of every open failure on every successful call).
fn is_failure_key(key: &str, tool: &str, detail: &str) -> bool {
    if tool.len() + 1 + detail.len() > NAME_MAX_BYTES {
        return key == failure_key(tool, detail);
    }
    let Some(mut rest) = key.strip_prefix(tool).and_then(|r| r.strip_prefix(' ')) else {
        return false;
    };
    for (i, w) in detail.split_whitespace().enumerate() {
        if i > 0 {
            match rest.strip_prefix(' ') {
                Some(r) => rest = r,
                None => return false,
            }
        }
        match rest.strip_prefix(w) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// Applies a change's line counts to its file's stats (already touched by the fold).
fn sized(f: &mut FileStats, op: FileOp, c: effects::LineChange) {
    let first_change = f.writes + f.edits == 1;
    if first_change
        && (c.created == Some(true) || (c.created.is_none() && op == FileOp::Write && f.reads == 0))
    {
        f.created = true;
    }
    match (c.added, c.removed, c.lines_after) {
        (Some(a), Some(d), after) => {
            f.added += a;
            f.removed += d;
            f.lines = after.or_else(|| f.lines.map(|l| (l + a).saturating_sub(d)));
        }
        (_, _, Some(n)) if first_change && f.created => {
            f.added += n;
            f.lines = Some(n);
        }
        (_, _, Some(n)) => {
            match f.lines {
                Some(l) if n >= l => f.added += n - l,
                Some(l) => f.removed += l - n,
                None => f.unsized_changes += 1,
            }
            f.lines = Some(n);
        }
        _ => {
            f.unsized_changes += 1;
            f.lines = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert_eq!(command_family("make check -j1"), "make check");
        assert_eq!(command_family("make -j1 check"), "make check");
        assert_eq!(command_family("RUST_LOG=1 cargo test --lib"), "cargo test");
        assert_ne!(
            command_family("cargo test -p m1"),
            command_family("cargo test -p m0 --release")
        );
        assert_eq!(command_family("ls"), "ls");
        assert_eq!(command_family(""), "");
    }

    proptest::proptest! {
        /// `is_failure_key` answers as comparing with the built key did, cut keys included.
        #[test]
        fn failure_keys_compare_unbuilt(
            tool in "(Bash|Read|B|)",
            other_tool in "(Bash|Read|B|)",
            detail in "([ \t\né]|a|ab|b){0,12}",
            other in "([ \t\né]|a|ab|b){0,12}",
            long in 0..3usize,
        ) {
            let pad = "x".repeat(NAME_MAX_BYTES - 4);
            let (detail, other) = match long {
                0 => (detail, other),
                1 => (format!("{pad}{detail}"), format!("{pad}{other}")),
                _ => (format!("{pad}{detail}"), other),
            };
            for k in [failure_key(&tool, &detail), failure_key(&other_tool, &other),
                      failure_key(&tool, &other), format!("{tool} {detail}")] {
                proptest::prop_assert_eq!(
                    is_failure_key(&k, &tool, &detail),
                    k == failure_key(&tool, &detail),
                    "{:?} {:?} {:?}", k, tool, detail
                );
            }
        }
    }

    #[test]
    fn tails_keep_the_end() {
        assert_eq!(tail("abcdé", 2), "é");
        assert_eq!(tail("abc", 5), "abc");
    }
}
