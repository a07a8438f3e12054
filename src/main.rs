//! The `sjournal` binary. Agent hosts spawn `sjournal hook` on every event of a session, so
//! its start-up is on their path: the lines hosts are configured with are read without clap
//! ([`cli::lean`]); everything else goes to the full command line ([`cli::Cli`]).
//!
//! The process starts at `start::main` (src/start.rs: the C entry point and every `unsafe`
//! of the binary), not at the Rust runtime's `main`.

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
#[cfg(all(
    not(test),
    any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple")
))]
mod start;

use clap::Parser;

/// Where the program starts at an ordinary `main` (see `no_main` above).
#[cfg(not(any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple")))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(run(cli::lean::hook()))
}

/// The program: the exit status of the command line, given what [`cli::lean::hook`] made of it.
#[cfg_attr(test, allow(dead_code))]
fn run(hook: Option<cli::lean::Line>) -> u8 {
    if let Some(line) = hook {
        return cli::run(cli::Cli {
            root: line.root,
            command: cli::Command::Hook(line.args),
        });
    }
    match cli::Cli::try_parse() {
        Ok(cli) => cli::run(cli),
        Err(e) => cli::parse_error(e),
    }
}
