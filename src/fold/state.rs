//! The folded state of a session. Ordered maps and bounded sequences only, so that the same
//! records always give the same bytes (`State::encode`). Every field is documented by what
//! folds into it; `sjournal state --json` prints this structure as it is.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

pub use super::progress::*;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Seq of the last record folded (0: none).
    pub seq: u64,
    /// Records folded.
    pub records: u64,
    pub first_ts_unix_ns: i64,
    pub last_ts_unix_ns: i64,
    pub identity: Identity,
    pub counts: Counts,
    pub turns: Turns,
    pub tools: Tools,
    pub files: Files,
    pub compactions: Compactions,
    pub subagents: Subagents,
    /// The most recent prompts, oldest first (`limits::PROMPTS_KEPT`).
    pub prompts: VecDeque<Prompt>,
    /// How the session ended; cleared when it starts again (resume).
    pub ended: Option<Ending>,
    pub context: Context,
    pub primitives: Primitives,
    /// The last injection per event kind (`sjournal.injected`).
    #[serde(deserialize_with = "super::bulk::map")]
    pub injected: BTreeMap<String, LastInjection>,
    pub journal: JournalFacts,
    /// What recovery after a compaction needs (`progress.rs`, folded by `progress_rules.rs`).
    pub requests: Requests,
    pub todos: Todos,
    pub plan: Option<Plan>,
    pub failures: Failures,
    pub left_off: LeftOff,
    /// Background work the last Stop reported (`limits::BACKGROUND_KEPT`).
    pub background: Vec<Background>,
    pub seen: Seen,
    /// Cross-session memory (`sjournal.memory` records: scope journals, `crate::memory`).
    pub memory: super::memory::Memory,
    /// The sections the hook last added from outside the session (`sjournal.extras`).
    pub extras: Option<crate::format::payload::ExtrasRecord>,
    /// The conversation as the host's model requests show it (`model_view.rs`).
    pub model_view: ModelView,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub session_id: Option<String>,
    /// The host of the latest event whose host was recognised.
    pub host: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub permission_mode: Option<String>,
    /// OpenClaw `sessionKind`: main, cron, spawn.
    pub session_kind: Option<String>,
    /// The agent type a session runs as (`--agent` sessions: SessionStart `agent_type`).
    pub agent_type: Option<String>,
    /// `source` of the latest SessionStart: startup, resume, clear, compact, fork.
    pub start_source: Option<String>,
    /// The first `cwd` seen: the project directory paths are shown relative to.
    pub project_dir: Option<String>,
    /// The first model and permission mode seen, to tell when they changed.
    pub first_model: Option<String>,
    pub first_permission_mode: Option<String>,
    pub starts: u64,
    /// Sessions this one is linked to, in order (`limits::LINKS_MAX`).
    pub links: Vec<Link>,
}

/// A relation to another session: `resume`, `clear`, `fork`, `compact` (from SessionStart's
/// source; the other id is not in the payload, so `session` is None), `parent` (a parent
/// session the payload names) or `event` (an event of this journal carried another id).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub relation: String,
    pub session: Option<String>,
    pub seq: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub events: u64,
    pub system: u64,
    /// Per canonical event kind (unknown events under "other") and per system kind.
    pub by_kind: super::tally::KindTally,
    /// Unknown events by their own name (`limits::OTHER_NAMES_MAX` names).
    #[serde(deserialize_with = "super::bulk::map")]
    pub other_names: BTreeMap<String, u64>,
    pub by_host: super::tally::HostTally,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Turns {
    /// Prompts submitted (a turn each).
    pub count: u64,
    /// A turn began and has not ended.
    pub open: bool,
    pub stops: u64,
    pub stop_failures: u64,
    pub last_prompt_seq: Option<u64>,
    pub last_stop_seq: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tools {
    /// Completed calls (Post events, failures included).
    pub calls: u64,
    pub failures: u64,
    pub denied: u64,
    pub permission_requests: u64,
    pub batches: u64,
    #[serde(deserialize_with = "super::bulk::map")]
    pub by_tool: BTreeMap<String, ToolStats>,
    /// Calls whose Pre came and whose Post has not yet, by tool_use_id (this turn's only).
    #[serde(deserialize_with = "super::bulk::map")]
    pub open: BTreeMap<String, OpenCall>,
    /// Open calls given up: still open when their turn or the session ended, or dropped
    /// (oldest first) to keep the table bounded.
    pub open_dropped: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolStats {
    pub calls: u64,
    pub failures: u64,
    pub denied: u64,
    /// Calls with a known duration, and their total and longest duration.
    pub timed: u64,
    pub total_ms: u64,
    pub max_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenCall {
    pub tool: String,
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub detail: Option<String>,
    pub agent_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Files {
    #[serde(deserialize_with = "super::bulk::map")]
    pub by_path: BTreeMap<String, FileStats>,
    /// Files forgotten to keep the table bounded.
    pub forgotten: u64,
    /// Shell commands that change files in ways the table does not follow (`sed -i`, `mv`,
    /// redirections: `event::tool_effects::shell_mutates`).
    pub shell_mutations: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileStats {
    pub reads: u64,
    pub writes: u64,
    pub edits: u64,
    pub first_seq: u64,
    pub last_seq: u64,
    /// Seq of the last write or edit (0: only read).
    pub last_change_seq: u64,
    /// The session created the file (its first change was a write creating it).
    pub created: bool,
    /// Lines added and removed by the changes whose size is known.
    pub added: u64,
    pub removed: u64,
    /// Changes whose size is not known (a write over content the fold never saw).
    pub unsized_changes: u64,
    /// The file's line count after the last whole-file write, when known.
    pub lines: Option<u64>,
}

impl FileStats {
    pub fn changed(&self) -> bool {
        self.writes + self.edits > 0
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Compactions {
    pub count: u64,
    pub last: Option<Compaction>,
}

/// One compaction, seen through any of its events: PreCompact, PostCompact, SessionStart with
/// source "compact" (whichever arrive, in whatever order).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub trigger: Option<String>,
    pub pre_seq: Option<u64>,
    pub post_seq: Option<u64>,
    pub resumed_seq: Option<u64>,
    pub custom_instructions: Option<String>,
    /// The host's summary: the compactor's last message (Claude Code SubagentStop with
    /// `agent_type` ""), or PostCompact `compact_summary`.
    pub summary: Option<String>,
    pub summary_seq: Option<u64>,
    /// The turn the compaction happened in.
    pub turn: u64,
    /// Seq of the `sjournal.injected` record that carried the recovery block after it.
    pub recovered_seq: Option<u64>,
    pub context_usage_percent: Option<f64>,
    pub message_count: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subagents {
    pub started: u64,
    pub stopped: u64,
    #[serde(deserialize_with = "super::bulk::map")]
    pub by_id: BTreeMap<String, Subagent>,
    pub forgotten: u64,
    /// Launches (Task / Agent / spawn_agent calls) whose subagent has not started yet.
    pub launches: VecDeque<Launch>,
    /// Stops of the host's internal agents (Claude Code's compactor: `agent_type` ""), which
    /// are not subagents.
    pub internal_stops: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subagent {
    pub agent_type: Option<String>,
    pub start_seq: Option<u64>,
    pub stop_seq: Option<u64>,
    pub tool_calls: u64,
    pub last_seq: u64,
    /// What it was asked to do (the launching call's description), cut.
    pub description: Option<String>,
    /// The head of its last message when it stopped.
    pub result: Option<String>,
    /// The turn it started in.
    pub turn: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub seq: u64,
    pub agent_type: Option<String>,
    pub description: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub prompt_id: Option<String>,
    pub text: String,
    /// The text was longer than `limits::STATE_TEXT_MAX_BYTES` and was cut.
    pub cut: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ending {
    pub seq: u64,
    pub ts_unix_ns: i64,
    /// The host's event name (SessionEnd, sessionEnd, TaskComplete, onSessionEnd...).
    pub event: String,
    pub reason: Option<String>,
    pub duration_ms: Option<u64>,
}

/// Context channels (`sjournal.context.*`), see `context`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// Kept until cleared; survives compaction; replaced by `at_stop` entries at turn end.
    #[serde(deserialize_with = "super::bulk::map")]
    pub persistent: BTreeMap<String, Entry>,
    /// Dropped when the turn ends.
    #[serde(deserialize_with = "super::bulk::map")]
    pub ephemeral: BTreeMap<String, Entry>,
    /// Held until the turn ends, then moved into `persistent` (same key replaced).
    #[serde(deserialize_with = "super::bulk::map")]
    pub at_stop: BTreeMap<String, Entry>,
    /// Records refused (unknown channel, bad key, channel full).
    pub rejected: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub text: String,
    pub seq: u64,
}

/// Hook-author primitives (`sjournal.fire`, `.once`, `.slot.set`, `.list.*`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Primitives {
    #[serde(deserialize_with = "super::bulk::map")]
    pub fires: BTreeMap<String, FireCount>,
    /// Keys seen, with the seq that first saw them.
    #[serde(deserialize_with = "super::bulk::map")]
    pub once: BTreeMap<String, u64>,
    #[serde(deserialize_with = "super::bulk::map")]
    pub slots: BTreeMap<String, Slot>,
    #[serde(deserialize_with = "super::bulk::map")]
    pub lists: BTreeMap<String, List>,
    /// Records refused (over a bound, a max_fires reached, a slot's expected seq not met).
    pub rejected: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FireCount {
    pub count: u64,
    pub max: Option<u64>,
    pub last_seq: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    /// JSON text.
    pub value: String,
    /// object, array, string, number, boolean or null.
    pub json_type: String,
    /// Seq of the record that set it: what a compare-and-set expects.
    pub seq: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct List {
    pub max: u32,
    pub pushed: u64,
    pub items: VecDeque<ListItem>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListItem {
    pub seq: u64,
    /// JSON text.
    pub value: String,
}

/// The last `sjournal.injected` record of one event kind: its hash and size, not its text
/// (the text is `context::Injection`; a timeline's entry is `audit::timeline::InjectionRecord`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LastInjection {
    pub seq: u64,
    pub event_seq: u64,
    pub text_blake3: String,
    pub len: u64,
    pub truncated: bool,
    /// The policy's mode (`recovery`, `resume`, `prompt`, ...); None for records written
    /// before the policy named it.
    pub mode: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JournalFacts {
    /// `sjournal.recovered` records: torn tails cut by recovery.
    pub recovered: u64,
    pub last_recovered: Option<RecoveredFact>,
    /// `sjournal.unparsed` records: input that was not JSON.
    pub unparsed: u64,
    /// Records whose payload did not decode (neither an event's text nor a system map).
    pub undecodable: u64,
    /// System records of kinds this build does not know.
    pub unknown_system: u64,
    /// Events redacted at ingest (`sjournal.redacted` records).
    pub redacted: u64,
    /// Secrets redacted, by rule (at most `limits::REDACTION_RULES_MAX` rules; the others, and
    /// the findings a record counts without listing, under [`REDACTED_OTHER`]).
    pub redactions: BTreeMap<String, u64>,
    /// Erasures (`sjournal.erased` records). An erased event folds from what is left of it:
    /// nothing for a whole payload, the rest of its JSON for a field.
    pub erased: u64,
}

/// The key of [`JournalFacts::redactions`] for findings counted without a rule of their own.
pub const REDACTED_OTHER: &str = "(other)";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecoveredFact {
    pub seq: u64,
    pub offset: u64,
    pub length: u64,
    pub reason: String,
}

/// The conversation as the session's model requests showed it, for a host that reports no
/// event when it compresses its history (Gemini CLI: only its BeforeModel requests show it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelView {
    /// Tool calls under way (started, not ended): requests made meanwhile are not the
    /// session's own conversation (a subagent's chat runs inside its tool call).
    pub tools_running: u64,
    /// The last request of the session's own conversation since its process started.
    pub last: Option<ViewedRequest>,
    /// Seq of the last request of the session's own conversation, across processes (None:
    /// its requests are not journaled). A compaction's recovery block waits for a request
    /// after it, which shows what the compressed history still holds.
    pub last_request_seq: Option<u64>,
    /// What sjournal injected into the session's own transcript, newest last
    /// (`limits::INJECTED_BLOCKS_KEPT`): how each reads in a request, and its items.
    pub injected: VecDeque<InjectedBlock>,
}

/// One injection, as a request shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InjectedBlock {
    /// Seq of the `sjournal.injected` record, and of the event it answered.
    pub seq: u64,
    pub event_seq: u64,
    /// The host's name for that event.
    pub event_kind: String,
    /// Digests (`model_view::digest`) of its text as injected, and as Gemini CLI puts it in
    /// the conversation (`<` and `>` escaped as `&lt;` `&gt;`).
    pub digest: u64,
    pub escaped: u64,
    /// Its items (key, hash), as the `seen` set has them (`limits::INJECTED_BLOCK_ITEMS_MAX`).
    pub items: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewedRequest {
    pub seq: u64,
    /// Messages the request carried.
    pub messages: u64,
    /// Digest of all its messages but the last (`model_view::prefix`).
    pub prefix: u64,
    /// Its second message is the host's acknowledgement of a compressed history.
    pub compressed_head: bool,
}
