//! What `sjournal install cline` writes: one executable file per hook, named after it, in a
//! hooks directory — the user's `~/Documents/Cline/Hooks/` (read by the VS Code extension and
//! by the `cline` CLI, which also reads `~/.cline/hooks/`) or the project's
//! `.clinerules/hooks/`. Cline reads the reply (`{"cancel": false, ...}`) from the script's
//! stdout.

use crate::host::install::{ConfigFile, HookFilesInstall, McpInstall, McpTable, MCP_SERVERS};

pub(crate) const INSTALL: HookFilesInstall = HookFilesInstall {
    display_name: "Cline",
    hook_flag: "cline",
    user_dir: "Documents/Cline/Hooks",
    project_dir: ".clinerules/hooks",
    // The extension's eight and the SDK's `TaskError` and `SessionShutdown` (the CLI maps
    // each file to its own event: `TaskStart` to `agent_start`, `PreToolUse` to `tool_call`,
    // ...; it has no event for `PreCompact`).
    hooks: &[
        "TaskStart",
        "TaskResume",
        "TaskCancel",
        "TaskComplete",
        "TaskError",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PreCompact",
        "SessionShutdown",
    ],
};

fn mcp_entry(program: &str, args: &[&str]) -> serde_json::Value {
    serde_json::json!({"type": "stdio", "command": program, "args": args, "disabled": false})
}

/// The `cline` CLI's MCP servers (user scope only; the VS Code extension keeps its own file).
pub(crate) const MCP: McpInstall = McpInstall {
    display_name: "Cline",
    user: Some(McpTable {
        file: ConfigFile::ClineMcpSettings,
        servers: MCP_SERVERS,
    }),
    project: None,
    local: None,
    entry: mcp_entry,
};
