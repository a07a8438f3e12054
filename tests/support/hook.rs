//! The hook run in-process, in the shape that ships ([`run_hook`]): options, and [`Stall`],
//! the `Checkpoints` seam that records where the hook's two threads got to and holds them
//! there, so races run the same way on every machine (released by the other thread's
//! checkpoints, never by clocks).

use std::io::Read;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use sjournal::config::Config;
use sjournal::hook::{self, Checkpoints, Deliver, HookOptions, HookOutcome, InputReady};
use sjournal::host::HostFlag;
use sjournal::journal::Root;

/// The tests' [`Deliver`]: the outcome goes on a channel, and the thread that delivered it
/// parks, where the binary's would end the process.
struct Channel(mpsc::Sender<HookOutcome>);

impl Deliver for Channel {
    fn reply(&mut self, _stdout: Option<&str>) {}

    fn finish(self: Box<Self>, out: HookOutcome) -> ! {
        let _ = self.0.send(out);
        loop {
            std::thread::park();
        }
    }
}

/// Runs one hook in-process as the binary does (`hook::run`: the work on the calling thread,
/// here a thread of the test's, and the watchdog on its own), and returns the outcome it
/// delivered, the work after the reply done. The hook's threads stay parked afterwards, as
/// they would until the process exits.
pub fn run_hook(opts: HookOptions, input: impl Read + Send + 'static) -> HookOutcome {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("sjournal-hook".into())
        .spawn(move || hook::run(opts, input, Channel(tx)))
        .expect("a thread for the hook");
    rx.recv().expect("the hook delivers its outcome")
}

/// [`HookOptions::new`] for an in-process hook: the processes it starts after its reply run
/// the built `sjournal`, not the test binary.
pub fn hook_options(
    root: &Root,
    host: HostFlag,
    deadline: Duration,
    config: Config,
) -> HookOptions {
    HookOptions {
        program: Some(crate::support::bin().into()),
        ..HookOptions::new(root.clone(), host, deadline, config)
    }
}

/// Only a guard against hanging forever if the hook never reaches a checkpoint (the test
/// then fails on what it finds); the interleaving itself never depends on it.
pub const SAFETY: Duration = Duration::from_secs(60);

/// In-process hook options: host detected, default configuration, and in-memory input that
/// is always ready to be read however late the worker gets to it.
pub fn hook_opts(root: &Root, deadline: Duration) -> HookOptions {
    HookOptions {
        input_ready: Some(InputReady(Arc::new(|| true))),
        ..hook_options(root, HostFlag::Auto, deadline, Config::default())
    }
}

/// True if one of the hook's diagnostics contains `what`.
pub fn said(out: &HookOutcome, what: &str) -> bool {
    out.diagnostics.iter().any(|d| d.contains(what))
}

/// Records the checkpoints reached and holds threads at them as configured.
#[derive(Debug, Default)]
pub struct Stall {
    seen: Mutex<Vec<&'static str>>,
    cv: Condvar,
    /// The watchdog, at its deadline, waits until the worker has claimed the event.
    pub deadline_waits_for_claim: bool,
    /// The worker, having claimed the event, waits until the watchdog's grace has passed.
    pub claim_waits_for_overdue: bool,
    /// The worker, holding the session's lock, waits until the watchdog took the event over.
    pub locked_waits_for_takeover: bool,
    /// The worker panics while it holds the session's lock (a bug in the write path).
    pub locked_panics: bool,
}

impl Stall {
    pub fn new(configure: impl FnOnce(&mut Stall)) -> Arc<Stall> {
        let mut s = Stall::default();
        configure(&mut s);
        Arc::new(s)
    }

    fn mark(&self, what: &'static str) {
        self.seen.lock().unwrap().push(what);
        self.cv.notify_all();
    }

    pub fn wait_for(&self, what: &str) {
        let end = Instant::now() + SAFETY;
        let mut seen = self.seen.lock().unwrap();
        while !seen.contains(&what) && Instant::now() < end {
            seen = self.cv.wait_timeout(seen, SAFETY).unwrap().0;
        }
    }

    pub fn saw(&self, what: &str) -> bool {
        self.seen.lock().unwrap().contains(&what)
    }
}

impl Checkpoints for Stall {
    fn deadline_passed(&self) {
        self.mark("deadline_passed");
        if self.deadline_waits_for_claim {
            self.wait_for("claimed");
        }
    }
    fn locked(&self) {
        self.mark("locked");
        if self.locked_panics {
            panic!("a bug in the write path");
        }
        if self.locked_waits_for_takeover {
            self.wait_for("taken_over");
        }
    }
    fn claimed(&self) {
        self.mark("claimed");
        if self.claim_waits_for_overdue {
            self.wait_for("write_overdue");
        }
    }
    fn taken_over(&self) {
        self.mark("taken_over");
    }
    fn write_overdue(&self) {
        self.mark("write_overdue");
    }
    fn input_overdue(&self) {
        self.mark("input_overdue");
    }
}

/// The options with `stall` as the checkpoints.
pub fn stalled(mut opts: HookOptions, stall: &Arc<Stall>) -> HookOptions {
    opts.checkpoints = Some(stall.clone() as Arc<dyn Checkpoints>);
    opts
}
