//! The journal engine: append (locked, checksummed, chained, synced), read (mmap), recover,
//! verify; the spool. It knows no snapshot and no session: the session handle every write
//! goes through (open = lock + recover + merge the spool; the state from snapshot + tail; one
//! durability policy for every writer) is [`crate::session`], the floor above this one and
//! `snapshot`.
//!
//! Layers, bottom up: `scan`, `recovery` (the torn-tail rule), `writer` (one journal file:
//! lock, recover, append, poison), `reader`, `spool` (events the journal could not take;
//! merged by the session), `verify`, `repair`.

pub mod erase;
pub mod error;
pub mod hint;
pub mod hwm;
pub mod paths;
pub mod reader;
pub mod recovery;
pub mod repair;
pub mod scan;
pub mod spool;
pub mod verify;
pub mod writer;

pub use error::Corrupt;
pub use paths::{Root, SessionPaths};
pub use reader::{JournalReader, Record};
pub use spool::{pending_spool, MergeReport, PendingSpool};
pub use verify::{verify_file, verify_file_with, VerifyOptions, VerifyReport};
pub use writer::{Appended, RecoveryReport, Target, Writer, WriterOptions};
