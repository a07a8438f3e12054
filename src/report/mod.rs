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
