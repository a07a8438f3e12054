//! The hosts sjournal reaches through a bridge (OpenCode, Pi, OpenClaw, Cline): whether the
//! bridge's files are there, complete, this sjournal's and running a binary that is there; and
//! OpenClaw's plugin entry, without which OpenClaw does not load the bridge.

use std::path::{Path, PathBuf};

use sjournal::install::bridge::{self, Bridge, Places};
use sjournal::install::inspect;
use sjournal::install::Scope;

use super::hosts::{mtime_ns, not_runnable, Target};
use super::{scope_name, shown, Doctor};

/// A bridge as installed in one scope.
struct Installed<'a> {
    t: Target,
    scope: Scope,
    /// Its directory.
    dir: &'a Path,
    /// How many files the bridge has, and how many of them are sjournal's.
    files: usize,
    ours: usize,
    /// The binary it runs, as its first file names it.
    binary: Option<String>,
    /// Every file is the one this sjournal would install.
    current: bool,
}

impl Doctor {
    /// Checks a bridge in each scope; returns when its installed files last changed (None:
    /// installed nowhere).
    pub(super) fn bridge_host(&mut self, t: Target, b: Bridge) -> Option<i64> {
        let places = Places::from_env(self.project.clone());
        let mut changed: Option<i64> = None;
        for scope in [Scope::User, Scope::Project] {
            let Ok(files) = b.files(scope, &places, "sjournal") else {
                continue;
            };
            let ours: Vec<&PathBuf> = files
                .iter()
                .map(|f| &f.path)
                .filter(|p| bridge::is_ours(p))
                .collect();
            let Some(first) = ours.first() else {
                continue;
            };
            for p in &ours {
                changed = changed.max(mtime_ns(p));
            }
            let text = std::fs::read_to_string(first).unwrap_or_default();
            let binary = inspect::bridge_binary(&text);
            let current = binary
                .as_deref()
                .and_then(|bin| b.files(scope, &places, bin).ok())
                .is_some_and(|want| {
                    want.iter()
                        .all(|f| std::fs::read_to_string(&f.path).is_ok_and(|have| have == f.text))
                });
            let fix = self.install_cmd(t.name, scope);
            self.bridge_verdict(
                Installed {
                    t,
                    scope,
                    dir: first.parent().unwrap_or(Path::new("/")),
                    files: files.len(),
                    ours: ours.len(),
                    binary,
                    current,
                },
                &fix,
            );
            if b == Bridge::OpenClaw && scope == Scope::User {
                self.openclaw_entry(t, &places, &fix);
            }
        }
        changed
    }

    fn bridge_verdict(&mut self, i: Installed<'_>, fix: &str) {
        let host = Some(i.t.name);
        let dir = shown(i.dir);
        if let Some(why) = i.binary.as_deref().and_then(not_runnable) {
            self.fail(
                "hook",
                host,
                format!(
                    "sjournal's bridge in {dir} runs a binary that is not there: {why} (every \
                     event is lost)"
                ),
                format!("{fix} (points it at this binary)"),
            );
        } else if i.ours < i.files {
            self.warn(
                "hook",
                host,
                format!(
                    "sjournal's bridge in {dir} lacks {} of its {} files",
                    i.files - i.ours,
                    i.files
                ),
                fix.to_owned(),
            );
        } else if !i.current {
            self.warn(
                "hook",
                host,
                format!(
                    "sjournal's bridge in {dir} is not the one this sjournal installs (an older \
                     version, or edited)"
                ),
                format!("{fix} (then restart the host)"),
            );
        } else {
            self.ok(
                "hook",
                host,
                format!(
                    "bridge in {dir} ({} scope) runs {}",
                    scope_name(i.scope),
                    sjournal::escape::text(i.binary.as_deref().unwrap_or("?"))
                ),
            );
        }
    }

    fn openclaw_entry(&mut self, t: Target, places: &Places, fix: &str) {
        let Ok(path) = Bridge::openclaw_config(places) else {
            return;
        };
        let host = Some(t.name);
        let id = bridge::OPENCLAW_PLUGIN_ID;
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
            self.info(
                "trust",
                host,
                format!(
                    "{} is not plain JSON: check that plugins.entries.{id} is enabled with \
                     hooks.allowConversationAccess",
                    shown(&path),
                ),
            );
            return;
        };
        let entry = &doc["plugins"]["entries"][id];
        let ok = entry["enabled"] == true
            && entry["hooks"]["allowConversationAccess"] == true
            && entry["hooks"]["allowPromptInjection"] == true;
        if ok {
            self.ok(
                "trust",
                host,
                format!(
                    "plugins.entries.{id} in {} enables the plugin and its conversation hooks",
                    shown(&path)
                ),
            );
        } else {
            self.fail(
                "trust",
                host,
                format!(
                    "plugins.entries.{id} in {} does not enable the plugin with its conversation \
                     hooks: OpenClaw does not load it, or gives it no prompts",
                    shown(&path)
                ),
                fix.to_owned(),
            );
        }
    }
}
