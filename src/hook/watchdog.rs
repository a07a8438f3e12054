//! The hook's watchdog: the state the worker and the watchdog share ([`Shared`]), the claim
//! that makes exactly one of them write the event, and what the watchdog does when the
//! deadline passes with the worker unfinished.
//!
//! - Until the earliest deadline (the start plus the deadline: input that was there at once)
//!   the watchdog only sleeps; a worker that finishes first ends the process.
//! - Stdin has not been read in full: once a first byte has arrived, the watchdog waits for
//!   the rest until the input time limit, then keeps what arrived. Before any byte, it waits
//!   `HOOK_STDIN_GRACE_MS` past the deadline, then as long as stdin is ready to be read (a
//!   starved reading thread); otherwise the host has not written and there is no event.
//! - The input came later: the work's deadline counts from when it was complete
//!   (`plan::Timing`); the watchdog waits until then. Late input (too close to the host's
//!   timeout for any work) is given `HOOK_COMMIT_GRACE_MS` to be claimed.
//! - Past the work's deadline, an event the worker has not claimed is claimed by the
//!   watchdog and spooled (the worker then writes nothing). If the worker was folding the
//!   session's state then (it held the session's lock to render context), the state's
//!   snapshot is rebuilt off the hook's path after the reply (`after`), or every later event
//!   would meet the same fold.
//! - The worker claimed the event: its write is under way; the watchdog waits for it however
//!   long it takes (see the module docs of `hook`), noting it past `HOOK_COMMIT_GRACE_MS`.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::hook::after::AfterReply;
use crate::hook::commit;
use crate::hook::plan::Timing;
use crate::hook::read::Received;
use crate::hook::reply::{self, protocol_of};
use crate::hook::route::{self, Captured};
use crate::hook::{HookOptions, HookOutcome};
use crate::limits::{HOOK_COMMIT_GRACE_MS, HOOK_STDIN_GRACE_MS};
use crate::session::Landed;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    Free,
    Worker,
    Watchdog,
}

pub(super) struct State {
    /// Stdin so far, while it is being read (taken by the worker once the input is complete,
    /// or by the watchdog when the input time limit passes first).
    received: Option<Received>,
    /// At least one byte of stdin has arrived.
    first_byte: bool,
    captured: Option<Arc<Captured>>,
    /// When the captured event's work must be done.
    timing: Option<Timing>,
    pub(super) claim: Claim,
    /// The worker holds the session's lock and folds the session's state (then renders,
    /// claims and writes).
    folding: bool,
    finished: bool,
    /// One thread has begun delivering the outcome (`super::run`): the other one delivers
    /// nothing, and the worker can no longer claim the event.
    delivering: bool,
    reply: Option<String>,
    pub(super) landed: Option<Landed>,
    after: AfterReply,
    pub(super) diag: Vec<String>,
    /// The watchdog is past the earliest deadline, where it may wait for the capture. Before
    /// that it waits for `finished` alone, so a capture does not wake it: each wake-up of the
    /// other thread costs the hook a cross-CPU hand-over (BENCHMARKS.md, "Speed mechanisms":
    /// C entry point, measured with it).
    watching: bool,
}

/// What the worker and the watchdog share: the [`State`], and the condition variable the
/// watchdog waits on.
#[derive(Clone)]
pub(crate) struct Shared {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    pub(super) fn new() -> Shared {
        let state = State {
            received: Some(Received::default()),
            first_byte: false,
            captured: None,
            timing: None,
            claim: Claim::Free,
            folding: false,
            finished: false,
            delivering: false,
            reply: None,
            landed: None,
            after: AfterReply::default(),
            diag: Vec::new(),
            watching: false,
        };
        Shared {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                changed: Condvar::new(),
            }),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn notify(&self) {
        self.inner.changed.notify_all();
    }

    /// Claims the event for `who`. Returns (whether `who` holds it, whether it just took it).
    pub(super) fn claim(&self, who: Claim) -> (bool, bool) {
        let mut st = self.lock();
        let taken = st.claim == Claim::Free && !st.delivering;
        if taken {
            st.claim = who;
        }
        (st.claim == who, taken)
    }

    /// Adds bytes read from stdin. None if the watchdog has taken the input over; else
    /// whether they complete one JSON value (`read`). (No wake-up: the watchdog looks at
    /// `first_byte` only once the deadline has passed.)
    pub(crate) fn received(&self, chunk: &[u8]) -> Option<bool> {
        let mut st = self.lock();
        st.first_byte = true;
        let r = st.received.as_mut()?;
        r.push(chunk);
        Some(r.value_complete())
    }

    /// The whole input, complete now; None if the watchdog took it over.
    pub(crate) fn take_received(&self) -> Option<Received> {
        let mut r = self.lock().received.take()?;
        r.complete();
        Some(r)
    }

    /// The worker made its record, to be done by `timing`.
    pub(super) fn captured(&self, cap: Arc<Captured>, timing: Timing, diag: &mut Vec<String>) {
        let mut st = self.lock();
        st.captured = Some(cap);
        st.timing = Some(timing);
        st.diag.append(diag);
        if st.watching {
            self.notify();
        }
    }

    /// The worker holds the session's lock and is about to fold the session's state.
    pub(super) fn folding(&self) {
        self.lock().folding = true;
    }

    pub(super) fn note(&self, diag: &mut Vec<String>) {
        self.lock().diag.append(diag);
    }

    /// The worker's result.
    pub(super) fn done(
        &self,
        reply: Option<String>,
        landed: Option<Landed>,
        after: AfterReply,
        diag: &mut Vec<String>,
    ) {
        let mut st = self.lock();
        st.diag.append(diag);
        st.reply = reply;
        st.landed = landed;
        st.after = after;
    }

    /// The outcome as the worker left it.
    pub(super) fn outcome(&self, timed_out: bool) -> HookOutcome {
        outcome(&mut self.lock(), timed_out)
    }

    /// The worker is done (`super::run`): its outcome, to deliver, if it settles the hook.
    /// None if the watchdog has the event (it took it over, or the worker left it unclaimed
    /// by a panic) or is already delivering: the watchdog is woken to settle it. Without a
    /// wake-up when the worker settles it: the watchdog is not waited for. Past the work's
    /// deadline (`fallback` when no input came) the outcome says so (the event's write was
    /// under way then: the watchdog waited for it, as it does whatever the disk takes).
    pub(super) fn worker_settles(&self, fallback: Instant) -> Option<HookOutcome> {
        let mut st = self.lock();
        st.finished = true;
        let abandoned = st.claim == Claim::Free && st.captured.is_some();
        if st.claim == Claim::Watchdog || abandoned || st.delivering {
            drop(st);
            self.notify();
            return None;
        }
        st.delivering = true;
        let deadline = st.timing.map_or(fallback, |t| t.deadline);
        let late = Instant::now() > deadline && st.claim == Claim::Worker;
        if late {
            st.diag
                .push("the hook finished after its deadline (a write was under way)".into());
        }
        Some(outcome(&mut st, late))
    }

    /// The watchdog settled the hook with `out`: Some(out) to deliver, unless the worker
    /// already is delivering its own.
    pub(super) fn watchdog_settles(&self, out: HookOutcome) -> Option<HookOutcome> {
        let mut st = self.lock();
        (!std::mem::replace(&mut st.delivering, true)).then_some(out)
    }

    /// Waits until `done` holds or `until` passes (None: no limit); returns the state, locked.
    fn wait_until(
        &self,
        until: Option<Instant>,
        done: impl Fn(&State) -> bool,
    ) -> MutexGuard<'_, State> {
        let cv = &self.inner.changed;
        let mut st = self.lock();
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
}

fn outcome(st: &mut State, timed_out: bool) -> HookOutcome {
    HookOutcome {
        stdout: st.reply.take(),
        diagnostics: std::mem::take(&mut st.diag),
        landed: st.landed.take(),
        timed_out,
        captured: st.captured.clone(),
        deadline: st.timing.map(|t| t.deadline),
        after: std::mem::take(&mut st.after),
    }
}

/// The watchdog: sleeps until the earliest deadline, then waits for the input and for the
/// work's own deadline, and takes over as needed (see the module docs).
pub(super) fn watch(sh: &Shared, opts: &HookOptions, start: Instant) -> HookOutcome {
    let grace = Duration::from_millis(HOOK_COMMIT_GRACE_MS);
    let mut st = sh.wait_until(Some(start + opts.deadline), |st| st.finished);
    // Set under the same lock as the check: a capture after this wakes the watchdog, and one
    // before it is in `st`.
    st.watching = true;
    if !st.finished && st.captured.is_none() {
        drop(st);
        st = wait_for_input(sh, opts, start);
    }
    // The work's own deadline, counted from its input; late input only gets the grace to
    // claim the event (the worker waits for nothing then).
    if let (false, Some(t), Claim::Free) = (st.finished, st.timing, st.claim) {
        if t.late {
            drop(st);
            st = sh.wait_until(Some(Instant::now().max(t.input_done) + grace), |st| {
                st.finished || st.claim != Claim::Free
            });
        } else if Instant::now() < t.deadline {
            drop(st);
            st = sh.wait_until(Some(t.deadline), |st| st.finished);
        }
    }
    if let (false, Some(c)) = (st.finished, &opts.checkpoints) {
        drop(st);
        c.deadline_passed();
        st = sh.lock();
    }
    // A worker that finished without claiming the event it read (it panicked) left it to us.
    let abandoned = st.finished && st.claim == Claim::Free && st.captured.is_some();
    if st.finished && !abandoned {
        let late = st.timing.is_some_and(|t| t.late);
        return outcome(&mut st, late);
    }
    // The input time limit passed while stdin was still arriving: keep what arrived.
    if st.captured.is_none() && st.received.is_some() && st.first_byte && st.claim == Claim::Free {
        st.claim = Claim::Watchdog;
        let mut received = st.received.take().unwrap_or_default();
        let mut diag = std::mem::take(&mut st.diag);
        drop(st);
        received.redact(opts);
        let limit_ms = opts.input_limit().as_millis() as u64;
        let reason = format!(
            "the input time limit ({limit_ms} ms) passed while stdin was still arriving: the {} \
             bytes that arrived are kept, the rest was not read",
            received.total
        );
        let env = |k: &str| {
            (k == "CLAUDE_CODE_SESSION_ID")
                .then(|| opts.env_session_id.clone())
                .flatten()
        };
        let cap = route::capture_partial(
            received,
            reason.clone(),
            limit_ms,
            opts.host,
            &env,
            &mut diag,
        );
        let taken = TakeOver {
            reason: &reason,
            timed_out: true,
            rebuild_snapshot: false,
            deadline: None,
        };
        return take_over(opts, Arc::new(cap), diag, taken);
    }
    match (st.captured.clone(), st.claim) {
        (Some(cap), Claim::Free) => {
            st.claim = Claim::Watchdog;
            let diag = std::mem::take(&mut st.diag);
            let (folding, deadline) = (st.folding, st.timing.map(|t| t.deadline));
            drop(st);
            let reason = if abandoned {
                "the hook failed internally before the journal took the event".to_owned()
            } else {
                format!(
                    "the hook's deadline ({} ms) passed before the journal took the event",
                    opts.deadline.as_millis()
                )
            };
            let taken = TakeOver {
                reason: &reason,
                timed_out: !abandoned,
                rebuild_snapshot: folding && !abandoned,
                deadline,
            };
            take_over(opts, cap, diag, taken)
        }
        (_, Claim::Worker) => {
            // The worker claimed the event and is writing it: wait for the write, however
            // long the disk takes (see the module docs for why it is never cut).
            drop(st);
            let mut st = sh.wait_until(Some(Instant::now() + grace), |st| st.finished);
            let overdue = !st.finished;
            if overdue {
                drop(st);
                if let Some(c) = &opts.checkpoints {
                    c.write_overdue();
                }
                st = sh.wait_until(None, |st| st.finished);
            }
            st.diag.push(if overdue {
                format!(
                    "the event's write was still under way {HOOK_COMMIT_GRACE_MS} ms after the \
                     deadline (a slow disk or a starved thread); waited for it rather than lose \
                     the event"
                )
            } else {
                "the hook finished after its deadline (a write was under way)".into()
            });
            outcome(&mut st, true)
        }
        (_, _) => {
            let mut diag = std::mem::take(&mut st.diag);
            diag.push(format!(
                "no event on stdin within the deadline ({} ms) and {HOOK_STDIN_GRACE_MS} ms more, \
                 and stdin has nothing waiting to be read; nothing was recorded",
                opts.deadline.as_millis()
            ));
            HookOutcome {
                stdout: protocol_of(opts.host, None).and_then(|p| p.fail_open_reply()),
                diagnostics: diag,
                landed: None,
                timed_out: true,
                captured: None,
                deadline: None,
                after: AfterReply::default(),
            }
        }
    }
}

/// Settles the hook when no watchdog thread could be started, once the work has run on the
/// calling thread: what the watchdog does with a finished worker, at once. An event the
/// worker read and then abandoned (a panic) is spooled, as the watchdog would.
pub(super) fn settle_alone(shared: &Shared, opts: &HookOptions, start: Instant) -> HookOutcome {
    shared.lock().finished = true;
    watch(shared, opts, start)
}

/// How the watchdog came to take an event over.
struct TakeOver<'a> {
    reason: &'a str,
    timed_out: bool,
    /// The worker was folding the session's state when the deadline passed.
    rebuild_snapshot: bool,
    /// The work's deadline (None: the input never completed).
    deadline: Option<Instant>,
}

/// The watchdog writes the event it claimed: spooled (or, failing that, in the fallback
/// spool), and answers with the fail-open reply plus any notice the user must see.
fn take_over(
    opts: &HookOptions,
    cap: Arc<Captured>,
    mut diag: Vec<String>,
    how: TakeOver<'_>,
) -> HookOutcome {
    if let Some(c) = &opts.checkpoints {
        c.taken_over();
    }
    let reason = how.reason;
    let protocol = protocol_of(opts.host, cap.protocol);
    let spooled = match &opts.root {
        Ok(root) => {
            commit::spool_captured(root, &cap, reason, &opts.writer()).map_err(|e| e.to_string())
        }
        Err(why) => Err(why.clone()),
    };
    let (landed, notice) = match spooled {
        Ok(landed) => {
            let (files, fallback) = match &landed {
                Landed::Spooled {
                    files, fallback, ..
                } => (files.clone(), *fallback),
                _ => (Vec::new(), false),
            };
            diag.push(format!(
                "{reason}; spooled to {}{} (merged by the next writer or reader)",
                files
                    .first()
                    .map(|f| f.display().to_string())
                    .unwrap_or_default(),
                if fallback {
                    " (the FALLBACK spool, outside the root: less durable)"
                } else {
                    ""
                }
            ));
            let notice = reply::notice(Some(&landed), &cap);
            (Some(landed), notice)
        }
        Err(e) => {
            diag.push(format!(
                "{reason}, and keeping it failed: {e}; the event is LOST"
            ));
            (None, Some(format!("sjournal LOST this event: {e}")))
        }
    };
    HookOutcome {
        stdout: protocol.and_then(|p| p.reply_with_notice(None, None, notice.as_deref())),
        diagnostics: diag,
        landed,
        timed_out: how.timed_out,
        captured: Some(cap),
        deadline: how.deadline,
        after: AfterReply {
            rebuild_snapshot: how.rebuild_snapshot,
            ..AfterReply::default()
        },
    }
}

/// Past the deadline with stdin not read in full. Once a byte has arrived, the rest is waited
/// for until the input time limit. Before that, hosts write the event and close stdin at
/// once, so an unread stdin is normally a starved thread, not a stuck host: wait the stdin
/// grace, then keep waiting as long as stdin is ready to be read. Returns the state once the
/// event is captured, the worker finished, the input time limit passed, or stdin has nothing
/// (the host has not written: there is no event to keep).
fn wait_for_input<'a>(
    shared: &'a Shared,
    opts: &HookOptions,
    start: Instant,
) -> MutexGuard<'a, State> {
    let input_done = |st: &State| st.finished || st.captured.is_some();
    let input_limit = start + opts.input_limit();
    let mut until = start + opts.deadline + Duration::from_millis(HOOK_STDIN_GRACE_MS);
    let mut noted = false;
    loop {
        let st = shared.wait_until(Some(until), input_done);
        if input_done(&st) {
            return st;
        }
        if st.first_byte {
            // Still arriving: wait for the rest until the limit. Already read in full (the
            // worker is parsing it): wait for the capture.
            let reading = st.received.is_some();
            if reading && Instant::now() >= input_limit {
                return st;
            }
            until = if reading {
                input_limit
            } else {
                Instant::now() + Duration::from_millis(HOOK_STDIN_GRACE_MS)
            };
            continue;
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

#[cfg(test)]
mod tests {
    //! Who delivers the outcome in `run`: exactly one of the worker and the
    //! watchdog, and never the worker once the watchdog has the event or has begun to deliver
    //! (then the worker cannot claim the event either).

    use super::*;

    fn captured() -> Arc<Captured> {
        Arc::new(Captured {
            session_id: "s".into(),
            kind: "PostToolUse".into(),
            payload: Vec::new(),
            raw_json: None,
            event: None,
            protocol: None,
            detected: None,
            cut: None,
            incomplete: None,
            redacted: None,
        })
    }

    /// A deadline that has not passed.
    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    fn with_event() -> Shared {
        with_event_due(Duration::from_secs(60))
    }

    /// An event whose work is due `budget` after now.
    fn with_event_due(budget: Duration) -> Shared {
        let sh = Shared::new();
        let now = Instant::now();
        let t = Timing::new(now, now, budget, None, None);
        sh.captured(captured(), t, &mut Vec::new());
        sh
    }

    /// Out of threads (no watchdog), the worker panicked after reading its event: the event
    /// is spooled on the calling thread, not dropped.
    #[test]
    fn without_a_watchdog_an_event_the_worker_abandoned_is_spooled() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::journal::Root::new(dir.path());
        let opts = HookOptions::new(
            root.clone(),
            crate::host::HostFlag::Auto,
            Duration::from_secs(60),
            Default::default(),
        );
        let sh = with_event();
        let out = settle_alone(&sh, &opts, Instant::now());
        assert!(
            matches!(out.landed, Some(Landed::Spooled { .. })),
            "{:?}",
            out.landed
        );
        assert!(
            out.diagnostics
                .iter()
                .any(|d| d.contains("failed internally")),
            "{:?}",
            out.diagnostics
        );
        assert_eq!(crate::journal::spool::pending(&root, "s").unwrap().len(), 1);
        // A worker that wrote its event is settled as it left it.
        let sh = with_event();
        assert_eq!(sh.claim(Claim::Worker), (true, true));
        sh.done(
            Some("reply".into()),
            None,
            AfterReply::default(),
            &mut Vec::new(),
        );
        let out = settle_alone(&sh, &opts, Instant::now());
        assert_eq!(out.stdout.as_deref(), Some("reply"));
        assert_eq!(crate::journal::spool::pending(&root, "s").unwrap().len(), 1);
    }

    #[test]
    fn a_worker_that_wrote_the_event_delivers_and_the_watchdog_then_does_not() {
        let sh = with_event();
        assert_eq!(sh.claim(Claim::Worker), (true, true));
        sh.done(
            Some("reply".into()),
            None,
            AfterReply::default(),
            &mut Vec::new(),
        );
        let out = sh.worker_settles(far()).expect("the worker settles it");
        assert_eq!(out.stdout.as_deref(), Some("reply"));
        let late = HookOutcome {
            stdout: Some("watchdog".into()),
            ..sh.outcome(true)
        };
        assert!(sh.watchdog_settles(late).is_none());
    }

    #[test]
    fn a_worker_whose_event_was_taken_over_leaves_the_delivery_to_the_watchdog() {
        let sh = with_event();
        assert_eq!(sh.claim(Claim::Watchdog), (true, true));
        assert_eq!(sh.claim(Claim::Worker), (false, false));
        assert!(sh.worker_settles(far()).is_none());
        assert!(sh.watchdog_settles(sh.outcome(true)).is_some());
    }

    #[test]
    fn an_event_left_unclaimed_by_a_panic_is_the_watchdogs_to_settle() {
        let sh = with_event();
        assert!(sh.worker_settles(far()).is_none());
        assert!(sh.watchdog_settles(sh.outcome(false)).is_some());
    }

    #[test]
    fn once_the_watchdog_delivers_the_worker_can_no_longer_claim_the_event() {
        let sh = with_event();
        assert!(sh.watchdog_settles(sh.outcome(true)).is_some());
        assert_eq!(sh.claim(Claim::Worker), (false, false));
        assert!(sh.worker_settles(far()).is_none());
    }

    #[test]
    fn a_worker_that_wrote_the_event_after_the_deadline_says_so() {
        let sh = with_event_due(Duration::ZERO);
        assert_eq!(sh.claim(Claim::Worker), (true, true));
        let out = sh
            .worker_settles(Instant::now())
            .expect("the worker settles it");
        assert!(out.timed_out);
        assert!(
            out.diagnostics[0].contains("after its deadline"),
            "{:?}",
            out.diagnostics
        );
    }

    #[test]
    fn a_worker_that_read_no_event_delivers_its_outcome() {
        let sh = Shared::new();
        sh.note(&mut vec!["nothing was read".into()]);
        let out = sh
            .worker_settles(far())
            .expect("no event: the worker settles it");
        assert_eq!(out.diagnostics, ["nothing was read"]);
    }
}
