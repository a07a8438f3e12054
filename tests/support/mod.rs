//! The integration tests' one support module: running the built binary (`cmd`), building and
//! reading journals (`journal`), the fixture corpora (`fixtures`), folds (`fold`), and the
//! hook's test seam (`hook`). Everything is re-exported here, so a test says
//! `support::scratch()`, `support::sjournal(root)`, `support::records(..)`.
//!
//! Helpers of one concern stay in their module, named there (`use crate::support::context::*`):
//! the context scenarios and the simulated session (`context`), the webhook receiver
//! (`webhook`), and the remote destinations (`remote`, with the `remote` feature).
#![allow(dead_code, unused_imports)]

pub mod cmd;
pub mod context;
pub mod fixtures;
pub mod fold;
pub mod hook;
pub mod instruction_oracle;
pub mod journal;
#[cfg(feature = "remote")]
pub mod remote;
pub mod skip;
pub mod webhook;

pub use cmd::*;
pub use fixtures::*;
pub use fold::*;
pub use hook::*;
pub use journal::*;
