//! Cline: one executable per hook, camelCase payloads (`hookName`,
//! `taskId`, the event's data nested under its own key); every event is answered with
//! `{"cancel": false}`, plus `contextModification` to inject.

pub(super) mod install;
pub(super) mod normalize;

use serde_json::{json, Value};

use super::Clues;

pub(super) fn matches(c: &Clues<'_>) -> bool {
    c.hook_name || c.cline_version || (c.task_id && c.hook_event_name.is_none())
}

/// The session: the SDK's `sessionContext.rootSessionId` (the id `cline --id` resumes, shared
/// by the session's subagents), else `taskId` (the VS Code extension's task).
pub(super) fn session_id(v: &Value) -> Option<&str> {
    fn nonempty(x: Option<&Value>) -> Option<&str> {
        x.and_then(Value::as_str).filter(|s| !s.is_empty())
    }
    nonempty(v.get("sessionContext").and_then(|c| c.get("rootSessionId")))
        .or_else(|| nonempty(v.get("taskId")))
}

/// The VS Code extension waits for every hook and adds its `contextModification` to the
/// conversation. The SDK (the `cline` CLI) names its events by the SDK's hooks and waits only
/// for `tool_call` and `tool_result` (PreToolUse, PostToolUse; their context reaches the model
/// as a `<hook_context>` message after the tool's result): it runs `agent_start`,
/// `agent_resume`, `prompt_submit` and the end events detached, with their output discarded.
/// No SDK event gets context by default (none of the run-start ones could deliver it); the
/// two tool events can be configured (`context_events`).
pub(super) fn default_context_event(event: &str) -> bool {
    matches!(event, "TaskStart" | "TaskResume" | "UserPromptSubmit")
}

/// Events whose reply Cline reads: every extension hook, the SDK's tool events.
pub(super) fn accepts_context(event: &str) -> bool {
    !matches!(
        event,
        "agent_start"
            | "agent_resume"
            | "agent_end"
            | "agent_abort"
            | "agent_error"
            | "prompt_submit"
            | "session_shutdown"
    )
}

pub(super) fn reply(context: Option<&str>) -> String {
    match context {
        Some(c) => json!({"cancel": false, "contextModification": c}),
        None => json!({"cancel": false}),
    }
    .to_string()
}

/// A notice for the user: Cline shows `errorMessage` (and proceeds, with `cancel: false`).
pub(super) fn notice(reply: &mut Value, notice: &str) {
    reply["cancel"] = false.into();
    reply["errorMessage"] = notice.into();
}
