//! The fold digest: the facts of an [`Event`] the fold reads, pre-parsed at append time and
//! stored beside the raw JSON in the event's payload (see "Event digests" in
//! `journal-format.md`), so that a fold reads a compact binary form instead of parsing JSON.
//!
//! The digest is a pure function of the record's kind and JSON text ([`derive`]): the same
//! lenient pre-pass and [`Event::parse`] the fold runs on an event without one. It keeps
//! every field of the event the fold reads, and of the raw JSON parts only those the fold
//! looks into: the tool input, the tool response where the fold reads it (a failed call's
//! error, `TaskCreate`'s new id, a file change's patch), bulk tool calls, background tasks and
//! a model request's messages. It leaves out what no fold reads (a successful `Read`'s or
//! shell call's output, `turn_id`, `outcome_unknown`), which is most of an
//! event's bytes.
//!
//! [`decode`] reads the bytes directly (not through serde) and borrows every str from them;
//! the JSON texts it holds are not parsed again (see [`RawJson`]): the fold parses each where
//! it reads it. Version 2 keeps the strs in one block after the body, so that decoding checks
//! their UTF-8 once per digest, not once per str. Version 3 (`v3.rs` writes it, `read_v3.rs`
//! reads it) keeps that block and lays the body out for a cheap read: the host and the kind
//! as one-byte codes, a bitmap of the fields set, then only their lengths and numbers, where
//! versions 1 and 2 have a MessagePack marker for every field and the host's and kind's
//! names, which a reader matched against every host and kind.
//!
//! A digest carries its version ([`DIGEST_VERSION`]) and the fold version of the build that
//! wrote it ([`FOLD_VERSION`]); the fold uses only digests of its own fold version and of a
//! digest version it reads ([`READ_VERSIONS`]: this one, and 1 and 2, which journals written
//! before it carry), and derives the event from the JSON otherwise, so journals without
//! digests, or with digests of another build, fold to the same state. What a digest holds
//! depends on more than this file (the host adapters, the lenient pre-pass,
//! `tools::file_op`), and any change there that changes a state already bumps
//! `FOLD_VERSION`, which retires every stored digest with it. Change what is kept here and
//! bump `DIGEST_VERSION`. `tests/digests.rs` folds a checked-in journal with digests of each
//! version read against the same journal with them cut off.

use std::borrow::Cow;

use serde::Serialize;

use super::{Event, FileOp, RawJson, Tool};

#[cfg(test)]
mod proptests;
mod read;
mod read_v3;
mod v3;

use read::stored;
pub use read::{decode, decode_into, with_decoded};

/// Version of the digest's schema and of what it keeps: 2 keeps what 1 did, its strs in one
/// block after the body (checked as UTF-8 once per digest, not once per str); 3 keeps what 2
/// did, its body a fixed head (codes for the host and kind, a bitmap of the fields set) and
/// the lengths and numbers of the fields set.
pub const DIGEST_VERSION: u32 = 3;

use crate::fold::FOLD_VERSION;

/// A tool call in the body; `S` as in [`Wire`].
#[derive(Serialize)]
struct WireTool<S> {
    name: S,
    use_id: Option<S>,
    input: Option<S>,
    response: Option<S>,
    failed: bool,
    duration_ms: Option<u64>,
    detail: Option<S>,
    exit_code: Option<i64>,
    interrupted: bool,
}

/// The digest body of versions 1 and 2: a MessagePack array, fields in this order. `S` is what stands for a
/// str: the str itself in version 1, its length in bytes in version 2 (whose strs follow
/// the body in one block, in the order the body names them).
#[derive(Serialize)]
struct Wire<S> {
    host: S,
    kind: S,
    name: S,
    parsed: bool,
    session_id: Option<S>,
    cwd: Option<S>,
    model: Option<S>,
    permission_mode: Option<S>,
    prompt_id: Option<S>,
    agent_id: Option<S>,
    agent_type: Option<S>,
    tool: Option<WireTool<S>>,
    prompt: Option<S>,
    source: Option<S>,
    trigger: Option<S>,
    reason: Option<S>,
    error: Option<S>,
    message: Option<S>,
    file_path: Option<S>,
    file_touch: Option<(u8, S)>,
    new_cwd: Option<S>,
    summary: Option<S>,
    custom_instructions: Option<S>,
    session_kind: Option<S>,
    parent_session: Option<S>,
    session_duration_ms: Option<u64>,
    context_usage_percent: Option<f64>,
    message_count: Option<u64>,
    turn_tool_calls: Option<S>,
    background_tasks: Option<S>,
    task_id: Option<S>,
    task_subject: Option<S>,
    model_messages: Option<Vec<S>>,
}

/// A digest of version 1 as stored: `[version, fold version, body]`, the body (a [`Wire`])
/// as MessagePack bin, so a reader can tell the versions before it reads a body of a schema
/// it may not know.
#[derive(Serialize)]
struct Stored<'a>(u32, u32, #[serde(with = "serde_bytes")] &'a [u8]);

/// A digest of version 2 or 3 as stored: `[version, fold version, body, strs]`, the body's
/// strs in one str after it (validated as UTF-8 once, not str by str).
#[derive(Serialize)]
struct StoredV2<'a>(u32, u32, #[serde(with = "serde_bytes")] &'a [u8], &'a str);

/// The versions a digest of this build carries: `(DIGEST_VERSION, FOLD_VERSION)`.
pub const CURRENT: (u32, u32) = (DIGEST_VERSION, FOLD_VERSION);

/// The digest versions the fold reads (with its own `FOLD_VERSION`): this build's, and
/// versions 1 and 2, which journals written before version 3 carry (the same fields: strs
/// inline in 1, a MessagePack body in 2).
pub const READ_VERSIONS: [u32; 3] = [1, 2, DIGEST_VERSION];

/// The fold reads a digest of these versions `(digest version, fold version)`.
pub fn readable((version, fold_version): (u32, u32)) -> bool {
    fold_version == FOLD_VERSION && READ_VERSIONS.contains(&version)
}

fn op_code(op: FileOp) -> u8 {
    match op {
        FileOp::Read => 0,
        FileOp::Write => 1,
        FileOp::Edit => 2,
    }
}

fn cow<'a>(c: &'a Option<Cow<'_, str>>) -> Option<&'a str> {
    c.as_deref()
}

/// The digest of an event record: `record_kind` is the record's kind, `raw_json` its JSON
/// text as journaled. Read the way the fold reads an event without a digest.
pub fn derive(record_kind: &str, raw_json: &str) -> Vec<u8> {
    let raw = super::lenient_json::text(raw_json);
    encode(&Event::parse(record_kind, &raw))
}

/// The digest of version `version` (one of [`READ_VERSIONS`]) that `record_kind` and
/// `raw_json` derive: what `verify --digests` compares a stored digest with.
pub fn derive_as(version: u32, record_kind: &str, raw_json: &str) -> Option<Vec<u8>> {
    let raw = super::lenient_json::text(raw_json);
    let e = Event::parse(record_kind, &raw);
    match version {
        1 => Some(encode_v1(&e)),
        2 => Some(encode_v2(&e)),
        DIGEST_VERSION => Some(encode(&e)),
        _ => None,
    }
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
    let (body, strs) = v3::encode(e);
    rmp_serde::to_vec(&StoredV2(DIGEST_VERSION, FOLD_VERSION, &body, &strs))
        .expect("a digest always encodes")
}

/// What [`encode`] wrote before version 3: the same fields, the body in MessagePack.
fn encode_v2(e: &Event<'_>) -> Vec<u8> {
    let mut strs = String::new();
    let w = wire(e, |s| {
        strs.push_str(s);
        s.len() as u64
    });
    let body = rmp_serde::to_vec(&w).expect("a digest always encodes");
    rmp_serde::to_vec(&StoredV2(2, FOLD_VERSION, &body, &strs)).expect("a digest always encodes")
}

/// What [`encode`] wrote before version 2: the same fields, each str inline.
fn encode_v1(e: &Event<'_>) -> Vec<u8> {
    let body = rmp_serde::to_vec(&wire(e, |s| s)).expect("a digest always encodes");
    rmp_serde::to_vec(&Stored(1, FOLD_VERSION, &body)).expect("a digest always encodes")
}

/// The body of `e`'s digest, each str as `s` makes it. Fields are built in the body's order
/// (a struct literal evaluates its fields as written), so `s` sees the strs in that order.
fn wire<'a, S>(e: &'a Event<'_>, mut s: impl FnMut(&'a str) -> S) -> Wire<S> {
    Wire {
        host: s(e.host.as_str()),
        kind: s(e.kind.as_str()),
        name: s(&e.name),
        parsed: e.parsed,
        session_id: o(&mut s, cow(&e.session_id)),
        cwd: o(&mut s, cow(&e.cwd)),
        model: o(&mut s, cow(&e.model)),
        permission_mode: o(&mut s, cow(&e.permission_mode)),
        prompt_id: o(&mut s, cow(&e.prompt_id)),
        agent_id: o(&mut s, cow(&e.agent_id)),
        agent_type: o(&mut s, cow(&e.agent_type)),
        tool: e.tool.as_ref().map(|t| WireTool {
            name: s(&t.name),
            use_id: o(&mut s, cow(&t.use_id)),
            input: o(&mut s, t.input.map(RawJson::get)),
            // The fold reads a response only through `Tool::read_response`.
            response: o(&mut s, t.read_response().map(RawJson::get)),
            failed: t.failed,
            duration_ms: t.duration_ms,
            detail: o(&mut s, cow(&t.detail)),
            exit_code: t.exit_code,
            interrupted: t.interrupted,
        }),
        prompt: o(&mut s, cow(&e.prompt)),
        source: o(&mut s, cow(&e.source)),
        trigger: o(&mut s, cow(&e.trigger)),
        reason: o(&mut s, cow(&e.reason)),
        error: o(&mut s, cow(&e.error)),
        message: o(&mut s, cow(&e.message)),
        file_path: o(&mut s, cow(&e.file_path)),
        file_touch: e
            .file_touch
            .as_ref()
            .map(|(op, p)| (op_code(*op), s(p.as_ref()))),
        new_cwd: o(&mut s, cow(&e.new_cwd)),
        summary: o(&mut s, cow(&e.summary)),
        custom_instructions: o(&mut s, cow(&e.custom_instructions)),
        session_kind: o(&mut s, cow(&e.session_kind)),
        parent_session: o(&mut s, cow(&e.parent_session)),
        session_duration_ms: e.session_duration_ms,
        context_usage_percent: e.context_usage_percent,
        message_count: e.message_count,
        turn_tool_calls: o(&mut s, e.turn_tool_calls.map(RawJson::get)),
        background_tasks: o(&mut s, e.background_tasks.map(RawJson::get)),
        task_id: o(&mut s, cow(&e.task_id)),
        task_subject: o(&mut s, cow(&e.task_subject)),
        model_messages: e
            .model_messages
            .as_ref()
            .map(|m| m.iter().map(|r| s(r.get())).collect()),
    }
}

/// `c` made by `s`, if set.
fn o<'a, S>(s: &mut impl FnMut(&'a str) -> S, c: Option<&'a str>) -> Option<S> {
    c.map(s)
}

/// The versions of a stored digest, `(digest version, fold version)`, if it reads as one.
pub fn version(digest: &[u8]) -> Option<(u32, u32)> {
    stored(digest).map(|(v, f, _, _)| (v, f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, Host};

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
        let again = rmp_serde::to_vec(&StoredV2(v, f, &longer, strs)).unwrap();
        assert!(decode(&again).is_none());
        // Nor one with more strs than its body names.
        let more = format!("{strs}x");
        let again = rmp_serde::to_vec(&StoredV2(v, f, body, &more)).unwrap();
        assert!(decode(&again).is_none());
        assert!(decode(&rmp_serde::to_vec(&StoredV2(v, f, body, strs)).unwrap()).is_some());
        // Nor a digest with a byte after it: not a digest at all (`verify --digests` says so).
        let mut after = bytes.clone();
        after.push(0xc0);
        assert!(decode(&after).is_none());
        assert_eq!(version(&after), None);
        assert_eq!(version(&bytes), Some(CURRENT));
    }

    #[test]
    fn digests_of_versions_1_and_2_decode_as_the_same_event() {
        let raws: Vec<RawJson> = ["{}", r#"{"é":1}"#, "[]", "[]", "{}", r#""ü""#]
            .iter()
            .map(|t| RawJson::kept(t))
            .collect();
        let mut e = full(&raws);
        e.prompt = Some("naïve – ok".into());
        let (v1, v2, v3) = (encode_v1(&e), encode_v2(&e), encode(&e));
        assert_eq!(version(&v1), Some((1, FOLD_VERSION)));
        assert_eq!(version(&v2), Some((2, FOLD_VERSION)));
        assert_eq!(version(&v3), Some(CURRENT));
        assert!(READ_VERSIONS.iter().all(|&v| readable((v, FOLD_VERSION))));
        assert!(!readable((1, FOLD_VERSION - 1)) && !readable((DIGEST_VERSION + 1, FOLD_VERSION)));
        for (v, bytes) in [(1, &v1), (2, &v2), (3, &v3)] {
            let d = decode(bytes).unwrap_or_else(|| panic!("version {v}"));
            assert_eq!(format!("{d:?}"), format!("{e:?}"), "version {v}");
        }
        // The strs of versions 2 and 3 are one block, after the body; version 3's body is the
        // smallest (no marker per field, codes for the host and the kind).
        for bytes in [&v2, &v3] {
            let (_, _, _, strs) = stored(bytes).unwrap();
            assert!(strs.unwrap().contains("naïve – ok"));
        }
        assert_eq!(stored(&v1).unwrap().3, None);
        assert!(stored(&v3).unwrap().2.len() < stored(&v2).unwrap().2.len());
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
        let bad = rmp_serde::to_vec(&StoredV2(v, f, &body, strs.unwrap())).unwrap();
        assert!(decode(&bad).is_none());
    }
}
