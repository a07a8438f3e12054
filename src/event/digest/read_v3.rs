//! Reading a version 3 body (laid out by `v3::encode`): the head, then each field set, in the
//! order of its bit, its str borrowed from the digest's block of strs.

use std::borrow::Cow;

use super::v3::{bit, flag, HOSTS, KINDS};
use super::{FileOp, RawJson};
use crate::event::{Event, EventKind, Host, Tool};

fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// A reader over a version 3 body after its head: the fields (`b`), what is left of the block
/// of strs (`s`, checked as UTF-8 once, by the caller) and the presence bitmap.
pub(super) struct Rd3<'a> {
    b: &'a [u8],
    s: &'a str,
    pub(super) bits: u64,
}

impl<'a> Rd3<'a> {
    /// The head of `body`: host, kind, flags and a reader over its fields; None for a code
    /// or a bit this version does not define, or a tool's bit or flag without a tool.
    #[inline(always)]
    pub(super) fn head(body: &'a [u8], strs: &'a str) -> Option<(Host, EventKind, u8, Self)> {
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
        Some((host, kind, flags, Rd3 { b, s: strs, bits }))
    }

    /// An unsigned LEB128 number, in its shortest form and at most 64 bits.
    #[inline(always)]
    pub(super) fn uint(&mut self) -> Option<u64> {
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
    pub(super) fn str(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.uint()?).ok()?;
        let (s, rest) = self.s.split_at_checked(len)?;
        self.s = rest;
        Some(s)
    }

    /// `Some(read)` if the field of `bit` is set, else `Some(None)`; None if it does not read.
    #[inline(always)]
    pub(super) fn opt<T>(
        &mut self,
        bit: u64,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        if self.bits & bit == 0 {
            Some(None)
        } else {
            read(self).map(Some)
        }
    }

    /// A str field: [`opt`](Self::opt) of [`str`](Self::str), written out (most fields are
    /// strs, and a closure here was not always inlined).
    #[inline(always)]
    pub(super) fn opt_str(&mut self, bit: u64) -> Option<Option<Cow<'a, str>>> {
        if self.bits & bit == 0 {
            return Some(None);
        }
        Some(Some(Cow::Borrowed(self.str()?)))
    }

    /// A JSON text kept by `encode` from this build's parse: not parsed again ([`RawJson`]).
    #[inline(always)]
    pub(super) fn opt_raw(&mut self, bit: u64) -> Option<Option<RawJson<'a>>> {
        if self.bits & bit == 0 {
            return Some(None);
        }
        Some(Some(RawJson::kept(self.str()?)))
    }

    pub(super) fn sint(&mut self) -> Option<i64> {
        self.uint().map(unzigzag)
    }

    pub(super) fn f64(&mut self) -> Option<f64> {
        let (n, rest) = self.b.split_first_chunk::<8>()?;
        self.b = rest;
        Some(f64::from_bits(u64::from_le_bytes(*n)))
    }

    pub(super) fn op(&mut self) -> Option<FileOp> {
        let (&code, rest) = self.b.split_first()?;
        self.b = rest;
        super::read::op_from(code)
    }

    /// `n` JSON texts (`n` read first).
    pub(super) fn raws(&mut self) -> Option<Vec<RawJson<'a>>> {
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
    pub(super) fn done(&self) -> bool {
        self.b.is_empty() && self.s.is_empty()
    }
}

/// Calls `$emit!($($pre)*; plain fields; optional fields)` with every field of an event
/// after its host and kind, each with the expression that reads it from `$r` (a [`Rd3`]
/// after its head; `$flags` the head's flags), in the digest's order. The one list of a
/// version 3 body's fields: [`let_event_v3`] builds an event of them, [`decode_into`]
/// assigns them to one in place.
macro_rules! v3_fields {
    ($r:ident, $flags:ident, $emit:ident!($($pre:tt)*)) => {{
        use $crate::event::digest::v3::{bit, flag};
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
                    duration_ms: r.opt(bit::TOOL_DURATION_MS, Rd3::uint)?,
                    detail: r.opt_str(bit::TOOL_DETAIL)?,
                    exit_code: r.opt(bit::TOOL_EXIT_CODE, Rd3::sint)?,
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
            session_duration_ms: $r.opt(bit::SESSION_DURATION_MS, Rd3::uint)?,
            context_usage_percent: $r.opt(bit::CONTEXT_USAGE_PERCENT, Rd3::f64)?,
            message_count: $r.opt(bit::MESSAGE_COUNT, Rd3::uint)?,
            turn_tool_calls: $r.opt_raw(bit::TURN_TOOL_CALLS)?,
            background_tasks: $r.opt_raw(bit::BACKGROUND_TASKS)?,
            task_id: $r.opt_str(bit::TASK_ID)?,
            task_subject: $r.opt_str(bit::TASK_SUBJECT)?,
            model_messages: $r.opt(bit::MODEL_MESSAGES, Rd3::raws)?,
            // Not kept (see `encode`).
            turn_id: None,
        }
    }};
}

/// `let $e` = the event of version 3 `$body` and `$strs` describe, in the caller's frame (see
/// `read::let_event`); the caller returns None if it does not decode.
macro_rules! let_event_v3 {
    ($e:ident = $body:expr, $strs:expr) => {
        let (host, kind, flags, mut r) = Rd3::head($body, $strs)?;
        let r = &mut r;
        // One struct literal, fields in the digest's order: the event is built where it stays.
        let $e = v3_fields!(r, flags, v3_literal!(host, kind));
        if !r.done() {
            return None;
        }
    };
}
pub(super) use let_event_v3;

/// An event of `$host`, `$kind` and the fields `v3_fields` reads.
macro_rules! v3_literal {
    ($host:ident, $kind:ident; $($p:ident: $pv:expr),+; $($f:ident: $v:expr),+ $(,)?) => {
        Event { host: $host, kind: $kind, $($p: $pv,)+ $($f: $v),+ }
    };
}
pub(super) use {v3_fields, v3_literal};

/// Assigns the fields `v3_fields` reads to `*$e`, in place; an optional field only if it is
/// set, or was (see [`put`]).
macro_rules! v3_assign {
    ($e:ident; $($p:ident: $pv:expr),+; $($f:ident: $v:expr),+ $(,)?) => {{
        // Every field named, none left out by `..`: a field `Event` gains does not compile
        // until it is read here (and so in `let_event_v3`).
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

/// Reads a version 3 body into `e`, in place, every field of it assigned (see
/// `read::decode_into`); None if it does not decode, `e` then holding what was read so far.
#[inline(always)]
pub(super) fn decode_into<'a>(body: &'a [u8], strs: &'a str, e: &mut Event<'a>) -> Option<()> {
    let (host, kind, flags, mut r) = Rd3::head(body, strs)?;
    let r = &mut r;
    e.host = host;
    e.kind = kind;
    v3_fields!(r, flags, v3_assign!(e));
    r.done().then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::digest::v3::{leb128, zigzag};
    use crate::event::Event;

    type Change = fn(&mut Vec<u8>);

    /// `e`'s version 3 digest with its body changed by `change`.
    fn changed(e: &Event<'_>, change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let bytes = super::super::encode(e);
        let (v, f, body, strs) = super::super::read::stored(&bytes).unwrap();
        let mut body = body.to_vec();
        change(&mut body);
        rmp_serde::to_vec(&super::super::StoredV2(v, f, &body, strs.unwrap())).unwrap()
    }

    #[test]
    fn a_code_flag_or_bit_this_version_does_not_define_does_not_decode() {
        use super::super::decode;
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
            let mut r = Rd3 {
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
            let mut r = Rd3 {
                b: bad,
                s: "",
                bits: 0,
            };
            assert_eq!(r.uint(), None, "{bad:?}");
        }
    }
}
