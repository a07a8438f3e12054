//! Digest version 3: the body is a fixed head (host and kind as one-byte codes, a byte of
//! flags, a presence bitmap of the optional fields) and then, for each field set, its str's
//! length or its number, in the order of [`bit`]; the strs follow in one block, as in version
//! 2. Reading it is a few loads and tests per field instead of a MessagePack marker each, and
//! no string matching for the host or the kind ("Event digests" in `journal-format.md`).

use std::borrow::Cow;

use super::{op_code, Event, FileOp, RawJson};
use crate::event::{EventKind, Host};

/// The host codes: a host's code is its index here. Stable: a new host gets the next code,
/// and an unknown code does not decode (the fold reads the JSON).
pub(super) const HOSTS: [Host; 9] = [
    Host::Unknown,
    Host::Claude,
    Host::Codex,
    Host::Gemini,
    Host::Cursor,
    Host::Cline,
    Host::OpenClaw,
    Host::OpenCode,
    Host::Pi,
];

/// The kind codes: a kind's code is its index here (`Other` is 0). Stable, as [`HOSTS`].
#[rustfmt::skip]
pub(super) const KINDS: [EventKind; 35] = {
    use EventKind::*;
    [
        Other, SessionStart, Setup, InstructionsLoaded, UserPromptSubmit, UserPromptExpansion,
        MessageDisplay, PreToolUse, PermissionRequest, PermissionDenied, PostToolUse,
        PostToolUseFailure, PostToolBatch, Notification, SubagentStart, SubagentStop,
        TaskCreated, TaskCompleted, Stop, StopFailure, TeammateIdle, ConfigChange, CwdChanged,
        DirectoryAdded, FileChanged, WorktreeCreate, WorktreeRemove, PreCompact, PostCompact,
        SessionEnd, Elicitation, ElicitationResult, PreSkillShellCommand, PreModelSwitch,
        PostModelSwitch,
    ]
};

/// The flags byte.
pub(super) mod flag {
    pub const PARSED: u8 = 1;
    /// `tool.failed`, `tool.interrupted`: only with a tool.
    pub const TOOL_FAILED: u8 = 2;
    pub const TOOL_INTERRUPTED: u8 = 4;
    pub const ALL: u8 = 7;
}

/// The presence bitmap: bit `n` is set when field `n` is, and the fields set follow the head
/// in the order of their bits (the tool's name right after [`TOOL`](bit::TOOL)'s place).
#[rustfmt::skip]
pub(super) mod bit {
    pub const SESSION_ID: u64 = 1 << 0;
    pub const CWD: u64 = 1 << 1;
    pub const MODEL: u64 = 1 << 2;
    pub const PERMISSION_MODE: u64 = 1 << 3;
    pub const PROMPT_ID: u64 = 1 << 4;
    pub const AGENT_ID: u64 = 1 << 5;
    pub const AGENT_TYPE: u64 = 1 << 6;
    pub const TOOL: u64 = 1 << 7;
    pub const TOOL_USE_ID: u64 = 1 << 8;
    pub const TOOL_INPUT: u64 = 1 << 9;
    pub const TOOL_RESPONSE: u64 = 1 << 10;
    pub const TOOL_DURATION_MS: u64 = 1 << 11;
    pub const TOOL_DETAIL: u64 = 1 << 12;
    pub const TOOL_EXIT_CODE: u64 = 1 << 13;
    pub const PROMPT: u64 = 1 << 14;
    pub const SOURCE: u64 = 1 << 15;
    pub const TRIGGER: u64 = 1 << 16;
    pub const REASON: u64 = 1 << 17;
    pub const ERROR: u64 = 1 << 18;
    pub const MESSAGE: u64 = 1 << 19;
    pub const FILE_PATH: u64 = 1 << 20;
    pub const FILE_TOUCH: u64 = 1 << 21;
    pub const NEW_CWD: u64 = 1 << 22;
    pub const SUMMARY: u64 = 1 << 23;
    pub const CUSTOM_INSTRUCTIONS: u64 = 1 << 24;
    pub const SESSION_KIND: u64 = 1 << 25;
    pub const PARENT_SESSION: u64 = 1 << 26;
    pub const SESSION_DURATION_MS: u64 = 1 << 27;
    pub const CONTEXT_USAGE_PERCENT: u64 = 1 << 28;
    pub const MESSAGE_COUNT: u64 = 1 << 29;
    pub const TURN_TOOL_CALLS: u64 = 1 << 30;
    pub const BACKGROUND_TASKS: u64 = 1 << 31;
    pub const TASK_ID: u64 = 1 << 32;
    pub const TASK_SUBJECT: u64 = 1 << 33;
    pub const MODEL_MESSAGES: u64 = 1 << 34;
    /// Every field's bit; the others are never set.
    pub const ALL: u64 = (1 << 35) - 1;
    /// The tool's fields: only with a tool.
    pub const OF_TOOL: u64 = TOOL_USE_ID | TOOL_INPUT | TOOL_RESPONSE | TOOL_DURATION_MS
        | TOOL_DETAIL | TOOL_EXIT_CODE;
}

/// The body and the block of strs of `e`'s version 3 digest.
pub(super) fn encode(e: &Event<'_>) -> (Vec<u8>, String) {
    let mut w = W {
        fields: Vec::with_capacity(32),
        strs: String::new(),
        bits: 0,
    };
    let code = |i: Option<usize>| i.expect("every host and kind has a code") as u8;
    let host = code(HOSTS.iter().position(|h| *h == e.host));
    let kind = code(KINDS.iter().position(|k| *k == e.kind));
    let mut flags = if e.parsed { flag::PARSED } else { 0 };
    w.str(&e.name);
    w.opt(bit::SESSION_ID, e.session_id.as_deref());
    w.opt(bit::CWD, e.cwd.as_deref());
    w.opt(bit::MODEL, e.model.as_deref());
    w.opt(bit::PERMISSION_MODE, e.permission_mode.as_deref());
    w.opt(bit::PROMPT_ID, e.prompt_id.as_deref());
    w.opt(bit::AGENT_ID, e.agent_id.as_deref());
    w.opt(bit::AGENT_TYPE, e.agent_type.as_deref());
    if let Some(t) = &e.tool {
        w.bits |= bit::TOOL;
        flags |= if t.failed { flag::TOOL_FAILED } else { 0 };
        flags |= if t.interrupted {
            flag::TOOL_INTERRUPTED
        } else {
            0
        };
        w.str(&t.name);
        w.opt(bit::TOOL_USE_ID, t.use_id.as_deref());
        w.opt(bit::TOOL_INPUT, t.input.map(RawJson::get));
        // The fold reads a response only through `Tool::read_response`.
        w.opt(bit::TOOL_RESPONSE, t.read_response().map(RawJson::get));
        w.num(bit::TOOL_DURATION_MS, t.duration_ms);
        w.opt(bit::TOOL_DETAIL, t.detail.as_deref());
        w.num(bit::TOOL_EXIT_CODE, t.exit_code.map(zigzag));
    }
    w.opt(bit::PROMPT, e.prompt.as_deref());
    w.opt(bit::SOURCE, e.source.as_deref());
    w.opt(bit::TRIGGER, e.trigger.as_deref());
    w.opt(bit::REASON, e.reason.as_deref());
    w.opt(bit::ERROR, e.error.as_deref());
    w.opt(bit::MESSAGE, e.message.as_deref());
    w.opt(bit::FILE_PATH, e.file_path.as_deref());
    if let Some((op, path)) = &e.file_touch {
        w.bits |= bit::FILE_TOUCH;
        w.fields.push(op_code(*op));
        w.str(path);
    }
    w.opt(bit::NEW_CWD, e.new_cwd.as_deref());
    w.opt(bit::SUMMARY, e.summary.as_deref());
    w.opt(bit::CUSTOM_INSTRUCTIONS, e.custom_instructions.as_deref());
    w.opt(bit::SESSION_KIND, e.session_kind.as_deref());
    w.opt(bit::PARENT_SESSION, e.parent_session.as_deref());
    w.num(bit::SESSION_DURATION_MS, e.session_duration_ms);
    if let Some(p) = e.context_usage_percent {
        w.bits |= bit::CONTEXT_USAGE_PERCENT;
        w.fields.extend_from_slice(&p.to_bits().to_le_bytes());
    }
    w.num(bit::MESSAGE_COUNT, e.message_count);
    w.opt(bit::TURN_TOOL_CALLS, e.turn_tool_calls.map(RawJson::get));
    w.opt(bit::BACKGROUND_TASKS, e.background_tasks.map(RawJson::get));
    w.opt(bit::TASK_ID, e.task_id.as_deref());
    w.opt(bit::TASK_SUBJECT, e.task_subject.as_deref());
    if let Some(m) = &e.model_messages {
        w.bits |= bit::MODEL_MESSAGES;
        leb128(&mut w.fields, m.len() as u64);
        for r in m {
            w.str(r.get());
        }
    }
    let mut body = Vec::with_capacity(11 + w.fields.len());
    body.extend_from_slice(&[host, kind, flags]);
    body.extend_from_slice(&w.bits.to_le_bytes());
    body.extend_from_slice(&w.fields);
    (body, w.strs)
}

/// The fields after the head, the strs, and the bits of the fields set.
struct W {
    fields: Vec<u8>,
    strs: String,
    bits: u64,
}

impl W {
    fn str(&mut self, s: &str) {
        leb128(&mut self.fields, s.len() as u64);
        self.strs.push_str(s);
    }

    fn opt(&mut self, bit: u64, s: Option<&str>) {
        if let Some(s) = s {
            self.bits |= bit;
            self.str(s);
        }
    }

    fn num(&mut self, bit: u64, n: Option<u64>) {
        if let Some(n) = n {
            self.bits |= bit;
            leb128(&mut self.fields, n);
        }
    }
}

/// `n` as unsigned LEB128: seven bits a byte, low first, the high bit set on all but the last.
fn leb128(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A signed number as an unsigned one, small magnitudes small (0, -1, 1, -2 → 0, 1, 2, 3).
fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

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

    #[inline(always)]
    pub(super) fn opt_str(&mut self, bit: u64) -> Option<Option<Cow<'a, str>>> {
        self.opt(bit, |r| r.str().map(Cow::Borrowed))
    }

    /// A JSON text kept by `encode` from this build's parse: not parsed again ([`RawJson`]).
    #[inline(always)]
    pub(super) fn opt_raw(&mut self, bit: u64) -> Option<Option<RawJson<'a>>> {
        self.opt(bit, |r| r.str().map(RawJson::kept))
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
        // Each length takes a byte at least: a count past what is left is not ours (and
        // allocates nothing).
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

/// `let $e` = the event of version 3 `$body` and `$strs` describe, in the caller's frame (see
/// `read::let_event`); the caller returns None if it does not decode.
macro_rules! let_event_v3 {
    ($e:ident = $body:expr, $strs:expr) => {
        let (host, kind, flags, mut r) = Rd3::head($body, $strs)?;
        let r = &mut r;
        use $crate::event::digest::v3::{bit, flag};
        // One struct literal, fields in the digest's order: the event is built where it stays.
        let $e = Event {
            host,
            kind,
            name: Cow::Borrowed(r.str()?),
            parsed: flags & flag::PARSED != 0,
            session_id: r.opt_str(bit::SESSION_ID)?,
            cwd: r.opt_str(bit::CWD)?,
            model: r.opt_str(bit::MODEL)?,
            permission_mode: r.opt_str(bit::PERMISSION_MODE)?,
            prompt_id: r.opt_str(bit::PROMPT_ID)?,
            agent_id: r.opt_str(bit::AGENT_ID)?,
            agent_type: r.opt_str(bit::AGENT_TYPE)?,
            tool: r.opt(bit::TOOL, |r| {
                Some(Tool {
                    name: Cow::Borrowed(r.str()?),
                    use_id: r.opt_str(bit::TOOL_USE_ID)?,
                    input: r.opt_raw(bit::TOOL_INPUT)?,
                    response: r.opt_raw(bit::TOOL_RESPONSE)?,
                    failed: flags & flag::TOOL_FAILED != 0,
                    outcome_unknown: false,
                    duration_ms: r.opt(bit::TOOL_DURATION_MS, Rd3::uint)?,
                    detail: r.opt_str(bit::TOOL_DETAIL)?,
                    exit_code: r.opt(bit::TOOL_EXIT_CODE, Rd3::sint)?,
                    interrupted: flags & flag::TOOL_INTERRUPTED != 0,
                })
            })?,
            prompt: r.opt_str(bit::PROMPT)?,
            source: r.opt_str(bit::SOURCE)?,
            trigger: r.opt_str(bit::TRIGGER)?,
            reason: r.opt_str(bit::REASON)?,
            error: r.opt_str(bit::ERROR)?,
            message: r.opt_str(bit::MESSAGE)?,
            file_path: r.opt_str(bit::FILE_PATH)?,
            file_touch: r.opt(bit::FILE_TOUCH, |r| {
                Some((r.op()?, Cow::Borrowed(r.str()?)))
            })?,
            new_cwd: r.opt_str(bit::NEW_CWD)?,
            summary: r.opt_str(bit::SUMMARY)?,
            custom_instructions: r.opt_str(bit::CUSTOM_INSTRUCTIONS)?,
            session_kind: r.opt_str(bit::SESSION_KIND)?,
            parent_session: r.opt_str(bit::PARENT_SESSION)?,
            session_duration_ms: r.opt(bit::SESSION_DURATION_MS, Rd3::uint)?,
            context_usage_percent: r.opt(bit::CONTEXT_USAGE_PERCENT, Rd3::f64)?,
            message_count: r.opt(bit::MESSAGE_COUNT, Rd3::uint)?,
            turn_tool_calls: r.opt_raw(bit::TURN_TOOL_CALLS)?,
            background_tasks: r.opt_raw(bit::BACKGROUND_TASKS)?,
            task_id: r.opt_str(bit::TASK_ID)?,
            task_subject: r.opt_str(bit::TASK_SUBJECT)?,
            model_messages: r.opt(bit::MODEL_MESSAGES, Rd3::raws)?,
            // Not kept (see `encode`).
            turn_id: None,
        };
        if !r.done() {
            return None;
        }
    };
}
pub(super) use let_event_v3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_and_kind_has_one_code() {
        for h in Host::ALL {
            assert_eq!(HOSTS.iter().filter(|x| **x == h).count(), 1, "{h:?}");
        }
        assert_eq!(HOSTS.len(), Host::ALL.len());
        for k in EventKind::KNOWN.iter().chain([&EventKind::Other]) {
            assert_eq!(KINDS.iter().filter(|x| *x == k).count(), 1, "{k:?}");
        }
        assert_eq!(KINDS.len(), EventKind::KNOWN.len() + 1);
        // The codes journal-format.md lists: stable, whatever the enums' order becomes.
        assert_eq!((HOSTS[1], HOSTS[8]), (Host::Claude, Host::Pi));
        assert_eq!(KINDS[4], EventKind::UserPromptSubmit);
        assert_eq!(KINDS[34], EventKind::PostModelSwitch);
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
