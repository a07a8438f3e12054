//! sjournal: an event-sourced session journal for AI coding agents.
//!
//! Agent hosts run `sjournal hook` on every lifecycle event of a session. Each event is
//! appended to that session's journal (checksummed, hash-chained, synced before it is
//! acknowledged), the journal is folded deterministically into the session's state, and the
//! context to inject is printed back.
//!
//! The crate root is the library's front door: a session to commit events to ([`Session`],
//! [`Batch`], [`Committed`], [`Landed`] under a [`Root`] with [`WriterOptions`]), a journal to
//! read and verify ([`JournalReader`], [`verify_file`]), the fold ([`fold()`], [`State`]), the
//! context to inject ([`inject`] under a [`Policy`]), the whole hook ([`run_hook`]), and
//! [`Error`] / [`Result`].
//!
//! ```no_run
//! use sjournal::{Batch, Landed, Root, Session, WriterOptions};
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
//! | 13 | `cli` (the binary's) | parse, call the library, print |
//! | 12 | `hook`, `report`, `mcp`, `serve` | the hook pipeline (read, route, plan, commit, reply, after); every `--json` line's type; the MCP server; the viewer |
//! | 11 | `replay`, `search` | state at any record; the full-text index (a cache) |
//! | 10 | `memory`, `primitives` | cross-session memory and its review; hook-author primitives |
//! | 9 | `context`, `remote`, `webhook` | what is injected; shipping to S3 + PostgreSQL; webhooks |
//! | 8 | `config` | `config.toml` |
//! | 7 | `redact` | secrets replaced before the first byte is written |
//! | 6 | `session` | one session: lock, recover, merge the spool, load the state, commit |
//! | 5 | `audit`, `snapshot` | verify, inspect, checkpoints, reports; the state saved at a seq |
//! | 4 | `fold`, `install` | state = fold(journal); writing each host's install spec into its configuration |
//! | 3 | `host`, `journal`, `testing` | one folder per host (detect, normalize, reply, install spec); the engine (writer, reader, scan, recovery, spool, verify); the test backends |
//! | 2 | `format`, `storage` | the bytes; files, locks, the storage seam |
//! | 1 | `error`, `escape`, `event`, `limits` | the error type; terminal-safe text; the event model; every bound |
//!
//! The hook goes `hook` → `session::Session` (writer, spool merge, state through the
//! writer's storage) → `fold` → `context` → `Session::commit` → reply; the debugger goes
//! `replay` → `journal::reader`; the auditor goes `verify` / `inspect` → `journal::reader`.
//! The byte format is specified in `journal-format.md`.

// `unsafe` lives only in `journal::reader` (the memory mapping), allowed there site by site
// with its soundness argument; the library never prints: the command line (`src/cli/`, a
// module of the binary) does, over the typed results the library returns.
#![deny(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

// The modules are public for the binary's command line (`src/cli/`), the bench tool
// (`tools/bench`, a separate crate) and the integration tests, and hidden from the docs.
#[doc(hidden)]
pub mod audit;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod context;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod escape;
#[doc(hidden)]
pub mod event;
#[doc(hidden)]
pub mod fold;
#[doc(hidden)]
pub mod format;
#[doc(hidden)]
pub mod hook;
#[doc(hidden)]
pub mod host;
#[doc(hidden)]
pub mod install;
#[doc(hidden)]
pub mod journal;
#[doc(hidden)]
pub mod limits;
#[cfg(feature = "search")]
#[doc(hidden)]
pub mod mcp;
#[doc(hidden)]
pub mod memory;
#[doc(hidden)]
pub mod primitives;
#[doc(hidden)]
pub mod redact;
#[cfg(feature = "remote")]
#[doc(hidden)]
pub mod remote;
#[doc(hidden)]
pub mod replay;
#[doc(hidden)]
pub mod report;
#[cfg(feature = "search")]
#[doc(hidden)]
pub mod search;
#[cfg(feature = "viewer")]
#[doc(hidden)]
pub mod serve;
#[doc(hidden)]
pub mod session;
#[doc(hidden)]
pub mod snapshot;
#[doc(hidden)]
pub mod storage;
#[doc(hidden)]
pub mod testing;
#[doc(hidden)]
pub mod webhook;

pub use context::{inject, Extras, Injection, InjectionPoint, Policy};
pub use error::{Error, Result};
pub use fold::{fold, RecordView, State};
pub use hook::{run as run_hook, Deliver, HookOptions, HookOutcome};
pub use journal::{verify_file, JournalReader, Record, Root, VerifyReport, WriterOptions};
pub use session::{Batch, Committed, Landed, Session};
