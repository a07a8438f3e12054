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
/// The longest event payload `format::payload::encode_event` writes: the MessagePack str of
/// the longest input (its 5-byte str32 header and `INPUT_MAX_BYTES` of JSON). A digest that
/// would make a payload longer is left out, so digests never make an event too long.
pub const EVENT_PAYLOAD_MAX_BYTES: usize = INPUT_MAX_BYTES + 5;

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

/// The hook reads stdin into a buffer of this size first, and grows it to
/// `HOOK_READ_CHUNK_MAX_BYTES` (a pipe's default capacity) once a read fills it.
pub const HOOK_READ_CHUNK_MIN_BYTES: usize = 8 * 1024;
pub const HOOK_READ_CHUNK_MAX_BYTES: usize = 64 * 1024;

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

/// Once the first byte of the hook's stdin has arrived, the rest is read for up to this long
/// from the hook's start (`[hook] input_timeout_ms`), whatever the deadline: the deadline
/// bounds waiting for the lock and for work, never the loss of input already arriving. Past
/// it, what arrived is journaled as `sjournal.unparsed` with the reason.
pub const HOOK_INPUT_TIMEOUT_MS_DEFAULT: u64 = 10_000;

/// Spool files one hook merges at most when it opens the session (the rest are left for the
/// next writers, readers and `sjournal flush`; the hook's own event is then spooled behind
/// them, in order). Bounds the work one event does after a long backlog.
pub const HOOK_SPOOL_MERGE_MAX_FILES: usize = 64;

/// How long a read command (`log`, `state`, ...) waits for the session's lock to merge its
/// pending spool before it shows the pending events as pending instead.
pub const READER_MERGE_WAIT_MS: u64 = 200;

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

/// Redaction rules the fold counts by name (`JournalFacts::redactions`); findings of any
/// other rule count together. The built-in rules are a few dozen.
pub const REDACTION_RULES_MAX: usize = 128;

/// Longest slot value (JSON text).
pub const SLOT_VALUE_MAX_BYTES: usize = 64 * 1024;

/// Items a list keeps when the push names no bound, and the most any list keeps.
pub const LIST_ITEMS_DEFAULT: u32 = 100;
pub const LIST_ITEMS_MAX: u32 = 1000;

/// Longest list item (JSON text).
pub const LIST_ITEM_MAX_BYTES: usize = 16 * 1024;

/// The recovery block (after a compaction, and its fallbacks) is at most this many characters
/// by default (`[hook] context_budget_chars` in config.toml changes it). The one budget
/// default: the hook, `replay`, `context show` and the demo all use it.
pub const CONTEXT_BUDGET_DEFAULT_CHARS: usize = 4000;

/// No injection is ever longer than this, whatever the configuration says: Claude Code spills
/// `additionalContext` over 10,000 characters to a file.
pub const CONTEXT_BUDGET_MAX_CHARS: usize = 9_500;

// Budgets of the other injections (`context::policy`), in characters.

/// SessionStart(resume | fork): the delta since the transcript was saved.
pub const RESUME_BUDGET_CHARS: usize = 600;
/// SessionStart(startup): session notes and the caller's handoff / memory sections.
pub const STARTUP_BUDGET_CHARS: usize = 1_500;
/// SessionStart(clear): notes and a pointer, nothing of the old task.
pub const CLEAR_BUDGET_CHARS: usize = 400;
/// UserPromptSubmit: new and changed notes only.
pub const PROMPT_BUDGET_CHARS: usize = 800;
/// SubagentStart (opt-in): the standing instructions.
pub const SUBAGENT_BUDGET_CHARS: usize = 500;
/// PostToolUseFailure (opt-in): the nudge about an identical earlier failure.
pub const FAILURE_NUDGE_BUDGET_CHARS: usize = 300;

/// Shares of the recovery block, in characters at the default budget (scaled with the
/// budget): (section, reserve, hard cap). A section keeps its reserve until every section
/// has given up what it has above its own; none grows past its cap. Persistent notes have no
/// reserve and a cap of `NOTES_CAP_PERCENT` of the budget.
pub const SECTION_SHARES_CHARS: &[(&str, usize, usize)] = &[
    ("frame", 320, 320),
    ("instructions", 800, 1_400),
    ("todos", 700, 1_200),
    ("left-off", 400, 600),
    ("failures", 500, 800),
    ("files", 500, 900),
    ("agents", 300, 500),
];
pub const NOTES_CAP_PERCENT: usize = 40;

/// Text cuts in the rendered block, in characters.
pub const INSTRUCTION_SHOWN_CHARS: usize = 300;
pub const ORIGINAL_REQUEST_CHARS: usize = 300;
pub const LATEST_REQUEST_CHARS: usize = 400;
pub const LEFT_OFF_CHARS: usize = 400;
pub const LEFT_OFF_CUT_CHARS: usize = 200;
pub const SUBAGENT_RESULT_CHARS: usize = 200;
pub const ERROR_LINE_CHARS: usize = 200;
/// Standing instructions shown at most (the newest).
pub const INSTRUCTIONS_SHOWN_MAX: usize = 8;
/// Instructions never dropped for room (they are cut instead).
pub const INSTRUCTIONS_KEPT_NEWEST: usize = 3;
/// Unresolved failures shown at most (the newest).
pub const FAILURES_SHOWN_MAX: usize = 3;
/// Files listed at most before "and N more".
pub const FILES_SHOWN_MAX: usize = 15;
/// A todo list longer than this collapses its completed items into a count.
pub const TODOS_SHOWN_FULL_MAX: usize = 10;

/// Version of the standing-instruction marker rule (`fold::instructions`). It is part of the
/// fold: changing the rule changes states, so it goes with a `fold::FOLD_VERSION` bump.
pub const INSTRUCTION_MARKERS_VERSION: u32 = 1;
/// Standing instructions kept in the state, and the longest one.
pub const INSTRUCTIONS_KEPT: usize = 32;
/// Instruction files (`InstructionsLoaded.file_path`) a session's state keeps.
pub const INSTRUCTION_FILES_KEPT: usize = 8;
/// The largest instruction file memory reads at compact (a larger one is not read).
pub const INSTRUCTION_FILE_MAX_BYTES: u64 = 256 * 1024;
pub const INSTRUCTION_MAX_BYTES: usize = 1_200;
/// Sentences of one prompt examined for instructions.
pub const INSTRUCTION_SENTENCES_MAX: usize = 64;
/// Todo items kept, and the longest item text.
pub const TODOS_MAX: usize = 100;
pub const TODO_TEXT_MAX_BYTES: usize = 600;
/// The head of a proposed plan kept.
pub const PLAN_HEAD_MAX_BYTES: usize = 600;
/// Failures of distinct calls kept; error lines kept per failure, and the longest.
pub const FAILURES_KEPT: usize = 32;
pub const ERROR_TAIL_LINES: usize = 2;
pub const ERROR_LINE_MAX_BYTES: usize = 400;
/// The tail of a turn's last assistant message kept.
pub const LEFT_OFF_MAX_BYTES: usize = 1_600;
/// Tool actions of the current turn kept.
pub const TURN_ACTIONS_KEPT: usize = 3;
/// Launched subagents waiting for their start, background tasks kept, and the longest
/// subagent description or result head.
pub const LAUNCHES_KEPT: usize = 16;
pub const BACKGROUND_KEPT: usize = 16;
pub const SUBAGENT_TEXT_MAX_BYTES: usize = 400;
/// The longest compaction summary kept (gap-aware rendering searches it).
pub const SUMMARY_MAX_BYTES: usize = 64 * 1024;
/// Item keys remembered as seen since the last compaction (past this an item may be shown
/// again, never hidden wrongly).
pub const SEEN_MAX: usize = 4_096;
/// Injections a session whose requests show its history (Gemini CLI) remembers, newest last:
/// how each reads in a request, to find which ones a compressed history still holds.
pub const INJECTED_BLOCKS_KEPT: usize = 8;
/// Items remembered per such injection.
pub const INJECTED_BLOCK_ITEMS_MAX: usize = 256;

/// A snapshot is written when this many records were folded since the last one.
pub const SNAPSHOT_EVERY_RECORDS: u64 = 128;

/// Largest snapshot file read.
pub const SNAPSHOT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// Webhook attempt timeout when the configuration gives none (the OpenClaw lifecycle RFC's).
pub const WEBHOOK_TIMEOUT_MS_DEFAULT: u64 = 5_000;

/// Longest webhook attempt timeout accepted.
pub const WEBHOOK_TIMEOUT_MS_MAX: u64 = 600_000;

/// Tries of one event per deliverer run, and the first wait and the cap of the exponential
/// backoff between them, when the configuration gives none. A run that spends its attempts
/// leaves the event pending for the next run; nothing is dropped.
pub const WEBHOOK_ATTEMPTS_DEFAULT: u32 = 6;
pub const WEBHOOK_BACKOFF_MS_DEFAULT: u64 = 1_000;
pub const WEBHOOK_MAX_BACKOFF_MS_DEFAULT: u64 = 60_000;

/// Longest webhook name (it names files).
pub const WEBHOOK_NAME_MAX_BYTES: usize = 64;

/// Values shorter than this are not redacted as secrets (redacting "1" would garble numbers;
/// nothing that short is a secret).
pub const WEBHOOK_SECRET_MIN_BYTES: usize = 4;

/// Start of a failed response's body kept in the `sjournal.webhook` record.
pub const WEBHOOK_RESPONSE_KEPT_BYTES: usize = 256;

/// Pending events a deliverer plans at once per webhook; it scans again for the rest.
pub const WEBHOOK_PLAN_MAX_EVENTS: usize = 4096;

/// How long a starting deliverer waits for the session's delivery lock before it concludes
/// another deliverer holds it (a hook probing the lock holds it for microseconds).
pub const WEBHOOK_LOCK_WAIT_MS: u64 = 50;
/// A shipped segment holds at most this many bytes of record frames (a single larger record is
/// shipped alone in its own segment).
pub const SEGMENT_MAX_BYTES: usize = 4 * 1024 * 1024;

/// The largest object `verify --remote`, `fetch` and `index` read: a segment can exceed
/// `SEGMENT_MAX_BYTES` only by holding one record, itself at most `FRAME_MAX_BYTES`.
pub const REMOTE_OBJECT_MAX_BYTES: u64 = FRAME_MAX_BYTES as u64 + SEGMENT_MAX_BYTES as u64;

// Cross-session memory (`crate::memory`).

/// Items a scope journal's memory keeps (proposed, accepted, rejected, …); a proposal past
/// it is refused until items are forgotten.
pub const MEMORY_ITEMS_MAX: usize = 512;
/// The longest memory item text, in bytes.
pub const MEMORY_TEXT_MAX_BYTES: usize = 1000;
/// Provenance entries kept per item (the sessions that gave the same instruction).
pub const MEMORY_PROVENANCE_MAX: usize = 4;
/// Sessions counted per item ("seen in N sessions", its confidence); also stops a later
/// session from re-writing an item it cannot add to.
pub const MEMORY_SEEN_SESSIONS_MAX: usize = 32;
/// Rejected or forgotten text hashes kept (never proposed again).
pub const MEMORY_REJECTED_MAX: usize = 4096;
/// Sessions of a project the project journal remembers, newest last.
pub const MEMORY_SESSIONS_KEPT: usize = 8;
/// Reviewed memory injected at startup, clear and compact, in characters.
pub const MEMORY_INJECT_CHARS: usize = 600;
/// The handoff from the project's last unfinished session, in characters.
pub const HANDOFF_CHARS: usize = 1000;
/// The handoff comes only from one of the project's last this-many sessions.
pub const HANDOFF_SESSIONS: usize = 3;
/// The most `[memory] handoff_sessions` may say (at most the sessions a project journal keeps).
pub const HANDOFF_SESSIONS_MAX: usize = MEMORY_SESSIONS_KEPT;
