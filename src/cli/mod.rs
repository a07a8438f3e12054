//! The command line: clap structs and dispatch. One file per command under `commands/`.
//! The library never prints; this layer does, and maps outcomes to exit codes.

pub mod commands;
pub mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::Error;
use crate::journal::Root;

pub const EXIT_CODES: &str = "\
Exit codes:
  0  success (verify: every journal is intact)
  1  findings (verify/log: a journal has a problem; details on stderr or in --json)
  2  error (bad input, unreadable journal, no such session); nothing was changed";

#[derive(Debug, Parser)]
#[command(
    name = "sjournal",
    version,
    about = "Durable, checksummed, hash-chained session journals for AI coding agents",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Root directory of the journals [default: $SJOURNAL_HOME, else $XDG_STATE_HOME/sjournal,
    /// else ~/.local/state/sjournal]
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Append(commands::append::Args),
    Log(commands::log::Args),
    Verify(commands::verify::Args),
    Demo(commands::demo::Args),
    Hook(commands::hook::Args),
    Install(commands::install::Args),
    Uninstall(commands::install::UninstallArgs),
}

/// What a command ended with.
pub enum Outcome {
    Ok,
    Findings,
}

pub fn run(cli: Cli) -> ExitCode {
    let result = (|| {
        let root = || Root::resolve(cli.root.as_deref());
        match cli.command {
            Command::Append(a) => commands::append::run(&root()?, a),
            Command::Log(a) => commands::log::run(&root()?, a),
            Command::Verify(a) => commands::verify::run(&root()?, a),
            Command::Demo(a) => commands::demo::run(a),
            Command::Hook(a) => commands::hook::run(root(), a),
            Command::Install(a) => commands::install::run(a),
            Command::Uninstall(a) => commands::install::run_uninstall(a),
        }
    })();
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(1),
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            report_error(&e);
            ExitCode::from(2)
        }
    }
}

/// A command line clap could not parse. Help and version requests print as usual; errors exit
/// 2, except for `hook`, which must fail open (exit 0): a host running a mistyped hook command
/// would otherwise block its action on every event.
pub fn parse_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let is_hook = std::env::args().skip(1).any(|a| a == "hook");
    if is_hook && !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        eprintln!("sjournal hook: {}", e.to_string().trim_end());
        eprintln!("sjournal hook: the command line is invalid; the event was not recorded (exit 0, fail-open)");
        return ExitCode::SUCCESS;
    }
    e.exit()
}

/// Prints an error and its chain of causes to stderr.
pub fn report_error(e: &Error) {
    let mut msg = format!("sjournal: error: {e}");
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(&format!("\n  caused by: {s}"));
        src = s.source();
    }
    eprintln!("{msg}");
}
