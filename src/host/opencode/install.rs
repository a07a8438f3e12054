//! What `sjournal install opencode` registers as data: its MCP server, in `mcp` of
//! `opencode.json` (`type: local`, the command as one array). The plugin itself is written
//! by `install/bridge.rs`.

use crate::host::install::{
    BridgeInstall, BridgeSource, ConfigFile, McpInstall, McpTable, ServersAt,
};

fn mcp_entry(program: &str, args: &[&str]) -> serde_json::Value {
    let mut cmd = vec![program];
    cmd.extend(args);
    serde_json::json!({"type": "local", "command": cmd, "enabled": true})
}

pub(crate) const MCP: McpInstall = McpInstall {
    display_name: "OpenCode",
    user: Some(McpTable {
        file: ConfigFile::XdgConfig("opencode/opencode.json"),
        servers: ServersAt::Json(&["mcp"]),
    }),
    project: Some(McpTable {
        file: ConfigFile::Project("opencode.json"),
        servers: ServersAt::Json(&["mcp"]),
    }),
    local: None,
    entry: mcp_entry,
};

/// The plugin: one file, where OpenCode loads plugins.
pub(crate) const BRIDGE: BridgeInstall = BridgeInstall {
    display_name: "OpenCode",
    word: "opencode",
    user_dir: ConfigFile::XdgConfig("opencode/plugins"),
    project_dir: ".opencode/plugins",
    files: &[BridgeSource::TypeScript {
        name: "sjournal.ts",
        source: include_str!("../../../tools/opencode-plugin/sjournal.ts"),
    }],
    after_install: "OpenCode loads it at its next start.",
};
