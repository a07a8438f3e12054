//! The journal's own error family: a journal that refuses appends. It converts into the
//! crate's [`Error`](crate::Error) (as [`Error::Corrupt`](crate::Error::Corrupt)), so the base
//! error module knows no journal type; [`Corrupt::of`] reads it back out of an `Error`.

use std::path::PathBuf;

use crate::error::Error;
use crate::journal::recovery::Corruption;

/// The journal refuses appends: damage recovery may not cut, or acknowledged records missing.
/// `reason` says which (and why nothing was cut).
#[derive(Debug, thiserror::Error)]
#[error(
    "journal {path} is corrupt at offset {offset} (record seq {seq}): {reason}. \
     New events go to the session's rescue journal; `sjournal verify` and `sjournal inspect` \
     show the damage, and `sjournal repair --session ID` rebuilds the journal from what can be salvaged"
)]
pub struct Corrupt {
    pub path: PathBuf,
    pub offset: u64,
    pub seq: u64,
    pub reason: Corruption,
}

impl Corrupt {
    /// The refusal an [`Error::Corrupt`] holds; `None` for any other error.
    pub fn of(e: &Error) -> Option<&Corrupt> {
        match e {
            Error::Corrupt(c) => c.downcast_ref(),
            _ => None,
        }
    }
}

impl From<Corrupt> for Error {
    fn from(c: Corrupt) -> Self {
        Error::Corrupt(Box::new(c))
    }
}
