//! `sjournal doctor [--project-dir DIR] [--json]`: whether sjournal is really working, check by
//! check, each finding with the command (or the step) that fixes it. Read only: it changes
//! nothing, merges no spool, takes no lock.
//!
//! What it checks: this binary (static or dynamic); the root (there, ours, writable, not
//! writable by others, `sessions/` private) and the free space under it; `config.toml`; spooled
//! events waiting to be merged, in the root's spool and in the fallback spool (and where that
//! is); every journal (`repair` for one that does not verify); webhook deliveries that fail.
//! Then, for each host `sjournal install` knows, in the user's and the project's settings:
//! whether sjournal's hooks (or bridge) are installed, complete and running a binary that is
//! there; whether the host will run them (Codex's hook trust, Gemini CLI's folder trust,
//! OpenClaw's plugin entry); and when the host last delivered an event, from the journals (a
//! host installed but silent is a finding).
//!
//! Exit 0 when no check is a finding, 1 when one is (a `WARN` or `FAIL` line), 2 on bad input.
//! `--json` prints one [`DoctorReport`](sjournal::json::DoctorReport).

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::cli::{output, Outcome};
use sjournal::audit::sessions::SessionSummary;
use sjournal::error::{Error, Result};
use sjournal::hook::config::Config;
use sjournal::install::bridge::{self, Bridge, Places};
use sjournal::install::inspect::{self, CodexTrust, FolderTrust, InstalledHook};
use sjournal::install::{Host, Scope};
use sjournal::journal::{spool, Root, WriterOptions};
use sjournal::json::{CheckStatus, DoctorCheck, DoctorReport};

/// Below this much free space under the root, events soon go to the fallback spool.
const SPACE_FAIL_BYTES: u64 = 64 << 20;
/// Below this much, a warning.
const SPACE_WARN_BYTES: u64 = 512 << 20;
/// Damaged journals named one by one; the rest are counted.
const DAMAGED_SHOWN: usize = 20;

/// Check that sjournal really works: install, trust, activity per host; root, spools, journals
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Exit codes:
  0  all is well
  1  findings (each WARN or FAIL line says what is wrong and how to fix it)
  2  bad input (e.g. --project-dir is not a directory)")]
pub struct Args {
    /// The project whose settings (and, for Gemini CLI, folder trust) to check [default: the
    /// current directory]
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// One JSON object: {"ok", "findings", "checks": [{"check", "host", "status", "message",
    /// "fix"}]}
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let project = match &args.project_dir {
        Some(d) => {
            if !d.is_dir() {
                return Err(Error::InvalidInput {
                    reason: format!("--project-dir {}: not a directory", d.display()),
                });
            }
            std::path::absolute(d).map_err(|e| Error::io("resolve", d, e))?
        }
        None => {
            std::env::current_dir().map_err(|e| Error::io("find", "the current directory", e))?
        }
    };
    let mut d = Doctor {
        checks: Vec::new(),
        project,
        scope_flag: args.project_dir.is_some(),
    };
    d.binary();
    d.root(root);
    d.space(root);
    let config = d.config(root);
    let opts = config
        .as_ref()
        .map(Config::writer_options)
        .unwrap_or_default();
    d.spools(root, &opts);
    let summaries = d.journals(root);
    if let Some(c) = &config {
        d.webhooks(root, c);
    }
    d.hosts(&summaries);
    let report = DoctorReport::new(d.checks);
    let mut out = output::stdout();
    if args.json {
        output::json_line(&mut out, &sjournal::json::line(&report))?;
    } else {
        for c in &report.checks {
            output::line(&mut out, &human(c))?;
        }
        let end = match report.findings {
            0 => "doctor: all is well".to_owned(),
            n => format!("doctor: {n} finding(s)"),
        };
        output::line(&mut out, &end)?;
    }
    Ok(if report.ok {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

/// `FAIL  codex trust   what is wrong — fix: the command`.
fn human(c: &DoctorCheck) -> String {
    let status = match c.status {
        CheckStatus::Ok => "ok",
        CheckStatus::Info => "info",
        CheckStatus::Warn => "WARN",
        CheckStatus::Fail => "FAIL",
    };
    let label = match c.host {
        Some(h) => format!("{h} {}", c.check),
        None => c.check.to_owned(),
    };
    let fix = c
        .fix
        .as_deref()
        .map(|f| format!(" — fix: {f}"))
        .unwrap_or_default();
    format!("{status:<5} {label:<20} {}{fix}", c.message)
}

struct Doctor {
    checks: Vec<DoctorCheck>,
    project: PathBuf,
    /// The user named the project (`--project-dir`): the fixes name it too.
    scope_flag: bool,
}

/// A host `sjournal install` knows: its name there, its name in the journals, how it is
/// wired in.
#[derive(Clone, Copy)]
struct Target {
    name: &'static str,
    journal_host: &'static str,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Hooks(Host),
    Bridge(Bridge),
}

const TARGETS: [Target; 7] = [
    Target {
        name: "claude-code",
        journal_host: "claude",
        kind: Kind::Hooks(Host::ClaudeCode),
    },
    Target {
        name: "codex",
        journal_host: "codex",
        kind: Kind::Hooks(Host::Codex),
    },
    Target {
        name: "gemini",
        journal_host: "gemini",
        kind: Kind::Hooks(Host::Gemini),
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

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::User => "user",
        Scope::Project => "project",
        Scope::Local => "local",
    }
}

fn shown(p: &Path) -> String {
    sjournal::escape::path(p)
}

fn time(ns: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

fn mtime_ns(p: &Path) -> Option<i64> {
    let m = std::fs::metadata(p).ok()?.modified().ok()?;
    let d = m.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

/// Why `program` (as a hook command names it) cannot be run, if it cannot.
fn not_runnable(program: &str) -> Option<String> {
    let path = if program.contains('/') {
        PathBuf::from(program)
    } else {
        let found = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        });
        match found {
            Some(p) => p,
            None => return Some(format!("`{program}` is not on PATH")),
        }
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

/// True if this user may create files in the directory `path`.
fn writable(path: &Path) -> bool {
    use rustix::fs::Access;
    rustix::fs::access(path, Access::WRITE_OK | Access::EXEC_OK).is_ok()
}

fn nearest_existing(path: &Path) -> Option<&Path> {
    path.ancestors().find(|p| p.exists())
}

/// Free bytes for this user on the file system of `path`.
fn free_bytes(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n => format!("{:.0} MiB", n as f64 / (1u64 << 20) as f64),
    }
}

/// Whether the ELF file at `path` names an interpreter (is dynamically linked); None if it
/// cannot tell.
fn dynamically_linked(path: &Path) -> Option<bool> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = vec![0u8; 64];
    f.read_exact(&mut head).ok()?;
    if &head[..4] != b"\x7fELF" || head[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
    let (phoff, phentsize, phnum) = match head[4] {
        2 => (
            u64::from_le_bytes(head[0x20..0x28].try_into().ok()?) as usize,
            u16_at(&head, 0x36),
            u16_at(&head, 0x38),
        ),
        1 => (
            u32::from_le_bytes(head[0x1c..0x20].try_into().ok()?) as usize,
            u16_at(&head, 0x2a),
            u16_at(&head, 0x2c),
        ),
        _ => return None,
    };
    let mut table = vec![0u8; phoff + phentsize * phnum];
    let mut f = std::fs::File::open(path).ok()?;
    f.read_exact(&mut table).ok()?;
    const PT_INTERP: u32 = 3;
    Some((0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        table
            .get(at..at + 4)
            .is_some_and(|t| u32::from_le_bytes(t.try_into().unwrap()) == PT_INTERP)
    }))
}

impl Doctor {
    fn push(
        &mut self,
        check: &'static str,
        host: Option<&'static str>,
        status: CheckStatus,
        message: String,
        fix: Option<String>,
    ) {
        self.checks.push(DoctorCheck {
            check,
            host,
            status,
            message,
            fix,
        });
    }

    fn binary(&mut self) {
        let version = env!("CARGO_PKG_VERSION");
        let Ok(exe) = std::env::current_exe() else {
            self.push(
                "binary",
                None,
                CheckStatus::Info,
                format!("this sjournal {version}: its path is unknown"),
                None,
            );
            return;
        };
        let linking = match dynamically_linked(&exe) {
            Some(false) => "statically linked: it runs wherever the host runs hooks",
            Some(true) => {
                "dynamically linked: it needs the same C library wherever the host runs hooks"
            }
            None => "linking unknown",
        };
        self.push(
            "binary",
            None,
            CheckStatus::Info,
            format!("this sjournal {version}: {} ({linking})", shown(&exe)),
            None,
        );
    }

    fn root(&mut self, root: &Root) {
        let dir = root.dir();
        let meta = match std::fs::metadata(dir) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let above = nearest_existing(dir).unwrap_or(Path::new("/"));
                let (status, fix) = if writable(above) {
                    (CheckStatus::Ok, None)
                } else {
                    (
                        CheckStatus::Fail,
                        Some(format!(
                            "create it yourself (`mkdir -p -m 700 {}`), or choose another root \
                             with SJOURNAL_HOME",
                            shown(dir)
                        )),
                    )
                };
                let what = match status {
                    CheckStatus::Ok => "not created yet: the first event creates it",
                    _ => "not created yet, and this user cannot create it",
                };
                self.push("root", None, status, format!("{}: {what}", shown(dir)), fix);
                return;
            }
            Err(e) => {
                self.push(
                    "root",
                    None,
                    CheckStatus::Fail,
                    format!("{}: cannot be read: {e}", shown(dir)),
                    Some("fix its permissions, or choose another root with SJOURNAL_HOME".into()),
                );
                return;
            }
        };
        let me = rustix::process::geteuid().as_raw();
        let mode = meta.permissions().mode() & 0o7777;
        let mut problems = Vec::new();
        let mut fixes = Vec::new();
        if !meta.is_dir() {
            problems.push("it is not a directory".to_owned());
            fixes.push("move it away, or choose another root with SJOURNAL_HOME".to_owned());
        } else {
            if meta.uid() != me {
                problems.push(format!(
                    "it belongs to uid {}, not to this user",
                    meta.uid()
                ));
                fixes.push("choose a root of your own with SJOURNAL_HOME".into());
            }
            if mode & 0o022 != 0 {
                problems.push(format!(
                    "others can write in it (mode {mode:o}): they could replace what sjournal keeps there"
                ));
                fixes.push(format!("chmod go-w {}", shown(dir)));
            }
            if !writable(dir) {
                problems
                    .push("this user cannot write in it: events go to the fallback spool".into());
                fixes.push(format!("chmod u+rwx {}", shown(dir)));
            }
            let sessions = root.sessions_dir();
            match std::fs::symlink_metadata(&sessions) {
                Ok(m) if m.file_type().is_symlink() => {
                    problems.push(format!(
                        "{} is a symbolic link, which sjournal does not follow: events go to the \
                         fallback spool",
                        shown(&sessions)
                    ));
                    fixes.push(format!(
                        "move the link away (`mv {0} {0}.link`); sjournal makes a new one",
                        shown(&sessions)
                    ));
                }
                Ok(m) if m.is_dir() && m.permissions().mode() & 0o077 != 0 => {
                    problems.push(format!(
                        "{} is open to others (mode {:o})",
                        shown(&sessions),
                        m.permissions().mode() & 0o7777
                    ));
                    fixes.push(format!("chmod 700 {}", shown(&sessions)));
                }
                Ok(m) if !m.is_dir() => {
                    problems.push(format!("{} is not a directory", shown(&sessions)));
                    fixes.push(format!("move {} away", shown(&sessions)));
                }
                _ => {}
            }
        }
        if problems.is_empty() {
            self.push(
                "root",
                None,
                CheckStatus::Ok,
                format!("{}: writable, private", shown(dir)),
                None,
            );
        } else {
            self.push(
                "root",
                None,
                CheckStatus::Fail,
                format!("{}: {}", shown(dir), problems.join("; ")),
                Some(fixes.join("; ")),
            );
        }
    }

    fn space(&mut self, root: &Root) {
        let at = nearest_existing(root.dir()).unwrap_or(Path::new("/"));
        let Some(free) = free_bytes(at) else {
            self.push(
                "space",
                None,
                CheckStatus::Info,
                format!("the free space under {} is unknown", shown(at)),
                None,
            );
            return;
        };
        let (status, fix) = match free {
            f if f < SPACE_FAIL_BYTES => (
                CheckStatus::Fail,
                Some("free some space on that file system (events go to the fallback spool when it is full)".into()),
            ),
            f if f < SPACE_WARN_BYTES => (
                CheckStatus::Warn,
                Some("free some space on that file system".into()),
            ),
            _ => (CheckStatus::Ok, None),
        };
        self.push(
            "space",
            None,
            status,
            format!("{} free under {}", bytes(free), shown(at)),
            fix,
        );
    }

    fn config(&mut self, root: &Root) -> Option<Config> {
        let path = Config::path(root);
        match Config::load(root) {
            Ok(c) => {
                let what = if path.exists() {
                    format!("{} reads", shown(&path))
                } else {
                    format!("{} absent: the defaults", shown(&path))
                };
                self.push("config", None, CheckStatus::Ok, what, None);
                Some(c)
            }
            Err(e) => {
                self.push(
                    "config",
                    None,
                    CheckStatus::Fail,
                    format!(
                        "{}: {} (the hook runs with the defaults)",
                        shown(&e.path),
                        e.message
                    ),
                    Some(format!("correct {}", shown(&e.path))),
                );
                None
            }
        }
    }

    fn spools(&mut self, root: &Root, opts: &WriterOptions) {
        let fallback = spool::fallback::bases(opts.fallback_dir.as_deref());
        let base = fallback.first().cloned().unwrap_or_default();
        let sessions = match spool::sessions_with_pending(root, opts) {
            Ok(s) => s,
            Err(e) => {
                self.push(
                    "spool",
                    None,
                    CheckStatus::Fail,
                    format!("the spools cannot be read: {e}"),
                    Some(format!("fix the permissions under {}", shown(root.dir()))),
                );
                return;
            }
        };
        let (mut in_root, mut in_fallback, mut damaged) = (0, 0, 0);
        let (mut root_sessions, mut fallback_sessions) = (BTreeSet::new(), BTreeSet::new());
        for id in &sessions {
            let Ok(pending) = spool::pending_spool(root, id, opts) else {
                continue;
            };
            for p in &pending {
                if p.fallback {
                    in_fallback += 1;
                    fallback_sessions.insert(id.clone());
                } else {
                    in_root += 1;
                    root_sessions.insert(id.clone());
                }
                if p.damaged.is_some() {
                    damaged += 1;
                }
            }
        }
        if in_root == 0 {
            self.push(
                "spool",
                None,
                CheckStatus::Ok,
                "no spooled event waits to be merged".into(),
                None,
            );
        } else {
            let damaged = match damaged {
                0 => String::new(),
                n => format!(" ({n} damaged: set aside when merged)"),
            };
            self.push(
                "spool",
                None,
                CheckStatus::Warn,
                format!(
                    "{in_root} spooled event file(s) of {} session(s) wait to be merged into \
                     their journals{damaged}",
                    root_sessions.len()
                ),
                Some("sjournal flush --all".into()),
            );
        }
        if in_fallback == 0 {
            self.push(
                "fallback",
                None,
                CheckStatus::Ok,
                format!(
                    "{}: nothing waits there (used only when the root cannot take an event)",
                    shown(&base)
                ),
                None,
            );
        } else {
            self.push(
                "fallback",
                None,
                CheckStatus::Warn,
                format!(
                    "{in_fallback} event file(s) of {} session(s) wait in the fallback spool under \
                     {}, outside the root (lost at a reboot if it is a tmpfs)",
                    fallback_sessions.len(),
                    shown(&base)
                ),
                Some("make the root writable again (see `root` and `space`), then `sjournal flush --all`".into()),
            );
        }
    }

    fn journals(&mut self, root: &Root) -> Vec<SessionSummary> {
        let all = match sjournal::audit::sessions::list(root) {
            Ok(a) => a,
            Err(e) => {
                self.push(
                    "journals",
                    None,
                    CheckStatus::Fail,
                    format!("the journals cannot be listed: {e}"),
                    Some(format!(
                        "fix the permissions of {}",
                        shown(&root.sessions_dir())
                    )),
                );
                return Vec::new();
            }
        };
        let damaged: Vec<&SessionSummary> = all.iter().filter(|s| !s.ok).collect();
        if damaged.is_empty() {
            self.push(
                "journals",
                None,
                CheckStatus::Ok,
                format!("{} journal(s), every one verifies", all.len()),
                None,
            );
        }
        for s in damaged.iter().take(DAMAGED_SHOWN) {
            let problem = s.problem.as_deref().unwrap_or("it does not verify");
            let (who, fix) = match &s.session_id {
                Some(id) => (
                    format!("session {}", sjournal::escape::text(id)),
                    format!(
                        "sjournal repair --session {} (the damaged file is kept beside it)",
                        sjournal::install::shell_quote(id)
                    ),
                ),
                None => (
                    shown(&s.journal),
                    format!(
                        "sjournal inspect {} (its header is damaged: repair needs the session id)",
                        shown(&s.journal)
                    ),
                ),
            };
            self.push(
                "journals",
                None,
                CheckStatus::Fail,
                format!(
                    "{who}: the journal is damaged: {}",
                    sjournal::escape::text(problem)
                ),
                Some(fix),
            );
        }
        if damaged.len() > DAMAGED_SHOWN {
            self.push(
                "journals",
                None,
                CheckStatus::Fail,
                format!(
                    "and {} more damaged journal(s)",
                    damaged.len() - DAMAGED_SHOWN
                ),
                Some("sjournal verify --all".into()),
            );
        }
        all
    }

    fn webhooks(&mut self, root: &Root, config: &Config) {
        if config.webhook.is_empty() {
            self.push(
                "webhooks",
                None,
                CheckStatus::Ok,
                "none configured".into(),
                None,
            );
            return;
        }
        let statuses = match sjournal::webhook::status::status(root, &config.webhook, None) {
            Ok(s) => s,
            Err(e) => {
                self.push(
                    "webhooks",
                    None,
                    CheckStatus::Fail,
                    format!("their state cannot be read: {e}"),
                    Some("sjournal webhook status".into()),
                );
                return;
            }
        };
        let mut failing = 0;
        for st in &statuses {
            let Some(fail) = &st.last_failure else {
                continue;
            };
            if st.pending == 0 {
                continue;
            }
            failing += 1;
            let why = match (&fail.error, fail.status) {
                (Some(e), _) => sjournal::escape::text(e).into_owned(),
                (None, Some(code)) => format!("HTTP {code}"),
                (None, None) => "failed".into(),
            };
            self.push(
                "webhooks",
                None,
                CheckStatus::Warn,
                format!(
                    "webhook {}: {} event(s) of session {} not delivered; the last attempt \
                     failed: {why}",
                    sjournal::escape::text(&st.webhook),
                    st.pending,
                    sjournal::escape::text(&st.session_id)
                ),
                Some(format!(
                    "check its url in {}, then `sjournal webhook deliver --all`",
                    shown(&Config::path(root))
                )),
            );
        }
        if failing == 0 {
            self.push(
                "webhooks",
                None,
                CheckStatus::Ok,
                format!("{} configured, no delivery failing", config.webhook.len()),
                None,
            );
        }
    }

    /// `sjournal install NAME` with the scope flags that name `scope`.
    fn install_cmd(&self, name: &str, scope: Scope) -> String {
        let mut c = format!("sjournal install {name}");
        if scope != Scope::User {
            c.push_str(&format!(" --scope {}", scope_name(scope)));
            if self.scope_flag {
                c.push_str(&format!(
                    " --project-dir {}",
                    sjournal::install::shell_quote(&self.project.to_string_lossy())
                ));
            }
        }
        c
    }

    fn hosts(&mut self, summaries: &[SessionSummary]) {
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
    fn hook_host(&mut self, t: Target, host: Host) -> Option<i64> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let scopes: &[Scope] = match host {
            Host::ClaudeCode => &[Scope::User, Scope::Project, Scope::Local],
            _ => &[Scope::User, Scope::Project],
        };
        let mut changed: Option<i64> = None;
        for &scope in scopes {
            let Ok(path) = host.config_path(scope, home.as_deref(), &self.project) else {
                continue;
            };
            let hooks = match inspect::read_hooks(&path) {
                Ok(Some(h)) if !h.is_empty() => h,
                Ok(_) => continue,
                Err(e) => {
                    self.push(
                        "hook",
                        Some(t.name),
                        CheckStatus::Fail,
                        format!("{e}: the host cannot read it either"),
                        Some(format!("correct {}", shown(&path))),
                    );
                    continue;
                }
            };
            changed = changed.max(mtime_ns(&path));
            self.hook_lines(t, host, scope, &path, &hooks);
            match host {
                Host::Codex => self.codex_trust(t, scope, &path, &hooks, home.as_deref()),
                Host::Gemini => self.gemini_trust(t, home.as_deref()),
                Host::ClaudeCode => {}
            }
        }
        changed
    }

    fn hook_lines(
        &mut self,
        t: Target,
        host: Host,
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
        if !broken.is_empty() {
            self.push(
                "hook",
                Some(t.name),
                CheckStatus::Fail,
                format!(
                    "sjournal's hooks in {} run a binary that is not there: {} (every event is \
                     lost)",
                    shown(path),
                    broken.join("; ")
                ),
                Some(format!("{fix} (points them at this binary)")),
            );
        } else if !missing.is_empty() {
            self.push(
                "hook",
                Some(t.name),
                CheckStatus::Warn,
                format!(
                    "sjournal's hooks in {} lack {} ({}): those events are not journaled",
                    shown(path),
                    missing.len(),
                    missing.join(", ")
                ),
                Some(fix),
            );
        } else {
            let programs: Vec<String> = programs
                .iter()
                .map(|p| sjournal::escape::text(p).into_owned())
                .collect();
            self.push(
                "hook",
                Some(t.name),
                CheckStatus::Ok,
                format!(
                    "{} hooks in {} ({} scope) run {}",
                    hooks.len(),
                    shown(path),
                    scope_name(scope),
                    programs.join(", ")
                ),
                None,
            );
        }
    }

    fn codex_trust(
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
        if scope == Scope::User && path.parent() != Some(codex_home.as_path()) {
            self.push(
                "trust",
                Some(t.name),
                CheckStatus::Fail,
                format!(
                    "sjournal's hooks are in {}, but Codex reads {} (CODEX_HOME)",
                    shown(path),
                    shown(&codex_home.join("hooks.json"))
                ),
                Some(format!(
                    "move {} to {}",
                    shown(path),
                    shown(&codex_home.join("hooks.json"))
                )),
            );
            return;
        }
        let config_path = codex_home.join("config.toml");
        let config = std::fs::read_to_string(&config_path).ok();
        if scope == Scope::Project
            && !inspect::codex_project_trusted(&self.project, config.as_deref())
        {
            self.push(
                "trust",
                Some(t.name),
                CheckStatus::Fail,
                format!(
                    "{} is not a trusted project, so Codex ignores its .codex/ and sjournal's \
                     hooks there",
                    shown(&self.project)
                ),
                Some("start `codex` in the project and trust it".into()),
            );
        }
        let trust = inspect::codex_trust(path, hooks, config.as_deref());
        let count = |k: CodexTrust| trust.iter().filter(|&&x| x == k).count();
        let (untrusted, modified, disabled) = (
            count(CodexTrust::Untrusted),
            count(CodexTrust::Modified),
            count(CodexTrust::Disabled),
        );
        if untrusted + modified + disabled == 0 {
            self.push(
                "trust",
                Some(t.name),
                CheckStatus::Ok,
                format!(
                    "Codex trusts sjournal's {} hooks in {}",
                    hooks.len(),
                    shown(path)
                ),
                None,
            );
            return;
        }
        let mut what = Vec::new();
        if untrusted > 0 {
            what.push(format!("{untrusted} not trusted"));
        }
        if modified > 0 {
            what.push(format!("{modified} changed since they were trusted"));
        }
        if disabled > 0 {
            what.push(format!("{disabled} turned off"));
        }
        self.push(
            "trust",
            Some(t.name),
            CheckStatus::Fail,
            format!(
                "of sjournal's {} hooks in {}, {}: Codex skips them without a word",
                hooks.len(),
                shown(path),
                what.join(", ")
            ),
            Some(
                "start `codex`, open /hooks, review sjournal's hooks and trust them (turn on any \
                 turned off)"
                    .into(),
            ),
        );
    }

    fn gemini_trust(&mut self, t: Target, home: Option<&Path>) {
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
        let folders = folders_path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok());
        let enabled = home
            .map(|h| h.join(".gemini/settings.json"))
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["security"]["folderTrust"]["enabled"].as_bool())
            .unwrap_or(true);
        let env = var("GEMINI_CLI_TRUST_WORKSPACE");
        let project = shown(&self.project);
        let file = folders_path
            .as_deref()
            .map(shown)
            .unwrap_or_else(|| "~/.gemini/trustedFolders.json".into());
        let add = format!(
            "trust the folder when Gemini CLI asks, or add {{{:?}: \"TRUST_FOLDER\"}} to {file}",
            self.project.to_string_lossy()
        );
        match inspect::gemini_folder_trust(&self.project, folders.as_deref(), enabled, env.as_deref()) {
            Ok(FolderTrust::Trusted(rule)) => self.push(
                "trust",
                Some(t.name),
                CheckStatus::Ok,
                format!("{project} is a trusted folder ({})", sjournal::escape::text(&rule)),
                None,
            ),
            Ok(FolderTrust::Off) => self.push(
                "trust",
                Some(t.name),
                CheckStatus::Ok,
                "folder trust is off (security.folderTrust.enabled = false): every folder runs hooks".into(),
                None,
            ),
            Ok(FolderTrust::NoRule) => self.push(
                "trust",
                Some(t.name),
                CheckStatus::Fail,
                format!("{project} is not a trusted folder: Gemini CLI runs no hook there"),
                Some(add),
            ),
            Ok(FolderTrust::Distrusted(rule)) => self.push(
                "trust",
                Some(t.name),
                CheckStatus::Fail,
                format!(
                    "{project} is distrusted ({}): Gemini CLI runs no hook there",
                    sjournal::escape::text(&rule)
                ),
                Some(add),
            ),
            Err(e) => self.push(
                "trust",
                Some(t.name),
                CheckStatus::Fail,
                format!("{file} is not valid JSON ({e}): Gemini CLI stops with an error"),
                Some(format!("correct {file}")),
            ),
        }
    }

    /// Checks a bridge in each scope; returns when its installed files last changed (None:
    /// installed nowhere).
    fn bridge_host(&mut self, t: Target, b: Bridge) -> Option<i64> {
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
            let fix = self.install_cmd(t.name, scope);
            let text = std::fs::read_to_string(first).unwrap_or_default();
            let binary = inspect::bridge_binary(&text);
            let dir = first.parent().unwrap_or(Path::new("/"));
            let current = binary
                .as_deref()
                .and_then(|bin| b.files(scope, &places, bin).ok())
                .is_some_and(|want| {
                    want.iter()
                        .all(|f| std::fs::read_to_string(&f.path).is_ok_and(|have| have == f.text))
                });
            let broken = binary.as_deref().and_then(not_runnable);
            if let Some(why) = broken {
                self.push(
                    "hook",
                    Some(t.name),
                    CheckStatus::Fail,
                    format!(
                        "sjournal's bridge in {} runs a binary that is not there: {why} (every \
                         event is lost)",
                        shown(dir)
                    ),
                    Some(format!("{fix} (points it at this binary)")),
                );
            } else if ours.len() < files.len() {
                self.push(
                    "hook",
                    Some(t.name),
                    CheckStatus::Warn,
                    format!(
                        "sjournal's bridge in {} lacks {} of its {} files",
                        shown(dir),
                        files.len() - ours.len(),
                        files.len()
                    ),
                    Some(fix.clone()),
                );
            } else if !current {
                self.push(
                    "hook",
                    Some(t.name),
                    CheckStatus::Warn,
                    format!(
                        "sjournal's bridge in {} is not the one this sjournal installs (an older \
                         version, or edited)",
                        shown(dir)
                    ),
                    Some(format!("{fix} (then restart the host)")),
                );
            } else {
                self.push(
                    "hook",
                    Some(t.name),
                    CheckStatus::Ok,
                    format!(
                        "bridge in {} ({} scope) runs {}",
                        shown(dir),
                        scope_name(scope),
                        sjournal::escape::text(binary.as_deref().unwrap_or("?"))
                    ),
                    None,
                );
            }
            if b == Bridge::OpenClaw && scope == Scope::User {
                self.openclaw_entry(t, &places, &fix);
            }
        }
        changed
    }

    fn openclaw_entry(&mut self, t: Target, places: &Places, fix: &str) {
        let Ok(path) = Bridge::openclaw_config(places) else {
            return;
        };
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
            self.push(
                "trust",
                Some(t.name),
                CheckStatus::Info,
                format!(
                    "{} is not plain JSON: check that plugins.entries.{} is enabled with \
                     hooks.allowConversationAccess",
                    shown(&path),
                    bridge::OPENCLAW_PLUGIN_ID
                ),
                None,
            );
            return;
        };
        let entry = &doc["plugins"]["entries"][bridge::OPENCLAW_PLUGIN_ID];
        let ok = entry["enabled"] == true
            && entry["hooks"]["allowConversationAccess"] == true
            && entry["hooks"]["allowPromptInjection"] == true;
        if ok {
            self.push(
                "trust",
                Some(t.name),
                CheckStatus::Ok,
                format!(
                    "plugins.entries.{} in {} enables the plugin and its conversation hooks",
                    bridge::OPENCLAW_PLUGIN_ID,
                    shown(&path)
                ),
                None,
            );
        } else {
            self.push(
                "trust",
                Some(t.name),
                CheckStatus::Fail,
                format!(
                    "plugins.entries.{} in {} does not enable the plugin with its conversation \
                     hooks: OpenClaw does not load it, or gives it no prompts",
                    bridge::OPENCLAW_PLUGIN_ID,
                    shown(&path)
                ),
                Some(fix.to_owned()),
            );
        }
    }

    /// When the host last delivered an event; a host installed but silent is a finding.
    fn activity(&mut self, t: Target, installed: Option<i64>, summaries: &[SessionSummary]) {
        let last = summaries
            .iter()
            .filter(|s| s.identity.host.as_deref() == Some(t.journal_host))
            .filter_map(|s| s.last_ts_unix_ns.map(|ts| (ts, s)))
            .max_by_key(|(ts, _)| *ts);
        let sessions = summaries
            .iter()
            .filter(|s| s.identity.host.as_deref() == Some(t.journal_host))
            .count();
        let display = match t.kind {
            Kind::Hooks(h) => h.display_name(),
            Kind::Bridge(b) => b.display_name(),
        };
        let again = format!(
            "start a session in {display}, then run `sjournal doctor` again; if it stays \
             silent, `sjournal install {}` again",
            t.name
        );
        match (installed, last) {
            (None, None) => self.push(
                "install",
                Some(t.name),
                CheckStatus::Info,
                format!("not installed (`sjournal install {}` installs it)", t.name),
                None,
            ),
            (None, Some((ts, _))) => self.push(
                "activity",
                Some(t.name),
                CheckStatus::Info,
                format!(
                    "not installed by `sjournal install`, yet {sessions} session(s) in the \
                     journals, the last event at {}",
                    time(ts)
                ),
                None,
            ),
            (Some(_), None) => self.push(
                "activity",
                Some(t.name),
                CheckStatus::Warn,
                "installed, but no event from it is in the journals: if you have used it since, \
                 its hooks do not run"
                    .into(),
                Some(again),
            ),
            (Some(changed), Some((ts, _))) if ts < changed => self.push(
                "activity",
                Some(t.name),
                CheckStatus::Warn,
                format!(
                    "no event since its hook configuration changed ({}; the last event was at \
                     {}): if you have used it since, its hooks do not run",
                    time(changed),
                    time(ts)
                ),
                Some(again),
            ),
            (Some(_), Some((ts, s))) => self.push(
                "activity",
                Some(t.name),
                CheckStatus::Ok,
                format!(
                    "last event at {} (session {}; {sessions} session(s) in all)",
                    time(ts),
                    sjournal::escape::text(s.session_id.as_deref().unwrap_or("?"))
                ),
                None,
            ),
        }
    }
}
