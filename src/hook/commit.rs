//! Making the event durable, whatever the journal's state: into the session's journal (with
//! the exec records and the injected context in the same batch), else into its rescue
//! journal (when the journal refuses appends because it is damaged), else into the spool
//! (when the lock is held past the deadline, the disk refused the write, ...).
//!
//! The caller passes `claim`: it is called right before the one write that makes the event
//! durable, and returns false if the hook's watchdog has already taken the event over (it
//! spools it itself when the deadline passes); the event is then not written here.

use std::path::PathBuf;
use std::time::Instant;

use crate::context::Policy;
use crate::error::{Error, Result};
use crate::format::payload::{self, Exec, HostOverride, KIND_EXEC, KIND_HOST, KIND_INJECTED};
use crate::hook::context_bridge::{Context, ContextSource, PendingEvent};
use crate::hook::input::Captured;
use crate::hook::protocol::Protocol;
use crate::journal::spool::{self, Attempted};
use crate::journal::writer::now_unix_ns;
use crate::journal::{Root, Target, Writer, WriterOptions};

/// Where the event ended up.
#[derive(Debug)]
pub enum Landed {
    Journal {
        seq: u64,
    },
    /// The journal refused appends (`cause`); the event is in the rescue journal.
    Rescue {
        seq: u64,
        cause: Error,
    },
    /// Spooled (`reason`), to be merged into the journal by the next writer.
    Spooled {
        path: PathBuf,
        reason: String,
    },
    /// The watchdog took the event over before it was written here.
    TakenOver,
}

#[derive(Debug)]
pub struct Committed {
    pub landed: Landed,
    /// The context that was journaled with the event, to print.
    pub context: Option<Context>,
}

/// What to commit, and how.
pub struct Request<'a> {
    pub root: &'a Root,
    pub captured: &'a Captured,
    pub execs: Vec<Exec>,
    /// Render context for this event.
    pub want_context: bool,
    pub policy: Policy,
    pub lock_deadline: Instant,
    pub source: &'a dyn ContextSource,
}

/// Commits the event. `Err` only if it could not be made durable anywhere.
pub fn commit(
    req: Request<'_>,
    claim: &dyn Fn() -> bool,
    diag: &mut Vec<String>,
) -> Result<Committed> {
    let cap = req.captured;
    let opts = WriterOptions {
        deadline: Some(req.lock_deadline),
    };
    let reason = match Writer::open(req.root, &cap.session_id, &opts) {
        Ok(w) => {
            note_spool(w.spool_report(), diag);
            let attempted = Attempted {
                offset: w.len(),
                seq: w.next_seq(),
            };
            match append_with_context(w, &req, claim, diag) {
                Ok(c) => return Ok(c),
                Err(e) => {
                    // The write may have reached the file (a failed fsync): the spool entry
                    // says where, so the merge does not repeat it if it did.
                    let reason = e.to_string();
                    let path =
                        spool_captured(req.root, cap, &req.execs, &reason, Some(attempted), diag)?;
                    return Ok(Committed {
                        landed: Landed::Spooled { path, reason },
                        context: None,
                    });
                }
            }
        }
        Err(
            cause @ (Error::Corrupt { .. }
            | Error::BadHeader { .. }
            | Error::SessionMismatch { .. }),
        ) => {
            let rescued =
                Writer::open_with(req.root, &cap.session_id, Target::Rescue, &opts, |f| f)
                    .and_then(|mut w| {
                        if !claim() {
                            return Ok(None);
                        }
                        let execs = encode_execs(&req.execs, w.next_seq());
                        let host = host_record(cap, w.next_seq());
                        let mut items: Vec<(&str, &[u8])> = vec![(&cap.kind, &cap.payload)];
                        items.extend(host.iter().map(|p| (KIND_HOST, p.as_slice())));
                        items.extend(execs.iter().map(|p| (KIND_EXEC, p.as_slice())));
                        Ok(Some(w.append_batch(&items)?[0].seq))
                    });
            match rescued {
                Ok(Some(seq)) => {
                    return Ok(Committed {
                        landed: Landed::Rescue { seq, cause },
                        context: None,
                    })
                }
                Ok(None) => return Ok(taken_over()),
                Err(e) => format!("{cause}; and the rescue journal: {e}"),
            }
        }
        Err(e) => e.to_string(),
    };
    // The journal could not take it now: spool it (the claim may already be held, after a
    // failed append; claiming twice from this thread is fine).
    if !claim() {
        return Ok(taken_over());
    }
    let path = spool_captured(req.root, cap, &req.execs, &reason, None, diag)?;
    Ok(Committed {
        landed: Landed::Spooled { path, reason },
        context: None,
    })
}

fn taken_over() -> Committed {
    Committed {
        landed: Landed::TakenOver,
        context: None,
    }
}

fn append_with_context(
    w: Writer,
    req: &Request<'_>,
    claim: &dyn Fn() -> bool,
    diag: &mut Vec<String>,
) -> Result<Committed> {
    let cap = req.captured;
    let seq = w.next_seq();
    let ts = now_unix_ns();
    let mut execs = req.execs.clone();
    for e in &mut execs {
        e.event_seq = seq;
    }
    let context = match (&cap.raw_json, cap.protocol, req.want_context) {
        (Some(raw), Some(protocol), true) => {
            let pending = PendingEvent {
                root: req.root,
                session_id: &cap.session_id,
                seq,
                ts_unix_ns: ts,
                kind: &cap.kind,
                raw_json: raw,
                execs: &execs,
                protocol,
                policy: &req.policy,
            };
            match req.source.render(&pending) {
                Ok(c) => c.filter(|c| !c.text.is_empty()),
                Err(e) => {
                    diag.push(format!(
                        "rendering the context failed: {e}; nothing is injected"
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    let exec_payloads = encode_execs(&execs, seq);
    let injected = context
        .as_ref()
        .map(|c| payload::encode_system(&c.record(seq, &cap.kind)));
    let host = host_record(cap, seq);
    let mut items: Vec<(&str, &[u8])> = vec![(&cap.kind, &cap.payload)];
    items.extend(host.iter().map(|p| (KIND_HOST, p.as_slice())));
    items.extend(exec_payloads.iter().map(|p| (KIND_EXEC, p.as_slice())));
    if let Some(p) = &injected {
        items.push((KIND_INJECTED, p));
    }
    if !claim() {
        return Ok(taken_over());
    }
    // Group commit: the lock is given up before the fsync, so parallel hooks of the same
    // session (parallel tool calls) share device flushes; acknowledged after the sync.
    let appended = w.append_batch_and_release_at(ts, &items)?;
    debug_assert_eq!(appended[0].seq, seq);
    Ok(Committed {
        landed: Landed::Journal { seq },
        context,
    })
}

/// The `sjournal.host` record that follows the event when `--host` named another host than
/// the payload reads as, so the fold attributes the event as the hook did.
fn host_record(cap: &Captured, event_seq: u64) -> Option<Vec<u8>> {
    let (host, detected) = (cap.protocol?, cap.detected?);
    Some(payload::encode_system(&HostOverride {
        event_seq,
        host: host.as_str().to_owned(),
        detected: detected.as_str().to_owned(),
    }))
}

fn encode_execs(execs: &[Exec], event_seq: u64) -> Vec<Vec<u8>> {
    execs
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.event_seq = event_seq;
            payload::encode_system(&e)
        })
        .collect()
}

/// Spools the event (and its exec records, if they fit).
pub fn spool_captured(
    root: &Root,
    cap: &Captured,
    execs: &[Exec],
    reason: &str,
    attempted: Option<Attempted>,
    diag: &mut Vec<String>,
) -> Result<PathBuf> {
    let exec_payloads = encode_execs(execs, 0);
    let host = host_record(cap, 0);
    let mut items: Vec<(&str, &[u8])> = vec![(&cap.kind, &cap.payload)];
    items.extend(host.iter().map(|p| (KIND_HOST, p.as_slice())));
    items.extend(exec_payloads.iter().map(|p| (KIND_EXEC, p.as_slice())));
    match spool::spool_attempted(root, &cap.session_id, &items, reason, attempted) {
        Err(Error::TooLarge { .. }) if items.len() > 1 => {
            diag.push("the exec outputs did not fit in the spool file with the event; spooled the event alone".into());
            spool::spool_attempted(
                root,
                &cap.session_id,
                &items[..1 + host.iter().count()],
                reason,
                attempted,
            )
        }
        r => r,
    }
}

fn note_spool(r: &spool::MergeReport, diag: &mut Vec<String>) {
    if !r.merged.is_empty() {
        diag.push(format!(
            "merged {} spooled event file(s) into the journal first",
            r.merged.len()
        ));
    }
    diag.extend(r.warnings.iter().cloned());
}

/// The stdout for a committed event.
pub fn reply(protocol: Option<Protocol>, event: Option<&str>, c: &Committed) -> Option<String> {
    let p = protocol?;
    match (&c.landed, event) {
        (Landed::Journal { .. }, Some(ev)) => {
            p.reply(ev, c.context.as_ref().map(|c| c.text.as_str()))
        }
        _ => p.fail_open_reply(),
    }
}
