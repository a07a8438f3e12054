//! Replay: a session's records one by one through a fold, with what each record changed in
//! the state (a diff of the state as JSON before and after it) and the context the hook
//! would have injected at that point. Deterministic: the same journal and fold give the same
//! steps and the same final state hash, which equals the hash of folding the journal in one
//! go (`sjournal state`).
//!
//! The driver is generic over [`Fold`], so it does not depend on how the state is built.

pub mod diff;
pub mod session;

use serde::Serialize;

use crate::error::{Error, Result};
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

    /// The context the hook would print for `rec`, which was just applied: None when the
    /// hook injects nothing at this event.
    fn context(&self, rec: &Record<'_>) -> Option<String>;

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
    /// The context that would have been injected after this record.
    pub context: Option<String>,
    /// The state hash after this record.
    pub state_hash: String,
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
    mut on_step: impl FnMut(Step) -> Result<()>,
) -> Result<End> {
    let mut end = End {
        last_seq: 0,
        state_hash: fold.state_hash().to_hex(),
        steps: 0,
        stop: None,
    };
    // The state as JSON after the previous record, when that record was shown.
    let mut prev: Option<serde_json::Value> = None;
    for r in reader.records()? {
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
        fold.apply(&rec)?;
        end.last_seq = rec.seq;
        if let Some(before) = before {
            let after = to_json(rec.seq, fold.state())?;
            let state_hash = fold.state_hash().to_hex();
            on_step(Step {
                seq: rec.seq,
                ts_unix_ns: rec.ts_unix_ns,
                kind: rec.kind.to_owned(),
                hash: rec.hash.to_hex(),
                changes: diff(&before, &after),
                context: fold.context(&rec),
                state_hash,
            })?;
            end.steps += 1;
            prev = Some(after);
        }
    }
    end.state_hash = fold.state_hash().to_hex();
    Ok(end)
}
