//! The hook's first step: stdin → [`Received`], the bytes of one event.
//!
//! - **Bounded.** The first `INPUT_MAX_BYTES` are kept (what a record holds); past them every
//!   byte is still counted and hashed, so the record can say exactly what it left out.
//! - **Complete when the value is.** Hosts write one JSON value and close stdin, but a host
//!   may leave stdin open after the event. The input is complete at end of file, or as soon as
//!   a JSON object or array is closed with nothing but whitespace after it and nothing more
//!   waiting to be read: the event is that value, and nothing the host writes later belongs to
//!   it. `Completion` follows the value's nesting as the bytes arrive (each byte is looked at
//!   once). Input that is not an object or array is read to its end, as before.
//! - **Time.** When the input was complete ([`Received::done_at`]) is what the hook's deadline
//!   counts from (`plan::Timing`). How long the hook waits for input at all is the watchdog's
//!   business: the input time limit once a byte has arrived, the stdin grace before.

use std::io::{ErrorKind, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant;

use crate::hook::watchdog::Shared;
use crate::hook::InputReady;
use crate::limits::{HOOK_READ_CHUNK_MAX_BYTES, HOOK_READ_CHUNK_MIN_BYTES, INPUT_MAX_BYTES};

/// What stdin has given so far. Every byte is counted; the first `INPUT_MAX_BYTES` are kept
/// (what a record can hold), and past them the whole input is hashed, so a record can say
/// exactly what it left out.
#[derive(Debug, Default)]
pub struct Received {
    pub bytes: Vec<u8>,
    /// Bytes read in all.
    pub total: u64,
    /// blake3 of everything read, once `total` passed the limit.
    hasher: Option<blake3::Hasher>,
    /// End of file was reached, or the JSON value was complete: the input is complete.
    pub eof: bool,
    /// When the input was complete (None while it is not).
    pub done_at: Option<Instant>,
    /// Where the JSON value stands.
    completion: Completion,
    /// What redaction replaced in `bytes` (`Received::redact`).
    pub redaction: Option<crate::redact::Report>,
}

impl Received {
    /// Redacts the input in place, as the root's `[redact]` says, before it is routed (the
    /// worker) or kept as it stands (the watchdog's take-over of input still arriving), so the
    /// record, its fold digest, exec handlers' stdin, the spool and the reply all see only the
    /// redacted event. With no root (the event is lost anyway), tags are made under a one-off
    /// key. Done once.
    pub(crate) fn redact(&mut self, opts: &super::HookOptions) {
        use crate::redact::Redactor;
        let section = &opts.config.redact;
        if !section.enabled || self.redaction.is_some() {
            return;
        }
        let red = match &opts.root {
            Ok(root) => Redactor::new(section, root, opts.fs.clone()),
            Err(_) => Redactor::one_off(section),
        };
        let (out, report) = red.bytes(&self.bytes);
        if let Some(out) = out {
            self.bytes = out;
        }
        if !report.found.is_empty() {
            self.redaction = Some(report);
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.completion.feed(chunk);
        self.total += chunk.len() as u64;
        let room = INPUT_MAX_BYTES - self.bytes.len();
        let (kept, rest) = chunk.split_at(chunk.len().min(room));
        self.bytes.extend_from_slice(kept);
        if !rest.is_empty() {
            let h = self.hasher.get_or_insert_with(|| {
                let mut h = blake3::Hasher::new();
                h.update(&self.bytes);
                h
            });
            h.update(rest);
        }
    }

    /// The whole input's length and blake3, when it was longer than what is kept.
    pub fn overflow(&self) -> Option<(u64, String)> {
        let h = self.hasher.as_ref()?;
        Some((self.total, h.finalize().to_hex().to_string()))
    }

    /// The bytes so far are one complete JSON object or array, followed by whitespace at
    /// most.
    pub fn value_complete(&self) -> bool {
        self.completion == Completion::Complete
    }

    /// Marks the input complete, now.
    pub(crate) fn complete(&mut self) {
        self.eof = true;
        self.done_at.get_or_insert_with(Instant::now);
    }
}

/// How far the bytes read so far go into one JSON object or array: a scan of its nesting
/// (strings and their escapes, brackets), not a parse. Whether the value is valid JSON is the
/// parser's to say once the input is complete.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Completion {
    /// Only whitespace so far.
    #[default]
    Start,
    /// Inside the value: `depth` brackets open, inside a string or not, after a backslash in
    /// one or not.
    Open {
        depth: u32,
        string: bool,
        escape: bool,
    },
    /// The value is closed, and only whitespace followed.
    Complete,
    /// Not an object or array, or something other than whitespace follows it: read to the
    /// end of the input.
    ToEnd,
}

impl Completion {
    fn feed(&mut self, chunk: &[u8]) {
        let mut i = 0;
        while i < chunk.len() {
            match self {
                Completion::ToEnd => return,
                Completion::Start | Completion::Complete => {
                    let b = chunk[i];
                    i += 1;
                    if b.is_ascii_whitespace() {
                        continue;
                    }
                    *self = match (*self, b) {
                        (Completion::Start, b'{' | b'[') => Completion::Open {
                            depth: 1,
                            string: false,
                            escape: false,
                        },
                        _ => Completion::ToEnd,
                    };
                }
                Completion::Open {
                    depth,
                    string,
                    escape,
                } => {
                    if *string {
                        if *escape {
                            *escape = false;
                            i += 1;
                            continue;
                        }
                        // Strings are most of an event: jump to the next quote or backslash.
                        match memchr::memchr2(b'"', b'\\', &chunk[i..]) {
                            None => return,
                            Some(at) => {
                                if chunk[i + at] == b'"' {
                                    *string = false;
                                } else {
                                    *escape = true;
                                }
                                i += at + 1;
                            }
                        }
                        continue;
                    }
                    let b = chunk[i];
                    i += 1;
                    match b {
                        b'"' => *string = true,
                        b'{' | b'[' => *depth += 1,
                        b'}' | b']' => {
                            *depth -= 1;
                            if *depth == 0 {
                                *self = Completion::Complete;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// True if `fd` can be read without blocking: bytes are waiting, or the writer has closed it
/// (end of file, or an error the read will return at once). Never waits.
pub fn fd_ready(fd: BorrowedFd<'_>) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&now)) {
        Ok(n) if n > 0 => fds[0]
            .revents()
            .intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR),
        _ => false,
    }
}

/// [`fd_ready`] for this process's stdin.
pub fn stdin_ready() -> bool {
    fd_ready(std::io::stdin().as_fd())
}

/// Reads stdin until the input is complete (see the module docs), into the shared state,
/// where the watchdog can take what arrived if the input time limit passes first. Returns the
/// input, or None if the watchdog took it over. `ready` tells whether a read would not block
/// (None: it never would, as for in-memory input).
///
/// The read buffer starts small (most events are a few KiB) and grows to a pipe's capacity
/// once a read fills it: zeroing 64 KiB up front cost the hook more than reading the event.
pub(crate) fn read(
    sh: &Shared,
    mut input: impl Read,
    ready: Option<&InputReady>,
    diag: &mut Vec<String>,
) -> Option<Received> {
    let mut chunk = vec![0u8; HOOK_READ_CHUNK_MIN_BYTES];
    loop {
        match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                let complete = sh.received(&chunk[..n])?;
                // A complete value with the host's stdin still open and nothing more
                // waiting: the event is here, and the host is not waited for.
                if complete && !ready.is_none_or(|r| (r.0)()) {
                    break;
                }
                if n == chunk.len() && chunk.len() < HOOK_READ_CHUNK_MAX_BYTES {
                    chunk.resize(HOOK_READ_CHUNK_MAX_BYTES, 0);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                diag.push(format!("reading stdin failed: {e}"));
                break;
            }
        }
    }
    sh.take_received()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete_after(chunks: &[&[u8]]) -> Vec<bool> {
        let mut r = Received::default();
        chunks
            .iter()
            .map(|c| {
                r.push(c);
                r.value_complete()
            })
            .collect()
    }

    #[test]
    fn an_object_is_complete_at_its_closing_brace() {
        assert_eq!(
            complete_after(&[b" {\"a\":", b"{\"b\":[1,2]}", b"}", b"\n"]),
            [false, false, true, true]
        );
    }

    #[test]
    fn brackets_and_quotes_inside_strings_do_not_count() {
        assert_eq!(
            complete_after(&[br#"{"a":"}]\"{","#, br#""b":"\\"}"#]),
            [false, true]
        );
        // An escape split across two reads.
        assert_eq!(
            complete_after(&[br#"{"a":"x\"#, br#"""#, br#"}"}"#]),
            [false, false, true]
        );
    }

    #[test]
    fn what_follows_the_value_or_is_no_object_is_read_to_the_end() {
        assert_eq!(complete_after(&[b"{} x"]), [false]);
        assert_eq!(complete_after(&[b"{}", b"{}"]), [true, false]);
        assert_eq!(complete_after(&[b"\"str\""]), [false]);
        assert_eq!(complete_after(&[b"42 "]), [false]);
        assert_eq!(complete_after(&[b"   "]), [false]);
    }

    /// The scan agrees with the parser on every fixture-like shape it is fed byte by byte.
    #[test]
    fn byte_by_byte_equals_one_chunk() {
        let text = br#"{"session_id":"s","x":["a\"]",{"y":"\\\\"}],"z":"\u00e9}"}"#;
        let mut one = Received::default();
        one.push(text);
        let mut bytes = Received::default();
        for b in text {
            assert!(!bytes.value_complete());
            bytes.push(std::slice::from_ref(b));
        }
        assert!(one.value_complete() && bytes.value_complete());
        assert!(serde_json::from_slice::<serde_json::Value>(text).is_ok());
    }
}
