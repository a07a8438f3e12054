//! `sjournal hook`: what an agent host runs on every event. It reads the event from stdin,
//! makes it durable (journal, else rescue journal, else spool, else fallback spool: see
//! `journal::session`), and returns the exact stdout the host expects (the session's context
//! for the events that take it; a notice for the user when the event could not be stored
//! durably in the root, was cut short, or was lost), failing open: whatever happens, the
//! process exits 0 and prints either a complete reply or nothing.
//!
//! One event goes through one pipeline, one module per step:
//!
//! 1. [`read`]: stdin → the input's bytes, complete at end of file or as soon as one JSON
//!    value is (bounded in size; the watchdog bounds the time);
//! 2. [`route`]: one parse → the record (the event, or `sjournal.unparsed`), its host and
//!    session;
//! 3. `plan`: when the work is due (`plan::Timing`: the deadline counts from the input's
//!    completion; input too close to the host's own timeout is journaled without context),
//!    exec handlers, context, memory;
//! 4. [`commit`]: the session's lock (until the deadline), the fold, the render, the one
//!    write (after the claim), or the spool;
//! 5. `reply`: the host's reply, or the notice;
//! 6. `after`: once the reply is out, webhooks, the due snapshot, memory's write, shipping,
//!    a snapshot rebuild — none waiting past the deadline;
//! 7. `watchdog`: the deadline, the claim, the take-over.
//!
//! What is kept, and when:
//!
//! - **Input.** Once stdin's first byte has arrived, stdin is read until the input is
//!   complete, for up to the input time limit (`[hook] input_timeout_ms`, 10 s) from the
//!   hook's start, however short the deadline: the deadline bounds waiting for the lock and
//!   for work, never the loss of input already arriving. If the limit passes mid-payload,
//!   what arrived is kept as a `sjournal.unparsed` record saying so, and the user is told.
//!   Input longer than a record holds keeps its first 16 MiB − 4 KiB, with the whole input's
//!   length and blake3 in the record, and the user is told. If nothing at all has arrived by
//!   the deadline (plus `HOOK_STDIN_GRACE_MS`, and for as long as stdin is ready to be read),
//!   there is no event, and the hook gives up.
//! - **Durability.** The event is acknowledged only where it is durable; where it went is
//!   [`HookOutcome::landed`]. Only if no place at all can take it (or there is no root) is it
//!   lost, and then the user is told (through the host's visible channel,
//!   `Host::reply_with_notice`), as they are whenever it could not be stored durably in
//!   the root.
//! - **Reply.** Context is rendered from the session's state with the event folded in (or
//!   from what is readable when the session cannot be opened). The deadline is the work's
//!   budget, not a reason to drop the answer: a reply still carries its context while the
//!   host waits for it (`plan`'s timing rule).
//!
//! **One threading shape**, the one that ships: the calling thread does the work, and a
//! watchdog thread, which only sleeps until the deadline, settles the hook if the work has not
//! by then. Whichever of the two settles it hands the outcome to the [`Deliver`] (the binary's
//! prints and exits; a test's sends it on a channel); the other one then parks. At the
//! deadline, if the worker has the event but has not started writing it (it is waiting for
//! the lock, running exec handlers, or folding), the watchdog takes the event over and spools
//! it itself; the worker, which must claim the event right before its one write, then writes
//! nothing. If the worker has already claimed the event, the watchdog waits for it to finish,
//! however long that takes: after the claim the worker only does the I/O that makes the event
//! durable, which the watchdog could only replace with the same I/O, and a process cannot be
//! reaped while a thread sits in `fsync` anyway. A panic in the worker is caught and treated
//! like any other failure. The library never prints.

mod after;
pub mod commit;
pub mod exec;
mod plan;
pub mod read;
mod reply;
pub mod route;
mod watchdog;

use std::fmt;
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::host::HostFlag;
use crate::journal::{Root, WriterOptions};
use crate::limits::{HOOK_SPOOL_MERGE_MAX_FILES, HOOK_SPOOL_RESERVE_MS};
use crate::session::Landed;
use crate::storage::{Fs, RealFs};

pub use after::AfterReply;

use plan::Timing;
use route::Captured;
use watchdog::{Claim, Shared};

/// How to run one hook invocation.
#[derive(Debug, Clone)]
pub struct HookOptions {
    /// The root; Err (why there is none: `$HOME` unset and no `--root`) still reads the event,
    /// to tell the user through the host that it was lost.
    pub root: Result<Root, String>,
    pub host: HostFlag,
    /// The hook's budget for its own work, counted from when its input was complete.
    pub deadline: Duration,
    pub config: Config,
    /// `CLAUDE_CODE_SESSION_ID` from the environment: the session of input that names none.
    pub env_session_id: Option<String>,
    /// `CLAUDE_PROJECT_DIR` from the environment: the project whose memory applies (else
    /// the git root above the event's `cwd`, else the `cwd`; see `crate::memory`).
    pub env_project_dir: Option<String>,
    /// Whether the input can be read without blocking; None if that cannot be told (in-memory
    /// input). The CLI polls its stdin ([`read::stdin_ready`]).
    pub input_ready: Option<InputReady>,
    /// Every file operation goes through this (the storage seam; tests inject faults).
    pub fs: Arc<dyn Fs>,
    /// Test seam (see [`Checkpoints`]); None in production.
    pub checkpoints: Option<Arc<dyn Checkpoints>>,
    /// The `sjournal` binary for the processes the hook starts after its reply (snapshot
    /// rebuild, webhook deliverer, search update, ship); None: this executable. Run only if
    /// no other user could have planted or changed it (`storage::worker_program`).
    pub program: Option<PathBuf>,
}

impl HookOptions {
    /// Production options: the real file system, no checkpoints, stdin not polled.
    pub fn new(root: Root, host: HostFlag, deadline: Duration, config: Config) -> HookOptions {
        HookOptions {
            root: Ok(root),
            host,
            deadline,
            config,
            env_session_id: None,
            env_project_dir: None,
            input_ready: None,
            fs: Arc::new(RealFs),
            checkpoints: None,
            program: None,
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
/// not read its input only while this says so; a complete JSON value with nothing more
/// waiting ends the input.
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
    /// The work's deadline passed with the worker unfinished; the watchdog is about to look at
    /// what the worker is doing (and take the event over if the worker has not claimed it).
    /// Called on the watchdog thread, without the hook's state locked, so a test can hold it
    /// here until the worker reached the point it studies.
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
    /// The event as read (None if no event was read).
    pub captured: Option<Arc<Captured>>,
    /// The work's deadline (None if no input came): the work after the reply waits for
    /// nothing past it.
    pub deadline: Option<Instant>,
    /// What is left for after the reply (done by [`run`] before it delivers the outcome).
    pub after: AfterReply,
}

/// Where a hook's outcome goes: the binary prints it and exits; a test sends it on a channel.
pub trait Deliver: Send + 'static {
    /// Hands the reply to the host (None: print nothing). Called once, before the work that
    /// comes after the reply.
    fn reply(&mut self, stdout: Option<&str>);
    /// The hook is over, the work after the reply included: `out` says what it did. Ends the
    /// process (or parks the thread for good): it never returns.
    fn finish(self: Box<Self>, out: HookOutcome) -> !;
}

/// The [`Deliver`], until one of the two threads takes it.
type Handoff = Arc<Mutex<Option<Box<dyn Deliver>>>>;

/// Runs one hook invocation: the calling thread reads the event from `input` and does the
/// work, a watchdog thread keeps the deadline, and whichever of the two settles the hook hands
/// the outcome to `deliver` (the reply, then the work after it, then the rest), which ends
/// the process; the other one then parks. While the work goes as it should, neither thread
/// waits for or wakes the other: the watchdog sleeps until the deadline, and the process ends
/// first (each hand-over between threads is a futex wake and a context switch, and on a busy
/// machine a wait for a core: BENCHMARKS.md, "Speed mechanisms": work on the calling thread).
pub fn run<R: Read>(opts: HookOptions, input: R, deliver: impl Deliver) -> ! {
    let start = Instant::now();
    let shared = Shared::new();
    let deliver: Handoff = Arc::new(Mutex::new(Some(Box::new(deliver))));
    let opts = Arc::new(opts);
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
                let out = match settled {
                    Ok(settled) => settled,
                    // A bug in the watchdog: whatever the worker left, failing open, rather
                    // than leave a worker that waits for the watchdog waiting forever.
                    Err(p) => {
                        let mut out = shared.outcome(true);
                        out.diagnostics.push(format!(
                            "internal error in the hook's watchdog (panic: {}); failing open, \
                             the event may not have been kept",
                            panic_message(&*p)
                        ));
                        shared.watchdog_settles(out)
                    }
                };
                hand_over(&deliver, &opts, out)
            })
    };
    caught(&shared, || pipeline(&shared, &opts, input, start));
    if let Err(e) = watchdog {
        // Out of threads: the work was done without a watchdog (past the deadline if it came
        // to that) rather than drop the event, and what the watchdog would settle is settled
        // here (an event the work abandoned is spooled).
        let mut out = watchdog::settle_alone(&shared, &opts, start);
        out.diagnostics.insert(
            0,
            format!("could not start the hook's watchdog thread ({e}); did the work without one"),
        );
        hand_over(&deliver, &opts, Some(out));
    }
    hand_over(
        &deliver,
        &opts,
        shared.worker_settles(start + opts.deadline),
    )
}

/// The watchdog's stack: the main thread's default, since a take-over runs the same
/// after-reply work (memory) as the main thread does.
const WATCHDOG_STACK_BYTES: usize = 8 << 20;

/// Delivers `out` if this thread settled the hook (Some): the reply, the work after it, the
/// outcome. Else the other thread delivers, and this one parks.
fn hand_over(
    deliver: &Mutex<Option<Box<dyn Deliver>>>,
    opts: &HookOptions,
    out: Option<HookOutcome>,
) -> ! {
    let taken = out.and_then(|out| {
        let d = deliver.lock().unwrap_or_else(|p| p.into_inner()).take();
        d.map(|d| (out, d))
    });
    let Some((mut out, mut d)) = taken else {
        loop {
            std::thread::park();
        }
    };
    d.reply(out.stdout.as_deref());
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| after::run(opts, &mut out))) {
        out.diagnostics.push(format!(
            "internal error after the reply (panic: {}); the event was kept",
            panic_message(&*p)
        ));
    }
    d.finish(out)
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

/// The worker's pipeline: everything between stdin and the reply, one named step after the
/// other (read, route and plan, exec, commit, settle).
fn pipeline(sh: &Shared, opts: &HookOptions, input: impl Read, start: Instant) {
    let mut diag = Vec::new();
    let Some(received) = read_input(sh, opts, input, &mut diag) else {
        return sh.note(&mut diag);
    };
    let (job, mut plan) = route_and_plan(sh, opts, received, start, &mut diag);
    let execs = run_execs(&plan, &job, &mut diag);
    sh.note(&mut diag);
    let root = match &opts.root {
        Ok(root) => root,
        Err(why) => return job.lost(why, diag),
    };
    match job.commit(root, &mut plan, execs, &mut diag) {
        Some(result) => job.settle(plan, result, diag),
        // The watchdog took the event over; it answers.
        None => sh.note(&mut diag),
    }
}

/// Step 1: the input, complete (None: the watchdog took it over, or nothing was read).
fn read_input(
    sh: &Shared,
    opts: &HookOptions,
    input: impl Read,
    diag: &mut Vec<String>,
) -> Option<read::Received> {
    let received = read::read(sh, input, opts.input_ready.as_ref(), diag)?;
    if received.total == 0 && !diag.is_empty() {
        diag.push("nothing was read; nothing was recorded".into());
        return None;
    }
    Some(received)
}

/// Steps 2 and 3: the record and its timing, handed to the watchdog, and the plan. The event
/// is parsed once, as the fold reads it: its digest, its injection point and memory's plan
/// all come from this one `Event` (input that is not JSON has none).
fn route_and_plan<'a>(
    sh: &'a Shared,
    opts: &'a HookOptions,
    mut received: read::Received,
    start: Instant,
    diag: &mut Vec<String>,
) -> (Job<'a>, plan::Plan<'a>) {
    received.redact(opts);
    let input_done = received.done_at.unwrap_or_else(Instant::now);
    let env = |k: &str| {
        (k == "CLAUDE_CODE_SESSION_ID")
            .then(|| opts.env_session_id.clone())
            .flatten()
    };
    let routed = route::route(received, opts.host, &env, diag);
    let (text, kind) = match &routed {
        route::Routing::Event(r) => (Some(r.text.clone()), r.kind.clone()),
        route::Routing::Unparsed(_) => (None, String::new()),
    };
    let lenient = text.as_deref().map(crate::event::lenient::text);
    let parsed = lenient
        .as_deref()
        .map(|l| crate::event::Event::parse(&kind, l));
    let cap = Arc::new(match routed {
        route::Routing::Event(r) => r.into_captured(parsed.as_ref()),
        route::Routing::Unparsed(c) => c,
    });
    let event = cap.event.as_deref();
    let t = Timing::new(start, input_done, opts.deadline, cap.protocol, event);
    if t.late {
        diag.push(late_input(opts, &cap, &t));
    }
    sh.captured(cap.clone(), t, diag);
    let plan = plan::plan(opts, &cap, parsed.as_ref(), &t);
    (Job { sh, opts, cap, t }, plan)
}

/// The diagnostic for input that completed too close to the host's timeout.
fn late_input(opts: &HookOptions, cap: &Captured, t: &Timing) -> String {
    format!(
        "stdin arrived in full only {} ms after the hook started, too close to the {} ms {} \
         gives a hook{} for the work (the deadline is {} ms); the event is journaled without \
         exec handlers or context (the host would no longer take the reply)",
        t.input_done.duration_since(t.start).as_millis(),
        t.host_gives_up.duration_since(t.start).as_millis(),
        cap.protocol.map_or("an unknown host", |p| p.as_str()),
        cap.event
            .as_deref()
            .map(|e| format!(" for {e}"))
            .unwrap_or_default(),
        opts.deadline.as_millis()
    )
}

/// The exec handlers the plan names, given half the budget; their failures noted.
fn run_execs(
    plan: &plan::Plan<'_>,
    job: &Job<'_>,
    diag: &mut Vec<String>,
) -> Vec<crate::format::payload::Exec> {
    let (cap, budget) = (&job.cap, job.opts.deadline);
    let execs = match (&cap.raw_json, plan.handlers.is_empty()) {
        (Some(raw), false) => exec::run_handlers(
            &plan.handlers,
            raw.as_bytes(),
            &cap.session_id,
            job.t.input_done + budget / 2,
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
    execs
}

/// One routed event's work: what the steps after the commit need.
struct Job<'a> {
    sh: &'a Shared,
    opts: &'a HookOptions,
    cap: Arc<Captured>,
    t: Timing,
}

impl Job<'_> {
    /// Step 4: the session's lock (until the deadline), the fold, the render, and the one
    /// write after the claim, or the spool. None: the watchdog took the event over.
    fn commit(
        &self,
        root: &Root,
        plan: &mut plan::Plan<'_>,
        execs: Vec<crate::format::payload::Exec>,
        diag: &mut Vec<String>,
    ) -> Option<crate::error::Result<commit::Committed>> {
        let (sh, opts, t) = (self.sh, self.opts, &self.t);
        // Under the lock the worker folds the session's state when it renders context or
        // hands the state to memory: a deadline passing then means the fold outlasted it.
        // (And when it redacted something: whether the user was told comes from the state.)
        let folds = plan.want_context || plan.want_state || self.cap.redacted.is_some();
        let locked = || {
            if folds {
                sh.folding();
            }
            if let Some(c) = &opts.checkpoints {
                c.locked();
            }
        };
        let reserve = Duration::from_millis(HOOK_SPOOL_RESERVE_MS).min(opts.deadline / 2);
        let req = commit::Request {
            root,
            captured: &self.cap,
            execs,
            want_context: plan.want_context,
            point: plan.point.clone(),
            policy: plan.policy.clone(),
            writer: opts.writer(),
            // Late input: one try at the lock, then the spool.
            lock_deadline: if t.late {
                Instant::now()
            } else {
                t.deadline - reserve
            },
            render_by: t.deadline,
            locked: &locked,
            want_state: plan.want_state,
            extras: std::mem::take(&mut plan.memory.prepared.extras),
            notice: plan.memory.prepared.notice.clone(),
        };
        let claim = || {
            let (held, taken) = sh.claim(Claim::Worker);
            if let (true, Some(c)) = (taken, &opts.checkpoints) {
                c.claimed();
            }
            held
        };
        commit::commit(&req, &claim, diag)
    }

    /// Step 5: the worker's result from what the commit did: the reply, where the event
    /// went, and what is left for after the reply (step 6).
    fn settle(
        &self,
        plan: plan::Plan<'_>,
        result: crate::error::Result<commit::Committed>,
        mut diag: Vec<String>,
    ) {
        let cap = &*self.cap;
        let mut c = match result {
            Ok(c) => c,
            Err(e) => {
                diag.push(format!("{e}; the event is LOST"));
                let notice = format!("sjournal LOST this event: {e}");
                let reply = reply::lost(self.opts.host, cap.protocol, &notice);
                return self.sh.done(reply, None, AfterReply::default(), &mut diag);
            }
        };
        reply::describe(&c.written.landed, &mut diag);
        // The deadline bounds the work, not the answer: the context goes with the reply as
        // long as the host waits for it.
        let late = !reply::timely(self.t.host_gives_up);
        let event = cap.event.as_deref();
        let notice = match (c.notice.as_deref(), plan.memory.prepared.notice.as_deref()) {
            (Some(a), Some(b)) => Some(format!("{a} {b}")),
            (a, b) => a.or(b).map(str::to_owned),
        };
        let reply = reply::reply_with(cap.protocol, event, &c, cap, late, notice.as_deref());
        let state = plan.want_state.then(|| c.written.state.take()).flatten();
        let memory = plan.memory.after;
        let after = AfterReply {
            snapshot: c.written.snapshot_job(),
            memory: memory.map(|job| crate::memory::hook::AfterReply { job, state }),
            memory_planned: true,
            // Webhooks are told of events in the journal or spooled to it (a deliverer merges
            // the spool first); not of rescued ones, which the journal does not hold.
            notify_webhooks: matches!(
                c.written.landed,
                Landed::Journal { .. } | Landed::Spooled { .. }
            ),
            rebuild_snapshot: false,
        };
        self.sh
            .done(reply, Some(c.written.landed), after, &mut diag);
    }

    /// There is no root: the event is read and answered, with the notice that it was lost.
    fn lost(&self, why: &str, mut diag: Vec<String>) {
        if !self.sh.claim(Claim::Worker).0 {
            return self.sh.note(&mut diag);
        }
        diag.push(format!("{why}; the event is LOST"));
        let notice = format!("sjournal LOST this event: {why}");
        let reply = reply::lost(self.opts.host, self.cap.protocol, &notice);
        self.sh.done(reply, None, AfterReply::default(), &mut diag);
    }
}
