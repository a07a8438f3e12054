//! The state recovery needs: what the user asked and insists on, the todo list and plan,
//! failures and what fixed them, where the last turn left off, background work, and what the
//! model has already been shown since the last compaction (`seen`). Folded from the same
//! records as the rest of the state (`progress_rules.rs`), bounded, in ordered containers.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

/// The user's requests: the first prompt of the session and the standing instructions
/// picked from every prompt (the latest prompts are `State::prompts`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Requests {
    /// The session's first prompt (kept whatever else falls out of `State::prompts`).
    pub original: Option<super::Prompt>,
    /// Standing instructions, oldest first (`limits::INSTRUCTIONS_KEPT`): sentences of
    /// prompts that match the marker rule (`fold::instructions`), and the instructions the
    /// user gave a compaction (`PreCompact.custom_instructions`).
    pub instructions: VecDeque<Instruction>,
    /// Instructions forgotten to keep the list bounded.
    pub forgotten: u64,
    /// The instruction files the host loaded (`InstructionsLoaded.file_path`: CLAUDE.md and
    /// the like), first load first (`limits::INSTRUCTION_FILES_KEPT`): memory reads them at
    /// compact so as not to inject what they already say.
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Instruction {
    /// Seq of the prompt (or PreCompact) it comes from.
    pub seq: u64,
    /// The turn it was given in.
    pub turn: u64,
    /// `prompt` or `compact` (a compaction's custom instructions).
    pub source: String,
    /// The sentence, verbatim (cut at `limits::INSTRUCTION_MAX_BYTES`).
    pub text: String,
}

/// The todo list: the last whole list a tool set (TodoWrite, write_todos, update_plan), or
/// the tasks TaskCreate / TaskUpdate (and the TaskCreated / TaskCompleted events) built up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Todos {
    /// The tool that last changed the list.
    pub tool: Option<String>,
    /// Seq and turn of the last change.
    pub seq: u64,
    pub turn: u64,
    /// In list order (`limits::TODOS_MAX`).
    pub items: Vec<Todo>,
    /// Task ids handed out when a TaskCreate response carried none.
    pub next_id: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Todo {
    /// The task id (Task tools); None for items of a whole-list tool.
    pub id: Option<String>,
    pub text: String,
    /// pending, in_progress, completed, cancelled.
    pub status: String,
}

/// A plan proposed with ExitPlanMode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub seq: u64,
    pub turn: u64,
    /// The plan's first lines (`limits::PLAN_HEAD_MAX_BYTES`); the host keeps the plan file.
    pub head: String,
    /// None: no answer yet; Some(true): approved (the call succeeded); Some(false): refused.
    pub approved: Option<bool>,
}

/// Failed tool calls, and the fixes found for them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Failures {
    /// Failures of distinct commands, oldest first (`limits::FAILURES_KEPT`); a command that
    /// fails again moves to the end.
    pub items: VecDeque<Failure>,
    pub forgotten: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The normalised call: the tool and its one-line detail (`Bash make check`).
    pub key: String,
    pub tool: String,
    /// The command, path or pattern, one line.
    pub detail: String,
    pub tool_use_id: Option<String>,
    pub exit_code: Option<i64>,
    /// The last non-empty lines of the error (`limits::ERROR_TAIL_LINES`).
    pub error_tail: Vec<String>,
    pub first_seq: u64,
    pub seq: u64,
    pub turn: u64,
    /// Times it failed.
    pub count: u64,
    /// Of those, times it failed with the same error lines as the time before.
    pub identical: u64,
    /// The later success that resolved it, if one came.
    pub resolved: Option<Resolution>,
    /// The resolution found before it failed again ("A fails, B works" outlives B failing).
    pub fixed_before: Option<Resolution>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    pub seq: u64,
    pub turn: u64,
    /// The succeeding call's detail, when it differs from the failed one (a variant).
    pub variant: Option<String>,
}

/// Where the work left off: the last turn that ended, and the turn under way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LeftOff {
    /// The last turn that ended, and the seq of its prompt (0: none has ended).
    pub turn: u64,
    pub prompt_seq: u64,
    /// How it ended: stopped, failed, interrupted ("" until one ends).
    pub outcome: String,
    /// Seq of the event that ended it.
    pub end_seq: Option<u64>,
    /// The tail of Stop's `last_assistant_message`, or StopFailure's error.
    pub message: Option<String>,
    /// Its last tool actions (`limits::TURN_ACTIONS_KEPT`), oldest first.
    pub actions: VecDeque<Action>,
    /// Calls still open when it was interrupted.
    pub open_calls: Vec<Action>,
    /// The turn under way: a prompt came and its turn has not ended.
    pub running: Option<Running>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Running {
    pub turn: u64,
    pub prompt_seq: u64,
    /// Its last tool actions, oldest first.
    pub actions: VecDeque<Action>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Action {
    pub seq: u64,
    pub tool: String,
    pub detail: Option<String>,
    /// ok, failed, or open (a Pre with no Post yet).
    pub outcome: String,
    pub exit_code: Option<i64>,
}

/// Background work a turn's Stop reported still running.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Background {
    pub id: String,
    pub kind: String,
    pub status: String,
    pub description: String,
}

/// What the model has been shown since the last compaction, clear or startup: item key →
/// blake3 of the item's text, as the `sjournal.injected` records list them. An item whose key
/// and hash are here is not injected again (`context`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    /// Seq of the record that last reset it (a compaction's first event, SessionStart with
    /// source clear or startup).
    pub since_seq: u64,
    #[serde(deserialize_with = "super::bulk::map")]
    pub items: BTreeMap<String, String>,
}
