//! The journal engine: append (locked, checksummed, chained, synced), read (mmap), recover,
//! verify; the spool; and the session handle every write goes through.
//!
//! Layers, bottom up: `writer` (one journal file: lock, recover, append, poison), `spool`
//! (events the journal could not take; merged by the session), `session` (open = lock +
//! recover + merge the spool; the state; one durability policy for every writer).

pub mod error;
pub mod hint;
pub mod hwm;
pub mod paths;
pub mod reader;
pub mod recovery;
pub mod repair;
pub mod scan;
pub mod session;
pub mod spool;
pub mod verify;
pub mod writer;

pub use error::Corrupt;
pub use paths::{Root, SessionPaths};
pub use reader::{JournalReader, Record};
pub use session::{flush, keep_elsewhere, Batch, Committed, Flushed, Landed, Session, SnapshotJob};
pub use spool::{pending_spool, MergeReport, PendingSpool};
pub use verify::{verify_file, verify_file_with, VerifyOptions, VerifyReport};
pub use writer::{Appended, RecoveryReport, Target, Writer, WriterOptions};
