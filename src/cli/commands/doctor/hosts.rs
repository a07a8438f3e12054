//! The hosts `sjournal install` knows: whether sjournal's hooks are installed in each scope,
//! complete and running a binary that is there, and when each host last delivered an event.
//! The bridges' own checks are in `bridges`, the hosts' trust in `trust`.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sjournal::audit::sessions::SessionSummary;
use sjournal::install::bridge::Bridge;
use sjournal::install::inspect::{self, InstalledHook};
use sjournal::install::{Homes, InstallTarget, Scope};

use super::{scope_name, shown, time, Doctor};

/// A host `sjournal install` knows: its name there, its name in the journals, how it is
/// wired in.
#[derive(Clone, Copy)]
pub(super) struct Target {
    pub name: &'static str,
    journal_host: &'static str,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Hooks(InstallTarget),
    Bridge(Bridge),
}

const TARGETS: [Target; 7] = [
    Target {
        name: "claude-code",
        journal_host: "claude",
        kind: Kind::Hooks(InstallTarget::ClaudeCode),
    },
    Target {
        name: "codex",
        journal_host: "codex",
        kind: Kind::Hooks(InstallTarget::Codex),
    },
    Target {
        name: "gemini",
        journal_host: "gemini",
        kind: Kind::Hooks(InstallTarget::Gemini),
    },
    Target {
        name: "opencode",
        journal_host: "opencode",
        kind: Kind::Bridge(Bridge::OpenCode),
    },
    Target {
        name: "pi",
        journal_host: "pi",
        kind: Kind::Bridge(Bridge::Pi),
    },
    Target {
        name: "openclaw",
        journal_host: "openclaw",
        kind: Kind::Bridge(Bridge::OpenClaw),
    },
    Target {
        name: "cline",
        journal_host: "cline",
        kind: Kind::Bridge(Bridge::Cline),
    },
];

pub(super) fn mtime_ns(p: &Path) -> Option<i64> {
    let m = std::fs::metadata(p).ok()?.modified().ok()?;
    let d = m.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

/// Where `program` (as a hook command names it) is: the path itself, or the first file of that
/// name on PATH.
fn located(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Why `program` (as a hook command names it) cannot be run, if it cannot.
pub(super) fn not_runnable(program: &str) -> Option<String> {
    let Some(path) = located(program) else {
        return Some(format!("`{program}` is not on PATH"));
    };
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("{} does not exist", shown(&path)))
        }
        Err(e) => Some(format!("{} cannot be read: {e}", shown(&path))),
        Ok(m) if !m.is_file() => Some(format!("{} is not a file", shown(&path))),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => {
            Some(format!("{} is not executable", shown(&path)))
        }
        Ok(_) => None,
    }
}

/// Why the `sjournal` beside an installed `sjournal-hook` cannot take the work it hands over
/// (every command line but the hook's, the detached work after a reply), if it cannot.
fn handover_broken(program: &str) -> Option<String> {
    if std::path::Path::new(program).file_name()? != "sjournal-hook" {
        return None;
    }
    // Where the hook finds its `sjournal`: beside the program it runs (links resolved, as
    // `current_exe` reports it).
    let path = located(program)?.canonicalize().ok()?;
    let full = path.with_file_name("sjournal");
    sjournal::storage::check_program_trusted(&full)
        .err()
        .map(|why| {
            format!(
                "{} will not hand work to {}: {why}",
                shown(&path),
                shown(&full)
            )
        })
}

impl Doctor {
    pub(super) fn hosts(&mut self, summaries: &[SessionSummary]) {
        for t in TARGETS {
            let installed = match t.kind {
                Kind::Hooks(h) => self.hook_host(t, h),
                Kind::Bridge(b) => self.bridge_host(t, b),
            };
            self.activity(t, installed, summaries);
        }
    }

    /// Checks a host with exec hooks in each scope; returns when its installed configuration
    /// last changed (None: installed nowhere).
    fn hook_host(&mut self, t: Target, host: InstallTarget) -> Option<i64> {
        let homes = Homes::from_env();
        let scopes: &[Scope] = match host {
            InstallTarget::ClaudeCode => &[Scope::User, Scope::Project, Scope::Local],
            _ => &[Scope::User, Scope::Project],
        };
        let mut changed: Option<i64> = None;
        // Run from $HOME, the project's settings are the user's: one file, checked once.
        let mut seen = BTreeSet::new();
        for &scope in scopes {
            let Ok(path) = host.config_path(scope, &homes, &self.project) else {
                continue;
            };
            if !seen.insert(std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone())) {
                continue;
            }
            let hooks = match inspect::read_hooks(&path) {
                Ok(Some(h)) if !h.is_empty() => h,
                Ok(_) => continue,
                Err(e) => {
                    self.fail(
                        "hook",
                        Some(t.name),
                        format!("{e}: the host cannot read it either"),
                        format!("correct {}", shown(&path)),
                    );
                    continue;
                }
            };
            changed = changed.max(mtime_ns(&path));
            self.hook_lines(t, host, scope, &path, &hooks);
            match host {
                InstallTarget::Codex => self.codex_trust(t, scope, &path, &hooks, &homes),
                InstallTarget::Gemini => self.gemini_trust(t, homes.home.as_deref()),
                InstallTarget::ClaudeCode => {}
            }
        }
        if host == InstallTarget::Codex {
            self.codex_elsewhere(t, &homes);
        }
        changed
    }

    fn hook_lines(
        &mut self,
        t: Target,
        host: InstallTarget,
        scope: Scope,
        path: &Path,
        hooks: &[InstalledHook],
    ) {
        let fix = self.install_cmd(t.name, scope);
        let present: BTreeSet<&str> = hooks.iter().map(|h| h.event.as_str()).collect();
        let missing: Vec<&str> = host
            .specs()
            .iter()
            .map(|s| s.event)
            .filter(|e| !present.contains(e))
            .collect();
        let programs: BTreeSet<String> = hooks.iter().map(InstalledHook::program).collect();
        let broken: Vec<String> = programs.iter().filter_map(|p| not_runnable(p)).collect();
        let handover: Vec<String> = programs.iter().filter_map(|p| handover_broken(p)).collect();
        if broken.is_empty() && !handover.is_empty() {
            self.warn(
                "hook",
                Some(t.name),
                format!(
                    "sjournal's hooks in {} journal every event, but {} (webhook deliveries, \
                     snapshot rebuilds, search updates and shipping do not start)",
                    shown(path),
                    handover.join("; ")
                ),
                format!("{fix} (points them at a hook binary whose sjournal can run)"),
            );
        }
        if !broken.is_empty() {
            self.fail(
                "hook",
                Some(t.name),
                format!(
                    "sjournal's hooks in {} run a binary that is not there: {} (every event is \
                     lost)",
                    shown(path),
                    broken.join("; ")
                ),
                format!("{fix} (points them at this binary)"),
            );
        } else if !missing.is_empty() {
            self.warn(
                "hook",
                Some(t.name),
                format!(
                    "sjournal's hooks in {} lack {} ({}): those events are not journaled",
                    shown(path),
                    missing.len(),
                    missing.join(", ")
                ),
                fix,
            );
        } else {
            let programs: Vec<String> = programs
                .iter()
                .map(|p| sjournal::escape::text(p).into_owned())
                .collect();
            self.ok(
                "hook",
                Some(t.name),
                format!(
                    "{} hooks in {} ({} scope) run {}",
                    hooks.len(),
                    shown(path),
                    scope_name(scope),
                    programs.join(", ")
                ),
            );
        }
    }

    /// When the host last delivered an event; a host installed but silent is a finding.
    fn activity(&mut self, t: Target, installed: Option<i64>, summaries: &[SessionSummary]) {
        let of_host = || {
            summaries
                .iter()
                .filter(|s| s.identity.host.as_deref() == Some(t.journal_host))
        };
        let last = of_host()
            .filter_map(|s| s.last_ts_unix_ns.map(|ts| (ts, s)))
            .max_by_key(|(ts, _)| *ts);
        let sessions = of_host().count();
        let display = match t.kind {
            Kind::Hooks(h) => h.display_name(),
            Kind::Bridge(b) => b.display_name(),
        };
        let again = format!(
            "start a session in {display}, then run `sjournal doctor` again; if it stays \
             silent, `sjournal install {}` again",
            t.name
        );
        let host = Some(t.name);
        match (installed, last) {
            (None, None) => self.info(
                "install",
                host,
                format!("not installed (`sjournal install {}` installs it)", t.name),
            ),
            (None, Some((ts, _))) => self.info(
                "activity",
                host,
                format!(
                    "not installed by `sjournal install`, yet {sessions} session(s) in the \
                     journals, the last event at {}",
                    time(ts)
                ),
            ),
            (Some(_), None) => self.warn(
                "activity",
                host,
                "installed, but no event from it is in the journals: if you have used it since, \
                 its hooks do not run"
                    .into(),
                again,
            ),
            (Some(changed), Some((ts, _))) if ts < changed => self.warn(
                "activity",
                host,
                format!(
                    "no event since its hook configuration changed ({}; the last event was at \
                     {}): if you have used it since, its hooks do not run",
                    time(changed),
                    time(ts)
                ),
                again,
            ),
            (Some(_), Some((ts, s))) => self.ok(
                "activity",
                host,
                format!(
                    "last event at {} (session {}; {sessions} session(s) in all)",
                    time(ts),
                    sjournal::escape::text(s.session_id.as_deref().unwrap_or("?"))
                ),
            ),
        }
    }
}
