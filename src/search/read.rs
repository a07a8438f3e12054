//! Reading records back for the citations of an answer: records around a seq (past damage
//! too), and the hashes of given seqs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::Result;
use crate::format::{payload, record};
use crate::journal::scan::find_any_frame_after;
use crate::journal::JournalReader;

/// A record as an answer shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub seq: u64,
    pub hash: String,
    pub ts_unix_ns: i64,
    pub kind: String,
    /// The payload as JSON text (an event's as received; a system record's fields).
    pub text: String,
    /// Read past damage in the journal (not chain-verified).
    pub damaged: bool,
}

fn shown(f: &record::FrameRef<'_>, damaged: bool) -> Shown {
    let text = payload::to_json(f.seq, f.kind, f.payload)
        .map(|j| j.get().to_owned())
        .unwrap_or_else(|e| format!("(the payload does not decode: {e})"));
    Shown {
        seq: f.seq,
        hash: f.hash().to_hex(),
        ts_unix_ns: f.ts_unix_ns,
        kind: f.kind.to_owned(),
        text,
        damaged,
    }
}

/// The records with seq in `lo..=hi` of the journal at `path`, in file order; where the
/// journal stops at damage, the CRC-valid records after it, marked damaged.
pub fn records_between(path: &Path, lo: u64, hi: u64) -> Result<Vec<Shown>> {
    let reader = JournalReader::open(path, None)?;
    let mut out = Vec::new();
    let mut stop_at = None;
    for r in reader.records()? {
        match r {
            Ok(rec) if rec.seq > hi => return Ok(out),
            Ok(rec) if rec.seq >= lo => out.push(shown(&rec.frame, false)),
            Ok(_) => {}
            Err(stop) => {
                stop_at = Some(stop.offset as usize);
                break;
            }
        }
    }
    if let Some(mut at) = stop_at {
        let bytes = reader.bytes();
        if find_any_frame_after(&bytes[at..]).is_none() {
            return Ok(out);
        }
        while at < bytes.len() {
            match record::parse(&bytes[at..]) {
                Ok(f) => {
                    if (lo..=hi).contains(&f.seq) {
                        out.push(shown(&f, true));
                    }
                    at += f.len();
                }
                Err(_) => match find_any_frame_after(&bytes[at..]) {
                    Some(rel) => at += rel,
                    None => break,
                },
            }
        }
    }
    Ok(out)
}

/// The hashes (hex) of the records with these seqs (one read of the journal, up to the
/// largest).
pub fn hashes_at(path: &Path, seqs: &BTreeSet<u64>) -> Result<BTreeMap<u64, String>> {
    let mut out = BTreeMap::new();
    let Some(&last) = seqs.last() else {
        return Ok(out);
    };
    let reader = JournalReader::open(path, None)?;
    for rec in reader.records()? {
        let Ok(rec) = rec else { break };
        if seqs.contains(&rec.seq) {
            out.insert(rec.seq, rec.hash.to_hex());
        }
        if rec.seq >= last {
            break;
        }
    }
    Ok(out)
}
