//! Replay: a session's records one by one through a fold, with what each record changed in
//! the state (a diff of the state as JSON before and after it), and for every event the text
//! the hook injected, checked against a re-derivation. Deterministic: the same journal and
//! fold give the same steps and the same final state hash, which equals the hash of folding
//! the journal in one go (`sjournal state`).
//!
//! The hook renders an event's context after folding the event and its `sjournal.exec`
//! records, and journals the text in an `sjournal.injected` record after them, in the same
//! batch. Replay does the same: when an event's batch ends (or right before its injected
//! record is folded) it asks the fold what it would inject, and compares the blake3 of that
//! with the journaled record ([`InjectionCheck`]). A journaled text that the fold does not
//! re-derive exactly is a finding, unless an older renderer made it (`render_version`).
//!
//! The driver is generic over [`Fold`], so it does not depend on how the state is built.

pub mod diff;
pub mod session;

use serde::Serialize;

use crate::context::RENDER_VERSION;
use crate::error::{Error, Result};
use crate::format::hash::content_hash;
use crate::format::payload::{
    decode_system, is_system_kind, Exec, ExtrasRecord, Injected, SpoolMerge, KIND_EXEC,
    KIND_EXTRAS, KIND_INJECTED, KIND_SPOOL_MERGE,
};
use crate::format::Hash;
use crate::journal::scan::Stop;
use crate::journal::{JournalReader, Record};
pub use diff::{diff, Change, Op};

/// What replay needs of a fold. The session fold implements it; tests use small ones.
pub trait Fold {
    /// Serialized to JSON to show what each record changed.
    type State: Serialize;

    /// Folds one record into the state. Must be pure: the same records in the same order
    /// give the same state.
    fn apply(&mut self, rec: &Record<'_>) -> Result<()>;

    fn state(&self) -> &Self::State;

    /// The hash `sjournal state` reports for this state.
    fn state_hash(&self) -> Hash;

    /// The context the hook injects for the event `event`, with the state as the hook sees
    /// it: after the event and its exec records, before its injected record. None when the
    /// hook injects nothing at this event.
    fn context(&self, event: &Record<'_>) -> Option<String>;

    /// JSON Pointers of state fields that change with every record (counters, the last
    /// seq): the text output leaves them out so the changes that matter stand out. The JSON
    /// output keeps every change.
    fn bookkeeping(&self) -> &'static [&'static str] {
        &[]
    }
}

/// One replayed record. The JSON form (`replay --json`, one per line) is this struct.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub kind: String,
    /// The record's chain hash.
    pub hash: String,
    /// What the record changed in the state.
    pub changes: Vec<Change>,
    /// The injection of the event whose batch ends with this record: what the journal says
    /// was injected, and what the fold re-derives.
    pub injection: Option<InjectionCheck>,
    /// The state hash after this record.
    pub state_hash: String,
    /// An `sjournal.redacted` record: what was redacted from the event before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted: Option<crate::redact::RedactedRecord>,
    /// The record was erased after the fact (`sjournal erase`): it folded from what is left.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub erased: bool,
}

/// An event's injection, journaled and re-derived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InjectionCheck {
    pub event_seq: u64,
    pub status: CheckStatus,
    /// The journaled text (its `sjournal.injected` record), if there is one.
    pub journaled: Option<String>,
    pub journaled_blake3: Option<String>,
    /// The renderer version that made the journaled text.
    pub render_version: Option<u32>,
    /// What this build's fold re-derives.
    pub derived: Option<String>,
    pub derived_blake3: Option<String>,
}

/// How a journaled injection compares with its re-derivation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    /// Same bytes (same blake3).
    Match,
    /// The same renderer version re-derives other text, or none, or the record's hash does
    /// not match its own text: a finding.
    Differs,
    /// Made by another renderer version: shown, not compared.
    OtherVersion,
    /// Nothing journaled, but the fold derives text: the hook may not have been asked, timed
    /// out, or failed open. Shown, not a finding.
    NotJournaled,
    /// Nothing journaled for an event that reached the journal through the spool (the hook
    /// injected nothing then).
    Spooled,
}

impl InjectionCheck {
    pub fn is_finding(&self) -> bool {
        self.status == CheckStatus::Differs
    }
}

fn hex(text: &str) -> String {
    content_hash(text.as_bytes()).to_hex()
}

fn check<F: Fold>(
    fold: &F,
    event: &Record<'_>,
    spooled: bool,
    j: Option<Injected>,
) -> Option<InjectionCheck> {
    let derived = fold.context(event).filter(|t| !t.is_empty());
    if j.is_none() && derived.is_none() {
        return None;
    }
    let derived_blake3 = derived.as_deref().map(hex);
    let status = match &j {
        None if spooled => CheckStatus::Spooled,
        None => CheckStatus::NotJournaled,
        Some(j) if j.render_version != RENDER_VERSION => CheckStatus::OtherVersion,
        Some(j)
            if hex(&j.text) == j.text_blake3 && derived_blake3.as_ref() == Some(&j.text_blake3) =>
        {
            CheckStatus::Match
        }
        Some(_) => CheckStatus::Differs,
    };
    Some(InjectionCheck {
        event_seq: event.seq,
        status,
        journaled_blake3: j.as_ref().map(|j| j.text_blake3.clone()),
        render_version: j.as_ref().map(|j| j.render_version),
        journaled: j.map(|j| j.text),
        derived,
        derived_blake3,
    })
}

/// The event a batch record (exec output, extras, injected text) belongs to.
fn batch_event(rec: &Record<'_>) -> Option<u64> {
    match rec.kind {
        KIND_EXEC => decode_system::<Exec>(rec.seq, rec.payload)
            .ok()
            .map(|e| e.event_seq),
        KIND_INJECTED => decode_system::<Injected>(rec.seq, rec.payload)
            .ok()
            .map(|i| i.event_seq),
        // What the hook added from outside the session (memory, the handoff) comes before
        // the injection it went into.
        KIND_EXTRAS => decode_system::<ExtrasRecord>(rec.seq, rec.payload)
            .ok()
            .map(|x| x.event_seq),
        _ => None,
    }
}

/// Which records to show. Records before `from` are folded without being shown; records
/// after `to` are not folded.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub from: u64,
    pub to: Option<u64>,
}

impl Default for Range {
    fn default() -> Range {
        Range { from: 1, to: None }
    }
}

/// How a replay ended.
#[derive(Debug, Clone, Serialize)]
pub struct End {
    /// The last record folded.
    pub last_seq: u64,
    /// The state hash after it: equal to folding records 1..=last_seq in one go.
    pub state_hash: String,
    pub steps: u64,
    /// Where the journal stopped being valid, if it did before `to`.
    #[serde(skip)]
    pub stop: Option<Stop>,
    /// Injections whose re-derivation differs (`CheckStatus::Differs`), by event seq.
    pub differing: Vec<u64>,
}

fn to_json<S: Serialize>(seq: u64, state: &S) -> Result<serde_json::Value> {
    serde_json::to_value(state).map_err(|e| Error::Fold {
        seq,
        reason: format!("the state does not serialize to JSON: {e}"),
    })
}

/// Replays the journal in `reader` through `fold`, calling `on_step` for each record in
/// `range`.
pub fn replay<F: Fold>(
    reader: &JournalReader,
    fold: &mut F,
    range: Range,
    on_step: impl FnMut(Step) -> Result<()>,
) -> Result<End> {
    replay_records(reader.records()?, fold, range, on_step)
}

/// [`replay`] of `records`, which need not start at the journal's first record: `fold` must
/// then hold the state of every record before the first (a state kept at a known record, and
/// `JournalReader::records_from` the end of that record), so a step far into a long journal
/// costs the records since that state, not all of them.
pub fn replay_records<F: Fold>(
    records: crate::journal::reader::Records<'_>,
    fold: &mut F,
    range: Range,
    mut on_step: impl FnMut(Step) -> Result<()>,
) -> Result<End> {
    let mut end = End {
        last_seq: 0,
        state_hash: fold.state_hash().to_hex(),
        steps: 0,
        stop: None,
        differing: Vec::new(),
    };
    // The state as JSON after the previous record, when that record was shown.
    let mut prev: Option<serde_json::Value> = None;
    // The event whose batch (exec records, injected record) may still continue, and whether
    // it came through the spool.
    let mut pending: Option<(Record<'_>, bool)> = None;
    // Records still to come from the last spool merge.
    let mut merged_left: usize = 0;
    let mut records = records.peekable();
    while let Some(r) = records.next() {
        let rec = match r {
            Ok(rec) => rec,
            Err(stop) => {
                end.stop = Some(stop);
                break;
            }
        };
        if range.to.is_some_and(|to| rec.seq > to) {
            break;
        }
        let shown = rec.seq >= range.from;
        let before = match (shown, prev.take()) {
            (false, _) => None,
            (true, Some(v)) => Some(v),
            (true, None) => Some(to_json(rec.seq, fold.state())?),
        };
        let spooled = merged_left > 0;
        merged_left = merged_left.saturating_sub(1);
        let mut injection = None;
        if rec.kind == KIND_INJECTED {
            let j = decode_system::<Injected>(rec.seq, rec.payload).ok();
            match (pending.take(), j) {
                (Some((ev, sp)), Some(j)) if j.event_seq == ev.seq => {
                    injection = check(fold, &ev, sp, Some(j));
                }
                (p, _) => pending = p,
            }
        }
        fold.apply(&rec)?;
        end.last_seq = rec.seq;
        if rec.kind == KIND_SPOOL_MERGE {
            if let Ok(m) = decode_system::<SpoolMerge>(rec.seq, rec.payload) {
                merged_left = m.entries.iter().map(|e| e.records.len()).sum();
            }
        }
        if !is_system_kind(rec.kind) {
            pending = Some((rec, spooled));
        }
        if let Some((ev, sp)) = pending {
            let continues = match records.peek() {
                Some(Ok(next)) => {
                    // What was redacted from the event follows it, without its seq.
                    range.to.is_none_or(|to| next.seq <= to)
                        && (batch_event(next) == Some(ev.seq)
                            || next.kind == crate::redact::KIND_REDACTED)
                }
                _ => false,
            };
            if !continues {
                injection = check(fold, &ev, sp, None);
                pending = None;
            }
        }
        if let Some(c) = injection.as_ref().filter(|c| c.is_finding()) {
            end.differing.push(c.event_seq);
        }
        if let Some(before) = before {
            let after = to_json(rec.seq, fold.state())?;
            let state_hash = fold.state_hash().to_hex();
            on_step(Step {
                seq: rec.seq,
                ts_unix_ns: rec.ts_unix_ns,
                kind: rec.kind.to_owned(),
                hash: rec.hash.to_hex(),
                changes: diff(&before, &after),
                injection,
                state_hash,
                redacted: (rec.kind == crate::redact::KIND_REDACTED)
                    .then(|| decode_system(rec.seq, rec.payload).ok())
                    .flatten(),
                erased: rec.erased(),
            })?;
            end.steps += 1;
            prev = Some(after);
        }
    }
    end.state_hash = fold.state_hash().to_hex();
    Ok(end)
}
