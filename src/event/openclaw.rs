//! OpenClaw, in the shapes of its lifecycle-hook RFC (openclaw/openclaw#17707, "RFC 001: Agent
//! Lifecycle Hooks"): onSessionStart {sessionKey, sessionKind: main|cron|spawn,
//! parentSession?}, onPreCompaction {sessionKey, contextUsagePercent, messageCount},
//! onPostTurn {sessionKey, userMessage, assistantMessage, toolCalls}, onSessionEnd
//! {sessionKey, reason, durationMs}; each with a `timestamp`. The RFC puts no event name in the
//! payload, so a bridge names it in `hook_event_name` (or `event`).

use std::borrow::Cow;

use super::wire::Wire;
use super::{Event, EventKind, Host};

pub(crate) const NAMES: &[&str] = &[
    "onSessionStart",
    "onPreCompaction",
    "onPostTurn",
    "onSessionEnd",
];

pub(super) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    let name = w
        .hook_event_name
        .take()
        .or_else(|| w.event.take())
        .unwrap_or(Cow::Borrowed(record_kind));
    let kind = match name.as_ref() {
        "onSessionStart" => EventKind::SessionStart,
        "onPreCompaction" => EventKind::PreCompact,
        // A turn is reported once, after it ended, prompt included: the fold counts it as a
        // turn that opened and closed.
        "onPostTurn" => EventKind::Stop,
        "onSessionEnd" => EventKind::SessionEnd,
        _ => EventKind::Other,
    };
    let mut e = Event::bare(Host::OpenClaw, kind, name);
    e.session_id = w.session_key.take().or_else(|| w.session_id.take());
    e.cwd = w.cwd.take();
    e.model = w.model.take();
    e.session_kind = w.session_kind.take();
    e.parent_session = w.parent_session.take();
    e.context_usage_percent = w.context_usage_percent.0;
    e.message_count = w.message_count.as_u64();
    e.prompt = w.user_message.take();
    e.message = w.assistant_message.take();
    e.turn_tool_calls = w.tool_calls;
    e.reason = w.reason.take();
    e.session_duration_ms = w.duration_ms_cc.as_u64();
    match kind {
        EventKind::SessionStart => e.source = Some(Cow::Borrowed("startup")),
        EventKind::PreCompact => e.trigger = Some(Cow::Borrowed("auto")),
        _ => {}
    }
    e
}
