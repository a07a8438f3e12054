//! Segments: record frames `first..=last` exactly as they are in the journal, and the metadata
//! that travels with each object. A segment's metadata is a function of its bytes and the
//! host's signing key (ed25519 signatures are deterministic), so any shipper of the same
//! bytes writes the same metadata.
//!
//! | metadata key | value |
//! |---|---|
//! | `sj-format` | `1` |
//! | `sj-first-seq`, `sj-last-seq` | decimal |
//! | `sj-prev-hash` | hex of the `prev_hash` of record `first` (the chain link into the segment) |
//! | `sj-head` | hex of the record hash of record `last` |
//! | `sj-blake3` | hex of the unkeyed blake3 of the body |
//! | `sj-checkpoint` | base64 of the C2SP signed note `(origin, last, head)` |

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;

use super::layout::StreamKind;
use super::store::Meta;
use crate::audit::checkpoint::{origin_for, Checkpoint};
use crate::format::hash::content_hash;
use crate::format::Hash;
use crate::journal::reader::Records;
use crate::journal::scan::Chain;

pub const FORMAT: &str = "1";

/// What a segment's metadata says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentMeta {
    pub first: u64,
    pub last: u64,
    pub prev_hash: Hash,
    pub head: Hash,
    /// Unkeyed blake3 of the body.
    pub blake3: Hash,
    /// The signed note text.
    pub checkpoint: String,
}

/// The checkpoint origin of a stream: the session's, with `/rescue` for its rescue journal.
pub fn origin(session_id: &str, kind: StreamKind) -> String {
    match kind {
        StreamKind::Main => origin_for(session_id),
        StreamKind::Rescue => format!("{}/rescue", origin_for(session_id)),
    }
}

/// The checkpoint note for `(last, head)`, signed by `key` (a signer key's text) if given.
pub fn checkpoint_note(
    session_id: &str,
    kind: StreamKind,
    last: u64,
    head: Hash,
    key: Option<&str>,
) -> Result<String, crate::audit::checkpoint::CheckpointError> {
    let cp = Checkpoint {
        origin: origin(session_id, kind),
        size: last,
        hash: head,
    };
    match key {
        Some(k) => cp.signed(k),
        None => Ok(cp.body()),
    }
}

impl SegmentMeta {
    pub fn to_meta(&self) -> Meta {
        Meta::from([
            ("sj-format".into(), FORMAT.into()),
            ("sj-first-seq".into(), self.first.to_string()),
            ("sj-last-seq".into(), self.last.to_string()),
            ("sj-prev-hash".into(), self.prev_hash.to_hex()),
            ("sj-head".into(), self.head.to_hex()),
            ("sj-blake3".into(), self.blake3.to_hex()),
            (
                "sj-checkpoint".into(),
                B64.encode(self.checkpoint.as_bytes()),
            ),
        ])
    }

    /// Reads the metadata back; says which key is missing or malformed.
    pub fn from_meta(m: &Meta) -> Result<SegmentMeta, String> {
        let get = |k: &str| m.get(k).ok_or(format!("metadata {k} is missing"));
        let num = |k: &str| -> Result<u64, String> {
            get(k)?
                .parse()
                .map_err(|_| format!("metadata {k} is not a number"))
        };
        let hash = |k: &str| -> Result<Hash, String> {
            Hash::from_hex(get(k)?).ok_or(format!("metadata {k} is not a 32-byte hex hash"))
        };
        if get("sj-format")? != FORMAT {
            return Err(format!(
                "metadata sj-format {:?} is not {FORMAT}",
                get("sj-format")?
            ));
        }
        let note = B64
            .decode(get("sj-checkpoint")?)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or("metadata sj-checkpoint is not base64 of UTF-8 text")?;
        Ok(SegmentMeta {
            first: num("sj-first-seq")?,
            last: num("sj-last-seq")?,
            prev_hash: hash("sj-prev-hash")?,
            head: hash("sj-head")?,
            blake3: hash("sj-blake3")?,
            checkpoint: note,
        })
    }
}

/// Metadata of a stream's `header` object.
pub fn header_meta(header: &[u8], genesis: Hash) -> Meta {
    Meta::from([
        ("sj-format".into(), FORMAT.into()),
        ("sj-genesis".into(), genesis.to_hex()),
        ("sj-blake3".into(), content_hash(header).to_hex()),
    ])
}

/// Metadata of a quarantine object.
pub fn quarantine_meta(bytes: &[u8]) -> Meta {
    Meta::from([
        ("sj-format".into(), FORMAT.into()),
        ("sj-blake3".into(), content_hash(bytes).to_hex()),
    ])
}

/// What the frames of a segment body are, checked: each a valid frame (length, CRC), seqs
/// from `first` on, each linked to the one before, starting from `prev_hash`, back to back to
/// the very end of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub last: u64,
    pub head: Hash,
    pub records: u64,
    /// Record hashes by seq, `first` first.
    pub hashes: Vec<Hash>,
}

/// Checks a segment body (see [`Checked`]); the error names the offset within the body.
pub fn check_body(body: &[u8], first: u64, prev_hash: Hash) -> Result<Checked, String> {
    if body.is_empty() {
        return Err("the segment is empty".into());
    }
    let chain = Chain {
        next_seq: first,
        prev_hash,
    };
    let mut recs = Records::new(body, 0, chain);
    let mut hashes = Vec::new();
    for r in recs.by_ref() {
        match r {
            Ok(rec) => hashes.push(rec.hash),
            Err(stop) => {
                return Err(format!(
                    "at byte {} of the segment (seq {}): {}",
                    stop.offset,
                    first + hashes.len() as u64,
                    stop.problem
                ))
            }
        }
    }
    let c = Records::chain(&recs);
    Ok(Checked {
        last: c.last_seq(),
        head: c.prev_hash,
        records: hashes.len() as u64,
        hashes,
    })
}
