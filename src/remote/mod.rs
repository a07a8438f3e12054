//! Beyond one machine: journals shipped to object storage, verified there, fetched back and
//! indexed into PostgreSQL. The bucket is the system of record; it holds the journal's own
//! bytes, never re-encoded, as create-only objects (the static-CT / Tessera pattern), and
//! auditors trust only hashes and signatures, not the server. The layout and the object
//! metadata are specified in `journal-format.md` ("Remote copies").
//!
//! - [`ship`]: sealed segments of acknowledged records, one create-only object each, with a
//!   durable local cursor; exactly once by construction (a refused create is answered by
//!   reading the object and comparing bytes).
//! - [`verify`]: contiguity, every CRC and chain link, heads, checkpoint signatures, one
//!   version per key; and how a local journal relates to the remote one.
//! - [`fetch`]: rebuilds the journals byte for byte.
//! - [`index`]: a rebuildable PostgreSQL read model of records and the facts the fold extracts.
//!
//! The hook never calls any of this: shipping is its own command (or a detached process
//! spawned after a session's last event, see [`spawn`]).

pub mod cursor;
pub mod error;
pub mod facts;
pub mod fetch;
pub mod identity;
pub mod index;
pub mod layout;
pub mod s3raw;
pub mod segment;
pub mod ship;
pub mod spawn;
pub mod store;
pub mod verify;

pub use error::RemoteError;
pub use layout::{Location, StreamKind};
pub use store::Remote;

/// Builds the single-threaded runtime the remote commands run on (the library's functions are
/// async; the CLI blocks on them).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
