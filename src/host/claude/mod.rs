//! Claude Code: the canonical protocol. Context goes in
//! `hookSpecificOutput.additionalContext`, whose `hookEventName` must equal the event.

pub(super) mod install;
pub(super) mod normalize;

use serde_json::{json, Value};

use super::Author;

/// Elements Claude Code writes as a user-role prompt itself (2.1.332's bundle): a background
/// task's notification, a message from a channel (an MCP chat bridge: someone else's words
/// unless the host vouches for them), a webhook trigger's payload, a wake-up, a live room's
/// event, the output of a local command, a reminder it wraps notifications in.
const HOST_ELEMENTS: &[(&str, Author)] = &[
    ("task-notification", Author::Host),
    ("system-reminder", Author::Host),
    ("local-command-stdout", Author::Host),
    ("local-command-stderr", Author::Host),
    ("local-command-caveat", Author::Host),
    ("skill-watcher-idle-wake", Author::Host),
    ("artifact-room-event", Author::Other),
    ("webhook-payload", Author::Other),
    ("channel", Author::Other),
];

/// Who wrote a Claude Code prompt (no subagent's): the host (or, for what comes from outside,
/// another sender) when the prompt opens with one of the host's own elements, else the user.
pub(super) fn prompt_author(prompt: &str) -> Author {
    HOST_ELEMENTS
        .iter()
        .find(|(tag, _)| super::opens_with_element(prompt, [*tag]))
        .map_or(Author::User, |(_, who)| *who)
}

pub(super) fn default_context_event(event: &str) -> bool {
    matches!(event, "SessionStart" | "UserPromptSubmit")
}

pub(super) fn accepts_context(event: &str) -> bool {
    matches!(
        event,
        "SessionStart"
            | "Setup"
            | "SubagentStart"
            | "UserPromptSubmit"
            | "UserPromptExpansion"
            | "PreToolUse"
            | "PostToolUse"
            | "PostToolUseFailure"
            | "PostToolBatch"
            | "Stop"
            | "SubagentStop"
    )
}

/// The reply that injects `context` (Claude Code, Codex, Gemini CLI and the bridges).
pub(super) fn reply(event: &str, context: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})
        .to_string()
}

/// A notice for the user: `systemMessage`, which Claude Code, Codex and Gemini CLI show as a
/// warning, and which the OpenCode, Pi and OpenClaw bridges (`tools/bridge-common`) read.
pub(super) fn notice(reply: &mut Value, notice: &str) {
    reply["systemMessage"] = notice.into();
}
