//! Claude Code (hook-protocols §1): the canonical protocol. Context goes in
//! `hookSpecificOutput.additionalContext`, whose `hookEventName` must equal the event.

use serde_json::{json, Value};

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
