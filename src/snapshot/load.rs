//! Loading a session's state: the snapshot if it checks out, then the journal's records after
//! it, read through the mmap reader.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

use super::{tail, Head, SnapshotHeader, Written, FORMAT_VERSION, HEADER_LEN};
use crate::error::{Error, Result};
use crate::fold::{hash_encoded, State, FOLD_VERSION};
use crate::format::hash::content_hash;
use crate::format::record;
use crate::journal::paths::{self, Root, SessionPaths};
use crate::journal::scan::{Chain, Problem};
use crate::journal::JournalReader;
use crate::limits::SNAPSHOT_MAX_BYTES;

#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Fold only up to this seq (None: the whole journal).
    pub at: Option<u64>,
    /// Start from the snapshot when it checks out (false: always replay in full).
    pub use_snapshot: bool,
    /// Give up waiting for the journal's shared lock at this instant.
    pub deadline: Option<Instant>,
}

impl LoadOptions {
    pub fn latest() -> LoadOptions {
        LoadOptions {
            at: None,
            use_snapshot: true,
            deadline: None,
        }
    }
}

/// What the snapshot contributed. Printed (`state --json`'s `snapshot`) as `{"use": "none"}`,
/// `{"use": "used", "seq": N}` (started from the snapshot at seq N), `{"use": "past-target",
/// "seq": N}` (the snapshot is past the requested seq; replayed from the start) or `{"use":
/// "rejected", "reason": ".."}` (the snapshot did not check out and was ignored).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(tag = "use", rename_all = "kebab-case")]
pub enum SnapshotUse {
    /// No snapshot file, or not asked to use one.
    #[default]
    None,
    /// The state started from the snapshot at this seq.
    Used { seq: u64 },
    /// The snapshot is past the requested `at`; replayed from the start.
    PastTarget { seq: u64 },
    /// The snapshot did not check out and was ignored; why.
    Rejected { reason: String },
}

impl SnapshotUse {
    /// The value of `use`.
    pub fn name(&self) -> &'static str {
        match self {
            SnapshotUse::None => "none",
            SnapshotUse::Used { .. } => "used",
            SnapshotUse::PastTarget { .. } => "past-target",
            SnapshotUse::Rejected { .. } => "rejected",
        }
    }
}

/// How a state was loaded.
#[derive(Debug, Clone, Default)]
pub struct LoadInfo {
    pub snapshot: SnapshotUse,
    /// Records folded from the journal (after the snapshot, if one was used).
    pub tail_records: u64,
    /// The journal position the state corresponds to (None: no record folded).
    pub head: Option<Head>,
    /// The journal's readable records stopped early at a damaged or out-of-place record.
    pub stopped: Option<String>,
    /// Things the caller may want to tell the user (rejected snapshot, damaged journal).
    pub warnings: Vec<String>,
    /// Spool files not yet in the journal whose events a reader folded in on top (they are
    /// pending: see `cli::pending`); 0 for a state of the journal alone.
    pub pending: u64,
}

impl LoadInfo {
    /// Seq of the snapshot the state started from (0: none).
    pub fn snapshot_seq(&self) -> u64 {
        match self.snapshot {
            SnapshotUse::Used { seq } => seq,
            _ => 0,
        }
    }
}

pub(crate) struct Reject(pub(crate) String);

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn reject<T>(msg: impl Into<String>) -> std::result::Result<T, Reject> {
    Err(Reject(msg.into()))
}

/// Reads the snapshot file; None if there is none.
pub(crate) fn read_snapshot(path: &Path) -> std::result::Result<Option<Vec<u8>>, Reject> {
    let file = match paths::open_file(path, false, false) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return reject(format!("cannot open it: {e}")),
    };
    // Sized from the file's length, so it is read in one call rather than in doubling steps.
    let len = file
        .metadata()
        .map_or(0, |m| m.len())
        .min(SNAPSHOT_MAX_BYTES);
    let mut bytes = Vec::with_capacity(len as usize + 1);
    file.take(SNAPSHOT_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Reject(format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > SNAPSHOT_MAX_BYTES {
        return reject(format!("larger than {SNAPSHOT_MAX_BYTES} bytes"));
    }
    Ok(Some(bytes))
}

/// Checks a snapshot file against itself and against the journal's bytes (`journal`, whose
/// header is `hlen` bytes long); returns its state and header.
fn check(
    bytes: &[u8],
    journal: &[u8],
    hlen: usize,
) -> std::result::Result<(State, SnapshotHeader), Reject> {
    let frame_at = |offset: u64| journal.get(offset as usize..).map(Cow::Borrowed);
    check_with(bytes, journal.len() as u64, hlen as u64, &frame_at)
}

/// Checks a snapshot file against itself, and against a journal of `journal_len` valid bytes
/// whose header is `hlen` bytes long, through `frame_at(offset)`: the journal's bytes from
/// `offset` on (at least the frame there), if it has any.
pub(crate) fn check_with<'j>(
    bytes: &[u8],
    journal_len: u64,
    hlen: u64,
    frame_at: &dyn Fn(u64) -> Option<Cow<'j, [u8]>>,
) -> std::result::Result<(State, SnapshotHeader), Reject> {
    let h = SnapshotHeader::decode(bytes).map_err(Reject)?;
    if h.format_version != FORMAT_VERSION {
        return reject(format!(
            "snapshot format version {} (this build reads {FORMAT_VERSION})",
            h.format_version
        ));
    }
    if h.fold_version != FOLD_VERSION {
        return reject(format!(
            "written by fold version {} (this build folds with version {FOLD_VERSION})",
            h.fold_version
        ));
    }
    let body = &bytes[HEADER_LEN..];
    if body.len() as u64 != h.body_len {
        return reject(format!(
            "body is {} bytes, the header says {}",
            body.len(),
            h.body_len
        ));
    }
    if content_hash(body) != h.body_blake3 {
        return reject("body hash mismatch (the file is damaged)");
    }
    if hash_encoded(body) != h.state_hash {
        return reject("state hash mismatch");
    }
    let end = h.end_offset;
    if end > journal_len {
        return reject(format!(
            "it covers the journal up to seq {} (offset {end}), but the journal is only {journal_len} bytes: \
             the journal is shorter than the snapshot says",
            h.seq,
        ));
    }
    if h.frame_offset < hlen || h.frame_offset >= end {
        return reject("impossible record offsets");
    }
    let bytes_at = frame_at(h.frame_offset).unwrap_or_default();
    let frame = record::parse(&bytes_at)
        .map_err(|e| Reject(format!("no valid record at offset {}: {e}", h.frame_offset)))?;
    if frame.seq != h.seq || frame.len() as u64 != end - h.frame_offset {
        return reject(format!(
            "the journal's record at offset {} is seq {}, not seq {}",
            h.frame_offset, frame.seq, h.seq
        ));
    }
    if frame.hash() != h.chain_hash {
        return reject(format!(
            "the journal's chain hash at seq {} differs from the snapshot's: it is not the journal \
             the snapshot was taken of",
            h.seq
        ));
    }
    let state = State::decode(body).map_err(|e| Reject(format!("body does not decode: {e}")))?;
    if state.seq != h.seq {
        return reject("the state's seq differs from the header's");
    }
    Ok((state, h))
}

/// Loads a session's state: the snapshot (when asked and valid) plus a fold of the records
/// after it, up to `opts.at`. Errors only when the journal cannot be read at all.
/// A journal that is not there is `NoSuchSession`; anything else in its place (a symlink, a
/// directory) is opened and refused for what it is, never taken for a missing session.
pub fn load_state(root: &Root, session_id: &str, opts: &LoadOptions) -> Result<(State, LoadInfo)> {
    load_paths(&root.existing_session(session_id)?, opts)
}

/// [`load_state`] for known paths.
pub fn load_paths(paths: &SessionPaths, opts: &LoadOptions) -> Result<(State, LoadInfo)> {
    let reader = JournalReader::open(&paths.journal, opts.deadline)?;
    let (_, hlen, genesis) = reader.header().map_err(|e| Error::BadHeader {
        path: paths.journal.clone(),
        reason: e.to_string(),
    })?;
    let journal = reader.bytes();
    let mut info = LoadInfo::default();
    let mut state = State::new();
    let mut start = hlen;
    let mut chain = Chain::genesis(genesis);
    if opts.use_snapshot {
        let loaded = read_snapshot(&paths.snapshot)
            .and_then(|b| b.map(|b| check(&b, journal, hlen)).transpose());
        match loaded {
            Ok(None) => {}
            Ok(Some((_, h))) if opts.at.is_some_and(|at| at < h.seq) => {
                info.snapshot = SnapshotUse::PastTarget { seq: h.seq };
            }
            Ok(Some((s, h))) => {
                state = s;
                start = h.end_offset as usize;
                chain = Chain {
                    next_seq: h.seq + 1,
                    prev_hash: h.chain_hash,
                };
                info.head = Some(Head {
                    seq: h.seq,
                    frame_offset: h.frame_offset,
                    end_offset: h.end_offset,
                    hash: h.chain_hash,
                });
                info.snapshot = SnapshotUse::Used { seq: h.seq };
            }
            Err(r) => {
                info.warnings.push(format!(
                    "snapshot {} ignored: {r}; replaying the journal in full",
                    paths.snapshot.display()
                ));
                info.snapshot = SnapshotUse::Rejected { reason: r.0 };
            }
        }
    }
    // Every frame's length, CRC and seq are checked, and the first record's link to the
    // snapshot's record (or the header); not every link, which is `verify`'s job (see
    // "Loading a state" in journal-format.md). The last record folded is hashed at the end.
    let records = reader.records_from(start, chain).first_link_only();
    // A long tail (a cold load of a large journal) is read and decoded on a second thread
    // while this one folds, where a core is likely free (see `tail`); the state is the same
    // either way.
    let two_threads =
        journal.len().saturating_sub(start) >= tail::TWO_THREADS_MIN_BYTES && tail::spare_core();
    let folded = tail::fold(records, opts.at, &mut state, two_threads);
    info.tail_records += folded.records;
    let last = folded.last;
    if let Some(stop) = folded.stop {
        let msg = format!(
            "journal {} stops at offset {}: {}; the state covers the records before it \
             (run `sjournal verify`)",
            paths.journal.display(),
            stop.offset,
            stop.problem
        );
        // An incomplete last record may be another writer's append in flight.
        let in_flight = matches!(
            stop.problem,
            Problem::Frame(record::FrameError::Incomplete { .. })
        );
        if !in_flight {
            info.warnings.push(msg.clone());
        }
        info.stopped = Some(msg);
    }
    if let Some(rec) = last {
        info.head = Some(Head {
            seq: rec.seq,
            frame_offset: rec.offset,
            end_offset: rec.offset + rec.len() as u64,
            hash: rec.frame.hash(),
        });
    }
    Ok((state, info))
}

/// Writes a snapshot of `state` if at least `every` records were folded since the snapshot it
/// was loaded from (`info`), or if the snapshot there was rejected (so that a bad file is
/// replaced at once instead of warned about on every load). The hook calls this after
/// answering; any valid snapshot will do, so concurrent writers need no lock (the rename is
/// atomic).
pub fn maybe_snapshot(
    paths: &SessionPaths,
    state: &State,
    info: &LoadInfo,
    every: u64,
) -> Result<Option<Written>> {
    let Some(head) = info.head else {
        return Ok(None);
    };
    let rejected = matches!(info.snapshot, SnapshotUse::Rejected { .. });
    let due = state.seq.saturating_sub(info.snapshot_seq()) >= every.max(1);
    if head.seq != state.seq || !(due || rejected) {
        return Ok(None);
    }
    super::write(paths, state, &head).map(Some)
}
