//! What `sjournal install cline` writes: one executable file per hook, named after it, in a
//! hooks directory — the user's `~/Documents/Cline/Hooks/` (read by the VS Code extension and
//! by the `cline` CLI, which also reads `~/.cline/hooks/`) or the project's
//! `.clinerules/hooks/`. Cline reads the reply (`{"cancel": false, ...}`) from the script's
//! stdout.

use crate::host::install::{
    BridgeInstall, BridgeSource, ConfigFile, HookFilesInstall, McpInstall, McpTable, UserDir,
    MCP_SERVERS,
};

/// Under `$HOME`.
const USER_DIR: &str = "Documents/Cline/Hooks";
/// Under the project's root.
const PROJECT_DIR: &str = ".clinerules/hooks";

pub(crate) const INSTALL: HookFilesInstall = HookFilesInstall {
    hook_flag: "cline",
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

/// The hook files as a bridge: written and removed as the plugins are.
pub(crate) const BRIDGE: BridgeInstall = BridgeInstall {
    display_name: "Cline",
    word: "cline",
    user_dir: ConfigFile::User(UserDir::Home, USER_DIR),
    project_dir: PROJECT_DIR,
    files: &[BridgeSource::HookScripts],
    after_install: "Cline runs them from its next task (the VS Code extension shows them under Hooks). The `cline` CLI waits only for PreToolUse and PostToolUse; it runs the others detached and ignores their replies, so sjournal injects no context there by default.",
};
