//! Verify: reads a journal through the mmap reader and checks the header, the binding of the
//! file name to the session id in the header, every frame's length and CRC, contiguous seq,
//! and every chain link. Reports the first problem with its offset and seq. Read-only.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::error::Result;
use crate::journal::paths::{file_stem, JOURNAL_EXT};
use crate::journal::reader::JournalReader;
use crate::journal::scan::{self, Problem};
use crate::limits::BATCH_MAX_BYTES;

/// The first problem verify found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub offset: u64,
    /// The seq the record at `offset` should have had.
    pub seq: u64,
    pub what: String,
    /// True if the damage is a torn tail (nothing valid after it), which the next append
    /// will quarantine and cut; false for damage followed by valid records, or an edit.
    pub torn_tail: bool,
}

/// What verify found in one journal. The JSON form (`verify --json`) is this struct.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    pub path: PathBuf,
    pub session_id: Option<String>,
    pub ok: bool,
    pub records: u64,
    pub bytes: u64,
    pub last_seq: u64,
    /// Hash of the last valid record (hex), the value a checkpoint pins.
    pub head: Option<String>,
    pub problem: Option<Finding>,
}

/// Verifies one journal file. `Err` only when the file cannot be read at all.
pub fn verify_file(path: &Path, deadline: Option<Instant>) -> Result<VerifyReport> {
    let reader = JournalReader::open(path, deadline)?;
    let bytes = reader.bytes();
    let mut report = VerifyReport {
        path: path.to_owned(),
        session_id: None,
        ok: false,
        records: 0,
        bytes: bytes.len() as u64,
        last_seq: 0,
        head: None,
        problem: None,
    };
    let finding = |offset, seq, what: String| Finding {
        offset,
        seq,
        what,
        torn_tail: false,
    };
    let (header, _, genesis) = match reader.header() {
        Ok(h) => h,
        Err(e) => {
            report.problem = Some(finding(0, 0, format!("bad header: {e}")));
            return Ok(report);
        }
    };
    report.session_id = Some(header.session_id.clone());
    report.head = Some(genesis.to_hex());
    if let Some(expected) = expected_stem(path) {
        let actual = file_stem(&header.session_id).unwrap_or_default();
        if expected != actual {
            report.problem = Some(finding(
                0,
                0,
                format!(
                    "file name says session file {expected:?} but the header names session {:?} \
                     (file {actual:?}): the journal was moved or replaced",
                    header.session_id
                ),
            ));
            return Ok(report);
        }
    }
    let mut records = reader.records()?;
    for r in records.by_ref() {
        match r {
            Ok(rec) => {
                report.records += 1;
                report.last_seq = rec.seq;
                report.head = Some(rec.hash.to_hex());
            }
            Err(stop) => {
                let last_seq = report.last_seq;
                let tail = &bytes[stop.offset as usize..];
                let follows = scan::find_valid_frame_after(tail, last_seq);
                // The same rule as the writer's recovery: only damage no longer than one
                // write, with nothing valid after it, is a torn tail the next append cuts.
                let too_long = tail.len() as u64 > BATCH_MAX_BYTES;
                let torn = stop.problem.is_damage() && follows.is_none() && !too_long;
                let mut what = stop.problem.to_string();
                if let Some(rel) = follows {
                    what.push_str(&format!(
                        "; a valid record follows at offset {}",
                        stop.offset + rel as u64
                    ));
                } else if too_long {
                    what.push_str(&format!(
                        "; the {} bytes from here to the end are more than one write can leave \
                         torn, so appends refuse to cut them",
                        tail.len()
                    ));
                } else if torn {
                    what = format!(
                        "torn tail of {} bytes: {what} (the next append quarantines and cuts it)",
                        tail.len()
                    );
                }
                if let Problem::SeqMismatch { .. } | Problem::ChainBroken { .. } = stop.problem {
                    what.push_str(" (tampering or a copy from another journal)");
                }
                report.problem = Some(Finding {
                    offset: stop.offset,
                    seq: last_seq + 1,
                    what,
                    torn_tail: torn,
                });
                return Ok(report);
            }
        }
    }
    report.ok = true;
    Ok(report)
}

/// The session file stem a journal's name claims: `<stem>.sjl` or `<stem>.rescue.sjl`.
fn expected_stem(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let base = name.strip_suffix(&format!(".{JOURNAL_EXT}"))?;
    Some(base.strip_suffix(".rescue").unwrap_or(base).to_owned())
}

impl VerifyReport {
    pub fn summary(&self) -> String {
        match &self.problem {
            None => format!(
                "ok  {}  {} records, seq 1..={}, head {}",
                self.path.display(),
                self.records,
                self.last_seq,
                self.head.as_deref().unwrap_or("-")
            ),
            Some(f) => format!(
                "BAD {}  at offset {} (seq {}): {}  [{} valid records before it]",
                self.path.display(),
                f.offset,
                f.seq,
                f.what,
                self.records
            ),
        }
    }
}
