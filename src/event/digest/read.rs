//! Reading a digest: the stored frame of every version, and a MessagePack reader for exactly
//! the bodies `encode_v1` and `encode_v2` write (version 3's body is read by `read_v3`),
//! borrowing every str from the digest's bytes.

use std::borrow::Cow;

use super::read_v3::{let_event_v3, v3_fields, v3_literal, Rd3};
use super::FOLD_VERSION;
use crate::event::{Event, EventKind, FileOp, Host, RawJson, Tool};

/// A MessagePack reader over the digest's bytes, written for exactly the layout `encode_v1`
/// and `encode_v2` write (rmp-serde's: structs as arrays, `None` as nil). Strs are borrowed: inline in the
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
        std::str::from_utf8(self.inline_str_bytes()?).ok()
    }

    /// The block of strs of a version 2 or 3 digest, as [`inline_str`](Self::inline_str)
    /// reads a str: checked by `simdutf8` (longer than most strs; the check is once per
    /// event on a fold).
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
/// (versions 2 and 3), and nothing after it (the digest ends the payload).
pub(super) fn stored(digest: &[u8]) -> Option<(u32, u32, &[u8], Option<&str>)> {
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

/// The body of a digest the fold reads ([`readable`](super::readable)): a version 3 body
/// and its block of strs, or a MessagePack reader over a version 1 or 2 body.
enum Body<'a> {
    V3(&'a [u8], &'a str),
    Mp(Rd<'a>),
}

/// The body of a digest the fold reads (what [`stored`] reads, read as the encoders write
/// the head: the versions are positive fixints), with its block of strs (versions 2 and 3)
/// checked as UTF-8 here, once.
#[inline(always)]
fn readable_body(digest: &[u8]) -> Option<Body<'_>> {
    const _: () = assert!(super::DIGEST_VERSION < 0x80 && FOLD_VERSION < 0x80);
    // The versions matched below: a new DIGEST_VERSION is read here first.
    const _: () = assert!(super::DIGEST_VERSION == 3);
    const F: u8 = FOLD_VERSION as u8;
    let (version, rest) = match digest {
        [0x94, v @ (2 | 3), F, rest @ ..] => (*v, rest),
        [0x93, 1, F, rest @ ..] => (1, rest),
        _ => return None,
    };
    let mut r = Rd(rest, None);
    let body = r.bin()?;
    let strs = if version > 1 {
        Some(r.block_of_strs()?)
    } else {
        None
    };
    if !r.0.is_empty() {
        return None;
    }
    Some(match (version, strs) {
        (3, Some(strs)) => Body::V3(body, strs),
        _ => Body::Mp(Rd(body, strs)),
    })
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

/// The event a digest describes, as the fold reads it; None for a digest of a version the
/// fold does not read ([`readable`](super::readable)) or one that does not decode exactly
/// (the fold then reads the JSON).
pub fn decode(digest: &[u8]) -> Option<Event<'_>> {
    match readable_body(digest)? {
        Body::V3(body, strs) => {
            let_event_v3!(e = body, strs);
            Some(e)
        }
        Body::Mp(r) => decode_mp(r),
    }
}

/// The event a version 1 or 2 body describes.
fn decode_mp(mut r: Rd<'_>) -> Option<Event<'_>> {
    let_event!(e = r);
    Some(e)
}

/// Decodes a digest into `e`, in place: true if it decodes to what [`decode`] returns, and
/// `e` is then that event; false (for what [`decode`] reads as None) leaves `e` holding
/// whatever was read before the digest stopped decoding, which the caller must not use. A
/// caller that decodes many events into the same slots (the load's reader thread) copies
/// no `Event` around: a version 3 body's fields are written where they stay (an `Event` is
/// large, and building it aside and moving it in were a sixth of that thread's
/// instructions).
pub fn decode_into<'a>(digest: &'a [u8], e: &mut Event<'a>) -> bool {
    match readable_body(digest) {
        Some(Body::V3(body, strs)) => super::read_v3::decode_into(body, strs, e).is_some(),
        Some(Body::Mp(r)) => match decode_mp(r) {
            Some(decoded) => {
                *e = decoded;
                true
            }
            None => false,
        },
        None => false,
    }
}

/// Calls `f` with the event a digest describes (see [`decode`]);
/// None, without calling it, for a digest that [`decode`] reads as None. The event stays on
/// this function's stack: an `Event` is large, and handing it out by value moves it (the
/// fold's load path calls this once per record).
#[inline]
pub fn with_decoded<R>(digest: &[u8], f: impl FnOnce(&Event<'_>) -> R) -> Option<R> {
    match readable_body(digest)? {
        Body::V3(body, strs) => {
            let_event_v3!(e = body, strs);
            Some(f(&e))
        }
        Body::Mp(mut r) => {
            let_event!(e = r);
            Some(f(&e))
        }
    }
}

/// `let $e` = the event the version 1 or 2 body `$r` reads describes, in the caller's frame
/// (built there, not moved in: `decode` returns it, `with_decoded` lends it); the caller
/// returns None if it does not decode.
macro_rules! let_event {
    ($e:ident = $r:ident) => {
        let r = &mut $r;
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

pub(super) fn op_from(code: u8) -> Option<FileOp> {
    Some(match code {
        0 => FileOp::Read,
        1 => FileOp::Write,
        2 => FileOp::Edit,
        _ => return None,
    })
}
