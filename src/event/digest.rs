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
//! each where it reads it. Version 2 keeps the strs in one block after the body, so that
//! decoding checks their UTF-8 once per digest, not once per str.
//!
//! A digest carries its version ([`DIGEST_VERSION`]) and the fold version of the build that
//! wrote it ([`FOLD_VERSION`]); the fold uses only digests of its own fold version and of a
//! digest version it reads ([`READ_VERSIONS`]: this one and 1, whose strs are inline), and
//! derives the event from the JSON otherwise, so journals without digests, or with digests
//! of another build, fold to the same state. What a digest holds depends on more than this
//! file (the host adapters, the lenient pre-pass, `tools::file_op`), and any change there
//! that changes a state already bumps `FOLD_VERSION`, which retires every stored digest with
//! it. Change what is kept here and bump `DIGEST_VERSION`. `tests/digests.rs` folds a
//! checked-in journal with digests against the same journal with them cut off.

use std::borrow::Cow;

use serde::Serialize;

use super::{Event, EventKind, FileOp, Host, RawJson, Tool};

/// Version of the digest's schema and of what it keeps: 2 keeps what 1 did, its strs in one
/// block after the body (checked as UTF-8 once per digest, not once per str).
pub const DIGEST_VERSION: u32 = 2;

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

/// The digest body: a MessagePack array, fields in this order. `S` is what stands for a
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

/// A digest of version 2 as stored: `[version, fold version, body, strs]`, the body's strs
/// in one str after it (validated as UTF-8 once, not str by str).
#[derive(Serialize)]
struct StoredV2<'a>(u32, u32, #[serde(with = "serde_bytes")] &'a [u8], &'a str);

/// The versions a digest of this build carries: `(DIGEST_VERSION, FOLD_VERSION)`.
pub const CURRENT: (u32, u32) = (DIGEST_VERSION, FOLD_VERSION);

/// The digest versions the fold reads (with its own `FOLD_VERSION`): this build's, and
/// version 1, which journals written before version 2 carry (same fields, strs inline).
pub const READ_VERSIONS: [u32; 2] = [1, DIGEST_VERSION];

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

/// The digest of version `version` (one of [`READ_VERSIONS`]) that `record_kind` and
/// `raw_json` derive: what `verify --digests` compares a stored digest with.
pub fn derive_as(version: u32, record_kind: &str, raw_json: &str) -> Option<Vec<u8>> {
    let raw = super::lenient_json::text(raw_json);
    let e = Event::parse(record_kind, &raw);
    match version {
        1 => Some(encode_v1(&e)),
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
    let mut strs = String::new();
    let w = wire(e, |s| {
        strs.push_str(s);
        s.len() as u64
    });
    let body = rmp_serde::to_vec(&w).expect("a digest always encodes");
    rmp_serde::to_vec(&StoredV2(DIGEST_VERSION, FOLD_VERSION, &body, &strs))
        .expect("a digest always encodes")
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

/// A MessagePack reader over the digest's bytes, written for exactly the layout `encode`
/// writes (rmp-serde's: structs as arrays, `None` as nil). Strs are borrowed: inline in the
/// body (version 1), or from the digest's block of strs (version 2, the second field: what
/// is left of it), the body giving each one's length. Anything unexpected reads as `None`,
/// and the fold then reads the JSON.
struct Rd<'a>(&'a [u8], Option<&'a str>);

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

    /// A str of the body: the next `len` bytes of the block (version 2; `split_at_checked`
    /// refuses a length that ends inside a character), or inline (version 1).
    fn str(&mut self) -> Option<&'a str> {
        let Some(strs) = self.1 else {
            return self.inline_str();
        };
        let len = match self.0.first() {
            // A positive fixint: most lengths are.
            Some(&m) if m < 0x80 => {
                self.0 = &self.0[1..];
                usize::from(m)
            }
            _ => usize::try_from(self.uint()?).ok()?,
        };
        let (s, rest) = strs.split_at_checked(len)?;
        self.1 = Some(rest);
        Some(s)
    }

    /// A str (fixstr, str 8, 16 or 32) where it stands, borrowed: this reads the marker
    /// itself rather than through `rmp`'s generic reader.
    fn inline_str(&mut self) -> Option<&'a str> {
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

/// `[version, fold version, body]` (version 1) or `[version, fold version, body, strs]`
/// (version 2), and nothing after it (the digest ends the payload).
fn stored(digest: &[u8]) -> Option<(u32, u32, &[u8], Option<&str>)> {
    let mut r = Rd(digest, None);
    let n = rmp::decode::read_array_len(&mut r.0).ok()?;
    let (v, f, body) = (r.u32()?, r.u32()?, r.bin()?);
    let strs = match n {
        3 => None,
        4 => Some(r.inline_str()?),
        _ => return None,
    };
    r.0.is_empty().then_some((v, f, body, strs))
}

/// A reader over the body of a digest the fold reads ([`readable`]; what [`stored`] reads,
/// read as `encode` and `encode_v1` write the head: both versions are positive fixints),
/// holding the block of strs of a version 2 digest, checked as UTF-8 here, once.
fn readable_body(digest: &[u8]) -> Option<Rd<'_>> {
    const _: () = assert!(DIGEST_VERSION < 0x80 && FOLD_VERSION < 0x80);
    const V: u8 = DIGEST_VERSION as u8;
    const F: u8 = FOLD_VERSION as u8;
    let (strs, rest) = match digest {
        [0x94, V, F, rest @ ..] => (true, rest),
        [0x93, 1, F, rest @ ..] => (false, rest),
        _ => return None,
    };
    let mut r = Rd(rest, None);
    let body = r.bin()?;
    let strs = if strs { Some(r.inline_str()?) } else { None };
    r.0.is_empty().then_some(Rd(body, strs))
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
    let_event!(e = digest);
    Some(e)
}

/// Calls `f` with the event a digest of the current version describes (see [`decode`]);
/// None, without calling it, for a digest that [`decode`] reads as None. The event stays on
/// this function's stack: an `Event` is large, and handing it out by value moves it (the
/// fold's load path calls this once per record).
#[inline]
pub fn with_decoded<R>(digest: &[u8], f: impl FnOnce(&Event<'_>) -> R) -> Option<R> {
    let_event!(e = digest);
    Some(f(&e))
}

/// `let $e` = the event `$digest` describes, in the caller's frame (built there, not moved
/// in: `decode` returns it, `with_decoded` lends it); the caller returns None if it does not
/// decode.
macro_rules! let_event {
    ($e:ident = $digest:expr) => {
        let r = &mut readable_body($digest)?;
        r.array(33)?;
        let host = Host::from_name(r.str()?)?;
        let kind_name = r.str()?;
        let kind = EventKind::from_claude(kind_name);
        if kind.as_str() != kind_name {
            return None;
        }
        // One struct literal, fields in the digest's order: the event is built where it stays.
        let $e = Event {
            host,
            kind,
            name: Cow::Borrowed(r.str()?),
            parsed: r.bool()?,
            session_id: r.opt_str()?,
            cwd: r.opt_str()?,
            model: r.opt_str()?,
            permission_mode: r.opt_str()?,
            prompt_id: r.opt_str()?,
            agent_id: r.opt_str()?,
            agent_type: r.opt_str()?,
            tool: r.opt(tool)?,
            prompt: r.opt_str()?,
            source: r.opt_str()?,
            trigger: r.opt_str()?,
            reason: r.opt_str()?,
            error: r.opt_str()?,
            message: r.opt_str()?,
            file_path: r.opt_str()?,
            file_touch: r.opt(|r| {
                r.array(2)?;
                let op = op_from(r.uint()?.try_into().ok()?)?;
                Some((op, Cow::Borrowed(r.str()?)))
            })?,
            new_cwd: r.opt_str()?,
            summary: r.opt_str()?,
            custom_instructions: r.opt_str()?,
            session_kind: r.opt_str()?,
            parent_session: r.opt_str()?,
            session_duration_ms: r.opt(Rd::uint)?,
            context_usage_percent: r.opt(|r| rmp::decode::read_f64(&mut r.0).ok())?,
            message_count: r.opt(Rd::uint)?,
            turn_tool_calls: r.opt_raw()?,
            background_tasks: r.opt_raw()?,
            task_id: r.opt_str()?,
            task_subject: r.opt_str()?,
            model_messages: r.opt(|r| {
                let n = rmp::decode::read_array_len(&mut r.0).ok()?;
                (0..n).map(|_| r.str().map(RawJson::kept)).collect()
            })?,
            // Not kept (see `encode`).
            turn_id: None,
        };
        if !r.0.is_empty() || r.1.is_some_and(|strs| !strs.is_empty()) {
            return None;
        }
    };
}
use let_event;

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
    fn a_version_1_digest_decodes_as_the_same_event() {
        let raws: Vec<RawJson> = ["{}", r#"{"é":1}"#, "[]", "[]", "{}", r#""ü""#]
            .iter()
            .map(|t| RawJson::kept(t))
            .collect();
        let mut e = full(&raws);
        e.prompt = Some("naïve – ok".into());
        let (v1, v2) = (encode_v1(&e), encode(&e));
        assert_eq!(version(&v1), Some((1, FOLD_VERSION)));
        assert_eq!(version(&v2), Some(CURRENT));
        assert!(readable((1, FOLD_VERSION)) && readable(CURRENT));
        assert!(!readable((1, FOLD_VERSION - 1)) && !readable((DIGEST_VERSION + 1, FOLD_VERSION)));
        let (a, b) = (decode(&v1).expect("v1"), decode(&v2).expect("v2"));
        assert_eq!(format!("{a:?}"), format!("{e:?}"));
        assert_eq!(format!("{b:?}"), format!("{e:?}"));
        // Version 2's strs are one block, after the body.
        let (_, _, _, strs) = stored(&v2).unwrap();
        assert!(strs.unwrap().contains("naïve – ok"));
        assert_eq!(stored(&v1).unwrap().3, None);
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
