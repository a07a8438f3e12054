//! Where the hook gets the context it injects: the one seam between the hook path and the
//! fold. The hook calls a [`ContextSource`] with the session's lock held, after it knows the
//! seq the event will get and before it appends anything, so the source can fold the journal
//! plus the pending event (and the exec records that go with it) and render the result; the
//! hook then appends the event, those records and a `sjournal.injected` record holding the
//! rendered text in one batch (one fsync) and prints the text.

use crate::error::Result;
use crate::format::payload::Exec;
use crate::hook::protocol::Protocol;
use crate::journal::Root;

/// The event the context is rendered for. It is not in the journal yet: the source folds it
/// (and `execs`) on top of the journal's state.
#[derive(Debug, Clone, Copy)]
pub struct PendingEvent<'a> {
    pub root: &'a Root,
    pub session_id: &'a str,
    /// The seq the event will have (the writer's next seq; the lock is held).
    pub seq: u64,
    /// The record kind (the host's event name).
    pub kind: &'a str,
    /// The event's JSON text, byte for byte as received.
    pub raw_json: &'a str,
    /// Exec handler outputs that will follow the event (seqs `seq + 1 ..`), in order.
    pub execs: &'a [Exec],
    pub protocol: Protocol,
    /// Render at most this many characters (the host's limit, less a margin).
    pub budget_chars: usize,
}

/// Rendered context, ready to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub text: String,
    /// True if the renderer cut it to fit the budget.
    pub truncated: bool,
}

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

/// The session's context for a pending event.
///
/// INTEGRATION: replaced by fold::load_state + context::render when the fold branch merges:
/// `let mut state = fold::load_state(event.root, event.session_id)?;` then fold the pending
/// event (`event.seq`, `event.kind`, `event.raw_json`) and each of `event.execs` (seqs
/// `event.seq + 1 ..`) into `state` in memory, then
/// `context::render(&state, &RenderOptions { budget_chars: event.budget_chars })` and map
/// `Rendered { text, truncated, .. }` to [`Context`] (`None` for empty text).
/// Until then there is no fold to render from, so the hook injects nothing.
pub fn context_for(event: &PendingEvent<'_>) -> Result<Option<Context>> {
    let _ = event;
    Ok(None)
}
