//! `sjournal hook`: what an agent host runs on every event. It reads the event from stdin,
//! makes it durable (journal, else rescue journal, else spool, else fallback spool: see
//! `journal::session`), and returns the exact stdout the host expects (the session's context
//! for the events that take it; a notice for the user when the event could not be stored
//! durably in the root), failing open: whatever happens, the caller exits 0 and prints either
//! a complete reply or nothing.
//!
//! What is kept, and when:
//!
//! - **Input.** Once stdin's first byte has arrived, stdin is read to its end, for up to the
//!   input time limit (`[hook] input_timeout_ms`, 10 s) from the hook's start, however short
//!   the deadline: the deadline bounds waiting for the lock and for work, never the loss of
//!   input already arriving. If the limit passes mid-payload, what arrived is kept as a
//!   `sjournal.unparsed` record saying so. Input longer than a record holds keeps its first
//!   16 MiB − 4 KiB, with the whole input's length and blake3 in the record, and the user is
//!   told. If nothing at all has arrived by the deadline (plus `HOOK_STDIN_GRACE_MS`, and for
//!   as long as stdin is ready to be read), there is no event, and the hook gives up.
//! - **Durability.** The event is acknowledged only where it is durable; where it went is
//!   [`HookOutcome::landed`]. Only if no place at all can take it is it lost, and then the
//!   user is told (through the host's visible channel, `Protocol::reply_with_notice`), as
//!   they are whenever it could not be stored durably in the root.
//! - **Reply.** Context is rendered from the session's state with the event folded in (or
//!   from what is readable when the session cannot be opened). An event that arrives after
//!   the deadline is still journaled, but its reply carries no context (it can no longer be
//!   timely), only a notice if there is one. A due snapshot is written after the reply
//!   ([`HookOutcome::snapshot`]).
//!
//! Two threads share the hook: a worker and a watchdog (`watchdog`). In [`run`] the work runs
//! on a new thread and the calling thread is the watchdog; in [`run_then_exit`] (the
//! `sjournal hook` process) the calling thread does the work, and the watchdog thread, which
//! only sleeps until the deadline, delivers the outcome and ends the process if it settles the
//! hook first. At the deadline, if the worker has the event but has not started writing it (it is waiting for
//! the lock, running exec handlers, or folding), the watchdog takes the event over and spools
//! it itself; the worker, which must claim the event right before its one write, then writes
//! nothing. If the worker has already claimed the event, the watchdog waits for it to finish,
//! however long that takes: after the claim the worker only does the I/O that makes the event
//! durable, which the watchdog could only replace with the same I/O, and a process cannot be
//! reaped while a thread sits in `fsync` anyway. A panic in the worker is caught and treated
//! like any other failure. The library never prints: [`run`] returns stdout and the
//! diagnostics (for stderr).

pub mod commit;
pub mod config;
pub mod exec;
pub mod input;
pub mod protocol;
mod watchdog;

use std::fmt;
use std::io::{ErrorKind, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::hook::config::Config;
use crate::hook::protocol::{HostFlag, Protocol};
use crate::journal::{Landed, Root, SnapshotJob, WriterOptions};
use crate::limits::{
    HOOK_READ_CHUNK_MAX_BYTES, HOOK_READ_CHUNK_MIN_BYTES, HOOK_SPOOL_MERGE_MAX_FILES,
    HOOK_SPOOL_RESERVE_MS,
};
use crate::storage::{Fs, RealFs};

use watchdog::{Claim, Shared};

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
    /// `CLAUDE_PROJECT_DIR` from the environment: the project whose memory applies (else
    /// the git root above the event's `cwd`, else the `cwd`; see `crate::memory`).
    pub env_project_dir: Option<String>,
    /// Whether the input can be read without blocking; None if that cannot be told (in-memory
    /// input). The CLI polls its stdin ([`input::stdin_ready`]).
    pub input_ready: Option<InputReady>,
    /// Every file operation goes through this (the storage seam; tests inject faults).
    pub fs: Arc<dyn Fs>,
    /// Test seam (see [`Checkpoints`]); None in production.
    pub checkpoints: Option<Arc<dyn Checkpoints>>,
}

impl HookOptions {
    /// Production options: the real file system, no checkpoints, stdin not polled.
    pub fn new(root: Root, host: HostFlag, deadline: Duration, config: Config) -> HookOptions {
        HookOptions {
            root,
            host,
            deadline,
            config,
            env_session_id: None,
            env_project_dir: None,
            input_ready: None,
            fs: Arc::new(RealFs),
            checkpoints: None,
        }
    }

    /// How the hook opens sessions and spools: the configured fallback spool, the file
    /// system seam, and a bounded merge of the pending spool.
    pub fn writer(&self) -> WriterOptions {
        WriterOptions {
            fs: self.fs.clone(),
            merge_budget: Some(HOOK_SPOOL_MERGE_MAX_FILES),
            ..self.config.writer_options()
        }
    }

    fn input_limit(&self) -> Duration {
        Duration::from_millis(self.config.hook.input_timeout_ms).max(self.deadline)
    }
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
/// it claimed the event, while it holds the session's lock, before it reads stdin) and to
/// learn what the watchdog did meanwhile, so those paths run the same way on every machine.
/// Production passes None.
pub trait Checkpoints: Send + Sync + fmt::Debug {
    /// The deadline passed with the worker unfinished; the watchdog is about to look at what
    /// the worker is doing (and take the event over if the worker has not claimed it). Called
    /// on the watchdog thread, without the hook's state locked, so a test can hold it here
    /// until the worker reached the point it studies.
    fn deadline_passed(&self) {}
    /// The worker holds the session's lock and is about to fold, render and write. Called on
    /// the worker thread.
    fn locked(&self) {}
    /// The worker has claimed the event; its one write (journal, rescue journal or spool)
    /// comes next. Called on the worker thread.
    fn claimed(&self) {}
    /// The watchdog has claimed the event (the worker will write nothing) and is about to
    /// spool it. Called on the watchdog thread.
    fn taken_over(&self) {}
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
    /// A snapshot that is due: write it after printing the reply (it only saves later loads
    /// time; a failure changes nothing).
    pub snapshot: Option<SnapshotJob>,
    /// The event as read (None if no event was read): what the CLI looks at after the reply
    /// (shipping at session end, `[remote] ship_on_session_end`).
    pub captured: Option<Arc<input::Captured>>,
    /// The write to a scope journal after the reply (`crate::memory::hook`), with the
    /// session's state as the commit folded it; None if the worker did not commit the event.
    pub memory: Option<crate::memory::hook::AfterReply>,
    /// The worker planned memory's part of this event: `memory` None then means there is
    /// nothing to write (false: the watchdog took the event over, and whoever writes memory
    /// after the reply must plan it).
    pub memory_planned: bool,
}

/// Runs one hook invocation: reads the event from `input`, commits it, and says what to print.
/// Returns within `opts.deadline`, unless the event's own write is under way then (it is waited
/// for), or stdin is still arriving or ready but unread (see the module docs).
pub fn run<R: Read + Send + 'static>(opts: HookOptions, input: R) -> HookOutcome {
    let start = Instant::now();
    let shared = Shared::new();
    let job = Arc::new(std::sync::Mutex::new(Some(input)));
    let (worker_shared, worker_opts, worker_job) = (shared.clone(), opts.clone(), job.clone());
    let spawned = std::thread::Builder::new()
        .name("sjournal-hook".into())
        .spawn(move || run_worker(&worker_shared, &worker_opts, &worker_job, start))
        .map(drop);
    if let Err(e) = spawned {
        // Out of threads. The input is still here: do the work on this thread, without a
        // watchdog (past the deadline if it comes to that) rather than drop the event, then
        // settle what the watchdog would (an event the work abandoned is spooled).
        run_worker(&shared, &opts, &job, start);
        let mut out = watchdog::settle_alone(&shared, &opts, start);
        out.diagnostics.insert(
            0,
            format!(
                "could not start the hook's worker thread ({e}); did the work without a watchdog"
            ),
        );
        return out;
    }
    watchdog::watch(&shared, &opts, start)
}

/// Delivers a hook's outcome (prints it, does what comes after the reply) and ends the
/// process: it never returns.
pub type Deliver = Box<dyn FnOnce(HookOutcome) -> std::convert::Infallible + Send>;

/// [`run`] for a process that ends once it has answered (`sjournal hook`): the calling thread
/// does the work, a watchdog thread keeps the deadline (as [`run`]'s does, by the same rules),
/// and whichever of the two settles the hook hands the outcome to `deliver`, which ends the
/// process; the other one then waits for that. While the work goes as it should, neither
/// thread waits for or wakes the other: the watchdog sleeps until the deadline, and the
/// process ends first. On this path each hand-over between threads cost the hook more than
/// its own work (BENCHMARKS.md, "The hook's work on the calling thread").
pub fn run_then_exit<R: Read>(opts: HookOptions, input: R, deliver: Deliver) -> ! {
    let start = Instant::now();
    let shared = Shared::new();
    let deliver = Arc::new(std::sync::Mutex::new(Some(deliver)));
    let watchdog = {
        let (shared, deliver, opts) = (shared.clone(), deliver.clone(), opts.clone());
        std::thread::Builder::new()
            .name("sjournal-watchdog".into())
            // What the calling thread has: a take-over may write memory after its reply.
            .stack_size(WATCHDOG_STACK_BYTES)
            .spawn(move || {
                let settled = catch_unwind(AssertUnwindSafe(|| {
                    shared.watchdog_settles(watchdog::watch(&shared, &opts, start))
                }));
                match settled {
                    Ok(settled) => deliver_if(&deliver, settled),
                    // A bug in the watchdog: whatever the worker left, failing open, rather
                    // than leave a worker that waits for the watchdog waiting forever.
                    Err(p) => {
                        let mut out = shared.outcome(true);
                        out.diagnostics.push(format!(
                            "internal error in the hook's watchdog (panic: {}); failing open, \
                             the event may not have been kept",
                            panic_message(&*p)
                        ));
                        deliver_if(&deliver, shared.watchdog_settles(out))
                    }
                }
            })
    };
    caught(&shared, || work(&shared, &opts, input, start));
    if let Err(e) = watchdog {
        // Out of threads: the work was done without a watchdog (past the deadline if it came
        // to that) rather than drop the event, and what the watchdog would settle is settled
        // here (an event the work abandoned is spooled).
        let mut out = watchdog::settle_alone(&shared, &opts, start);
        out.diagnostics.insert(
            0,
            format!("could not start the hook's watchdog thread ({e}); did the work without one"),
        );
        deliver_once(&deliver, out);
    }
    deliver_if(&deliver, shared.worker_settles(start + opts.deadline))
}

/// The watchdog's stack: the main thread's default, since a take-over runs the same
/// after-reply work (memory) as the main thread does.
const WATCHDOG_STACK_BYTES: usize = 8 << 20;

fn deliver_once(deliver: &std::sync::Mutex<Option<Deliver>>, out: HookOutcome) -> ! {
    let taken = deliver.lock().unwrap_or_else(|p| p.into_inner()).take();
    match taken {
        Some(d) => match d(out) {},
        None => park_forever(),
    }
}

/// Delivers `out` if this thread settled the hook (Some); else the other thread delivers.
fn deliver_if(deliver: &std::sync::Mutex<Option<Deliver>>, out: Option<HookOutcome>) -> ! {
    match out {
        Some(out) => deliver_once(deliver, out),
        None => park_forever(),
    }
}

/// The other thread is delivering, and ends the process.
fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// The worker's body: [`work`], with a panic caught and reported.
fn run_worker<R: Read>(
    shared: &Shared,
    opts: &HookOptions,
    job: &std::sync::Mutex<Option<R>>,
    start: Instant,
) {
    let taken = job.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(input) = taken {
        caught(shared, || work(shared, opts, input, start));
    }
    shared.finish();
}

/// What a caught panic said.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into())
}

/// Runs the worker's `body`, with a panic caught and reported.
fn caught(shared: &Shared, body: impl FnOnce()) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(body)) {
        let msg = panic_message(&*p);
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

/// Reads stdin to its end into the shared state (where the watchdog can take what arrived
/// if the input time limit passes first). False if the watchdog took the input over.
///
/// The read buffer starts small (most events are a few KiB) and grows to a pipe's capacity
/// once a read fills it: zeroing 64 KiB up front cost the hook more than reading the event.
fn read_input(sh: &Shared, mut input: impl Read, diag: &mut Vec<String>) -> bool {
    let mut chunk = vec![0u8; HOOK_READ_CHUNK_MIN_BYTES];
    loop {
        match input.read(&mut chunk) {
            Ok(0) => return true,
            Ok(n) => {
                if !sh.received(&chunk[..n]) {
                    return false;
                }
                if n == chunk.len() && chunk.len() < HOOK_READ_CHUNK_MAX_BYTES {
                    chunk.resize(HOOK_READ_CHUNK_MAX_BYTES, 0);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                diag.push(format!("reading stdin failed: {e}"));
                return true;
            }
        }
    }
}

/// The worker: everything between stdin and the reply.
fn work(sh: &Shared, opts: &HookOptions, input: impl Read, start: Instant) {
    let mut diag = Vec::new();
    let deadline = start + opts.deadline;
    if !read_input(sh, input, &mut diag) {
        return;
    }
    let Some(received) = sh.take_received() else {
        return;
    };
    if received.total == 0 && !diag.is_empty() {
        diag.push("nothing was read; nothing was recorded".into());
        sh.note(&mut diag);
        return;
    }
    let env = |k: &str| {
        (k == "CLAUDE_CODE_SESSION_ID")
            .then(|| opts.env_session_id.clone())
            .flatten()
    };
    // The event is parsed once, as the fold reads it: its digest, its injection point and
    // memory's plan all come from this one `Event` (input that is not JSON has none).
    let routed = input::route(received, opts.host, &env, &mut diag);
    let (text, kind) = match &routed {
        input::Routing::Event(r) => (Some(r.text.clone()), r.kind.clone()),
        input::Routing::Unparsed(_) => (None, String::new()),
    };
    let lenient = text.as_deref().map(crate::event::lenient_json::text);
    let parsed = lenient
        .as_deref()
        .map(|l| crate::event::Event::parse(&kind, l));
    let cap = Arc::new(match routed {
        input::Routing::Event(r) => r.into_captured(parsed.as_ref()),
        input::Routing::Unparsed(c) => c,
    });
    sh.captured(cap.clone(), &mut diag);

    // Input that took until after the deadline is still journaled, but nothing more is
    // waited for: no exec handlers, no context, one try at the lock.
    let late = Instant::now() >= deadline;
    if late {
        diag.push(format!(
            "stdin arrived in full only after the deadline ({} ms); the event is journaled without \
             exec handlers or context (the reply can no longer be timely)",
            opts.deadline.as_millis()
        ));
    }
    let event = cap.event.as_deref();
    let handlers = match (event, late) {
        (Some(e), false) => opts.config.handlers_for(e),
        _ => Vec::new(),
    };
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
    let want_context = !late
        && match (cap.protocol, event) {
            (Some(p), Some(ev)) => policy.wants(p, ev),
            _ => false,
        };
    // Memory: what to inject now, what to write after the reply.
    let memory = match &parsed {
        // The event is parsed: `plan` decides by its kind.
        Some(e) => crate::memory::hook::plan(
            &opts.root,
            e,
            &cap.session_id,
            opts.env_project_dir.as_deref().map(std::path::Path::new),
            (!late)
                .then(|| crate::memory::hook::Settings {
                    deadline: Some(deadline),
                    ..opts.config.memory.settings()
                })
                .as_ref(),
        ),
        _ => Default::default(),
    };
    // Loaded under the session's lock: never when the reply is already late.
    let want_state = !late && memory.needs_state();
    let reserve = Duration::from_millis(HOOK_SPOOL_RESERVE_MS).min(opts.deadline / 2);
    let req = commit::Request {
        root: &opts.root,
        captured: &cap,
        execs,
        want_context,
        point: parsed
            .as_ref()
            .map(|e| crate::context::InjectionPoint::of_event(e, 0)),
        policy,
        writer: opts.writer(),
        lock_deadline: if late {
            Instant::now()
        } else {
            deadline - reserve
        },
        render_by: deadline,
        checkpoints: opts.checkpoints.as_deref(),
        want_state,
        extras: memory.prepared.extras,
        notice: memory.prepared.notice,
    };
    let claim = || {
        let (held, taken) = sh.claim(Claim::Worker);
        if let (true, Some(c)) = (taken, &opts.checkpoints) {
            c.claimed();
        }
        held
    };
    let result = commit::commit(&req, &claim, &mut diag);
    if let Some(Ok(c)) = &result {
        // Webhooks are told of events in the journal or spooled to it (a deliverer merges
        // the spool first); not of rescued ones, which the journal does not hold.
        if matches!(
            c.written.landed,
            Landed::Journal { .. } | Landed::Spooled { .. }
        ) {
            crate::webhook::notify(
                &opts.root,
                &opts.config.webhook,
                &cap.session_id,
                &cap.kind,
                deadline,
                &mut diag,
            );
        }
    }
    let (reply, landed, snapshot, state) = match result {
        // The watchdog took the event over; it answers.
        None => return sh.note(&mut diag),
        Some(Ok(mut c)) => {
            describe(&c.written.landed, &mut diag);
            let late = Instant::now() > deadline;
            let reply =
                commit::reply_with(cap.protocol, event, &c, &cap, late, req.notice.as_deref());
            let snapshot = c.written.snapshot_job();
            let state = want_state.then(|| c.written.state.take()).flatten();
            (reply, Some(c.written.landed), snapshot, state)
        }
        Some(Err(e)) => {
            diag.push(format!("{e}; the event is LOST"));
            let notice = format!("sjournal LOST this event: {e}");
            (
                lost_reply(opts.host, cap.protocol, &notice),
                None,
                None,
                None,
            )
        }
    };
    let memory = landed
        .as_ref()
        .and(memory.after)
        .map(|job| crate::memory::hook::AfterReply { job, state });
    sh.done(reply, landed, snapshot, memory, &mut diag);
}

/// The reply when the event was kept nowhere: the fail-open reply, with the notice.
fn lost_reply(host: HostFlag, detected: Option<Protocol>, notice: &str) -> Option<String> {
    protocol_of(host, detected)?.reply_with_notice(None, None, Some(notice))
}

fn protocol_of(host: HostFlag, detected: Option<Protocol>) -> Option<Protocol> {
    detected.or(match host {
        HostFlag::Fixed(p) => Some(p),
        HostFlag::Auto => None,
    })
}

fn describe(landed: &Landed, diag: &mut Vec<String>) {
    match landed {
        Landed::Journal { .. } => {}
        Landed::Rescue { appended, cause } => diag.push(format!(
            "{cause}; the event was kept as seq {} of the session's rescue journal",
            appended.first().map_or(0, |a| a.seq)
        )),
        Landed::Spooled {
            files,
            reason,
            fallback,
            ..
        } => diag.push(format!(
            "{reason}; the event was spooled to {}{} and will be merged by the next writer or reader",
            files.first().map(|f| f.display().to_string()).unwrap_or_default(),
            if *fallback {
                " (the FALLBACK spool, outside the root: less durable)"
            } else {
                ""
            }
        )),
    }
}
