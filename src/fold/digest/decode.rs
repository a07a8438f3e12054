//! Reading a digest: its frame (`[version, fold version, body, strs]`; a frame of another
//! version or another build's fold is told apart and left for the JSON), then the body this
//! build writes (`encode.rs`): the head, then each field set, in the order of its bit, its str
//! borrowed from the digest's block of strs. One list of the body's fields ([`body_fields`])
//! serves both [`decode`] (an event built where it stays) and [`decode_into`] (an event
//! written in place).

use std::borrow::Cow;

use super::encode::{bit, flag, HOSTS, KINDS};
use super::FOLD_VERSION;
use crate::event::{Event, EventKind, FileOp, Host, RawJson, Tool};

fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// A reader over a body after its head: the fields (`b`), what is left of the block
/// of strs (`s`, checked as UTF-8 once, by the caller) and the presence bitmap.
struct Body<'a> {
    b: &'a [u8],
    s: &'a str,
    bits: u64,
}

impl<'a> Body<'a> {
    /// The head of `body`: host, kind, flags and a reader over its fields; None for a code
    /// or a bit this version does not define, or a tool's bit or flag without a tool.
    #[inline(always)]
    fn head(body: &'a [u8], strs: &'a str) -> Option<(Host, EventKind, u8, Self)> {
        let (head, b) = body.split_first_chunk::<11>()?;
        let host = *HOSTS.get(usize::from(head[0]))?;
        let kind = *KINDS.get(usize::from(head[1]))?;
        let flags = head[2];
        let bits = u64::from_le_bytes(head[3..].try_into().ok()?);
        let no_tool = bits & bit::TOOL == 0;
        if flags & !flag::ALL != 0
            || bits & !bit::ALL != 0
            || no_tool
                && (bits & bit::OF_TOOL != 0
                    || flags & (flag::TOOL_FAILED | flag::TOOL_INTERRUPTED) != 0)
        {
            return None;
        }
        Some((host, kind, flags, Body { b, s: strs, bits }))
    }

    /// An unsigned LEB128 number, in its shortest form and at most 64 bits.
    #[inline(always)]
    fn uint(&mut self) -> Option<u64> {
        let (&first, rest) = self.b.split_first()?;
        self.b = rest;
        if first < 0x80 {
            return Some(u64::from(first));
        }
        self.uint_long(first)
    }

    #[cold]
    fn uint_long(&mut self, first: u8) -> Option<u64> {
        let mut n = u64::from(first & 0x7f);
        let mut shift = 7;
        loop {
            let (&byte, rest) = self.b.split_first()?;
            self.b = rest;
            let low = u64::from(byte & 0x7f);
            // Past 64 bits, or a last byte of zero (a longer form than needed): not ours.
            if shift == 63 && byte > 1 || byte == 0 {
                return None;
            }
            n |= low << shift;
            if byte < 0x80 {
                return Some(n);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    /// The next str of the block, its length read from the fields (`split_at_checked`
    /// refuses one that ends inside a character).
    #[inline(always)]
    fn str(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.uint()?).ok()?;
        let (s, rest) = self.s.split_at_checked(len)?;
        self.s = rest;
        Some(s)
    }

    /// `Some(read)` if the field of `bit` is set, else `Some(None)`; None if it does not read.
    #[inline(always)]
    fn opt<T>(&mut self, bit: u64, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.bits & bit == 0 {
            Some(None)
        } else {
            read(self).map(Some)
        }
    }

    /// A str field: [`opt`](Self::opt) of [`str`](Self::str), written out (most fields are
    /// strs, and a closure here was not always inlined).
    #[inline(always)]
    fn opt_str(&mut self, bit: u64) -> Option<Option<Cow<'a, str>>> {
        if self.bits & bit == 0 {
            return Some(None);
        }
        Some(Some(Cow::Borrowed(self.str()?)))
    }

    /// A JSON text kept by `encode` from this build's parse: not parsed again ([`RawJson`]).
    #[inline(always)]
    fn opt_raw(&mut self, bit: u64) -> Option<Option<RawJson<'a>>> {
        if self.bits & bit == 0 {
            return Some(None);
        }
        Some(Some(RawJson::kept(self.str()?)))
    }

    fn sint(&mut self) -> Option<i64> {
        self.uint().map(unzigzag)
    }

    fn f64(&mut self) -> Option<f64> {
        let (n, rest) = self.b.split_first_chunk::<8>()?;
        self.b = rest;
        Some(f64::from_bits(u64::from_le_bytes(*n)))
    }

    fn op(&mut self) -> Option<FileOp> {
        let (&code, rest) = self.b.split_first()?;
        self.b = rest;
        op_from(code)
    }

    /// `n` JSON texts (`n` read first).
    fn raws(&mut self) -> Option<Vec<RawJson<'a>>> {
        let n = usize::try_from(self.uint()?).ok()?;
        // Each length takes a byte at least: a count past what is left is not ours (an early
        // exit: the reads below would run out of bytes too).
        if n > self.b.len() {
            return None;
        }
        (0..n).map(|_| self.str().map(RawJson::kept)).collect()
    }

    /// Every field and str read, nothing left.
    #[inline(always)]
    fn done(&self) -> bool {
        self.b.is_empty() && self.s.is_empty()
    }
}

/// Calls `$emit!($($pre)*; plain fields; optional fields)` with every field of an event
/// after its host and kind, each with the expression that reads it from `$r` (a [`Body`]
/// after its head; `$flags` the head's flags), in the digest's order. The one list of a
/// body's fields: [`let_event`] builds an event of them, [`decode_into`]
/// assigns them to one in place.
macro_rules! body_fields {
    ($r:ident, $flags:ident, $emit:ident!($($pre:tt)*)) => {{
        use $crate::fold::digest::encode::{bit, flag};
        $emit! { $($pre)*;
            name: Cow::Borrowed($r.str()?),
            parsed: $flags & flag::PARSED != 0,
            // Not kept (see `encode`).
            origin: $crate::event::Origin::default();
            session_id: $r.opt_str(bit::SESSION_ID)?,
            cwd: $r.opt_str(bit::CWD)?,
            model: $r.opt_str(bit::MODEL)?,
            permission_mode: $r.opt_str(bit::PERMISSION_MODE)?,
            prompt_id: $r.opt_str(bit::PROMPT_ID)?,
            agent_id: $r.opt_str(bit::AGENT_ID)?,
            agent_type: $r.opt_str(bit::AGENT_TYPE)?,
            tool: $r.opt(bit::TOOL, |r| {
                Some(Tool {
                    name: Cow::Borrowed(r.str()?),
                    use_id: r.opt_str(bit::TOOL_USE_ID)?,
                    input: r.opt_raw(bit::TOOL_INPUT)?,
                    response: r.opt_raw(bit::TOOL_RESPONSE)?,
                    failed: $flags & flag::TOOL_FAILED != 0,
                    outcome_unknown: false,
                    duration_ms: r.opt(bit::TOOL_DURATION_MS, Body::uint)?,
                    detail: r.opt_str(bit::TOOL_DETAIL)?,
                    exit_code: r.opt(bit::TOOL_EXIT_CODE, Body::sint)?,
                    interrupted: $flags & flag::TOOL_INTERRUPTED != 0,
                })
            })?,
            prompt: $r.opt_str(bit::PROMPT)?,
            source: $r.opt_str(bit::SOURCE)?,
            trigger: $r.opt_str(bit::TRIGGER)?,
            reason: $r.opt_str(bit::REASON)?,
            error: $r.opt_str(bit::ERROR)?,
            message: $r.opt_str(bit::MESSAGE)?,
            file_path: $r.opt_str(bit::FILE_PATH)?,
            file_touch: $r.opt(bit::FILE_TOUCH, |r| {
                Some((r.op()?, Cow::Borrowed(r.str()?)))
            })?,
            new_cwd: $r.opt_str(bit::NEW_CWD)?,
            summary: $r.opt_str(bit::SUMMARY)?,
            custom_instructions: $r.opt_str(bit::CUSTOM_INSTRUCTIONS)?,
            session_kind: $r.opt_str(bit::SESSION_KIND)?,
            parent_session: $r.opt_str(bit::PARENT_SESSION)?,
            session_duration_ms: $r.opt(bit::SESSION_DURATION_MS, Body::uint)?,
            context_usage_percent: $r.opt(bit::CONTEXT_USAGE_PERCENT, Body::f64)?,
            message_count: $r.opt(bit::MESSAGE_COUNT, Body::uint)?,
            turn_tool_calls: $r.opt_raw(bit::TURN_TOOL_CALLS)?,
            background_tasks: $r.opt_raw(bit::BACKGROUND_TASKS)?,
            task_id: $r.opt_str(bit::TASK_ID)?,
            task_subject: $r.opt_str(bit::TASK_SUBJECT)?,
            model_messages: $r.opt(bit::MODEL_MESSAGES, Body::raws)?,
            // Not kept (see `encode`).
            turn_id: None,
        }
    }};
}

/// `let $e` = the event `$body` and `$strs` describe, in the caller's frame; the caller
/// returns None if it does not decode.
macro_rules! let_event {
    ($e:ident = $body:expr, $strs:expr) => {
        let (host, kind, flags, mut r) = Body::head($body, $strs)?;
        let r = &mut r;
        // One struct literal, fields in the digest's order: the event is built where it stays.
        let $e = body_fields!(r, flags, event_literal!(host, kind));
        if !r.done() {
            return None;
        }
    };
}

/// An event of `$host`, `$kind` and the fields `body_fields` reads.
macro_rules! event_literal {
    ($host:ident, $kind:ident; $($p:ident: $pv:expr),+; $($f:ident: $v:expr),+ $(,)?) => {
        Event { host: $host, kind: $kind, $($p: $pv,)+ $($f: $v),+ }
    };
}

/// Assigns the fields `body_fields` reads to `*$e`, in place; an optional field only if it is
/// set, or was (see [`put`]).
macro_rules! assign_fields {
    ($e:ident; $($p:ident: $pv:expr),+; $($f:ident: $v:expr),+ $(,)?) => {{
        // Every field named, none left out by `..`: a field `Event` gains does not compile
        // until it is read here (and so in `let_event`).
        let Event { host: _, kind: _, $($p,)+ $($f),+ } = $e;
        $(*$p = $pv;)+
        $(put($f, $v);)+
    }};
}

/// Sets an optional field of an event decoded over another: a field that was None and
/// stays None (most of an event's fields) is not written. The slots of the load's batches
/// are written by one thread and read by the other: a cache line left unwritten is not
/// taken back from the reading core (and the old value needs no drop).
#[inline(always)]
fn put<T>(field: &mut Option<T>, value: Option<T>) {
    if value.is_some() || field.is_some() {
        *field = value;
    }
}

/// Reads a body into `e`, in place, every field of it assigned (see [`decode_into`]); None
/// if it does not decode, `e` then holding what was read so far.
#[inline(always)]
fn decode_body_into<'a>(body: &'a [u8], strs: &'a str, e: &mut Event<'a>) -> Option<()> {
    let (host, kind, flags, mut r) = Body::head(body, strs)?;
    let r = &mut r;
    e.host = host;
    e.kind = kind;
    body_fields!(r, flags, assign_fields!(e));
    r.done().then_some(())
}

/// A MessagePack reader over a digest's frame: `[version, fold version, body]` or
/// `[version, fold version, body, strs]`. Anything unexpected reads as `None`, and the fold
/// then reads the JSON.
struct Frame<'a>(&'a [u8]);

impl<'a> Frame<'a> {
    /// A str (fixstr, str 8, 16 or 32) where it stands, borrowed: this reads the marker
    /// itself rather than through `rmp`'s generic reader.
    fn inline_str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.inline_str_bytes()?).ok()
    }

    /// The block of strs of a digest, as [`inline_str`](Self::inline_str) reads a str:
    /// checked by `simdutf8` (longer than most strs; the check is once per event on a fold).
    fn block_of_strs(&mut self) -> Option<&'a str> {
        simdutf8::basic::from_utf8(self.inline_str_bytes()?).ok()
    }

    /// The bytes of a str where it stands, unchecked.
    #[inline(always)]
    fn inline_str_bytes(&mut self) -> Option<&'a [u8]> {
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
        Some(text)
    }

    fn u32(&mut self) -> Option<u32> {
        rmp::decode::read_int::<u64, _>(&mut self.0)
            .ok()
            .and_then(|n| n.try_into().ok())
    }

    fn bin(&mut self) -> Option<&'a [u8]> {
        let len = rmp::decode::read_bin_len(&mut self.0).ok()? as usize;
        let (b, rest) = (self.0.get(..len)?, &self.0[len..]);
        self.0 = rest;
        Some(b)
    }
}

/// `[version, fold version, body, strs]`, and nothing after it (the digest ends the payload);
/// also `[version, fold version, body]`, the frame of version 1, so that `verify --digests`
/// names the version of such a digest (which the fold leaves for the JSON).
pub(super) fn stored(digest: &[u8]) -> Option<(u32, u32, &[u8], Option<&str>)> {
    let mut r = Frame(digest);
    let n = rmp::decode::read_array_len(&mut r.0).ok()?;
    let (v, f, body) = (r.u32()?, r.u32()?, r.bin()?);
    let strs = match n {
        3 => None,
        4 => Some(r.inline_str()?),
        _ => return None,
    };
    r.0.is_empty().then_some((v, f, body, strs))
}

/// The body of a digest the fold reads ([`readable`](super::readable)) and its block of strs,
/// checked as UTF-8 here, once (what [`stored`] reads, read as the encoder writes the head:
/// the versions are positive fixints).
#[inline(always)]
fn readable_body(digest: &[u8]) -> Option<(&[u8], &str)> {
    const _: () = assert!(super::DIGEST_VERSION < 0x80 && FOLD_VERSION < 0x80);
    // The version matched below: a new DIGEST_VERSION is read here first.
    const _: () = assert!(super::DIGEST_VERSION == 3);
    const F: u8 = FOLD_VERSION as u8;
    let [0x94, 3, F, rest @ ..] = digest else {
        return None;
    };
    let mut r = Frame(rest);
    let body = r.bin()?;
    let strs = r.block_of_strs()?;
    r.0.is_empty().then_some((body, strs))
}

/// The event a digest describes, as the fold reads it; None for a digest of a version the
/// fold does not read ([`readable`](super::readable)) or one that does not decode exactly
/// (the fold then reads the JSON).
pub fn decode(digest: &[u8]) -> Option<Event<'_>> {
    let (body, strs) = readable_body(digest)?;
    let_event!(e = body, strs);
    Some(e)
}

/// Decodes a digest into `e`, in place: true if it decodes to what [`decode`] returns, and
/// `e` is then that event; false (for what [`decode`] reads as None) leaves `e` holding
/// whatever was read before the digest stopped decoding, which the caller must not use. A
/// caller that decodes many events into the same slots (the load's reader thread) copies
/// no `Event` around: the body's fields are written where they stay (an `Event` is large;
/// BENCHMARKS.md, "Speed mechanisms": decoding in place).
pub fn decode_into<'a>(digest: &'a [u8], e: &mut Event<'a>) -> bool {
    match readable_body(digest) {
        Some((body, strs)) => decode_body_into(body, strs, e).is_some(),
        None => false,
    }
}

/// Calls `f` with the event a digest describes (see [`decode`]);
/// None, without calling it, for a digest that [`decode`] reads as None. The event stays on
/// this function's stack: an `Event` is large, and handing it out by value moves it (the
/// fold's load path calls this once per record).
#[inline]
pub fn with_decoded<R>(digest: &[u8], f: impl FnOnce(&Event<'_>) -> R) -> Option<R> {
    let (body, strs) = readable_body(digest)?;
    let_event!(e = body, strs);
    Some(f(&e))
}

fn op_from(code: u8) -> Option<FileOp> {
    Some(match code {
        0 => FileOp::Read,
        1 => FileOp::Write,
        2 => FileOp::Edit,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::encode::{leb128, zigzag};
    use super::*;
    use crate::event::Event;

    type Change = fn(&mut Vec<u8>);

    /// `e`'s version 3 digest with its body changed by `change`.
    fn changed(e: &Event<'_>, change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let bytes = super::super::encode(e);
        let (v, f, body, strs) = stored(&bytes).unwrap();
        let mut body = body.to_vec();
        change(&mut body);
        rmp_serde::to_vec(&super::super::Stored(v, f, &body, strs.unwrap())).unwrap()
    }

    #[test]
    fn a_code_flag_or_bit_this_version_does_not_define_does_not_decode() {
        let mut e = Event::bare(Host::Pi, EventKind::PostModelSwitch, "n".into());
        e.cwd = Some("/".into());
        let ok = changed(&e, |_| {});
        assert_eq!(format!("{:?}", decode(&ok).unwrap()), format!("{e:?}"));
        let bad: [(&str, Change); 9] = [
            ("host code 9", |b| b[0] = 9),
            ("kind code 35", |b| b[1] = 35),
            ("flag bit 3", |b| b[2] |= 8),
            ("a tool's flag without a tool", |b| {
                b[2] |= flag::TOOL_FAILED
            }),
            ("field bit 35", |b| b[3 + 4] |= 8),
            ("field bit 63", |b| b[3 + 7] |= 0x80),
            ("a tool's field without a tool", |b| b[3 + 1] |= 1),
            ("the name's length in a longer form", |b| {
                b[11] |= 0x80;
                b.insert(12, 0);
            }),
            ("a byte after the last field", |b| b.push(0)),
        ];
        for (what, change) in bad {
            assert!(decode(&changed(&e, change)).is_none(), "{what}");
        }
        // Context usage, cut inside its 8 bytes.
        e.context_usage_percent = Some(1.5);
        assert!(decode(&changed(&e, |_| {})).is_some());
        assert!(decode(&changed(&e, |b| {
            b.pop();
        }))
        .is_none());
        // A file touch with an op past edit.
        e.context_usage_percent = None;
        e.file_touch = Some((FileOp::Write, "p".into()));
        assert!(decode(&changed(&e, |_| {})).is_some());
        assert!(decode(&changed(&e, |b| b[13] = 3)).is_none());
        // A count of model messages past what is left (the early exit, or running out).
        e.file_touch = None;
        e.model_messages = Some(vec![RawJson::kept("1")]);
        assert!(decode(&changed(&e, |_| {})).is_some());
        assert!(decode(&changed(&e, |b| b[13] = 0x7f)).is_none());
    }

    #[test]
    fn numbers_read_as_written_in_their_shortest_form_only() {
        for n in [0, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let mut b = Vec::new();
            leb128(&mut b, n);
            let mut r = Body {
                b: &b,
                s: "",
                bits: 0,
            };
            assert_eq!(r.uint(), Some(n));
            assert!(r.done());
        }
        for i in [0, -1, 1, i64::MIN, i64::MAX, -130] {
            assert_eq!(unzigzag(zigzag(i)), i);
        }
        // Longer than needed, past 64 bits, or cut short.
        for bad in [&[0x80, 0x00][..], &[0xff; 10], &[0x80], &[0xff; 11]] {
            let mut r = Body {
                b: bad,
                s: "",
                bits: 0,
            };
            assert_eq!(r.uint(), None, "{bad:?}");
        }
    }
}
