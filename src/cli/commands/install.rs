//! `sjournal install HOST` / `sjournal uninstall HOST`: add sjournal's hooks to a host's
//! configuration, or remove them (see `sjournal::install`). `--dry-run` prints the diff and
//! writes nothing.

use std::path::PathBuf;

use crate::cli::error::{CliError, Result};
use crate::cli::{output, Outcome};
use sjournal::error::Error;
use sjournal::install::bridge::{self, Bridge, Places};
use sjournal::install::{self, Homes, InstallError, InstallTarget, Plan, Scope};

/// Install sjournal's hooks into a host's configuration (kept: everything else in it)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// The command the host runs: for the bridges (opencode, pi, openclaw, cline) the
    /// binary's path; for the other hosts a shell command line (quote a path with spaces:
    /// '/opt/my tools/sjournal'; the MCP entry gets its words as a POSIX shell splits them,
    /// no variable expanded) [default: the sjournal-hook beside this sjournal for the hooks,
    /// if it is from the same build, else this sjournal; this sjournal for the MCP server]
    #[arg(long, value_name = "PATH")]
    pub command: Option<String>,
    /// Do not register `sjournal mcp` as an MCP server. By default `install` registers it
    /// where the host loads MCP servers, so the agent can search the journal (read-only but
    /// for proposing memory items to review): Claude Code ~/.claude.json ($CLAUDE_CONFIG_DIR/
    /// when set; --scope user,
    /// local) or <project>/.mcp.json; Codex $CODEX_HOME/config.toml or
    /// <project>/.codex/config.toml; Gemini CLI its settings.json; OpenCode opencode.json
    /// (`mcp`); Pi ~/.pi/agent/mcp.json or <project>/.pi/mcp.json; OpenClaw its
    /// openclaw.json (`mcp.servers`; user scope only); Cline the CLI's
    /// ~/.cline/data/settings/cline_mcp_settings.json (user scope only; the VS Code
    /// extension keeps its own file: add the same entry there by hand)
    #[arg(long, conflicts_with = "mcp")]
    pub no_mcp: bool,
    /// Register the MCP server (the default; kept for scripts that pass it)
    #[arg(long, hide = true)]
    pub mcp: bool,
}

/// Remove exactly sjournal's hooks from a host's configuration
#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub common: Common,
}

/// The hosts `install` knows (the library's `install::InstallTarget`, named for the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HostArg {
    #[value(name = "claude-code")]
    ClaudeCode,
    Codex,
    Gemini,
    #[value(name = "opencode")]
    OpenCode,
    Pi,
    #[value(name = "openclaw")]
    OpenClaw,
    Cline,
}

/// A host with exec hooks (its settings file is edited), or one reached through a bridge.
enum Target {
    Hooks(InstallTarget),
    Bridge(Bridge),
}

impl From<HostArg> for Target {
    fn from(h: HostArg) -> Target {
        match h {
            HostArg::ClaudeCode => Target::Hooks(InstallTarget::ClaudeCode),
            HostArg::Codex => Target::Hooks(InstallTarget::Codex),
            HostArg::Gemini => Target::Hooks(InstallTarget::Gemini),
            HostArg::OpenCode => Target::Bridge(Bridge::OpenCode),
            HostArg::Pi => Target::Bridge(Bridge::Pi),
            HostArg::OpenClaw => Target::Bridge(Bridge::OpenClaw),
            HostArg::Cline => Target::Bridge(Bridge::Cline),
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
    /// claude-code, codex, gemini (hooks in their settings), opencode, pi, openclaw (a
    /// bridge plugin where the host loads it), or cline (one hook file per event)
    pub host: HostArg,
    /// user ($CLAUDE_CONFIG_DIR/settings.json (~/.claude/ when unset), $CODEX_HOME/hooks.json (~/.codex/ when CODEX_HOME is
    /// unset), ~/.gemini/settings.json, ~/Documents/Cline/Hooks/), project (<project>/.claude/settings.json, ...,
    /// <project>/.clinerules/hooks/), or local (<project>/.claude/settings.local.json)
    #[arg(long, value_enum, default_value = "user")]
    pub scope: ScopeArg,
    /// The project's root, for --scope project|local [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// Print the change as a diff; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

fn project(c: &Common) -> Result<PathBuf> {
    match &c.project_dir {
        Some(d) => Ok(d.clone()),
        None => {
            Ok(std::env::current_dir()
                .map_err(|e| Error::io("find", "the current directory", e))?)
        }
    }
}

fn config_path(c: &Common, host: InstallTarget) -> Result<PathBuf> {
    host.config_path(c.scope.into(), &Homes::from_env(), &project(c)?)
        .map_err(|m| usage(InstallError::Usage(m)))
}

fn this_binary() -> Result<String> {
    let exe = std::env::current_exe().map_err(|e| Error::io("find", "this executable", e))?;
    Ok(exe.to_string_lossy().into_owned())
}

/// The program hosts run for each event: the `sjournal-hook` beside this binary if it comes
/// from the same build, else this binary (`sjournal hook` does the same work, with the other
/// commands' code loaded too). A stale or foreign `sjournal-hook` there is passed over with a
/// note.
fn hook_binary() -> Result<String> {
    use crate::cli::shared::{self, HookBinary};
    let (lean, why) = match shared::hook_binary()? {
        HookBinary::Same(lean) => return Ok(lean.to_string_lossy().into_owned()),
        HookBinary::Absent => return this_binary(),
        HookBinary::Other(lean) => (lean, "is not from this build".to_owned()),
        HookBinary::Untrusted(lean, why) => (lean, format!("is not used ({why})")),
    };
    let exe = this_binary()?;
    let note = format!(
        "note: {} {why}; the hooks run `{exe} hook` instead (rebuild both: cargo build \
         --release, or cargo install --locked --path .)",
        lean.display(),
    );
    output::line(&mut output::stdout(), &note)?;
    Ok(exe)
}

/// `install opencode|pi|openclaw`: the bridge's files where the host loads them.
fn run_bridge(b: Bridge, c: &Common, command: Option<String>, on: bool) -> Result<Outcome> {
    let places = Places::from_env(project(c)?);
    let command = match command {
        Some(c) => c,
        None if on => hook_binary()?,
        None => this_binary()?,
    };
    let files = b.files(c.scope.into(), &places, &command).map_err(usage)?;
    let mut out = output::stdout();
    let name = b.display_name();
    if c.dry_run {
        for f in &files {
            let what = if on {
                "write"
            } else {
                "remove (if sjournal's)"
            };
            output::line(&mut out, &format!("would {what} {}", f.path.display()))?;
        }
        output::line(&mut out, "(dry run: nothing was written)")?;
        return Ok(Outcome::Ok);
    }
    let changed = if on {
        bridge::write(&files).map_err(usage)?
    } else {
        bridge::remove(&files).map_err(usage)?
    };
    let did = if on { "installed" } else { "removed" };
    for p in &changed {
        output::line(
            &mut out,
            &format!("sjournal bridge for {name} {did}: {}", p.display()),
        )?;
    }
    if changed.is_empty() {
        let state = if on {
            "already installed"
        } else {
            "not installed"
        };
        output::line(
            &mut out,
            &format!("sjournal bridge for {name} {state}: nothing to change"),
        )?;
    }
    if b == Bridge::OpenClaw && c.scope != ScopeArg::Project {
        let config = Bridge::openclaw_config(&places).map_err(usage)?;
        match bridge::edit_openclaw_config(&config, on) {
            Ok(true) => output::line(
                &mut out,
                &format!(
                    "plugins.entries.{} {} in {}",
                    bridge::OPENCLAW_PLUGIN_ID,
                    if on {
                        "enabled, with conversation access,"
                    } else {
                        "removed"
                    },
                    config.display()
                ),
            )?,
            Ok(false) => {}
            Err(e) => output::line(&mut out, &format!("note: {e}"))?,
        }
    }
    if on {
        let note = b.after_install();
        output::line(&mut out, &format!("note: {note}"))?;
    }
    Ok(Outcome::Ok)
}

fn usage(e: InstallError) -> CliError {
    CliError::Install {
        message: e.to_string(),
    }
}

pub fn run(args: Args) -> Result<Outcome> {
    let host = match Target::from(args.common.host) {
        Target::Hooks(h) => h,
        Target::Bridge(b) => {
            let command = match &args.command {
                Some(c) => c.clone(),
                None => this_binary()?,
            };
            let outcome = run_bridge(b, &args.common, args.command, true)?;
            if !args.no_mcp {
                mcp_server(
                    &args.common,
                    args.common.host,
                    Some(&install::shell_quote(&command)),
                )?;
            }
            return Ok(outcome);
        }
    };
    let path = config_path(&args.common, host)?;
    // The hooks run the hook binary; the MCP server, `sjournal mcp`.
    let (command, mcp_command) = match args.command {
        Some(c) => (c.clone(), c),
        None => (
            install::shell_quote(&hook_binary()?),
            install::shell_quote(&this_binary()?),
        ),
    };
    let dry = args.common.dry_run;
    let after = |dry: bool| -> Result<()> {
        if let (Some(note), false) = (host.after_install(), dry) {
            output::line(&mut output::stdout(), &format!("note: {note}"))?;
        }
        Ok(())
    };
    if !args.no_mcp {
        if let Some(outcome) = hooks_and_mcp(&args.common, host, &path, &command, &mcp_command)? {
            after(dry)?;
            return Ok(outcome);
        }
    }
    let plan = || install::plan_install(&path, host, &command);
    let outcome = finish(
        plan,
        &args.common,
        host.display_name(),
        HOOKS,
        "installed",
        "already installed",
    )?;
    if !args.no_mcp {
        mcp_server(&args.common, args.common.host, Some(&mcp_command))?;
    }
    after(dry)?;
    Ok(outcome)
}

pub fn run_uninstall(args: UninstallArgs) -> Result<Outcome> {
    let host = match Target::from(args.common.host) {
        Target::Hooks(h) => h,
        Target::Bridge(b) => {
            let outcome = run_bridge(b, &args.common, None, false)?;
            mcp_server(&args.common, args.common.host, None)?;
            return Ok(outcome);
        }
    };
    let path = config_path(&args.common, host)?;
    let plan = || install::plan_uninstall(&path);
    let outcome = finish(
        plan,
        &args.common,
        host.display_name(),
        HOOKS,
        "removed",
        "not installed",
    )?;
    mcp_server(&args.common, args.common.host, None)?;
    Ok(outcome)
}

const HOOKS: &str = "sjournal hooks";

/// Installs the hooks and registers the MCP server in one write when the host keeps both in
/// one file (Gemini CLI's settings.json): one backup, and no moment where the file holds the
/// hooks without the server. None: they are in different files (installed one by one).
#[cfg(feature = "search")]
fn hooks_and_mcp(
    c: &Common,
    host: InstallTarget,
    path: &std::path::Path,
    command: &str,
    mcp_command: &str,
) -> Result<Option<Outcome>> {
    use sjournal::install::mcp::{self, McpHost};
    use std::cell::{Cell, RefCell};
    let mh = match host {
        InstallTarget::Gemini => McpHost::Gemini,
        _ => return Ok(None),
    };
    let places = mcp::Places::from_env(project(c)?);
    let Ok(Some(at)) = mh.location(c.scope.into(), &places) else {
        return Ok(None);
    };
    if at.path != path {
        return Ok(None);
    }
    let registered = Cell::new(false);
    let refused = RefCell::new(None);
    let plan = || {
        let hooks = install::plan_install(path, host, command)?;
        match mcp::plan_install_onto(mh, &at, mcp_command, &hooks) {
            Ok(both) => {
                registered.set(both.after != hooks.after);
                *refused.borrow_mut() = None;
                Ok(both)
            }
            // The server cannot go in (someone else's `sjournal` entry): the hooks alone, and
            // a note, as when the files differ.
            Err(e) => {
                *refused.borrow_mut() = Some(e.to_string());
                Ok(hooks)
            }
        }
    };
    let outcome = finish(
        plan,
        c,
        host.display_name(),
        HOOKS,
        "installed",
        "already installed",
    )?;
    let line = match refused.into_inner() {
        None if c.dry_run => return Ok(Some(outcome)),
        Some(e) => format!(
            "note: the sjournal MCP server was not registered: {e} (edit the file by hand, or \
             pass --no-mcp)"
        ),
        None if registered.get() => format!(
            "sjournal MCP server registered in {} ({}), in the same write",
            path.display(),
            host.display_name()
        ),
        None => format!(
            "sjournal MCP server already registered in {} ({}): nothing to change",
            path.display(),
            host.display_name()
        ),
    };
    output::line(&mut output::stdout(), &line)?;
    Ok(Some(outcome))
}

#[cfg(not(feature = "search"))]
fn hooks_and_mcp(
    _: &Common,
    _: InstallTarget,
    _: &std::path::Path,
    _: &str,
    _: &str,
) -> Result<Option<Outcome>> {
    Ok(None)
}

/// Registers (`command`) or removes (None) the MCP server where the host loads it.
#[cfg(feature = "search")]
fn mcp_server(c: &Common, host: HostArg, command: Option<&str>) -> Result<()> {
    // The hooks (or the bridge) are installed by now: a configuration file sjournal cannot
    // edit (JSON5 or comments, a file too large, someone else's `sjournal` server) is a note,
    // as it is for the bridges, not a failed install.
    if let Err(e) = register(c, host, command) {
        let line = format!(
            "note: the sjournal MCP server was not {}: {e} (edit the file by hand, or pass \
             --no-mcp)",
            if command.is_some() {
                "registered"
            } else {
                "removed"
            }
        );
        output::line(&mut output::stdout(), &line)?;
    }
    Ok(())
}

#[cfg(feature = "search")]
fn register(c: &Common, host: HostArg, command: Option<&str>) -> Result<()> {
    use sjournal::install::mcp::{self, McpHost};
    let host = match host {
        HostArg::ClaudeCode => McpHost::ClaudeCode,
        HostArg::Codex => McpHost::Codex,
        HostArg::Gemini => McpHost::Gemini,
        HostArg::OpenCode => McpHost::OpenCode,
        HostArg::Pi => McpHost::Pi,
        HostArg::OpenClaw => McpHost::OpenClaw,
        HostArg::Cline => McpHost::Cline,
    };
    let scope: Scope = c.scope.into();
    let places = mcp::Places::from_env(project(c)?);
    let at = match host.location(scope, &places) {
        Ok(Some(at)) => at,
        Ok(None) => {
            if command.is_some() {
                let line = format!(
                    "note: {} reads MCP servers from the user's configuration only; the sjournal \
                     MCP server was not registered (install with --scope user to register it)",
                    host.display_name()
                );
                output::line(&mut output::stdout(), &line)?;
            }
            return Ok(());
        }
        Err(m) => return Err(usage(InstallError::Usage(m))),
    };
    let what = "sjournal MCP server";
    let name = host.display_name();
    match command {
        Some(cmd) => {
            let plan = || mcp::plan_install(host, &at, cmd);
            finish(plan, c, name, what, "registered", "already registered")?;
        }
        None => {
            let plan = || mcp::plan_uninstall(&at);
            finish(plan, c, name, what, "removed", "not registered")?;
        }
    }
    Ok(())
}

#[cfg(not(feature = "search"))]
fn mcp_server(_: &Common, _: HostArg, _: Option<&str>) -> Result<()> {
    Ok(())
}

/// Plans and writes the change; when another install changed the file between the plan and
/// the write, plans again from what it holds now (a few times).
fn finish(
    make: impl Fn() -> std::result::Result<Plan, install::InstallError>,
    c: &Common,
    host: &str,
    what: &str,
    did: &str,
    nothing: &str,
) -> Result<Outcome> {
    let mut tries = 0;
    loop {
        match finish_once(make().map_err(usage)?, c, host, what, did, nothing) {
            Err(Retry::Changed(_)) if tries < 5 => tries += 1,
            Err(Retry::Changed(e)) => return Err(usage(e)),
            Err(Retry::Failed(e)) => return Err(e),
            Ok(o) => return Ok(o),
        }
    }
}

enum Retry {
    Changed(install::InstallError),
    Failed(CliError),
}

impl<E: Into<CliError>> From<E> for Retry {
    fn from(e: E) -> Retry {
        Retry::Failed(e.into())
    }
}

fn finish_once(
    plan: Plan,
    c: &Common,
    host: &str,
    what: &str,
    did: &str,
    nothing: &str,
) -> std::result::Result<Outcome, Retry> {
    let mut out = output::stdout();
    if !plan.changed {
        output::line(
            &mut out,
            &format!(
                "{what} {nothing} in {} ({host}): nothing to change",
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
    let written = match plan.write() {
        Ok(w) => w,
        Err(e @ install::InstallError::Changed { .. }) => return Err(Retry::Changed(e)),
        Err(e) => return Err(usage(e).into()),
    };
    let backup = written
        .backup
        .map(|b| format!(" (previous version kept as {})", b.display()))
        .unwrap_or_default();
    output::line(
        &mut out,
        &format!("{what} {did} in {} ({host}){backup}", plan.path.display()),
    )?;
    Ok(Outcome::Ok)
}
