//! Cursor (its `hooks.json` hooks): camelCase event names, `conversation_id` for the session,
//! `workspace_roots` for the directory. Shell and MCP executions are tool calls; reading and
//! editing a file are reported as file events of their own; tab-completion events
//! (beforeTabFileRead, afterTabFileEdit) are not the agent's and stay `Other`.

use std::borrow::Cow;

use crate::event::tools::FileOp;
use crate::event::wire::Wire;
use crate::event::{Event, EventKind, Host, Tool};
use crate::host::claude::normalize as claude;

pub(in crate::host) const NAMES: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "afterAgentResponse",
    "afterAgentThought",
    "preCompact",
    "stop",
    "beforeTabFileRead",
    "afterTabFileEdit",
];

fn kind(name: &str) -> EventKind {
    match name {
        "sessionStart" => EventKind::SessionStart,
        "sessionEnd" => EventKind::SessionEnd,
        "preToolUse" | "beforeShellExecution" | "beforeMCPExecution" => EventKind::PreToolUse,
        "postToolUse" | "afterShellExecution" | "afterMCPExecution" => EventKind::PostToolUse,
        "postToolUseFailure" => EventKind::PostToolUseFailure,
        "subagentStart" => EventKind::SubagentStart,
        "subagentStop" => EventKind::SubagentStop,
        "beforeSubmitPrompt" => EventKind::UserPromptSubmit,
        "preCompact" => EventKind::PreCompact,
        "stop" => EventKind::Stop,
        _ => EventKind::Other,
    }
}

pub(in crate::host) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    let name = claude::name(w, record_kind);
    let mut e = Event::bare(Host::Cursor, kind(&name), name);
    let command = w.command.take();
    let status = w.status.take();
    claude::common(&mut e, w);
    e.session_id = w.conversation_id.take().or(e.session_id);
    e.cwd = e.cwd.or_else(|| w.workspace_roots.0.take());
    e.reason = e.reason.or(status);
    match e.name.as_ref() {
        "beforeShellExecution" | "afterShellExecution" => {
            e.tool = Some(Tool {
                name: Cow::Borrowed("Shell"),
                duration_ms: w.duration_ms.as_u64(),
                detail: command,
                ..Tool::default()
            });
        }
        "beforeReadFile" => e.file_touch = e.file_path.clone().map(|p| (FileOp::Read, p)),
        "afterFileEdit" => e.file_touch = e.file_path.clone().map(|p| (FileOp::Edit, p)),
        "postToolUseFailure" => {
            if let Some(t) = e.tool.as_mut() {
                t.failed = true;
            }
        }
        _ => {}
    }
    e
}
