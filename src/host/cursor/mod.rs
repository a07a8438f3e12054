//! Cursor (its `hooks.json` hooks): its own camelCase event names and `conversation_id`.

pub(super) mod normalize;

use serde_json::{json, Value};

use super::Clues;

pub(super) fn matches(c: &Clues<'_>) -> bool {
    c.conversation_id
        || c.cursor_version
        || c.generation_id
        || c.workspace_roots
        || c.hook_event_name
            .is_some_and(|n| normalize::NAMES.contains(&n))
}

pub(super) fn default_context_event(event: &str) -> bool {
    event == "sessionStart"
}

pub(super) fn accepts_context(event: &str) -> bool {
    event == "sessionStart"
}

pub(super) fn reply(context: &str) -> String {
    json!({"additional_context": context}).to_string()
}

/// A notice for the user: Cursor shows `user_message`.
pub(super) fn notice(reply: &mut Value, notice: &str) {
    reply["user_message"] = notice.into();
}
