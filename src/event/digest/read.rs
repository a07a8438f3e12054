//! Reading a digest: the stored frame of every version (so that a digest of another version,
//! or of another build's fold, is told apart and left for the JSON), and the body of this
//! build's version (read by `read_v3`), borrowing every str from the digest's bytes.

use std::borrow::Cow;

use super::read_v3::{let_event_v3, v3_fields, v3_literal, Rd3};
use super::FOLD_VERSION;
use crate::event::{Event, FileOp, Tool};

/// A MessagePack reader over a digest's frame: `[version, fold version, body]` or
/// `[version, fold version, body, strs]`. Anything unexpected reads as `None`, and the fold
/// then reads the JSON.
struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
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

/// `[version, fold version, body]` (version 1) or `[version, fold version, body, strs]`
/// (versions 2 and 3), and nothing after it (the digest ends the payload).
pub(super) fn stored(digest: &[u8]) -> Option<(u32, u32, &[u8], Option<&str>)> {
    let mut r = Rd(digest);
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
    let mut r = Rd(rest);
    let body = r.bin()?;
    let strs = r.block_of_strs()?;
    r.0.is_empty().then_some((body, strs))
}

/// The event a digest describes, as the fold reads it; None for a digest of a version the
/// fold does not read ([`readable`](super::readable)) or one that does not decode exactly
/// (the fold then reads the JSON).
pub fn decode(digest: &[u8]) -> Option<Event<'_>> {
    let (body, strs) = readable_body(digest)?;
    let_event_v3!(e = body, strs);
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
        Some((body, strs)) => super::read_v3::decode_into(body, strs, e).is_some(),
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
    let_event_v3!(e = body, strs);
    Some(f(&e))
}

pub(super) fn op_from(code: u8) -> Option<FileOp> {
    Some(match code {
        0 => FileOp::Read,
        1 => FileOp::Write,
        2 => FileOp::Edit,
        _ => return None,
    })
}
