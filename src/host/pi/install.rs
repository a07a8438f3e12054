//! What `sjournal install pi` registers as data: its MCP server, in `mcpServers` of Pi's
//! `mcp.json`. The extension itself is written by `install/bridge.rs`.

use crate::host::install::{
    plain_mcp_entry, BridgeInstall, BridgeSource, ConfigFile, McpInstall, McpTable, MCP_SERVERS,
};

pub(crate) const MCP: McpInstall = McpInstall {
    display_name: "Pi",
    user: Some(McpTable {
        file: ConfigFile::PiAgent("mcp.json"),
        servers: MCP_SERVERS,
    }),
    project: Some(McpTable {
        file: ConfigFile::Project(".pi/mcp.json"),
        servers: MCP_SERVERS,
    }),
    local: None,
    entry: plain_mcp_entry,
};

/// The extension: one file, where Pi loads extensions.
pub(crate) const BRIDGE: BridgeInstall = BridgeInstall {
    display_name: "Pi",
    word: "pi",
    user_dir: ConfigFile::PiAgent("extensions"),
    project_dir: ".pi/extensions",
    files: &[BridgeSource::TypeScript {
        name: "sjournal.ts",
        source: include_str!("../../../tools/pi-extension/sjournal.ts"),
    }],
    after_install: "Pi loads it at its next start (`pi --list-extensions` shows it).",
};
