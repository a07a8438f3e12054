//! The `--json` outputs of the command line, one type per line shape, each with its schema.
//!
//! Every object a command prints with `--json` (or always, for commands whose output is
//! JSON) is one of these types serialized with `serde_json::to_string`: one object per line,
//! fields in the order declared here, no extra whitespace. Field names and types are a
//! contract with the scripts that read them; change them only with a note in the README.
//! Types the library already returns (`verify`'s `journal::verify::VerifyReport`,
//! `sessions`' `audit::sessions::SessionSummary`, `fire`'s `primitives::Fired`, `replay`'s
//! steps, `memory show`'s `memory::Item`, ...) are printed as they are and documented
//! where they are defined.
//!
//! Paths serialize as strings (the root and spool directories are the user's; sjournal's
//! own file names are ASCII).
//!
//! # The `verify --json` stream
//!
//! `verify --json` prints a stream of lines, one JSON object each, told apart by their keys,
//! in this order:
//!
//! 1. for each journal verified (`--session`: its journal, then its rescue journal if any;
//!    `--all`: every journal, in file name order):
//!    - its report: `{"path", "session_id", "ok", "records", "bytes", "last_seq", "head",
//!      "problem", "acknowledged", "rolled_back", "witnesses"}` (`journal::VerifyReport`);
//!    - when it holds `sjournal.redacted` records: `{"path", "redactions": {"events",
//!      "secrets", "by_rule", "seqs"?, "undecodable"?}}` ([`VerifyRedactionsLine`],
//!      `redact::Summary`; left out when the journal changed after it was verified);
//!    - with `--digests`: `{"path", "digests": {..}}` ([`VerifyDigestsLine`]);
//! 2. for each journal that is gone while its witnesses name its records: a report as above,
//!    `ok` false;
//! 3. for each session with spooled events not yet merged: `{"session", "pending_spool":
//!    [..]}` ([`PendingSpoolLine`]);
//! 4. with `--checkpoint FILE`: `{"checkpoint", "ok", "origin", "size", "hash", "extension",
//!    "signature", "signed"}` (`audit::checkpoint::CheckpointReport`);
//! 5. with `--all`: for each spool file or directory refused as untrusted:
//!    `{"refused_spool": {..}}` ([`RefusedSpoolLine`]).
//!
//! A reader keys on `redactions`, `digests`, `pending_spool`, `checkpoint` and
//! `refused_spool` first; any other line with `path` and `ok` is a journal's report.

mod doctor;
mod memory;
#[cfg(feature = "remote")]
mod remote;
mod session;
mod write;

pub use doctor::*;
pub use memory::*;
#[cfg(feature = "remote")]
pub use remote::*;
pub use session::*;
pub use write::*;

use serde::Serialize;

/// One line of JSON: `value` serialized compactly.
///
/// # Panics
///
/// If `value` holds a path that is not UTF-8 (JSON cannot carry it unchanged).
pub fn line<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("the --json types serialize")
}
