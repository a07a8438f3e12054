//! Where the hook gets the context it injects: the one seam between the hook path and the
//! fold. The hook calls a [`ContextSource`] with the session's lock held, after it knows the
//! seq the event will get and before it appends anything, so the source can fold the journal
//! plus the pending event (and the exec records that go with it) and render the result; the
//! hook then appends the event, those records and a `sjournal.injected` record holding the
//! rendered text in one batch (one fsync) and prints the text.

use crate::context::{self, Extras, InjectionPoint, Policy};
use crate::error::{Error, Result};
use crate::fold::RecordView;
use crate::format::payload;
use crate::format::payload::Exec;
use crate::hook::protocol::Protocol;
use crate::journal::Root;
use crate::limits::SNAPSHOT_EVERY_RECORDS;
use crate::snapshot::{self, LoadOptions};

/// The event the context is rendered for. It is not in the journal yet: the source folds it
/// (and `execs`) on top of the journal's state.
#[derive(Debug, Clone, Copy)]
pub struct PendingEvent<'a> {
    pub root: &'a Root,
    pub session_id: &'a str,
    /// The seq the event will have (the writer's next seq; the lock is held).
    pub seq: u64,
    /// The timestamp the event's record will carry (taken before rendering, so that the
    /// rendered text is exactly what a replay of the journal re-derives).
    pub ts_unix_ns: i64,
    /// The record kind (the host's event name).
    pub kind: &'a str,
    /// The event's JSON text, byte for byte as received.
    pub raw_json: &'a str,
    /// Exec handler outputs that will follow the event (seqs `seq + 1 ..`), in order.
    pub execs: &'a [Exec],
    pub protocol: Protocol,
    /// The injection policy (budgets), from the configuration.
    pub policy: &'a Policy,
}

/// Rendered context, ready to inject, with what it is made of (journaled in the
/// `sjournal.injected` record).
pub type Context = context::Injection;

/// Something that renders a session's context for a pending event.
pub trait ContextSource: Send + Sync {
    /// `Ok(None)` when there is nothing to inject.
    fn render(&self, event: &PendingEvent<'_>) -> Result<Option<Context>>;
}

/// The production source: the session's folded state, rendered.
#[derive(Debug, Default, Clone, Copy)]
pub struct FoldContext;

impl ContextSource for FoldContext {
    fn render(&self, event: &PendingEvent<'_>) -> Result<Option<Context>> {
        context_for(event)
    }
}

/// The session's context for a pending event: the folded state (snapshot + tail, read with
/// the session's lock held, so nothing can be appended meanwhile), plus the pending event
/// and its exec records folded in memory with the seqs and timestamp they will get, rendered.
/// The state is what `sjournal state --at <event seq + execs>` shows once the batch is
/// appended, so a replay re-derives the same text (its blake3 is in the injected record).
pub fn context_for(event: &PendingEvent<'_>) -> Result<Option<Context>> {
    let opts = LoadOptions::latest();
    let (mut state, info) = snapshot::load_state(event.root, event.session_id, &opts)?;
    if state.seq + 1 != event.seq {
        // The journal has records the reader could not fold (damage after the hint), so the
        // state would not be the one a replay sees: inject nothing rather than something wrong.
        return Err(Error::Fold {
            seq: event.seq,
            reason: format!(
                "the folded state ends at seq {} but the event gets seq {}{}",
                state.seq,
                event.seq,
                info.stopped.map(|s| format!(" ({s})")).unwrap_or_default()
            ),
        });
    }
    // Snapshot the state as loaded (it matches the journal's head) when one is due. Only a
    // cache: failing to write it changes nothing.
    if let Ok(paths) = event.root.session(event.session_id) {
        let _ = snapshot::maybe_snapshot(&paths, &state, &info, SNAPSHOT_EVERY_RECORDS);
    }
    let payload = payload::encode_event(event.raw_json);
    state.apply(&RecordView {
        seq: event.seq,
        ts_unix_ns: event.ts_unix_ns,
        kind: event.kind,
        payload: &payload,
    });
    for (i, exec) in event.execs.iter().enumerate() {
        let p = payload::encode_system(exec);
        state.apply(&RecordView {
            seq: event.seq + 1 + i as u64,
            ts_unix_ns: event.ts_unix_ns,
            kind: payload::KIND_EXEC,
            payload: &p,
        });
    }
    let at = InjectionPoint::of_record(event.kind, event.raw_json, event.seq);
    let r = context::inject(&state, &at, event.policy, &Extras::default());
    if r.is_empty() {
        return Ok(None);
    }
    Ok(Some(r))
}
