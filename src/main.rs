//! The `sjournal` binary. Agent hosts spawn `sjournal hook` on every event of a session, so
//! its start-up is on their path: a command line naming `hook` is read first without clap
//! when it has the form hosts are configured with, else by a clap command that holds the hook
//! alone (see [`lean`]); either costs a fraction of building the whole command tree. Whatever
//! those do not accept as a hook invocation — help, errors, any other command — goes to the
//! full command line, so output, errors and exit codes are those of the full CLI.
//!
//! The process starts at [`start::main`], not at the Rust runtime's `main` (see there).

// Outside tests the C runtime calls `start::main` directly; the test harness has its own.
// Only where std reads the arguments without its own start-up (glibc hands them to an
// initialiser; macOS keeps them): elsewhere (musl, the BSDs) `std::env::args` would be empty,
// and the program starts at an ordinary `main`.
#![cfg_attr(
    all(
        not(test),
        any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple")
    ),
    no_main
)]
// `unsafe` only in `start`: the C entry point and the libc calls that set up the process.
#![deny(unsafe_code)]

mod cli;

use clap::Parser;

/// Where the program starts at an ordinary `main` (see `no_main` above).
#[cfg(not(any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple")))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(run(lean::hook()))
}

/// The program: the exit status of the command line, given what [`lean::hook`] made of it.
#[cfg_attr(test, allow(dead_code))]
fn run(hook: Option<cli::Cli>) -> u8 {
    if let Some(cli) = hook {
        return cli::run(cli);
    }
    match cli::Cli::try_parse() {
        Ok(cli) => cli::run(cli),
        Err(e) => cli::parse_error(e),
    }
}

/// The process's entry point. The Rust runtime's start-up does four things before `main`;
/// this does the two the program needs and skips the two it does not:
///
/// - **Kept:** file descriptors 0-2 that are closed are opened on `/dev/null` (or a file the
///   hook opens would take the number and receive its reply), and SIGPIPE is ignored (a
///   reader that went away is an `EPIPE` error, not a killed hook).
/// - **Skipped:** finding the main thread's stack guard (glibc reads and parses
///   `/proc/self/maps` for it) and an alternate signal stack on every thread, which together
///   only turn a stack overflow's SIGSEGV into a message. The overflow still stops at the
///   guard page.
///
/// That is 18 system calls fewer per hook, and the watchdog thread starts with 5 fewer
/// (BENCHMARKS.md, "Speed mechanisms": C entry point). A hook also asks glibc for one malloc arena:
/// otherwise the watchdog thread's first allocation maps and trims a 128 MiB arena of its
/// own. (Other commands keep glibc's default: `verify` and `--features remote` run threads
/// that allocate.) A panic on the main thread is reported as `thread '<unnamed>'`, not
/// `'main'`: naming the main thread is part of the skipped start-up.
#[cfg(all(
    not(test),
    any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple")
))]
#[allow(unsafe_code)]
mod start {
    use std::ffi::{c_char, c_int};

    #[no_mangle]
    extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
        standard_fds_open();
        // SAFETY: setting a signal's disposition to SIG_IGN, before any other thread exists.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        // A panic must not unwind into the C runtime: report it as the runtime would (the
        // panic hook has printed it) and exit 101.
        let code = std::panic::catch_unwind(|| {
            let hook = super::lean::hook();
            #[cfg(target_env = "gnu")]
            if hook.is_some() {
                // SAFETY: a malloc tunable, set before any other thread exists.
                unsafe {
                    libc::mallopt(libc::M_ARENA_MAX, 1);
                }
            }
            super::run(hook)
        })
        .unwrap_or(101);
        // `process::exit` runs the Rust runtime's clean-up (stdout flushed, as at the end of
        // an ordinary `main`), then the C library's `exit`.
        std::process::exit(c_int::from(code))
    }

    /// Opens `/dev/null` on each of fds 0-2 that is closed, as the Rust runtime does; aborts
    /// if that fails, as it does.
    fn standard_fds_open() {
        let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        });
        // SAFETY: `fds` is a valid array of 3 pollfd for the duration of the call.
        let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) };
        for pfd in fds {
            // poll failing (EINTR, ENOMEM, ...) leaves revents 0: then ask each fd by fcntl.
            let closed = match polled {
                -1 => {
                    // SAFETY: F_GETFD on any integer is defined; it fails with EBADF.
                    let r = unsafe { libc::fcntl(pfd.fd, libc::F_GETFD) };
                    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
                }
                _ => pfd.revents & libc::POLLNVAL != 0,
            };
            if closed {
                // SAFETY: a NUL-terminated path; the new fd is the lowest free one, `pfd.fd`.
                let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
                if fd != pfd.fd {
                    std::process::abort();
                }
            }
        }
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
    #[cfg_attr(test, allow(dead_code))]
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
        if let Some(cli) = common(&args) {
            return Some(cli);
        }
        let parsed = HookOnly::try_parse_from(args).ok()?;
        let HookCommand::Hook(a) = parsed.command;
        Some(Cli {
            root: parsed.root,
            command: Command::Hook(a),
        })
    }

    /// The command lines hosts are configured with — `[--root DIR] hook [--host HOST]
    /// [--deadline-ms MS] [HOST]`, each option at most once, `--opt value` or `--opt=value` —
    /// read without clap; None for anything else (a value that is empty or starts with `-`,
    /// a repeated option, a second word, `--`, help, ...), which then goes to clap. Building
    /// even the hook-only clap command is about a tenth of the hook's instructions and a
    /// dozen pages of code to fault in (BENCHMARKS.md, "Speed mechanisms": hook line without
    /// clap). The tests
    /// check that whatever this accepts, the full CLI parses to the same.
    fn common(args: &[OsString]) -> Option<Cli> {
        let (mut root, mut host, mut deadline_ms) = (None, None, None);
        let mut rest: Vec<String> = Vec::new();
        let mut in_hook = false;
        let mut words = args.iter().skip(1).map(|a| a.to_str());
        while let Some(word) = words.next() {
            let word = word?;
            if !rest.is_empty() {
                return None;
            }
            if word == "hook" && !in_hook {
                in_hook = true;
                continue;
            }
            if in_hook && !word.starts_with('-') {
                rest.push(word.to_owned());
                continue;
            }
            let (name, inline) = match word.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (word, None),
            };
            let slot = match name {
                "--root" => &mut root,
                "--host" if in_hook => &mut host,
                "--deadline-ms" if in_hook => &mut deadline_ms,
                _ => return None,
            };
            let value = match inline {
                Some(v) => v,
                None => words.next()??,
            };
            if slot.is_some() || value.is_empty() || value.starts_with('-') {
                return None;
            }
            *slot = Some(value.to_owned());
        }
        in_hook.then(|| Cli {
            root: root.map(PathBuf::from),
            command: Command::Hook(Args {
                host: host.unwrap_or_else(|| "auto".to_owned()),
                deadline_ms,
                rest,
            }),
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
                if let Some(fast) = common(&os(line)) {
                    assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{line:?}");
                }
            }
        }

        #[test]
        fn the_command_lines_hosts_are_configured_with_are_read_without_clap() {
            let lines: &[&[&str]] = &[
                &["hook"],
                &["hook", "--host", "claude"],
                &["hook", "--host=gemini"],
                &[
                    "--root",
                    "r",
                    "hook",
                    "--host",
                    "codex",
                    "--deadline-ms",
                    "900",
                ],
                &["--root=r", "hook", "--deadline-ms=900"],
                &["hook", "--root", "r", "--host", "cline"],
                &["hook", "claude"],
                &["hook", "--host", "openclaw", "pi"],
                &["--root", "hook", "hook"],
                &["hook", "hook"],
            ];
            for line in lines {
                let fast = common(&os(line)).unwrap_or_else(|| panic!("declines {line:?}"));
                let full = Cli::try_parse_from(os(line)).unwrap();
                assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{line:?}");
            }
        }

        proptest::proptest! {
            #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
            /// Any line of these words (most of them valid, so that many lines are accepted):
            /// what the clap-free reader accepts, the full CLI parses to the same.
            #[test]
            fn what_is_read_without_clap_is_what_clap_reads(
                words in proptest::collection::vec(proptest::sample::select(vec![
                    "hook", "hook", "hook", "--root", "--root=r", "r", "--host", "--host",
                    "--host=codex", "claude", "--deadline-ms", "--deadline-ms=5", "900", "-5",
                    "--", "-h", "--bogus", "", "--host=", "x=y", "log", "=", "--root=",
                ]), 0..7)
            ) {
                if let Some(fast) = common(&os(&words)) {
                    let full = Cli::try_parse_from(os(&words));
                    proptest::prop_assert!(full.is_ok(), "{words:?}: {:?}", full.err());
                    proptest::prop_assert_eq!(format!("{fast:?}"), format!("{:?}", full.unwrap()));
                }
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
