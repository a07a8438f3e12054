//! Cline (hook-protocols §3.4): one executable per hook, camelCase fields, the event's data
//! nested under its own key (`preToolUse: {toolName, parameters}`). A Cline task is a session:
//! TaskStart/TaskResume start it, TaskComplete/TaskCancel (and the SDK's TaskError,
//! SessionShutdown) end it.

use std::borrow::Cow;

use super::wire::{ClineTool, Wire};
use super::RawJson;
use super::{Event, EventKind, Host, Tool};

fn kind(name: &str) -> (EventKind, Option<&'static str>) {
    match name {
        "TaskStart" => (EventKind::SessionStart, Some("startup")),
        "TaskResume" => (EventKind::SessionStart, Some("resume")),
        "TaskComplete" => (EventKind::SessionEnd, Some("complete")),
        "TaskCancel" => (EventKind::SessionEnd, Some("cancel")),
        "TaskError" => (EventKind::SessionEnd, Some("error")),
        "SessionShutdown" => (EventKind::SessionEnd, Some("shutdown")),
        "PreToolUse" => (EventKind::PreToolUse, None),
        "PostToolUse" => (EventKind::PostToolUse, None),
        "UserPromptSubmit" => (EventKind::UserPromptSubmit, None),
        "PreCompact" => (EventKind::PreCompact, None),
        _ => (EventKind::Other, None),
    }
}

fn tool(t: ClineTool<'_>) -> Option<Tool<'_>> {
    let mut t = t;
    Some(Tool {
        name: t.tool_name.take()?,
        input: t.parameters.map(RawJson::from),
        response: t.result.map(RawJson::from),
        failed: t.success.0 == Some(false),
        outcome_unknown: false,
        duration_ms: t.execution_time_ms.as_u64(),
        ..Tool::default()
    })
}

pub(super) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    let name = w
        .hook_name
        .take()
        .or_else(|| w.hook_event_name.take())
        .unwrap_or(Cow::Borrowed(record_kind));
    let (kind, implied) = kind(&name);
    let mut e = Event::bare(Host::Cline, kind, name);
    e.session_id = w.task_id.take();
    e.cwd = w.workspace_roots_cc.0.take();
    e.model = w.model.take();
    match kind {
        EventKind::SessionStart => e.source = implied.map(Cow::Borrowed),
        EventKind::SessionEnd => e.reason = implied.map(Cow::Borrowed),
        EventKind::PreCompact => e.trigger = Some(Cow::Borrowed("auto")),
        _ => {}
    }
    e.tool = match kind {
        EventKind::PreToolUse => w.cline_pre_tool.0.take().and_then(tool),
        EventKind::PostToolUse => w.cline_post_tool.0.take().and_then(tool),
        _ => None,
    };
    if let Some(p) = w.cline_prompt.0.as_mut() {
        e.prompt = p.prompt.take();
    }
    e
}
