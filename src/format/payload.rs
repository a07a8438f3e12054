//! Payload schemas. The record's kind decides how its payload (MessagePack, written with
//! rmp-serde) reads:
//!
//! - any kind not starting with `sjournal.`: an event. The payload is one MessagePack str holding
//!   the JSON text exactly as it was received, byte for byte.
//! - `sjournal.unparsed`: input that was not valid JSON, kept as a MessagePack map
//!   `{raw: bin, error: str}`.
//! - `sjournal.recovered`: a MessagePack map, see [`Recovered`].
//! - `sjournal.context.set`, `sjournal.context.clear`: context channels ([`ContextSet`],
//!   [`ContextClear`]).
//! - `sjournal.fire`, `sjournal.once`, `sjournal.slot.set`, `sjournal.list.push`,
//!   `sjournal.list.clear`: hook-author primitives ([`Fire`], [`Once`], [`SlotSet`],
//!   [`ListPush`], [`ListClear`]).
//! - `sjournal.injected`: what the hook printed back for an event ([`Injected`]).
//!
//! System records are maps with named fields (`rmp_serde::to_vec_named`), so that new optional
//! fields can be added without a format version change.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub const SYSTEM_PREFIX: &str = "sjournal.";
pub const KIND_RECOVERED: &str = "sjournal.recovered";
pub const KIND_UNPARSED: &str = "sjournal.unparsed";
pub const KIND_CONTEXT_SET: &str = "sjournal.context.set";
pub const KIND_CONTEXT_CLEAR: &str = "sjournal.context.clear";
pub const KIND_FIRE: &str = "sjournal.fire";
pub const KIND_ONCE: &str = "sjournal.once";
pub const KIND_SLOT_SET: &str = "sjournal.slot.set";
pub const KIND_LIST_PUSH: &str = "sjournal.list.push";
pub const KIND_LIST_CLEAR: &str = "sjournal.list.clear";
pub const KIND_INJECTED: &str = "sjournal.injected";

/// Every system kind this build writes or folds.
pub const SYSTEM_KINDS: &[&str] = &[
    KIND_RECOVERED,
    KIND_UNPARSED,
    KIND_CONTEXT_SET,
    KIND_CONTEXT_CLEAR,
    KIND_FIRE,
    KIND_ONCE,
    KIND_SLOT_SET,
    KIND_LIST_PUSH,
    KIND_LIST_CLEAR,
    KIND_INJECTED,
];

/// Written after recovery cut a torn tail: where, how much, and where the bytes were kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovered {
    /// File offset where the cut bytes started (the new end of the valid prefix).
    pub offset: u64,
    /// How many bytes were cut.
    pub length: u64,
    /// blake3 (unkeyed) of the cut bytes, hex.
    pub blake3: String,
    /// File name of the quarantine copy, in the journal's directory.
    pub quarantine: String,
    /// What was wrong at `offset`.
    pub reason: String,
}

/// Input that did not parse as JSON, kept as it came.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unparsed {
    #[serde(with = "serde_bytes")]
    pub raw: Vec<u8>,
    pub error: String,
}

/// Sets a context entry. `channel` is `persistent` (kept until cleared, survives compaction),
/// `ephemeral` (dropped when the turn ends) or `at-stop` (held until the turn ends, then
/// replaces the persistent entry of the same key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSet {
    pub channel: String,
    pub key: String,
    pub text: String,
}

/// Clears context entries: one key of one channel, a whole channel, or (both None) everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextClear {
    pub channel: Option<String>,
    pub key: Option<String>,
}

/// A hook fired once more. Written only while the count is below `max`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fire {
    pub name: String,
    #[serde(default)]
    pub max: Option<u64>,
}

/// Keys seen for the first time (`once` / `unseen`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Once {
    pub keys: Vec<String>,
}

/// A slot's new value, JSON text. `expect_seq` is the seq of the record that set the value
/// this write replaces (0: the slot was empty), checked under the writer's lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotSet {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub expect_seq: Option<u64>,
}

/// An item (JSON text) pushed onto a bounded list; the oldest items fall off past `max`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListPush {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub max: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListClear {
    pub name: String,
}

/// What the hook printed back to the host for the event at `event_seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injected {
    pub event_seq: u64,
    /// The kind of the event record at `event_seq`.
    pub event_kind: String,
    /// blake3 (unkeyed, hex) of `text`'s UTF-8 bytes.
    pub text_blake3: String,
    /// Length of `text` in characters.
    pub len: u64,
    /// The renderer dropped parts to fit the budget.
    pub truncated: bool,
    pub text: String,
}

pub fn is_system_kind(kind: &str) -> bool {
    kind.starts_with(SYSTEM_PREFIX)
}

/// Encodes raw JSON text as an event payload.
pub fn encode_event(raw_json: &str) -> Vec<u8> {
    rmp_serde::to_vec(raw_json).expect("encoding a str cannot fail")
}

/// Decodes an event payload back to the JSON text, without copying.
pub fn decode_event(seq: u64, payload: &[u8]) -> Result<&str> {
    rmp_serde::from_slice::<&str>(payload).map_err(|e| Error::Payload {
        seq,
        reason: e.to_string(),
    })
}

pub fn encode_system<T: Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(value).expect("encoding a system record cannot fail")
}

pub fn decode_system<'a, T: Deserialize<'a>>(seq: u64, payload: &'a [u8]) -> Result<T> {
    rmp_serde::from_slice(payload).map_err(|e| Error::Payload {
        seq,
        reason: e.to_string(),
    })
}

/// The payload as JSON for display: an event's own JSON text, or a system record's fields.
pub fn to_json(seq: u64, kind: &str, payload: &[u8]) -> Result<Box<serde_json::value::RawValue>> {
    let text = if is_system_kind(kind) {
        let v: serde_json::Value = decode_system(seq, payload)?;
        serde_json::to_string(&v).expect("a Value serializes")
    } else {
        decode_event(seq, payload)?.trim().to_owned()
    };
    serde_json::value::RawValue::from_string(text).map_err(|e| Error::Payload {
        seq,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_bytes_survive() {
        let raw = "{ \"b\":1,  \"a\" : [1.50, \"\\u00e9\"] }\n";
        let p = encode_event(raw);
        assert_eq!(decode_event(1, &p).unwrap(), raw);
    }

    #[test]
    fn system_roundtrip() {
        let r = Recovered {
            offset: 10,
            length: 3,
            blake3: "ab".into(),
            quarantine: "q".into(),
            reason: "torn".into(),
        };
        let p = encode_system(&r);
        assert_eq!(decode_system::<Recovered>(1, &p).unwrap(), r);
        let j = to_json(1, KIND_RECOVERED, &p).unwrap();
        assert!(j.get().contains("\"offset\":10"), "{}", j.get());
    }
}
