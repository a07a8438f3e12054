//! `sjournal doctor [--project-dir DIR] [--json]`: whether sjournal is really working, check by
//! check, each finding with the command (or the step) that fixes it. Read only: it changes
//! nothing and merges no spool (it reads the journals as `verify` does); every file it reads is opened without waiting and
//! read only if it is a regular file ([`read_host_file`], `storage::read_regular`), so a FIFO
//! planted where a settings file should be is a finding, not a hang.
//!
//! What it checks ([`machine`]): this binary (static or dynamic); the root (there, ours,
//! writable, not writable by others, `sessions/` private) and the free space under it;
//! `config.toml`. What the root holds ([`stores`]): spooled events waiting to be merged, in the
//! root's spool and in the fallback spool (and where that is); spool files and fallback
//! directories refused as untrusted (with the `flush --accept` command); every journal
//! (`repair` for one that does not verify, and, in [`witnesses`], for one whose independent
//! witnesses disagree with it or that is gone while they name its records); webhook
//! deliveries that fail. Then, for each host `sjournal install`
//! knows ([`hosts`], [`bridges`], [`trust`]), in the user's and the project's settings: whether
//! sjournal's hooks (or bridge) are installed, complete and running a binary that is there;
//! whether the host will run them (Codex's hook trust, Gemini CLI's folder trust, OpenClaw's
//! plugin entry); and when the host last delivered an event, from the journals (a host
//! installed but silent is a finding).
//!
//! Exit 0 when no check is a finding, 1 when one is (a `WARN` or `FAIL` line), 2 on bad input.
//! `--json` prints one [`DoctorReport`](sjournal::report::DoctorReport).

mod bridges;
mod hosts;
mod machine;
mod stores;
mod trust;
mod witnesses;

use std::path::{Path, PathBuf};

use crate::cli::{output, Outcome};
use sjournal::config::Config;
use sjournal::error::{Error, Result};
use sjournal::install::Scope;
use sjournal::journal::Root;
use sjournal::report::{CheckStatus, DoctorCheck, DoctorReport};
use sjournal::storage::{self, Owner};

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
    let project = project_of(&args)?;
    print(report(root, project, args.project_dir.is_some()), args.json)
}

/// Every check, for `project` (named by the user when `scope_flag`): the report `doctor
/// --json` prints (and the viewer's Verify page shows).
pub fn report(root: &Root, project: PathBuf, scope_flag: bool) -> DoctorReport {
    let mut d = Doctor {
        checks: Vec::new(),
        project,
        scope_flag,
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
    d.refused(root, &opts);
    let summaries = d.journals(root);
    if let Some(c) = &config {
        d.webhooks(root, c);
    }
    d.hosts(&summaries);
    DoctorReport::new(d.checks)
}

fn project_of(args: &Args) -> Result<PathBuf> {
    Ok(match &args.project_dir {
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
    })
}

fn print(report: DoctorReport, json: bool) -> Result<Outcome> {
    let mut out = output::stdout();
    if json {
        output::json_line(&mut out, &sjournal::report::line(&report))?;
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

    /// A check that passed.
    fn ok(&mut self, check: &'static str, host: Option<&'static str>, message: String) {
        self.push(check, host, CheckStatus::Ok, message, None);
    }

    /// Worth knowing, nothing to do.
    fn info(&mut self, check: &'static str, host: Option<&'static str>, message: String) {
        self.push(check, host, CheckStatus::Info, message, None);
    }

    /// Something may not be working, and how to fix it.
    fn warn(
        &mut self,
        check: &'static str,
        host: Option<&'static str>,
        message: String,
        fix: String,
    ) {
        self.push(check, host, CheckStatus::Warn, message, Some(fix));
    }

    /// Something does not work, and how to fix it.
    fn fail(
        &mut self,
        check: &'static str,
        host: Option<&'static str>,
        message: String,
        fix: String,
    ) {
        self.push(check, host, CheckStatus::Fail, message, Some(fix));
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
}

/// The most doctor reads of a host's file (settings, trust lists, bridge files): far more than
/// any host writes.
const HOST_FILE_MAX_BYTES: u64 = 16 << 20;

/// The text of a host's file, `Ok(None)` if there is none. A link is followed to its target
/// (dotfiles are often links; the host follows them too), and the target is read only if it
/// is a regular file, opened without waiting: a FIFO or a device there is an error, never a
/// hang.
fn read_host_file(path: &Path) -> Result<Option<String>> {
    let not_found = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let target = match std::fs::canonicalize(path) {
        Ok(t) => t,
        Err(e) if not_found(&e) => return Ok(None),
        Err(e) => return Err(Error::io("resolve", path, e)),
    };
    match storage::read_regular_text(&target, Owner::Anyone, HOST_FILE_MAX_BYTES) {
        Ok(t) => Ok(Some(t)),
        Err(Error::Io { source, .. }) if not_found(&source) => Ok(None),
        Err(e) => Err(e),
    }
}

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
