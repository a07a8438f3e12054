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
