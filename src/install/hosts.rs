//! The hosts `install` edits a JSON settings file for. What each writes (the file, the events,
//! the handler) is declared in the host's folder (`host/<name>/install.rs`, a
//! `HooksInstall`); this is only the list of them, for the command line.

use std::path::{Path, PathBuf};

use crate::host::install::{HookSpec, HooksInstall};
use crate::host::Host;

pub use crate::host::install::{Homes, Scope};

/// A host sjournal can install its hooks into (the host as a target of `install`; the host that
/// sent an event is `crate::host::Host`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallTarget {
    ClaudeCode,
    Codex,
    Gemini,
}

impl InstallTarget {
    /// The host's install spec.
    pub(crate) fn spec(self) -> &'static HooksInstall {
        let host = match self {
            InstallTarget::ClaudeCode => Host::Claude,
            InstallTarget::Codex => Host::Codex,
            InstallTarget::Gemini => Host::Gemini,
        };
        host.hooks_install()
            .expect("every install target has exec hooks")
    }

    pub fn display_name(self) -> &'static str {
        self.spec().display_name
    }

    pub fn specs(self) -> &'static [HookSpec] {
        self.spec().hooks
    }

    /// What the user must still do for the host to run the hooks (printed after installing).
    pub fn after_install(self) -> Option<&'static str> {
        self.spec().after_install
    }

    /// The configuration file for a scope (see [`HooksInstall::config_path`]).
    pub fn config_path(
        self,
        scope: Scope,
        homes: &Homes,
        project: &Path,
    ) -> Result<PathBuf, String> {
        self.spec().config_path(scope, homes, project)
    }

    /// The handler object sjournal installs for one event.
    pub(crate) fn handler(self, command: &str, spec: &HookSpec) -> serde_json::Value {
        self.spec().handler(command, spec)
    }
}
