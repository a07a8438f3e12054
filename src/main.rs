//! The `sjournal` binary. Agent hosts spawn `sjournal hook` on every event of a session, so
//! its start-up is on their path: a command line naming `hook` is parsed first by a clap
//! command that holds the hook alone (see [`lean`]), which costs a fraction of building the
//! whole command tree. Whatever that parser does not accept as a hook invocation — help,
//! errors, any other command — goes to the full command line, so output, errors and exit
//! codes are those of the full CLI.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    if let Some(cli) = lean::hook() {
        return cli::run(cli);
    }
    match cli::Cli::try_parse() {
        Ok(cli) => cli::run(cli),
        Err(e) => cli::parse_error(e),
    }
}

/// The hook's own command line: the global `--root` and the `hook` subcommand with exactly
/// the hook's arguments (the same `Args` struct as the full CLI's). Only a successful parse is
/// used; it yields the same [`cli::Cli`] the full parser would.
mod lean {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use crate::cli::commands::hook::Args;
    use crate::cli::{Cli, Command};
    use clap::{Parser, Subcommand};

    #[derive(Debug, Parser)]
    #[command(name = "sjournal")]
    struct HookOnly {
        /// Must be declared exactly as `Cli::root` (global, a path).
        #[arg(long, global = true, value_name = "DIR")]
        root: Option<PathBuf>,
        #[command(subcommand)]
        command: HookCommand,
    }

    #[derive(Debug, Subcommand)]
    enum HookCommand {
        Hook(Args),
    }

    /// The command line of this process as a hook invocation, if it is one.
    pub fn hook() -> Option<Cli> {
        hook_from(std::env::args_os())
    }

    /// `args` (with the program name first) as a hook invocation: None unless some argument
    /// is `hook` and the hook-only parser accepts the whole line.
    pub fn hook_from(args: impl IntoIterator<Item = OsString>) -> Option<Cli> {
        let args: Vec<OsString> = args.into_iter().collect();
        if !args.iter().skip(1).any(|a| a == "hook") {
            return None;
        }
        let parsed = HookOnly::try_parse_from(args).ok()?;
        let HookCommand::Hook(a) = parsed.command;
        Some(Cli {
            root: parsed.root,
            command: Command::Hook(a),
        })
    }

    #[cfg(test)]
    mod tests {
        //! The lean parser against the full one: for every form of the hook's command line a
        //! host or a user might write, the lean parser either declines (and the full CLI
        //! answers) or yields exactly what the full parser yields; and everything the full
        //! parser accepts as a hook invocation, the lean one accepts too (so the hook really
        //! takes the fast path).
        use super::*;
        use clap::CommandFactory;

        fn os(args: &[&str]) -> Vec<OsString> {
            std::iter::once("sjournal")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect()
        }

        #[test]
        fn the_hook_only_command_is_well_formed() {
            HookOnly::command().debug_assert();
        }

        #[test]
        fn every_hook_command_line_parses_the_same_through_both_paths() {
            let lines: &[&[&str]] = &[
                &["hook"],
                &["--root", "r", "hook"],
                &["--root=r", "hook"],
                &["hook", "--root", "r"],
                &["hook", "--root=r", "--host", "codex"],
                &["hook", "--host", "claude"],
                &["hook", "--host=gemini"],
                &["hook", "--host", "nonsense"],
                &["hook", "--deadline-ms", "900"],
                &["hook", "--deadline-ms=900"],
                &["hook", "--deadline-ms", "zero"],
                &["hook", "--deadline-ms", "-5"],
                &[
                    "--root",
                    "r",
                    "hook",
                    "--host",
                    "cursor",
                    "--deadline-ms",
                    "10",
                ],
                &["hook", "claude"],
                &["hook", "cline", "extra", "words"],
                &["hook", "claude", "--unknown", "x"],
                &["hook", "--bogus"],
                &["hook", "--host", "auto", "openclaw"],
                &["hook", "--", "claude"],
                &["hook", "hook"],
                &["--root", "hook", "hook"],
            ];
            for line in lines {
                let full = Cli::try_parse_from(os(line))
                    .unwrap_or_else(|e| panic!("the full CLI rejects {line:?}: {e}"));
                let lean = hook_from(os(line))
                    .unwrap_or_else(|| panic!("the lean parser declines {line:?}"));
                assert_eq!(format!("{lean:?}"), format!("{full:?}"), "{line:?}");
            }
        }

        #[test]
        fn what_the_full_cli_rejects_or_answers_itself_the_lean_parser_declines() {
            let lines: &[&[&str]] = &[
                &["hook", "--help"],
                &["hook", "-h"],
                &["help", "hook"],
                &["--help", "hook"],
                &["--version", "hook"],
                &["hook", "--deadline-ms"],
                &["hook", "--host"],
                &["hook", "--root"],
                &["log", "hook"],
                &["append", "--session", "hook"],
                &["hooks"],
                &[],
            ];
            for line in lines {
                assert!(hook_from(os(line)).is_none(), "{line:?}");
                let full = Cli::try_parse_from(os(line));
                assert!(
                    !matches!(
                        &full,
                        Ok(Cli {
                            command: Command::Hook(_),
                            ..
                        })
                    ),
                    "the full CLI runs the hook for {line:?}, the lean parser does not"
                );
            }
        }
    }
}
