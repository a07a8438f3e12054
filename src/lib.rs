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
//! # The floors
//!
//! Each module imports only from floors below its own (`python3 tools/modgraph.py` draws the
//! graph and lists any import that runs back up, or a cycle; today there are none):
//!
//! | floor | modules | what they are |
//! |---|---|---|
//! | 12 | `cli` (the binary's) | parse, call the library, print |
//! | 11 | [`hook`], [`report`], `mcp`, `serve` | the hook pipeline (read, route, plan, commit, reply, after); every `--json` line's type; the MCP server; the viewer |
//! | 10 | [`replay`], `search` | state at any record; the full-text index (a cache) |
//! | 9 | [`memory`], [`primitives`] | cross-session memory and its review; hook-author primitives |
//! | 8 | [`context`], `remote`, [`webhook`] | what is injected; shipping to S3 + PostgreSQL; webhooks |
//! | 7 | [`config`] | `config.toml` |
//! | 6 | [`redact`] | secrets replaced before the first byte is written |
//! | 5 | [`session`] | one session: lock, recover, merge the spool, load the state, commit |
//! | 4 | [`audit`], [`snapshot`] | verify, inspect, checkpoints, reports; the state saved at a seq |
//! | 3 | [`fold`], [`install`], [`journal`] | state = fold(journal); host configuration; the engine (writer, reader, scan, recovery, spool, verify) |
//! | 2 | [`format`](mod@format), [`host`], [`storage`] | the bytes; one folder per host; files, locks, fault and crash simulation |
//! | 1 | [`error`], [`escape`], [`event`], [`limits`] | the error type; terminal-safe text; the event model; every bound |
//!
//! The hook goes `hook` → [`session::Session`] (writer, spool merge, state through the
//! writer's storage) → [`fold`] → [`context`] → `Session::commit` → reply; the debugger goes
//! [`replay`] → `journal::reader`; the auditor goes `verify` / `inspect` → `journal::reader`.
//! The byte format is specified in `journal-format.md`.

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
pub mod limits;
#[cfg(feature = "search")]
pub mod mcp;
pub mod memory;
pub mod primitives;
pub mod redact;
#[cfg(feature = "remote")]
pub mod remote;
pub mod replay;
pub mod report;
#[cfg(feature = "search")]
pub mod search;
#[cfg(feature = "viewer")]
pub mod serve;
pub mod session;
pub mod snapshot;
pub mod storage;
pub mod webhook;

pub use error::{Error, Result};
