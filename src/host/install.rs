//! What `sjournal install` writes for a host with exec hooks, as data: each host's folder
//! declares its [`HooksInstall`] (`host/<name>/install.rs`: which file its hooks go in, which
//! events are registered and with which timeouts, the handler's shape, what the user must
//! still do); `crate::install` interprets it (reads, merges and writes the settings file,
//! uninstalls). Nothing here touches a file: this floor is below `install/`, which imports it.

// The MCP part is read only by `install::mcp`, which the `search` feature builds.
#![cfg_attr(not(feature = "search"), allow(dead_code))]

use std::path::{Path, PathBuf};

/// Which configuration file: the user's, the project's shared one, or the project's local
/// (not committed) one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
    Local,
}

/// Where the hosts keep their user settings: `$HOME`, and Codex's `$CODEX_HOME` (Codex reads
/// its `hooks.json` and `config.toml` there, `~/.codex` when it is unset or empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Homes {
    pub home: Option<PathBuf>,
    /// `$CODEX_HOME`, made absolute (Codex resolves a relative one from its working directory).
    pub codex_home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`, made absolute: where Claude Code then reads `settings.json` and
    /// `.claude.json` (else `~/.claude/settings.json` and `~/.claude.json`).
    pub claude_config_dir: Option<PathBuf>,
}

/// A user directory a host reads its settings from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UserDir {
    /// `$HOME`.
    Home,
    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    ClaudeConfig,
    /// `$CODEX_HOME`, else `~/.codex`.
    CodexHome,
}

impl Homes {
    /// From the environment (an empty variable is unset).
    pub fn from_env() -> Homes {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Homes {
            home: var("HOME"),
            codex_home: var("CODEX_HOME").map(|p| std::path::absolute(&p).unwrap_or(p)),
            claude_config_dir: var("CLAUDE_CONFIG_DIR")
                .map(|p| std::path::absolute(&p).unwrap_or(p)),
        }
    }

    /// The directory `dir` names under these homes.
    pub(crate) fn dir(&self, dir: UserDir) -> Result<PathBuf, String> {
        match dir {
            UserDir::Home => Ok(self.home()?.to_owned()),
            UserDir::ClaudeConfig => match &self.claude_config_dir {
                Some(d) => Ok(d.clone()),
                None => Ok(self.home()?.join(".claude")),
            },
            UserDir::CodexHome => match &self.codex_home {
                Some(c) => Ok(c.clone()),
                None => Ok(self.home()?.join(".codex")),
            },
        }
    }

    /// Claude Code's own state file, with its MCP servers: `$CLAUDE_CONFIG_DIR/.claude.json`,
    /// else `~/.claude.json`.
    pub(crate) fn claude_json(&self) -> Result<PathBuf, String> {
        match &self.claude_config_dir {
            Some(d) => Ok(d.join(".claude.json")),
            None => Ok(self.home()?.join(".claude.json")),
        }
    }

    pub(crate) fn home(&self) -> Result<&Path, String> {
        self.home
            .as_deref()
            .ok_or_else(|| "HOME is not set; cannot find the user's configuration".to_owned())
    }

    /// The directory Codex reads its user configuration from: `$CODEX_HOME`, else `~/.codex`.
    pub fn codex(&self) -> Result<PathBuf, String> {
        self.dir(UserDir::CodexHome)
    }

    /// `~/.codex`, when `$CODEX_HOME` names another directory (where an older sjournal, which
    /// ignored `CODEX_HOME`, installed its hooks, which Codex then never runs).
    pub fn codex_default_elsewhere(&self) -> Option<PathBuf> {
        let default = self.home.as_deref()?.join(".codex");
        let set = self.codex_home.as_deref()?;
        let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        (!same(&default, set)).then_some(default)
    }
}

/// One hook to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    pub event: &'static str,
    /// The matcher of the group sjournal adds (None: no matcher key, i.e. every occurrence).
    pub matcher: Option<&'static str>,
    /// In the host's unit ([`HooksInstall::timeout_unit`]).
    pub timeout: u64,
}

pub(crate) const fn spec(
    event: &'static str,
    matcher: Option<&'static str>,
    timeout: u64,
) -> HookSpec {
    HookSpec {
        event,
        matcher,
        timeout,
    }
}

/// The unit a host reads its hooks' timeouts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeoutUnit {
    Seconds,
    Milliseconds,
}

impl TimeoutUnit {
    /// A timeout in this unit as a duration.
    pub(crate) fn duration(self, n: u64) -> std::time::Duration {
        match self {
            TimeoutUnit::Seconds => std::time::Duration::from_secs(n),
            TimeoutUnit::Milliseconds => std::time::Duration::from_millis(n),
        }
    }
}

/// Everything `install` needs to know about a host that keeps command hooks in a JSON
/// settings file (`hooks` → event → matcher groups of command handlers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HooksInstall {
    pub display_name: &'static str,
    /// The `--host` value the installed command passes to `sjournal hook`.
    pub hook_flag: &'static str,
    /// The user's settings file: a directory and the file's path under it.
    pub user_file: (UserDir, &'static str),
    /// The project's shared settings file, under the project's root.
    pub project_file: &'static str,
    /// The project's local (not committed) settings file, if the host has one.
    pub local_file: Option<&'static str>,
    /// The hooks sjournal registers.
    pub hooks: &'static [HookSpec],
    pub timeout_unit: TimeoutUnit,
    /// The handler's `name` key, for a host that names its handlers.
    pub handler_name: Option<&'static str>,
    /// What the user must still do for the host to run the hooks (printed after installing).
    pub after_install: Option<&'static str>,
}

impl HooksInstall {
    /// The configuration file for a scope: the user's under `homes`, the project's under
    /// `project`, its root.
    pub(crate) fn config_path(
        &self,
        scope: Scope,
        homes: &Homes,
        project: &Path,
    ) -> Result<PathBuf, String> {
        match scope {
            Scope::User => Ok(homes.dir(self.user_file.0)?.join(self.user_file.1)),
            Scope::Project => Ok(project.join(self.project_file)),
            Scope::Local => match self.local_file {
                Some(f) => Ok(project.join(f)),
                None => Err(format!(
                    "{} has no local (uncommitted) settings file; use --scope user or project",
                    self.display_name
                )),
            },
        }
    }

    /// The handler object sjournal installs for one event, running `command`.
    pub(crate) fn handler(&self, command: &str, spec: &HookSpec) -> serde_json::Value {
        let mut h = serde_json::Map::new();
        h.insert("type".into(), "command".into());
        h.insert(
            "command".into(),
            format!("{command} hook --host {}", self.hook_flag).into(),
        );
        if let Some(name) = self.handler_name {
            h.insert("name".into(), name.into());
        }
        h.insert("timeout".into(), spec.timeout.into());
        serde_json::Value::Object(h)
    }
}

/// Everything `install` needs to know about a host that runs one executable file per hook,
/// named after the hook, from a hooks directory (Cline): each file is a shell script running
/// `sjournal hook --host <hook_flag>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HookFilesInstall {
    /// The `--host` value the scripts pass to `sjournal hook`.
    pub hook_flag: &'static str,
    /// The hook files, each named after its hook (in the directory of the host's
    /// [`BridgeInstall`]).
    pub hooks: &'static [&'static str],
}

/// A configuration file a host reads, as the host locates it from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigFile {
    /// Under the project's root.
    Project(&'static str),
    /// Under a user directory.
    User(UserDir, &'static str),
    /// Claude Code's own state file: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
    ClaudeJson,
    /// Under `$XDG_CONFIG_HOME`, else `~/.config`.
    XdgConfig(&'static str),
    /// Under Pi's agent directory: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
    PiAgent(&'static str),
    /// Under OpenClaw's state directory: `$OPENCLAW_STATE_DIR`, else `~/.openclaw`.
    OpenClawState(&'static str),
    /// OpenClaw's configuration: `$OPENCLAW_CONFIG_PATH`, else
    /// `$OPENCLAW_STATE_DIR/openclaw.json`, else `~/.openclaw/openclaw.json`.
    OpenClawConfig,
    /// The `cline` CLI's MCP settings: `$CLINE_MCP_SETTINGS_PATH`, else
    /// `settings/cline_mcp_settings.json` under `$CLINE_DATA_DIR`, else under
    /// `$CLINE_DIR/data`, else under `~/.cline/data`.
    ClineMcpSettings,
}

/// Where in a file the MCP servers' table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServersAt {
    /// A JSON object at this path of keys.
    Json(&'static [&'static str]),
    /// A JSON object at this path of keys under `projects.<the project's absolute path>`
    /// (Claude Code's local scope).
    ProjectJson(&'static [&'static str]),
    /// Codex's `config.toml`: `[mcp_servers.<name>]`.
    Toml,
}

/// The file and table a host's MCP servers are in, for one scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct McpTable {
    pub file: ConfigFile,
    pub servers: ServersAt,
}

/// Everything `install` needs to register `sjournal mcp` where a host loads its MCP servers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct McpInstall {
    pub display_name: &'static str,
    /// Per scope; None: the host has no MCP servers of that scope.
    pub user: Option<McpTable>,
    pub project: Option<McpTable>,
    pub local: Option<McpTable>,
    /// sjournal's entry in the host's shape, for the program and its arguments.
    pub entry: fn(program: &str, args: &[&str]) -> serde_json::Value,
}

impl McpInstall {
    /// The table for `scope` (None: the host has none there).
    pub(crate) fn table(&self, scope: Scope) -> Option<McpTable> {
        match scope {
            Scope::User => self.user,
            Scope::Project => self.project,
            Scope::Local => self.local,
        }
    }
}

/// The entry most hosts read: `command` and `args`.
pub(crate) fn plain_mcp_entry(program: &str, args: &[&str]) -> serde_json::Value {
    serde_json::json!({"command": program, "args": args})
}

/// `mcpServers`, where most hosts keep their MCP servers.
pub(crate) const MCP_SERVERS: ServersAt = ServersAt::Json(&["mcpServers"]);

/// A file of a bridge, as sjournal carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BridgeSource {
    /// A TypeScript module: written with the shared hook module
    /// (`tools/bridge-common/sjournal-hook.ts`) inlined in place of its import.
    TypeScript {
        name: &'static str,
        source: &'static str,
    },
    /// A JSON file: written with the marker as a `$comment` field (JSON has no comments).
    Json {
        name: &'static str,
        source: &'static str,
    },
    /// One shell script per hook of the host's [`HookFilesInstall`].
    HookScripts,
}

/// Everything `install` needs to know about a host reached through a bridge (a plugin,
/// extension or hook files sjournal writes where the host loads them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BridgeInstall {
    pub display_name: &'static str,
    /// The host's word on the command line (`sjournal install <word>`).
    pub word: &'static str,
    /// The directory the bridge goes into for the user.
    pub user_dir: ConfigFile,
    /// The directory the bridge goes into for a project, under its root.
    pub project_dir: &'static str,
    pub files: &'static [BridgeSource],
    /// What the user should know once it is installed.
    pub after_install: &'static str,
}
