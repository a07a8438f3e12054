//! The hook's write: the event, its exec records and the context injected for it, as one
//! batch, by the session's policy (journal, else rescue journal, else spool, else fallback
//! spool; see `journal::session`). Context is rendered from the session's state with the
//! batch folded in ([`Session::preview`]) — or, when the session cannot be opened (its lock is
//! held past the deadline, the root cannot be written), from what is readable of the journal.
//!
//! The caller passes `claim`: it is called right before the one write that makes the event
//! durable, and returns false if the hook's watchdog has already taken the event over (it
//! spools it itself when the deadline passes); the event is then not written here.

use std::time::Instant;

use crate::context::{self, RenderOptions};
use crate::error::{Error, Result};
use crate::fold::State;
use crate::format::hash::content_hash;
use crate::format::payload::{self, Exec, Injected, KIND_EXEC, KIND_INJECTED};
use crate::hook::input::Captured;
use crate::hook::protocol::Protocol;
use crate::hook::Checkpoints;
use crate::journal::WriterOptions;
use crate::journal::{self, keep_elsewhere, Batch, Landed, MergeReport, Root, Session};
use crate::limits::INPUT_MAX_BYTES;
use crate::snapshot::{self, LoadOptions};

/// Rendered context, ready to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub text: String,
    /// True if the renderer cut it to fit the budget.
    pub truncated: bool,
}

/// What was written, and the context that went with it.
#[derive(Debug)]
pub struct Committed {
    pub written: journal::Committed,
    /// The context journaled with the event, to print.
    pub context: Option<Context>,
}

/// What to commit, and how.
pub struct Request<'a> {
    pub root: &'a Root,
    pub captured: &'a Captured,
    pub execs: Vec<Exec>,
    /// Render context for this event.
    pub want_context: bool,
    pub budget_chars: usize,
    /// How the session is opened (the fallback spool, the merge budget); its deadline is
    /// replaced by `lock_deadline`.
    pub writer: WriterOptions,
    /// Give up waiting for the session's lock at this instant.
    pub lock_deadline: Instant,
    /// When the session cannot be opened, context is still rendered from the readable
    /// journal, if that can start before this instant.
    pub render_by: Instant,
    pub checkpoints: Option<&'a dyn Checkpoints>,
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
            let seq = s.next_seq();
            let mut batch = event_batch(cap, &req.execs, seq);
            if let Some(c) = req.checkpoints {
                c.locked();
            }
            let context = if req.want_context && cap.raw_json.is_some() {
                match s.preview(&batch) {
                    Ok(state) => render(&state, req.budget_chars),
                    Err(e) => {
                        diag.push(format!(
                            "loading the session's state failed: {e}; nothing is injected"
                        ));
                        None
                    }
                }
            } else {
                None
            };
            if req.want_context {
                diag.extend(s.warnings().unwrap_or_default());
            }
            if let Some(c) = &context {
                batch.push(
                    KIND_INJECTED,
                    payload::encode_system(&injected(seq, cap, c)),
                );
            }
            let written = s.commit_if(&batch, claim)?;
            Some(written.map(|written| Committed { written, context }))
        }
        Err(e) => {
            let reason = e.to_string();
            let mut batch = event_batch(cap, &req.execs, 0);
            let context =
                (req.want_context && cap.raw_json.is_some() && Instant::now() < req.render_by)
                    .then(|| readable_context(req, &batch, diag))
                    .flatten();
            if let Some(c) = &context {
                batch.push(KIND_INJECTED, payload::encode_system(&injected(0, cap, c)));
            }
            if !claim() {
                return None;
            }
            Some(spool(req, &batch, &reason).map(|landed| Committed {
                written: landed.into(),
                context,
            }))
        }
    }
}

/// Keeps the batch outside the journal (the spool, else the fallback spool). If it does not
/// fit in a spool file, the event alone is kept.
fn spool(req: &Request<'_>, batch: &Batch, reason: &str) -> Result<Landed> {
    let id = &req.captured.session_id;
    let items = batch.items();
    match keep_elsewhere(req.root, id, &items, reason, None, &req.writer) {
        Err(Error::TooLarge { .. }) if items.len() > 1 => {
            let reason = format!(
                "{reason} (its exec and context records did not fit in a spool file with it and \
                 were left out)"
            );
            keep_elsewhere(req.root, id, &items[..1], &reason, None, &req.writer)
        }
        r => r,
    }
}

/// The watchdog's write of an event it took over: spooled, as it stands.
pub fn spool_captured(
    root: &Root,
    cap: &Captured,
    reason: &str,
    writer: &WriterOptions,
) -> Result<Landed> {
    let items = [(cap.kind.as_str(), cap.payload.as_slice())];
    keep_elsewhere(root, &cap.session_id, &items, reason, None, writer)
}

/// The event, then its exec records (pointing at `event_seq`).
fn event_batch(cap: &Captured, execs: &[Exec], event_seq: u64) -> Batch {
    let mut batch = Batch::new();
    batch.push(&cap.kind, cap.payload.clone());
    for e in execs {
        let mut e = e.clone();
        e.event_seq = event_seq;
        batch.push(KIND_EXEC, payload::encode_system(&e));
    }
    batch
}

/// The context for a state: the hook's one call to the renderer.
fn render(state: &State, budget_chars: usize) -> Option<Context> {
    let r = context::render(state, &RenderOptions { budget_chars });
    (!r.text.is_empty()).then_some(Context {
        text: r.text,
        truncated: r.truncated,
    })
}

/// Context rendered from what can be read of the journal (snapshot + tail, through the
/// reader) with the batch folded on top, when the session could not be opened.
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
    let next = state.seq + 1;
    batch.fold_into(&mut state, next);
    render(&state, req.budget_chars)
}

/// The `sjournal.injected` record for context printed for the event at `event_seq`.
fn injected(event_seq: u64, cap: &Captured, c: &Context) -> Injected {
    Injected {
        event_seq,
        event_kind: cap.kind.clone(),
        text_blake3: content_hash(c.text.as_bytes()).to_hex(),
        len: c.text.chars().count() as u64,
        truncated: c.truncated,
        text: c.text.clone(),
    }
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

/// What the user must be told about where the event went, if anything: it is not durable
/// in the root, or it was cut.
pub fn notice(landed: Option<&Landed>, cap: &Captured) -> Option<String> {
    let mut parts: Vec<String> = landed.and_then(Landed::notice).into_iter().collect();
    if let Some(len) = cap.cut {
        parts.push(format!(
            "This event was {len} bytes, more than a journal record holds: its first \
             {INPUT_MAX_BYTES} bytes are kept, the rest is left out (its length and blake3 are \
             recorded)."
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The stdout for a committed event. `late`: the reply can no longer be timely, so no
/// context goes with it (only a notice the user must see).
pub fn reply(
    protocol: Option<Protocol>,
    event: Option<&str>,
    c: &Committed,
    cap: &Captured,
    late: bool,
) -> Option<String> {
    let p = protocol?;
    let notice = notice(Some(&c.written.landed), cap);
    if late {
        return p.reply_with_notice(None, None, notice.as_deref());
    }
    let context = c.context.as_ref().map(|c| c.text.as_str());
    p.reply_with_notice(event, context, notice.as_deref())
}
