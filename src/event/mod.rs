//! Canonical events. Every host's hook payload is normalized into one [`Event`], whatever the
//! host calls it: Claude Code's names are the canonical ones ([`EventKind`]), and one adapter
//! per host (`crate::host::<name>::normalize`) maps the host's names and fields onto them.
//! `Event::parse` is implemented there (`crate::host`), the floor above this one: this module
//! holds the model and the wire view, and imports no host.
//!
//! The journal keeps the host's JSON byte for byte; an `Event` is a view borrowed from those
//! bytes, rebuilt whenever the journal is folded. Parsing never fails: unknown fields are
//! ignored, fields of an unexpected type read as absent, unknown events become
//! [`EventKind::Other`] with their name kept, and a payload that is not a JSON object is an
//! `Other` event with `parsed == false`.

mod host_id;
mod kind;
pub mod lenient;
pub mod tool_effects;
pub mod tools;
pub(crate) mod wire;

use std::borrow::Cow;

use serde_json::value::RawValue;

pub use host_id::Host;
pub use kind::EventKind;
pub use tools::{FileOp, ToolInput};

/// True if the JSON text is an object (by its first character; the parser checks the rest).
pub(crate) fn is_object(raw: &str) -> bool {
    raw.trim_start().starts_with('{')
}

/// A JSON text inside an event (a tool's input or response, bulk tool calls, background
/// tasks, a model request's messages), parsed by whoever reads it, when it reads it.
///
/// Read from the event's JSON, the text was checked by that parse. Read from the event's
/// digest (`digest::decode`), it is the text this build's own parse kept, in a record whose
/// CRC was checked, and is not checked again: a reader that parses it gets serde_json's
/// answer either way, and one that only looks at its first byte or hashes it reads the very
/// bytes the JSON held.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RawJson<'a>(pub(crate) &'a str);

impl<'a> RawJson<'a> {
    /// The JSON text.
    pub fn get(self) -> &'a str {
        self.0
    }

    /// A text kept by this build's parse (a digest's); see the type's documentation.
    pub(crate) fn kept(text: &'a str) -> RawJson<'a> {
        RawJson(text)
    }
}

impl<'a> From<&'a RawValue> for RawJson<'a> {
    fn from(raw: &'a RawValue) -> Self {
        RawJson(raw.get())
    }
}

impl std::fmt::Debug for RawJson<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RawJson").field(&self.0).finish()
    }
}

/// A tool call, as far as the event tells it.
#[derive(Debug, Clone, Default)]
pub struct Tool<'a> {
    pub name: Cow<'a, str>,
    /// Pairs a Pre with its Post (`tool_use_id`); absent on hosts that have none.
    pub use_id: Option<Cow<'a, str>>,
    pub input: Option<RawJson<'a>>,
    pub response: Option<RawJson<'a>>,
    /// The call failed (PostToolUseFailure, Cline `success: false`, an error in the response).
    pub failed: bool,
    /// The host does not say whether the call succeeded (Codex's shell output is a plain
    /// string without its exit code): `failed` is false for want of evidence, not proof.
    pub outcome_unknown: bool,
    pub duration_ms: Option<u64>,
    /// A one-line description the host gave directly (Cursor's shell `command`).
    pub detail: Option<Cow<'a, str>>,
    /// The command's exit status, when the host reports one (Claude Code's `Exit code N`
    /// at the head of a failure's error).
    pub exit_code: Option<i64>,
    /// The user interrupted the call (Claude Code `is_interrupt`).
    pub interrupted: bool,
}

impl<'a> Tool<'a> {
    /// The response, where the fold reads it ([`tools::response_read`]), else None. The
    /// fold reads a response only through here, and a digest keeps exactly this, so a
    /// fold from digests reads every response a fold from the JSON does.
    pub fn read_response(&self) -> Option<RawJson<'a>> {
        self.response
            .filter(|_| tools::response_read(&self.name, self.failed))
    }
}

/// One hook event in canonical form, borrowed from the journal's bytes.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    pub host: Host,
    pub kind: EventKind,
    /// The host's own name for the event (`BeforeTool`, `afterFileEdit`, `onPostTurn`), or
    /// the record kind when the payload names none.
    pub name: Cow<'a, str>,
    /// False when the payload was not a JSON object.
    pub parsed: bool,
    pub session_id: Option<Cow<'a, str>>,
    pub cwd: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    pub permission_mode: Option<Cow<'a, str>>,
    pub prompt_id: Option<Cow<'a, str>>,
    pub turn_id: Option<Cow<'a, str>>,
    pub agent_id: Option<Cow<'a, str>>,
    pub agent_type: Option<Cow<'a, str>>,
    pub tool: Option<Tool<'a>>,
    /// The user's prompt (UserPromptSubmit, Gemini BeforeAgent, OpenClaw's `userMessage`).
    pub prompt: Option<Cow<'a, str>>,
    /// SessionStart / ConfigChange / DirectoryAdded `source`.
    pub source: Option<Cow<'a, str>>,
    /// Compaction / Setup `trigger`.
    pub trigger: Option<Cow<'a, str>>,
    /// SessionEnd / PermissionDenied `reason`, Cursor stop `status`.
    pub reason: Option<Cow<'a, str>>,
    /// StopFailure `error`, or a failed tool's error text.
    pub error: Option<Cow<'a, str>>,
    /// The assistant's last message, or a notification's message.
    pub message: Option<Cow<'a, str>>,
    pub file_path: Option<Cow<'a, str>>,
    /// A file the host says was read or changed outside a tool call (Cursor afterFileEdit).
    pub file_touch: Option<(FileOp, Cow<'a, str>)>,
    /// CwdChanged `new_cwd`.
    pub new_cwd: Option<Cow<'a, str>>,
    /// PostCompact `compact_summary`.
    pub summary: Option<Cow<'a, str>>,
    pub custom_instructions: Option<Cow<'a, str>>,
    /// OpenClaw `sessionKind` (main, cron, spawn).
    pub session_kind: Option<Cow<'a, str>>,
    /// A session this one descends from (OpenClaw `parentSession`, `parent_session_id`).
    pub parent_session: Option<Cow<'a, str>>,
    /// How long the session lasted (OpenClaw `durationMs`).
    pub session_duration_ms: Option<u64>,
    pub context_usage_percent: Option<f64>,
    pub message_count: Option<u64>,
    /// Tool calls reported only in bulk at the end of a turn (OpenClaw `toolCalls`).
    pub turn_tool_calls: Option<RawJson<'a>>,
    /// Background work still running when a turn stopped (Claude Code Stop
    /// `background_tasks`: `[{"id", "type", "status", "description"}]`).
    pub background_tasks: Option<RawJson<'a>>,
    /// A task-list task an event is about (Claude Code TaskCreated / TaskCompleted
    /// `task_id`, `task_subject`).
    pub task_id: Option<Cow<'a, str>>,
    pub task_subject: Option<Cow<'a, str>>,
    /// The conversation a model request carries, one raw JSON message each (Gemini CLI's
    /// BeforeModel `llm_request.messages`: its text messages, in order). Only the request
    /// shows that the host rewrote its history (compressed it).
    pub model_messages: Option<Vec<RawJson<'a>>>,
    /// What the payload says about who wrote its prompt, for [`Host::prompt_author`]. Not
    /// kept in the fold digest: the fold does not read it.
    pub origin: Origin<'a>,
}

/// What a host's payload says about where its prompt came from, beyond the fields every
/// event has (`agent_id`, `session_kind`, `parent_session`): read by
/// [`Host::prompt_author`], the one place that decides, per host, whose words a prompt is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The Cline SDK's `parent_agent_id`: the agent that sent the prompt has a parent.
    pub parent_agent: bool,
    /// The session key (OpenClaw `sessionKey`: `agent:<id>:subagent:…`, `…:cron:…`), at the
    /// payload's top level and in OpenClaw's hook context.
    pub session_key: Option<Cow<'a, str>>,
    pub ctx_session_key: Option<Cow<'a, str>>,
    /// What the OpenCode and Pi bridges say of a prompt (`prompt_source`): OpenCode `user` or
    /// `subagent`; Pi's input source `interactive`, `rpc` or `extension`, or `template` when a
    /// prompt template or skill expanded what was typed.
    pub prompt_source: Option<Cow<'a, str>>,
    /// OpenClaw `ctx.trigger`: what started the run (`user`, `cron`, `heartbeat`).
    pub trigger: Option<Cow<'a, str>>,
    /// OpenClaw `ctx.inputProvenance.kind` (`external_user`, `inter_session`,
    /// `internal_system`) and `sourceRole` (`subagent`).
    pub provenance: Option<Cow<'a, str>>,
    pub provenance_role: Option<Cow<'a, str>>,
    /// A channel's sender is named (OpenClaw `ctx.senderId`, `ctx.channelContext.sender`).
    pub sender: bool,
    /// `senderIsOwner`, where the payload carries it (top level, or OpenClaw's `ctx`).
    pub sender_is_owner: Option<bool>,
}

impl<'a> Event<'a> {
    /// An event with nothing known but its name.
    pub fn bare(host: Host, kind: EventKind, name: Cow<'a, str>) -> Event<'a> {
        Event {
            host,
            kind,
            name,
            parsed: true,
            session_id: None,
            cwd: None,
            model: None,
            permission_mode: None,
            prompt_id: None,
            turn_id: None,
            agent_id: None,
            agent_type: None,
            tool: None,
            prompt: None,
            source: None,
            trigger: None,
            reason: None,
            error: None,
            message: None,
            file_path: None,
            file_touch: None,
            new_cwd: None,
            summary: None,
            custom_instructions: None,
            session_kind: None,
            parent_session: None,
            session_duration_ms: None,
            context_usage_percent: None,
            message_count: None,
            turn_tool_calls: None,
            background_tasks: None,
            task_id: None,
            task_subject: None,
            model_messages: None,
            origin: Origin::default(),
        }
    }

    /// The tool input's fields that the fold uses; parsed on demand (most events do not need it).
    pub fn tool_input(&self) -> ToolInput<'a> {
        self.tool
            .as_ref()
            .and_then(|t| t.input)
            .map(ToolInput::parse)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_host_wins() {
        let raw = r#"{"hook_event_name":"Stop","turn_id":"t","session_id":"s"}"#;
        assert_eq!(Event::parse("Stop", raw).host, Host::Codex);
        assert_eq!(
            Event::parse_as(Some(Host::Claude), "Stop", raw).host,
            Host::Claude
        );
    }
}
