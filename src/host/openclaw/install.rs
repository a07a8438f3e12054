//! What `sjournal install openclaw` registers as data: its MCP server, in `mcp.servers` of
//! OpenClaw's configuration (user scope only). The plugin itself is written by
//! `install/bridge.rs`.

use crate::host::install::{
    plain_mcp_entry, BridgeInstall, BridgeSource, ConfigFile, McpInstall, McpTable, ServersAt,
};

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

/// The native plugin: a directory with its module, manifest and package file. Its
/// conversation hooks must also be allowed in OpenClaw's configuration
/// (`install/bridge.rs`, `edit_openclaw_config`).
pub(crate) const BRIDGE: BridgeInstall = BridgeInstall {
    display_name: "OpenClaw",
    word: "openclaw",
    user_dir: ConfigFile::OpenClawState("extensions/sjournal"),
    project_dir: ".openclaw/extensions/sjournal",
    files: &[
        BridgeSource::TypeScript {
            name: "index.ts",
            source: include_str!("../../../tools/openclaw-plugin/index.ts"),
        },
        BridgeSource::Json {
            name: "openclaw.plugin.json",
            source: include_str!("../../../tools/openclaw-plugin/openclaw.plugin.json"),
        },
        BridgeSource::Json {
            name: "package.json",
            source: include_str!("../../../tools/openclaw-plugin/package.json"),
        },
    ],
    after_install: "the Gateway loads it at its next start (`openclaw plugins list` shows it); OpenClaw notes that it cannot verify where a local plugin came from.",
};
