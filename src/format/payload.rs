//! Payload schemas. The record's kind decides how its payload (MessagePack, written with
//! rmp-serde) reads:
//!
//! - any kind not starting with `sjournal.`: an event. The payload is one MessagePack str holding
//!   the JSON text exactly as it was received, byte for byte.
//! - `sjournal.unparsed`: input that was not valid JSON, kept as a MessagePack map
//!   `{raw: bin, error: str}`.
//! - `sjournal.recovered`: a MessagePack map, see [`Recovered`].
//! - `sjournal.exec`: what an exec handler printed for an event, see [`Exec`].
//! - `sjournal.spool-merge`: events that were spooled (the journal was locked or refused them)
//!   and merged later; see [`SpoolMerge`] and "The spool's files" in `journal-format.md`.
//! - `sjournal.context.set`, `sjournal.context.clear`: context channels ([`ContextSet`],
//!   [`ContextClear`]).
//! - `sjournal.fire`, `sjournal.once`, `sjournal.slot.set`, `sjournal.list.push`,
//!   `sjournal.list.clear`: hook-author primitives ([`Fire`], [`Once`], [`SlotSet`],
//!   [`ListPush`], [`ListClear`]).
//! - `sjournal.injected`: what the hook printed back for an event ([`Injected`]).
//! - `sjournal.repaired`, `sjournal.lost`: written by `sjournal repair` ([`Repaired`],
//!   [`Lost`]).
//! - `sjournal.webhook`: one attempt to deliver an event to a webhook, and its result
//!   ([`Webhook`]).
//!
//! System records are maps with named fields (`rmp_serde::to_vec_named`), so that new optional
//! fields can be added without a format version change.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub const SYSTEM_PREFIX: &str = "sjournal.";
pub const KIND_RECOVERED: &str = "sjournal.recovered";
pub const KIND_UNPARSED: &str = "sjournal.unparsed";
pub const KIND_EXEC: &str = "sjournal.exec";
pub const KIND_SPOOL_MERGE: &str = "sjournal.spool-merge";
pub const KIND_CONTEXT_SET: &str = "sjournal.context.set";
pub const KIND_CONTEXT_CLEAR: &str = "sjournal.context.clear";
pub const KIND_FIRE: &str = "sjournal.fire";
pub const KIND_ONCE: &str = "sjournal.once";
pub const KIND_SLOT_SET: &str = "sjournal.slot.set";
pub const KIND_LIST_PUSH: &str = "sjournal.list.push";
pub const KIND_LIST_CLEAR: &str = "sjournal.list.clear";
pub const KIND_INJECTED: &str = "sjournal.injected";
pub const KIND_REPAIRED: &str = "sjournal.repaired";
pub const KIND_LOST: &str = "sjournal.lost";
pub const KIND_WEBHOOK: &str = "sjournal.webhook";
pub const KIND_HOST: &str = "sjournal.host";
pub const KIND_MEMORY: &str = "sjournal.memory";
pub const KIND_EXTRAS: &str = "sjournal.extras";
/// What was redacted from the event before it (written by `crate::redact`, which owns the
/// full schema; the fold reads [`RedactedRules`]).
pub const KIND_REDACTED: &str = "sjournal.redacted";
/// A record's payload (or one field of it) erased after the fact ([`Erased`]).
pub const KIND_ERASED: &str = "sjournal.erased";

/// Every system kind this build writes or folds.
pub const SYSTEM_KINDS: &[&str] = &[
    KIND_RECOVERED,
    KIND_UNPARSED,
    KIND_CONTEXT_SET,
    KIND_CONTEXT_CLEAR,
    KIND_FIRE,
    KIND_ONCE,
    KIND_SLOT_SET,
    KIND_LIST_PUSH,
    KIND_LIST_CLEAR,
    KIND_INJECTED,
    KIND_EXEC,
    KIND_SPOOL_MERGE,
    KIND_REPAIRED,
    KIND_LOST,
    KIND_WEBHOOK,
    KIND_HOST,
    KIND_MEMORY,
    KIND_EXTRAS,
    KIND_REDACTED,
    KIND_ERASED,
];

/// `sjournal.erased`: what `sjournal erase` removed from record `seq`. The erased record keeps
/// its `payload_digest` (so the chain holds); this record, chained after it, binds what is
/// left: nothing (`field` None: the payload is empty) or the payload without `field`, whose
/// digest with a zero salt is `new_payload_digest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erased {
    pub seq: u64,
    /// The JSON pointer of the field erased; None for the whole payload.
    pub field: Option<String>,
    /// Hex. Whole payload: the record's payload digest (its salt is erased with it). A field:
    /// the payload digest of the removed value's JSON under a fresh salt that is not kept.
    /// Either way nobody can test a guess against it; verify only reports it.
    pub erased_digest: String,
    /// Hex: the payload digest (zero salt) of the payload left, for a field erasure.
    pub new_payload_digest: Option<String>,
    pub reason: String,
}

/// What the fold reads of a `sjournal.redacted` record: the rule of each finding kept, and
/// how many findings were left out (`crate::redact::RedactedRecord` is the whole record).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RedactedRules {
    pub found: Vec<RedactedRule>,
    #[serde(default)]
    pub more: u64,
}

/// One finding of a `sjournal.redacted` record, as the fold reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RedactedRule {
    pub rule: String,
}

/// Written after recovery cut a torn tail: where, how much, and where the bytes were kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovered {
    /// File offset where the cut bytes started (the new end of the valid prefix).
    pub offset: u64,
    /// How many bytes were cut.
    pub length: u64,
    /// blake3 (unkeyed) of the cut bytes, hex.
    pub blake3: String,
    /// File name of the quarantine copy, in the journal's directory.
    pub quarantine: String,
    /// What was wrong at `offset`.
    pub reason: String,
}

/// Input that did not parse as JSON, kept as it came.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Unparsed {
    /// The input; only its first bytes when `input_len` says it was longer.
    #[serde(with = "serde_bytes")]
    pub raw: Vec<u8>,
    pub error: String,
    /// Set when the input was longer than a record can hold: its whole length in bytes
    /// (`raw` keeps the first ones; the rest was read, hashed and dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_len: Option<u64>,
    /// blake3 (unkeyed, hex) of the whole input, with `input_len`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_blake3: Option<String>,
}

impl Unparsed {
    /// Bytes of the input that are not in `raw` (0 when it is whole).
    pub fn bytes_left_out(&self) -> u64 {
        self.input_len
            .map_or(0, |n| n.saturating_sub(self.raw.len() as u64))
    }
}

/// Sets a context entry. `channel` is `persistent` (kept until cleared, survives compaction),
/// `ephemeral` (dropped when the turn ends) or `at-stop` (held until the turn ends, then
/// replaces the persistent entry of the same key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSet {
    pub channel: String,
    pub key: String,
    pub text: String,
}

/// Clears context entries: one key of one channel, a whole channel, or (both None) everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextClear {
    pub channel: Option<String>,
    pub key: Option<String>,
}

/// A change to a scope journal's memory (`sjournal.memory`, see `crate::memory`): `op` is
/// `propose`, `accept`, `reject`, `edit`, `forget`, `stale` or `session` (a session of the
/// project started: the handoff looks it up). Provenance is the session, the seq there and
/// the verbatim quote the item came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryOp {
    pub op: String,
    /// The item's id (`m` and 12 hex digits of the blake3 of its first text).
    pub id: String,
    /// The item's text (propose, edit).
    pub text: Option<String>,
    /// Where a proposal comes from: `rule` (a standing instruction), `remember` (the user's
    /// own "remember: …", accepted as said), `relayed` (a "remember: …" in a prompt the user
    /// did not type: proposed only), `explicit` (`memory propose`), `verify` (a failing
    /// command later followed by a passing variant).
    pub source: Option<String>,
    pub session: Option<String>,
    pub seq: Option<u64>,
    pub quote: Option<String>,
    /// Why (stale, reject, forget).
    pub reason: Option<String>,
}

/// The sections the hook added to an injection from outside the session (reviewed project
/// memory, the handoff from the project's last unfinished session), journaled with the
/// event so that a replay re-derives the same bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtrasRecord {
    pub event_seq: u64,
    /// (key, title, lines) per section.
    pub memory: Vec<(String, String, Vec<String>)>,
    pub handoff: Vec<(String, String, Vec<String>)>,
    /// The instruction files read to leave out what they already say (at compact), and what
    /// was left out because of them.
    pub read: Vec<FileRead>,
}

/// An instruction file (CLAUDE.md) the hook read, as it was read, and the memory lines left
/// out of the injection because the file already says them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileRead {
    pub path: String,
    /// Bytes read and their blake3 (hex); None with `error` when it was not read.
    pub bytes: u64,
    pub blake3: Option<String>,
    /// Why it was not read (not a regular file, a symlink, too large, missing).
    pub error: Option<String>,
    /// Memory lines left out of the injection: the file already contains them.
    pub omitted: Vec<String>,
    /// Standing instructions (their text as folded) left out of the recovery block: the
    /// file already contains them.
    pub instructions: Vec<String>,
}

/// A hook fired once more. Written only while the count is below `max`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fire {
    pub name: String,
    #[serde(default)]
    pub max: Option<u64>,
}

/// Keys seen for the first time (`once` / `unseen`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Once {
    pub keys: Vec<String>,
}

/// A slot's new value, JSON text. `expect_seq` is the seq of the record that set the value
/// this write replaces (0: the slot was empty), checked under the writer's lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotSet {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub expect_seq: Option<u64>,
}

/// An item (JSON text) pushed onto a bounded list; the oldest items fall off past `max`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListPush {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub max: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListClear {
    pub name: String,
}

/// What the hook printed back to the host for the event at `event_seq`, and what it was made
/// of; written in the event's own batch, after the event and its `sjournal.exec` records.
/// The fields after `text` were added with the injection policy (render version 1);
/// records written before it lack them and decode with their defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injected {
    pub event_seq: u64,
    /// The kind of the event record at `event_seq`.
    pub event_kind: String,
    /// blake3 (unkeyed, hex) of `text`'s UTF-8 bytes.
    pub text_blake3: String,
    /// Length of `text` in characters.
    pub len: u64,
    /// The renderer dropped parts to fit the budget.
    pub truncated: bool,
    pub text: String,
    /// Which rule of the injection policy made the text: `recovery` (the full block after a
    /// compaction, or its fallback), `resume`, `startup`, `clear`, `prompt`, `subagent`,
    /// `failure`. None: written before the policy.
    #[serde(default)]
    pub mode: Option<String>,
    /// The version of the renderer that made the text (`context::RENDER_VERSION`); 0 for
    /// records written before versions were recorded. A replay re-derives the text only
    /// with the same version.
    #[serde(default)]
    pub render_version: u32,
    /// The items the text carries, each keyed (`todo:list`, `fail:<call>`, `file:<path>`,
    /// ...) with the blake3 of its rendered text: the model has seen them until the next
    /// compaction, so they are not injected again unchanged.
    #[serde(default)]
    pub items: Vec<InjectedItem>,
    /// Items left out or cut to fit the budget (`files: src/a.rs`, `left-off (cut)`).
    #[serde(default)]
    pub dropped: Vec<String>,
    /// Items left out because the host's compaction summary already says them.
    #[serde(default)]
    pub deduped: Vec<String>,
    /// The budget the text was fitted to, in characters.
    #[serde(default)]
    pub budget_chars: u64,
}

/// One item of an injection: its key and the blake3 (hex, first 16 digits) of its text.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct InjectedItem {
    pub key: String,
    pub hash: String,
}

/// Written right after an event (in its batch) when the hook was told the host (`--host`) and
/// the payload alone reads as another host's: the event is `host`'s, so the fold attributes it
/// (and the session) to `host`, as the hook did, not to `detected`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostOverride {
    pub event_seq: u64,
    /// The host the hook was told (`claude`, `codex`, ...).
    pub host: String,
    /// The host the payload alone is read as.
    pub detected: String,
}

/// How an exec handler's stdout is meant to be folded into context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ExecContext {
    /// Kept in the session's context until a later record of the same handler replaces it.
    Persistent,
    /// Offered once: for the event it answers only.
    #[default]
    Ephemeral,
    /// Journaled only.
    None,
}

/// How an exec handler ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecOutcome {
    /// Exited by itself; see `exit_code`.
    Exited,
    /// Killed by a signal it did not get from us; see `signal`.
    Signaled,
    /// Ran past its timeout and was killed (its process group, SIGKILL).
    Timeout,
    /// Could not be started; see `error`.
    SpawnFailed,
}

/// What an exec handler (configured in the root's `config.toml`) printed for an event. Written
/// after the event, in the same batch. `stdout` is the handler's output (lossy UTF-8, cut at
/// the limit); the fold turns it into context as `context` says, keyed by `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exec {
    /// Seq of the event this answers.
    pub event_seq: u64,
    /// The handler's name in the configuration (unique there).
    pub name: String,
    pub command: Vec<String>,
    pub outcome: ExecOutcome,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub stdout: String,
    pub stdout_truncated: bool,
    /// The end of its stderr (at most the same limit).
    pub stderr: String,
    pub context: ExecContext,
    pub error: Option<String>,
}

impl Exec {
    /// True if the handler succeeded (exit 0), so its stdout is meant as context.
    pub fn succeeded(&self) -> bool {
        self.outcome == ExecOutcome::Exited && self.exit_code == Some(0)
    }
}

/// Written first in the batch that merges spooled events into the journal; the records of
/// `entries` follow it in order, `records.len()` of them per entry. See "The spool's files" in
/// `journal-format.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SpoolMerge {
    pub entries: Vec<SpoolMergeEntry>,
    /// Spool files found damaged (bad CRC, not a spool entry, other session): renamed to
    /// `<name>.damaged` in the spool directory, never deleted, nothing merged from them.
    pub damaged: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpoolMergeEntry {
    /// The spool file's name.
    pub file: String,
    /// When the event was spooled (the hook's clock); the merged records carry the merge time.
    pub spooled_at_ns: i64,
    pub pid: u32,
    /// Why it was spooled (the error the journal gave).
    pub reason: String,
    /// blake3 of each record as merged (`kind`, a zero byte, `payload`), hex, in order.
    pub records: Vec<String>,
    /// The file waited in the fallback spool, outside the root (the root could not take it:
    /// full, read-only, unwritable); less durable there (often a tmpfs, lost on reboot).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fallback: bool,
}

/// How a webhook attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WebhookOutcome {
    /// The endpoint answered 2xx: the event is delivered.
    Delivered,
    /// No 2xx answer (connection refused, timeout, another status, a missing variable...).
    Failed,
}

impl WebhookOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookOutcome::Delivered => "delivered",
            WebhookOutcome::Failed => "failed",
        }
    }
}

/// One attempt to POST the event at `event_seq` to the webhook `webhook`, written by the
/// deliverer after the attempt. Secrets never appear: `url` is the URL as configured (its
/// `${VAR}`s unexpanded), header values are not kept, and any expanded value found in `error`
/// or `response` is replaced by `[redacted]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    /// The webhook's name in the configuration.
    pub webhook: String,
    pub event_seq: u64,
    /// The kind of the event record at `event_seq`.
    pub event_kind: String,
    /// The `Idempotency-Key` header sent: the same for every attempt of this event.
    pub key: String,
    /// 1 for the first attempt of this event to this webhook, counted across deliverer runs.
    pub attempt: u32,
    pub outcome: WebhookOutcome,
    /// The HTTP status, if a response came.
    pub status: Option<u16>,
    pub error: Option<String>,
    /// The start of the response body of a failed attempt (lossy UTF-8, redacted).
    pub response: Option<String>,
    pub duration_ms: u64,
    /// The URL as configured.
    pub url: String,
    /// After a failure: the deliverer retries in this long. None: this run stops retrying
    /// (attempts spent, or a failure a retry cannot fix); the event stays pending.
    pub retry_in_ms: Option<u64>,
}

/// Written by `sjournal repair` into the journal it rebuilds, after the records it salvaged
/// from the damaged journal and before the records it merged from the rescue journal: what
/// was damaged, where it is kept, and what could not be salvaged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Repaired {
    /// The damaged journal's file name as it is kept, byte for byte, beside the repaired one
    /// (empty if there was no main journal to keep).
    pub damaged: String,
    /// blake3 (unkeyed, hex) and length of the whole damaged file.
    pub damaged_blake3: String,
    pub damaged_len: u64,
    /// What `verify` found in it.
    pub problem: String,
    /// Byte ranges of the damaged file that hold no salvageable record (a damaged header is
    /// the range from 0), in file order; at most `REPAIR_LIST_MAX`, the rest counted in
    /// `lost_more`.
    pub lost: Vec<ByteRange>,
    pub lost_more: u64,
    pub lost_bytes: u64,
    /// Records salvaged from the damaged journal (CRC-valid frames; they keep their seq,
    /// kind, timestamp and payload).
    pub salvaged: u64,
    /// `sjournal.lost` records written in place of records lost between salvaged ones, so
    /// that every salvaged record keeps its seq.
    pub lost_records: u64,
    /// Salvaged records that could not keep their seq (out of order or duplicated in the
    /// damaged file): their offset there and the seq they had.
    pub renumbered: Vec<Renumbered>,
    /// The damaged journal's high-water mark (its last acknowledged record), if it had one:
    /// with a rollback, the record it fell short of.
    pub acknowledged: Option<AcknowledgedMark>,
    /// The rescue journal merged after this record, if there was one.
    pub rescue: Option<RescueMerged>,
}

/// `[offset, offset + length)` of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteRange {
    pub offset: u64,
    pub length: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renumbered {
    pub offset: u64,
    pub was: u64,
    pub now: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcknowledgedMark {
    pub seq: u64,
    pub hash: String,
}

/// The rescue journal a repair merged: its name as kept, its digest, and where its records
/// went (they follow the `sjournal.repaired` record, renumbered; `event_seq` fields of its
/// `sjournal.exec` and `sjournal.injected` records are renumbered with them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RescueMerged {
    pub file: String,
    pub blake3: String,
    pub len: u64,
    pub records: u64,
    pub first_seq: u64,
    /// Byte ranges of the rescue journal that held no salvageable record.
    pub lost: Vec<ByteRange>,
}

/// Written by `sjournal repair` in place of one record lost in a damaged region, so that the
/// records after it keep their seq: the region of the damaged file it was in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lost {
    pub offset: u64,
    pub length: u64,
}

pub fn is_system_kind(kind: &str) -> bool {
    kind.starts_with(SYSTEM_PREFIX)
}

/// Encodes an event: its JSON text, byte for byte, then `digest`, bytes this codec does not
/// read (the fold's, `fold::digest::encode_event` derives them). Every writer of event
/// records encodes them through there.
///
/// The digest is left out when it would make the payload longer than the longest JSON text a
/// payload may hold without one (`limits::EVENT_PAYLOAD_MAX_BYTES`): an event that fits a
/// record without a digest always fits with what this writes, and the fold reads its JSON.
pub fn encode_event(raw_json: &str, digest: &[u8]) -> Vec<u8> {
    let mut p = encode_event_json(raw_json);
    if p.len() + digest.len() <= crate::limits::EVENT_PAYLOAD_MAX_BYTES {
        p.extend_from_slice(digest);
    }
    p
}

/// Encodes an event as the format did before digests: the JSON text alone. Such payloads
/// stay valid (the fold reads their JSON); only tests of that compatibility write them.
pub fn encode_event_json(raw_json: &str) -> Vec<u8> {
    rmp_serde::to_vec(raw_json).expect("encoding a str cannot fail")
}

/// Where the MessagePack str at the start of an event payload ends: (header length, str
/// length), if the payload starts with a str whose bytes are all present.
fn event_str(payload: &[u8]) -> Option<(usize, usize)> {
    let (&m, rest) = payload.split_first()?;
    let be = |n: usize| -> Option<usize> {
        let b = rest.get(..n)?;
        Some(b.iter().fold(0usize, |a, &x| (a << 8) | x as usize))
    };
    let (hdr, len) = match m {
        0xa0..=0xbf => (1, (m & 0x1f) as usize),
        0xd9 => (2, be(1)?),
        0xda => (3, be(2)?),
        0xdb => (5, be(4)?),
        _ => return None,
    };
    (hdr + len <= payload.len()).then_some((hdr, len))
}

/// The digest an event payload carries after its JSON text, if it has one (the bytes after
/// the str; None when nothing follows it or the payload does not start with a whole str).
pub fn event_digest(payload: &[u8]) -> Option<&[u8]> {
    let (hdr, len) = event_str(payload)?;
    let rest = &payload[hdr + len..];
    (!rest.is_empty()).then_some(rest)
}

/// The payload without its digest: the JSON text's str alone, as the format wrote events
/// before digests (the whole payload when it does not start with a whole str).
pub fn without_digest(payload: &[u8]) -> &[u8] {
    event_str(payload).map_or(payload, |(hdr, len)| &payload[..hdr + len])
}

/// Decodes an event payload back to the JSON text, without copying (a digest after it is
/// not looked at).
pub fn decode_event(seq: u64, payload: &[u8]) -> Result<&str> {
    let bad = |reason: String| Error::Payload { seq, reason };
    let Some((hdr, len)) = event_str(payload) else {
        // Not a whole str: let rmp-serde say what it is.
        return rmp_serde::from_slice::<&str>(payload).map_err(|e| bad(e.to_string()));
    };
    std::str::from_utf8(&payload[hdr..hdr + len]).map_err(|e| bad(e.to_string()))
}

pub fn encode_system<T: Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(value).expect("encoding a system record cannot fail")
}

pub fn decode_system<'a, T: Deserialize<'a>>(seq: u64, payload: &'a [u8]) -> Result<T> {
    rmp_serde::from_slice(payload).map_err(|e| Error::Payload {
        seq,
        reason: e.to_string(),
    })
}

/// The payload as JSON for display: an event's own JSON text (`null` once its whole payload
/// was erased), or a system record's fields.
pub fn to_json(seq: u64, kind: &str, payload: &[u8]) -> Result<Box<serde_json::value::RawValue>> {
    let text = if kind == KIND_UNPARSED {
        // JSON has no byte strings: show the raw input as (lossy) text and exactly, in base64.
        use base64::Engine;
        let u: Unparsed = decode_system(seq, payload)?;
        let mut v = serde_json::json!({
            "raw": String::from_utf8_lossy(&u.raw),
            "raw_base64": base64::engine::general_purpose::STANDARD.encode(&u.raw),
            "error": u.error,
        });
        if let (Some(len), Some(hash)) = (u.input_len, &u.input_blake3) {
            v["input_len"] = len.into();
            v["input_blake3"] = hash.as_str().into();
            v["bytes_left_out"] = u.bytes_left_out().into();
        }
        v.to_string()
    } else if is_system_kind(kind) {
        let v: serde_json::Value = decode_system(seq, payload)?;
        serde_json::to_string(&v).expect("a Value serializes")
    } else if payload.is_empty() {
        // An event whose whole payload was erased (no event is written empty).
        "null".to_owned()
    } else {
        decode_event(seq, payload)?.trim().to_owned()
    };
    serde_json::value::RawValue::from_string(text).map_err(|e| Error::Payload {
        seq,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes in a digest's place: opaque to this codec.
    const DIGEST: &[u8] = &[0x94, 3, 8, 0xc4, 1, 0, 0xa0];

    #[test]
    fn event_bytes_survive() {
        let raw = "{ \"b\":1,  \"a\" : [1.50, \"\\u00e9\"] }\n";
        for p in [encode_event(raw, DIGEST), encode_event_json(raw)] {
            assert_eq!(decode_event(1, &p).unwrap(), raw);
        }
        assert!(event_digest(&encode_event_json(raw)).is_none());
        assert_eq!(event_digest(&encode_event(raw, DIGEST)), Some(DIGEST));
    }

    /// Readers built before digests decode an event payload with `rmp_serde::from_slice`,
    /// which reads the first value and ignores what follows: they see the JSON text of a
    /// payload with a digest, unchanged.
    #[test]
    fn readers_before_digests_read_the_json() {
        let raw = r#"{"hook_event_name":"Stop","session_id":"s"}"#;
        let p = encode_event(raw, DIGEST);
        assert_eq!(rmp_serde::from_slice::<&str>(&p).unwrap(), raw);
        let long = format!("{{\"prompt\":\"{}\"}}", "x".repeat(70_000));
        let p = encode_event(&long, DIGEST);
        assert_eq!(rmp_serde::from_slice::<&str>(&p).unwrap(), long);
        assert_eq!(decode_event(1, &p).unwrap(), long);
    }

    /// A digest never makes an event too long for a record: near the limit it is left out.
    #[test]
    fn no_digest_where_it_would_not_fit() {
        use crate::limits::{EVENT_PAYLOAD_MAX_BYTES, INPUT_MAX_BYTES};
        let big = format!(
            "{{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Write\",\"tool_input\":{{\"content\":\"{}\"}}}}",
            "x".repeat(INPUT_MAX_BYTES - 200)
        );
        assert!(big.len() <= INPUT_MAX_BYTES);
        let room = EVENT_PAYLOAD_MAX_BYTES - encode_event_json(&big).len();
        let p = encode_event(&big, &vec![7; room + 1]);
        assert!(p.len() <= EVENT_PAYLOAD_MAX_BYTES);
        assert!(event_digest(&p).is_none());
        assert_eq!(decode_event(1, &p).unwrap(), big);
        let p = encode_event(&big, &vec![7; room]);
        assert_eq!(p.len(), EVENT_PAYLOAD_MAX_BYTES);
        assert_eq!(event_digest(&p).map(<[u8]>::len), Some(room));
    }

    #[test]
    fn truncated_or_foreign_payloads_are_errors() {
        let p = encode_event_json("{}");
        assert!(decode_event(1, &p[..p.len() - 1]).is_err());
        assert!(decode_event(1, &[0xc0]).is_err());
        assert!(event_digest(&p[..p.len() - 1]).is_none());
    }

    #[test]
    fn system_roundtrip() {
        let r = Recovered {
            offset: 10,
            length: 3,
            blake3: "ab".into(),
            quarantine: "q".into(),
            reason: "torn".into(),
        };
        let p = encode_system(&r);
        assert_eq!(decode_system::<Recovered>(1, &p).unwrap(), r);
        let j = to_json(1, KIND_RECOVERED, &p).unwrap();
        assert!(j.get().contains("\"offset\":10"), "{}", j.get());
    }

    /// Enums travel as their kebab-case names, so the JSON view and other readers see words.
    #[test]
    fn exec_roundtrip_names_enums() {
        let e = Exec {
            event_seq: 3,
            name: "git".into(),
            command: vec!["git".into(), "status".into()],
            outcome: ExecOutcome::SpawnFailed,
            exit_code: None,
            signal: None,
            duration_ms: 1,
            stdout: String::new(),
            stdout_truncated: false,
            stderr: String::new(),
            context: ExecContext::Persistent,
            error: Some("not found".into()),
        };
        let p = encode_system(&e);
        assert_eq!(decode_system::<Exec>(1, &p).unwrap(), e);
        let j = to_json(1, KIND_EXEC, &p).unwrap();
        assert!(
            j.get().contains("\"outcome\":\"spawn-failed\""),
            "{}",
            j.get()
        );
        assert!(
            j.get().contains("\"context\":\"persistent\""),
            "{}",
            j.get()
        );
    }

    /// Unparsed input holds a byte string, which JSON lacks: it is shown as text and base64.
    #[test]
    fn unparsed_shows_as_json() {
        let p = encode_system(&Unparsed {
            raw: b"not json\xff".to_vec(),
            error: "expected value".into(),
            ..Unparsed::default()
        });
        let v: serde_json::Value =
            serde_json::from_str(to_json(3, KIND_UNPARSED, &p).unwrap().get()).unwrap();
        assert_eq!(v["raw"], "not json\u{fffd}");
        assert_eq!(v["raw_base64"], "bm90IGpzb27/");
        assert_eq!(v["error"], "expected value");
    }
}
