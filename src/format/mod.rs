//! Pure codecs for the on-disk format: no I/O here. `journal-format.md` is the spec; the
//! layouts are repeated next to the code that reads them.

pub mod hash;
pub mod header;
pub mod mark;
pub mod payload;
pub mod record;
pub mod snapshot;
pub mod spool;

pub use hash::{Hash, HASH_LEN};
pub use header::Header;
pub use record::{FrameError, FrameRef, FRAME_OVERHEAD};

/// A `ts_unix_ns` field as RFC 3339 UTC, to the nanosecond (as `log` prints times).
pub fn rfc3339(ts_unix_ns: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ts_unix_ns.max(0) as u64);
    humantime::format_rfc3339_nanos(t).to_string()
}
