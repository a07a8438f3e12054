//! What `sjournal install gemini` writes: `settings.json` (`~/.gemini/`, or the project's
//! `.gemini/settings.json`), Claude Code's shape with named handlers, timeouts in
//! milliseconds.

use crate::host::install::{
    plain_mcp_entry, spec, ConfigFile, HookSpec, HooksInstall, McpInstall, McpTable, TimeoutUnit,
    UserDir, MCP_SERVERS,
};

const HOOKS: &[HookSpec] = &[
    spec("SessionStart", None, 10_000),
    spec("BeforeAgent", None, 5_000),
    // The only event that names the model (`llm_request.model`); its payload is the whole
    // request, which the hook journals without reading more than the model.
    spec("BeforeModel", None, 5_000),
    spec("BeforeTool", None, 5_000),
    spec("AfterTool", None, 5_000),
    spec("AfterAgent", None, 5_000),
    spec("PreCompress", None, 5_000),
    spec("Notification", None, 5_000),
    spec("SessionEnd", None, 5_000),
];

pub(crate) const INSTALL: HooksInstall = HooksInstall {
    display_name: "Gemini CLI",
    hook_flag: "gemini",
    user_file: (UserDir::Home, ".gemini/settings.json"),
    project_file: ".gemini/settings.json",
    local_file: None,
    hooks: HOOKS,
    timeout_unit: TimeoutUnit::Milliseconds,
    handler_name: Some("sjournal"),
    after_install: Some(
        "Gemini CLI loads hooks only in a trusted folder: trust the project when Gemini \
         asks (or add it to ~/.gemini/trustedFolders.json as TRUST_FOLDER); in an \
         untrusted folder no hook runs.",
    ),
};

/// Gemini CLI's MCP servers: `mcpServers` in the same settings file as its hooks.
pub(crate) const MCP: McpInstall = McpInstall {
    display_name: "Gemini CLI",
    user: Some(McpTable {
        file: ConfigFile::User(UserDir::Home, ".gemini/settings.json"),
        servers: MCP_SERVERS,
    }),
    project: Some(McpTable {
        file: ConfigFile::Project(".gemini/settings.json"),
        servers: MCP_SERVERS,
    }),
    local: None,
    entry: plain_mcp_entry,
};
