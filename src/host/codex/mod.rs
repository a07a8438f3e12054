//! Codex CLI (as the real 0.171.0 runs, `tests/real_hosts/codex.rs`): Claude Code's protocol
//! and names, plus `turn_id` on turn events. SessionStart and SessionEnd carry no `turn_id`;
//! their `transcript_path` is a `rollout-<time>-<id>.jsonl` file, which Claude Code never
//! writes.

pub(super) mod install;
pub(super) mod normalize;

use super::{Author, Clues};

/// Elements Codex writes into a user turn itself (0.171.0's binary): a subagent's or another
/// agent's notification, an aborted turn, the environment, a shell command the user ran with
/// `!` (its output, not a request).
const HOST_ELEMENTS: &[&str] = &[
    "subagent_notification",
    "agent_message_board_notification",
    "turn_aborted",
    "environment_context",
    "user_instructions",
    "user_shell_command",
];

/// Who wrote a Codex prompt (no subagent's): the host when the prompt opens with one of its
/// own elements, else the user.
pub(super) fn prompt_author(prompt: &str) -> Author {
    if super::opens_with_element(prompt, HOST_ELEMENTS.iter().copied()) {
        Author::Host
    } else {
        Author::User
    }
}

pub(super) fn matches(c: &Clues<'_>) -> bool {
    (c.turn_id && c.hook_event_name != Some("MessageDisplay"))
        || (c.rollout_transcript && c.hook_event_name.is_some())
}

/// Codex's session files: `.../sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.
pub(crate) fn is_rollout(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.starts_with("rollout-") && file.ends_with(".jsonl")
}

/// Codex turns additionalContext of these events into developer messages (0.171.0, run by
/// `tests/real_hosts/codex.rs`).
pub(super) fn accepts_context(event: &str) -> bool {
    matches!(
        event,
        "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "PostToolUse" | "SubagentStart"
    )
}
