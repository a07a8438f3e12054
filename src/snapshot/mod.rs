//! Snapshots of the folded state, and loading a session's state from a snapshot plus the
//! journal's tail.
//!
//! A snapshot is written atomically: a temporary file in the same directory (created 0600,
//! exclusively, so never through a link), synced, renamed over `<stem>.snap`, and the directory
//! synced. Its header (see `header`) ties it to the journal: the seq it covers, the offset
//! and chain hash of that record, the state hash and a hash of the body.
//!
//! Loading trusts a snapshot only if all of it checks out: magic, header CRC, format and fold
//! versions, body length and hash, state hash, and the journal still holding, at the recorded
//! offset, a valid record with that seq and that chain hash. Anything else discards it with a
//! warning (in [`LoadInfo`]; the library prints nothing) and the journal is replayed from the
//! start. A snapshot only saves time: deleting one never changes a state.

mod load;
mod tail;

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

pub use crate::format::snapshot::{SnapshotHeader, FORMAT_VERSION, HEADER_LEN};
pub(crate) use load::{check_with, read_snapshot};
pub use load::{load_paths, load_state, maybe_snapshot, LoadInfo, LoadOptions, SnapshotUse};

use crate::error::{Error, Result};
use crate::fold::{hash_encoded, State, FOLD_VERSION};
use crate::format::hash::content_hash;
use crate::format::Hash;
use crate::journal::paths::{self, SessionPaths};
use crate::journal::reader::Records;
use crate::storage::{Fs, RealFs};

/// The journal position a state corresponds to: its last record.
/// Folds `records` into `state` as a load folds its tail, on one thread or on two (a reader
/// thread decoding ahead); returns how many were folded. `load_paths` chooses the threads by
/// the tail's length and the cores; this is for benches that time either way on the same
/// journal.
pub fn fold_records(records: Records<'_>, state: &mut State, two_threads: bool) -> u64 {
    tail::fold(records, None, state, two_threads).records
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub seq: u64,
    pub frame_offset: u64,
    pub end_offset: u64,
    pub hash: Hash,
}

/// A snapshot that was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub seq: u64,
    pub state_hash: Hash,
    pub bytes: u64,
}

/// Encodes a snapshot file of `state`, which must be the fold of the journal up to `head`.
///
/// # Panics
///
/// If `state.seq != head.seq`: the state does not end where the header would say.
pub fn encode(state: &State, head: &Head) -> Vec<u8> {
    assert_eq!(
        state.seq, head.seq,
        "a snapshot's state must end at its head"
    );
    let body = state.encode();
    let h = SnapshotHeader {
        format_version: FORMAT_VERSION,
        fold_version: FOLD_VERSION,
        seq: head.seq,
        frame_offset: head.frame_offset,
        end_offset: head.end_offset,
        chain_hash: head.hash,
        state_hash: hash_encoded(&body),
        body_blake3: content_hash(&body),
        body_len: body.len() as u64,
    };
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&h.encode());
    out.extend_from_slice(&body);
    out
}

/// Writes `state` (the fold of the journal up to `head`) as the session's snapshot,
/// atomically, replacing any earlier one. Panics as [`encode`] does.
pub fn write(paths: &SessionPaths, state: &State, head: &Head) -> Result<Written> {
    write_with(&RealFs, paths, state, head)
}

/// [`write()`] through `fs`.
pub fn write_with(
    fs: &dyn Fs,
    paths: &SessionPaths,
    state: &State,
    head: &Head,
) -> Result<Written> {
    let bytes = encode(state, head);
    write_file(fs, &paths.dir, &paths.snapshot, &bytes)?;
    let h = SnapshotHeader::decode(&bytes).expect("just encoded");
    Ok(Written {
        seq: h.seq,
        state_hash: h.state_hash,
        bytes: bytes.len() as u64,
    })
}

/// The lock a detached rebuild of a session's snapshot holds while it runs (`sjournal
/// snapshot --detached`, started by a hook whose fold outlasted its deadline), so that at most
/// one runs per session: `<stem>.snap.lock`.
pub(crate) fn rebuild_lock_path(paths: &SessionPaths) -> std::path::PathBuf {
    paths.snapshot.with_extension("snap.lock")
}

/// True if no rebuild of the session's snapshot runs now. Holds the lock only for the instant
/// of the check, never waits.
pub fn rebuild_lock_free(paths: &SessionPaths) -> Result<bool> {
    let path = rebuild_lock_path(paths);
    let f = paths::open_file(&path, true, true)?;
    match f.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", &path, e)),
    }
}

/// Takes the session's rebuild lock, waiting at most `wait` (a hook's probe holds it for an
/// instant; a rebuild for as long as it runs). None: another rebuild holds it.
pub fn rebuild_lock(
    paths: &SessionPaths,
    wait: std::time::Duration,
) -> Result<Option<std::fs::File>> {
    let path = rebuild_lock_path(paths);
    let f = paths::open_file(&path, true, true)?;
    let until = std::time::Instant::now() + wait;
    match crate::storage::lock::lock(
        &f,
        &path,
        crate::storage::lock::Mode::Exclusive,
        Some(until),
    ) {
        Ok(()) => Ok(Some(f)),
        Err(Error::LockTimeout { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

static TMP_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Atomic replace: temp file in `dir` (0600, O_EXCL, named after this process so concurrent
/// writers never share one), write, fsync, rename over `dest` (rename(2) replaces the entry
/// itself; a symlink there is replaced, not followed), fsync `dir`.
pub(crate) fn write_file(fs: &dyn Fs, dir: &Path, dest: &Path, bytes: &[u8]) -> Result<()> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
    let _ = fs.remove_file(&tmp);
    let written = fs
        .write_new(&tmp, bytes)
        .and_then(|()| fs.rename(&tmp, dest));
    if let Err(e) = written {
        let _ = fs.remove_file(&tmp);
        return Err(Error::io("write snapshot", dest, e));
    }
    paths::sync_dir_with(fs, dir)
}
