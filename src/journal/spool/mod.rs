//! The spool: where an event goes when the journal cannot take it *now*, so that it is still
//! not lost; and the merge that moves spooled events into the journal, in order, the next
//! time the session is opened for writing (`Session::open`), read, or flushed.
//!
//! The bytes (the directories and their names, the spool file and its authentication frame,
//! the spool key, `merge.intent`, the `sjournal.spool-merge` record) are specified in
//! `journal-format.md`, "The spool's files"; the codecs are in `format::spool`. This is the
//! protocol: who spools and when, how a spool file is written, how a merge runs and what each
//! crash leaves, what is refused, and what readers see meanwhile. The durable write is in
//! [`write`]; the merge and the settling of an interrupted merge in [`merge`].
//!
//! # Who spools, and when
//!
//! Every writer, through the session's policy (`journal::session`): `sjournal hook`, `append`,
//! `import` and the primitives. A batch is spooled when:
//!
//! - the session's lock was not had before the writer's deadline (the hook's: `deadline -
//!   min(50 ms, deadline/2)`; other commands wait as long as it takes);
//! - the journal refused the append (an I/O error, ENOSPC, a failed fsync: then the spool file
//!   carries `attempted`, where the failed write may have landed), or the main journal is
//!   damaged and its rescue journal refused too;
//! - older spooled files are still waiting after a bounded merge (the hook's): a batch never
//!   overtakes them;
//! - the hook's watchdog reached the deadline while the worker still held the event unwritten
//!   (it was waiting for the lock, running exec handlers, or folding), or the worker panicked
//!   before writing.
//!
//! A session has two spool directories:
//!
//! - `<root>/sessions/<stem>.spool/`, next to the journal: as durable as the journal itself;
//! - the **fallback spool**, `<base>/<root key>/<stem>.spool/` (see [`fallback`]), on another
//!   file system, used only when the root cannot take a file at all (no space, a read-only or
//!   unwritable file system, a symlink where `sessions/` should be). A writer tries each base
//!   in order and keeps the event in the first that takes the whole write (a base that is
//!   refused, unwritable or full is passed over; a failed write removes what it wrote first,
//!   so nothing is kept twice); only when none takes it is the event lost, and the user told.
//!   Readers look in every base (an event spooled by a hook with `$XDG_RUNTIME_DIR` set is
//!   found by a `flush` from a shell without it). The fallback is **less durable** than the
//!   root (`$XDG_RUNTIME_DIR` is usually a tmpfs, lost at reboot), and the user is told
//!   whenever an event goes there.
//!
//! ## The hook's claim, and why the watchdog never cuts a claimed write
//!
//! Exactly one of the hook's two threads writes the event: whichever claims it first. After
//! its claim the worker does nothing but the I/O that makes the event durable — the journal
//! batch (write, then `fdatasync`), or, when the journal could not take it, a spool file
//! (write, `fdatasync`, link, directory `fsync`). If the watchdog finds the event claimed by
//! the worker at the deadline, it **waits for that I/O to finish, however long it takes**;
//! after `HOOK_COMMIT_GRACE_MS` (250 ms) it only adds a diagnostic that the write was slow.
//! Once the watchdog has claimed the event, the worker writes nothing, so the event is never
//! journaled twice.
//!
//! Giving up after the grace and exiting would lose events on a loaded machine (slow fsyncs,
//! starved threads): the exiting process kills the worker before its journal write, or after
//! the spool file's `fdatasync` but before its link (a `.tmp-` file, which the merge ignores
//! by design). Sixteen parallel hooks with a 4 ms deadline that exited so lost up to 14
//! events of 16 in one run. Waiting costs little: the watchdog could only replace the write
//! with the same I/O (a spool file needs its own syncs), and a process is not reaped while
//! one of its threads is in `fsync` anyway (Linux finishes the sync, then kills the thread
//! before its next step), so exiting "early" never made the hook return much sooner on a slow
//! disk; what waiting adds is the rest of the write (the link and the directory's `fsync`).
//! Under an artificial fsync storm the median hook time was unchanged and the slowest hooks
//! took up to about a second longer.
//!
//! A spooled copy marked with where the worker may have written (as `attempted` marks a
//! failed append) would not do: the worker may be writing a *spool file*, not the journal,
//! and two spool files of one event cannot be told apart without a deduplication across
//! merges that the format does not have.
//!
//! So the hook's deadline bounds what depends on others — the session's lock, exec handlers,
//! folding the context — and never the event's own durable write. The same goes for stdin:
//! if the event has not been read `HOOK_STDIN_GRACE_MS` (1 s) after the deadline, the
//! watchdog polls stdin. If bytes or end-of-file are waiting, the event is there and only the
//! reading thread was starved: it keeps waiting (and then takes the event over, the deadline
//! being past). If nothing is waiting, the host has not written its event; there is nothing
//! to keep, and the hook fails open.
//!
//! # Writing a spool file
//!
//! 1. The spool directory is created if missing (0700; a symlinked one is refused; the
//!    fallback spool's directories are checked as below).
//! 2. The frame (in the fallback spool, followed by its authentication frame) is written to
//!    `.tmp-<name>` created with `O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600, and `fdatasync`ed.
//! 3. `.tmp-<name>` is hard-linked to `<name>` (a link never replaces an existing file,
//!    unlike `rename`), the temporary name is unlinked, and the directory is `fsync`ed.
//!
//! So a file under a final name is always complete and durable once the hook reports it
//! spooled. A crash before step 3 leaves a `.tmp-` file, which the merge ignores (the hook had
//! not reported the event kept). A batch too large for one frame is written as several files,
//! broken only before an event, so an event stays in one file with the records that belong
//! to it.
//!
//! # Merging
//!
//! Holding the session's lock, after recovery and before anything else is appended: in
//! `Session::open` (the session's writers), in every read command (which wait at most 200 ms
//! for the lock), and in `sjournal flush`. Only main journals merge spools: while a session's
//! main journal is damaged, new events go to its rescue journal and spooled ones wait for the
//! repair.
//!
//! 1. **Settle** an interrupted merge if `merge.intent` exists (below).
//! 2. List the `*.spool` files (not `.tmp-`, not `.damaged`, `.untrusted` or `.accepted`) of
//!    the root's spool directory and of the fallback spool directories that pass their
//!    checks, together, sorted by name. Take up to `SPOOL_MERGE_MAX_FILES` (1024) of them,
//!    and fewer if the batch would pass `BATCH_MAX_BYTES`; further batches follow in the same
//!    open. The hook merges at most `HOOK_SPOOL_MERGE_MAX_FILES` (64) files per event, so a
//!    long backlog never holds one event up; if files are left, its own event is spooled
//!    behind them (it never overtakes them) and its context is still rendered.
//! 3. Check each: a regular file of the user's (else untrusted, below); in the fallback
//!    spool, an authentication frame whose MAC verifies under the root's key (else
//!    untrusted); one entry frame, valid CRC, kind `sjournal.spool-entry`, a decodable
//!    `SpoolFile` of this session with valid record kinds and sizes. A file that fails these
//!    last checks is renamed to `<name>.damaged` (kept, never deleted) and listed as damaged;
//!    an untrusted one is renamed `<name>.untrusted` and reported, never merged. A file with
//!    `attempted` whose first record *is* in the journal at `attempted.offset` (same seq,
//!    same kind, same payload blake3) is deleted without merging, after an `fdatasync` of the
//!    journal: its failed append reached the file after all (after a failed fsync the kernel
//!    may still write the pages; recovery keeps a CRC-valid record).
//! 4. Write `merge.intent` in the root's spool directory (created if only fallback files are
//!    merged): the journal offset and seq where the batch will begin. Written to a temporary
//!    file, `fdatasync`ed, renamed into place, directory `fsync`ed.
//! 5. Append **one batch** (one write, one `fdatasync`): a `sjournal.spool-merge` record, then
//!    every record of every file, in order. A record that points at its event
//!    (`sjournal.exec`, `sjournal.host`, `sjournal.injected`: spooled before the event had a
//!    seq) gets, at this point, `event_seq` = the seq of the event before it in its file. The
//!    merged records carry the merge's time, or their own `ts_unix_ns` where the spool file
//!    gives one (an import's).
//! 6. Unlink the merged spool files; `fsync` each directory they were in.
//! 7. Unlink `merge.intent`; `fsync` the directory.
//!
//! If only damaged files were found, step 5 appends just a `sjournal.spool-merge` record
//! naming them (no intent is needed: nothing is merged).
//!
//! ## Settling an interrupted merge
//!
//! A `merge.intent` found on open means a merge stopped somewhere between steps 4 and 7. The
//! batch of step 5 is a single write, so what reached the disk is a prefix of it (recovery has
//! already cut any torn remainder and appended `sjournal.recovered`). The writer:
//!
//! 1. reads the record at the intent's `offset`; unless it is a valid frame with the intent's
//!    `seq` and kind `sjournal.spool-merge`, nothing of the batch is in the journal;
//! 2. otherwise walks the entries in order, checking each following record's seq and its
//!    blake3 (kind, 0x00, payload) against the digests the merge record lists, and stops at
//!    the first mismatch or at the end of the valid journal;
//! 3. if any are there, `fdatasync`s the journal (the interrupted merge may have died before
//!    its sync), then unlinks the spool files whose records are all there (and, with a
//!    warning, a file whose event is there but whose later records were cut by the tear —
//!    they were exec outputs), `fsync`s the directory, then unlinks the intent and `fsync`s
//!    again;
//! 4. merges whatever spool files remain, as usual.
//!
//! If a spool file cannot be deleted the intent stays and no new merge starts on this open
//! (the writer opens normally and reports a warning); the next open settles again. Settling
//! only reads journal records, so doing it twice is harmless.
//!
//! ## What each crash leaves, and what the next open does
//!
//! | crash after | on disk | next open |
//! |---|---|---|
//! | spool step 2 | `.tmp-` file | ignored (the event was never reported kept) |
//! | spool step 3 | complete spool file | merged |
//! | merge step 4 (intent written) | intent; journal without the batch | nothing at `offset` is a merge record: all files merged again, once |
//! | during step 5 (torn batch) | intent; a prefix of the batch | prefix checked record by record; those files deleted, the rest merged |
//! | step 5 (batch synced) | intent; whole batch; spool files | every file found in the journal: deleted, none merged again |
//! | step 6 (files deleted) | intent; whole batch | nothing to delete; intent removed |
//! | step 7 | clean | nothing to do |
//!
//! No spooled event is lost and none is merged twice. The one case that could repeat events
//! is a damaged `merge.intent` (it is renamed into place whole, so only disk damage produces
//! one): which files the interrupted merge wrote is then unknown, the files are merged
//! again, and the second `sjournal.spool-merge` record, listing the same file names, makes
//! the repetition visible to an auditor.
//!
//! ## Relying on records another process wrote
//!
//! A writer gives up the session's lock before its `fdatasync` (group commit), and a process
//! can die between its write and its sync. So a journal record the next opener reads back may
//! still be only in the page cache. Wherever the merge deletes a spool file *because* its
//! records are in the journal — settling an interrupted merge, or skipping a file whose
//! `attempted` append is found — it first `fdatasync`s the journal. A deleted spool file is
//! never the only copy that was durable. (Recovery itself never cuts or skips a complete,
//! CRC-valid record, synced or not.)
//!
//! # What is merged, and what is refused
//!
//! A spool file's records become journal records (and, for a scope journal, memory that
//! reaches the model), so a file is merged only if it is the user's own. The fallback's
//! default bases are shared places (another user can create `/tmp/sjournal-<uid>` first), and
//! its root key and file stems are names anyone can compute, so they protect nothing; what
//! protects it is three checks:
//!
//! 1. **Directories.** Every directory from the first one sjournal owns
//!    (`fallback_spool_dir`, or `sjournal/` / `sjournal-<uid>/`) down to `<stem>.spool/` must
//!    be a real directory (not a symlink), owned by the user, with no permission for group or
//!    others. A writer creates them 0700 and checks them again after creating them. A
//!    **reader** checks the same, level by level, without creating anything, and merges
//!    nothing from under a directory that fails: it reports it instead ([`fallback::Base`]).
//! 2. **Files.** A spool file is merged only if it is a regular file owned by the user
//!    (`read_spool`: opened with `O_NONBLOCK|O_NOFOLLOW`, checked with `fstat`). This holds
//!    in the root's spool too.
//! 3. **Authentication.** A file in the fallback spool is merged only if it carries a MAC,
//!    under the root's spool key ([`key`]), of its entry frame (format 2). A file another user
//!    wrote, one copied from another root, or one changed after it was written does not
//!    verify. If the root has no usable key when an event must go to the fallback, the event
//!    is still kept — without a MAC — and the user is told it is not authenticated and will
//!    not be merged on its own.
//!
//! A spool file that fails check 2 or 3 is **untrusted**: never merged, never shown or folded
//! by a reader as the session's, never deleted. The merge renames it `<name>.untrusted` in its
//! directory (out of the way of later merges; a file of another user is moved without being
//! opened). A fallback file that cannot be checked *now* because the root's key is unusable
//! is left where it is, and merged once the key reads again. `sjournal flush` (every run),
//! `sjournal verify --all` and `sjournal sessions` list every refused directory and file
//! (`UNTRUSTED spool directory|file <path>: <why>`, then what to do; `verify --all --json`
//! and `flush --json`: a `{"refused_spool": {path, directory, fallback, reason, advice}}`
//! line) and exit 1; [`refused`] is the function behind these reports. What to do:
//!
//! - a refused **directory**: sjournal neither reads nor writes under it; its owner or an
//!   administrator removes it, or `[hook] fallback_spool_dir` names a private directory;
//! - a refused **file**: if the user spooled it (a fallback file of format 1 from an older
//!   sjournal), `sjournal flush --accept FILE --dry-run` prints its records and changes
//!   nothing, and `sjournal flush --accept FILE` ([`accept`]) spools its records again in the
//!   root's spool of its session (keeping their times), merges them, and renames the file
//!   `<name>.spool.accepted`; otherwise the user deletes it (`rm FILE`). sjournal never
//!   deletes it.
//!
//! # What readers see
//!
//! Merged events are ordinary event records (their kind is the host's event name, their
//! payload the JSON text byte for byte), so the fold needs no special case; they come after
//! the events that were journaled while they waited, with their spool time in the
//! `sjournal.spool-merge` record before them.
//!
//! Before reading, every read command (`log`, `tail`, `state`, `export`, `context show`,
//! `sessions`, `replay`, `report`, `checkpoint`) merges the session's pending spool when it
//! can take the session's lock within 200 ms and the root is writable. What stays pending is
//! shown as pending: `log` and `tail` print its records after the journal's, marked `pending`
//! (with `--json`: `"pending": true`, no seq, no hash); `state` and `context show` fold it in
//! on top of the journal's state and say so (`"pending": N`); the others name it on stderr
//! (`export` then exits 1: its lines are journal records). `checkpoint` never signs a head
//! while events are pending. `verify` does not merge (it only looks): it lists each pending
//! spool file — path, whether it is in the fallback spool, its record kinds, why it was
//! spooled — and exits 1. `sjournal flush (--session ID | --all)` merges explicitly. An
//! untrusted spool file is never pending: no reader shows or folds its records; `flush`,
//! `verify --all` and `sessions` list it with what to do.

pub mod fallback;
pub mod key;
pub mod merge;
pub mod write;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::spool::{self as format, SpoolFile};
use crate::journal::paths::{self, Root, SessionPaths};
use crate::journal::WriterOptions;
use crate::limits::FRAME_MAX_BYTES;
use crate::storage::{self, Owner};

use key::SpoolKey;

pub use merge::{merge_pending, MergeReport};
pub use write::{write_records, KeptIn, ToSpool};

pub(crate) const EXT: &str = "spool";
pub(crate) const INTENT: &str = "merge.intent";
pub(crate) const TMP_PREFIX: &str = ".tmp-";
pub(crate) const DAMAGED_EXT: &str = "damaged";
/// What the user is told of a fallback file written without a MAC (the root's key could not
/// be had): it waits for the user to accept it.
pub const UNAUTHENTICATED: &str = "NOT authenticated";
/// The suffix an untrusted spool file is set aside under (kept, never merged).
pub(crate) const UNTRUSTED_EXT: &str = "untrusted";
/// The suffix a spool file the user accepted is kept under once its records are spooled
/// again in the root.
pub(crate) const ACCEPTED_EXT: &str = "accepted";

/// One directory of a session's spool files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoolDir {
    pub path: PathBuf,
    /// The fallback spool (outside the root, less durable).
    pub fallback: bool,
}

/// The session's spool directories: the root's, then the fallback's (every place one may be
/// that passes the checks; see [`fallback::Base`]).
pub fn dirs(root: &Root, paths: &SessionPaths, opts: &WriterOptions) -> Vec<SpoolDir> {
    let mut v = vec![SpoolDir {
        path: paths.spool.clone(),
        fallback: false,
    }];
    for dir in fallback::session_dirs(root, &paths.stem, opts.fallback_dir.as_deref()) {
        v.push(SpoolDir {
            path: dir,
            fallback: true,
        });
    }
    v
}

/// A spool file waiting to be merged.
#[derive(Debug, Clone, Serialize)]
pub struct PendingSpool {
    pub path: PathBuf,
    /// In the fallback spool, outside the root (less durable).
    pub fallback: bool,
    pub spooled_at_ns: Option<i64>,
    pub reason: Option<String>,
    /// The kinds of its records, in order (the event first).
    pub kinds: Vec<String>,
    /// Why the file cannot be merged (it will be set aside as `.damaged`), if it cannot.
    pub damaged: Option<String>,
    /// The file's content, when it reads.
    #[serde(skip)]
    pub file: Option<SpoolFile>,
}

/// Every spool file waiting to be merged into the session's journal, from the root's spool
/// and the fallback spool, in merge order (oldest first). Read only: nothing is changed.
pub fn pending_spool(
    root: &Root,
    session_id: &str,
    opts: &WriterOptions,
) -> Result<Vec<PendingSpool>> {
    let paths = root.session(session_id)?;
    let mut out = Vec::new();
    let mut keys = Keys::new(root);
    for (name, dir) in list_all(&dirs(root, &paths, opts))? {
        let path = dir.path.join(&name);
        let (file, damaged) = match read_spool(&path, dir.fallback, Some(session_id), &mut keys) {
            Found::Trusted(f) => (Some(f), None),
            Found::Damaged(e) => (None, Some(e)),
            // Not shown to be the user's: not pending (never shown or folded as the session's);
            // see `refused`.
            Found::Untrusted(_) | Found::Unverifiable(_) => continue,
        };
        out.push(PendingSpool {
            path,
            fallback: dir.fallback,
            spooled_at_ns: file.as_ref().map(|f| f.spooled_at_ns),
            reason: file.as_ref().map(|f| f.reason.clone()),
            kinds: file
                .as_ref()
                .map(|f| f.records.iter().map(|r| r.kind.clone()).collect())
                .unwrap_or_default(),
            damaged,
            file,
        });
    }
    Ok(out)
}

/// True if the session has spool files waiting (cheap: two directory listings).
pub fn has_pending(root: &Root, session_id: &str, opts: &WriterOptions) -> Result<bool> {
    let paths = root.session(session_id)?;
    Ok(!list_all(&dirs(root, &paths, opts))?.is_empty())
}

/// Every session of the root with spool files waiting (in the root's spool or the fallback
/// spool), by the session id its files name.
pub fn sessions_with_pending(root: &Root, opts: &WriterOptions) -> Result<Vec<String>> {
    let mut dirs = vec![root.sessions_dir()];
    dirs.extend(fallback::root_dirs(root, opts.fallback_dir.as_deref()));
    let mut ids = std::collections::BTreeSet::new();
    let mut keys = Keys::new(root);
    for parent in dirs {
        let entries = match std::fs::read_dir(&parent) {
            Ok(e) => e,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                continue
            }
            Err(e) => return Err(Error::io("read directory", &parent, e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_string_lossy().ends_with(&format!(".{EXT}")) {
                continue;
            }
            let dir = entry.path();
            let fallback = parent != root.sessions_dir();
            if fallback && !matches!(fallback::check_dir(&dir), fallback::Base::Trusted(_)) {
                continue;
            }
            // The first trusted file names the session (stems of long ids are hashes).
            for n in list_pending(&dir)? {
                if let Found::Trusted(f) = read_spool(&dir.join(&n), fallback, None, &mut keys) {
                    ids.insert(f.session_id);
                    break;
                }
            }
        }
    }
    Ok(ids.into_iter().collect())
}

/// Spool files waiting to be merged (paths), oldest first.
pub fn pending(root: &Root, session_id: &str) -> Result<Vec<PathBuf>> {
    Ok(pending_spool(root, session_id, &WriterOptions::default())?
        .into_iter()
        .map(|p| p.path)
        .collect())
}

/// The pending file names of several directories, merged into one list in spool order (the
/// names sort by spool time, then process id and counter).
pub(crate) fn list_all(dirs: &[SpoolDir]) -> Result<Vec<(String, &SpoolDir)>> {
    let mut all = Vec::new();
    for d in dirs {
        for n in list_pending(&d.path)? {
            all.push((n, d));
        }
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(all)
}

/// Names of the spool files waiting in `dir`, sorted (oldest first). A missing directory, or
/// one that is not a directory, holds none (the merge checks for links where it writes).
pub(crate) fn list_pending(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(Vec::new())
        }
        Err(e) => return Err(Error::io("read directory", dir, e)),
    };
    let suffix = format!(".{EXT}");
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read directory", dir, e))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !name.starts_with('.') && name.ends_with(&suffix) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The most a spool file may hold: one frame and its authentication.
const FILE_MAX_BYTES: u64 = FRAME_MAX_BYTES as u64 + format::AUTH_MAX_BYTES as u64;

/// What reading one spool file found.
#[derive(Debug)]
pub(crate) enum Found {
    /// The user's own: its records may be merged.
    Trusted(SpoolFile),
    /// It cannot be read as a spool file (the merge sets it aside as `.damaged`).
    Damaged(String),
    /// Not the user's own, or not shown to be (see the module documentation): never merged
    /// (the merge sets it aside as `.untrusted`).
    Untrusted(String),
    /// A fallback file that cannot be checked now: the root's key is missing or unusable.
    /// Not merged, and left where it is (merged once the key is back).
    Unverifiable(String),
}

/// The root's spool key, read once, when a fallback file first needs it.
pub(crate) struct Keys<'a> {
    root: &'a Root,
    key: Option<std::result::Result<SpoolKey, String>>,
}

impl<'a> Keys<'a> {
    pub(crate) fn new(root: &'a Root) -> Keys<'a> {
        Keys { root, key: None }
    }

    fn get(&mut self) -> &std::result::Result<SpoolKey, String> {
        self.key.get_or_insert_with(|| key::load(self.root))
    }
}

/// Reads a spool file and says whether it may be merged: a regular file owned by this user
/// (opened without following a link or waiting on a FIFO), at most a frame long, and, in the
/// fallback spool, authenticated by the root's key; then decoded (of `session_id`, if given).
pub(crate) fn read_spool(
    path: &Path,
    fallback: bool,
    session_id: Option<&str>,
    keys: &mut Keys<'_>,
) -> Found {
    let bytes = match storage::read_regular(path, Owner::Me, FILE_MAX_BYTES) {
        Ok(b) => b,
        Err(
            e @ (Error::Symlink { .. } | Error::NotRegular { .. } | Error::ForeignOwner { .. }),
        ) => return Found::Untrusted(e.to_string()),
        Err(e) => return Found::Damaged(e.to_string()),
    };
    let (entry, auth) = match format::split_auth(&bytes) {
        Ok(x) => x,
        Err(e) => return Found::Damaged(e),
    };
    if fallback {
        let Some(auth) = auth else {
            return Found::Untrusted(
                "it is not authenticated (a fallback spool file of format 1: written by a \
                 version of sjournal before fallback files carried a MAC, or not by sjournal)"
                    .into(),
            );
        };
        match keys.get() {
            Err(why) => return Found::Unverifiable(format!("it cannot be authenticated: {why}")),
            Ok(k) => {
                if let Err(why) = k.check(entry, &auth) {
                    return Found::Untrusted(why);
                }
            }
        }
    }
    let decoded = match session_id {
        Some(id) => format::decode_entry(entry, id),
        None => format::decode_entry_any(entry),
    };
    match decoded {
        Ok(f) => Found::Trusted(f),
        Err(e) => Found::Damaged(e),
    }
}

/// A spool file or directory sjournal refuses to merge from, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefusedSpool {
    pub path: PathBuf,
    /// A directory (nothing under it is read) rather than a file.
    pub directory: bool,
    /// In the fallback spool (outside the root).
    pub fallback: bool,
    /// Why it is refused.
    pub reason: String,
    /// What to do about it: the exact commands.
    pub advice: String,
}

impl RefusedSpool {
    /// One line for a person: what, where, why; the advice on the next line.
    pub fn summary(&self) -> String {
        format!(
            "UNTRUSTED {} {}: {}\n    {}",
            if self.directory {
                "spool directory"
            } else {
                "spool file"
            },
            crate::escape::path(&self.path),
            crate::escape::text(&self.reason),
            crate::escape::text(&self.advice)
        )
    }
}

fn quoted(p: &Path) -> String {
    crate::escape::shell_quote(&p.to_string_lossy())
}

fn refused_dir(root: &Root, path: PathBuf, reason: String) -> RefusedSpool {
    let advice = format!(
        "sjournal neither reads nor writes under it, so nothing spooled there is merged. Look \
         at it (`ls -la {p}`); if it is not yours, have its owner or an administrator remove \
         it, or set [hook] fallback_spool_dir in {config} to a private directory of yours",
        p = quoted(&path),
        config = quoted(&root.dir().join("config.toml")),
    );
    RefusedSpool {
        path,
        directory: true,
        fallback: true,
        reason,
        advice,
    }
}

fn refused_file(root: &Root, path: PathBuf, fallback: bool, reason: String) -> RefusedSpool {
    let p = quoted(&path);
    let r = quoted(root.dir());
    let advice = format!(
        "it is kept, not merged. If you spooled it yourself (an older sjournal), review it \
         with `sjournal --root {r} flush --accept {p} --dry-run` and merge it with \
         `sjournal --root {r} flush --accept {p}`; otherwise delete it: `rm {p}`"
    );
    RefusedSpool {
        path,
        directory: false,
        fallback,
        reason,
        advice,
    }
}

fn unverifiable(root: &Root, path: PathBuf, reason: String) -> RefusedSpool {
    let key = quoted(&key::path(root));
    RefusedSpool {
        advice: format!(
            "it is kept, and merged once the root's spool key can be read again: check \
             `ls -l {key}` (a regular file of yours, mode 0600, 32 bytes). If the key is lost, \
             the file can only be accepted by hand: {}",
            refused_file(root, path.clone(), true, String::new()).advice
        ),
        path,
        directory: false,
        fallback: true,
        reason,
    }
}

/// Everything the root's readers refuse to merge from: the fallback directories (for this
/// root, under every base) that fail their checks, and the spool files, in the root's spool
/// and the fallback's, that are untrusted (set aside as `.untrusted`, or not yet). Read only.
/// For `sessions`, `verify --all`, `flush` and `doctor`.
pub fn refused(root: &Root, opts: &WriterOptions) -> Result<Vec<RefusedSpool>> {
    let mut out = Vec::new();
    let mut keys = Keys::new(root);
    let mut scan = |out: &mut Vec<RefusedSpool>, parent: &Path, fallback: bool| -> Result<()> {
        for dir in spool_dirs_in(parent)? {
            if fallback {
                if let fallback::Base::Refused { path, reason } = fallback::check_dir(&dir) {
                    out.push(refused_dir(root, path, reason));
                    continue;
                }
            }
            for (name, path) in files_in(&dir)? {
                if name.ends_with(&format!(".{EXT}.{UNTRUSTED_EXT}")) {
                    let why = match read_spool(&path, fallback, None, &mut keys) {
                        Found::Untrusted(why) | Found::Unverifiable(why) | Found::Damaged(why) => {
                            why
                        }
                        Found::Trusted(_) => "it was refused when a merge found it".into(),
                    };
                    out.push(refused_file(root, path, fallback, why));
                } else if name.ends_with(&format!(".{EXT}")) && !name.starts_with('.') {
                    match read_spool(&path, fallback, None, &mut keys) {
                        Found::Untrusted(why) => out.push(refused_file(root, path, fallback, why)),
                        Found::Unverifiable(why) => out.push(unverifiable(root, path, why)),
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    };
    scan(&mut out, &root.sessions_dir(), false)?;
    for base in fallback::root_bases(root, opts.fallback_dir.as_deref()) {
        match base {
            fallback::Base::Absent => {}
            fallback::Base::Refused { path, reason } => out.push(refused_dir(root, path, reason)),
            fallback::Base::Trusted(keyed) => scan(&mut out, &keyed, true)?,
        }
    }
    Ok(out)
}

/// The `<stem>.spool` directories in `parent` (not following links).
fn spool_dirs_in(parent: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for (name, path) in files_in(parent)? {
        if name.ends_with(&format!(".{EXT}")) {
            out.push(path);
        }
    }
    Ok(out)
}

/// The entries of `dir` (none if it is missing or not a directory), sorted by name.
fn files_in(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(Vec::new())
        }
        Err(e) => return Err(Error::io("read directory", dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read directory", dir, e))?;
        if let Ok(name) = entry.file_name().into_string() {
            out.push((name, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// A spool file the user accepted.
#[derive(Debug)]
pub struct Accepted {
    /// What it holds.
    pub file: SpoolFile,
    /// Where its records are now (new files in the root's spool of its session).
    pub spooled: Vec<PathBuf>,
    /// The name it is kept under now, if it could be renamed.
    pub kept_as: Option<PathBuf>,
    /// What could not be done (the rename).
    pub warning: Option<String>,
}

/// Reads a spool file the user names, whatever its authentication: for review before
/// [`accept`]. Only a regular file is read (a link or a FIFO is refused).
pub fn review(path: &Path) -> Result<SpoolFile> {
    let bytes = storage::read_regular(path, Owner::Anyone, FILE_MAX_BYTES)?;
    format::split_auth(&bytes)
        .and_then(|(entry, _)| format::decode_entry_any(entry))
        .map_err(|reason| Error::InvalidInput {
            reason: format!("{} is not a readable spool file: {reason}", path.display()),
        })
}

/// Accepts a spool file the user reviewed (an untrusted one, typically a fallback file of
/// format 1 from an older sjournal): its records are spooled again in the root's spool of its
/// session (keeping their times), where the next merge takes them, and the file is renamed
/// `<name>.accepted` (kept, never deleted).
pub fn accept(root: &Root, path: &Path, opts: &WriterOptions) -> Result<Accepted> {
    let file = review(path)?;
    let fs = &*opts.fs;
    root.ensure_with(fs)?;
    let paths = root.session(&file.session_id)?;
    paths::ensure_dir_with(fs, &paths.spool, false)?;
    let items: Vec<(&str, &[u8])> = file
        .records
        .iter()
        .map(|r| (r.kind.as_str(), r.payload.as_slice()))
        .collect();
    let times: Vec<Option<i64>> = file
        .records
        .iter()
        .map(|r| Some(r.ts_unix_ns.unwrap_or(file.spooled_at_ns)))
        .collect();
    let reason = format!(
        "accepted by the user from {} (spooled there: {})",
        path.display(),
        file.reason
    );
    let spooled = write::write_records(
        fs,
        &paths.spool,
        &ToSpool {
            session_id: &file.session_id,
            records: &items,
            times: &times,
            reason: &reason,
            attempted: file.attempted,
        },
        None,
    )?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name
        .strip_suffix(&format!(".{UNTRUSTED_EXT}"))
        .unwrap_or(&name);
    let to = path.with_file_name(format!("{base}.{ACCEPTED_EXT}"));
    let (kept_as, warning) = match fs.rename(path, &to) {
        Ok(()) => (Some(to), None),
        Err(e) => (
            None,
            Some(format!(
                "{} could not be renamed to {} ({e}); its records are spooled again, so \
                 remove it yourself, or it will be reported again: `rm {}`",
                path.display(),
                to.display(),
                quoted(path)
            )),
        ),
    };
    Ok(Accepted {
        file,
        spooled,
        kept_as,
        warning,
    })
}
