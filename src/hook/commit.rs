//! The hook's write: the event, its `sjournal.host` record (when `--host` overrode the
//! detected host), its exec records and the context injected for it, as one batch, by the session's policy (journal, else rescue journal, else spool, else fallback
//! spool; see `journal::session`). Context is rendered from the session's state with the
//! batch folded in ([`Session::preview`]) — or, when the session cannot be opened (its lock is
//! held past the deadline, the root cannot be written), from what is readable of the journal.
//!
//! The caller passes `claim`: it is called right before the one write that makes the event
//! durable, and returns false if the hook's watchdog has already taken the event over (it
//! spools it itself when the deadline passes); the event is then not written here.

use std::time::Instant;

use crate::context::{self, Extras, Injection, InjectionPoint, Policy};
use crate::error::{Error, Result};
use crate::fold::State;
use crate::format::payload::{
    self, Exec, HostOverride, KIND_EXEC, KIND_EXTRAS, KIND_HOST, KIND_INJECTED,
};
use crate::hook::route::Captured;
use crate::journal::WriterOptions;
use crate::journal::{self, MergeReport, Root};
use crate::session::fold_pending;
use crate::session::{keep_elsewhere, Batch, Landed, Session};
use crate::snapshot::{self, LoadOptions};

/// Rendered context, ready to inject, with what it is made of (journaled in the
/// `sjournal.injected` record).
pub type Context = Injection;

/// What was written, and the context that went with it.
#[derive(Debug)]
pub struct Committed {
    pub written: crate::session::Committed,
    /// The context journaled with the event, to print.
    pub context: Option<Context>,
    /// What the user must hear of the spool merge that ran first (files refused), if any.
    pub notice: Option<String>,
}

/// What to commit, and how.
pub struct Request<'a> {
    pub root: &'a Root,
    pub captured: &'a Captured,
    pub execs: Vec<Exec>,
    /// Render context for this event.
    pub want_context: bool,
    /// What the injection policy reads of the event (its `event_seq` is set when rendering);
    /// None for input that is not an event. From the hook's one parse of the event.
    pub point: Option<InjectionPoint>,
    /// The injection policy (budgets), from the configuration.
    pub policy: Policy,
    /// How the session is opened (the fallback spool, the merge budget); its deadline is
    /// replaced by `lock_deadline`.
    pub writer: WriterOptions,
    /// Give up waiting for the session's lock at this instant.
    pub lock_deadline: Instant,
    /// When the session cannot be opened, context is still rendered from the readable
    /// journal, if that can start before this instant.
    pub render_by: Instant,
    /// Called once the session's lock is held, before the fold, the render and the write.
    pub locked: &'a dyn Fn(),
    /// Load the session's state even without context, so that the commit folds the event
    /// into it and hands it over (memory reads it after the reply).
    pub want_state: bool,
    /// Sections from outside the session (reviewed memory, the handoff; `crate::memory`).
    pub extras: Extras,
    /// A notice for the user beside the one about where the event went (pending memory
    /// proposals).
    pub notice: Option<String>,
}

/// Commits the event. None if the watchdog took it over first; `Err` only if it could be
/// kept nowhere.
pub fn commit(
    req: &Request<'_>,
    claim: &dyn Fn() -> bool,
    diag: &mut Vec<String>,
) -> Option<Result<Committed>> {
    let cap = req.captured;
    let opts = WriterOptions {
        deadline: Some(req.lock_deadline),
        ..req.writer.clone()
    };
    match Session::open(req.root, &cap.session_id, &opts) {
        Ok(mut s) => {
            note_merge(s.merge_report(), diag);
            let notice = merge_notice(s.merge_report());
            (req.locked)();
            // The user is told of redactions once per session: not if its state counts some
            // (snapshot + tail: the cost does not grow with the journal; a fold that outlasts
            // the deadline is the watchdog's, which rebuilds the snapshot). A state that does
            // not load tells again rather than never.
            if let Some(r) = &cap.redacted {
                if s.state().is_ok_and(|st| st.journal.redacted > 0) {
                    r.set_told_before();
                }
            }
            let seq = s.next_seq();
            let mut batch = event_batch(cap, &req.execs, seq);
            push_extras(&mut batch, req, seq);
            let context = if req.want_context && cap.raw_json.is_some() {
                match preview(&mut s, req, &batch) {
                    Ok((at, state)) => render(&state, req, at),
                    Err(e) => {
                        diag.push(format!(
                            "loading the session's state failed: {e}; nothing is injected"
                        ));
                        None
                    }
                }
            } else {
                if req.want_state {
                    if let Err(e) = s.state() {
                        diag.push(format!("loading the session's state failed: {e}"));
                    }
                }
                None
            };
            if req.want_context {
                diag.extend(s.warnings().unwrap_or_default());
            }
            if let Some(c) = &context {
                batch.push(
                    KIND_INJECTED,
                    payload::encode_system(&c.record(seq, &cap.kind)),
                );
            }
            let written = s.commit_if(&batch, claim)?;
            Some(written.map(|written| Committed {
                written,
                context,
                notice,
            }))
        }
        Err(e) => {
            let reason = e.to_string();
            let mut batch = event_batch(cap, &req.execs, 0);
            push_extras(&mut batch, req, 0);
            let context =
                (req.want_context && cap.raw_json.is_some() && Instant::now() < req.render_by)
                    .then(|| readable_context(req, &batch, diag))
                    .flatten();
            if let Some(c) = &context {
                batch.push(
                    KIND_INJECTED,
                    payload::encode_system(&c.record(0, &cap.kind)),
                );
            }
            if !claim() {
                return None;
            }
            Some(spool(req, &batch, &reason).map(|landed| Committed {
                written: landed.into(),
                context,
                notice: None,
            }))
        }
    }
}

/// The state the event's context is rendered from, and the event's seq in it: the session's
/// state with the batch folded in. When the event will be spooled behind older spooled events
/// this hook did not merge (a backlog), those are folded first, as the merge will put them
/// before it: what the context says, and what it leaves out as already said, is then what a
/// replay of the merged journal re-derives.
fn preview(s: &mut Session, req: &Request<'_>, batch: &Batch) -> Result<(u64, State)> {
    if s.merge_report().backlog == 0 {
        // The event's seq in the folded state (the journal's, except in rescue mode).
        let at = s.next_state_seq()?;
        return Ok((at, s.preview(batch)?));
    }
    let waiting = journal::pending_spool(req.root, &req.captured.session_id, &req.writer)?;
    let mut state = s.state()?.clone();
    fold_pending(&mut state, &waiting);
    let at = state.seq + 1;
    batch.fold_into(&mut state, at);
    Ok((at, state))
}

/// Keeps the batch outside the journal (the spool, else the fallback spool). If it does not
/// fit in a spool file, the event alone is kept (with its `sjournal.host` record).
fn spool(req: &Request<'_>, batch: &Batch, reason: &str) -> Result<Landed> {
    let id = &req.captured.session_id;
    let items = batch.items();
    match keep_elsewhere(req.root, id, &items, &[], reason, None, &req.writer) {
        Err(Error::TooLarge { .. }) if items.len() > 1 => {
            let reason = format!(
                "{reason} (its exec and context records did not fit in a spool file with it and \
                 were left out)"
            );
            let host = usize::from(items.get(1).is_some_and(|(k, _)| *k == KIND_HOST));
            let redacted = usize::from(
                items
                    .get(1 + host)
                    .is_some_and(|(k, _)| *k == crate::redact::KIND_REDACTED),
            );
            keep_elsewhere(
                req.root,
                id,
                &items[..1 + host + redacted],
                &[],
                &reason,
                None,
                &req.writer,
            )
        }
        r => r,
    }
}

/// The watchdog's write of an event it took over: spooled, as it stands (with its
/// `sjournal.host` record).
pub fn spool_captured(
    root: &Root,
    cap: &Captured,
    reason: &str,
    writer: &WriterOptions,
) -> Result<Landed> {
    let batch = event_batch(cap, &[], 0);
    keep_elsewhere(
        root,
        &cap.session_id,
        &batch.items(),
        &[],
        reason,
        None,
        writer,
    )
}

/// The event, its `sjournal.host` record if any, then its exec records (all pointing at
/// `event_seq`; a spool merge sets the seq the event gets).
fn event_batch(cap: &Captured, execs: &[Exec], event_seq: u64) -> Batch {
    let mut batch = Batch::new();
    batch.push(&cap.kind, cap.payload.clone());
    if let Some(h) = host_record(cap, event_seq) {
        batch.push(KIND_HOST, h);
    }
    if let Some(r) = &cap.redacted {
        batch.push(crate::redact::KIND_REDACTED, r.record.clone());
    }
    for e in execs {
        let mut e = e.clone();
        e.event_seq = event_seq;
        batch.push(KIND_EXEC, payload::encode_system(&e));
    }
    batch
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

/// The context for the event that gets `event_seq` in `state` (the state with the event's
/// batch folded in, up to its exec records): the hook's one call to the injection policy,
/// the same call a replay re-derives. None when there is nothing to inject.
fn render(state: &State, req: &Request<'_>, event_seq: u64) -> Option<Context> {
    let at = InjectionPoint {
        event_seq,
        ..req.point.clone()?
    };
    let r = context::inject(state, &at, &req.policy, &req.extras);
    (!r.is_empty()).then_some(r)
}

/// Context rendered from what can be read of the journal (snapshot + tail, through the
/// reader), the spooled events waiting to be merged (the batch will be spooled behind them)
/// and the batch folded on top, when the session could not be opened.
fn readable_context(req: &Request<'_>, batch: &Batch, diag: &mut Vec<String>) -> Option<Context> {
    let id = &req.captured.session_id;
    let load = LoadOptions {
        deadline: Some(req.render_by),
        ..LoadOptions::latest()
    };
    let mut state = match snapshot::load_state(req.root, id, &load) {
        Ok((s, _)) => s,
        Err(Error::NoSuchSession { .. }) => State::new(),
        Err(e) => {
            diag.push(format!(
                "the journal could not be read either ({e}); nothing is injected"
            ));
            return None;
        }
    };
    // What cannot be listed or read is left out (it is merged later all the same).
    let waiting = journal::pending_spool(req.root, id, &req.writer).unwrap_or_default();
    fold_pending(&mut state, &waiting);
    let next = state.seq + 1;
    batch.fold_into(&mut state, next);
    render(&state, req, next)
}

/// The `sjournal.extras` record (reviewed memory, the handoff) goes with the event when the
/// context will be rendered with it, so a replay renders the same bytes.
fn push_extras(batch: &mut Batch, req: &Request<'_>, event_seq: u64) {
    if !req.want_context {
        return;
    }
    if let Some(x) = crate::memory::hook::extras_record(&req.extras, event_seq) {
        batch.push(KIND_EXTRAS, payload::encode_system(&x));
    }
}

/// The user is told (once: the files are set aside) of spool files the merge refused: written
/// by another user, or not authenticated by the root's key, so possibly planted.
fn merge_notice(r: &MergeReport) -> Option<String> {
    (r.set_aside_untrusted > 0).then(|| {
        format!(
            "sjournal refused {} spool file(s) of this session: not written by you, or not \
             authenticated by this root's key, so possibly planted by someone else. Nothing of \
             them was used; they are kept aside. `sjournal flush --all` lists them with what \
             to do.",
            r.set_aside_untrusted
        )
    })
}

fn note_merge(r: &MergeReport, diag: &mut Vec<String>) {
    if !r.merged.is_empty() {
        diag.push(format!(
            "merged {} spooled event file(s) into the journal first{}",
            r.merged.len(),
            if r.merged_fallback > 0 {
                format!(" ({} from the fallback spool)", r.merged_fallback)
            } else {
                String::new()
            }
        ));
    }
    if r.backlog > 0 {
        diag.push(format!(
            "{} spooled event file(s) are left for the next writers (a hook merges at most a few \
             per event; `sjournal flush` merges them all)",
            r.backlog
        ));
    }
    diag.extend(r.warnings.iter().cloned());
}
