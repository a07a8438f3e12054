//! The command line: clap structs and dispatch. One file per command under `commands/`.
//! The library never prints; this layer does, and maps outcomes to exit codes.

pub mod commands;
pub mod error;
pub mod lean;
pub mod output;
pub mod pending;
pub mod progress;
pub mod shared;
pub mod target;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use sjournal::journal::Root;

/// The exit codes, as every command's help ends.
macro_rules! exit_codes {
    () => {
        "\
Exit codes:
  0  success: nothing wrong was found
  1  findings: a journal has a problem, a checkpoint is not extended or its signature is bad,
     an event had to go to the rescue journal or the spool, spooled events are still pending
     (details on stderr, or in the --json output);
     fire: the maximum was reached; once/unseen: no new key; slot set: compare-and-set
     conflict; slot get/list show: empty; search: no hit; redact: something is, or would
     be, redacted
  2  error: bad input, unreadable journal, no such session; nothing was changed
  hook always exits 0 (fail-open); what went wrong is on stderr"
    };
}

pub const EXIT_CODES: &str = exit_codes!();

/// `sjournal --help` ends with the exit codes; without the `remote` feature it says first
/// where that feature's commands are.
#[cfg(not(feature = "remote"))]
const MAIN_AFTER_HELP: &str = concat!(
    "ship, fetch, index and verify --remote (object storage, PostgreSQL) are in the `remote`\n\
     feature, which this build was made without: cargo install --locked --path . --features remote\n\n",
    exit_codes!()
);
#[cfg(feature = "remote")]
const MAIN_AFTER_HELP: &str = EXIT_CODES;

#[derive(Debug, Parser)]
#[command(
    name = "sjournal",
    version = concat!(env!("CARGO_PKG_VERSION"), " (build ", env!("SJOURNAL_BUILD_STAMP"), ")"),
    about = "Durable, checksummed, hash-chained session journals for AI coding agents",
    after_help = MAIN_AFTER_HELP
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
    Doctor(commands::doctor::Args),
    Hook(commands::hook::Args),
    Install(commands::install::Args),
    Uninstall(commands::install::UninstallArgs),
    Inspect(commands::inspect::Args),
    Export(commands::export::Args),
    Import(commands::import::Args),
    Redact(commands::redact::Args),
    Flush(commands::flush::Args),
    Checkpoint(commands::checkpoint::Args),
    Tail(commands::tail::Args),
    Sessions(commands::sessions::Args),
    Replay(commands::replay::Args),
    Repair(commands::repair::Args),
    Erase(commands::erase::Args),
    Migrate(commands::migrate::Args),
    Report(commands::report::Args),
    State(commands::state::Args),
    Show(commands::show::Args),
    Snapshot(commands::snapshot::Args),
    Context(commands::context::Args),
    Slot(commands::slot::Args),
    Once(commands::once::Args),
    Unseen(commands::once::UnseenArgs),
    Fire(commands::fire::Args),
    List(commands::list::Args),
    Webhook(commands::webhook::Args),
    Memory(commands::memory::Args),
    #[cfg(feature = "search")]
    Search(commands::search::Args),
    #[cfg(feature = "search")]
    Mcp(commands::mcp::Args),
    #[cfg(feature = "remote")]
    Ship(commands::ship::Args),
    #[cfg(feature = "remote")]
    Fetch(commands::fetch::Args),
    #[cfg(feature = "remote")]
    Index(commands::index::Args),
    #[cfg(feature = "viewer")]
    Serve(commands::serve::Args),
}

/// What a command ended with.
pub enum Outcome {
    Ok,
    Findings,
}

pub fn run(cli: Cli) -> u8 {
    let result = (|| -> error::Result<Outcome> {
        let root = || Root::resolve(cli.root.as_deref());
        match cli.command {
            Command::Append(a) => Ok(commands::append::run(&root()?, a)?),
            Command::Log(a) => Ok(commands::log::run(&root()?, a)?),
            Command::Verify(a) => Ok(commands::verify::run(&root()?, a)?),
            Command::Demo(a) => Ok(commands::demo::run(a)?),
            Command::Doctor(a) => Ok(commands::doctor::run(&root()?, a)?),
            Command::Hook(a) => commands::hook::run(root(), a, None),
            Command::Install(a) => Ok(commands::install::run(a)?),
            Command::Uninstall(a) => Ok(commands::install::run_uninstall(a)?),
            Command::Inspect(a) => Ok(commands::inspect::run(a)?),
            Command::Export(a) => Ok(commands::export::run(&root()?, a)?),
            Command::Import(a) => Ok(commands::import::run(&root()?, a)?),
            Command::Redact(a) => Ok(commands::redact::run(&root()?, a)?),
            Command::Flush(a) => Ok(commands::flush::run(&root()?, a)?),
            Command::Checkpoint(a) => Ok(commands::checkpoint::run(&root()?, a)?),
            Command::Tail(a) => Ok(commands::tail::run(&root()?, a)?),
            Command::Sessions(a) => Ok(commands::sessions::run(&root()?, a)?),
            Command::Replay(a) => Ok(commands::replay::run(&root()?, a)?),
            Command::Repair(a) => Ok(commands::repair::run(&root()?, a)?),
            Command::Erase(a) => commands::erase::run(&root()?, a),
            Command::Migrate(a) => commands::migrate::run(&root()?, a),
            Command::Report(a) => Ok(commands::report::run(&root()?, a)?),
            Command::State(a) => Ok(commands::state::run(&root()?, a)?),
            Command::Show(a) => Ok(commands::show::run(&root()?, a)?),
            Command::Snapshot(a) => Ok(commands::snapshot::run(&root()?, a)?),
            Command::Context(a) => Ok(commands::context::run(&root()?, a)?),
            Command::Slot(a) => Ok(commands::slot::run(&root()?, a)?),
            Command::Once(a) => Ok(commands::once::run(&root()?, a)?),
            Command::Unseen(a) => Ok(commands::once::run_unseen(&root()?, a)?),
            Command::Fire(a) => Ok(commands::fire::run(&root()?, a)?),
            Command::List(a) => Ok(commands::list::run(&root()?, a)?),
            Command::Webhook(a) => Ok(commands::webhook::run(&root()?, a)?),
            Command::Memory(a) => Ok(commands::memory::run(&root()?, a)?),
            #[cfg(feature = "search")]
            Command::Search(a) => Ok(commands::search::run(&root()?, a)?),
            #[cfg(feature = "search")]
            Command::Mcp(a) => Ok(commands::mcp::run(&root()?, a)?),
            #[cfg(feature = "remote")]
            Command::Ship(a) => Ok(commands::ship::run(&root()?, a)?),
            #[cfg(feature = "remote")]
            Command::Fetch(a) => Ok(commands::fetch::run(a)?),
            #[cfg(feature = "remote")]
            Command::Index(a) => Ok(commands::index::run(a)?),
            #[cfg(feature = "viewer")]
            Command::Serve(a) => Ok(commands::serve::run(&root()?, a)?),
        }
    })();
    match result {
        Ok(Outcome::Ok) => 0,
        Ok(Outcome::Findings) => 1,
        Err(e) if e.lib().is_some_and(output::is_broken_pipe) => 0,
        Err(e) => {
            shared::report_error(&e);
            2
        }
    }
}

/// The commands of the `remote` feature, named as clap names subcommands.
pub const REMOTE_COMMANDS: [&str; 3] = ["ship", "fetch", "index"];

/// The `remote` command a build without that feature was asked for, if that is what `e` is.
fn remote_command(e: &clap::Error) -> Option<&'static str> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if cfg!(feature = "remote") || e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    match e.get(ContextKind::InvalidSubcommand) {
        Some(ContextValue::String(s)) => REMOTE_COMMANDS.into_iter().find(|c| c == s),
        _ => None,
    }
}

/// A command line clap could not parse. Help and version requests print as usual; errors exit
/// 2, except for `hook`, which must fail open (exit 0): a host running a mistyped hook command
/// would otherwise block its action on every event.
pub fn parse_error(e: clap::Error) -> u8 {
    use clap::error::ErrorKind;
    if let Some(name) = remote_command(&e) {
        output::warn(&format!(
            "sjournal: error: `{name}` is a command of the `remote` feature, which this sjournal \
             was built without; build it with `cargo install --locked --path . --features remote` (or \
             try it from a clone: `cargo run --features remote -- {name} --help`)"
        ));
        return 2;
    }
    let is_hook = std::env::args_os().skip(1).any(|a| a == "hook");
    if is_hook && !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        output::warn(&format!("sjournal hook: {}", e.to_string().trim_end()));
        output::warn("sjournal hook: the command line is invalid; the event was not recorded (exit 0, fail-open)");
        return 0;
    }
    e.exit()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every option of every command, by command path, that `--help` shows without a word.
    fn undocumented(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            if a.is_hide_set() || a.get_help().is_some() || a.get_long_help().is_some() {
                continue;
            }
            out.push(format!("{path} --{}", a.get_id()));
        }
        for sub in cmd.get_subcommands() {
            undocumented(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_option_of_every_command_says_what_it_is() {
        let mut out = Vec::new();
        undocumented(&super::Cli::command(), "sjournal", &mut out);
        assert!(out.is_empty(), "options without help: {out:#?}");
    }
}
