//! After the reply: what the hook does once the host has its answer, before the process
//! ends. The host is still waiting for the process to end, so nothing here waits past the
//! work's deadline either ([`HookOutcome::deadline`]; at once when the reply came after it):
//!
//! 1. webhooks: a deliverer is started for the session if a webhook wants the event
//!    (`crate::webhook::notify`: a lock probe and a process start, never a wait);
//! 2. the snapshot that is due, written from the state the commit folded (no lock);
//! 3. memory's write to a scope journal (`crate::memory::hook::after`), which waits for the
//!    scope journal's lock only until the deadline and past it spools its records, as the
//!    event's own write does;
//! 4. shipping at session end (`[remote] ship_on_session_end`), a detached `sjournal ship`;
//! 5. when the session's state could not be folded within the deadline (the watchdog took
//!    the event over while the worker folded), a detached `sjournal snapshot --detached`
//!    that rebuilds the session's snapshot off the hook's path, so the next events load from
//!    it instead of meeting the same fold (at most one runs per session);
//! 6. at the end of a turn or a session, a detached `sjournal search --update` when the root
//!    has a search index (`crate::search::spawn`).
//!
//! Each step's problems become diagnostics; the event is kept whatever happens here.

use std::process::{Command, Stdio};
use std::time::Instant;

use crate::hook::route::Captured;
use crate::hook::{HookOptions, HookOutcome};
use crate::journal::{Root, WriterOptions};
use crate::session::SnapshotJob;

/// What is left for after the reply (see the module docs).
#[derive(Debug, Default)]
pub struct AfterReply {
    /// A snapshot that is due (it only saves later loads time; a failure changes nothing).
    pub(crate) snapshot: Option<SnapshotJob>,
    /// The write to a scope journal, with the session's state as the commit folded it; None
    /// if the worker did not commit the event.
    pub(crate) memory: Option<crate::memory::hook::AfterReply>,
    /// The worker planned memory's part of this event: `memory` None then means there is
    /// nothing to write (false: the watchdog took the event over, and memory is planned
    /// here).
    pub(crate) memory_planned: bool,
    /// The worker committed the event to the journal or its spool: webhooks are told.
    pub(crate) notify_webhooks: bool,
    /// The session's state took longer than the deadline to fold: rebuild its snapshot.
    pub(crate) rebuild_snapshot: bool,
}

/// Does what is left after the reply; its diagnostics are added to `out`'s.
pub(super) fn run(opts: &HookOptions, out: &mut HookOutcome) {
    let after = std::mem::take(&mut out.after);
    let (Ok(root), Some(cap)) = (&opts.root, out.captured.clone()) else {
        return;
    };
    // Past the deadline (a reply that came after it), each wait is one try.
    let by = out.deadline.unwrap_or_else(Instant::now);
    let diag = &mut out.diagnostics;
    if after.notify_webhooks {
        crate::webhook::notify(
            root,
            opts.program.as_deref(),
            &opts.config.webhook,
            &cap.session_id,
            &cap.kind,
            by,
            diag,
        );
    }
    if let Some(job) = after.snapshot {
        if let Err(e) = job.run() {
            diag.push(format!("writing the snapshot failed: {e} (only a cache)"));
        }
    }
    let kept = out.landed.is_some();
    if kept {
        let writer = WriterOptions {
            deadline: Some(by),
            ..opts.config.writer_options()
        };
        let planned = (after.memory, after.memory_planned);
        if let Err(e) = memory(opts, root, &cap, planned, &writer) {
            diag.push(format!(
                "writing to the project's memory journal failed: {e}"
            ));
        }
        diag.extend(ship(root, opts, &cap));
    }
    if after.rebuild_snapshot {
        diag.push(rebuild_snapshot(opts, root, &cap.session_id));
    }
    if kept {
        diag.extend(search_update(root, opts, &cap));
    }
}

/// Starts the search index's detached update when the event ends a turn or the session (see
/// `crate::search::spawn`).
#[cfg(feature = "search")]
fn search_update(root: &Root, opts: &HookOptions, cap: &Captured) -> Option<String> {
    crate::search::spawn::after_event(
        root,
        opts.program.as_deref(),
        &cap.kind,
        cap.raw_json.as_deref(),
    )
}

#[cfg(not(feature = "search"))]
fn search_update(_: &Root, _: &HookOptions, _: &Captured) -> Option<String> {
    None
}

/// Memory's write: what the worker planned, with the session's state as the commit folded
/// it; when the watchdog took the event over, the event is planned here instead.
fn memory(
    opts: &HookOptions,
    root: &Root,
    cap: &Captured,
    (planned, was_planned): (Option<crate::memory::hook::AfterReply>, bool),
    writer: &WriterOptions,
) -> crate::error::Result<()> {
    use crate::memory::hook as mh;
    let (job, state) = match planned {
        Some(p) => (p.job, p.state),
        // Planned, and nothing to write.
        None if was_planned => return Ok(()),
        None => {
            let Some(raw) = cap.raw_json.as_deref() else {
                return Ok(());
            };
            if !mh::may_concern(cap.event.as_deref()) {
                return Ok(());
            }
            let dir = opts.env_project_dir.as_deref().map(std::path::Path::new);
            let plan = mh::plan_json(root, &cap.kind, raw, &cap.session_id, dir, None);
            match plan.after {
                Some(job) => (job, None),
                None => return Ok(()),
            }
        }
    };
    mh::after(root, &job, state.as_ref(), writer)
}

/// Starts the detached `sjournal ship` if the configuration asks for it and the event ends
/// its session (see `crate::remote::spawn`).
#[cfg(feature = "remote")]
fn ship(root: &Root, opts: &HookOptions, cap: &Captured) -> Option<String> {
    let ended = cap.raw_json.as_deref().is_some_and(|raw| {
        let raw = crate::event::lenient::text(raw);
        crate::event::Event::parse(&cap.kind, &raw).kind == crate::event::EventKind::SessionEnd
    });
    crate::remote::spawn::after_event(
        root,
        opts.program.as_deref(),
        &opts.config,
        &cap.session_id,
        ended,
    )
}

#[cfg(not(feature = "remote"))]
fn ship(_: &Root, _: &HookOptions, _: &Captured) -> Option<String> {
    None
}

/// Starts `sjournal snapshot --detached --session=ID`, unless one already runs for the
/// session (its lock is held). Returns what it did, for stderr.
fn rebuild_snapshot(opts: &HookOptions, root: &Root, session: &str) -> String {
    let why = "the session's state took longer than the deadline to fold";
    let started = (|| -> crate::error::Result<Option<u32>> {
        let paths = root.session(session)?;
        if !crate::snapshot::rebuild_lock_free(&paths)? {
            return Ok(None);
        }
        let exe = crate::storage::worker_program(opts.program.as_deref()).map_err(|why| {
            crate::error::Error::io("find", "the sjournal binary", std::io::Error::other(why))
        })?;
        let child = Command::new(&exe)
            .arg("--root")
            .arg(root.dir())
            .args(["snapshot", "--detached"])
            .arg(format!("--session={session}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| crate::error::Error::io("start", &exe, e))?;
        Ok(Some(child.id()))
    })();
    match started {
        Ok(Some(pid)) => format!(
            "{why}; rebuilding its snapshot off the hook's path (`sjournal snapshot`, pid {pid})"
        ),
        Ok(None) => format!("{why}; its snapshot is being rebuilt already"),
        Err(e) => format!(
            "{why}, and rebuilding its snapshot could not start ({e}); run `sjournal snapshot \
             --session {session}`"
        ),
    }
}
