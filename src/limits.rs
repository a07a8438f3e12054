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

/// Names recovery tries for one quarantine copy (`…-<blake3/16>.bin`, `-1.bin`, …) when files
/// holding other bytes sit at the earlier ones, before it gives up (and cuts nothing).
pub const QUARANTINE_NAMES_MAX: usize = 16;

/// Entries a `sjournal.repaired` record lists per list (lost byte ranges, renumbered
/// records) at most; the rest are counted. Keeps the record far below `FRAME_MAX_BYTES`.
pub const REPAIR_LIST_MAX: usize = 4096;

/// `<root>/config.toml` is read up to this size; a longer one is refused (defaults used).
pub const CONFIG_MAX_BYTES: u64 = 1024 * 1024;

/// Session ids used verbatim as file names are at most this long; longer ones are hashed.
pub const FILE_STEM_MAX_BYTES: usize = 128;

/// Stdin accepted by `append` / `hook` (one JSON value).
pub const INPUT_MAX_BYTES: usize = FRAME_MAX_BYTES as usize - 4096;

/// Chunk size of the sequential scanner used by recovery.
pub const SCAN_CHUNK_BYTES: usize = 1024 * 1024;

/// Bytes per range a verify worker takes at a time (it checks the records that start in the
/// range, the last of them up to its end, past the range if need be).
pub const VERIFY_CHUNK_BYTES: usize = 1024 * 1024;

/// Ranges verify hands out per worker before it has the results of the earliest: what the
/// workers have mapped but the in-order check has not yet released is about
/// `workers * VERIFY_CHUNKS_IN_FLIGHT * VERIFY_CHUNK_BYTES`.
pub const VERIFY_CHUNKS_IN_FLIGHT: usize = 4;

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
// Bounds of the folded state: the hook loads it on every event, so it stays small whatever
// the session does. Changing one changes the fold: bump `fold::FOLD_VERSION`.

/// Recent prompts kept in the state.
pub const PROMPTS_KEPT: usize = 16;

/// Longest prompt, summary or instruction text kept in the state (longer ones are cut at a
/// character boundary).
pub const STATE_TEXT_MAX_BYTES: usize = 4096;

/// Longest one-line description of an open tool call.
pub const DETAIL_MAX_BYTES: usize = 200;

/// Longest name (tool, event, key, subagent id, file path) kept as a map key.
pub const NAME_MAX_BYTES: usize = 1024;

/// Files tracked; past this the least recently touched eighth is forgotten.
pub const FILES_TRACKED_MAX: usize = 1024;

/// Open tool calls tracked (a Pre whose Post never came); past this the oldest eighth is dropped.
pub const OPEN_CALLS_MAX: usize = 256;

/// Subagents tracked; past this the oldest eighth is forgotten.
pub const SUBAGENTS_TRACKED_MAX: usize = 256;

/// Distinct tool names with their own statistics; the rest are counted under one entry.
pub const TOOLS_TRACKED_MAX: usize = 512;

/// Distinct unknown event names counted by name; the rest only as "other".
pub const OTHER_NAMES_MAX: usize = 128;

/// Linked sessions remembered.
pub const LINKS_MAX: usize = 64;

/// Entries per context channel.
pub const CONTEXT_ENTRIES_MAX: usize = 256;

/// Longest context entry text.
pub const CONTEXT_TEXT_MAX_BYTES: usize = 16 * 1024;

/// Keys (fire names, once keys, slots, lists) per primitive.
pub const PRIMITIVE_KEYS_MAX: usize = 4096;

/// Longest slot value (JSON text).
pub const SLOT_VALUE_MAX_BYTES: usize = 64 * 1024;

/// Items a list keeps when the push names no bound, and the most any list keeps.
pub const LIST_ITEMS_DEFAULT: u32 = 100;
pub const LIST_ITEMS_MAX: u32 = 1000;

/// Longest list item (JSON text).
pub const LIST_ITEM_MAX_BYTES: usize = 16 * 1024;

/// Context injected by default, in characters.
pub const CONTEXT_BUDGET_DEFAULT_CHARS: usize = 4000;

/// A snapshot is written when this many records were folded since the last one.
pub const SNAPSHOT_EVERY_RECORDS: u64 = 128;

/// Largest snapshot file read.
pub const SNAPSHOT_MAX_BYTES: u64 = 256 * 1024 * 1024;
