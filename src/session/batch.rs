//! What a write is made of and what became of it: the batch, where it landed, and the
//! snapshot due after it.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::fold::{RecordView, State};
use crate::journal::paths::SessionPaths;
use crate::journal::writer::{now_unix_ns, Appended};
use crate::snapshot::{self, Head, Written};

/// Records to write together: one write and one sync, all with the same timestamp unless
/// `times` gives each its own (an import keeping the times of the records it copies).
#[derive(Debug, Clone)]
pub struct Batch {
    pub ts_unix_ns: i64,
    pub records: Vec<(String, Vec<u8>)>,
    /// The `i`-th record's timestamp, where given; `ts_unix_ns` for the rest.
    pub times: Vec<Option<i64>>,
}

impl Default for Batch {
    fn default() -> Self {
        Self::new()
    }
}

impl Batch {
    /// An empty batch stamped now.
    pub fn new() -> Batch {
        Batch {
            ts_unix_ns: now_unix_ns(),
            records: Vec::new(),
            times: Vec::new(),
        }
    }

    /// The timestamp of the `i`-th record.
    pub fn ts(&self, i: usize) -> i64 {
        self.times
            .get(i)
            .copied()
            .flatten()
            .unwrap_or(self.ts_unix_ns)
    }

    /// A batch of one record.
    pub fn one(kind: &str, payload: Vec<u8>) -> Batch {
        let mut b = Batch::new();
        b.push(kind, payload);
        b
    }

    /// A batch of one event: `kind` (the record kind) and its JSON text, encoded with its
    /// fold digest ([`Batch::event`]).
    pub fn one_event(kind: &str, raw_json: &str) -> Batch {
        let mut b = Batch::new();
        b.event(kind, raw_json);
        b
    }

    pub fn push(&mut self, kind: &str, payload: Vec<u8>) {
        self.records.push((kind.to_owned(), payload));
    }

    /// Adds an event record: its JSON text under `kind`, with the fold digest the fold reads
    /// of it as that kind (`format::payload::encode_event`), so the kind is given once.
    pub fn event(&mut self, kind: &str, raw_json: &str) {
        self.push(kind, crate::fold::digest::encode_event(kind, raw_json));
    }

    pub fn items(&self) -> Vec<(&str, &[u8])> {
        self.records
            .iter()
            .map(|(k, p)| (k.as_str(), p.as_slice()))
            .collect()
    }

    /// Folds the batch into `state`, its first record getting `first_seq`.
    pub fn fold_into(&self, state: &mut State, first_seq: u64) {
        for (i, (kind, payload)) in self.records.iter().enumerate() {
            state.apply(&RecordView {
                seq: first_seq + i as u64,
                ts_unix_ns: self.ts(i),
                kind,
                payload,
            });
        }
    }
}

/// Where a batch ended up.
#[derive(Debug)]
pub enum Landed {
    /// In the session's journal.
    Journal { appended: Vec<Appended> },
    /// The journal refused appends (`cause`: it is damaged); in the rescue journal.
    Rescue {
        appended: Vec<Appended>,
        cause: Error,
    },
    /// In spool files, to be merged into the journal later. `appended` holds the records
    /// before them that did make it into the journal (a batch written in several parts that
    /// failed part way; usually none).
    Spooled {
        appended: Vec<Appended>,
        files: Vec<PathBuf>,
        reason: String,
        /// In the fallback spool, outside the root: less durable, and the user is told.
        fallback: bool,
    },
}

impl Landed {
    /// The records written to a journal (main or rescue), in order.
    pub fn appended(&self) -> &[Appended] {
        match self {
            Landed::Journal { appended }
            | Landed::Rescue { appended, .. }
            | Landed::Spooled { appended, .. } => appended,
        }
    }

    /// The seq of the first record written to a journal, if one was.
    pub fn first_seq(&self) -> Option<u64> {
        self.appended().first().map(|a| a.seq)
    }

    /// Whether the batch is durable in the root (journal, rescue journal or the root's spool).
    pub fn in_root(&self) -> bool {
        !matches!(self, Landed::Spooled { fallback: true, .. })
    }

    /// What to tell the user (not just a log) about where the batch went: something only
    /// when it could not be stored durably in the root.
    pub fn notice(&self) -> Option<String> {
        match self {
            Landed::Spooled {
                files,
                reason,
                fallback: true,
                ..
            } => Some(format!(
                "sjournal could not store this event in its journal ({reason}). It is kept in {} — \
                 outside the journal's directory and less durable there (lost if the machine \
                 restarts first) — and {}.",
                files
                    .first()
                    .map(|f| f.display().to_string())
                    .unwrap_or_default(),
                if reason.contains(crate::journal::spool::UNAUTHENTICATED) {
                    "waits there until you accept it (see above)"
                } else {
                    "is merged into the journal once it can take it again (any sjournal command \
                     on this session, or `sjournal flush`)"
                }
            )),
            _ => None,
        }
    }
}

/// A written batch.
#[derive(Debug)]
pub struct Committed {
    pub landed: Landed,
    /// The session's state after the batch (when the state was loaded and the batch went
    /// into a journal).
    pub state: Option<State>,
    pub(super) snapshot: Option<SnapshotDue>,
}

#[derive(Debug)]
pub(super) struct SnapshotDue {
    pub(super) paths: SessionPaths,
    pub(super) head: Head,
    pub(super) fs: std::sync::Arc<dyn crate::storage::Fs>,
}

impl From<Landed> for Committed {
    fn from(landed: Landed) -> Committed {
        Committed {
            landed,
            state: None,
            snapshot: None,
        }
    }
}

impl Committed {
    /// Writes the snapshot if one is due. Call it after answering: the lock is already
    /// released, and a snapshot only saves the next loads time (a failure changes nothing).
    pub fn write_snapshot(&mut self) -> Option<Result<Written>> {
        self.snapshot_job().map(SnapshotJob::run)
    }

    /// The snapshot that is due, to write later (the hook writes it after printing its reply).
    pub fn snapshot_job(&mut self) -> Option<SnapshotJob> {
        let due = self.snapshot.take()?;
        Some(SnapshotJob {
            state: self.state.clone()?,
            due,
        })
    }
}

/// A snapshot that is due, with the state to write.
#[derive(Debug)]
pub struct SnapshotJob {
    due: SnapshotDue,
    state: State,
}

impl SnapshotJob {
    pub fn run(self) -> Result<Written> {
        let d = self.due;
        snapshot::write_with(&*d.fs, &d.paths, &self.state, &d.head)
    }
}
