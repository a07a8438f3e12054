//! Where each host keeps its hook configuration, and which hooks sjournal installs there.
//! Claude Code: `settings.json`, `hooks` → event → matcher groups of command handlers,
//! timeouts in seconds. Codex: `hooks.json`, Claude Code's shape, timeouts in seconds. Gemini
//! CLI: `settings.json`, the same shape, timeouts in milliseconds.

use std::path::{Path, PathBuf};

/// A host sjournal can install its hooks into (the host as a target of `install`; the host that
/// sent an event is `crate::host::Host`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallTarget {
    ClaudeCode,
    Codex,
    Gemini,
}

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

    /// Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else
    /// `~/.claude/settings.json`.
    pub fn claude_settings(&self) -> Result<PathBuf, String> {
        match &self.claude_config_dir {
            Some(d) => Ok(d.join("settings.json")),
            None => Ok(self.home()?.join(".claude/settings.json")),
        }
    }

    /// Claude Code's own state file, with its MCP servers: `$CLAUDE_CONFIG_DIR/.claude.json`,
    /// else `~/.claude.json`.
    pub fn claude_json(&self) -> Result<PathBuf, String> {
        match &self.claude_config_dir {
            Some(d) => Ok(d.join(".claude.json")),
            None => Ok(self.home()?.join(".claude.json")),
        }
    }

    fn home(&self) -> Result<&Path, String> {
        self.home
            .as_deref()
            .ok_or_else(|| "HOME is not set; cannot find the user's configuration".to_owned())
    }

    /// The directory Codex reads its user configuration from: `$CODEX_HOME`, else `~/.codex`.
    pub fn codex(&self) -> Result<PathBuf, String> {
        match &self.codex_home {
            Some(c) => Ok(c.clone()),
            None => Ok(self.home()?.join(".codex")),
        }
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
    /// In the host's unit (see [`InstallTarget::timeout_unit`]).
    pub timeout: u64,
}

const fn spec(event: &'static str, matcher: Option<&'static str>, timeout: u64) -> HookSpec {
    HookSpec {
        event,
        matcher,
        timeout,
    }
}

const CLAUDE: &[HookSpec] = &[
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

const CODEX: &[HookSpec] = &[
    spec("SessionStart", None, 10),
    spec("UserPromptSubmit", None, 5),
    spec("PreToolUse", None, 5),
    spec("PostToolUse", None, 5),
    spec("PreCompact", None, 10),
    spec("PostCompact", None, 10),
    spec("SubagentStart", None, 5),
    spec("SubagentStop", None, 5),
    spec("Stop", None, 10),
    // Codex clamps SessionEnd hooks to 3 s.
    spec("SessionEnd", None, 3),
];

const GEMINI: &[HookSpec] = &[
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

impl InstallTarget {
    pub fn display_name(self) -> &'static str {
        match self {
            InstallTarget::ClaudeCode => "Claude Code",
            InstallTarget::Codex => "Codex CLI",
            InstallTarget::Gemini => "Gemini CLI",
        }
    }

    /// The `--host` value the installed command passes to `sjournal hook`.
    pub fn hook_flag(self) -> &'static str {
        match self {
            InstallTarget::ClaudeCode => "claude",
            InstallTarget::Codex => "codex",
            InstallTarget::Gemini => "gemini",
        }
    }

    pub fn specs(self) -> &'static [HookSpec] {
        match self {
            InstallTarget::ClaudeCode => CLAUDE,
            InstallTarget::Codex => CODEX,
            InstallTarget::Gemini => GEMINI,
        }
    }

    /// What the user must still do for the host to run the hooks (printed after installing).
    pub fn after_install(self) -> Option<&'static str> {
        match self {
            InstallTarget::ClaudeCode => None,
            InstallTarget::Codex => Some(
                "Codex runs a hook only once it is trusted, and skips untrusted hooks silently: \
                 start `codex`, open `/hooks`, review sjournal's hooks and choose Trust (again \
                 after any change to them). For one unattended run, \
                 `codex exec --dangerously-bypass-hook-trust` runs them without review.",
            ),
            InstallTarget::Gemini => Some(
                "Gemini CLI loads hooks only in a trusted folder: trust the project when Gemini \
                 asks (or add it to ~/.gemini/trustedFolders.json as TRUST_FOLDER); in an \
                 untrusted folder no hook runs.",
            ),
        }
    }

    pub fn timeout_unit(self) -> &'static str {
        match self {
            InstallTarget::Gemini => "ms",
            _ => "s",
        }
    }

    /// The configuration file for a scope: the user's under `homes` (Codex's under
    /// `$CODEX_HOME`, Claude Code's under `$CLAUDE_CONFIG_DIR`), the project's under
    /// `project`, its root.
    pub fn config_path(
        self,
        scope: Scope,
        homes: &Homes,
        project: &Path,
    ) -> Result<PathBuf, String> {
        Ok(match (self, scope) {
            (InstallTarget::ClaudeCode, Scope::User) => homes.claude_settings()?,
            (InstallTarget::ClaudeCode, Scope::Project) => project.join(".claude/settings.json"),
            (InstallTarget::ClaudeCode, Scope::Local) => {
                project.join(".claude/settings.local.json")
            }
            (InstallTarget::Codex, Scope::User) => homes.codex()?.join("hooks.json"),
            (InstallTarget::Codex, Scope::Project) => project.join(".codex/hooks.json"),
            (InstallTarget::Gemini, Scope::User) => homes.home()?.join(".gemini/settings.json"),
            (InstallTarget::Gemini, Scope::Project) => project.join(".gemini/settings.json"),
            (h, Scope::Local) => {
                return Err(format!(
                    "{} has no local (uncommitted) settings file; use --scope user or project",
                    h.display_name()
                ))
            }
        })
    }

    /// The handler object sjournal installs for one event.
    pub fn handler(self, command: &str, spec: &HookSpec) -> serde_json::Value {
        let cmd = format!("{command} hook --host {}", self.hook_flag());
        match self {
            InstallTarget::Gemini => serde_json::json!({
                "type": "command", "command": cmd, "name": "sjournal", "timeout": spec.timeout,
            }),
            _ => serde_json::json!({"type": "command", "command": cmd, "timeout": spec.timeout}),
        }
    }
}
