//! What `sjournal install claude-code` writes: `settings.json` (`$CLAUDE_CONFIG_DIR/` or
//! `~/.claude/`, the project's `.claude/settings.json` or `.claude/settings.local.json`),
//! `hooks` → event → matcher groups of command handlers, timeouts in seconds.

use crate::host::install::{
    spec, ConfigFile, HookSpec, HooksInstall, McpInstall, McpTable, ServersAt, TimeoutUnit,
    UserDir, MCP_SERVERS,
};

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

fn mcp_entry(program: &str, args: &[&str]) -> serde_json::Value {
    serde_json::json!({"type": "stdio", "command": program, "args": args, "env": {}})
}

/// Claude Code's MCP servers, in the scopes of `claude mcp add --scope user|project|local`.
pub(crate) const MCP: McpInstall = McpInstall {
    display_name: "Claude Code",
    user: Some(McpTable {
        file: ConfigFile::ClaudeJson,
        servers: MCP_SERVERS,
    }),
    project: Some(McpTable {
        file: ConfigFile::Project(".mcp.json"),
        servers: MCP_SERVERS,
    }),
    local: Some(McpTable {
        file: ConfigFile::ClaudeJson,
        servers: ServersAt::ProjectJson(&["mcpServers"]),
    }),
    entry: mcp_entry,
};
