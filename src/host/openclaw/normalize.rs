//! OpenClaw 2026.9.6, as its native plugin (`tools/openclaw-plugin`) sends it: each typed
//! plugin hook under OpenClaw's own name (`hook_event_name`), OpenClaw's `event` and `ctx`
//! objects kept (selectively serialized), and Claude-shaped top-level fields the plugin
//! derived (`session_id` = OpenClaw's `sessionId`, `tool_name`/`tool_input`/`tool_response`,
//! `prompt`, `source`, `reason`, `trigger`) plus the lifecycle RFC's fields OpenClaw lacks:
//! `sessionKind` (from the session key), `parentSession` (from `subagent_spawned`),
//! `contextUsagePercent` (`tokenCount / contextTokenBudget`), `messageCount`.

use crate::event::wire::Wire;
use crate::event::{Event, EventKind, Host};
use crate::host::claude::normalize as claude;

fn kind(name: &str) -> EventKind {
    match name {
        "session_start" => EventKind::SessionStart,
        "session_end" => EventKind::SessionEnd,
        "before_compaction" => EventKind::PreCompact,
        "after_compaction" => EventKind::PostCompact,
        "before_prompt_build" => EventKind::UserPromptSubmit,
        // A turn's end (post-turn); a failed run is a StopFailure.
        "agent_end" => EventKind::Stop,
        "before_tool_call" => EventKind::PreToolUse,
        "after_tool_call" => EventKind::PostToolUse,
        "subagent_spawned" => EventKind::SubagentStart,
        "subagent_ended" => EventKind::SubagentStop,
        _ => EventKind::Other,
    }
}

pub(in crate::host) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    let name = claude::name(w, record_kind);
    let mut e = Event::bare(Host::OpenClaw, kind(&name), name);
    claude::common(&mut e, w);
    if e.session_id.is_none() {
        e.session_id = w.session_key.take();
    }
    if e.kind == EventKind::Stop && e.error.is_some() {
        e.kind = EventKind::StopFailure;
    }
    if e.kind == EventKind::PostToolUse && e.error.is_some() {
        if let Some(t) = e.tool.as_mut() {
            t.failed = true;
        }
    }
    e.session_kind = w.session_kind.take();
    e.parent_session = e.parent_session.take().or_else(|| w.parent_session.take());
    e.context_usage_percent = w.context_usage_percent.0;
    e.message_count = w.message_count.as_u64();
    e.session_duration_ms = w.duration_ms_cc.as_u64();
    e
}
