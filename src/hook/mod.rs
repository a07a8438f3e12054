//! `sjournal hook`: what an agent host runs on every event. It reads the event from stdin,
//! makes it durable (journal, else rescue journal, else spool), and returns the exact stdout
//! the host expects (the session's context for the events that take it), all within a
//! deadline, failing open: whatever happens, the caller exits 0 and prints either a complete
//! reply or nothing. Failing open never means dropping the event.
//!
//! The work runs on a worker thread; the calling thread is the watchdog. At the deadline, if
//! the worker has the event but has not started writing it (it is still waiting for the lock,
//! running exec handlers, or folding), the watchdog takes the event over and spools it itself;
//! the worker, which must claim the event right before its one write, then writes nothing.
//!
//! If the worker has already claimed the event, the watchdog waits for it to finish, however
//! long that takes: after the claim the worker only does the I/O that makes the event durable
//! (a journal write and its sync, or a spool file), which the watchdog could only replace
//! with the same I/O, and a process cannot be reaped while a thread sits in `fsync` anyway.
//! Exiting instead would kill the worker between its sync and the step that makes the event
//! findable (the spool file's link) or before its write, and lose the event. Past
//! `HOOK_COMMIT_GRACE_MS` it notes that the write is slow, and keeps waiting.
//!
//! If stdin is still being read at the deadline the watchdog waits `HOOK_STDIN_GRACE_MS`
//! more; after that it keeps waiting only while stdin is ready (data or end of file waiting:
//! the event is there and the worker has only not been scheduled to read it), and otherwise
//! gives up (the host has not finished writing; there is no event yet to keep). A panic in
//! the worker is caught and treated like any other failure. The library never prints: [`run`]
//! returns stdout and the diagnostics (for stderr).
//!
//! The context comes from a [`ContextSource`](context_bridge::ContextSource); production uses
//! [`context_bridge::FoldContext`].

pub mod commit;
pub mod config;
pub mod context_bridge;
pub mod exec;
pub mod input;
pub mod protocol;

use std::fmt;
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
    /// Whether the input can be read without blocking; None if that cannot be told (in-memory
    /// input). The CLI polls its stdin ([`input::stdin_ready`]).
    pub input_ready: Option<InputReady>,
    /// Test seam (see [`Checkpoints`]); None in production.
    pub checkpoints: Option<Arc<dyn Checkpoints>>,
}

/// Tells whether the hook's input can be read without blocking: bytes are waiting, or the
/// writer has closed it. Past the stdin grace the watchdog keeps waiting for a worker that has
/// not read its input only while this says so.
#[derive(Clone)]
pub struct InputReady(pub Arc<dyn Fn() -> bool + Send + Sync>);

impl fmt::Debug for InputReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InputReady(..)")
    }
}

/// Test seam: the moments where scheduling decides whether an event could be lost. A test
/// implements it to stall the worker where a starved thread or a slow disk would (right after
/// it claimed the event, or before it reads stdin) and to learn what the watchdog did
/// meanwhile, so those paths run the same way on every machine. Production passes None.
pub trait Checkpoints: Send + Sync + fmt::Debug {
    /// The deadline passed with the worker unfinished; the watchdog is about to look at what
    /// the worker is doing (and take the event over if the worker has not claimed it). Called
    /// on the watchdog thread, without the hook's state locked, so a test can hold it here
    /// until the worker reached the point it studies.
    fn deadline_passed(&self) {}
    /// The worker has claimed the event; its one write (journal, rescue journal or spool)
    /// comes next. Called on the worker thread.
    fn claimed(&self) {}
    /// The worker's claimed write was still unfinished `HOOK_COMMIT_GRACE_MS` after the
    /// deadline; the watchdog keeps waiting for it. Called on the watchdog thread.
    fn write_overdue(&self) {}
    /// Stdin was still unread `HOOK_STDIN_GRACE_MS` after the deadline while ready to be
    /// read; the watchdog keeps waiting for the worker to read it. Called on the watchdog
    /// thread, once.
    fn input_overdue(&self) {}
}

/// What one invocation did.
#[derive(Debug)]
pub struct HookOutcome {
    /// Print exactly this on stdout (one JSON object), or nothing.
    pub stdout: Option<String>,
    /// Lines for stderr.
    pub diagnostics: Vec<String>,
    /// Where the event went; None if no event was read, or it could be kept nowhere.
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

    /// Claims the event for `who`. Returns (whether `who` holds it, whether it just took it).
    fn claim(&self, who: Claim) -> (bool, bool) {
        let mut st = self.lock();
        let taken = st.claim == Claim::Free;
        if taken {
            st.claim = who;
        }
        (st.claim == who, taken)
    }

    fn note(&self, diag: &mut Vec<String>) {
        self.lock().diag.append(diag);
    }

    fn finish(&self) {
        self.lock().finished = true;
        self.0 .1.notify_all();
    }
}

/// What the worker needs and takes: the input and the context source.
type Job<R> = Arc<Mutex<Option<(R, Arc<dyn ContextSource>)>>>;

/// Runs one hook invocation: reads the event from `input`, commits it, and says what to print.
/// Returns within `opts.deadline`, unless the event's own write is under way then (it is waited
/// for: see the module docs) or stdin is ready but still unread.
pub fn run<R: Read + Send + 'static>(
    opts: HookOptions,
    input: R,
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
    let job: Job<R> = Arc::new(Mutex::new(Some((input, source))));
    let (worker_shared, worker_opts, worker_job) = (shared.clone(), opts.clone(), job.clone());
    let body = move || run_worker(&worker_shared, &worker_opts, &worker_job, start);
    if let Err(e) = std::thread::Builder::new()
        .name("sjournal-hook".into())
        .spawn(body)
    {
        // Out of threads. The input is still here: do the work on this thread, without a
        // watchdog (past the deadline if it comes to that) rather than drop the event.
        run_worker(&shared, &opts, &job, start);
        let mut st = shared.lock();
        let mut diagnostics = vec![format!(
            "could not start the hook's worker thread ({e}); did the work without a watchdog"
        )];
        diagnostics.append(&mut st.diag);
        return HookOutcome {
            stdout: st.reply.take(),
            diagnostics,
            landed: st.landed.take(),
            timed_out: false,
        };
    }
    watch(&shared, &opts, start)
}

/// The worker's body: [`work`], with a panic caught and reported.
fn run_worker<R: Read>(shared: &Shared, opts: &HookOptions, job: &Job<R>, start: Instant) {
    let taken = job.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some((input, source)) = taken {
        let r = catch_unwind(AssertUnwindSafe(|| {
            work(shared, opts, input, &*source, start)
        }));
        if let Err(p) = r {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            let mut st = shared.lock();
            let what = if st.claim == Claim::Worker && st.landed.is_none() {
                // A panic inside the write itself: a bug in the write path, not a state the
                // hook can settle. Say so plainly.
                "; it had claimed the event, which may or may not have been written"
            } else {
                ""
            };
            st.diag
                .push(format!("internal error (panic: {msg}){what}; failing open"));
        }
    }
    shared.finish();
}

/// The watchdog: waits for the worker until the deadline, then takes over.
fn watch(shared: &Shared, opts: &HookOptions, start: Instant) -> HookOutcome {
    let deadline = start + opts.deadline;
    let mut st = wait_until(shared, Some(deadline), |st| st.finished);
    if let (false, Some(c)) = (st.finished, &opts.checkpoints) {
        drop(st);
        c.deadline_passed();
        st = shared.lock();
    }
    if !st.finished && st.captured.is_none() {
        drop(st);
        st = wait_for_input(shared, opts, deadline);
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
        (_, Claim::Worker) => {
            // The worker claimed the event and is writing it: wait for the write, however
            // long the disk takes (see the module docs for why it is never cut).
            drop(st);
            let grace = Instant::now() + Duration::from_millis(HOOK_COMMIT_GRACE_MS);
            let mut st = wait_until(shared, Some(grace), |st| st.finished);
            let overdue = !st.finished;
            if overdue {
                drop(st);
                if let Some(c) = &opts.checkpoints {
                    c.write_overdue();
                }
                st = wait_until(shared, None, |st| st.finished);
            }
            let mut diag = std::mem::take(&mut st.diag);
            diag.push(if overdue {
                format!(
                    "the event's write was still under way {HOOK_COMMIT_GRACE_MS} ms after the \
                     deadline (a slow disk or a starved thread); waited for it rather than lose \
                     the event"
                )
            } else {
                "the hook finished after its deadline (a write was under way)".into()
            });
            HookOutcome {
                stdout: st.reply.take(),
                diagnostics: diag,
                landed: st.landed.take(),
                timed_out: true,
            }
        }
        (_, _) => {
            let mut diag = std::mem::take(&mut st.diag);
            diag.push(format!(
                "no complete event on stdin within the deadline ({} ms) and {HOOK_STDIN_GRACE_MS} ms more, \
                 and stdin has nothing waiting to be read; nothing was recorded",
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

/// Past the deadline with stdin not read yet. Hosts write the event and close stdin at once,
/// so this is normally a starved thread, not a stuck host: wait the stdin grace, then keep
/// waiting as long as stdin is ready to be read (the event is there; only the worker has not
/// run). Returns the state once the event is captured, the worker finished, or stdin is not
/// ready (the host has not finished writing: there is no event to keep).
fn wait_for_input<'a>(
    shared: &'a Shared,
    opts: &HookOptions,
    deadline: Instant,
) -> MutexGuard<'a, State> {
    let input_done = |st: &State| st.finished || st.captured.is_some();
    let mut until = deadline + Duration::from_millis(HOOK_STDIN_GRACE_MS);
    let mut noted = false;
    loop {
        let st = wait_until(shared, Some(until), input_done);
        if input_done(&st) {
            return st;
        }
        drop(st);
        let ready = opts.input_ready.as_ref().is_some_and(|r| (r.0)());
        if !ready {
            return shared.lock();
        }
        if !noted {
            noted = true;
            shared.lock().diag.push(format!(
                "stdin was still unread {HOOK_STDIN_GRACE_MS} ms after the deadline but is ready \
                 (a starved thread); waiting for it rather than lose the event"
            ));
            if let Some(c) = &opts.checkpoints {
                c.input_overdue();
            }
        }
        until = Instant::now() + Duration::from_millis(HOOK_STDIN_GRACE_MS);
    }
}

/// Waits until `done` holds or `until` passes (None: no limit); returns the state, locked.
fn wait_until(
    shared: &Shared,
    until: Option<Instant>,
    done: impl Fn(&State) -> bool,
) -> MutexGuard<'_, State> {
    let cv = &shared.0 .1;
    let mut st = shared.lock();
    while !done(&st) {
        st = match until {
            None => cv.wait(st).unwrap_or_else(|p| p.into_inner()),
            Some(until) => {
                let now = Instant::now();
                if now >= until {
                    break;
                }
                cv.wait_timeout(st, until - now)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0)
            }
        };
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

    let policy = crate::context::Policy::from_config(&opts.config);
    let want_context = match (cap.protocol, event) {
        (Some(p), Some(ev)) => policy.wants(p, ev),
        _ => false,
    };
    let reserve = Duration::from_millis(HOOK_SPOOL_RESERVE_MS).min(opts.deadline / 2);
    let req = Request {
        root: &opts.root,
        captured: &cap,
        execs,
        want_context,
        policy,
        lock_deadline: start + opts.deadline - reserve,
        source,
    };
    let claim = || {
        let (held, taken) = sh.claim(Claim::Worker);
        if let (true, Some(c)) = (taken, &opts.checkpoints) {
            c.claimed();
        }
        held
    };
    let result = commit::commit(req, &claim, &mut diag);
    if let Ok(Committed {
        landed: Landed::Journal { .. } | Landed::Spooled { .. },
        ..
    }) = &result
    {
        let deadline = start + opts.deadline;
        crate::webhook::notify(
            &opts.root,
            &opts.config.webhook,
            &cap.session_id,
            &cap.kind,
            deadline,
            &mut diag,
        );
    }
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
