//! Cline (hook-protocols §3.4): one executable per hook, camelCase payloads (`hookName`,
//! `taskId`, the event's data nested under its own key); every event is answered with
//! `{"cancel": false}`, plus `contextModification` to inject.

use serde_json::{json, Value};

use super::Clues;

pub(super) fn matches(c: &Clues<'_>) -> bool {
    c.hook_name || c.cline_version || (c.task_id && c.hook_event_name.is_none())
}

pub(super) fn default_context_event(event: &str) -> bool {
    matches!(event, "TaskStart" | "TaskResume" | "UserPromptSubmit")
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
