//! The journal engine: append (locked, checksummed, chained, synced), read (mmap), recover,
//! verify.

pub mod hint;
pub mod hwm;
pub mod lock;
pub mod paths;
pub mod reader;
pub mod recovery;
pub mod repair;
pub mod scan;
pub mod spool;
pub mod verify;
pub mod writer;

use crate::error::{Error, Result};
pub use paths::{Root, SessionPaths};
pub use reader::{JournalReader, Record};
pub use spool::{MergeMode, MergeReport, MergeStep};
pub use verify::{verify_file, verify_file_with, VerifyOptions, VerifyReport};
pub use writer::{Appended, RecoveryReport, Target, Writer, WriterOptions};

/// Where an event ended up.
#[derive(Debug)]
pub enum Durable {
    /// In the session's journal.
    Journal(Appended),
    /// The journal refused it (`cause`); it is in the session's rescue journal instead.
    Rescued { appended: Appended, cause: Error },
}

impl Durable {
    pub fn appended(&self) -> &Appended {
        match self {
            Durable::Journal(a) | Durable::Rescued { appended: a, .. } => a,
        }
    }
}

/// Appends one record to the session's journal; if the journal refuses appends because it is
/// damaged (corruption that recovery may not cut, a bad header), the record goes to the
/// session's rescue journal instead, so it is never lost. Other errors are returned.
pub fn append_or_rescue(
    root: &Root,
    session_id: &str,
    kind: &str,
    payload: &[u8],
    opts: &WriterOptions,
) -> Result<Durable> {
    let main = Writer::open(root, session_id, opts).and_then(|mut w| w.append(kind, payload));
    match main {
        Ok(a) => Ok(Durable::Journal(a)),
        Err(
            cause @ (Error::Corrupt { .. }
            | Error::BadHeader { .. }
            | Error::SessionMismatch { .. }),
        ) => {
            let mut w = Writer::open_with(root, session_id, Target::Rescue, opts, |f| f)?;
            let appended = w.append(kind, payload)?;
            Ok(Durable::Rescued { appended, cause })
        }
        Err(e) => Err(e),
    }
}
