//! OpenClaw: no exec hooks; its native plugin (`tools/openclaw-plugin`) sends
//! each typed plugin hook as `{"sjournal_bridge": "openclaw", "hook_event_name": <hook name>,
//! "session_id", "sessionKey", "event": {...}, "ctx": {...}, ...}` and injects what the reply to
//! `before_prompt_build` carries (as `prependContext`).

pub(super) mod install;
pub(super) mod normalize;

use serde_json::Value;

use super::{Author, Clues};

/// What kind of session an OpenClaw session key names (`agent:<agent>:<rest>`): a subagent's
/// (`:subagent:`, `:spawn:`, `:acp:`), a scheduled job's (`:cron:`), else a main session. The
/// plugin derives `sessionKind` the same way; sjournal reads the key itself as well.
pub(crate) fn key_kind(key: &str) -> &'static str {
    if [":subagent:", ":spawn:", ":acp:"]
        .iter()
        .any(|m| key.contains(m))
    {
        "spawn"
    } else if key.contains(":cron:") || key.starts_with("cron:") {
        "cron"
    } else {
        "main"
    }
}

/// Who wrote an OpenClaw prompt (`before_prompt_build`): the user only in a main session, on a
/// run the user started, from an external user, and from the owner where a channel names its
/// sender.
pub(super) fn prompt_author(e: &crate::event::Event<'_>) -> Author {
    let o = &e.origin;
    let kinds = [
        e.session_kind.as_deref(),
        o.session_key.as_deref().map(key_kind),
        o.ctx_session_key.as_deref().map(key_kind),
    ];
    if kinds.contains(&Some("spawn")) || e.parent_session.is_some() {
        return Author::Agent;
    }
    if kinds.contains(&Some("cron")) {
        return Author::Schedule;
    }
    if kinds.iter().flatten().any(|k| *k != "main") {
        return Author::Unknown;
    }
    match (o.provenance.as_deref(), o.provenance_role.as_deref()) {
        (_, Some("subagent")) | (Some("inter_session"), _) => return Author::Agent,
        (Some("internal_system"), _) => return Author::Host,
        (None | Some("external_user"), _) => {}
        (Some(_), _) => return Author::Unknown,
    }
    match o.trigger.as_deref() {
        Some("user") => {}
        Some("cron" | "heartbeat") => return Author::Schedule,
        _ => return Author::Unknown,
    }
    if o.sender && o.sender_is_owner != Some(true) {
        return Author::Other;
    }
    Author::User
}

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
