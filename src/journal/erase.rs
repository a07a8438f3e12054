//! Erasure after the fact: `sjournal erase` removes a record's payload, or one field of an
//! event's JSON, from a version-2 or -3 journal, and the journal still verifies end to end.
//!
//! The record hash of these versions commits to the payload's salted digest, not to its bytes
//! (`format::record`). Erasing rewrites the record with flag ERASED, its salt zeroed, its
//! digest kept and its payload emptied (or rewritten without the field), and appends a chained
//! `sjournal.erased` record ([`payload::Erased`]) binding what is left. Both happen in one
//! atomic replacement of the file (`Writer::replace`) under the session's lock: a crash
//! leaves the journal either as it was or erased, never half. Every other byte of the file is
//! kept as it was. The session's snapshot is removed (the next load folds afresh).
//! Only that file's bytes go: backups and shipped copies keep theirs. A version-1 journal is
//! refused (`sjournal migrate` rewrites it as version 3 first). `verify` checks each erasure
//! (the rule is in journal-format.md, "Records"), lists it (seq, field, erased_digest, reason,
//! the record's ts; `verify --json`: `erasures`) and exits 0.

use serde_json::Value;

use crate::error::Error;
use crate::format::hash::payload_digest;
use crate::format::header::Header;
use crate::format::payload::{self, Erased, KIND_ERASED};
use crate::format::record::{self, Salts, SALT_LEN};
use crate::format::Hash;
use crate::journal::paths::Root;
use crate::journal::scan;
use crate::journal::writer::{now_unix_ns, Appended, Writer, WriterOptions};

/// What to erase.
#[derive(Debug, Clone)]
pub struct Request {
    pub seq: u64,
    /// A JSON pointer into the event's JSON (RFC 6901); None erases the whole payload.
    pub field: Option<String>,
    pub reason: String,
}

/// Why an erasure was not done. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum EraseError {
    /// The request cannot be done on this journal; the message says why and what to do.
    #[error("{0}; nothing was erased")]
    Refused(String),
    #[error(transparent)]
    Journal(#[from] Error),
}

/// What an erasure did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub seq: u64,
    /// The seq of the `sjournal.erased` record.
    pub recorded_at: u64,
    pub erased: Erased,
}

/// Erases `req` from the session's journal (see the module docs).
pub fn erase(
    root: &Root,
    session_id: &str,
    req: &Request,
    opts: &WriterOptions,
) -> Result<Done, EraseError> {
    let refuse = |m: String| Err(EraseError::Refused(m));
    let paths = root.session(session_id)?;
    if !paths.journal.exists() {
        return Err(Error::NoSuchSession {
            session: session_id.to_owned(),
            root: root.dir().to_owned(),
        }
        .into());
    }
    let mut w = Writer::open(root, session_id, opts)?;
    if w.header().format_version < 2 {
        return refuse(format!(
            "session {session_id:?} is a format-version-{} journal, whose chain commits to \
             every payload byte, so no payload can be erased from it and still verify (sessions \
             created since format 2 can be; `sjournal migrate --session ID` rewrites it in the \
             current format first)",
            w.header().format_version
        ));
    }
    let bytes = w.read_all()?;
    let (_, hlen) = Header::decode(&bytes).map_err(|e| Error::BadHeader {
        path: w.path().to_owned(),
        reason: e.to_string(),
    })?;
    let last = w.next_seq() - 1;
    if req.seq == 0 || req.seq > last {
        return refuse(format!(
            "session {session_id:?} has records 1..={last}; there is no seq {}",
            req.seq
        ));
    }
    // Records are contiguous from seq 1: walk the lengths to the one asked for.
    let mut at = hlen;
    let frame = loop {
        let f = scan::frame(&bytes[at..]).map_err(|e| {
            Error::Corrupt(format!("record at offset {at}: {e}; run `sjournal verify`").into())
        })?;
        if f.seq == req.seq {
            break f;
        }
        at += f.len();
    };
    if payload::is_system_kind(frame.kind) {
        return refuse(format!(
            "seq {} is a system record ({}); only an event's payload can be erased",
            req.seq, frame.kind
        ));
    }
    if frame.erased() {
        return refuse(format!("seq {} is erased already", req.seq));
    }
    let (new_payload, erased_digest, new_digest) = match &req.field {
        None => (Vec::new(), frame.payload_digest, None),
        Some(pointer) => {
            let json = payload::decode_event(frame.seq, frame.payload)?;
            // JSON that repeats a key reads one way to the fold (not as the event at all) and
            // another once written again (the last value wins): erasing a field must only
            // take content away, never make some take effect.
            if let Err(e) = no_repeated_key(json) {
                return refuse(format!(
                    "seq {}'s JSON {e}: written again without a field it would read \
                     differently; erase the whole record instead",
                    frame.seq
                ));
            }
            let mut value: Value = serde_json::from_str(json).map_err(|e| {
                EraseError::Refused(format!(
                    "seq {} does not hold JSON ({e}); erase the whole record instead",
                    frame.seq
                ))
            })?;
            let Some(removed) = remove_pointer(&mut value, pointer) else {
                return refuse(format!(
                    "seq {} has no field at {pointer:?} (a JSON pointer such as \
                     /tool_input/command)",
                    frame.seq
                ));
            };
            let removed = serde_json::to_vec(&removed).expect("a JSON value serializes");
            // Salted with a salt nobody keeps: the digest names the removed value without
            // letting anyone test a guess against it.
            let erased = payload_digest(&Salts::new().salt(0), &removed);
            let text = serde_json::to_string(&value).expect("a JSON value serializes");
            let new_payload = payload::encode_event_json(&text);
            let digest = payload_digest(&[0; SALT_LEN], &new_payload);
            (new_payload, erased, Some(digest))
        }
    };
    let erased = Erased {
        seq: req.seq,
        field: req.field.clone(),
        erased_digest: erased_digest.to_hex(),
        new_payload_digest: new_digest.map(|d| d.to_hex()),
        reason: req.reason.clone(),
    };
    let mut out = Vec::with_capacity(bytes.len() + 256);
    out.extend_from_slice(&bytes[..at]);
    record::encode_digested(
        &mut out,
        frame.version(),
        frame.seq,
        frame.ts_unix_ns,
        frame.kind,
        &frame.prev_hash,
        &new_payload,
        &[0; SALT_LEN],
        Some(&frame.payload_digest),
    );
    out.extend_from_slice(&bytes[at + frame.len()..]);
    let chain = w.chain();
    let body = payload::encode_system(&erased);
    let ts = now_unix_ns();
    let offset = out.len() as u64;
    let salt = Salts::new().salt(chain.next_seq);
    let hash = record::encode_digested(
        &mut out,
        w.header().format_version,
        chain.next_seq,
        ts,
        KIND_ERASED,
        &chain.prev_hash,
        &body,
        &salt,
        None,
    );
    let appended = Appended {
        seq: chain.next_seq,
        hash,
        offset,
        len: out.len() as u64 - offset,
        ts_unix_ns: ts,
    };
    w.replace(&out, appended)?;
    // Derived copies forget the erased content: the snapshot is folded afresh on the next
    // load (a missing snapshot is an ordinary cold load).
    let snapshot = &w.session_paths().snapshot;
    if snapshot.exists() {
        std::fs::remove_file(snapshot)
            .map_err(|e| Error::io("remove the snapshot of", snapshot, e))?;
    }
    Ok(Done {
        seq: req.seq,
        recorded_at: appended.seq,
        erased,
    })
}

/// Removes the value at JSON pointer `pointer` (RFC 6901) and returns it: a member of an
/// object is removed, an element of an array replaced by null (so later indices still name
/// what they named). None if nothing is there, or the pointer is the whole document.
pub fn remove_pointer(value: &mut Value, pointer: &str) -> Option<Value> {
    let (parent, last) = pointer.rsplit_once('/')?;
    let last = last.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent)? {
        Value::Object(map) => map.remove(&last),
        Value::Array(items) => {
            let i: usize = last.parse().ok()?;
            items.get_mut(i).map(Value::take)
        }
        _ => None,
    }
}

/// The payload digest, with a zero salt, of an erased record's payload: what a field
/// erasure's `new_payload_digest` binds.
pub fn left_digest(payload: &[u8]) -> Hash {
    payload_digest(&[0; SALT_LEN], payload)
}

/// Ok if no object in `json` (valid JSON) has a key twice; else what repeats.
fn no_repeated_key(json: &str) -> Result<(), String> {
    use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
    struct Walk;
    impl<'de> DeserializeSeed<'de> for Walk {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Walk {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            while a.next_element_seed(Walk)?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(k) = a.next_key::<String>()? {
                if !seen.insert(k.clone()) {
                    return Err(A::Error::custom(format!("repeats the key {k:?}")));
                }
                a.next_value_seed(Walk)?;
            }
            Ok(())
        }
    }
    let mut d = serde_json::Deserializer::from_str(json);
    Walk.deserialize(&mut d).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_remove_members_and_null_elements() {
        let mut v = json!({"a": {"b/c": 1, "d": [1, 2, 3]}, "e": "x"});
        assert_eq!(remove_pointer(&mut v, "/a/b~1c"), Some(json!(1)));
        assert_eq!(remove_pointer(&mut v, "/a/d/1"), Some(json!(2)));
        assert_eq!(remove_pointer(&mut v, "/nope"), None);
        assert_eq!(remove_pointer(&mut v, "/e/x"), None);
        assert_eq!(remove_pointer(&mut v, ""), None);
        assert_eq!(v, json!({"a": {"d": [1, null, 3]}, "e": "x"}));
    }
}
