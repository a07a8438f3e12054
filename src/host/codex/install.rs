//! What `sjournal install codex` writes: `hooks.json` (`$CODEX_HOME/`, else `~/.codex/`, or
//! the project's `.codex/hooks.json`), Claude Code's shape, timeouts in seconds.

use crate::host::install::{
    plain_mcp_entry, spec, ConfigFile, HookSpec, HooksInstall, McpInstall, McpTable, ServersAt,
    TimeoutUnit, UserDir,
};

const HOOKS: &[HookSpec] = &[
    spec("SessionStart", None, 10),
    spec("UserPromptSubmit", None, 5),
    spec("PreToolUse", None, 5),
    spec("PostToolUse", None, 5),
    spec("PreCompact", None, 10),
    spec("PostCompact", None, 10),
    spec("SubagentStart", None, 5),
    spec("SubagentStop", None, 5),
    spec("Stop", None, 10),
    // Codex clamps SessionEnd hooks to 3 s.
    spec("SessionEnd", None, 3),
];

pub(crate) const INSTALL: HooksInstall = HooksInstall {
    display_name: "Codex CLI",
    hook_flag: "codex",
    user_file: (UserDir::CodexHome, "hooks.json"),
    project_file: ".codex/hooks.json",
    local_file: None,
    hooks: HOOKS,
    timeout_unit: TimeoutUnit::Seconds,
    handler_name: None,
    after_install: Some(
        "Codex runs a hook only once it is trusted, and skips untrusted hooks silently: \
         start `codex`, open `/hooks`, review sjournal's hooks and choose Trust (again \
         after any change to them). For one unattended run, \
         `codex exec --dangerously-bypass-hook-trust` runs them without review.",
    ),
};

/// Codex's MCP servers: `[mcp_servers.<name>]` in its `config.toml`.
pub(crate) const MCP: McpInstall = McpInstall {
    display_name: "Codex",
    user: Some(McpTable {
        file: ConfigFile::User(UserDir::CodexHome, "config.toml"),
        servers: ServersAt::Toml,
    }),
    project: Some(McpTable {
        file: ConfigFile::Project(".codex/config.toml"),
        servers: ServersAt::Toml,
    }),
    local: None,
    entry: plain_mcp_entry,
};
