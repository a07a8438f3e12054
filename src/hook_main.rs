//! The `sjournal-hook` binary: `sjournal hook` alone, for the lines agent hosts run on every
//! event. It links the hook's code and none of the commands it never runs (search and the
//! MCP server above all), so the image a host starts on every event is the lean one: fewer
//! pages to fault in, fewer pointers to relocate (BENCHMARKS.md, "Speed mechanisms": hook
//! binary). `sjournal install` points hosts at it when it sits beside `sjournal` from the
//! same build.
//!
//! It reads the lines hosts are configured with without clap ([`cli::lean`]), and any other
//! valid hook line with a clap parser of the hook's command alone, and runs them as `sjournal
//! hook` would: a hook line never needs another program. Anything else (help, an invalid
//! line, another command) is handed to the `sjournal` beside it, by `exec`, so output, errors
//! and exit codes are the full CLI's; so is the detached work the hook starts after its reply.
//! That `sjournal` is never one another user could have planted or changed
//! (`storage::check_program_trusted`), nor this binary itself under another name. Only
//! `--version` is its own: the build stamp install compares.

// As in main.rs: the C runtime calls `start::main` where std reads the arguments itself.
// Its tests are `sjournal`'s (the same files); under `cargo test` this crate is empty.
#![cfg_attr(
    all(
        not(test),
        any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple")
    ),
    no_main
)]
#![deny(unsafe_code)]
#![cfg_attr(test, allow(unused))]

/// The parts of the command line this binary shares with `sjournal` (same files).
#[cfg(not(test))]
mod cli {
    pub mod lean;
    #[allow(dead_code)]
    pub mod output;
    pub mod commands {
        pub mod hook;
    }
}
#[cfg(all(
    not(test),
    any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple")
))]
mod start;

#[cfg(not(test))]
use cli::commands::hook::{self, HOOK_BINARY, HOOK_BINARY_VERSION};
use sjournal::journal::Root;
use std::ffi::OsString;

/// Where the program starts at an ordinary `main` (see `no_main` above).
#[cfg(all(
    not(test),
    not(any(all(target_os = "linux", target_env = "gnu"), target_vendor = "apple"))
))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(run(cli::lean::hook()))
}

/// A hook's command line as `sjournal`'s clap parser reads it, for the hook alone.
#[cfg(not(test))]
#[derive(clap::Parser)]
#[command(name = "sjournal")]
struct HookLine {
    #[arg(long, global = true)]
    root: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: HookCommand,
}

#[cfg(not(test))]
#[derive(clap::Subcommand)]
enum HookCommand {
    Hook(hook::Args),
}

/// The program: a hook line runs here; anything else is `sjournal`'s.
#[cfg(not(test))]
fn run(line: Option<cli::lean::Line>) -> u8 {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let line = line.or_else(|| {
        use clap::Parser;
        let HookLine { root, command } = HookLine::try_parse().ok()?;
        let HookCommand::Hook(args) = command;
        Some(cli::lean::Line { root, args })
    });
    if let Some(line) = line {
        // The detached work's program: one `readlink` here; it is checked where it is run
        // (`storage::worker_program`), and a `sjournal` that is this binary again refuses
        // to hand a line over (`full_cli`).
        let beside = std::env::current_exe()
            .ok()
            .map(|exe| exe.with_file_name("sjournal"));
        hook::run(Root::resolve(line.root.as_deref()), line.args, beside);
    }
    if matches!(args.as_slice(), [a] if a == "--version" || a == "-V") {
        println!("{HOOK_BINARY_VERSION}");
        return 0;
    }
    full_cli(&args)
}

/// The `sjournal` beside this binary, unless it is this binary itself (then handing a command
/// line over would run it again, and again).
#[cfg(not(test))]
fn full_program() -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let exe = std::env::current_exe().ok()?;
    let full = exe.with_file_name("sjournal");
    let id = |p: &std::path::Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    match (id(&exe), id(&full)) {
        (Some(a), Some(b)) if a == b => None,
        _ => Some(full),
    }
}

/// Replaces this process with the `sjournal` beside it, given the same arguments. Returns
/// only if that cannot start: then it says so, and exits 0 for a hook line (fail-open: the
/// host must not be blocked; the event is not recorded) and 2 for anything else.
#[cfg(not(test))]
fn full_cli(args: &[OsString]) -> u8 {
    use std::os::unix::process::CommandExt;
    let full = full_program();
    let err = match &full {
        // Never a program another user could have planted or changed.
        Some(path) => match sjournal::storage::check_program_trusted(path) {
            Ok(()) => std::process::Command::new(path).args(args).exec(),
            Err(why) => std::io::Error::other(why),
        },
        None => std::io::Error::other(
            "it is this binary itself (or this executable cannot be found); running it would \
             hand the command line over again",
        ),
    };
    let path = full.map_or_else(|| "sjournal".into(), |p| p.display().to_string());
    let is_hook = args.iter().any(|a| a == "hook");
    let what = if is_hook {
        "; the event was not recorded (exit 0, fail-open)"
    } else {
        ""
    };
    cli::output::warn(&format!(
        "{HOOK_BINARY}: this command line is the full sjournal's, which could not be started \
         ({path}: {err}){what}; install both binaries (`cargo install --locked --path .`), or point the \
         host at `sjournal hook` (`sjournal install HOST`)"
    ));
    if is_hook {
        0
    } else {
        2
    }
}
