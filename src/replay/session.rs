//! The session fold as a replay fold: `State::apply` for each record, `State::state_hash`,
//! and for each event the context the injection policy gives the state after the event's
//! batch (`context::inject`, the function the hook calls), at the events the hook asks for
//! context (the host's defaults and the configured ones).

use crate::context::{inject, InjectionPoint, Policy};
use crate::error::Result;
use crate::fold::{RecordView, State};
use crate::format::payload::decode_event;
use crate::format::Hash;
use crate::host::Host;
use crate::journal::Record;

#[derive(Debug, Default)]
pub struct SessionFold {
    pub state: State,
    /// The policy the hook ran with (from the root's config.toml).
    pub policy: Policy,
}

impl SessionFold {
    pub fn new(policy: Policy) -> SessionFold {
        SessionFold {
            state: State::new(),
            policy,
        }
    }
}

/// What the hook injects for `event` given `state` (the state after the event's batch), or
/// None if the hook does not ask for context at this event or has nothing to say.
pub fn derive(state: &State, policy: &Policy, event: &Record<'_>) -> Option<String> {
    let raw = decode_event(event.seq, event.payload).ok()?;
    let v: serde_json::Value = crate::event::lenient::value(raw.as_bytes()).ok()?;
    let protocol = Host::detect(&v);
    let name = protocol.event_name(&v)?;
    if !policy.wants(protocol, name) {
        return None;
    }
    let at = InjectionPoint::of_record(event.kind, raw, event.seq);
    let r = inject(state, &at, policy, &crate::memory::hook::extras_of(state));
    (!r.is_empty()).then_some(r.text)
}

impl super::Fold for SessionFold {
    type State = State;

    fn apply(&mut self, rec: &Record<'_>) -> Result<()> {
        self.state.apply(&RecordView::from(rec));
        Ok(())
    }

    fn state(&self) -> &State {
        &self.state
    }

    fn state_hash(&self) -> Hash {
        self.state.state_hash()
    }

    fn context(&self, event: &Record<'_>) -> Option<String> {
        derive(&self.state, &self.policy, event)
    }

    fn bookkeeping(&self) -> &'static [&'static str] {
        &[
            "/seq",
            "/records",
            "/first_ts_unix_ns",
            "/last_ts_unix_ns",
            "/counts/events",
        ]
    }
}
