//! The root's configuration: `<root>/config.toml`, optional. Example:
//!
//! ```toml
//! [hook]
//! deadline_ms = 400            # default for --deadline-ms (250)
//! context_budget_chars = 4000  # the recovery block after a compaction at most this long (capped at 9500)
//! context_events = ["PostToolUse"]  # events that get context besides the host's defaults
//! input_timeout_ms = 10000     # how long stdin may take to arrive in full once it started
//! fallback_spool_dir = "/run/user/1000/sjournal/fallback"   # where events go when the root
//!                              # cannot take them (default: $XDG_RUNTIME_DIR, else /tmp)
//!
//! [[exec]]
//! name = "branch"                        # unique; the fold keys persistent context by it
//! events = ["SessionStart", "UserPromptSubmit"]   # host event names; "*" = every event
//! command = ["git", "rev-parse", "--abbrev-ref", "HEAD"]   # argv, no shell
//! timeout_ms = 100
//! context = "persistent"                 # persistent | ephemeral | none
//! ```
//!
//! Exec handlers run concurrently, with the event JSON on stdin, before the event is
//! appended; each is killed (its whole process group) at its timeout or at half the hook's
//! deadline, whichever comes first. Their output is journaled as `sjournal.exec` records in
//! the event's batch. Raise the deadline if handlers need more time.
//!
//! `[[webhook]]` handlers POST matching events to a URL, off the hook's path: see
//! [`webhook`] for their fields. `[redact]` (redaction of secrets at ingest, on by default):
//! see `crate::redact::config`.

pub mod webhook;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::format::payload::ExecContext;
use crate::journal::Root;
use crate::limits::{
    CONFIG_MAX_BYTES, CONTEXT_BUDGET_DEFAULT_CHARS, EXEC_TIMEOUT_MS_DEFAULT,
    HOOK_DEADLINE_MS_DEFAULT, HOOK_INPUT_TIMEOUT_MS_DEFAULT,
};
pub use webhook::WebhookHandler;

pub(crate) const FILE_NAME: &str = "config.toml";

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub hook: HookSection,
    #[serde(default)]
    pub exec: Vec<ExecHandler>,
    #[serde(default)]
    pub webhook: Vec<WebhookHandler>,
    /// `sjournal ship` and friends (see `crate::remote`); read whether or not the binary was
    /// built with the `remote` feature, so one config serves both.
    #[serde(default)]
    pub remote: RemoteSection,
    /// Memory across sessions (`crate::memory`).
    #[serde(default)]
    pub memory: MemorySection,
    /// Redaction at ingest (`crate::redact`).
    #[serde(default)]
    pub redact: crate::redact::RedactSection,
}

/// `[memory]`: how memory across sessions behaves in the hook.
///
/// ```toml
/// [memory]
/// handoff_sessions = 3   # hand off only from one of the project's last 3 sessions (0: never)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemorySection {
    pub handoff_sessions: usize,
}

impl Default for MemorySection {
    fn default() -> Self {
        MemorySection {
            handoff_sessions: crate::limits::HANDOFF_SESSIONS,
        }
    }
}

/// `[remote]`: where `sjournal ship` sends journals, and whether the hook starts it when a
/// session ends.
///
/// ```toml
/// [remote]
/// to = "s3://BUCKET/PREFIX"        # default destination of `ship`, `verify --remote`
/// ship_on_session_end = false      # spawn a detached `sjournal ship` after SessionEnd
/// host_id = "laptop-1"             # default: made once, kept in <root>/remote/host-id
/// sign_key = "remote/host.key"     # relative to the root; default: made once
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RemoteSection {
    pub to: Option<String>,
    pub ship_on_session_end: bool,
    pub host_id: Option<String>,
    pub sign_key: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HookSection {
    pub deadline_ms: u64,
    pub context_budget_chars: usize,
    pub context_events: Vec<String>,
    /// Once stdin's first byte has arrived, the rest is read for up to this long from the
    /// hook's start (however long the deadline is): received input is never dropped.
    pub input_timeout_ms: u64,
    /// Base directory of the fallback spool (see `journal::spool::fallback`).
    pub fallback_spool_dir: Option<PathBuf>,
}

impl Default for HookSection {
    fn default() -> Self {
        HookSection {
            deadline_ms: HOOK_DEADLINE_MS_DEFAULT,
            context_budget_chars: CONTEXT_BUDGET_DEFAULT_CHARS,
            context_events: Vec::new(),
            input_timeout_ms: HOOK_INPUT_TIMEOUT_MS_DEFAULT,
            fallback_spool_dir: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecHandler {
    pub name: String,
    pub events: Vec<String>,
    pub command: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    #[serde(default)]
    pub context: ExecContext,
}

fn default_timeout() -> u64 {
    EXEC_TIMEOUT_MS_DEFAULT
}

impl ExecHandler {
    pub fn matches(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == "*" || e == event)
    }
}

/// Why the configuration could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "configuration {}: {}; fix it (see `sjournal hook --help`), the defaults are used meanwhile",
            self.path.display(),
            self.message
        )
    }
}

impl Config {
    pub fn path(root: &Root) -> PathBuf {
        root.dir().join(FILE_NAME)
    }

    /// Loads `<root>/config.toml`; a missing file is the default configuration. Only a
    /// regular file is read: it is opened with `O_NONBLOCK` (a FIFO then opens without
    /// waiting for a writer) and `O_NOFOLLOW`, checked with `fstat`, and read up to
    /// `CONFIG_MAX_BYTES`. Anything else (a FIFO, a device, a directory, a symlink) is refused.
    pub fn load(root: &Root) -> Result<Config, ConfigError> {
        use std::io::Read;
        let path = Self::path(root);
        let file = match crate::storage::open_regular(&path, crate::storage::Owner::Anyone) {
            Ok(f) => f,
            Err(crate::Error::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(Config::default())
            }
            Err(crate::Error::Symlink { .. }) => {
                return Err(err(
                    &path,
                    "is a symlink; only a regular file is read there".into(),
                ))
            }
            Err(crate::Error::NotRegular { found, .. }) => {
                return Err(err(
                    &path,
                    format!("is not a regular file (a {found}); only a regular file is read there"),
                ))
            }
            Err(crate::Error::Io { source, .. }) => return Err(err(&path, source.to_string())),
            Err(e) => return Err(err(&path, e.to_string())),
        };
        let mut text = String::new();
        file.take(CONFIG_MAX_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| err(&path, e.to_string()))?;
        if text.len() as u64 > CONFIG_MAX_BYTES {
            return Err(err(
                &path,
                format!("is longer than {CONFIG_MAX_BYTES} bytes"),
            ));
        }
        Self::parse(&text, &path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let c: Config = toml::from_str(text).map_err(|e| err(path, e.to_string()))?;
        let mut names = std::collections::BTreeSet::new();
        for h in &c.exec {
            if h.name.is_empty() || !names.insert(h.name.as_str()) {
                return Err(err(
                    path,
                    format!(
                        "exec handler names must be unique and non-empty ({:?})",
                        h.name
                    ),
                ));
            }
            if h.command.is_empty() || h.command[0].is_empty() {
                return Err(err(
                    path,
                    format!("exec handler {:?} has no command", h.name),
                ));
            }
            if h.events.is_empty() {
                return Err(err(
                    path,
                    format!("exec handler {:?} names no event", h.name),
                ));
            }
            if h.timeout_ms == 0 {
                return Err(err(
                    path,
                    format!("exec handler {:?} has timeout_ms = 0", h.name),
                ));
            }
        }
        crate::config::webhook::validate(&c.webhook).map_err(|m| err(path, m))?;
        if c.remote.ship_on_session_end && c.remote.to.is_none() {
            return Err(err(
                path,
                "remote.ship_on_session_end needs remote.to (the destination)".into(),
            ));
        }
        if c.memory.handoff_sessions > crate::limits::HANDOFF_SESSIONS_MAX {
            return Err(err(
                path,
                format!(
                    "memory.handoff_sessions is at most {} (the sessions a project journal \
                     keeps)",
                    crate::limits::HANDOFF_SESSIONS_MAX
                ),
            ));
        }
        c.redact.validate().map_err(|m| err(path, m))?;
        if c.hook.deadline_ms == 0 {
            return Err(err(path, "hook.deadline_ms must be above 0".into()));
        }
        if c.hook.input_timeout_ms == 0 {
            return Err(err(path, "hook.input_timeout_ms must be above 0".into()));
        }
        if c.hook
            .fallback_spool_dir
            .as_ref()
            .is_some_and(|d| !d.is_absolute())
        {
            return Err(err(
                path,
                "hook.fallback_spool_dir must be an absolute path".into(),
            ));
        }
        Ok(c)
    }

    /// How the hook's writes reach the disk: the fallback spool configured here.
    pub fn writer_options(&self) -> crate::journal::WriterOptions {
        crate::journal::WriterOptions {
            fallback_dir: self.hook.fallback_spool_dir.clone(),
            ..Default::default()
        }
    }

    /// The handlers that run for `event`.
    pub fn handlers_for(&self, event: &str) -> Vec<&ExecHandler> {
        self.exec.iter().filter(|h| h.matches(event)).collect()
    }
}

fn err(path: &Path, message: String) -> ConfigError {
    ConfigError {
        path: path.to_owned(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let text = r#"
[hook]
deadline_ms = 400
context_events = ["PostToolUse"]

[[exec]]
name = "branch"
events = ["SessionStart", "UserPromptSubmit"]
command = ["git", "rev-parse", "--abbrev-ref", "HEAD"]
timeout_ms = 100
context = "persistent"
"#;
        let c = Config::parse(text, Path::new("config.toml")).unwrap();
        assert_eq!(c.hook.deadline_ms, 400);
        assert_eq!(c.hook.context_budget_chars, CONTEXT_BUDGET_DEFAULT_CHARS);
        assert_eq!(c.exec[0].context, ExecContext::Persistent);
        assert_eq!(c.handlers_for("SessionStart").len(), 1);
        assert!(c.handlers_for("Stop").is_empty());
    }

    #[test]
    fn rejects_mistakes_with_the_file_named() {
        for bad in [
            "[hook]\ndeadline = 3\n",
            "[[exec]]\nname = \"a\"\nevents = [\"*\"]\ncommand = []\n",
            "[[exec]]\nname = \"a\"\nevents = [\"*\"]\ncommand = [\"x\"]\n[[exec]]\nname = \"a\"\nevents = [\"*\"]\ncommand = [\"y\"]\n",
        ] {
            let e = Config::parse(bad, Path::new("/r/config.toml")).unwrap_err();
            assert!(e.to_string().contains("/r/config.toml"), "{e}");
        }
    }
}
