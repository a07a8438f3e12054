//! Whether a host will run the hooks it has: Codex's hook trust, Gemini CLI's folder trust.
//! (OpenClaw's plugin entry is with its bridge, in `bridges`.)

use std::path::{Path, PathBuf};

use sjournal::install::inspect::{self, CodexTrust, FolderTrust, InstalledHook};
use sjournal::install::{Homes, Scope};

use super::hosts::Target;
use super::{read_host_file, shown, Doctor};

/// How many of sjournal's hooks Codex will not run, and why, in words ("2 not trusted, 1
/// turned off"); None if it runs them all.
fn codex_skipped(trust: &[CodexTrust]) -> Option<String> {
    let count = |k: CodexTrust| trust.iter().filter(|&&x| x == k).count();
    let mut what = Vec::new();
    for (k, words) in [
        (CodexTrust::Untrusted, "not trusted"),
        (CodexTrust::Modified, "changed since they were trusted"),
        (CodexTrust::Disabled, "turned off"),
    ] {
        match count(k) {
            0 => {}
            n => what.push(format!("{n} {words}")),
        }
    }
    (!what.is_empty()).then(|| what.join(", "))
}

impl Doctor {
    pub(super) fn codex_trust(
        &mut self,
        t: Target,
        scope: Scope,
        path: &Path,
        hooks: &[InstalledHook],
        homes: &Homes,
    ) {
        let Ok(codex_home) = homes.codex() else {
            return;
        };
        let Some(config) = self.codex_config(t, &codex_home.join("config.toml")) else {
            return;
        };
        let host = Some(t.name);
        if scope == Scope::Project
            && !inspect::codex_project_trusted(&self.project, config.as_deref())
        {
            self.fail(
                "trust",
                host,
                format!(
                    "{} is not a trusted project, so Codex ignores its .codex/ and sjournal's \
                     hooks there",
                    shown(&self.project)
                ),
                "start `codex` in the project and trust it".into(),
            );
        }
        let trust = inspect::codex_trust(path, hooks, config.as_deref());
        let Some(skipped) = codex_skipped(&trust) else {
            self.ok(
                "trust",
                host,
                format!(
                    "Codex trusts sjournal's {} hooks in {}",
                    hooks.len(),
                    shown(path)
                ),
            );
            return;
        };
        self.fail(
            "trust",
            host,
            format!(
                "of sjournal's {} hooks in {}, {skipped}: Codex skips them without a word",
                hooks.len(),
                shown(path),
            ),
            "start `codex`, open /hooks, review sjournal's hooks and trust them (turn on any \
             turned off)"
                .into(),
        );
    }

    /// Codex's `config.toml` (its hook trust): `Some(None)` if there is none, None (and a
    /// finding) if it cannot be read.
    fn codex_config(&mut self, t: Target, path: &Path) -> Option<Option<String>> {
        match read_host_file(path) {
            Ok(c) => Some(c),
            Err(e) => {
                self.fail(
                    "trust",
                    Some(t.name),
                    format!(
                        "Codex's configuration, which says which hooks it trusts, cannot be \
                         read: {e}"
                    ),
                    format!(
                        "move {} away (Codex cannot read it either), then start `codex`, open \
                         /hooks and trust sjournal's hooks",
                        shown(path)
                    ),
                );
                None
            }
        }
    }

    /// sjournal's hooks in `~/.codex/hooks.json` while `CODEX_HOME` names another directory:
    /// Codex never reads them (an older sjournal installed them there).
    pub(super) fn codex_elsewhere(&mut self, t: Target, homes: &Homes) {
        let (Some(default), Ok(codex_home)) = (homes.codex_default_elsewhere(), homes.codex())
        else {
            return;
        };
        let stale = default.join("hooks.json");
        if !inspect::read_hooks(&stale).is_ok_and(|h| h.is_some_and(|h| !h.is_empty())) {
            return;
        }
        let reads = codex_home.join("hooks.json");
        self.fail(
            "hook",
            Some(t.name),
            format!(
                "sjournal's hooks are in {}, but Codex reads {} (CODEX_HOME): they never run",
                shown(&stale),
                shown(&reads)
            ),
            format!(
                "sjournal install codex (installs them in {}), then remove the others: \
                 `env -u CODEX_HOME sjournal uninstall codex`",
                shown(&reads)
            ),
        );
    }

    pub(super) fn gemini_trust(&mut self, t: Target, home: Option<&Path>) {
        if self
            .checks
            .iter()
            .any(|c| c.check == "trust" && c.host == Some(t.name))
        {
            return;
        }
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let folders_path = var("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".gemini/trustedFolders.json")));
        let file = folders_path
            .as_deref()
            .map(shown)
            .unwrap_or_else(|| "~/.gemini/trustedFolders.json".into());
        let folders = match folders_path.as_deref().map(read_host_file) {
            None => None,
            Some(Ok(f)) => f,
            Some(Err(e)) => {
                self.fail(
                    "trust",
                    Some(t.name),
                    format!("Gemini CLI's trusted folders cannot be read: {e}"),
                    format!(
                        "move {file} away (Gemini CLI cannot read it either), then trust the \
                         folder when Gemini CLI asks"
                    ),
                );
                return;
            }
        };
        // The user's settings, if they can be read (the hook check says when they cannot).
        let enabled = home
            .map(|h| h.join(".gemini/settings.json"))
            .and_then(|p| read_host_file(&p).ok().flatten())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["security"]["folderTrust"]["enabled"].as_bool())
            .unwrap_or(true);
        let env = var("GEMINI_CLI_TRUST_WORKSPACE");
        let trust = inspect::gemini_folder_trust(
            &self.project,
            folders.as_deref(),
            enabled,
            env.as_deref(),
        );
        self.gemini_verdict(t, trust, &file);
    }

    fn gemini_verdict(&mut self, t: Target, trust: Result<FolderTrust, String>, file: &str) {
        let host = Some(t.name);
        let project = shown(&self.project);
        let add = format!(
            "trust the folder when Gemini CLI asks, or add {{{:?}: \"TRUST_FOLDER\"}} to {file}",
            self.project.to_string_lossy()
        );
        match trust {
            Ok(FolderTrust::Trusted(rule)) => self.ok(
                "trust",
                host,
                format!("{project} is a trusted folder ({})", sjournal::escape::text(&rule)),
            ),
            Ok(FolderTrust::Off) => self.ok(
                "trust",
                host,
                "folder trust is off (security.folderTrust.enabled = false): every folder runs hooks".into(),
            ),
            Ok(FolderTrust::NoRule) => self.fail(
                "trust",
                host,
                format!("{project} is not a trusted folder: Gemini CLI runs no hook there"),
                add,
            ),
            Ok(FolderTrust::Distrusted(rule)) => self.fail(
                "trust",
                host,
                format!(
                    "{project} is distrusted ({}): Gemini CLI runs no hook there",
                    sjournal::escape::text(&rule)
                ),
                add,
            ),
            Err(e) => self.fail(
                "trust",
                host,
                format!("{file} is not valid JSON ({e}): Gemini CLI stops with an error"),
                format!("correct {file}"),
            ),
        }
    }
}
