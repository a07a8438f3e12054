//! Erasures of shipped records: `erasure/<seq>` objects.
//!
//! Segments are create-only, so when `sjournal erase` rewrites a record that was already
//! shipped, the segment keeps the record as it was. `ship` then uploads the rewritten (erased)
//! frame as its own create-only object, `erasure/<seq>`, with metadata `sj-erased-by` (the seq
//! of the chained `sjournal.erased` record) and `sj-blake3`. A version-2 or -3 record hash
//! commits to the payload's digest, not its bytes, so the erased frame has the record hash the
//! segment's frame has: the chain through the segments is unchanged.
//!
//! Whoever reads the stream back (`verify --remote`, `fetch`) reassembles header + segments
//! and puts each erasure object's frame in place of the segment's frame ([`apply`]); the result
//! is the erased journal, which verifies as a local one does (each erased record bound by its
//! `sjournal.erased` record). An erasure object that is not an erased frame of the record at its
//! seq (another record hash, no ERASED flag, bytes around the frame) is a finding.
//!
//! Object Lock: the segment's original bytes stay in the bucket until its retention ends; the
//! erasure object hides them from `fetch` and `verify --remote`, it cannot delete them.
//! `index` applies erasure objects once they verify (see `remote::index`).

use std::collections::BTreeMap;

use super::store::{Meta, Object};
use crate::format::hash::content_hash;
use crate::format::record;
use crate::format::Hash;

/// The metadata of an erasure object holding `frame`, erased by record `erased_by`.
pub fn meta(erased_by: u64, frame: &[u8]) -> Meta {
    Meta::from([
        ("sj-format".into(), super::segment::FORMAT.into()),
        ("sj-erased-by".into(), erased_by.to_string()),
        ("sj-blake3".into(), content_hash(frame).to_hex()),
    ])
}

/// An erasure object that fits the record it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub seq: u64,
    /// `sj-erased-by`: the seq of the `sjournal.erased` record, as the object claims it.
    pub erased_by: Option<u64>,
}

/// Rebuilds a stream's journal bytes: `bytes` is its header (`hlen` bytes) and its segments'
/// frames back to back, chain-checked, with record hashes `hashes` (index seq − 1). Each object
/// of `objects` (by seq: key and object) that is an erased frame of the record at its seq,
/// with that record's hash, replaces the record's frame; any other is left out and named in
/// the findings.
pub fn apply(
    bytes: &[u8],
    hlen: usize,
    hashes: &[Hash],
    objects: &BTreeMap<u64, (String, Object)>,
) -> (Vec<u8>, Vec<Applied>, Vec<String>) {
    let mut findings = Vec::new();
    let mut good: BTreeMap<u64, &[u8]> = BTreeMap::new();
    let mut applied = Vec::new();
    for (&seq, (key, o)) in objects {
        let b = &o.bytes[..];
        let f = match record::parse(b) {
            Ok(f) if f.len() == b.len() => f,
            Ok(_) => {
                findings.push(format!("{key}: bytes follow the erased frame"));
                continue;
            }
            Err(e) => {
                findings.push(format!("{key}: not a record frame: {e}"));
                continue;
            }
        };
        if f.seq != seq {
            findings.push(format!("{key}: holds record seq {}, not {seq}", f.seq));
            continue;
        }
        if !f.erased() {
            findings.push(format!(
                "{key}: the frame is not marked erased: an erasure object must hold the erased \
                 record"
            ));
            continue;
        }
        match hashes.get(seq as usize - 1) {
            None => {
                findings.push(format!("{key}: names seq {seq}, which no segment holds"));
                continue;
            }
            Some(h) if *h != f.hash() => {
                findings.push(format!(
                    "{key}: the frame's record hash {} is not the shipped record's {h}: its \
                     seq, time, kind, link or payload digest differ (not an erasure of that \
                     record)",
                    f.hash()
                ));
                continue;
            }
            Some(_) => {}
        }
        if o.meta
            .get("sj-blake3")
            .is_some_and(|m| *m != content_hash(b).to_hex())
        {
            findings.push(format!(
                "{key}: metadata sj-blake3 is not the body's blake3"
            ));
        }
        applied.push(Applied {
            seq,
            erased_by: o.meta.get("sj-erased-by").and_then(|s| s.parse().ok()),
        });
        good.insert(seq, b);
    }
    (replace_frames(bytes, hlen, &good), applied, findings)
}

/// `bytes` (its first `start` bytes kept as they are, then frames back to back) with the frame
/// of each seq in `frames` replaced by that frame.
pub fn replace_frames(bytes: &[u8], start: usize, frames: &BTreeMap<u64, &[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..start]);
    let mut at = start;
    while at < bytes.len() {
        let len = record::peek_len(&bytes[at..]).unwrap_or(0) as usize;
        if len == 0 || at + len > bytes.len() {
            out.extend_from_slice(&bytes[at..]);
            break;
        }
        let seq = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap());
        match frames.get(&seq) {
            Some(frame) => out.extend_from_slice(frame),
            None => out.extend_from_slice(&bytes[at..at + len]),
        }
        at += len;
    }
    out
}
