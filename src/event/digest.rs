//! The fold digest: the facts of an [`Event`] the fold reads, pre-parsed at append time and
//! stored beside the raw JSON in the event's payload (see "Event digests" in
//! `journal-format.md`), so that a fold reads MessagePack instead of parsing JSON.
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
//! [`decode`] reads the bytes directly (over `rmp`, not serde) and borrows every str from
//! them; the JSON texts it holds are not parsed again (see [`RawJson`]): the fold parses
//! each where it reads it.
//!
//! A digest carries its version ([`DIGEST_VERSION`]) and the fold version of the build that
//! wrote it ([`FOLD_VERSION`]); the fold uses only digests of the current pair and derives
//! the event from the JSON otherwise, so journals without digests, or with digests of
//! another build, fold to the same state. What a digest holds depends on more than this
//! file (the host adapters, the lenient pre-pass, `tools::file_op`), and any change there
//! that changes a state already bumps `FOLD_VERSION`, which retires every stored digest with
//! it. Change what is kept here and bump `DIGEST_VERSION`. `tests/digests.rs` folds a
//! checked-in journal with digests against the same journal with them cut off.

use std::borrow::Cow;

use serde::Serialize;

use super::{Event, EventKind, FileOp, Host, RawJson, Tool};

/// Version of the digest's schema and of what it keeps.
pub const DIGEST_VERSION: u32 = 1;

use crate::fold::FOLD_VERSION;

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    use_id: Option<&'a str>,
    input: Option<&'a str>,
    response: Option<&'a str>,
    failed: bool,
    duration_ms: Option<u64>,
    detail: Option<&'a str>,
    exit_code: Option<i64>,
    interrupted: bool,
}

/// The digest body: a MessagePack array, fields in this order.
#[derive(Serialize)]
struct Wire<'a> {
    host: &'a str,
    kind: &'a str,
    name: &'a str,
    parsed: bool,
    session_id: Option<&'a str>,
    cwd: Option<&'a str>,
    model: Option<&'a str>,
    permission_mode: Option<&'a str>,
    prompt_id: Option<&'a str>,
    agent_id: Option<&'a str>,
    agent_type: Option<&'a str>,
    tool: Option<WireTool<'a>>,
    prompt: Option<&'a str>,
    source: Option<&'a str>,
    trigger: Option<&'a str>,
    reason: Option<&'a str>,
    error: Option<&'a str>,
    message: Option<&'a str>,
    file_path: Option<&'a str>,
    file_touch: Option<(u8, &'a str)>,
    new_cwd: Option<&'a str>,
    summary: Option<&'a str>,
    custom_instructions: Option<&'a str>,
    session_kind: Option<&'a str>,
    parent_session: Option<&'a str>,
    session_duration_ms: Option<u64>,
    context_usage_percent: Option<f64>,
    message_count: Option<u64>,
    turn_tool_calls: Option<&'a str>,
    background_tasks: Option<&'a str>,
    task_id: Option<&'a str>,
    task_subject: Option<&'a str>,
    model_messages: Option<Vec<&'a str>>,
}

/// The digest as stored: `[version, fold version, body]`, the body (a [`Wire`]) as
/// MessagePack bin, so a reader can tell the versions before it reads a body of a schema it
/// may not know.
#[derive(Serialize)]
struct Stored<'a>(u32, u32, #[serde(with = "serde_bytes")] &'a [u8]);

/// The versions a digest of this build carries: `(DIGEST_VERSION, FOLD_VERSION)`.
pub const CURRENT: (u32, u32) = (DIGEST_VERSION, FOLD_VERSION);

fn op_code(op: FileOp) -> u8 {
    match op {
        FileOp::Read => 0,
        FileOp::Write => 1,
        FileOp::Edit => 2,
    }
}

fn op_from(code: u8) -> Option<FileOp> {
    Some(match code {
        0 => FileOp::Read,
        1 => FileOp::Write,
        2 => FileOp::Edit,
        _ => return None,
    })
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
    let tool = e.tool.as_ref().map(|t| WireTool {
        name: &t.name,
        use_id: cow(&t.use_id),
        input: t.input.map(RawJson::get),
        // The fold reads a response only through `Tool::read_response`.
        response: t.read_response().map(RawJson::get),
        failed: t.failed,
        duration_ms: t.duration_ms,
        detail: cow(&t.detail),
        exit_code: t.exit_code,
        interrupted: t.interrupted,
    });
    let w = Wire {
        host: e.host.as_str(),
        kind: e.kind.as_str(),
        name: &e.name,
        parsed: e.parsed,
        session_id: cow(&e.session_id),
        cwd: cow(&e.cwd),
        model: cow(&e.model),
        permission_mode: cow(&e.permission_mode),
        prompt_id: cow(&e.prompt_id),
        agent_id: cow(&e.agent_id),
        agent_type: cow(&e.agent_type),
        tool,
        prompt: cow(&e.prompt),
        source: cow(&e.source),
        trigger: cow(&e.trigger),
        reason: cow(&e.reason),
        error: cow(&e.error),
        message: cow(&e.message),
        file_path: cow(&e.file_path),
        file_touch: e
            .file_touch
            .as_ref()
            .map(|(op, p)| (op_code(*op), p.as_ref())),
        new_cwd: cow(&e.new_cwd),
        summary: cow(&e.summary),
        custom_instructions: cow(&e.custom_instructions),
        session_kind: cow(&e.session_kind),
        parent_session: cow(&e.parent_session),
        session_duration_ms: e.session_duration_ms,
        context_usage_percent: e.context_usage_percent,
        message_count: e.message_count,
        turn_tool_calls: e.turn_tool_calls.map(RawJson::get),
        background_tasks: e.background_tasks.map(RawJson::get),
        task_id: cow(&e.task_id),
        task_subject: cow(&e.task_subject),
        model_messages: e
            .model_messages
            .as_ref()
            .map(|m| m.iter().map(|r| r.get()).collect()),
    };
    let body = rmp_serde::to_vec(&w).expect("a digest always encodes");
    rmp_serde::to_vec(&Stored(DIGEST_VERSION, FOLD_VERSION, &body))
        .expect("a digest always encodes")
}

/// The versions of a stored digest, `(digest version, fold version)`, if it reads as one.
pub fn version(digest: &[u8]) -> Option<(u32, u32)> {
    stored(digest).map(|(v, f, _)| (v, f))
}

/// A MessagePack reader over the digest's bytes, written for exactly the layout `encode`
/// writes (rmp-serde's: structs as arrays, `None` as nil). Strings are borrowed from the
/// bytes; anything unexpected reads as `None`, and the fold then reads the JSON.
struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn nil(&mut self) -> bool {
        let nil = self.0.first() == Some(&0xc0);
        if nil {
            self.0 = &self.0[1..];
        }
        nil
    }

    fn array(&mut self, len: u32) -> Option<()> {
        (rmp::decode::read_array_len(&mut self.0).ok()? == len).then_some(())
    }

    /// A str (fixstr, str 8, 16 or 32), borrowed: most digest fields are, so this reads the
    /// marker itself rather than through `rmp`'s generic reader.
    fn str(&mut self) -> Option<&'a str> {
        let b = self.0;
        let (skip, len): (usize, usize) = match *b.first()? {
            m @ 0xa0..=0xbf => (1, usize::from(m & 0x1f)),
            0xd9 => (2, usize::from(*b.get(1)?)),
            0xda => (
                3,
                usize::from(u16::from_be_bytes(b.get(1..3)?.try_into().ok()?)),
            ),
            0xdb => (
                5,
                u32::from_be_bytes(b.get(1..5)?.try_into().ok()?) as usize,
            ),
            _ => return None,
        };
        let text = b.get(skip..skip.checked_add(len)?)?;
        self.0 = &b[skip + len..];
        std::str::from_utf8(text).ok()
    }

    fn bool(&mut self) -> Option<bool> {
        rmp::decode::read_bool(&mut self.0).ok()
    }

    fn uint(&mut self) -> Option<u64> {
        rmp::decode::read_int(&mut self.0).ok()
    }

    fn sint(&mut self) -> Option<i64> {
        rmp::decode::read_int(&mut self.0).ok()
    }

    fn u32(&mut self) -> Option<u32> {
        self.uint().and_then(|n| n.try_into().ok())
    }

    fn bin(&mut self) -> Option<&'a [u8]> {
        let len = rmp::decode::read_bin_len(&mut self.0).ok()? as usize;
        let (b, rest) = (self.0.get(..len)?, &self.0[len..]);
        self.0 = rest;
        Some(b)
    }

    /// `Option<T>`: nil, or a `T`.
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.nil() {
            Some(None)
        } else {
            read(self).map(Some)
        }
    }

    fn opt_str(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.opt(|r| r.str().map(Cow::Borrowed))
    }

    /// A JSON text kept by `encode` from this build's parse: not parsed again here
    /// ([`RawJson`]).
    fn opt_raw(&mut self) -> Option<Option<RawJson<'a>>> {
        self.opt(|r| r.str().map(RawJson::kept))
    }
}

/// `[version, fold version, body]`, and nothing after it (the digest ends the payload).
fn stored(digest: &[u8]) -> Option<(u32, u32, &[u8])> {
    let mut r = Rd(digest);
    r.array(3)?;
    let s = (r.u32()?, r.u32()?, r.bin()?);
    r.0.is_empty().then_some(s)
}

fn tool<'a>(r: &mut Rd<'a>) -> Option<Tool<'a>> {
    r.array(9)?;
    Some(Tool {
        name: Cow::Borrowed(r.str()?),
        use_id: r.opt_str()?,
        input: r.opt_raw()?,
        response: r.opt_raw()?,
        failed: r.bool()?,
        outcome_unknown: false,
        duration_ms: r.opt(Rd::uint)?,
        detail: r.opt_str()?,
        exit_code: r.opt(Rd::sint)?,
        interrupted: r.bool()?,
    })
}

/// The event a digest of the current version describes, as the fold reads it; None for a
/// digest of another version or one that does not decode (the fold then reads the JSON).
pub fn decode(digest: &[u8]) -> Option<Event<'_>> {
    let (version, fold_version, body) = stored(digest)?;
    if (version, fold_version) != CURRENT {
        return None;
    }
    let r = &mut Rd(body);
    r.array(33)?;
    let host = Host::from_name(r.str()?)?;
    let kind_name = r.str()?;
    let kind = EventKind::from_claude(kind_name);
    if kind.as_str() != kind_name {
        return None;
    }
    let mut e = Event::bare(host, kind, Cow::Borrowed(r.str()?));
    e.parsed = r.bool()?;
    e.session_id = r.opt_str()?;
    e.cwd = r.opt_str()?;
    e.model = r.opt_str()?;
    e.permission_mode = r.opt_str()?;
    e.prompt_id = r.opt_str()?;
    e.agent_id = r.opt_str()?;
    e.agent_type = r.opt_str()?;
    e.tool = r.opt(tool)?;
    e.prompt = r.opt_str()?;
    e.source = r.opt_str()?;
    e.trigger = r.opt_str()?;
    e.reason = r.opt_str()?;
    e.error = r.opt_str()?;
    e.message = r.opt_str()?;
    e.file_path = r.opt_str()?;
    e.file_touch = r.opt(|r| {
        r.array(2)?;
        let op = op_from(r.uint()?.try_into().ok()?)?;
        Some((op, Cow::Borrowed(r.str()?)))
    })?;
    e.new_cwd = r.opt_str()?;
    e.summary = r.opt_str()?;
    e.custom_instructions = r.opt_str()?;
    e.session_kind = r.opt_str()?;
    e.parent_session = r.opt_str()?;
    e.session_duration_ms = r.opt(Rd::uint)?;
    e.context_usage_percent = r.opt(|r| rmp::decode::read_f64(&mut r.0).ok())?;
    e.message_count = r.opt(Rd::uint)?;
    e.turn_tool_calls = r.opt_raw()?;
    e.background_tasks = r.opt_raw()?;
    e.task_id = r.opt_str()?;
    e.task_subject = r.opt_str()?;
    e.model_messages = r.opt(|r| {
        let n = rmp::decode::read_array_len(&mut r.0).ok()?;
        (0..n).map(|_| r.str().map(RawJson::kept)).collect()
    })?;
    r.0.is_empty().then_some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (v, f, body) = stored(&bytes).unwrap();
        let mut longer = body.to_vec();
        longer.push(0xc0);
        let again = rmp_serde::to_vec(&Stored(v, f, &longer)).unwrap();
        assert!(decode(&again).is_none());
        // Nor a digest with a byte after it: not a digest at all (`verify --digests` says so).
        let mut after = bytes.clone();
        after.push(0xc0);
        assert!(decode(&after).is_none());
        assert_eq!(version(&after), None);
        assert_eq!(version(&bytes), Some(CURRENT));
    }
}
