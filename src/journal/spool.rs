//! The spool: where an event goes when the journal cannot take it now (its lock is held past
//! the hook's deadline, the disk refused the write), so that it is still not lost; and the
//! merge that moves spooled events into the journal, in order, the next time a writer opens it.
//!
//! The design, and what each crash between its steps leaves behind, is in "The spool" in `journal-format.md`.
//! In short:
//!
//! - A spool file is `sessions/<stem>.spool/<ts_ns>-<pid>-<counter>.spool`: one record frame
//!   (the journal's own framing, so its length and CRC are checked) of kind
//!   `sjournal.spool-entry` holding a [`SpoolFile`]. It is written under a temporary name
//!   (`O_EXCL`, 0600), synced, hard-linked to its final name (which never replaces a file) and
//!   the directory synced: a file under a final name is always complete.
//! - Every [`Writer::open`](crate::journal::Writer::open) of a main journal, holding the
//!   session's lock, first settles an interrupted merge (the intent file, below), then merges
//!   the pending files in name order in one batch: a `sjournal.spool-merge` record listing
//!   them (file name, spool time, reason, blake3 of each record), then their records. Before
//!   the batch it writes `merge.intent` (the journal offset and seq where the batch begins);
//!   after the batch is synced it deletes the spool files, syncs the directory, and deletes
//!   the intent.
//! - An intent found on open means the last merge may have stopped anywhere. The batch is one
//!   write, so what survived of it is a prefix: the writer reads the records at the intent's
//!   offset, checks each against the hashes the merge record lists, deletes the spool files
//!   whose records are there and merges the others again. Nothing is lost, and nothing is
//!   merged twice.

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::hash::content_hash;
use crate::format::payload::{
    self, Exec, SpoolMerge, SpoolMergeEntry, KIND_EXEC, KIND_SPOOL_MERGE,
};
use crate::format::record::{self, valid_kind};
use crate::format::Hash;
use crate::journal::paths::{self, Root, SessionPaths};
use crate::journal::writer::{now_unix_ns, Writer};
use crate::limits::{BATCH_MAX_BYTES, FRAME_MAX_BYTES, SPOOL_MERGE_MAX_FILES};
use crate::storage::Storage;

/// Kind of the one frame in a spool file.
pub const ENTRY_KIND: &str = "sjournal.spool-entry";
const INTENT_KIND: &str = "sjournal.spool-intent";
const EXT: &str = "spool";
const INTENT: &str = "merge.intent";
const TMP_PREFIX: &str = ".tmp-";
const DAMAGED_EXT: &str = "damaged";
/// Room left in a frame for what the merge may add to a record (an exec record's event seq).
const FIXUP_SLACK_BYTES: usize = 64;

/// What a spool file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpoolFile {
    /// The session the records belong to (a spool directory holds one session's files).
    pub session_id: String,
    pub spooled_at_ns: i64,
    pub pid: u32,
    pub reason: String,
    /// The records to append, in order: an event first, then what belongs with it.
    pub records: Vec<SpoolRecord>,
    /// Set when a write of these records to the journal was attempted and failed after it
    /// may have reached the file (a failed fsync): where it was written. The merge skips the
    /// file if the journal holds its first record there.
    #[serde(default)]
    pub attempted: Option<Attempted>,
}

/// Where a failed journal append put (or may have put) its first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempted {
    pub offset: u64,
    pub seq: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpoolRecord {
    pub kind: String,
    #[serde(with = "serde_bytes")]
    pub payload: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Intent {
    /// Journal offset where the merge batch begins (its `sjournal.spool-merge` record).
    offset: u64,
    /// Seq of that record.
    seq: u64,
}

/// How [`Writer::open_with_spool`] treats the spool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeMode {
    Merge,
    /// Merge, but stop right after `step` as if the process had died there (crash tests).
    CrashAfter(MergeStep),
}

/// The steps of a merge after which a crash leaves a distinct state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeStep {
    IntentWritten,
    JournalSynced,
    SpoolDeleted,
}

/// What a writer's open did with the spool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Spool files merged into the journal by this open.
    pub merged: Vec<String>,
    /// Records appended for them.
    pub merged_records: u64,
    /// Spool files an interrupted merge had already put in the journal; deleted, not merged
    /// again.
    pub settled: Vec<String>,
    /// Spool files found damaged and set aside (`.damaged`).
    pub damaged: Vec<String>,
    /// Problems that did not stop the writer (a spool file that could not be deleted...).
    pub warnings: Vec<String>,
    /// The merge stopped at a simulated crash point.
    pub crashed: bool,
}

/// The spool directory of a session.
pub fn spool_dir(paths: &SessionPaths) -> PathBuf {
    paths.dir.join(format!("{}.{EXT}", paths.stem))
}

/// Spool files waiting to be merged, oldest first.
pub fn pending(root: &Root, session_id: &str) -> Result<Vec<PathBuf>> {
    let dir = spool_dir(&root.session(session_id)?);
    Ok(list_pending(&dir)?
        .into_iter()
        .map(|n| dir.join(n))
        .collect())
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Writes records to the session's spool, durably (file and directory synced) and without
/// taking the session's lock. Returns the spool file's path.
pub fn spool(
    root: &Root,
    session_id: &str,
    records: &[(&str, &[u8])],
    reason: &str,
) -> Result<PathBuf> {
    spool_attempted(root, session_id, records, reason, None)
}

/// Like [`spool`], for records whose journal append failed after `attempted` (see
/// [`SpoolFile::attempted`]).
pub fn spool_attempted(
    root: &Root,
    session_id: &str,
    records: &[(&str, &[u8])],
    reason: &str,
    attempted: Option<Attempted>,
) -> Result<PathBuf> {
    for (kind, p) in records {
        if !valid_kind(kind) {
            return Err(Error::InvalidKind {
                kind: kind.to_string(),
            });
        }
        let len = record::frame_len(kind, p.len()) + FIXUP_SLACK_BYTES;
        if len > FRAME_MAX_BYTES as usize {
            return Err(Error::TooLarge {
                len: len as u64,
                max: FRAME_MAX_BYTES as u64,
            });
        }
    }
    let ts = now_unix_ns();
    let pid = std::process::id();
    let file = SpoolFile {
        session_id: session_id.to_owned(),
        spooled_at_ns: ts,
        pid,
        reason: reason.to_owned(),
        records: records
            .iter()
            .map(|(k, p)| SpoolRecord {
                kind: k.to_string(),
                payload: p.to_vec(),
            })
            .collect(),
        attempted,
    };
    let body = payload::encode_system(&file);
    let len = record::frame_len(ENTRY_KIND, body.len());
    if len > FRAME_MAX_BYTES as usize {
        return Err(Error::TooLarge {
            len: len as u64,
            max: FRAME_MAX_BYTES as u64,
        });
    }
    let mut frame = Vec::with_capacity(len);
    record::encode(&mut frame, 0, ts, ENTRY_KIND, &Hash::ZERO, &body);

    root.ensure()?;
    let dir = spool_dir(&root.session(session_id)?);
    paths::ensure_dir(&dir, false)?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = format!("{:020}-{pid:010}-{n:010}.{EXT}", ts.max(0));
    let tmp = dir.join(format!("{TMP_PREFIX}{name}"));
    let dest = dir.join(&name);
    let written = (|| {
        let mut f = paths::create_new(&tmp)?;
        f.write_all(&frame)
            .map_err(|e| Error::io("write", &tmp, e))?;
        f.sync_data().map_err(|e| Error::io("fsync", &tmp, e))?;
        // A link never replaces an existing name, unlike rename.
        std::fs::hard_link(&tmp, &dest).map_err(|e| Error::io("link", &dest, e))
    })();
    let _ = std::fs::remove_file(&tmp);
    written?;
    paths::sync_dir(&dir)?;
    Ok(dest)
}

/// Names of the spool files waiting in `dir`, sorted (oldest first).
fn list_pending(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read directory", dir, e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read directory", dir, e))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !name.starts_with('.') && name.ends_with(&format!(".{EXT}")) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Reads a whole small file, refusing links and anything larger than a frame.
fn read_file(path: &Path) -> Result<Vec<u8>> {
    let f = paths::open_file(path, false, false)?;
    let mut buf = Vec::new();
    f.take(FRAME_MAX_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", path, e))?;
    Ok(buf)
}

/// Parses a file that must hold exactly one frame of `kind`; returns its payload.
fn parse_single_frame<'a>(bytes: &'a [u8], kind: &str) -> std::result::Result<&'a [u8], String> {
    let f = record::parse(bytes).map_err(|e| e.to_string())?;
    if f.len() != bytes.len() {
        return Err(format!("{} bytes follow the record", bytes.len() - f.len()));
    }
    if f.kind != kind {
        return Err(format!("record kind {:?}, expected {kind:?}", f.kind));
    }
    Ok(f.payload)
}

/// Reads and checks one spool file.
fn read_entry(path: &Path, session_id: &str) -> std::result::Result<SpoolFile, String> {
    let bytes = read_file(path).map_err(|e| e.to_string())?;
    let body = parse_single_frame(&bytes, ENTRY_KIND)?;
    let file: SpoolFile = payload::decode_system(0, body).map_err(|e| e.to_string())?;
    if file.session_id != session_id {
        return Err(format!(
            "it belongs to session {:?}, not {session_id:?}",
            file.session_id
        ));
    }
    if file.records.is_empty() {
        return Err("it holds no record".into());
    }
    for r in &file.records {
        if !valid_kind(&r.kind)
            || record::frame_len(&r.kind, r.payload.len()) + FIXUP_SLACK_BYTES
                > FRAME_MAX_BYTES as usize
        {
            return Err(format!("invalid record kind {:?} or size", r.kind));
        }
    }
    Ok(file)
}

/// The digest a merge record lists for each merged record.
pub fn record_digest(kind: &str, payload: &[u8]) -> String {
    let mut b = Vec::with_capacity(kind.len() + 1 + payload.len());
    b.extend_from_slice(kind.as_bytes());
    b.push(0);
    b.extend_from_slice(payload);
    content_hash(&b).to_hex()
}

/// Settles an interrupted merge, then merges what is pending. Called by the writer's open
/// with the session's lock held, for main journals only.
pub(crate) fn merge_pending<S: Storage>(w: &mut Writer<S>, mode: MergeMode) -> Result<MergeReport> {
    let mut report = MergeReport::default();
    let dir = spool_dir(w.session_paths());
    match std::fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(report),
        Err(e) => return Err(Error::io("inspect", &dir, e)),
        Ok(m) if m.file_type().is_symlink() => return Err(Error::Symlink { path: dir }),
        Ok(m) if !m.is_dir() => {
            return Err(Error::WrongFileType {
                path: dir,
                expected: "directory",
            })
        }
        Ok(_) => {}
    }
    if !settle_intent(w, &dir, &mut report)? {
        return Ok(report);
    }
    loop {
        let names = list_pending(&dir)?;
        if names.is_empty() {
            return Ok(report);
        }
        let more = names.len() > SPOOL_MERGE_MAX_FILES;
        let mut merge = SpoolMerge::default();
        let mut records: Vec<SpoolRecord> = Vec::new();
        let mut bytes = 0u64;
        let mut seq = w.next_seq() + 1;
        let mut batch_full = false;
        for name in names.into_iter().take(SPOOL_MERGE_MAX_FILES) {
            let path = dir.join(&name);
            let file = match read_entry(&path, &w.session_paths().session_id) {
                Ok(f) => f,
                Err(why) => {
                    set_aside(&path, &name, &why, &mut merge, &mut report);
                    continue;
                }
            };
            if already_written(w, &file) {
                // Its failed append reached the journal after all: not merged again. Synced
                // first: the bytes read back may still be only in the page cache.
                w.sync_written()?;
                if remove_and_sync(&dir, std::slice::from_ref(&name), &mut report) {
                    report.settled.push(name);
                    continue;
                }
                return Ok(report);
            }
            let size: u64 = file
                .records
                .iter()
                .map(|r| (record::frame_len(&r.kind, r.payload.len()) + FIXUP_SLACK_BYTES) as u64)
                .sum();
            // The merge record itself needs room too; a few hundred bytes per entry.
            if bytes + size + 512 * (merge.entries.len() as u64 + 1) > BATCH_MAX_BYTES {
                batch_full = true;
                break;
            }
            bytes += size;
            let event_seq = seq;
            let mut digests = Vec::with_capacity(file.records.len());
            for mut r in file.records {
                if r.kind == KIND_EXEC {
                    // Spooled before its event had a seq: it gets the seq its event gets now.
                    if let Ok(mut e) = payload::decode_system::<Exec>(0, &r.payload) {
                        e.event_seq = event_seq;
                        r.payload = payload::encode_system(&e);
                    }
                } else if r.kind == payload::KIND_HOST {
                    if let Ok(mut h) =
                        payload::decode_system::<payload::HostOverride>(0, &r.payload)
                    {
                        h.event_seq = event_seq;
                        r.payload = payload::encode_system(&h);
                    }
                }
                digests.push(record_digest(&r.kind, &r.payload));
                records.push(r);
                seq += 1;
            }
            merge.entries.push(SpoolMergeEntry {
                file: name,
                spooled_at_ns: file.spooled_at_ns,
                pid: file.pid,
                reason: file.reason,
                records: digests,
            });
        }
        if merge.entries.is_empty() {
            if !merge.damaged.is_empty() {
                // Nothing to merge, but the journal says which files were set aside.
                w.append(KIND_SPOOL_MERGE, &payload::encode_system(&merge))?;
            }
            if more || batch_full {
                continue;
            }
            return Ok(report);
        }
        let intent = Intent {
            offset: w.len(),
            seq: w.next_seq(),
        };
        write_intent(&dir, &intent)?;
        if mode == MergeMode::CrashAfter(MergeStep::IntentWritten) {
            report.crashed = true;
            return Ok(report);
        }
        let head = payload::encode_system(&merge);
        let mut items: Vec<(&str, &[u8])> = Vec::with_capacity(records.len() + 1);
        items.push((KIND_SPOOL_MERGE, &head));
        items.extend(
            records
                .iter()
                .map(|r| (r.kind.as_str(), r.payload.as_slice())),
        );
        w.append_batch(&items)?;
        report.merged_records += records.len() as u64;
        if mode == MergeMode::CrashAfter(MergeStep::JournalSynced) {
            report.crashed = true;
            return Ok(report);
        }
        let names: Vec<String> = merge.entries.into_iter().map(|e| e.file).collect();
        let done = remove_and_sync(&dir, &names, &mut report);
        report.merged.extend(names);
        if !done {
            return Ok(report);
        }
        if mode == MergeMode::CrashAfter(MergeStep::SpoolDeleted) {
            report.crashed = true;
            return Ok(report);
        }
        if !remove_and_sync(&dir, &[INTENT.to_owned()], &mut report) {
            return Ok(report);
        }
        if !(more || batch_full) {
            return Ok(report);
        }
    }
}

/// True if the journal holds, where the file's failed append wrote it, its first record.
fn already_written<S: Storage>(w: &Writer<S>, file: &SpoolFile) -> bool {
    let (Some(at), Some(first)) = (file.attempted, file.records.first()) else {
        return false;
    };
    let Some(b) = w.read_frame_at(at.offset) else {
        return false;
    };
    record::parse(&b).is_ok_and(|f| {
        f.seq == at.seq
            && f.kind == first.kind
            && record_digest(f.kind, f.payload) == record_digest(&first.kind, &first.payload)
    })
}

/// Renames a damaged spool file to `<name>.damaged` (kept, never deleted).
fn set_aside(path: &Path, name: &str, why: &str, merge: &mut SpoolMerge, report: &mut MergeReport) {
    let to = path.with_file_name(format!("{name}.{DAMAGED_EXT}"));
    match std::fs::rename(path, &to) {
        Ok(()) => {
            report.warnings.push(format!(
                "spool file {} is damaged ({why}); kept as {}",
                path.display(),
                to.display()
            ));
            merge.damaged.push(name.to_owned());
            report.damaged.push(name.to_owned());
        }
        Err(e) => report.warnings.push(format!(
            "spool file {} is damaged ({why}) and could not be set aside: {e}",
            path.display()
        )),
    }
}

/// Deletes files of `dir` (missing ones are fine) and syncs it. False (with a warning) if
/// that failed: the caller must then leave the intent in place.
fn remove_and_sync(dir: &Path, names: &[String], report: &mut MergeReport) -> bool {
    for n in names {
        let p = dir.join(n);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => {
                report.warnings.push(format!(
                    "could not delete {}: {e}; will retry on the next open",
                    p.display()
                ));
                return false;
            }
        }
    }
    if let Err(e) = paths::sync_dir(dir) {
        report
            .warnings
            .push(format!("{e}; will retry on the next open"));
        return false;
    }
    true
}

fn write_intent(dir: &Path, intent: &Intent) -> Result<()> {
    let body = payload::encode_system(intent);
    let mut frame = Vec::new();
    record::encode(
        &mut frame,
        0,
        now_unix_ns(),
        INTENT_KIND,
        &Hash::ZERO,
        &body,
    );
    let tmp = dir.join(format!("{TMP_PREFIX}{INTENT}"));
    let dest = dir.join(INTENT);
    let _ = std::fs::remove_file(&tmp);
    let mut f = paths::create_new(&tmp)?;
    f.write_all(&frame)
        .map_err(|e| Error::io("write", &tmp, e))?;
    f.sync_data().map_err(|e| Error::io("fsync", &tmp, e))?;
    std::fs::rename(&tmp, &dest).map_err(|e| Error::io("rename", &dest, e))?;
    paths::sync_dir(dir)
}

/// Settles what an interrupted merge left. Returns false if the spool must not be merged
/// now (a file that was merged could not be deleted; retried on the next open).
fn settle_intent<S: Storage>(
    w: &mut Writer<S>,
    dir: &Path,
    report: &mut MergeReport,
) -> Result<bool> {
    let path = dir.join(INTENT);
    let bytes = match read_file(&path) {
        Ok(b) => b,
        Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    let intent = parse_single_frame(&bytes, INTENT_KIND)
        .and_then(|p| payload::decode_system::<Intent>(0, p).map_err(|e| e.to_string()));
    let intent = match intent {
        Ok(i) => i,
        Err(why) => {
            // Cannot happen short of disk damage (the intent is renamed into place whole).
            // Which files the interrupted merge wrote is unknown; merging them again may
            // repeat them, and the second merge record, listing the same files, shows it.
            let to = dir.join(format!("{INTENT}.{}.{DAMAGED_EXT}", now_unix_ns()));
            std::fs::rename(&path, &to).map_err(|e| Error::io("rename", &path, e))?;
            report.warnings.push(format!(
                "the spool's merge intent was damaged ({why}); kept as {}; its files will be merged again",
                to.display()
            ));
            return Ok(true);
        }
    };
    let merged = merged_by(w, &intent);
    let names: Vec<String> = merged.iter().map(|(n, _)| n.clone()).collect();
    if !names.is_empty() {
        // The interrupted merge may have died between its write and its sync: make what it
        // wrote durable before its spool files go.
        w.sync_written()?;
    }
    for (name, whole) in &merged {
        if !whole {
            report.warnings.push(format!(
                "spool file {name} was merged only in part before a crash (its event is in the journal, \
                 the records after it were cut as a torn tail)"
            ));
        }
    }
    if !remove_and_sync(dir, &names, report) {
        return Ok(false);
    }
    report.settled.extend(names);
    Ok(remove_and_sync(dir, &[INTENT.to_owned()], report))
}

/// The spool files (with "all of its records") whose records the merge batch at the intent
/// put in the journal: a prefix of the batch, checked record by record.
fn merged_by<S: Storage>(w: &Writer<S>, intent: &Intent) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let Some(head) = w.read_frame_at(intent.offset) else {
        return out;
    };
    let Ok(f) = record::parse(&head) else {
        return out;
    };
    if f.seq != intent.seq || f.kind != KIND_SPOOL_MERGE {
        return out;
    }
    let Ok(merge) = payload::decode_system::<SpoolMerge>(f.seq, f.payload) else {
        return out;
    };
    let mut offset = intent.offset + head.len() as u64;
    let mut seq = intent.seq + 1;
    for entry in merge.entries {
        let mut present = 0;
        for digest in &entry.records {
            let Some(b) = w.read_frame_at(offset) else {
                break;
            };
            let Ok(r) = record::parse(&b) else { break };
            if r.seq != seq || record_digest(r.kind, r.payload) != *digest {
                break;
            }
            present += 1;
            offset += b.len() as u64;
            seq += 1;
        }
        let whole = present == entry.records.len();
        if present > 0 {
            out.push((entry.file, whole));
        }
        if !whole {
            break;
        }
    }
    out
}
