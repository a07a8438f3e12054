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
  1  findings (verify/log/state: a journal has a problem, details on stderr or in --json;
     fire: the maximum was reached; once/unseen: no new key; slot set: compare-and-set
     conflict; slot get/list show: empty)
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
    State(commands::state::Args),
    Snapshot(commands::snapshot::Args),
    Context(commands::context::Args),
    Slot(commands::slot::Args),
    Once(commands::once::Args),
    Unseen(commands::once::UnseenArgs),
    Fire(commands::fire::Args),
    List(commands::list::Args),
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
            Command::State(a) => commands::state::run(&root()?, a),
            Command::Snapshot(a) => commands::snapshot::run(&root()?, a),
            Command::Context(a) => commands::context::run(&root()?, a),
            Command::Slot(a) => commands::slot::run(&root()?, a),
            Command::Once(a) => commands::once::run(&root()?, a),
            Command::Unseen(a) => commands::once::run_unseen(&root()?, a),
            Command::Fire(a) => commands::fire::run(&root()?, a),
            Command::List(a) => commands::list::run(&root()?, a),
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
