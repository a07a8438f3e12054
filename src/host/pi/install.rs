//! What `sjournal install pi` registers as data: its MCP server, in `mcpServers` of Pi's
//! `mcp.json`. The extension itself is written by `install/bridge.rs`.

use crate::host::install::{plain_mcp_entry, ConfigFile, McpInstall, McpTable, MCP_SERVERS};

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
