//! The fold: session state as a pure function of the journal's records.
//!
//! `State::apply` takes one record and changes the state; it reads nothing but the record (no
//! clock: times come from the record's `ts`; no environment, no I/O) and keeps everything in
//! ordered maps and bounded sequences, so the state's encoding (`State::encode`, rmp-serde) is
//! a function of the records alone, and a snapshot plus the records after it gives the same
//! bytes as a replay from the first record.
//!
//! Any change to what `apply` does, to the `State` types or to the bounds in `limits` changes
//! the state some journal folds to: bump [`FOLD_VERSION`] (old snapshots are then discarded
//! and rebuilt, and the golden hashes in `tests/golden.rs` are recorded anew for the new
//! version).

mod bounded;
mod bulk;
mod channel;
pub mod digest;
mod events;
pub mod instructions;
pub mod memory;
pub mod model_view;
mod progress;
mod progress_rules;
mod state;
mod system;
pub mod tally;

use std::sync::LazyLock;

pub use channel::Channel;
pub use state::*;

use crate::event::Event;
use crate::format::payload::{decode_event, event_digest, is_system_kind};
use crate::format::{FrameRef, Hash};

/// Version of the fold's semantics and of `State`'s encoding.
pub const FOLD_VERSION: u32 = 10;

/// Domain-separation context of the state hash.
pub const STATE_HASH_CONTEXT: &str = "sjournal 2026-11-29 folded state v1";

static STATE_KEY: LazyLock<[u8; 32]> =
    LazyLock::new(|| blake3::derive_key(STATE_HASH_CONTEXT, b""));

/// What the fold sees of a record.
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub kind: &'a str,
    pub payload: &'a [u8],
}

impl<'a> From<&FrameRef<'a>> for RecordView<'a> {
    fn from(f: &FrameRef<'a>) -> Self {
        RecordView {
            seq: f.seq,
            ts_unix_ns: f.ts_unix_ns,
            kind: f.kind,
            payload: f.payload,
        }
    }
}

/// The state hash of an encoded state (see [`State::state_hash`]).
pub fn hash_encoded(encoded: &[u8]) -> Hash {
    Hash(*blake3::keyed_hash(&STATE_KEY, encoded).as_bytes())
}

impl State {
    pub fn new() -> State {
        State::default()
    }

    /// Folds one record in. Records at or below the state's seq were folded already and
    /// are skipped, so folding a snapshot's tail twice changes nothing.
    pub fn apply(&mut self, rec: &RecordView<'_>) {
        if !self.takes_event(rec) {
            return;
        }
        // The digest stored with the event (a version the fold reads) is what the JSON
        // reads as; a payload without one (or with another version's) is read from its JSON.
        let from_digest = event_digest(rec.payload).and_then(|d| {
            crate::fold::digest::with_decoded(d, |event| self.apply_event(event, rec))
        });
        if from_digest.is_some() {
            return;
        }
        self.apply_json(rec);
    }

    /// [`State::apply`] with the event's digest decoded already: `event` is what
    /// `fold::digest::decode` reads of the record's digest (None for a system record, or an
    /// event without a digest that decodes, read from its JSON). For a reader that decodes
    /// ahead of the fold, on another thread.
    pub fn apply_decoded(&mut self, rec: &RecordView<'_>, event: Option<&Event<'_>>) {
        if !self.takes_event(rec) {
            return;
        }
        match event {
            Some(event) => self.apply_event(event, rec),
            None => self.apply_json(rec),
        }
    }

    /// The bookkeeping of every record; false when there is no event left to fold (a record
    /// folded already, or a system record, folded here).
    fn takes_event(&mut self, rec: &RecordView<'_>) -> bool {
        if rec.seq <= self.seq {
            return false;
        }
        self.seq = rec.seq;
        self.records += 1;
        if self.records == 1 {
            self.first_ts_unix_ns = rec.ts_unix_ns;
        }
        self.last_ts_unix_ns = rec.ts_unix_ns;
        if is_system_kind(rec.kind) {
            self.apply_system(rec);
            return false;
        }
        // The extras journaled with an event hold for that event only.
        self.extras = None;
        true
    }

    /// Folds an event record from its JSON text, ignoring any digest.
    fn apply_json(&mut self, rec: &RecordView<'_>) {
        if rec.payload.is_empty() {
            // Erased (no event's payload is empty): nothing of it is left to fold; the
            // `sjournal.erased` record after it is counted.
            return;
        }
        match decode_event(rec.seq, rec.payload) {
            Ok(raw) => {
                let raw = crate::event::lenient::text(raw);
                let event = crate::event::Event::parse(rec.kind, &raw);
                self.apply_event(&event, rec);
            }
            Err(_) => self.journal.undecodable += 1,
        }
    }

    /// The canonical encoding: rmp-serde, structs as arrays, maps in key order.
    pub fn encode(&self) -> Vec<u8> {
        rmp_serde::to_vec(self).expect("a State always encodes")
    }

    pub fn decode(bytes: &[u8]) -> Result<State, rmp_serde::decode::Error> {
        rmp_serde::from_slice(bytes)
    }

    /// blake3 (keyed with [`STATE_HASH_CONTEXT`]) of [`State::encode`].
    pub fn state_hash(&self) -> Hash {
        hash_encoded(&self.encode())
    }
}

/// Folds records into a fresh state.
pub fn fold<'a>(records: impl IntoIterator<Item = RecordView<'a>>) -> State {
    let mut s = State::new();
    for r in records {
        s.apply(&r);
    }
    s
}

pub use events::OTHER_TOOLS;
pub use progress_rules::{command_family, failure_key, squash};
pub use system::{json_type, valid_name};
