//! Writing spool files: durably, and without the session's lock (the whole point is that the
//! journal cannot be had now). A file is written under a temporary name (`O_EXCL`, 0600, never
//! through a link), synced, hard-linked to its final name (a link never replaces a file, unlike
//! `rename`), and the directory synced: a file under a final name is always complete, and
//! durable once this returns. A call that fails removes the files it wrote (best effort), so
//! the caller can keep the records somewhere else without keeping them twice.
//!
//! A file written to the fallback spool carries the MAC of its entry under the root's spool
//! key (format 2, see `format::spool` and [`super::key`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{Error, Result};
use crate::format::payload::is_system_kind;
use crate::format::record;
use crate::format::spool::{self as format, Attempted, SpoolFile, SpoolRecord};
use crate::journal::paths;
use crate::journal::writer::now_unix_ns;
use crate::limits::FRAME_MAX_BYTES;
use crate::storage::Fs;

use super::key::SpoolKey;

use super::{EXT, TMP_PREFIX};

/// Where spooled records were kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptIn {
    /// The spool files, in order.
    pub files: Vec<PathBuf>,
    /// In the fallback spool, outside the root (less durable).
    pub fallback: bool,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Room a spool file's own fields take besides its records (generous).
const FILE_OVERHEAD_BYTES: usize = 512;
/// MessagePack framing of one record in a spool file, at most.
const RECORD_OVERHEAD_BYTES: usize = 96;

/// One session's records to spool: `times[i]`, where given, is the `i`-th record's own
/// timestamp (kept through the merge); `reason` says why they are not in the journal;
/// `attempted` is where a failed journal append put (or may have put) the first record.
#[derive(Debug, Clone, Copy)]
pub struct ToSpool<'a> {
    pub session_id: &'a str,
    pub records: &'a [(&'a str, &'a [u8])],
    pub times: &'a [Option<i64>],
    pub reason: &'a str,
    pub attempted: Option<Attempted>,
}

/// Writes `spool`'s records as spool files in `dir` (which must exist), as few as the frame
/// limit allows: a file breaks only before an event, so an event stays in one file with the
/// records that belong to it. `key`: the root's spool key, for a file in the fallback spool
/// (None in the root's own spool). Returns the files, in order, once all are durable.
pub fn write_records(
    fs: &dyn Fs,
    dir: &Path,
    spool: &ToSpool<'_>,
    key: Option<&SpoolKey>,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let r = write_all(fs, dir, spool, key, &mut files);
    if r.is_err() {
        for f in &files {
            let _ = fs.remove_file(f);
        }
    }
    r.map(|()| files)
}

fn write_all(
    fs: &dyn Fs,
    dir: &Path,
    spool: &ToSpool<'_>,
    key: Option<&SpoolKey>,
    files: &mut Vec<PathBuf>,
) -> Result<()> {
    let ToSpool {
        session_id,
        records,
        times,
        reason,
        attempted,
    } = *spool;
    for (kind, p) in records {
        format::check_record(kind, p).map_err(|_| too_large(kind, p.len()))?;
    }
    let budget = FRAME_MAX_BYTES as usize - FILE_OVERHEAD_BYTES - reason.len() - session_id.len();
    let mut start = 0;
    while start < records.len() {
        let mut end = start;
        let mut size = 0;
        // Take whole units (an event and the system records after it) while they fit.
        while end < records.len() {
            let unit_end = unit_end(records, end);
            let unit: usize = records[end..unit_end]
                .iter()
                .map(|(k, p)| p.len() + k.len() + RECORD_OVERHEAD_BYTES)
                .sum();
            if size + unit > budget {
                break;
            }
            size += unit;
            end = unit_end;
        }
        if end == start {
            let (k, p) = records[start];
            return Err(too_large(k, p.len()));
        }
        // Where this file's first record went, if the failed append got that far.
        let at = attempted.map(|a| Attempted {
            offset: a.offset
                + records[..start]
                    .iter()
                    .map(|(k, p)| record::frame_len(k, p.len()) as u64)
                    .sum::<u64>(),
            seq: a.seq + start as u64,
        });
        let part = ToSpool {
            records: &records[start..end],
            times: times.get(start..).unwrap_or_default(),
            attempted: at,
            ..*spool
        };
        files.push(write_one(fs, dir, &part, key)?);
        start = end;
    }
    paths::sync_dir_with(fs, dir)
}

/// End of the unit starting at `i`: the record at `i` and the system records after it.
fn unit_end(records: &[(&str, &[u8])], i: usize) -> usize {
    let mut j = i + 1;
    while j < records.len() && is_system_kind(records[j].0) {
        j += 1;
    }
    j
}

fn too_large(kind: &str, len: usize) -> Error {
    Error::TooLarge {
        len: (record::frame_len(kind, len) + format::FIXUP_SLACK_BYTES) as u64,
        max: FRAME_MAX_BYTES as u64,
    }
}

/// Writes one spool file durably (but for the directory sync).
fn write_one(
    fs: &dyn Fs,
    dir: &Path,
    spool: &ToSpool<'_>,
    key: Option<&SpoolKey>,
) -> Result<PathBuf> {
    let ToSpool {
        session_id,
        records,
        times,
        reason,
        attempted,
    } = *spool;
    let ts = now_unix_ns();
    let pid = std::process::id();
    let file = SpoolFile {
        session_id: session_id.to_owned(),
        spooled_at_ns: ts,
        pid,
        reason: reason.to_owned(),
        records: records
            .iter()
            .enumerate()
            .map(|(i, (k, p))| SpoolRecord {
                kind: k.to_string(),
                payload: p.to_vec(),
                ts_unix_ns: times.get(i).copied().flatten(),
            })
            .collect(),
        attempted,
    };
    let mut frame = format::encode_entry(&file, ts);
    if frame.len() > FRAME_MAX_BYTES as usize {
        return Err(Error::TooLarge {
            len: frame.len() as u64,
            max: FRAME_MAX_BYTES as u64,
        });
    }
    if let Some(k) = key {
        let auth = k.sign(&frame);
        frame.extend_from_slice(&format::encode_auth(&auth, ts));
    }
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = format!("{:020}-{pid:010}-{n:010}.{EXT}", ts.max(0));
    let tmp = dir.join(format!("{TMP_PREFIX}{name}"));
    let dest = dir.join(&name);
    let written = fs
        .write_new(&tmp, &frame)
        .map_err(|e| Error::io("write", &tmp, e))
        .and_then(|()| {
            fs.hard_link(&tmp, &dest)
                .map_err(|e| Error::io("link", &dest, e))
        });
    let _ = fs.remove_file(&tmp);
    written?;
    Ok(dest)
}
