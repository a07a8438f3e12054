//! Cline: one executable per hook, camelCase fields, the event's data
//! nested under its own key (`preToolUse: {toolName, parameters}`). A Cline task is a session:
//! TaskStart/TaskResume start it, TaskComplete/TaskCancel (and the SDK's TaskError,
//! SessionShutdown) end it.
//!
//! The Cline SDK (the `cline` CLI 3.x) runs the same hook files but names the event by the
//! SDK's hook (`hookName: "agent_start"` from the file `TaskStart`, `tool_call` from
//! `PreToolUse`, ...), adds snake_case `agent_id`/`parent_agent_id` (a subagent's run starts and
//! ends as SubagentStart/SubagentStop), `sessionContext.rootSessionId` (the session `cline --id`
//! resumes, its subagents' too; `taskId` is one conversation of it) and the tool call as
//! the model sent it (`tool_call`, `tool_result` with `output` and `error`). Its
//! `postToolUse.success` is false only when the tool threw: a command that exits non-zero is a
//! `success: false` item of `tool_result.output`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::event::lenient::{Bool, Obj, Str};
use crate::event::wire::{ClineCall, ClineTool, Wire};
use crate::event::RawJson;
use crate::event::{Event, EventKind, Host, Tool};

fn kind(name: &str) -> (EventKind, Option<&'static str>) {
    match name {
        "TaskStart" | "agent_start" => (EventKind::SessionStart, Some("startup")),
        "TaskResume" | "agent_resume" => (EventKind::SessionStart, Some("resume")),
        "TaskComplete" | "agent_end" => (EventKind::SessionEnd, Some("complete")),
        "TaskCancel" | "agent_abort" => (EventKind::SessionEnd, Some("cancel")),
        "TaskError" | "agent_error" => (EventKind::SessionEnd, Some("error")),
        "SessionShutdown" | "session_shutdown" => (EventKind::SessionEnd, Some("shutdown")),
        "PreToolUse" | "tool_call" => (EventKind::PreToolUse, None),
        "PostToolUse" | "tool_result" => (EventKind::PostToolUse, None),
        "UserPromptSubmit" | "prompt_submit" => (EventKind::UserPromptSubmit, None),
        "PreCompact" | "pre_compact" => (EventKind::PreCompact, None),
        _ => (EventKind::Other, None),
    }
}

/// One item of an SDK tool's `output` (an array for the batch tools, `run_commands` and
/// `read_files`; an object for `editor`). `query` names the item: the command, the path.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Item<'a> {
    success: Bool,
    #[serde(borrow)]
    error: Str<'a>,
    #[serde(borrow)]
    query: Str<'a>,
}

/// The first failed item of an SDK tool's `output`: its error (`""` if it has none) and,
/// for a batch, its query; None if no item failed.
fn failed_item<'a>(output: &'a RawValue) -> Option<(Cow<'a, str>, Option<Cow<'a, str>>)> {
    let (items, batch): (Vec<Obj<Item<'a>>>, bool) =
        match output.get().trim_start().as_bytes().first() {
            Some(b'[') => (serde_json::from_str(output.get()).unwrap_or_default(), true),
            Some(b'{') => (
                serde_json::from_str(output.get()).map_or_else(|_| Vec::new(), |i| vec![i]),
                false,
            ),
            _ => (Vec::new(), false),
        };
    items
        .into_iter()
        .filter_map(|i| i.0)
        .find(|i| i.success.0 == Some(false))
        .map(|mut i| {
            let query = if batch { i.query.take() } else { None };
            (i.error.take().unwrap_or(Cow::Borrowed("")), query)
        })
}

/// A thrown tool's `error`: a string, or an object's `message`; None for null.
fn thrown(error: &RawValue) -> Option<Cow<'_, str>> {
    #[derive(Default, Deserialize)]
    #[serde(default)]
    struct Thrown<'a> {
        #[serde(borrow)]
        message: Str<'a>,
    }
    match error.get().trim_start().as_bytes().first() {
        Some(b'"') => serde_json::from_str::<Str<'_>>(error.get()).ok()?.0,
        Some(b'{') => {
            serde_json::from_str::<Thrown<'_>>(error.get())
                .ok()?
                .message
                .0
        }
        Some(b'n') | None => None,
        Some(_) => Some(Cow::Borrowed(error.get())),
    }
}

/// `Command exited with code N` (the SDK's `run_commands`).
fn exit_code(error: &str) -> Option<i64> {
    error
        .split("exited with code ")
        .nth(1)?
        .split(|c: char| !c.is_ascii_digit() && c != '-')
        .next()?
        .parse()
        .ok()
}

/// The tool call, and the error of a failed one: the failed item's, else the thrown one's.
fn tool<'a>(
    t: ClineTool<'a>,
    call: Option<ClineCall<'a>>,
) -> Option<(Tool<'a>, Option<Cow<'a, str>>)> {
    let mut t = t;
    let mut call = call.unwrap_or_default();
    let mut tool = Tool {
        name: t.tool_name.take()?,
        use_id: call.id.take(),
        input: call.input.or(t.parameters).map(RawJson::from),
        response: call.output.or(t.result).map(RawJson::from),
        failed: t.success.0 == Some(false),
        outcome_unknown: false,
        duration_ms: t.execution_time_ms.as_u64().or(call.duration_ms.as_u64()),
        ..Tool::default()
    };
    let thrown_error = call.error.filter(|e| e.get() != "null");
    let mut error = None;
    if let Some((err, query)) = call.output.and_then(failed_item) {
        tool.failed = true;
        tool.exit_code = exit_code(&err);
        // A batch is named by the item that failed, not by its first entry.
        tool.detail = query.filter(|q| !q.trim().is_empty());
        error = Some(err);
    }
    if let Some(raw) = thrown_error {
        tool.failed = true;
        error = error
            .filter(|e| !e.trim().is_empty())
            .or_else(|| thrown(raw));
    }
    Some((tool, error.filter(|e| !e.trim().is_empty())))
}

pub(in crate::host) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    let name = w
        .hook_name
        .take()
        .or_else(|| w.hook_event_name.take())
        .unwrap_or(Cow::Borrowed(record_kind));
    let (kind, implied) = kind(&name);
    // A subagent (a `spawn_agent` or team member) is an agent with a parent: its run's start
    // and end are the subagent's, in the root session.
    let sub = w.parent_agent_id.0.is_some();
    let kind = match kind {
        EventKind::SessionStart if sub => EventKind::SubagentStart,
        EventKind::SessionEnd if sub => EventKind::SubagentStop,
        k => k,
    };
    let mut e = Event::bare(Host::Cline, kind, name);
    e.session_id = w
        .cline_session
        .0
        .as_mut()
        .and_then(|s| s.root_session_id.take())
        .or_else(|| w.task_id.take());
    e.cwd = w.workspace_roots_cc.0.take();
    e.model = w.model.take();
    if sub {
        e.agent_id = w.agent_id.take();
    }
    match kind {
        EventKind::SessionStart => e.source = implied.map(Cow::Borrowed),
        EventKind::SessionEnd => e.reason = implied.map(Cow::Borrowed),
        EventKind::PreCompact => e.trigger = Some(Cow::Borrowed("auto")),
        _ => {}
    }
    let call = match kind {
        EventKind::PreToolUse => w
            .cline_pre_tool
            .0
            .take()
            .and_then(|t| tool(t, w.tool_call.0.take())),
        EventKind::PostToolUse => w
            .cline_post_tool
            .0
            .take()
            .and_then(|t| tool(t, w.tool_result.0.take())),
        _ => None,
    };
    if let Some((t, error)) = call {
        e.tool = Some(t);
        e.error = error;
    }
    if let Some(p) = w.cline_prompt.0.as_mut() {
        e.prompt = p.prompt.take();
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_of_the_sdk_run_commands() {
        assert_eq!(exit_code("Command exited with code 3"), Some(3));
        assert_eq!(exit_code("Error reading file: ENOENT"), None);
    }

    #[test]
    fn a_thrown_error_is_its_text_or_message() {
        let raw = |j: &'static str| serde_json::from_str::<&RawValue>(j).unwrap();
        assert_eq!(thrown(raw(r#""boom""#)).as_deref(), Some("boom"));
        assert_eq!(
            thrown(raw(r#"{"message":"boom","x":1}"#)).as_deref(),
            Some("boom")
        );
        assert_eq!(thrown(raw("null")), None);
    }

    #[test]
    fn a_batch_is_named_by_its_failed_item_and_a_thrown_call_keeps_its_error() {
        let raw = r#"{"hookName":"tool_result","taskId":"t","postToolUse":{"toolName":"run_commands","success":true},"tool_result":{"id":"c1","input":{"commands":["ls","make chk"]},"output":[{"query":"ls","result":"a\n","success":true},{"query":"make chk","result":"","error":"Command exited with code 2","success":false}],"error":null}}"#;
        let e = Event::parse("tool_result", raw);
        let t = e.tool.as_ref().unwrap();
        assert!(t.failed);
        assert_eq!(
            (t.detail.as_deref(), t.exit_code),
            (Some("make chk"), Some(2))
        );
        assert_eq!(e.error.as_deref(), Some("Command exited with code 2"));
        let raw = r#"{"hookName":"tool_result","taskId":"t","postToolUse":{"toolName":"editor","success":false},"tool_result":{"id":"c2","input":{"path":"/p/a.txt"},"output":null,"error":{"message":"EACCES: permission denied"}}}"#;
        let e = Event::parse("tool_result", raw);
        let t = e.tool.as_ref().unwrap();
        assert!(t.failed && t.detail.is_none() && t.exit_code.is_none());
        assert_eq!(e.error.as_deref(), Some("EACCES: permission denied"));
    }
}
