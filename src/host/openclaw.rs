//! OpenClaw (real-hosts.md): no exec hooks; its native plugin (`tools/openclaw-plugin`) sends
//! each typed plugin hook as `{"sjournal_bridge": "openclaw", "hook_event_name": <hook name>,
//! "session_id", "sessionKey", "event": {...}, "ctx": {...}, ...}` and injects what the reply to
//! `before_prompt_build` carries (as `prependContext`).

use serde_json::Value;

use super::Clues;

/// The hooks of OpenClaw's lifecycle RFC as the plugin names them (OpenClaw's own hook names).
pub(crate) const NAMES: &[&str] = &[
    "session_start",
    "session_end",
    "before_compaction",
    "after_compaction",
    "before_reset",
    "before_prompt_build",
    "agent_end",
    "before_tool_call",
    "after_tool_call",
    "subagent_spawned",
    "subagent_ended",
];

pub(super) fn matches(c: &Clues<'_>) -> bool {
    c.bridge == Some("openclaw")
        || c.session_key
        || (c.hook_event_name.is_none() && c.event.is_some_and(|n| NAMES.contains(&n)))
}

/// The plugin puts OpenClaw's `sessionId` in `session_id`; else the session key.
pub(super) fn session_id(v: &Value) -> Option<&str> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    s("session_id")
        .or_else(|| s("sessionId"))
        .or_else(|| s("sessionKey"))
}

pub(super) fn default_context_event(event: &str) -> bool {
    event == "before_prompt_build"
}

pub(super) fn accepts_context(event: &str) -> bool {
    event == "before_prompt_build"
}
