//! `sjournal hook`: what an agent host runs on every event. It reads the event from stdin,
//! makes it durable (journal, else rescue journal, else spool), and returns the exact stdout
//! the host expects (the session's context for the events that take it), all within a
//! deadline, failing open: whatever happens, the caller exits 0 and prints either a complete
//! reply or nothing.
//!
//! The work runs on a worker thread; the calling thread is the watchdog. At the deadline, if
//! the worker has the event but has not started writing it (it is still waiting for the lock,
//! or folding), the watchdog takes the event over and spools it itself; the worker, which
//! must claim the event right before its one write, then writes nothing. If the worker is
//! already writing, the watchdog waits a short grace for that write. A panic in the worker is
//! caught and treated like any other failure. If stdin is still being read at the deadline
//! the watchdog waits a further grace for it (hosts close stdin at once; a late read is a
//! starved thread) and then takes the event over. The library never prints: [`run`] returns
//! stdout and the diagnostics (for stderr).
//!
//! The context comes from a [`ContextSource`](context_bridge::ContextSource); production uses
//! [`context_bridge::FoldContext`].

pub mod commit;
pub mod config;
pub mod context_bridge;
pub mod exec;
pub mod input;
pub mod protocol;

use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::hook::commit::{Committed, Landed, Request};
use crate::hook::config::Config;
use crate::hook::context_bridge::ContextSource;
use crate::hook::input::Captured;
use crate::hook::protocol::{HostFlag, Protocol};
use crate::journal::Root;
use crate::limits::{HOOK_COMMIT_GRACE_MS, HOOK_SPOOL_RESERVE_MS, HOOK_STDIN_GRACE_MS};

/// How to run one hook invocation.
#[derive(Debug, Clone)]
pub struct HookOptions {
    pub root: Root,
    pub host: HostFlag,
    /// Answer within this long from the start.
    pub deadline: Duration,
    pub config: Config,
    /// `CLAUDE_CODE_SESSION_ID` from the environment: the session of input that names none.
    pub env_session_id: Option<String>,
}

/// What one invocation did.
#[derive(Debug)]
pub struct HookOutcome {
    /// Print exactly this on stdout (one JSON object), or nothing.
    pub stdout: Option<String>,
    /// Lines for stderr.
    pub diagnostics: Vec<String>,
    /// Where the event went; None if no event was read (or the write outlived the grace).
    pub landed: Option<Landed>,
    /// The deadline passed before the worker finished.
    pub timed_out: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    Free,
    Worker,
    Watchdog,
}

struct State {
    captured: Option<Arc<Captured>>,
    claim: Claim,
    finished: bool,
    reply: Option<String>,
    landed: Option<Landed>,
    diag: Vec<String>,
}

#[derive(Clone)]
struct Shared(Arc<(Mutex<State>, Condvar)>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0 .0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn claim(&self, who: Claim) -> bool {
        let mut st = self.lock();
        if st.claim == Claim::Free {
            st.claim = who;
        }
        st.claim == who
    }

    fn note(&self, diag: &mut Vec<String>) {
        self.lock().diag.append(diag);
    }

    fn finish(&self) {
        self.lock().finished = true;
        self.0 .1.notify_all();
    }
}

/// Runs one hook invocation: reads the event from `input`, commits it, and says what to print.
/// Returns within `opts.deadline` plus a short grace (for a write already under way).
pub fn run(
    opts: HookOptions,
    input: impl Read + Send + 'static,
    source: Arc<dyn ContextSource>,
) -> HookOutcome {
    let start = Instant::now();
    let shared = Shared(Arc::new((
        Mutex::new(State {
            captured: None,
            claim: Claim::Free,
            finished: false,
            reply: None,
            landed: None,
            diag: Vec::new(),
        }),
        Condvar::new(),
    )));
    let worker_shared = shared.clone();
    let worker_opts = opts.clone();
    let body = move || {
        let r = catch_unwind(AssertUnwindSafe(|| {
            work(&worker_shared, &worker_opts, input, &*source, start)
        }));
        if let Err(p) = r {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            worker_shared
                .lock()
                .diag
                .push(format!("internal error (panic: {msg}); failing open"));
        }
        worker_shared.finish();
    };
    if let Err(e) = std::thread::Builder::new()
        .name("sjournal-hook".into())
        .spawn(body)
    {
        // Out of threads: stdin was not read, so there is no event to keep.
        return HookOutcome {
            stdout: fail_open_stdout(opts.host, None),
            diagnostics: vec![format!(
                "could not start the hook's worker thread ({e}); the event was not recorded"
            )],
            landed: None,
            timed_out: false,
        };
    }
    watch(&shared, &opts, start)
}

/// The watchdog: waits for the worker until the deadline, then takes over.
fn watch(shared: &Shared, opts: &HookOptions, start: Instant) -> HookOutcome {
    let deadline = start + opts.deadline;
    let mut st = wait_until(shared, deadline, |st| st.finished);
    if !st.finished && st.captured.is_none() {
        // Still reading stdin. Hosts write the event and close stdin at once, so this is a
        // starved thread, not a stuck host: wait a little longer for the event rather than
        // lose it, then take it over as below.
        drop(st);
        let until = deadline + Duration::from_millis(HOOK_STDIN_GRACE_MS);
        st = wait_until(shared, until, |st| st.finished || st.captured.is_some());
    }
    // A worker that finished without claiming the event it read (it panicked) left it to us.
    let abandoned = st.finished && st.claim == Claim::Free && st.captured.is_some();
    if st.finished && !abandoned {
        return HookOutcome {
            stdout: st.reply.take(),
            diagnostics: std::mem::take(&mut st.diag),
            landed: st.landed.take(),
            timed_out: false,
        };
    }
    match (st.captured.clone(), st.claim) {
        (Some(cap), Claim::Free) => {
            st.claim = Claim::Watchdog;
            let mut diag = std::mem::take(&mut st.diag);
            drop(st);
            let reason = if abandoned {
                "the hook failed internally before the journal took the event".to_owned()
            } else {
                format!(
                    "the hook's deadline ({} ms) passed before the journal took the event",
                    opts.deadline.as_millis()
                )
            };
            let landed =
                match commit::spool_captured(&opts.root, &cap, &[], &reason, None, &mut diag) {
                    Ok(path) => {
                        diag.push(format!(
                            "{reason}; spooled to {} (merged by the next append)",
                            path.display()
                        ));
                        Some(Landed::Spooled { path, reason })
                    }
                    Err(e) => {
                        diag.push(format!(
                            "{reason}, and spooling it failed: {e}; the event is LOST"
                        ));
                        None
                    }
                };
            HookOutcome {
                stdout: fail_open_stdout(opts.host, cap.protocol),
                diagnostics: diag,
                landed,
                timed_out: !abandoned,
            }
        }
        (cap, Claim::Worker) => {
            // The worker is writing: give the write a short grace rather than cut it.
            drop(st);
            let until = Instant::now() + Duration::from_millis(HOOK_COMMIT_GRACE_MS);
            let mut st = wait_until(shared, until, |st| st.finished);
            let mut diag = std::mem::take(&mut st.diag);
            if st.finished {
                diag.push("the hook finished after its deadline (a write was under way)".into());
                return HookOutcome {
                    stdout: st.reply.take(),
                    diagnostics: diag,
                    landed: st.landed.take(),
                    timed_out: true,
                };
            }
            diag.push(
                "the journal write did not finish within the grace period; exiting, the write \
                 continues in the kernel and recovery checks it on the next open"
                    .into(),
            );
            HookOutcome {
                stdout: fail_open_stdout(opts.host, cap.and_then(|c| c.protocol)),
                diagnostics: diag,
                landed: None,
                timed_out: true,
            }
        }
        (_, _) => {
            let mut diag = std::mem::take(&mut st.diag);
            diag.push(format!(
                "no complete event on stdin within the deadline ({} ms) and {HOOK_STDIN_GRACE_MS} ms more; nothing was recorded",
                opts.deadline.as_millis()
            ));
            HookOutcome {
                stdout: fail_open_stdout(opts.host, None),
                diagnostics: diag,
                landed: None,
                timed_out: true,
            }
        }
    }
}

fn wait_until(
    shared: &Shared,
    until: Instant,
    done: impl Fn(&State) -> bool,
) -> MutexGuard<'_, State> {
    let mut st = shared.lock();
    while !done(&st) {
        let now = Instant::now();
        if now >= until {
            break;
        }
        st = shared
            .0
             .1
            .wait_timeout(st, until - now)
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
    st
}

fn fail_open_stdout(host: HostFlag, detected: Option<Protocol>) -> Option<String> {
    let p = detected.or(match host {
        HostFlag::Fixed(p) => Some(p),
        HostFlag::Auto => None,
    })?;
    p.fail_open_reply()
}

/// The worker: everything between stdin and the reply.
fn work(
    sh: &Shared,
    opts: &HookOptions,
    input: impl Read,
    source: &dyn ContextSource,
    start: Instant,
) {
    let mut diag = Vec::new();
    let (raw, over) = match input::read_bounded(input) {
        Ok(x) => x,
        Err(e) => {
            diag.push(format!("reading stdin failed: {e}; nothing was recorded"));
            sh.note(&mut diag);
            return;
        }
    };
    let env = |k: &str| {
        (k == "CLAUDE_CODE_SESSION_ID")
            .then(|| opts.env_session_id.clone())
            .flatten()
    };
    let cap = Arc::new(input::capture(raw, over, opts.host, &env, &mut diag));
    {
        let mut st = sh.lock();
        st.captured = Some(cap.clone());
        st.diag.append(&mut diag);
    }
    sh.0 .1.notify_all();

    let event = cap.event.as_deref();
    let handlers = event
        .map(|e| opts.config.handlers_for(e))
        .unwrap_or_default();
    let execs = match (&cap.raw_json, handlers.is_empty()) {
        (Some(raw), false) => exec::run_handlers(
            &handlers,
            raw.as_bytes(),
            &cap.session_id,
            start + opts.deadline / 2,
        ),
        _ => Vec::new(),
    };
    for e in execs.iter().filter(|e| !e.succeeded()) {
        let detail = e
            .error
            .clone()
            .or_else(|| e.exit_code.map(|c| format!("exit code {c}")))
            .or_else(|| e.signal.map(|s| format!("signal {s}")))
            .unwrap_or_default();
        let tail = e.stderr.trim().lines().last().unwrap_or("");
        diag.push(format!("exec handler {:?} failed: {detail} {tail}", e.name));
    }
    sh.note(&mut diag);

    let want_context = match (cap.protocol, event) {
        (Some(p), Some(ev)) => {
            p.default_context_event(ev)
                || (p.accepts_context(ev)
                    && opts.config.hook.context_events.iter().any(|c| c == ev))
        }
        _ => false,
    };
    let reserve = Duration::from_millis(HOOK_SPOOL_RESERVE_MS).min(opts.deadline / 2);
    let req = Request {
        root: &opts.root,
        captured: &cap,
        execs,
        want_context,
        budget_chars: opts.config.hook.context_budget_chars,
        lock_deadline: start + opts.deadline - reserve,
        source,
    };
    let claim = || sh.claim(Claim::Worker);
    let result = commit::commit(req, &claim, &mut diag);
    let (reply, landed) = match result {
        Ok(c) => {
            describe(&c, &mut diag);
            (commit::reply(cap.protocol, event, &c), Some(c.landed))
        }
        Err(e) => {
            diag.push(format!(
                "the event could not be journaled, rescued or spooled: {e}; the event is LOST"
            ));
            (fail_open_stdout(opts.host, cap.protocol), None)
        }
    };
    let mut st = sh.lock();
    st.diag.append(&mut diag);
    st.reply = reply;
    st.landed = landed;
}

fn describe(c: &Committed, diag: &mut Vec<String>) {
    match &c.landed {
        Landed::Journal { .. } | Landed::TakenOver => {}
        Landed::Rescue { seq, cause } => diag.push(format!(
            "{cause}; the event was kept as seq {seq} of the session's rescue journal"
        )),
        Landed::Spooled { path, reason } => diag.push(format!(
            "{reason}; the event was spooled to {} and will be merged by the next append",
            path.display()
        )),
    }
}
