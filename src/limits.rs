//! Every size, count and time bound in one place. Units come last in names.

/// Largest record frame, header and CRC included. Checked on append and before any
/// allocation on read.
pub const FRAME_MAX_BYTES: u32 = 16 * 1024 * 1024;

/// Largest session id kept in a journal header.
pub const SESSION_ID_MAX_BYTES: usize = 1024;

/// Record kind names: 1..=64 bytes of `[A-Za-z0-9._-]`.
pub const KIND_MAX_BYTES: usize = 64;

/// Bytes written by one append call at most (one batch). A damaged tail longer than this
/// cannot be the remains of a single interrupted write, so recovery refuses to cut it.
pub const BATCH_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Session ids used verbatim as file names are at most this long; longer ones are hashed.
pub const FILE_STEM_MAX_BYTES: usize = 128;

/// Stdin accepted by `append` / `hook` (one JSON value).
pub const INPUT_MAX_BYTES: usize = FRAME_MAX_BYTES as usize - 4096;

/// Chunk size of the sequential scanner used by recovery.
pub const SCAN_CHUNK_BYTES: usize = 1024 * 1024;

/// How often a waiting process retries a contended lock.
pub const LOCK_POLL_MICROS: u64 = 500;

/// Spool files merged into the journal by one batch at most (more are merged by further
/// batches of the same open).
pub const SPOOL_MERGE_MAX_FILES: usize = 1024;
