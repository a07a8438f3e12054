//! What `sjournal install openclaw` registers as data: its MCP server, in `mcp.servers` of
//! OpenClaw's configuration (user scope only). The plugin itself is written by
//! `install/bridge.rs`.

use crate::host::install::{plain_mcp_entry, ConfigFile, McpInstall, McpTable, ServersAt};

pub(crate) const MCP: McpInstall = McpInstall {
    display_name: "OpenClaw",
    user: Some(McpTable {
        file: ConfigFile::OpenClawConfig,
        servers: ServersAt::Json(&["mcp", "servers"]),
    }),
    project: None,
    local: None,
    entry: plain_mcp_entry,
};
