//! `sjournal hook [--host auto|claude|codex|gemini|cursor|cline|openclaw] [--deadline-ms 250]`: what
//! agent hosts run on every event (see `crate::hook`). It always exits 0: a hook that exits 2
//! would block the host's action (Claude Code erases the user's prompt on UserPromptSubmit).
//! Stdout carries only the host's JSON; everything else goes to stderr, which hosts keep in
//! their debug logs.

use std::sync::Arc;
use std::time::Duration;

use crate::cli::output;
use crate::cli::Outcome;
use crate::error::Result;
use crate::hook::config::Config;
use crate::hook::context_bridge::FoldContext;
use crate::hook::protocol::HostFlag;
use crate::hook::{self, HookOptions};
use crate::journal::Root;
use crate::limits::HOOK_DEADLINE_MS_DEFAULT;

/// Record a host's hook event from stdin and print the context to inject (run by agent hosts)
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Always exits 0 (fail-open). Configuration: <root>/config.toml (hook defaults, exec and webhook handlers; examples in the README).
The event is never lost: if the journal cannot take it within the deadline it is spooled
durably and merged by the next append.")]
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
    // The configuration says the deadline, so reading it is bounded by the flag's deadline
    // (else the default): half of it at most, so a blocked read cannot hang the hook.
    let flag_ms = args
        .deadline_ms
        .as_deref()
        .and_then(|d| d.parse::<u64>().ok());
    let read_within = Duration::from_millis(flag_ms.unwrap_or(HOOK_DEADLINE_MS_DEFAULT).max(2) / 2);
    let config = Config::load_within(&root, read_within).unwrap_or_else(|e| {
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
        root,
        host,
        deadline: Duration::from_millis(deadline_ms),
        config,
        env_session_id: std::env::var("CLAUDE_CODE_SESSION_ID").ok(),
        input_ready: Some(hook::InputReady(Arc::new(hook::input::stdin_ready))),
        checkpoints: None,
    };
    // Shipping at session end (`[remote] ship_on_session_end`) needs to see the event after
    // the hook is done with it: keep a copy of stdin only then.
    let ship = ShipAfter::new(&opts);
    if cfg!(not(feature = "remote")) && opts.config.remote.ship_on_session_end {
        diag.push(
            "[remote] ship_on_session_end is set, but this sjournal was built without the \
             `remote` feature: nothing is shipped (install with --features remote)"
                .into(),
        );
    }
    let out = match &ship {
        Some(s) => hook::run(opts.clone(), s.tee(), Arc::new(FoldContext)),
        None => hook::run(opts.clone(), std::io::stdin(), Arc::new(FoldContext)),
    };
    diag.extend(out.diagnostics);
    if let Some(s) = out.stdout {
        use std::io::Write;
        let mut o = std::io::stdout().lock();
        // One write of the whole reply; a closed stdout is the host's business.
        let _ = o.write_all(format!("{s}\n").as_bytes());
        let _ = o.flush();
    }
    if let (Some(s), Some(_)) = (&ship, &out.landed) {
        diag.extend(s.spawn(&opts));
    }
    print_diag(&diag);
    Ok(Outcome::Ok)
}

/// A copy of the hook's stdin, to start `sjournal ship` after a session's end.
struct ShipAfter(Arc<std::sync::Mutex<Vec<u8>>>);

#[cfg(feature = "remote")]
impl ShipAfter {
    fn new(opts: &HookOptions) -> Option<ShipAfter> {
        let r = &opts.config.remote;
        (r.ship_on_session_end && r.to.is_some()).then(|| ShipAfter(Default::default()))
    }

    fn tee(&self) -> Tee {
        Tee(std::io::stdin(), self.0.clone())
    }

    fn spawn(&self, opts: &HookOptions) -> Option<String> {
        let raw = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        let over = raw.len() > crate::limits::INPUT_MAX_BYTES;
        let env = |k: &str| {
            (k == "CLAUDE_CODE_SESSION_ID")
                .then(|| opts.env_session_id.clone())
                .flatten()
        };
        let c = hook::input::capture(raw, over, opts.host, &env, &mut Vec::new());
        crate::remote::spawn::after_event(&opts.root, &opts.config, &c)
    }
}

#[cfg(not(feature = "remote"))]
impl ShipAfter {
    fn new(opts: &HookOptions) -> Option<ShipAfter> {
        let _ = opts;
        None
    }

    fn tee(&self) -> Tee {
        Tee(std::io::stdin(), self.0.clone())
    }

    fn spawn(&self, _: &HookOptions) -> Option<String> {
        None
    }
}

/// Stdin, copied as it is read (at most the hook's input limit).
struct Tee(std::io::Stdin, Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        let mut copy = self.1.lock().unwrap_or_else(|p| p.into_inner());
        if copy.len() <= crate::limits::INPUT_MAX_BYTES {
            copy.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

fn print_diag(diag: &[String]) {
    for d in diag {
        output::warn(&format!("sjournal hook: {d}"));
    }
}
