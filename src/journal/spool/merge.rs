//! Merging spooled events into the journal, and settling a merge a crash interrupted. Runs
//! with the session's lock held, after recovery and before anything else is appended (it is
//! driven by `Session::open`), for main journals only.
//!
//! The pending files of the root's spool and of the fallback spool are merged together in
//! spool order, in batches: `merge.intent` (the journal offset and seq where the batch will
//! begin) is written first; then one append of a `sjournal.spool-merge` record listing the
//! files (name, spool time, reason, blake3 of each record, whether it waited in the fallback)
//! followed by their records; then the files are deleted and the directories synced; then the
//! intent is deleted. An intent found on open means a merge stopped somewhere between those
//! steps: the batch is one write, so what reached the journal is a prefix of it, checked
//! record by record against the merge record; files whose records are there are deleted, the
//! others merged again. Nothing is lost and nothing is merged twice. The table of crash
//! points is in the module docs of `journal::spool`.
//!
//! Only the user's own files are merged (`super::read_spool`): one that is untrusted (not a
//! regular file, another user's, or a fallback file the root's key does not authenticate)
//! is renamed `<name>.untrusted`, kept, reported, and never merged.

use std::io::ErrorKind;
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::payload::{self, SpoolMerge, SpoolMergeEntry, KIND_SPOOL_MERGE};
use crate::format::record;
use crate::format::spool::{self as format, Intent, SpoolFile, SpoolRecord};
use crate::journal::paths::{self, Root};
use crate::journal::scan;
use crate::journal::writer::{now_unix_ns, Writer};
use crate::limits::{BATCH_MAX_BYTES, SPOOL_MERGE_MAX_FILES};
use crate::storage::{self, Owner};

use super::{
    list_all, read_spool, Found, Keys, SpoolDir, DAMAGED_EXT, INTENT, TMP_PREFIX, UNTRUSTED_EXT,
};

/// What a merge did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Spool files merged into the journal.
    pub merged: Vec<String>,
    /// Of those, the ones that waited in the fallback spool.
    pub merged_fallback: usize,
    /// Records appended for them.
    pub merged_records: u64,
    /// Spool files an interrupted merge (or a failed append that reached the journal after
    /// all) had already put in the journal; deleted, not merged again.
    pub settled: Vec<String>,
    /// Spool files found damaged and set aside (`.damaged`).
    pub damaged: Vec<String>,
    /// Spool files refused as not the user's own (see `spool::refused`): not merged; set
    /// aside as `.untrusted` where they could be renamed, except fallback files that could
    /// not be checked because the root's key is unusable (left where they are).
    pub untrusted: Vec<String>,
    /// Of those, the ones this merge set aside (first seen now: the hook tells the user once).
    pub set_aside_untrusted: usize,
    /// Spool files left for later because this merge was bounded (`budget`).
    pub backlog: usize,
    /// Problems that did not stop the merge (a spool file that could not be deleted...).
    pub warnings: Vec<String>,
}

impl MergeReport {
    fn touched(&self) -> usize {
        self.merged.len() + self.settled.len() + self.damaged.len() + self.untrusted.len()
    }
}

/// Settles an interrupted merge, then merges what is pending in `dirs` (the root's spool
/// directory first, then the fallback ones), at most `budget` files (None: all of them).
/// `root` is the writer's (its key authenticates fallback files).
pub fn merge_pending(
    w: &mut Writer,
    root: &Root,
    dirs: &[SpoolDir],
    budget: Option<usize>,
) -> Result<MergeReport> {
    let mut report = MergeReport::default();
    let mut keys = Keys::new(root);
    // Files refused in this merge that could not be set aside: not listed again.
    let mut refused: std::collections::HashSet<std::path::PathBuf> = Default::default();
    let primary = &dirs[0].path;
    let primary_exists = match std::fs::symlink_metadata(primary) {
        Err(e) if e.kind() == ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io("inspect", primary, e)),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(Error::Symlink {
                path: primary.clone(),
            })
        }
        Ok(m) if !m.is_dir() => {
            return Err(Error::WrongFileType {
                path: primary.clone(),
                expected: "directory",
            })
        }
        Ok(_) => true,
    };
    if primary_exists && !settle_intent(w, dirs, &mut report)? {
        return Ok(report);
    }
    loop {
        let mut pending = list_all(dirs)?;
        pending.retain(|(name, dir)| !refused.contains(&dir.path.join(name)));
        if pending.is_empty() {
            return Ok(report);
        }
        let left = budget.map_or(usize::MAX, |b| b.saturating_sub(report.touched()));
        if left == 0 {
            report.backlog = pending.len();
            return Ok(report);
        }
        let take = left.min(SPOOL_MERGE_MAX_FILES);
        let more = pending.len() > take;
        let mut merge = SpoolMerge::default();
        let mut records: Vec<SpoolRecord> = Vec::new();
        let mut merged_dirs: Vec<&SpoolDir> = Vec::new();
        let mut bytes = 0u64;
        let mut seq = w.next_seq() + 1;
        let mut batch_full = false;
        for (name, dir) in pending.into_iter().take(take) {
            let path = dir.path.join(&name);
            let id = w.session_paths().session_id.clone();
            let file = match read_spool(&path, dir.fallback, Some(&id), &mut keys) {
                Found::Trusted(f) => f,
                Found::Damaged(why) => {
                    set_aside(w, &path, &name, &why, &mut merge, &mut report);
                    continue;
                }
                Found::Untrusted(why) => {
                    set_aside_untrusted(w, &path, &name, &why, &mut report);
                    refused.insert(path);
                    continue;
                }
                Found::Unverifiable(why) => {
                    report.warnings.push(format!(
                        "spool file {} was not merged: {why}; it is kept where it is",
                        path.display()
                    ));
                    report.untrusted.push(name);
                    refused.insert(path);
                    continue;
                }
            };
            if already_written(w, &file) {
                // Its failed append reached the journal after all: not merged again. Synced
                // first: the bytes read back may still be only in the page cache.
                w.sync_written()?;
                if remove_and_sync(w, &dir.path, std::slice::from_ref(&name), &mut report) {
                    report.settled.push(name);
                    continue;
                }
                return Ok(report);
            }
            let size: u64 = file
                .records
                .iter()
                .map(|r| {
                    (record::frame_len(&r.kind, r.payload.len()) + format::FIXUP_SLACK_BYTES) as u64
                })
                .sum();
            // The merge record itself needs room too; a few hundred bytes per entry.
            if bytes + size + 512 * (merge.entries.len() as u64 + 1) > BATCH_MAX_BYTES {
                batch_full = true;
                break;
            }
            bytes += size;
            let SpoolFile {
                spooled_at_ns,
                pid,
                reason,
                records: mut recs,
                ..
            } = file;
            format::fix_event_seqs(&mut recs, seq);
            seq += recs.len() as u64;
            merge.entries.push(SpoolMergeEntry {
                file: name,
                spooled_at_ns,
                pid,
                reason,
                records: recs
                    .iter()
                    .map(|r| format::record_digest(&r.kind, &r.payload))
                    .collect(),
                fallback: dir.fallback,
            });
            merged_dirs.push(dir);
            records.extend(recs);
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
        // The intent lives in the root's spool directory, which fallback files may not have
        // needed yet.
        paths::ensure_dir_with(w.fs(), primary, false)?;
        let intent = Intent {
            offset: w.len(),
            seq: w.next_seq(),
        };
        write_intent(w, primary, &intent)?;
        let head = payload::encode_system(&merge);
        let mut items: Vec<(&str, &[u8])> = Vec::with_capacity(records.len() + 1);
        items.push((KIND_SPOOL_MERGE, &head));
        items.extend(
            records
                .iter()
                .map(|r| (r.kind.as_str(), r.payload.as_slice())),
        );
        // Stamped now, but for records that carry their own time (an import's).
        let now = now_unix_ns();
        let ts = |i: usize| match i {
            0 => now,
            i => records[i - 1].ts_unix_ns.unwrap_or(now),
        };
        w.append_batch_timed(ts, &items)?;
        report.merged_records += records.len() as u64;
        let mut done = true;
        for dir in dirs {
            // One directory sync per directory, however many files it gave.
            let names: Vec<String> = merge
                .entries
                .iter()
                .zip(&merged_dirs)
                .filter(|(_, d)| d.path == dir.path)
                .map(|(e, _)| e.file.clone())
                .collect();
            if !names.is_empty() {
                done = done && remove_and_sync(w, &dir.path, &names, &mut report);
            }
        }
        for (entry, dir) in merge.entries.iter().zip(&merged_dirs) {
            report.merged.push(entry.file.clone());
            report.merged_fallback += dir.fallback as usize;
        }
        if !done || !remove_and_sync(w, primary, &[INTENT.to_owned()], &mut report) {
            return Ok(report);
        }
        if !(more || batch_full) {
            return Ok(report);
        }
    }
}

/// True if the journal holds, where the file's failed append wrote it, its first record.
fn already_written(w: &Writer, file: &SpoolFile) -> bool {
    let (Some(at), Some(first)) = (file.attempted, file.records.first()) else {
        return false;
    };
    let Some(b) = w.read_frame_at(at.offset) else {
        return false;
    };
    scan::frame(&b).is_ok_and(|f| {
        f.seq == at.seq
            && f.kind == first.kind
            && format::record_digest(f.kind, f.payload)
                == format::record_digest(&first.kind, &first.payload)
    })
}

/// Renames a damaged spool file to `<name>.damaged` (kept, never deleted).
fn set_aside(
    w: &Writer,
    path: &Path,
    name: &str,
    why: &str,
    merge: &mut SpoolMerge,
    report: &mut MergeReport,
) {
    let to = path.with_file_name(format!("{name}.{DAMAGED_EXT}"));
    match w.fs().rename(path, &to) {
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

/// Renames an untrusted spool file to `<name>.untrusted` (kept, never merged or deleted).
fn set_aside_untrusted(w: &Writer, path: &Path, name: &str, why: &str, report: &mut MergeReport) {
    let to = path.with_file_name(format!("{name}.{UNTRUSTED_EXT}"));
    // Never over an existing file: a link, then the old name removed; where the system
    // refuses to link another user's file, a rename once the name is known to be free. A
    // FIFO or another user's file is moved aside without being opened.
    // Only in a directory of this user's: a reader of another user's root (an auditor) moves
    // nothing there.
    let mine = path
        .parent()
        .and_then(|d| std::fs::symlink_metadata(d).ok())
        .is_some_and(|m| {
            std::os::unix::fs::MetadataExt::uid(&m) == rustix::process::geteuid().as_raw()
        });
    if !mine {
        report.untrusted.push(name.to_owned());
        report.warnings.push(format!(
            "spool file {} was not merged: {why}; it is left where it is (the directory is \
             not this user's)",
            path.display()
        ));
        return;
    }
    let kept = match w.fs().hard_link(path, &to) {
        Ok(()) => w.fs().remove_file(path).map(|()| to.clone()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(e),
        Err(_) => match std::fs::symlink_metadata(&to) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                w.fs().rename(path, &to).map(|()| to.clone())
            }
            Ok(_) => Err(std::io::Error::from(ErrorKind::AlreadyExists)),
            Err(e) => Err(e),
        },
    };
    let advice = "`sjournal flush --all` and `sjournal verify --all` list it with what to do";
    report.untrusted.push(name.to_owned());
    report.set_aside_untrusted += usize::from(kept.is_ok());
    report.warnings.push(match kept {
        Ok(to) => format!(
            "spool file {} was not merged: {why}; kept as {} ({advice})",
            path.display(),
            to.display()
        ),
        Err(e) => format!(
            "spool file {} was not merged: {why}; it could not be set aside ({e}) and is \
             left where it is ({advice})",
            path.display()
        ),
    });
}

/// Deletes files of `dir` (missing ones are fine) and syncs it. False (with a warning) if
/// that failed: the caller must then leave the intent in place.
fn remove_and_sync(w: &Writer, dir: &Path, names: &[String], report: &mut MergeReport) -> bool {
    for n in names {
        let p = dir.join(n);
        match w.fs().remove_file(&p) {
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
    if let Err(e) = paths::sync_dir_with(w.fs(), dir) {
        report
            .warnings
            .push(format!("{e}; will retry on the next open"));
        return false;
    }
    true
}

fn write_intent(w: &Writer, dir: &Path, intent: &Intent) -> Result<()> {
    let frame = format::encode_intent(intent, now_unix_ns());
    let tmp = dir.join(format!("{TMP_PREFIX}{INTENT}"));
    let dest = dir.join(INTENT);
    let fs = w.fs();
    let _ = fs.remove_file(&tmp);
    fs.write_new(&tmp, &frame)
        .map_err(|e| Error::io("write", &tmp, e))?;
    fs.rename(&tmp, &dest)
        .map_err(|e| Error::io("rename", &dest, e))?;
    paths::sync_dir_with(fs, dir)
}

/// Settles what an interrupted merge left. Returns false if the spool must not be merged
/// now (a file that was merged could not be deleted; retried on the next open).
fn settle_intent(w: &mut Writer, dirs: &[SpoolDir], report: &mut MergeReport) -> Result<bool> {
    let primary = &dirs[0].path;
    let path = primary.join(INTENT);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(true);
    }
    let intent = storage::read_regular(&path, Owner::Me, 4096)
        .map_err(|e| e.to_string())
        .and_then(|b| format::decode_intent(&b));
    let intent = match intent {
        Ok(i) => i,
        Err(why) => {
            // Cannot happen short of disk damage (the intent is renamed into place whole).
            // Which files the interrupted merge wrote is unknown; merging them again may
            // repeat them, and the second merge record, listing the same files, shows it.
            let to = primary.join(format!("{INTENT}.{}.{DAMAGED_EXT}", now_unix_ns()));
            w.fs()
                .rename(&path, &to)
                .map_err(|e| Error::io("rename", &path, e))?;
            report.warnings.push(format!(
                "the spool's merge intent was damaged ({why}); kept as {}; its files will be merged again",
                to.display()
            ));
            return Ok(true);
        }
    };
    let merged = merged_by(w, &intent);
    if !merged.is_empty() {
        // The interrupted merge may have died between its write and its sync: make what it
        // wrote durable before its spool files go.
        w.sync_written()?;
    }
    for (entry, whole) in &merged {
        if !whole {
            report.warnings.push(format!(
                "spool file {} was merged only in part before a crash (its event is in the journal, \
                 the records after it were cut as a torn tail)",
                entry.file
            ));
        }
        // A fallback file may sit under any of the fallback bases.
        for dir in dirs.iter().filter(|d| d.fallback == entry.fallback) {
            if !remove_and_sync(w, &dir.path, std::slice::from_ref(&entry.file), report) {
                return Ok(false);
            }
        }
        report.settled.push(entry.file.clone());
    }
    Ok(remove_and_sync(w, primary, &[INTENT.to_owned()], report))
}

/// The entries (with "all of its records") whose records the merge batch at the intent put
/// in the journal: a prefix of the batch, checked record by record.
fn merged_by(w: &Writer, intent: &Intent) -> Vec<(SpoolMergeEntry, bool)> {
    let mut out = Vec::new();
    let Some(head) = w.read_frame_at(intent.offset) else {
        return out;
    };
    let Ok(f) = scan::frame(&head) else {
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
            let Ok(r) = scan::frame(&b) else { break };
            if r.seq != seq || format::record_digest(r.kind, r.payload) != *digest {
                break;
            }
            present += 1;
            offset += b.len() as u64;
            seq += 1;
        }
        let whole = present == entry.records.len();
        if present > 0 {
            out.push((entry, whole));
        }
        if !whole {
            break;
        }
    }
    out
}
