//! What the model gets back: context channels that hook authors set, and the injection policy
//! that turns the folded state into the text injected at each event.
//!
//! Channels follow the OpenCode lifecycle-hook proposal (anomalyco/opencode#28695):
//!
//! - `persistent` entries are keyed, stay until cleared and survive compaction;
//! - `at-stop` entries are what a hook produces for the end of the turn: when the turn ends
//!   (Stop), each replaces the persistent entry of the same key;
//! - `ephemeral` entries hold for this turn only: they are dropped when the turn ends (Stop,
//!   StopFailure, SessionEnd).
//!
//! [`inject`] is the one entry point (`policy.rs` has the per-event table): after a
//! compaction, the recovery block (`block.rs`: the user's instructions, todos, where the turn
//! left off, unresolved failures, files changed, subagents, mode) fitted to its budget
//! (`fit.rs`); elsewhere only what the model has not seen. Text rules are in `text.rs`. The
//! same state, event and policy always give the same bytes, so a replay re-derives every
//! injection and checks it against the blake3 in its `sjournal.injected` record.

mod block;
mod fit;
pub mod lists;
mod policy;
pub mod text;

pub use crate::fold::Channel;
pub use policy::{decide, inject, ExtraSection, Extras, InjectionPoint, Mode, Policy};

use crate::format::hash::content_hash;
use crate::format::payload::{Injected, InjectedItem};

/// Version of the renderer's output. Bump it with any change to what a given state renders
/// to: a replay re-derives and checks only the injections made by the same version.
pub const RENDER_VERSION: u32 = 2;

/// What to inject for an event, and what it is made of. The JSON form (`context show --json`)
/// is this struct.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Injection {
    pub mode: Mode,
    /// Empty: nothing to inject.
    pub text: String,
    /// Length of `text` in characters (Unicode scalar values).
    pub chars: usize,
    pub budget_chars: usize,
    /// Parts were left out or cut to fit the budget.
    pub truncated: bool,
    /// The items the text carries, keyed, with the hash of each one's text.
    pub items: Vec<InjectedItem>,
    /// What was left out or cut to fit, in order (`files: src/a.rs`, `left-off: cut`).
    pub dropped: Vec<String>,
    /// What was left out because the host's compaction summary already says it.
    pub deduped: Vec<String>,
    pub render_version: u32,
}

impl Injection {
    fn nothing(mode: Mode, budget_chars: usize) -> Injection {
        Injection {
            mode,
            budget_chars,
            ..Default::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The `sjournal.injected` record for this text, printed for the event at `event_seq`
    /// (whose record kind is `event_kind`).
    pub fn record(&self, event_seq: u64, event_kind: &str) -> Injected {
        Injected {
            event_seq,
            event_kind: event_kind.to_owned(),
            text_blake3: content_hash(self.text.as_bytes()).to_hex(),
            len: self.text.chars().count() as u64,
            truncated: self.truncated,
            text: self.text.clone(),
            mode: Some(self.mode.as_str().to_owned()),
            render_version: self.render_version,
            items: self.items.clone(),
            dropped: self.dropped.clone(),
            deduped: self.deduped.clone(),
            budget_chars: self.budget_chars as u64,
        }
    }
}

/// Folds into `state` the SessionStart of `source` the host would send next (as the hook folds
/// the event before it renders its injection): `context show` and the MCP server's recovery
/// render what the hook would inject after it.
pub fn fold_next_start(
    state: &mut crate::fold::State,
    session: &str,
    source: &str,
    host: crate::event::Host,
    cwd: Option<&std::path::Path>,
) {
    let mut v = serde_json::json!({
        "hook_event_name": "SessionStart",
        "session_id": session,
        "source": source,
    });
    if let Some(c) = state
        .identity
        .cwd
        .clone()
        .or_else(|| cwd.map(|c| c.display().to_string()))
    {
        v["cwd"] = c.into();
    }
    if host == crate::event::Host::Gemini {
        // What tells Gemini CLI's payloads apart (its SessionStart resets the view of its
        // requests).
        v["timestamp"] = "".into();
    }
    let payload = crate::fold::digest::encode_event("SessionStart", &v.to_string());
    let ts = state.last_ts_unix_ns;
    state.apply(&crate::fold::RecordView {
        seq: state.seq + 1,
        ts_unix_ns: ts,
        kind: "SessionStart",
        payload: &payload,
    });
}
