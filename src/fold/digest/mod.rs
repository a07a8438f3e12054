//! The fold digest: the facts of an [`Event`] the fold reads, pre-parsed at append time and
//! stored beside the raw JSON in the event's payload (see "Event digests" in
//! `journal-format.md`), so that a fold reads a compact binary form instead of parsing JSON.
//! To the byte codec (`format::payload`) a digest is opaque bytes after the JSON text; this
//! module derives, encodes and decodes them.
//!
//! The digest is a pure function of the record's kind and JSON text ([`derive`]): the same
//! lenient pre-pass and parse ([`Event::parse`]) the fold runs on an event without one. It keeps
//! every field of the event the fold reads, and of the raw JSON parts only those the fold
//! looks into: the tool input, the tool response where the fold reads it (a failed call's
//! error, `TaskCreate`'s new id, a file change's patch), bulk tool calls, background tasks and
//! a model request's messages. It leaves out what no fold reads (a successful `Read`'s or
//! shell call's output, `turn_id`, `outcome_unknown`), which is most of an event's bytes.
//!
//! `decode` reads the bytes directly (not through serde) and borrows every str from them;
//! the JSON texts it holds are not parsed again (see [`RawJson`](crate::event::RawJson)): the
//! fold parses each where it reads it. The strs are in one block after the body, so that
//! decoding checks their UTF-8 once per digest, not once per str; the body (`encode.rs` writes
//! it, `decode.rs` reads it) is laid out for a cheap read: the host and the kind as one-byte
//! codes, a bitmap of the fields set, then only their lengths and numbers (BENCHMARKS.md,
//! "Speed mechanisms": event digest, version 3).
//!
//! A digest carries its version ([`DIGEST_VERSION`]) and the fold version of the build that
//! wrote it ([`FOLD_VERSION`]); the fold uses only digests of both this build's versions
//! ([`readable`]), and derives the event from the JSON otherwise, so journals without
//! digests, or with digests of another version or build, fold to the same state. What a digest
//! holds depends on more than this module (the host adapters, the lenient pre-pass,
//! `tools::file_op`), and any change there that changes a state already bumps
//! `FOLD_VERSION`, which retires every stored digest with it. Change what is kept here and
//! bump `DIGEST_VERSION`. `tests/digests.rs` folds a checked-in journal with digests of this
//! version against the same journal with them cut off.

use serde::Serialize;

use super::FOLD_VERSION;
use crate::event::{Event, FileOp, Tool};

mod decode;
mod encode;
#[cfg(test)]
mod proptests;

use decode::stored;
pub use decode::{decode, decode_into, with_decoded};

/// Version of the digest's schema and of what it keeps (each version is in "Version changes"
/// in `journal-format.md`). Digests of versions 1 and 2 are not read: their events fold from
/// the JSON.
pub const DIGEST_VERSION: u32 = 3;

/// A digest as stored: `[version, fold version, body, strs]`, the body's strs in one str
/// after it (validated as UTF-8 once, not str by str). A version 1 digest, `[1, fold, body]`
/// with no strs, still reads as a digest of another version, and is not used.
#[derive(Serialize)]
struct Stored<'a>(u32, u32, #[serde(with = "serde_bytes")] &'a [u8], &'a str);

/// The versions a digest of this build carries: `(DIGEST_VERSION, FOLD_VERSION)`.
pub const CURRENT: (u32, u32) = (DIGEST_VERSION, FOLD_VERSION);

/// The fold reads a digest of these versions `(digest version, fold version)`: this build's.
pub fn readable(versions: (u32, u32)) -> bool {
    versions == CURRENT
}

fn op_code(op: FileOp) -> u8 {
    match op {
        FileOp::Read => 0,
        FileOp::Write => 1,
        FileOp::Edit => 2,
    }
}

/// The digest of an event record: `record_kind` is the record's kind, `raw_json` its JSON
/// text as journaled. Read the way the fold reads an event without a digest; what
/// `verify --digests` compares a stored digest with.
pub fn derive(record_kind: &str, raw_json: &str) -> Vec<u8> {
    let raw = crate::event::lenient::text(raw_json);
    encode(&Event::parse(record_kind, &raw))
}

/// Encodes an event record's payload: its JSON text, byte for byte, then its digest
/// ([`derive`]; left out where it would not fit, see `format::payload::encode_event`).
/// Every writer of event records encodes them here. `kind` is the record kind the event is
/// appended under (the digest reads the event as that kind).
pub fn encode_event(kind: &str, raw_json: &str) -> Vec<u8> {
    crate::format::payload::encode_event(raw_json, &derive(kind, raw_json))
}

/// [`encode_event`] of an event already parsed from `raw_json` (after the lenient pre-pass):
/// the hook parses each event once and hands the same `Event` to the digest.
pub(crate) fn encode_parsed_event(raw_json: &str, event: &Event<'_>) -> Vec<u8> {
    crate::format::payload::encode_event(raw_json, &encode(event))
}

/// Encodes what the fold reads of `e`.
pub fn encode(e: &Event<'_>) -> Vec<u8> {
    // Every field of `Event` and `Tool` is named here, so a new field does not compile until
    // it is kept below or marked as one no fold reads (then bump DIGEST_VERSION if kept).
    #[rustfmt::skip]
    let Event {
        host: _, kind: _, name: _, parsed: _, session_id: _, cwd: _, model: _,
        permission_mode: _, prompt_id: _, agent_id: _, agent_type: _, tool: _, prompt: _,
        source: _, trigger: _, reason: _, error: _, message: _, file_path: _, file_touch: _,
        new_cwd: _, summary: _, custom_instructions: _, session_kind: _, parent_session: _,
        session_duration_ms: _, context_usage_percent: _, message_count: _,
        turn_tool_calls: _, background_tasks: _, task_id: _, task_subject: _,
        model_messages: _,
        // Not kept: read by host detection on the raw JSON only.
        turn_id: _,
        // Not kept: read by `Host::prompt_author` only (memory, on the event's JSON).
        origin: _,
    } = e;
    if let Some(t) = &e.tool {
        #[rustfmt::skip]
        let Tool {
            name: _, use_id: _, input: _, response: _, failed: _, duration_ms: _, detail: _,
            exit_code: _, interrupted: _,
            // Not kept: no fold reads it.
            outcome_unknown: _,
        } = t;
    }
    let (body, strs) = encode::encode(e);
    rmp_serde::to_vec(&Stored(DIGEST_VERSION, FOLD_VERSION, &body, &strs))
        .expect("a digest always encodes")
}

/// The versions of a stored digest, `(digest version, fold version)`, if it reads as one.
pub fn version(digest: &[u8]) -> Option<(u32, u32)> {
    stored(digest).map(|(v, f, _, _)| (v, f))
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::event::{EventKind, Host, RawJson};

    /// An event with every kept field set, each to its own value.
    fn full<'a>(raws: &[RawJson<'a>]) -> Event<'a> {
        let s = |t: &'static str| Some(Cow::Borrowed(t));
        let mut e = Event::bare(
            Host::Gemini,
            EventKind::PostToolUseFailure,
            "AfterTool".into(),
        );
        e.parsed = true;
        (e.session_id, e.cwd, e.model, e.permission_mode) = (s("si"), s("cw"), s("mo"), s("pm"));
        (e.prompt_id, e.agent_id, e.agent_type) = (s("pi"), s("ai"), s("at"));
        e.tool = Some(Tool {
            name: "Edit".into(),
            use_id: s("tu"),
            input: Some(raws[0]),
            response: Some(raws[1]),
            failed: true,
            outcome_unknown: false,
            duration_ms: Some(70_000),
            detail: s("de"),
            exit_code: Some(-3),
            interrupted: true,
        });
        (e.prompt, e.source, e.trigger, e.reason) = (s("pr"), s("so"), s("tr"), s("re"));
        (e.error, e.message, e.file_path) = (s("er"), s("me"), s("fp"));
        e.file_touch = Some((FileOp::Edit, "ft".into()));
        (e.new_cwd, e.summary, e.custom_instructions) = (s("nc"), s("su"), s("ci"));
        (e.session_kind, e.parent_session) = (s("sk"), s("ps"));
        e.session_duration_ms = Some(u64::MAX);
        e.context_usage_percent = Some(42.5);
        e.message_count = Some(3);
        e.turn_tool_calls = Some(raws[2]);
        e.background_tasks = Some(raws[3]);
        (e.task_id, e.task_subject) = (s("ti"), s("ts"));
        e.model_messages = Some(vec![raws[4], raws[5]]);
        e
    }

    #[test]
    fn every_kept_field_decodes_as_encoded() {
        let raws: Vec<RawJson> = [
            r#"{"file_path":"a"}"#,
            r#"{"error":"e"}"#,
            "[1]",
            "[2]",
            r#"{"role":"user"}"#,
            r#""m""#,
        ]
        .iter()
        .map(|t| RawJson::kept(t))
        .collect();
        let e = full(&raws);
        let bytes = encode(&e);
        let d = decode(&bytes).expect("decodes");
        assert_eq!(format!("{d:?}"), format!("{e:?}"));
        assert_eq!(version(&bytes), Some(CURRENT));
        // An event with nothing set but its name, too.
        let bare = Event::bare(Host::Unknown, EventKind::Other, "x".into());
        let bytes = encode(&bare);
        let d = decode(&bytes).expect("decodes");
        assert_eq!(format!("{d:?}"), format!("{bare:?}"));
    }

    #[test]
    fn a_digest_cut_short_or_with_bytes_after_it_does_not_decode() {
        let raws: Vec<RawJson> = ["{}", "{}", "[]", "[]", "{}", "{}"]
            .iter()
            .map(|t| RawJson::kept(t))
            .collect();
        let bytes = encode(&full(&raws));
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_none(), "cut at {n}");
        }
        // A body with a byte after its last field is not one this build wrote.
        let (v, f, body, strs) = stored(&bytes).unwrap();
        let strs = strs.expect("version 2 has its strs");
        let mut longer = body.to_vec();
        longer.push(0xc0);
        let again = rmp_serde::to_vec(&Stored(v, f, &longer, strs)).unwrap();
        assert!(decode(&again).is_none());
        // Nor one with more strs than its body names.
        let more = format!("{strs}x");
        let again = rmp_serde::to_vec(&Stored(v, f, body, &more)).unwrap();
        assert!(decode(&again).is_none());
        assert!(decode(&rmp_serde::to_vec(&Stored(v, f, body, strs)).unwrap()).is_some());
        // Nor a digest with a byte after it: not a digest at all (`verify --digests` says so).
        let mut after = bytes.clone();
        after.push(0xc0);
        assert!(decode(&after).is_none());
        assert_eq!(version(&after), None);
        assert_eq!(version(&bytes), Some(CURRENT));
    }

    #[test]
    fn digests_of_other_versions_are_left_for_the_json() {
        let raws: Vec<RawJson> = ["{}", r#"{"é":1}"#, "[]", "[]", "{}", r#""ü""#]
            .iter()
            .map(|t| RawJson::kept(t))
            .collect();
        let e = full(&raws);
        let bytes = encode(&e);
        let (_, _, body, strs) = stored(&bytes).unwrap();
        // The frames of versions 1 (no strs) and 2, and this version of another fold: each
        // reads as a digest, of a version the fold does not read.
        #[derive(Serialize)]
        struct V1<'a>(u32, u32, #[serde(with = "serde_bytes")] &'a [u8]);
        let v1 = rmp_serde::to_vec(&V1(1, FOLD_VERSION, body)).unwrap();
        let v2 = rmp_serde::to_vec(&Stored(2, FOLD_VERSION, body, strs.unwrap())).unwrap();
        let old = rmp_serde::to_vec(&Stored(3, FOLD_VERSION - 1, body, strs.unwrap())).unwrap();
        for (want, d) in [((1, FOLD_VERSION), &v1), ((2, FOLD_VERSION), &v2)]
            .into_iter()
            .chain([((3, FOLD_VERSION - 1), &old)])
        {
            assert_eq!(version(d), Some(want));
            assert!(!readable(want));
            assert!(decode(d).is_none() && with_decoded(d, |_| ()).is_none());
        }
        assert!(readable(CURRENT));
    }

    #[test]
    fn a_str_length_that_ends_inside_a_character_does_not_decode() {
        let mut e = Event::bare(Host::Claude, EventKind::Stop, "Stop".into());
        e.message = Some("é".into());
        let bytes = encode(&e);
        let (v, f, body, strs) = stored(&bytes).unwrap();
        // The body's last str length (1 byte before the trailing nils) is the message's: 2.
        let at = body.iter().rposition(|&b| b == 2).unwrap();
        let mut body = body.to_vec();
        body[at] = 1;
        let bad = rmp_serde::to_vec(&Stored(v, f, &body, strs.unwrap())).unwrap();
        assert!(decode(&bad).is_none());
    }
}
