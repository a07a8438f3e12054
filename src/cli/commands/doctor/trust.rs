//! Whether a host will run the hooks it has: Codex's hook trust, Gemini CLI's folder trust.
//! (OpenClaw's plugin entry is with its bridge, in `bridges`.)

use std::path::{Path, PathBuf};

use sjournal::install::inspect::{self, CodexTrust, FolderTrust, InstalledHook};
use sjournal::install::Scope;

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
        home: Option<&Path>,
    ) {
        let codex_home = std::env::var_os("CODEX_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".codex")));
        let Some(codex_home) = codex_home else {
            return;
        };
        let host = Some(t.name);
        if scope == Scope::User && path.parent() != Some(codex_home.as_path()) {
            self.fail(
                "trust",
                host,
                format!(
                    "sjournal's hooks are in {}, but Codex reads {} (CODEX_HOME)",
                    shown(path),
                    shown(&codex_home.join("hooks.json"))
                ),
                format!(
                    "move {} to {}",
                    shown(path),
                    shown(&codex_home.join("hooks.json"))
                ),
            );
            return;
        }
        let config_path = codex_home.join("config.toml");
        let config = match read_host_file(&config_path) {
            Ok(c) => c,
            Err(e) => {
                self.fail(
                    "trust",
                    host,
                    format!(
                        "Codex's configuration, which says which hooks it trusts, cannot be \
                         read: {e}"
                    ),
                    format!(
                        "move {} away (Codex cannot read it either), then start `codex`, open \
                         /hooks and trust sjournal's hooks",
                        shown(&config_path)
                    ),
                );
                return;
            }
        };
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
