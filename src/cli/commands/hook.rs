//! `sjournal hook [--host auto|claude|codex|gemini|cursor|cline|openclaw] [--deadline-ms 250]`: what
//! agent hosts run on every event (see `sjournal::hook`). It always exits 0: a hook that exits 2
//! would block the host's action (Claude Code erases the user's prompt on UserPromptSubmit).
//! Stdout carries only the host's JSON; everything else goes to stderr, which hosts keep in
//! their debug logs.

use std::sync::Arc;
use std::time::Duration;

use crate::cli::output;
use sjournal::config::Config;
use sjournal::error::Result;
use sjournal::hook::{self, HookOptions, HookOutcome};
use sjournal::host::HostFlag;
use sjournal::journal::Root;
use sjournal::storage::RealFs;

/// The hook-only binary's name: `sjournal install` points hosts at it when it sits beside
/// `sjournal` and comes from the same build ([`HOOK_BINARY_VERSION`]).
pub const HOOK_BINARY: &str = "sjournal-hook";

/// What `sjournal-hook --version` prints: its name, the version and the build's stamp (a
/// hash of the sources: build.rs).
pub const HOOK_BINARY_VERSION: &str = concat!(
    "sjournal-hook ",
    env!("CARGO_PKG_VERSION"),
    " (build ",
    env!("SJOURNAL_BUILD_STAMP"),
    ")"
);

/// Record a host's hook event from stdin and print the context to inject (run by agent hosts)
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Always exits 0 (fail-open). Configuration: <root>/config.toml (hook defaults, exec and webhook
handlers, input_timeout_ms, fallback_spool_dir, [remote]; examples in the README).

What is kept, and when it is durable. The event is reported kept only once it is synced in the
first place that takes it: the session's journal; its rescue journal (the journal is damaged);
the root's spool <root>/sessions/<stem>.spool/ (the lock is held past the deadline, the write
failed, older spooled events wait); the fallback spool outside the root (fallback_spool_dir,
else $XDG_RUNTIME_DIR/sjournal/fallback, else <tmp>/sjournal-<uid>/fallback), LESS DURABLE
(often a tmpfs), when the root cannot take a file (full, read-only, unwritable, symlinked).
Spooled events are merged, in order, by the next writer, any read command, or `sjournal flush`.
Once stdin starts arriving it is read until the event is complete (end of input, or one whole
JSON object with nothing more waiting), for up to input_timeout_ms (10 s), whatever the
deadline; input cut off by that limit, or longer than 16 MiB - 4 KiB, is kept in part and the
record says so. The user is told through the host (systemMessage; Cursor user_message; Cline
errorMessage) whenever an event is not stored durably in the root, was cut, or was lost. It is
lost only if neither the root nor the fallback spool can take it, if there is no root ($HOME
unset and no --root), or if the host kills the hook before its write completes.

Timing. The deadline is the hook's budget for its own work, counted from when its input was
complete: a payload that arrives late gets the same work and the same reply (context included)
as one that was waiting. No wait on the hook's path outlasts it: the session's lock, the
journal's high-water mark, the rescue journal, snapshots, the scope (memory) journals, webhook
state; past it the event is spooled, and memory's write after the reply is spooled too. The
host waits for the reply as long as its own hook timeout, from when it started the hook:
Claude Code, Codex and Gemini CLI as `sjournal install` sets it (5 s; 10 s for SessionStart,
PreCompact, PostCompact and Stop; Codex SessionEnd 3 s), the OpenCode, Pi and OpenClaw bridges
10 s, Cline and unknown hosts 3 s. Only input that completes so close to that timeout that the
work could not end before it is late: it is journaled at once, without exec handlers or context,
and the reply carries only a notice the user must see.")]
pub struct Args {
    /// Host protocol: auto, claude, codex, gemini, cursor, cline, opencode, pi or openclaw
    #[arg(long, value_name = "HOST", default_value = "auto")]
    pub host: String,
    /// The hook's budget for its work, in milliseconds from when its input was complete
    /// [default: config hook.deadline_ms, else 250]
    #[arg(long, value_name = "MS")]
    pub deadline_ms: Option<String>,
    /// The host as a positional word (`sjournal hook claude`); other words are ignored
    #[arg(
        value_name = "HOST",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        hide = true
    )]
    pub rest: Vec<String>,
}

/// Runs the hook and exits 0, whatever happens. `program`: the `sjournal` the hook's detached
/// work runs (None: this executable).
pub fn run(root: Result<Root>, args: Args, program: Option<std::path::PathBuf>) -> ! {
    let mut diag: Vec<String> = Vec::new();
    let positional = args.rest.first().filter(|w| !w.starts_with('-'));
    let ignored: Vec<&String> = args
        .rest
        .iter()
        .skip(positional.is_some() as usize)
        .collect();
    if !ignored.is_empty() {
        diag.push(format!("ignoring unknown arguments {ignored:?}"));
    }
    let host_word = positional
        .filter(|_| args.host == "auto")
        .cloned()
        .unwrap_or(args.host);
    let host = host_word.parse::<HostFlag>().unwrap_or_else(|e| {
        diag.push(format!("{e}; detecting the host from the payload"));
        HostFlag::Auto
    });
    // The configuration says the deadline. It is read here, before the watchdog starts: it
    // is opened without blocking and only as a regular file (`Config::load`). An `open` that
    // hangs (a dead mount under the root) hangs the hook here, with no watchdog yet; a hung
    // root would hang the event's write, and the watchdog's spool in the same root, anyway.
    // Without a root the event is still read, to tell the user through the host that it is
    // lost.
    let (root, config) = match root {
        Ok(r) => {
            let config = Config::load(&r).unwrap_or_else(|e| {
                diag.push(e.to_string());
                Config::default()
            });
            (Ok(r), config)
        }
        Err(e) => (Err(e.to_string()), Config::default()),
    };
    let deadline_ms = match args.deadline_ms.as_deref().map(str::parse::<u64>) {
        Some(Ok(ms)) if ms > 0 => ms,
        Some(_) => {
            diag.push(format!(
                "--deadline-ms needs a positive number of milliseconds; using {}",
                config.hook.deadline_ms
            ));
            config.hook.deadline_ms
        }
        None => config.hook.deadline_ms,
    };
    if cfg!(not(feature = "remote")) && config.remote.ship_on_session_end {
        diag.push(
            "[remote] ship_on_session_end is set, but this sjournal was built without the \
             `remote` feature: nothing is shipped (install with --features remote)"
                .into(),
        );
    }
    let opts = HookOptions {
        root,
        host,
        deadline: Duration::from_millis(deadline_ms),
        config,
        env_session_id: std::env::var("CLAUDE_CODE_SESSION_ID").ok(),
        env_project_dir: std::env::var("CLAUDE_PROJECT_DIR").ok(),
        input_ready: Some(hook::InputReady(Arc::new(hook::read::stdin_ready))),
        fs: Arc::new(RealFs),
        checkpoints: None,
        program,
    };
    hook::run(opts, std::io::stdin(), Print { diag })
}

/// The binary's [`hook::Deliver`]: the reply on stdout, then (once the work after the reply
/// is done) the diagnostics on stderr, and exit 0 whatever happens (a panic while printing
/// would otherwise end the process with 101, and on the watchdog's thread not end it at all).
struct Print {
    /// The command line's own diagnostics, printed first.
    diag: Vec<String>,
}

impl hook::Deliver for Print {
    fn reply(&mut self, stdout: Option<&str>) {
        let Some(s) = stdout else { return };
        let _ = std::panic::catch_unwind(|| {
            use std::io::Write;
            let mut o = std::io::stdout().lock();
            // One write of the whole reply; a closed stdout is the host's business.
            let _ = o.write_all(format!("{s}\n").as_bytes());
            let _ = o.flush();
        });
    }

    fn finish(self: Box<Self>, out: HookOutcome) -> ! {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            print_diag(&self.diag);
            print_diag(&out.diagnostics);
        }));
        std::process::exit(0)
    }
}

fn print_diag(diag: &[String]) {
    for d in diag {
        output::warn(&format!("sjournal hook: {d}"));
    }
}
