//! Webhook handlers: `[[webhook]]` in `config.toml` POSTs matching events, exactly as
//! journaled, to a URL, off the hook's path.
//!
//! The hook never sends anything. After it has committed an event, if a webhook matches the
//! event's kind, [`notify`] makes sure a deliverer runs for the session: it probes the
//! session's delivery lock and, if nobody holds it, starts `sjournal webhook deliver
//! --session ID --detached` (its own session, stdio on /dev/null, not waited for). The event
//! itself is the outbox entry ([`outbox`]); the deliverer ([`deliver`]) sends it with retries
//! and journals every attempt as a `sjournal.webhook` record. So a dead or hanging endpoint
//! costs the hook nothing but the probe, and at most one process start per event.
//!
//! Guarantees: at-least-once delivery of every matching event in the session's journal, in
//! seq order per webhook, each POST carrying an `Idempotency-Key` (session, seq, record hash)
//! that is the same for every attempt, so a receiver can drop repeats.

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
    hooks: &[WebhookHandler],
    session_id: &str,
    kind: &str,
    deadline: Instant,
    diag: &mut Vec<String>,
) -> Notified {
    if is_system_kind(kind) || !hooks.iter().any(|h| h.matches(kind)) {
        return Notified::NotWanted;
    }
    match start_deliverer(root, session_id, deadline) {
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

fn start_deliverer(root: &Root, session_id: &str, deadline: Instant) -> Result<Notified> {
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
    let exe = std::env::current_exe().map_err(|e| Error::io("find", "the sjournal binary", e))?;
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

/// Called first by a detached deliverer: leaves the hook's session and process group.
pub fn detach() {
    let _ = rustix::process::setsid();
}
