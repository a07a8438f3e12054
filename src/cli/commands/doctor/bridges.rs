//! The hosts sjournal reaches through a bridge (OpenCode, Pi, OpenClaw, Cline): whether the
//! bridge's files are there, complete, this sjournal's and running a binary that is there; and
//! OpenClaw's plugin entry, without which OpenClaw does not load the bridge.

use std::path::{Path, PathBuf};

use sjournal::error::Error;
use sjournal::install::bridge::{self, Bridge, Places};
use sjournal::install::inspect;
use sjournal::install::Scope;
use sjournal::storage::{self, Owner};

use super::hosts::{mtime_ns, not_runnable, Target};
use super::{read_host_file, scope_name, shown, Doctor};

/// A bridge as installed in one scope.
struct Installed<'a> {
    t: Target,
    scope: Scope,
    /// Its directory.
    dir: &'a Path,
    /// How many files the bridge has.
    files: usize,
    /// The files that are not sjournal's, each with why ("missing", "a FIFO (named pipe), not
    /// a regular file", ...).
    lacking: Vec<String>,
    /// Those of them that are there (not sjournal's): the installer will not replace them.
    in_the_way: Vec<String>,
    /// The binary it runs, as its first file names it.
    binary: Option<String>,
    /// Every file is the one this sjournal would install.
    current: bool,
}

/// The most of a bridge's lacking files named one by one.
const LACKING_SHOWN: usize = 5;

/// Why a file of a bridge is not sjournal's: it is missing, or something else is in its place
/// (not a regular file, never waited on; or another file), which the installer will not
/// replace (true).
fn why_not_ours(path: &Path) -> (String, bool) {
    match storage::open_regular(path, Owner::Anyone) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            ("missing".into(), false)
        }
        Err(Error::Symlink { .. }) => (
            "a symbolic link, which sjournal does not follow".into(),
            true,
        ),
        Err(Error::NotRegular { found, .. }) => (format!("a {found}, not a regular file"), true),
        Ok(_) => ("not sjournal's (another file)".into(), true),
        Err(e) => (format!("unreadable: {e}"), true),
    }
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
            let (ours, others): (Vec<&PathBuf>, Vec<&PathBuf>) = files
                .iter()
                .map(|f| &f.path)
                .partition(|p| bridge::is_ours(p));
            let Some(first) = ours.first() else {
                continue;
            };
            for p in &ours {
                changed = changed.max(mtime_ns(p));
            }
            let text = read_host_file(first).ok().flatten().unwrap_or_default();
            let binary = inspect::bridge_binary(&text);
            let current = binary
                .as_deref()
                .and_then(|bin| b.files(scope, &places, bin).ok())
                .is_some_and(|want| {
                    want.iter().all(|f| {
                        read_host_file(&f.path).is_ok_and(|have| have.as_ref() == Some(&f.text))
                    })
                });
            let (mut lacking, mut in_the_way) = (Vec::new(), Vec::new());
            for p in others {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                let (why, blocks) = why_not_ours(p);
                lacking.push(format!("{}: {why}", sjournal::escape::text(&name)));
                if blocks {
                    in_the_way.push(shown(p));
                }
            }
            let fix = self.install_cmd(t.name, scope);
            self.bridge_verdict(
                Installed {
                    t,
                    scope,
                    dir: first.parent().unwrap_or(Path::new("/")),
                    files: files.len(),
                    lacking,
                    in_the_way,
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
        } else if !i.lacking.is_empty() {
            let more = match i.lacking.len().saturating_sub(LACKING_SHOWN) {
                0 => String::new(),
                n => format!("; and {n} more"),
            };
            self.warn(
                "hook",
                host,
                format!(
                    "sjournal's bridge in {dir} lacks {} of its {} files ({}{more})",
                    i.lacking.len(),
                    i.files,
                    i.lacking[..i.lacking.len().min(LACKING_SHOWN)].join("; ")
                ),
                match i.in_the_way.is_empty() {
                    true => fix.to_owned(),
                    false => format!("move {} away, then {fix}", i.in_the_way.join(" ")),
                },
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
        let text = match read_host_file(&path) {
            Ok(t) => t.unwrap_or_default(),
            Err(e) => {
                self.fail(
                    "trust",
                    host,
                    format!("OpenClaw's configuration cannot be read: {e}"),
                    format!(
                        "move {} away (OpenClaw cannot read it either), then `{fix}`",
                        shown(&path)
                    ),
                );
                return;
            }
        };
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
