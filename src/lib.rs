//! sjournal: an event-sourced session journal for AI coding agents.
//!
//! Agent hosts run `sjournal hook` on every lifecycle event of a session. Each event is
//! appended to that session's journal (checksummed, hash-chained, synced before it is
//! acknowledged), the journal is folded deterministically into the session's state, and the
//! context to inject is printed back.
//!
//! ```no_run
//! use sjournal::journal::{Root, Writer, WriterOptions};
//!
//! let root = Root::new("/tmp/sjournal-example");
//! let mut w = Writer::open(&root, "session-1", &WriterOptions::default())?;
//! let a = w.append_event("UserPromptSubmit", r#"{"prompt":"hello"}"#)?;
//! assert_eq!(a.seq, 1);
//! # Ok::<(), sjournal::Error>(())
//! ```
//!
//! Paths through the code: the hook host goes `hook` → `journal::writer` → fold → context;
//! the debugger goes `replay` → `journal::reader`; the auditor goes `verify` / `inspect` →
//! `journal::reader`. The byte format is specified in `journal-format.md`.

pub mod audit;
pub mod cli;
pub mod context;
pub mod error;
pub mod escape;
pub mod event;
pub mod fold;
pub mod format;
pub mod hook;
pub mod host;
pub mod install;
pub mod journal;
pub mod limits;
pub mod primitives;
#[cfg(feature = "remote")]
pub mod remote;
pub mod replay;
pub mod snapshot;
pub mod storage;
pub mod webhook;

pub use error::{Error, Result};
