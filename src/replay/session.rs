//! The session fold as a replay fold: `State::apply` for each record, `State::state_hash`,
//! and at the events where the hook injects by default (SessionStart, UserPromptSubmit) the
//! context `context::render` makes of the state after the event, as the hook renders it.
//! What was actually injected is journaled as `sjournal.injected` records, which the fold
//! keeps in `State::injected`, so the diff of the next steps shows it beside this.

use crate::context::{render, RenderOptions};
use crate::error::Result;
use crate::fold::{RecordView, State};
use crate::format::Hash;
use crate::journal::Record;

#[derive(Debug, Default)]
pub struct SessionFold {
    pub state: State,
    pub render: RenderOptions,
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

    fn context(&self, rec: &Record<'_>) -> Option<String> {
        matches!(rec.kind, "SessionStart" | "UserPromptSubmit")
            .then(|| render(&self.state, &self.render).text)
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
