//! sjournal: an event-sourced session journal for AI coding agents.
//!
//! Agent hosts run `sjournal hook` on every lifecycle event of a session. Each event is
//! appended to that session's journal (checksummed, hash-chained, synced before it is
//! acknowledged), the journal is folded deterministically into the session's state, and the
//! context to inject is printed back.
//!
//! ```no_run
//! use sjournal::journal::{Root, WriterOptions};
//! use sjournal::session::{Batch, Landed, Session};
//!
//! let root = Root::new("/tmp/sjournal-example");
//! // Lock, recover, merge the spool; the state loads on first use.
//! let mut s = Session::open(&root, "session-1", &WriterOptions::default())?;
//! let batch = Batch::one_event("UserPromptSubmit", r#"{"prompt":"hello"}"#);
//! let preview = s.preview(&batch)?; // the state as it will be, not written yet
//! let committed = s.commit(&batch)?; // journal, else rescue, else spool, else fallback
//! assert!(matches!(committed.landed, Landed::Journal { .. }));
//! assert_eq!(committed.state.as_ref(), Some(&preview));
//! # Ok::<(), sjournal::Error>(())
//! ```
//!
//! Paths through the code: the hook goes `hook` (input, exec handlers) → `journal::Session`
//! (writer, spool merge, state through the writer's storage) → fold → `context::render` →
//! `Session::commit` → reply; the debugger goes `replay` → `journal::reader`; the auditor goes
//! `verify` / `inspect` → `journal::reader`. The byte format is specified in
//! `journal-format.md`. The command line is the binary's (`src/cli/`): it parses, calls the
//! library and prints; every `--json` line it prints is a type of [`json`].

// `unsafe` lives only in `journal::reader` (the memory mapping), allowed there site by site
// with its soundness argument; the library never prints: the command line (`src/cli/`, a
// module of the binary) does, over the typed results the library returns.
#![deny(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod audit;
pub mod config;
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
pub mod json;
pub mod limits;
#[cfg(feature = "search")]
pub mod mcp;
pub mod memory;
pub mod primitives;
pub mod redact;
#[cfg(feature = "remote")]
pub mod remote;
pub mod replay;
#[cfg(feature = "search")]
pub mod search;
#[cfg(feature = "viewer")]
pub mod serve;
pub mod session;
pub mod snapshot;
pub mod storage;
pub mod webhook;

pub use error::{Error, Result};
