//! `sjournal hook [--host auto|claude|codex|gemini|cursor|cline|openclaw] [--deadline-ms 250]`: what
//! agent hosts run on every event (see `sjournal::hook`). It always exits 0: a hook that exits 2
//! would block the host's action (Claude Code erases the user's prompt on UserPromptSubmit).
//! Stdout carries only the host's JSON; everything else goes to stderr, which hosts keep in
//! their debug logs.

use std::sync::Arc;
use std::time::Duration;

use crate::cli::output;
use crate::cli::Outcome;
use sjournal::error::Result;
use sjournal::hook::config::Config;
use sjournal::hook::protocol::HostFlag;
use sjournal::hook::{self, HookOptions};
use sjournal::journal::Root;

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
Once stdin starts arriving it is read to its end (up to input_timeout_ms, 10 s), whatever the
deadline; input cut off by that limit, or longer than 16 MiB - 4 KiB, is kept in part and the
record says so. The user is told through the host (systemMessage; Cursor user_message; Cline
errorMessage) whenever an event is not stored durably in the root, was cut, or was lost. It is
lost only if neither the root nor the fallback spool can take it, or if the host kills the hook
before its write completes.")]
pub struct Args {
    /// Host protocol: auto, claude, codex, gemini, cursor, cline or openclaw
    #[arg(long, value_name = "HOST", default_value = "auto")]
    pub host: String,
    /// Answer within this many milliseconds [default: config hook.deadline_ms, else 250]
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

pub fn run(root: Result<Root>, args: Args) -> Result<Outcome> {
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
    let root = match root {
        Ok(r) => r,
        Err(e) => {
            print_diag(&diag);
            output::warn(&format!("sjournal hook: {e}; the event was not recorded"));
            return Ok(Outcome::Ok);
        }
    };
    // The configuration says the deadline. It is read here, before the watchdog starts: it
    // is opened without blocking and only as a regular file (`Config::load`). An `open` that
    // hangs (a dead mount under the root) hangs the hook here, with no watchdog yet; a hung
    // root would hang the event's write, and the watchdog's spool in the same root, anyway.
    let config = Config::load(&root).unwrap_or_else(|e| {
        diag.push(e.to_string());
        Config::default()
    });
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
    let opts = HookOptions {
        env_session_id: std::env::var("CLAUDE_CODE_SESSION_ID").ok(),
        env_project_dir: std::env::var("CLAUDE_PROJECT_DIR").ok(),
        input_ready: Some(hook::InputReady(Arc::new(hook::input::stdin_ready))),
        ..HookOptions::new(root, host, Duration::from_millis(deadline_ms), config)
    };
    if cfg!(not(feature = "remote")) && opts.config.remote.ship_on_session_end {
        diag.push(
            "[remote] ship_on_session_end is set, but this sjournal was built without the \
             `remote` feature: nothing is shipped (install with --features remote)"
                .into(),
        );
    }
    let (root, config) = (opts.root.clone(), opts.config.clone());
    let project_dir = opts.env_project_dir.clone();
    let deliver = Box::new(move |out: hook::HookOutcome| -> std::convert::Infallible {
        // Exit 0 whatever happens after the reply (a panic in memory's write would otherwise
        // end the process with 101, and on the watchdog's thread not end it at all).
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            deliver(out, diag, &root, &config, project_dir.as_deref())
        }));
        std::process::exit(0)
    });
    hook::run_then_exit(opts, std::io::stdin(), deliver)
}

/// Prints the reply, then does what comes after it, then the diagnostics.
fn deliver(
    mut out: hook::HookOutcome,
    mut diag: Vec<String>,
    root: &Root,
    config: &Config,
    project_dir: Option<&str>,
) {
    diag.extend(std::mem::take(&mut out.diagnostics));
    if let Some(s) = &out.stdout {
        use std::io::Write;
        let mut o = std::io::stdout().lock();
        // One write of the whole reply; a closed stdout is the host's business.
        let _ = o.write_all(format!("{s}\n").as_bytes());
        let _ = o.flush();
    }
    // After the reply: a snapshot only saves later loads time, so it is not written inside
    // the deadline or under the session's lock.
    if let Some(job) = out.snapshot.take() {
        if let Err(e) = job.run() {
            diag.push(format!("writing the snapshot failed: {e} (only a cache)"));
        }
    }
    // Memory: this session started, its standing instructions proposed, "remember: …"
    // accepted (the project journal, after the reply; see `sjournal::memory::hook`).
    if let (Some(cap), Some(_)) = (&out.captured, &out.landed) {
        if let Err(e) = memory_after(
            root,
            config,
            cap,
            (out.memory.take(), out.memory_planned),
            project_dir,
        ) {
            diag.push(format!(
                "writing to the project's memory journal failed: {e}"
            ));
        }
    }
    // Shipping at session end (`[remote] ship_on_session_end`), once the event is kept.
    if let (Some(cap), Some(_)) = (&out.captured, &out.landed) {
        diag.extend(ship_after(root, config, cap));
    }
    print_diag(&diag);
}

/// Starts the detached `sjournal ship` if the configuration asks for it and the event ends
/// its session (see `sjournal::remote::spawn`).
#[cfg(feature = "remote")]
fn ship_after(root: &Root, config: &Config, cap: &hook::input::Captured) -> Option<String> {
    sjournal::remote::spawn::after_event(root, config, cap)
}

#[cfg(not(feature = "remote"))]
fn ship_after(_: &Root, _: &Config, _: &hook::input::Captured) -> Option<String> {
    None
}

/// The worker hands over what memory planned, with the session's state as the commit folded
/// it; when the watchdog took the event over, the event is parsed here instead.
fn memory_after(
    root: &Root,
    config: &Config,
    cap: &hook::input::Captured,
    (planned, was_planned): (Option<sjournal::memory::hook::AfterReply>, bool),
    project_dir: Option<&str>,
) -> Result<()> {
    let (job, state) = match planned {
        Some(p) => (p.job, p.state),
        // Planned, and nothing to write.
        None if was_planned => return Ok(()),
        None => {
            let Some(raw) = cap.raw_json.as_deref() else {
                return Ok(());
            };
            if !sjournal::memory::hook::may_concern(cap.event.as_deref()) {
                return Ok(());
            }
            let dir = project_dir.map(std::path::Path::new);
            let plan =
                sjournal::memory::hook::plan_json(root, &cap.kind, raw, &cap.session_id, dir, None);
            match plan.after {
                Some(job) => (job, None),
                None => return Ok(()),
            }
        }
    };
    sjournal::memory::hook::after(root, &job, state.as_ref(), &config.writer_options())
}

fn print_diag(diag: &[String]) {
    for d in diag {
        output::warn(&format!("sjournal hook: {d}"));
    }
}
