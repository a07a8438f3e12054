//! Gemini CLI (as the real 0.61.0 runs, `tests/real_hosts/gemini.rs`): Claude-style payloads
//! under its own event names, each with a `timestamp`. additionalContext is wrapped in
//! `<hook_context>` and prepended to the prompt (SessionStart), added to it (BeforeAgent) or
//! appended to the tool output (AfterTool).

pub(super) mod install;
pub(super) mod normalize;

use super::Clues;

/// Event names only Gemini CLI uses (it shares SessionStart, SessionEnd, Notification).
pub(crate) const ONLY_NAMES: &[&str] = &[
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
];

pub(super) fn matches(c: &Clues<'_>) -> bool {
    let name = c.hook_event_name;
    name.is_some_and(|n| ONLY_NAMES.contains(&n)) || (c.timestamp && name.is_some())
}

/// BeforeAgent only: SessionStart's context is prepended to the first prompt's text, which
/// turns `gemini -p "/compress"` into a plain prompt, and comes back inside BeforeAgent's
/// `prompt` (0.61.0, run by `tests/real_hosts/gemini.rs`). BeforeAgent's is a separate part of
/// the same turn.
pub(super) fn default_context_event(event: &str) -> bool {
    event == "BeforeAgent"
}

pub(super) fn accepts_context(event: &str) -> bool {
    matches!(event, "SessionStart" | "BeforeAgent" | "AfterTool")
}
