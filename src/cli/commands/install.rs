//! `sjournal install HOST` / `sjournal uninstall HOST`: add sjournal's hooks to a host's
//! configuration, or remove them (see `crate::install`). `--dry-run` prints the diff and
//! writes nothing.

use std::path::PathBuf;

use crate::cli::{output, Outcome};
use crate::error::{Error, Result};
use crate::install::{self, Host, InstallError, Plan, Scope};

/// Install sjournal's hooks into a host's configuration (kept: everything else in it)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// The command the host runs [default: the path of this sjournal binary]
    #[arg(long, value_name = "PATH")]
    pub command: Option<String>,
}

/// Remove exactly sjournal's hooks from a host's configuration
#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub common: Common,
}

/// The hosts `install` knows (the library's `install::Host`, named for the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HostArg {
    #[value(name = "claude-code")]
    ClaudeCode,
    Codex,
    Gemini,
}

impl From<HostArg> for Host {
    fn from(h: HostArg) -> Host {
        match h {
            HostArg::ClaudeCode => Host::ClaudeCode,
            HostArg::Codex => Host::Codex,
            HostArg::Gemini => Host::Gemini,
        }
    }
}

/// `--scope`, for the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    User,
    Project,
    Local,
}

impl From<ScopeArg> for Scope {
    fn from(s: ScopeArg) -> Scope {
        match s {
            ScopeArg::User => Scope::User,
            ScopeArg::Project => Scope::Project,
            ScopeArg::Local => Scope::Local,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Common {
    /// claude-code, codex or gemini
    pub host: HostArg,
    /// user (~/.claude/settings.json, ~/.codex/hooks.json, ~/.gemini/settings.json), project
    /// (<project>/.claude/settings.json, ...), or local (<project>/.claude/settings.local.json)
    #[arg(long, value_enum, default_value = "user")]
    pub scope: ScopeArg,
    /// The project's root, for --scope project|local [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// Print the change as a diff; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

fn config_path(c: &Common) -> Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let project = match &c.project_dir {
        Some(d) => d.clone(),
        None => {
            std::env::current_dir().map_err(|e| Error::io("find", "the current directory", e))?
        }
    };
    Host::from(c.host)
        .config_path(c.scope.into(), home.as_deref(), &project)
        .map_err(|m| usage(InstallError::Usage(m)))
}

fn usage(e: InstallError) -> Error {
    Error::Install {
        message: e.to_string(),
    }
}

pub fn run(args: Args) -> Result<Outcome> {
    let path = config_path(&args.common)?;
    let command = match args.command {
        Some(c) => c,
        None => {
            let exe =
                std::env::current_exe().map_err(|e| Error::io("find", "this executable", e))?;
            install::shell_quote(&exe.to_string_lossy())
        }
    };
    let plan = install::plan_install(&path, args.common.host.into(), &command).map_err(usage)?;
    let dry = args.common.dry_run;
    let outcome = finish(plan, &args.common, "installed", "already installed")?;
    if let (Some(note), false) = (Host::from(args.common.host).after_install(), dry) {
        output::line(&mut output::stdout(), &format!("note: {note}"))?;
    }
    Ok(outcome)
}

pub fn run_uninstall(args: UninstallArgs) -> Result<Outcome> {
    let path = config_path(&args.common)?;
    let plan = install::plan_uninstall(&path).map_err(usage)?;
    finish(plan, &args.common, "removed", "not installed")
}

fn finish(plan: Plan, c: &Common, did: &str, nothing: &str) -> Result<Outcome> {
    let mut out = output::stdout();
    let host = Host::from(c.host).display_name();
    if !plan.changed {
        output::line(
            &mut out,
            &format!(
                "sjournal hooks {nothing} in {} ({host}): nothing to change",
                plan.path.display()
            ),
        )?;
        return Ok(Outcome::Ok);
    }
    if c.dry_run {
        use std::io::Write;
        out.write_all(plan.diff().as_bytes())
            .map_err(output::write_err)?;
        output::line(&mut out, "(dry run: nothing was written)")?;
        return Ok(Outcome::Ok);
    }
    let written = plan.write().map_err(usage)?;
    let backup = written
        .backup
        .map(|b| format!(" (previous version kept as {})", b.display()))
        .unwrap_or_default();
    output::line(
        &mut out,
        &format!(
            "sjournal hooks {did} in {} ({host}){backup}",
            plan.path.display()
        ),
    )?;
    Ok(Outcome::Ok)
}
