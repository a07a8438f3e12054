//! Full-text search over every session: a derived read model of the journals, like the
//! PostgreSQL index of `remote`, never the source of truth. `sjournal search` and the MCP
//! server (`crate::mcp`) ask it; every hit names the record it came from (session, seq, time,
//! kind, record hash), so a person can check it with `sjournal verify` and read it with
//! `sjournal show --session ID --seq N`.
//!
//! # What is searched
//!
//! One document per record that says something a person looks for ([`doc`]): prompts, the
//! assistant's closing messages, tool calls (command, file path, pattern) with a bounded
//! excerpt of their outcome or error, failures, compaction summaries, todo lists, subagents,
//! notes. Records of the journal are `journal`; records found after damage in a journal (and
//! the damaged record itself, as far as its bytes read) are `damaged`; records of a session's
//! rescue journal are `rescued`; spooled events not yet merged are `pending` (no seq or hash
//! yet). Reviewed (accepted) memory items are documents of kind `memory`, cited by their scope
//! journal's record; scope journals themselves are never indexed (they hold pending
//! proposals, whose text never reaches an answer).
//!
//! Ranking is BM25 (tantivy's), over the text and the paths; ties are broken by the session
//! (a hash of its id) and the record's seq, so the order never depends on how the index was
//! built. Scores are rounded to 4 decimals before they order anything.
//!
//! # The index on disk
//!
//! ```text
//! <root>/search/            0700
//!   lock                    flock: exclusive while the index is written, shared while searched
//!   index/                  the tantivy index (files 0600); its commit payload names the
//!     sjournal-cursors-<blake3/16>.bin   the cursors of that commit (`index::Meta`)
//!   index.new/              a rebuild under way (swapped in whole when complete)
//! ```
//!
//! Fields (`index::schema`): `body` (text, positions, stored), `file` (each path the record
//! names, as the journal has it; positions, so `file:src/loader.rs` is a phrase that matches
//! the absolute path), `tool` (lowercased, exact), `tool_name` (stored), `failed` (`yes`|`no`),
//! `kind`, `status`, `session` (exact, stored), `seq` (stored), `ts` (i64 ns, indexed and fast,
//! for `--since`/`--until`), `tie` and `order` (fast: the tie-break), `hash` and `record_kind`
//! (stored).
//!
//! The commit payload names the cursors' file (`index::CursorsRef`: `version`,
//! `INDEX_VERSION`, another version is rebuilt; the file's name and blake3), which holds, per
//! journal file name, its `Cursor`: the session, the file's
//! length, mtime and inode when last read, the offset of the next record, the last record
//! indexed (offset, seq, the hash it links to, its hash), whether the journal stops at damage,
//! the first `cwd` of the session and the project it makes, and, for a memory scope journal,
//! the sessions its `session` ops list (the hook's own record of which project each session
//! belongs to). Documents and cursors are committed together, so a crash never indexes a
//! record twice or skips one.
//!
//! # Keeping it current
//!
//! Never on the hook's path. After the reply to a Stop or SessionEnd, the hook starts a
//! detached `sjournal search --update` (`hook::after`) if an index exists (a root nobody
//! searches gets none); and every search catches up first. A catch-up reads each journal
//! whose length, mtime or inode changed, from its cursor: the record at the cursor must still
//! have the hash it had, and then only new records are added. Any other change (a repaired
//! journal, one that is shorter, gone, or whose damage changed) rebuilds the whole index
//! (`update::rebuild`), so documents are never deleted and a rebuilt index ranks exactly like
//! one caught up record by record. `sjournal search --reindex` rebuilds on demand. Pending
//! records and memory items are read when a query runs, into an index in memory scored with
//! the main index's statistics: they change too often to be kept.
//!
//! # Scope
//!
//! A session belongs to a project when the project's memory scope journal lists it (the hook
//! writes a `session` op at every SessionStart, with the project it decided: the host's
//! project directory, else the git root above the event's `cwd`, else the `cwd`), else when
//! its first `cwd` lies in the project (`memory::project_dir`). A search covers the current
//! project's sessions unless asked for `--all` or a `--session`.

pub mod doc;
pub mod index;
pub mod query;
mod read;
mod run;
pub mod snippet;
pub mod spawn;
pub mod update;

pub use doc::{DocKind, Status};
pub use read::{hashes_at, records_between, Shown};
pub use run::{
    reviewed, search, search_cached, Found, Hit, Options, Request, Scope, LIMIT_DEFAULT, LIMIT_MAX,
};
pub use update::Updated;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::Result;
use crate::journal::Root;

/// Brings the index of `root` up to date (creating it if missing): a catch-up, or with
/// `rebuild` the whole index again. Waits for the index's lock until `deadline`.
pub fn update(root: &Root, rebuild: bool, deadline: Option<Instant>) -> Result<Updated> {
    let place = index::Place::of(root);
    place.ensure(root)?;
    let _lock = index::Lock::exclusive(&place, deadline)?;
    if rebuild {
        update::rebuild(root, &place, "asked for (--reindex)")
    } else {
        update::catch_up(root, &place)
    }
}

/// How long the detached update waits for the index's lock (searches hold it shared for a
/// moment; another update for as long as its catch-up takes).
const DETACHED_WAIT: Duration = Duration::from_secs(60);

/// The detached update the hook starts: a catch-up once the index's lock is free. Updates
/// started while one already waits for the lock leave at once: the waiting one reads the
/// journals only after it gets the lock, so it sees what they wrote. (Skipping whenever the
/// lock is busy would lose the update to any search that happened to hold it.)
pub fn update_detached(root: &Root) -> Result<Option<Updated>> {
    let place = index::Place::of(root);
    if !place.exists() {
        return Ok(None);
    }
    let Some(queued) = index::Lock::try_queue(&place)? else {
        return Ok(None);
    };
    let lock = index::Lock::exclusive(&place, Some(Instant::now() + DETACHED_WAIT))?;
    // The next update may queue now: this one has not read any journal yet.
    drop(queued);
    let u = update::catch_up(root, &place);
    drop(lock);
    u.map(Some)
}

/// After a journal was rewritten in place (`erase`, `migrate`): if the root has an index,
/// brings it up to date now, so it forgets what the journal no longer holds (a journal with
/// another inode is read again from its start: `update::catch_up`). None if there is no index.
pub fn after_rewrite(root: &Root) -> Result<Option<Updated>> {
    if !index_exists(root) {
        return Ok(None);
    }
    update(root, false, Some(Instant::now() + DETACHED_WAIT)).map(Some)
}

/// True if the root has an index (the hook starts updates only then).
pub fn index_exists(root: &Root) -> bool {
    index::Place::of(root).exists()
}

/// `update` (a catch-up) then the cursors it leaves, with the index taken from `cache` while it
/// is still the one on disk and left there opened (the MCP server's tools that need the
/// sessions and their projects, without opening the index again at every call).
pub fn meta_cached(root: &Root, cache: &mut index::Cache) -> Result<index::Meta> {
    let place = index::Place::of(root);
    place.ensure(root)?;
    let _lock = index::Lock::exclusive(&place, None)?;
    update::catch_up_cached(root, &place, cache)?;
    let opened = index::Opened::get(cache, &place.index(), false)?;
    Ok(opened.meta.clone().unwrap_or_else(index::Meta::new))
}

/// The index's cursors as last committed (what the sessions are, their projects, the last
/// record read of each journal).
pub fn meta(root: &Root) -> Result<index::Meta> {
    let place = index::Place::of(root);
    let _lock = index::Lock::shared(&place, None)?;
    let ix = tantivy::Index::open_in_dir(place.index()).map_err(index::ix_err)?;
    Ok(index::Meta::of(&ix, &place.index())?.unwrap_or_else(index::Meta::new))
}

/// A time as `--since`/`--until` take it: RFC 3339 (a date alone is its midnight UTC), or a
/// duration before now (`2h`, `3days`). Unix ns.
pub fn parse_time(s: &str) -> std::result::Result<i64, String> {
    let s = s.trim();
    let at = if let Ok(t) = humantime::parse_rfc3339_weak(s) {
        t
    } else if let Ok(t) = humantime::parse_rfc3339_weak(&format!("{s}T00:00:00Z")) {
        t
    } else if let Ok(d) = humantime::parse_duration(s) {
        SystemTime::now()
            .checked_sub(d)
            .ok_or_else(|| format!("{s:?} reaches before 1970"))?
    } else {
        return Err(format!(
            "{s:?} is not a time: use 2026-12-01, 2026-12-01T10:00:00Z or a duration ago such \
             as 2h or 3days"
        ));
    };
    let ns = at
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_nanos();
    i64::try_from(ns).map_err(|_| format!("{s:?} is too far in the future"))
}

pub use crate::format::rfc3339;
