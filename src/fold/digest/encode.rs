//! Writing a digest's body: a fixed head (host and kind as one-byte codes, a byte of flags, a
//! presence bitmap of the optional fields) and then, for each field set, its str's length or
//! its number, in the order of [`bit`]; the strs follow in one block. Reading it is a few
//! loads and tests per field instead of a MessagePack marker each, and no string matching for
//! the host or the kind ("Event digests" in `journal-format.md`). `decode.rs` reads it.

use super::op_code;
use crate::event::{Event, EventKind, Host, RawJson};

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

// Every host and kind has a code (the tables name each once: a unit test), so `encode`'s
// lookups cannot miss.
const _: () = assert!(HOSTS.len() == Host::ALL.len() && KINDS.len() == EventKind::KNOWN.len() + 1);

/// The body and the block of strs of `e`'s digest.
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
pub(super) fn leb128(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A signed number as an unsigned one, small magnitudes small (0, -1, 1, -2 → 0, 1, 2, 3).
pub(super) fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

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
        // Every code journal-format.md lists: stable, whatever the enums' order becomes. A
        // code that moved would make every digest on disk read as another host or
        // kind.
        assert_eq!(
            HOSTS.map(Host::as_str),
            [
                "unknown", "claude", "codex", "gemini", "cursor", "cline", "openclaw", "opencode",
                "pi"
            ]
        );
        assert_eq!(
            KINDS.map(EventKind::as_str),
            [
                "other",
                "SessionStart",
                "Setup",
                "InstructionsLoaded",
                "UserPromptSubmit",
                "UserPromptExpansion",
                "MessageDisplay",
                "PreToolUse",
                "PermissionRequest",
                "PermissionDenied",
                "PostToolUse",
                "PostToolUseFailure",
                "PostToolBatch",
                "Notification",
                "SubagentStart",
                "SubagentStop",
                "TaskCreated",
                "TaskCompleted",
                "Stop",
                "StopFailure",
                "TeammateIdle",
                "ConfigChange",
                "CwdChanged",
                "DirectoryAdded",
                "FileChanged",
                "WorktreeCreate",
                "WorktreeRemove",
                "PreCompact",
                "PostCompact",
                "SessionEnd",
                "Elicitation",
                "ElicitationResult",
                "PreSkillShellCommand",
                "PreModelSwitch",
                "PostModelSwitch"
            ]
        );
    }
}
