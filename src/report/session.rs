//! What reading commands print: a session's state (`state`), its context (`context show`),
//! its lists (`show`), its records (`log`), the end of a replay (`replay`), a report's
//! summary (`report`), and the primitives' values (`slot get`, `list show`).

use std::path::Path;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::context::lists::{Agents, Files, PromptEntry, Todos};
use crate::context::Injection;
use crate::fold::{Failure, State, FOLD_VERSION};
use crate::snapshot::{LoadInfo, SnapshotUse};

/// `state --json`: a session's folded state and how it was loaded.
///
/// `{"session", "seq", "state_hash", "fold_version", "snapshot": <snapshot::SnapshotUse>,
/// "tail_records", "pending", "warnings": [".."], "state": <fold::State>}`. `seq` is the
/// last record folded and `state_hash` the blake3 (keyed, see `fold::STATE_HASH_CONTEXT`) of
/// the state's canonical encoding, hex: two folds of the same records print the same hash.
/// `tail_records` counts the records folded after the snapshot (all of them without one);
/// `pending` the spooled event files not yet in the journal, folded in on top.
#[derive(Debug, Clone, Serialize)]
pub struct StateReport<'a> {
    pub session: &'a str,
    pub seq: u64,
    pub state_hash: String,
    pub fold_version: u32,
    pub snapshot: &'a SnapshotUse,
    pub tail_records: u64,
    pub pending: u64,
    pub warnings: &'a [String],
    pub state: &'a State,
}

impl<'a> StateReport<'a> {
    pub fn new(session: &'a str, state: &'a State, info: &'a LoadInfo) -> Self {
        StateReport {
            session,
            seq: state.seq,
            state_hash: state.state_hash().to_hex(),
            fold_version: FOLD_VERSION,
            snapshot: &info.snapshot,
            tail_records: info.tail_records,
            pending: info.pending,
            warnings: &info.warnings,
            state,
        }
    }
}

/// `context show --json`: what would be injected at the next event.
///
/// The fields of [`context::Injection`](crate::context::Injection) (`mode`, `text`,
/// `chars`, `budget_chars`, `truncated`, `items`, `dropped`, `deduped`, `render_version`,
/// ... as documented there), then `"seq"`: the last record of the state it was rendered
/// from.
#[derive(Debug, Clone, Serialize)]
pub struct ContextShow<'a> {
    #[serde(flatten)]
    pub injection: &'a Injection,
    pub seq: u64,
}

/// `show --json`: a session's full lists.
///
/// `{"session", "seq", "prompts"?: [..], "todos"?: {..}, "failures"?: [..], "files"?:
/// {..}, "agents"?: {..}}`: only the lists asked for, each in the form `context::lists`
/// defines.
#[derive(Debug, Clone, Serialize)]
pub struct ShowLists<'a> {
    pub session: &'a str,
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<&'a [PromptEntry]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todos: Option<Todos<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<Vec<&'a Failure>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Files<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Agents<'a>>,
    /// What redaction at ingest replaced in the session's events (with every list, when the
    /// session has any): `{"events", "secrets", "by_rule": {rule: count}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted: Option<crate::redact::Summary>,
}

/// `log --json`: one line per record, in order.
///
/// `{"seq": 1, "ts": "2026-11-29T22:37:06.123456789Z", "ts_unix_ns": .., "kind":
/// "PostToolUse", "hash": "<hex>", "offset": 43, "payload": <the JSON that was appended>}`:
/// `ts` is the append time (RFC 3339, UTC), `hash` the chain hash after the record,
/// `offset` its byte offset in the journal. For system records (`sjournal.*`) `payload`
/// holds the record's fields.
#[derive(Debug, Serialize)]
pub struct LogLine<'a> {
    pub seq: u64,
    pub ts: String,
    pub ts_unix_ns: i64,
    pub kind: &'a str,
    pub hash: String,
    pub offset: u64,
    pub payload: Box<RawValue>,
    /// The payload was erased after it was written (`payload` is what is left: `null`, or
    /// the event's JSON without the erased field).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub erased: bool,
}

/// `log --json`, after the journal's records: one line per record of a spool file not yet
/// merged into the journal.
///
/// `{"pending": true, "spool_file": "<path>", "fallback": bool, "ts", "ts_unix_ns",
/// "kind", "payload"}`: as [`LogLine`], with no seq, hash or offset (it has none yet); `ts`
/// is the record's own time where it has one (an import's), else when it was spooled;
/// `fallback` whether the file is outside the root.
#[derive(Debug, Serialize)]
pub struct PendingRecordLine<'a> {
    /// Always true.
    pub pending: bool,
    pub spool_file: &'a Path,
    pub fallback: bool,
    pub ts: String,
    pub ts_unix_ns: i64,
    pub kind: &'a str,
    pub payload: Box<RawValue>,
}

/// `log --json`: a pending spool file that cannot be read.
///
/// `{"pending": true, "spool_file": "<path>", "damaged": "<why>"|null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingUnreadableLine<'a> {
    /// Always true.
    pub pending: bool,
    pub spool_file: &'a Path,
    pub damaged: Option<&'a str>,
}

/// `replay --json`: the last line, after the steps.
///
/// `{"final": true, "last_seq", "state_hash", "steps", "differing": [seq..]}`: the
/// fields of [`replay::End`](crate::replay::End).
#[derive(Debug, Clone, Serialize)]
pub struct ReplayFinal<'a> {
    /// Always true: tells this line from the steps.
    #[serde(rename = "final")]
    pub is_final: bool,
    #[serde(flatten)]
    pub end: &'a crate::replay::End,
}

/// `report --json`: what the HTML report holds.
///
/// `{"out": "<path>", "bytes", "records", "turns", "tool_calls", "failed_tool_calls",
/// "compactions", "injections"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportSummary<'a> {
    pub out: &'a Path,
    pub bytes: usize,
    pub records: u64,
    pub turns: usize,
    pub tool_calls: usize,
    pub failed_tool_calls: usize,
    pub compactions: usize,
    pub injections: usize,
}

/// `slot get`: a slot's value.
///
/// `{"name", "value": <the JSON value>, "type": "object"|"array"|"string"|"number"|
/// "boolean"|"null", "seq"}`: `seq` is the record that set it (what `slot set
/// --expect-seq` compares against).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotValue<'a> {
    pub name: &'a str,
    pub value: serde_json::Value,
    #[serde(rename = "type")]
    pub json_type: &'a str,
    pub seq: u64,
}

impl<'a> SlotValue<'a> {
    /// Slot `name` of `state`, if it is set.
    pub fn of(state: &'a State, name: &'a str) -> Option<Self> {
        let slot = state.primitives.slots.get(name)?;
        Some(SlotValue {
            name,
            value: parse_stored(&slot.value),
            json_type: &slot.json_type,
            seq: slot.seq,
        })
    }
}

/// `list show --json`: a list's items, oldest first.
///
/// `{"name", "max", "pushed", "items": [{"seq", "value": <the JSON value>}..]}`: `max`
/// is the most items kept, `pushed` how many were ever pushed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListShow<'a> {
    pub name: &'a str,
    pub max: u32,
    pub pushed: u64,
    pub items: Vec<ListShowItem>,
}

/// An item of [`ListShow`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListShowItem {
    pub seq: u64,
    pub value: serde_json::Value,
}

impl<'a> ListShow<'a> {
    /// List `name` of `state`, if it has been pushed to.
    pub fn of(state: &'a State, name: &'a str) -> Option<Self> {
        let list = state.primitives.lists.get(name)?;
        Some(ListShow {
            name,
            max: list.max,
            pushed: list.pushed,
            items: list
                .items
                .iter()
                .map(|i| ListShowItem {
                    seq: i.seq,
                    value: parse_stored(&i.value),
                })
                .collect(),
        })
    }
}

/// A value the fold stored as JSON text; null if the text does not parse (a record forged
/// around the checks).
fn parse_stored(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}
