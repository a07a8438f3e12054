//! Claude Code (hook-protocols §1): the canonical protocol. Context goes in
//! `hookSpecificOutput.additionalContext`, whose `hookEventName` must equal the event.

use serde_json::json;

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
