//! A stand-in fold for `sjournal replay` until the session fold (`State::apply`) is merged:
//! records per kind, and nothing injected. It exists so the command and its output format
//! work end to end now; it is not the session state.
//
// INTEGRATION: delete this module once `crate::fold::State` implements `replay::Fold`, and
// construct the real fold in `cli/commands/replay.rs` instead.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::Result;
use crate::format::hash::content_hash;
use crate::format::Hash;
use crate::journal::Record;

#[derive(Debug, Default, Clone, Serialize)]
pub struct KindCountsState {
    pub records: u64,
    pub kinds: BTreeMap<String, u64>,
}

#[derive(Debug, Default)]
pub struct KindCounts {
    state: KindCountsState,
}

impl super::Fold for KindCounts {
    type State = KindCountsState;

    fn apply(&mut self, rec: &Record<'_>) -> Result<()> {
        self.state.records += 1;
        *self.state.kinds.entry(rec.kind.to_owned()).or_default() += 1;
        Ok(())
    }

    fn state(&self) -> &KindCountsState {
        &self.state
    }

    fn state_hash(&self) -> Hash {
        content_hash(&rmp_serde::to_vec(&self.state).expect("encodable"))
    }

    fn context(&self, _: &Record<'_>) -> Option<String> {
        None
    }

    fn bookkeeping(&self) -> &'static [&'static str] {
        &["/records"]
    }
}
