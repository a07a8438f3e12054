//! The spool's file formats (no I/O here): a spool file holds one record frame of kind
//! `sjournal.spool-entry` whose payload is a [`SpoolFile`]; the merge intent holds one frame
//! of kind `sjournal.spool-intent` whose payload is an [`Intent`]. Both use the journal's own
//! framing, so a short or damaged file fails its length word or CRC. A spool file in the
//! fallback spool (format 2) has a second frame, of kind `sjournal.spool-auth`, whose payload
//! is an [`Auth`]: a MAC of the first frame's bytes under the root's spool key. A fallback
//! file without it (format 1) is never merged unless the user accepts it. The layout is in
//! "The spool's files" in `journal-format.md`; the write and the merge, and what the merge
//! does with each file, are in `journal::spool`.

use serde::{Deserialize, Serialize};

use crate::format::hash::content_hash;
use crate::format::payload::{self, is_system_kind, KIND_EXEC, KIND_HOST, KIND_INJECTED};
use crate::format::record::{self, valid_kind};
use crate::format::Hash;
use crate::limits::FRAME_MAX_BYTES;

/// Kind of the one frame in a spool file.
pub const ENTRY_KIND: &str = "sjournal.spool-entry";
/// Kind of the one frame in a merge intent.
pub const INTENT_KIND: &str = "sjournal.spool-intent";
/// Kind of the authentication frame after the entry in a fallback spool file.
pub const AUTH_KIND: &str = "sjournal.spool-auth";
/// The format of fallback spool files that carry an [`Auth`] frame.
pub const FALLBACK_FORMAT: u32 = 2;
/// Room left in a frame for what the merge may add to a record (an event seq).
pub const FIXUP_SLACK_BYTES: usize = 64;
/// Room a spool file may take past its entry frame (the authentication frame).
pub const AUTH_MAX_BYTES: usize = 512;

/// The authentication of a fallback spool file: a MAC of its entry frame's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Auth {
    /// [`FALLBACK_FORMAT`].
    pub format: u32,
    /// Names the key the MAC was made with (derived from it; says nothing about it).
    pub key_id: String,
    /// The MAC (32 bytes; see `journal::spool::key`).
    #[serde(with = "serde_bytes")]
    pub mac: Vec<u8>,
}

/// What a spool file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpoolFile {
    /// The session the records belong to (a spool directory holds one session's files).
    pub session_id: String,
    pub spooled_at_ns: i64,
    pub pid: u32,
    pub reason: String,
    /// The records to append, in order: an event first, then what belongs with it (its exec
    /// records, the context injected for it), possibly followed by further events.
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
    /// The record's own timestamp, when its writer gave it one (an import keeping the times
    /// of the records it copies); the merge stamps the others with the merge time. Absent
    /// from files of builds before it (which ignore it when they merge a newer file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts_unix_ns: Option<i64>,
}

/// Where a merge batch begins: written before the batch, removed after its files are gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// Journal offset of the batch's `sjournal.spool-merge` record.
    pub offset: u64,
    /// Seq of that record.
    pub seq: u64,
}

/// Checks that each record can go into a spool file and, later, the journal.
pub fn check_record(kind: &str, payload: &[u8]) -> Result<(), String> {
    if !valid_kind(kind) {
        return Err(format!("invalid record kind {kind:?}"));
    }
    let len = record::frame_len(kind, payload.len()) + FIXUP_SLACK_BYTES;
    if len > FRAME_MAX_BYTES as usize {
        return Err(format!(
            "a record of {len} bytes exceeds the limit of {FRAME_MAX_BYTES} bytes"
        ));
    }
    Ok(())
}

/// Encodes a spool file: one frame (seq 0, zero `prev_hash`) of kind [`ENTRY_KIND`].
pub fn encode_entry(file: &SpoolFile, ts_unix_ns: i64) -> Vec<u8> {
    let body = payload::encode_system(file);
    let mut frame = Vec::with_capacity(record::frame_len(ENTRY_KIND, body.len()));
    record::encode(&mut frame, 0, ts_unix_ns, ENTRY_KIND, &Hash::ZERO, &body);
    frame
}

/// Length of the file [`encode_entry`] would write.
pub fn entry_len(file: &SpoolFile) -> usize {
    record::frame_len(ENTRY_KIND, payload::encode_system(file).len())
}

/// Encodes the authentication frame that follows the entry in a fallback spool file.
pub fn encode_auth(auth: &Auth, ts_unix_ns: i64) -> Vec<u8> {
    let body = payload::encode_system(auth);
    let mut frame = Vec::new();
    record::encode(&mut frame, 0, ts_unix_ns, AUTH_KIND, &Hash::ZERO, &body);
    frame
}

/// Splits a spool file into its entry frame's bytes and its authentication, if it has one
/// (a fallback file of format 2). Checks the framing only: the entry is decoded by
/// [`decode_entry`], the MAC checked by the caller.
pub fn split_auth(bytes: &[u8]) -> Result<(&[u8], Option<Auth>), String> {
    let f = record::parse(bytes).map_err(|e| e.to_string())?;
    let (entry, rest) = bytes.split_at(f.len());
    if rest.is_empty() {
        return Ok((entry, None));
    }
    let body = single_frame(rest, AUTH_KIND).map_err(|e| format!("after the entry: {e}"))?;
    let auth: Auth = payload::decode_system(0, body).map_err(|e| e.to_string())?;
    if auth.format != FALLBACK_FORMAT {
        return Err(format!(
            "fallback spool format {} is not known to this build (it knows {FALLBACK_FORMAT})",
            auth.format
        ));
    }
    Ok((entry, Some(auth)))
}

/// Decodes and checks a spool file of `session_id`.
pub fn decode_entry(bytes: &[u8], session_id: &str) -> Result<SpoolFile, String> {
    let file = decode_entry_any(bytes)?;
    if file.session_id != session_id {
        return Err(format!(
            "it belongs to session {:?}, not {session_id:?}",
            file.session_id
        ));
    }
    Ok(file)
}

/// Decodes and checks a spool file, whatever its session.
pub fn decode_entry_any(bytes: &[u8]) -> Result<SpoolFile, String> {
    let body = single_frame(bytes, ENTRY_KIND)?;
    let file: SpoolFile = payload::decode_system(0, body).map_err(|e| e.to_string())?;
    if file.records.is_empty() {
        return Err("it holds no record".into());
    }
    for r in &file.records {
        check_record(&r.kind, &r.payload)?;
    }
    Ok(file)
}

/// Encodes a merge intent.
pub fn encode_intent(intent: &Intent, ts_unix_ns: i64) -> Vec<u8> {
    let body = payload::encode_system(intent);
    let mut frame = Vec::new();
    record::encode(&mut frame, 0, ts_unix_ns, INTENT_KIND, &Hash::ZERO, &body);
    frame
}

pub fn decode_intent(bytes: &[u8]) -> Result<Intent, String> {
    let body = single_frame(bytes, INTENT_KIND)?;
    payload::decode_system(0, body).map_err(|e| e.to_string())
}

/// The payload of a file that must hold exactly one frame of `kind`.
fn single_frame<'a>(bytes: &'a [u8], kind: &str) -> Result<&'a [u8], String> {
    let f = record::parse(bytes).map_err(|e| e.to_string())?;
    if f.len() != bytes.len() {
        return Err(format!("{} bytes follow the record", bytes.len() - f.len()));
    }
    if f.kind != kind {
        return Err(format!("record kind {:?}, expected {kind:?}", f.kind));
    }
    Ok(f.payload)
}

/// The digest a merge record lists for each merged record: blake3 of the kind, a zero byte
/// and the payload, hex.
pub fn record_digest(kind: &str, payload: &[u8]) -> String {
    let mut b = Vec::with_capacity(kind.len() + 1 + payload.len());
    b.extend_from_slice(kind.as_bytes());
    b.push(0);
    b.extend_from_slice(payload);
    content_hash(&b).to_hex()
}

/// Gives the records that point at their event (`sjournal.exec`, `sjournal.host`,
/// `sjournal.injected`) the seq their event gets now: the seq of the nearest event before
/// them in the file. Records were spooled before their event had a seq. `first_seq` is the
/// seq the file's first record gets.
pub fn fix_event_seqs(records: &mut [SpoolRecord], first_seq: u64) {
    let mut event_seq = first_seq;
    for (i, r) in records.iter_mut().enumerate() {
        let seq = first_seq + i as u64;
        if !is_system_kind(&r.kind) {
            event_seq = seq;
            continue;
        }
        if r.kind == KIND_EXEC {
            if let Ok(mut e) = payload::decode_system::<payload::Exec>(0, &r.payload) {
                e.event_seq = event_seq;
                r.payload = payload::encode_system(&e);
            }
        } else if r.kind == KIND_HOST {
            if let Ok(mut h) = payload::decode_system::<payload::HostOverride>(0, &r.payload) {
                h.event_seq = event_seq;
                r.payload = payload::encode_system(&h);
            }
        } else if r.kind == KIND_INJECTED {
            if let Ok(mut e) = payload::decode_system::<payload::Injected>(0, &r.payload) {
                e.event_seq = event_seq;
                r.payload = payload::encode_system(&e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> SpoolFile {
        SpoolFile {
            session_id: "s".into(),
            spooled_at_ns: 7,
            pid: 1,
            reason: "r".into(),
            records: vec![SpoolRecord {
                kind: "Stop".into(),
                payload: crate::fold::digest::encode_event("Stop", "{}"),
                ts_unix_ns: None,
            }],
            attempted: None,
        }
    }

    #[test]
    fn entry_round_trips_and_is_checked() {
        let f = file();
        let b = encode_entry(&f, 7);
        assert_eq!(b.len(), entry_len(&f));
        assert_eq!(decode_entry(&b, "s").unwrap(), f);
        assert!(decode_entry(&b, "t").unwrap_err().contains("belongs to"));
        assert!(decode_entry(&b[..b.len() - 1], "s").is_err());
        let mut extra = b.clone();
        extra.push(0);
        assert!(decode_entry(&extra, "s").unwrap_err().contains("follow"));
        // A record's own time survives the round trip; a file without one (older builds)
        // reads as None.
        let mut timed = f.clone();
        timed.records[0].ts_unix_ns = Some(5);
        assert_eq!(decode_entry(&encode_entry(&timed, 7), "s").unwrap(), timed);
        assert!(
            encode_entry(&timed, 7).len() > b.len(),
            "the key is written only when set"
        );
        let i = Intent { offset: 9, seq: 3 };
        assert_eq!(decode_intent(&encode_intent(&i, 1)).unwrap(), i);
        assert!(decode_intent(&b).is_err());
    }
}
