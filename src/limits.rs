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

/// Default deadline of `sjournal hook`: it answers within this long, unless the event's own
/// write is under way then (it is waited for, never cut: see `hook`).
pub const HOOK_DEADLINE_MS_DEFAULT: u64 = 250;

/// The hook stops waiting for the session's lock this long before its deadline (at most half
/// the deadline), keeping the time to spool the event instead.
pub const HOOK_SPOOL_RESERVE_MS: u64 = 50;

/// How long past its deadline the hook waits for the event's write (journal or spool) that is
/// already under way before it reports the write as slow. It keeps waiting after that:
/// cutting the write could lose the event, and would not save time (a process is not reaped
/// while a thread is in `fsync`).
pub const HOOK_COMMIT_GRACE_MS: u64 = 250;

/// How long past its deadline the hook waits for stdin that is still being read. After that
/// it keeps waiting only while stdin is ready to be read (the event is there; the reading
/// thread was starved), and otherwise gives up (hosts write the event and close stdin at once,
/// so a stdin with nothing waiting is a host that has not written).
pub const HOOK_STDIN_GRACE_MS: u64 = 1000;

/// Context injected by the hook is rendered at most this many characters long (Claude Code
/// spills `additionalContext` over 10,000 characters to a file).
pub const HOOK_CONTEXT_BUDGET_CHARS: usize = 9_500;

/// Exec handler timeout when the configuration gives none.
pub const EXEC_TIMEOUT_MS_DEFAULT: u64 = 100;

/// Stdout kept of an exec handler (and the tail of its stderr).
pub const EXEC_OUTPUT_MAX_BYTES: usize = 64 * 1024;
