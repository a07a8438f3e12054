//! The digest check: every event's fold digest (see `crate::fold::digest`) against the one
//! its JSON derives. The fold trusts a digest of the current version instead of parsing the
//! JSON; this check is what keeps that trust earned. A digest is chained and checksummed with
//! the rest of its record, so a mismatch is a writer's bug or a deliberate rewrite, never
//! damage. It costs a JSON parse of every event (several times the chain check), so it is its
//! own pass (`sjournal verify --digests`), not part of every verify.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::fold::digest;
use crate::format::header::Header;
use crate::format::payload::{decode_event, event_digest, is_system_kind};
use crate::journal::reader::{JournalReader, Records};
use crate::journal::scan::Chain;

use crate::journal::verify::Finding;

/// What the digest check found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DigestReport {
    /// Event records read (up to the first record that is not valid, if any: `verify` reports
    /// that one).
    pub events: u64,
    /// Events whose digest, of a version this build's fold reads
    /// (`digest::DIGEST_VERSION`, with its `FOLD_VERSION`), was compared with the JSON's.
    pub checked: u64,
    /// Events without a digest (written before digests): the fold reads their JSON.
    pub without: u64,
    /// Events with a digest of another version: the fold reads their JSON.
    pub other_version: u64,
    /// The first event whose digest differs from the one its JSON derives.
    pub mismatch: Option<Finding>,
}

/// Checks the digests of a journal file's events.
pub fn verify_digests(path: &Path, deadline: Option<Instant>) -> Result<DigestReport> {
    let reader = JournalReader::open(path, deadline)?;
    let (_, hlen, genesis) = reader.header().map_err(|e| Error::BadHeader {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(check(
        reader
            .records_from(hlen, Chain::genesis(genesis))
            .first_link_only(),
    ))
}

/// Checks the digests of the events `records` yields, up to the first record that is not
/// valid.
pub fn check(records: Records<'_>) -> DigestReport {
    let mut r = DigestReport::default();
    for rec in records.map_while(|r| r.ok()) {
        if is_system_kind(rec.kind) {
            continue;
        }
        r.events += 1;
        let Some(stored) = event_digest(rec.payload) else {
            r.without += 1;
            continue;
        };
        let found = |what: String| Finding {
            offset: rec.offset,
            seq: rec.seq,
            what,
            torn_tail: false,
        };
        match digest::version(stored) {
            Some(v) if digest::readable(v) => {}
            Some(_) => {
                r.other_version += 1;
                continue;
            }
            None => {
                r.mismatch = Some(found(
                    "the bytes after the event's JSON are not a digest (a writer bug or an edit)"
                        .into(),
                ));
                return r;
            }
        }
        r.checked += 1;
        let Ok(json) = decode_event(rec.seq, rec.payload) else {
            r.mismatch = Some(found("the event's JSON text does not decode".into()));
            return r;
        };
        if digest::derive(rec.kind, json) != stored {
            r.mismatch = Some(found(format!(
                "the event's digest (version {}) differs from the one its JSON \
                 derives (a writer bug or an edit): the fold reads the digest, replay and \
                 export read the JSON",
                digest::DIGEST_VERSION
            )));
            return r;
        }
    }
    r
}

/// [`check`] over a journal's bytes (header and records), for callers holding them.
pub fn check_bytes(bytes: &[u8]) -> Option<DigestReport> {
    let (_, hlen) = Header::decode(bytes).ok()?;
    let genesis = crate::format::hash::genesis_hash(&bytes[..hlen]);
    Some(check(
        Records::new(bytes, hlen, Chain::genesis(genesis)).first_link_only(),
    ))
}
