//! What `sjournal install claude-code` writes: `settings.json` (`$CLAUDE_CONFIG_DIR/` or
//! `~/.claude/`, the project's `.claude/settings.json` or `.claude/settings.local.json`),
//! `hooks` → event → matcher groups of command handlers, timeouts in seconds.

use crate::host::install::{spec, HookSpec, HooksInstall, TimeoutUnit, UserDir};

const HOOKS: &[HookSpec] = &[
    spec("SessionStart", None, 10),
    // The instruction files (CLAUDE.md, ...) the host loaded: memory leaves out what they say.
    spec("InstructionsLoaded", None, 5),
    spec("UserPromptSubmit", None, 5),
    spec("PreToolUse", Some("*"), 5),
    spec("PostToolUse", Some("*"), 5),
    spec("PostToolUseFailure", Some("*"), 5),
    spec("PreCompact", Some("*"), 10),
    spec("PostCompact", Some("*"), 10),
    spec("SubagentStart", None, 5),
    spec("SubagentStop", None, 5),
    spec("Stop", None, 10),
    spec("Notification", None, 5),
    spec("SessionEnd", None, 5),
];

pub(crate) const INSTALL: HooksInstall = HooksInstall {
    display_name: "Claude Code",
    hook_flag: "claude",
    user_file: (UserDir::ClaudeConfig, "settings.json"),
    project_file: ".claude/settings.json",
    local_file: Some(".claude/settings.local.json"),
    hooks: HOOKS,
    timeout_unit: TimeoutUnit::Seconds,
    handler_name: None,
    after_install: None,
};
