//! Webhook handlers: `[[webhook]]` in `config.toml` POSTs matching events, exactly as
//! journaled, to a URL, off the hook's path.
//!
//! The hook never sends anything. After it has committed an event, if a webhook matches the
//! event's kind, [`notify`] makes sure a deliverer runs for the session: it probes the
//! session's delivery lock and, if nobody holds it, starts `sjournal webhook deliver
//! --session ID --detached` (its own session, stdio on /dev/null, not waited for). The event
//! itself is the outbox entry ([`outbox`]); the deliverer ([`deliver`]) sends it with retries
//! and journals every attempt as a `sjournal.webhook` record (its fields are in
//! `journal-format.md`, "System records"). So a dead or hanging endpoint costs the hook
//! nothing but the probe, and at most one process start per event.
//!
//! Guarantees: at-least-once delivery of every matching event in the session's journal, in
//! seq order per webhook, each POST carrying an `Idempotency-Key` (session, seq, record hash)
//! that is the same for every attempt, so a receiver can drop repeats.
//!
//! # The journal is the outbox
//!
//! An event is **owed** to a webhook when its record is an event (not `sjournal.*`) whose
//! kind the webhook's `events` names (or `*`), and no `sjournal.webhook` record for that
//! webhook with `outcome = delivered` and `event_seq` = the event's seq follows it. There is
//! no separate outbox file: neither a second append-only queue written by the hook, nor a copy
//! of the event in a spool-like file per delivery, because:
//!
//! - **The hook's path stays as it is.** A separate outbox would be a second durable write
//!   (and `fsync`) per matching event on the hook's critical path, or a non-durable one that
//!   could lose deliveries. The event's own journal write already makes the outbox entry
//!   durable.
//! - **The body is what was journaled, by construction.** The deliverer reads the event's
//!   payload from the journal and sends those bytes; there is no second copy to drift. An
//!   event erased (`sjournal erase`) before its delivery is sent as what is left of it: the
//!   JSON without the erased field, or `null` for a whole payload (the kind and seq headers
//!   still say which event it was).
//! - **Spooled and rescued events need no special case.** A spooled event becomes owed when it
//!   is merged (the deliverer opens a writer first, which merges the spool). Events in a
//!   rescue journal are not delivered: the main journal is damaged, and the deliverer cannot
//!   journal its attempts there either; they wait for the repair.
//! - **The delivery log is audited with the events.** `sjournal.webhook` records are in the
//!   same CRC-checked, hash-chained journal as the events they report on; `verify`, `export`
//!   and checkpoints cover them.
//!
//! The cost is a scan of the journal to find owed events; the cursor (below) makes it a scan
//! of what is new.
//!
//! The deliverer writes its record after each attempt, one record per attempt, appended like
//! any record (the session's writer lock, `fdatasync`, group commit with the hooks). The
//! record follows the POST, so **delivery is at-least-once**: a deliverer that dies after the
//! endpoint received the event and before the `delivered` record is durable leaves the event
//! owed, and the next run sends it again with the same key (and a higher `attempt`, counted
//! from the records that did reach the journal). An attempt cut short by a crash leaves no
//! record. No header value and no expanded variable is ever journaled ([`redact`]).
//!
//! Each record's fields mean: `attempt` counts 1, 2, ... per (webhook, event) across
//! deliverer runs, from the records that reached the journal; `status` is the HTTP status if an
//! answer came; `response` the first 256 bytes of a failed answer's body; `retry_in_ms` the
//! backoff before this run's next attempt, nil when this run stops retrying (attempts spent, or
//! a failure a retry cannot fix) and the event stays owed.
//!
//! # The state directory `<stem>.webhook/`
//!
//! Beside the journal, 0700:
//!
//! - `deliver.lock`: an `flock` held by the session's one deliverer while it delivers. It
//!   holds the pid of the last deliverer that took it (emptied on a clean exit), which
//!   `webhook status` reads; status never takes the lock.
//! - `<name>.cursor`: JSON, per webhook:
//!   `{offset, next_seq, prev_hash (hex), delivered, last, last_failure}`. Every owed event's
//!   record starts at or after `offset`; `next_seq` and `prev_hash` are the chain state there
//!   (the seq and `prev_hash` the record at `offset` must carry); `delivered` counts events
//!   delivered before `offset`; `last` and `last_failure` summarize the latest attempts for
//!   `status`. It is a **hint**, like the journal's tail hint: a scan resumes from it only if
//!   `offset` is within the file and the record there passes the chain check against
//!   `next_seq` and `prev_hash`; otherwise the scan starts at the header. It is replaced by
//!   renaming a temporary file, without `fsync`, and only ever moved past an event after that
//!   event's `delivered` record was appended: a lost or stale cursor costs a longer scan,
//!   never a delivery.
//!
//! The directory is created by the hook the first time an event of the session matches a
//! webhook; `webhook deliver --all` and `webhook status` visit only sessions that have one.
//!
//! # Who delivers, and why nothing is stranded
//!
//! 1. The hook commits its event, then — only if a webhook matches the event's kind and the
//!    hook's deadline has not passed — `try`-locks `deliver.lock` without waiting. If it got
//!    the lock, it releases it and starts `sjournal webhook deliver --session=ID --detached`
//!    (stdio on `/dev/null`; the child calls `setsid` first); if not, a deliverer is running.
//! 2. A deliverer takes the lock (waiting at most `WEBHOOK_LOCK_WAIT_MS`, 50 ms, since a
//!    hook's probe holds it for an instant); if another deliverer holds it, it exits.
//! 3. Holding it, it merges the spool, then per webhook (one thread each) scans from the
//!    cursor and POSTs the owed events in seq order, each attempt journaled, with an
//!    exponential backoff (`backoff_ms`, doubled per failure, at most `max_backoff_ms`)
//!    between the attempts of an event. After `attempts` failures of one event it stops that
//!    webhook for this run.
//! 4. It releases the lock and **scans again**. An event committed by a hook that found the
//!    lock held was committed before that hook's probe, so before this release, and this scan
//!    sees it. If a webhook that did not stop is owed anything, it takes the lock again (or
//!    leaves it to the deliverer that took it meanwhile, which scans after taking it).
//!
//! A webhook that stopped for this run keeps its events owed; they go out with the next
//! deliverer, which the next matching event starts, or with `sjournal webhook deliver --all`.

pub mod deliver;
pub mod http;
pub mod outbox;
pub mod redact;
pub mod status;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

pub use crate::config::webhook::WebhookHandler;

use crate::error::{Error, Result};
use crate::format::payload::is_system_kind;
use crate::journal::Root;

/// What [`notify`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Notified {
    /// No webhook wants this kind of event.
    NotWanted,
    /// A deliverer holds the session's lock; it will see the event.
    Running,
    /// Started a deliverer (its pid).
    Started(u32),
    /// The hook's deadline had passed: no deliverer was started. The event waits in the
    /// journal for the next event's deliverer or `sjournal webhook deliver --all`.
    PastDeadline,
}

/// The hook's one call, after the event of `kind` is committed: if a webhook wants it, makes
/// sure a deliverer runs for the session, without waiting for anything. Problems become
/// diagnostics; the event is in the journal whatever happens here.
pub fn notify(
    root: &Root,
    program: Option<&Path>,
    hooks: &[WebhookHandler],
    session_id: &str,
    kind: &str,
    deadline: Instant,
    diag: &mut Vec<String>,
) -> Notified {
    if is_system_kind(kind) || !hooks.iter().any(|h| h.matches(kind)) {
        return Notified::NotWanted;
    }
    match start_deliverer(root, program, session_id, deadline) {
        Ok(Notified::PastDeadline) => {
            diag.push(
                "webhook: the hook's deadline passed before a deliverer could be started; the \
                 event waits in the journal for the next event's deliverer or \
                 `sjournal webhook deliver --all`"
                    .into(),
            );
            Notified::PastDeadline
        }
        Ok(n) => n,
        Err(e) => {
            diag.push(format!(
                "webhook: could not start the deliverer ({e}); the event waits in the journal \
                 for the next event's deliverer or `sjournal webhook deliver --all`"
            ));
            Notified::NotWanted
        }
    }
}

fn start_deliverer(
    root: &Root,
    program: Option<&Path>,
    session_id: &str,
    deadline: Instant,
) -> Result<Notified> {
    // Past the deadline the hook does nothing more here, not even the directory.
    if Instant::now() >= deadline {
        return Ok(Notified::PastDeadline);
    }
    let paths = root.session(session_id)?;
    // Also marks the session as subscribed (`deliver --all` visits it).
    let dir = outbox::ensure_state_dir(root, &paths)?;
    if !outbox::lock_is_free(&dir)? {
        return Ok(Notified::Running);
    }
    let exe = crate::storage::worker_program(program)
        .map_err(|why| Error::io("find", "the sjournal binary", std::io::Error::other(why)))?;
    let child = spawn_detached(&exe, root.dir(), session_id)?;
    Ok(Notified::Started(child))
}

/// Starts `sjournal webhook deliver` for the session, detached: stdio on /dev/null, and it
/// moves itself into a session of its own (`--detached`), so neither the host's wait for the
/// hook's output nor a signal to the hook's process group reaches it. Not waited for: when the
/// hook exits, init adopts it.
fn spawn_detached(exe: &Path, root: &Path, session_id: &str) -> Result<u32> {
    let child = Command::new(exe)
        .arg("--root")
        .arg(root)
        .args(["webhook", "deliver", "--detached"])
        .arg(format!("--session={session_id}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::io("start", exe, e))?;
    Ok(child.id())
}

/// Called first by a detached worker (webhook deliverer, snapshot writer, search index
/// update): leaves the hook's session and process group, and takes the lowest CPU priority
/// (nice 19), so that work nobody waits for yields the cores to the host and its next hooks
/// (BENCHMARKS.md: the hook with a search index in the root).
pub fn detach() {
    let _ = rustix::process::setsid();
    let _ = rustix::process::setpriority_process(None, 19);
}
