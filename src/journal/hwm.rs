//! Rollback detection: a durable high-water mark, the seq and hash of a journal's last
//! acknowledged record, kept outside the journal in `<stem>.hwm` (`<stem>.rescue.hwm` for the
//! rescue journal; codec in `format::mark`).
//!
//! The hash chain cannot see records cut off at a record boundary, or an older copy of the
//! file put back: what is left is a valid, shorter chain. The mark remembers how far the
//! journal was acknowledged, so a writer refuses to append below it (the event goes to the
//! rescue journal, as for corruption) and `verify` reports "rolled back".
//!
//! What keeps it free of false alarms and cheap:
//! - It is advanced only **after** the journal's `fdatasync` returned, so it never names a
//!   record that was not durable: after a power loss the journal holds at least what the mark
//!   says. The mark itself is written without a sync (the hook's cost stays one
//!   `fdatasync`), so after a power loss it may be older than the journal, or lost, or torn
//!   (its CRC then fails and it reads as absent): each only weakens detection.
//! - Group commit releases the session's lock before the sync, so two writers may finish
//!   their syncs in either order. The mark moves forward only: under an exclusive flock on the
//!   mark file (held for one read and one write, never across I/O that can block), it is
//!   rewritten only with a higher seq. A writer with a deadline (the hook) waits for that
//!   lock only until its deadline: another process holding it longer leaves the mark where it
//!   is for this writer (the next one moves it on), rather than hold the hook.
//! - It is opened like every file of the root: 0600, `O_NOFOLLOW`, regular files only.
//!
//! - It is **there from the start**: a journal's creation writes a mark of seq 0 ("nothing
//!   acknowledged yet") and syncs it before the header, and a mark found missing or damaged is
//!   written again, and synced, by the next append. So where a journal has records, a missing,
//!   empty or damaged mark is not a crash's doing (an overwrite of 52 bytes within one sector
//!   is atomic; see "What we assume of the storage" in the `storage` module docs): `verify`
//!   reports it.
//! - It has a **copy in the lock file** (`<stem>.lock`, at [`COPY_AT`], after the tail hint),
//!   written with it under the same flock: a second witness of the acknowledged records, in
//!   another file, so that a mark deleted, damaged or put back together with the journal is
//!   caught by the copy. The copy is never synced (a crash may lose it, never put it ahead).
//!
//! Only `repair`, `migrate` and a writer finishing an interrupted migration
//! (`audit::migrate::finish_on_open`) move the mark and its copy backwards or sideways
//! (`reset`), after the journal they describe is in place, and they sync the mark.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::format::mark::{self, Mark};
use crate::format::Hash;
use crate::journal::hint;
use crate::journal::paths;
use crate::journal::recovery::{self, Corruption};
use crate::journal::verify::witness::WitnessKind;
use crate::storage::lock::{self, Mode};
use crate::storage::Fs;

/// Where the copy of the mark lives in the lock file: after the tail hint, with room for it
/// to grow.
pub const COPY_AT: u64 = 128;

/// The mark file of a journal: `<stem>.sjl` → `<stem>.hwm`, `<stem>.rescue.sjl` →
/// `<stem>.rescue.hwm`.
pub fn path_for(journal: &Path) -> PathBuf {
    journal.with_extension("hwm")
}

/// The lock file of a journal, which holds its tail hint and the copy of its mark:
/// `<stem>.sjl` → `<stem>.lock`, `<stem>.rescue.sjl` → `<stem>.rescue.lock`.
pub fn lock_path_for(journal: &Path) -> PathBuf {
    journal.with_extension("lock")
}

/// What a journal's mark file holds, as `verify` tells it apart.
#[derive(Debug)]
pub enum MarkFile {
    /// No mark file.
    Absent,
    /// A file that is not a whole, CRC-valid mark (`len` bytes; 0: empty).
    Damaged { len: u64 },
    /// A symlink, a FIFO, a directory, no permission: nothing can be read from it.
    Unreadable(Error),
    /// A mark; seq 0 (written when the journal was created) acknowledges nothing yet.
    Mark(Mark),
}

impl MarkFile {
    /// The mark if it acknowledges something.
    pub fn mark(&self) -> Option<Mark> {
        match self {
            MarkFile::Mark(m) if m.seq > 0 => Some(*m),
            _ => None,
        }
    }
}

fn read_from(f: &File) -> Option<Mark> {
    read_at(f, 0)
}

fn read_at(f: &File, at: u64) -> Option<Mark> {
    let mut b = [0u8; mark::LEN];
    f.read_exact_at(&mut b, at).ok()?;
    // Seq 0 (written at creation, or by `repair` for a rescue journal it moved aside)
    // acknowledges nothing.
    Mark::decode(&b).filter(|m| m.seq > 0)
}

/// Reads a journal's mark without locking (a reader's view: a torn read fails the CRC and
/// reads as absent). `Ok(None)` if there is none, or it is damaged; `Err` if the path is a
/// symlink or not a regular file (detection is then impossible, which `verify` reports).
pub fn read(journal: &Path) -> Result<Option<Mark>> {
    match inspect(journal) {
        MarkFile::Unreadable(e) => Err(e),
        m => Ok(m.mark()),
    }
}

/// Reads a journal's mark and says what the file holds. A read that fails its CRC is taken
/// again under a shared flock on the mark (a writer rewrites it under the exclusive one, waited
/// for at most a second), so a mark being rewritten is not reported as damaged.
pub fn inspect(journal: &Path) -> MarkFile {
    let path = path_for(journal);
    let f = match paths::open_file(&path, false, false) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return MarkFile::Absent
        }
        Err(e) => return MarkFile::Unreadable(e),
    };
    let decode = |f: &File| {
        let mut b = [0u8; mark::LEN];
        f.read_exact_at(&mut b, 0)
            .ok()
            .and_then(|()| Mark::decode(&b))
    };
    if let Some(m) = decode(&f) {
        return MarkFile::Mark(m);
    }
    // A writer holds the flock for one read and one write; one that holds it for a second is
    // stopped, and the mark is then read as it is.
    let wait = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let locked = lock::lock(&f, &path, lock::Mode::Shared, Some(wait)).is_ok();
    let again = decode(&f);
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if locked {
        let _ = f.unlock();
    }
    match again {
        Some(m) => MarkFile::Mark(m),
        None => MarkFile::Damaged { len },
    }
}

/// The copy of a journal's mark in its lock file, if there is a whole one that acknowledges
/// something (a read torn by a writer's rewrite reads as none).
pub fn read_copy(journal: &Path) -> Option<Mark> {
    let f = paths::open_file(&lock_path_for(journal), false, false).ok()?;
    read_at(&f, COPY_AT)
}

/// Replaces a journal's mark, whatever it held (`repair`, after writing the journal it
/// describes; `fetch`, for the journal it wrote), and syncs it; writes the same copy in the
/// lock file and clears the tail hint there (it described the journal replaced).
pub fn reset(fs: &dyn Fs, journal: &Path, to: Mark) -> Result<()> {
    let path = path_for(journal);
    let f = paths::open_file_with(fs, &path, true, true)?;
    f.lock().map_err(|e| Error::io("lock", &path, e))?;
    let written = write_mark(fs, &path, &f, to).and_then(|()| {
        let lock_path = lock_path_for(journal);
        let lf = paths::open_file_with(fs, &lock_path, true, true)?;
        fs.write_at(&lock_path, &lf, &[0u8; hint::LEN], 0)
            .and_then(|()| fs.write_at(&lock_path, &lf, &to.encode(), COPY_AT))
            .map_err(|e| Error::io("write", &lock_path, e))
    });
    let _ = f.unlock();
    written?;
    if let Some(dir) = path.parent() {
        paths::sync_dir_with(fs, dir)?;
    }
    Ok(())
}

/// Clears the tail hint and the mark's copy in a journal's lock file: `repair`, for a rescue
/// journal it moved aside (the next rescue journal starts afresh).
pub fn clear_lock(fs: &dyn Fs, journal: &Path) -> Result<()> {
    let lock_path = lock_path_for(journal);
    let lf = paths::open_file_with(fs, &lock_path, true, true)?;
    fs.write_at(&lock_path, &lf, &[0u8; hint::LEN], 0)
        .and_then(|()| fs.write_at(&lock_path, &lf, &[0u8; mark::LEN], COPY_AT))
        .map_err(|e| Error::io("write", &lock_path, e))
}

fn write_mark(fs: &dyn Fs, path: &Path, f: &File, to: Mark) -> Result<()> {
    fs.write_at(path, f, &to.encode(), 0)
        .map_err(|e| Error::io("write", path, e))?;
    f.sync_data().map_err(|e| Error::io("fsync", path, e))
}

/// A writer's handle on its journal's mark and the mark's copy in the lock file, opened with
/// the writer (through its `Fs`, so fault injection covers their writes too).
#[derive(Debug)]
pub struct Keeper {
    fs: Arc<dyn Fs>,
    path: PathBuf,
    file: Option<File>,
    mark: Option<Mark>,
    /// The lock file (a handle of the writer's own) and the copy it held when opened.
    lock_path: PathBuf,
    lock_file: Option<File>,
    copy: Option<Mark>,
    /// The mark file held no whole mark when opened: the next write syncs it (and the
    /// directory, if this open created the file and nothing synced the directory since).
    rewrite: bool,
    created: bool,
    /// A rescue journal's mark, which `repair` renames aside with the journal: the copy is
    /// written only while the mark file is still the journal's (a writer finishing its sync
    /// after the repair must not leave its seq in the next rescue journal's lock file).
    rescue: bool,
    /// Stop waiting for the mark's lock at this instant (None: as long as it takes).
    deadline: Option<Instant>,
}

impl Keeper {
    /// Opens (creating, 0600) the mark of `journal` and reads it and its copy in `lock_file`
    /// (the writer's handle on the journal's lock file). Never fails: a mark that cannot be
    /// opened (a read-only directory, a symlink planted there) leaves the mark off for this
    /// writer, and `verify` reports the symlink.
    ///
    /// The mark's lock is waited for until `deadline` (the writer's; None: as long as it
    /// takes).
    pub fn open(
        fs: Arc<dyn Fs>,
        journal: &Path,
        lock_file: Option<File>,
        deadline: Option<Instant>,
    ) -> Keeper {
        let path = path_for(journal);
        let existed = std::fs::symlink_metadata(&path).is_ok();
        let file = paths::open_file_with(&*fs, &path, true, true).ok();
        let whole = file.as_ref().and_then(|f| {
            let mut b = [0u8; mark::LEN];
            f.read_exact_at(&mut b, 0)
                .ok()
                .and_then(|()| Mark::decode(&b))
        });
        let copy = lock_file.as_ref().and_then(|f| read_at(f, COPY_AT));
        Keeper {
            fs,
            path,
            mark: whole.filter(|m| m.seq > 0),
            rewrite: file.is_some() && whole.is_none(),
            created: file.is_some() && !existed,
            file,
            lock_path: lock_path_for(journal),
            lock_file,
            copy,
            rescue: journal
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".rescue.sjl")),
            deadline,
        }
    }

    /// True if the mark file this keeper holds is still the one at its path.
    fn still_in_place(&self, f: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), std::fs::symlink_metadata(&self.path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    /// The directory entry of the mark file is durable (the writer synced the directory after
    /// creating the journal and the mark).
    pub fn entry_synced(&mut self) {
        self.created = false;
    }

    /// Writes the mark of a journal being created (seq 0: nothing acknowledged yet) and syncs
    /// it, so that from the first record on the mark is there. Best effort, as every write of
    /// the mark.
    pub fn init(&mut self) {
        if self.mark.is_none() && self.rewrite {
            self.write_synced(Mark {
                seq: 0,
                hash: Hash::ZERO,
            });
        }
    }

    /// The seq of the last acknowledged record, as the mark (or its copy, whichever is
    /// further) said when the writer opened.
    pub fn acknowledged(&self) -> Option<u64> {
        self.mark.iter().chain(&self.copy).map(|m| m.seq).max()
    }

    /// True if the mark file held no whole mark when opened (missing, empty, damaged): the
    /// writer writes it again, synced, once the journal it names is synced.
    pub fn needs_rewrite(&self) -> bool {
        self.rewrite
    }

    /// Whether a journal ending at `last_seq` with hash `head` still holds the acknowledged
    /// record, by the mark and by its copy (case-table rows 23, 24).
    pub fn check(&self, last_seq: u64, head: Hash) -> std::result::Result<(), Corruption> {
        if let Some(m) = self.mark {
            recovery::check_mark(last_seq, head, m.seq, m.hash)?;
        }
        if let Some(c) = self.copy {
            recovery::check_claim(last_seq, head, c.seq, c.hash, WitnessKind::MarkCopy)?;
        }
        Ok(())
    }

    fn write_synced(&mut self, m: Mark) {
        let Some(f) = &self.file else {
            return;
        };
        if f.lock().is_err() {
            return;
        }
        if write_mark(&*self.fs, &self.path, f, m).is_ok() {
            self.rewrite = false;
            if self.created {
                if let Some(dir) = self.path.parent() {
                    if paths::sync_dir_with(&*self.fs, dir).is_ok() {
                        self.created = false;
                    }
                }
            }
        }
        let _ = f.unlock();
    }

    /// Records that `seq` (hash `hash`) is durable. Call only after the journal's sync
    /// returned. Moves the mark and its copy forward only; best effort (a failure, or the
    /// lock held by another process past the deadline, only weakens detection).
    pub fn advance(&mut self, seq: u64, hash: Hash) {
        let Some(f) = &self.file else {
            return;
        };
        if lock::lock(f, &self.path, Mode::Exclusive, self.deadline).is_err() {
            return;
        }
        let m = Mark { seq, hash };
        let current = read_from(f);
        if current.is_none_or(|c| seq > c.seq) {
            let written = if self.rewrite {
                // The file held no whole mark: make this one durable, as at creation.
                write_mark(&*self.fs, &self.path, f, m).is_ok()
            } else {
                self.fs.write_at(&self.path, f, &m.encode(), 0).is_ok()
            };
            if written {
                self.mark = Some(m);
                if self.rewrite {
                    self.rewrite = false;
                    if self.created {
                        if let Some(dir) = self.path.parent() {
                            self.created = paths::sync_dir_with(&*self.fs, dir).is_err();
                        }
                    }
                }
            }
        }
        // The copy, under the same flock: forward only, like the mark.
        if let Some(lf) = self
            .lock_file
            .as_ref()
            .filter(|_| !self.rescue || self.still_in_place(f))
        {
            if read_at(lf, COPY_AT).is_none_or(|c| seq > c.seq)
                && self
                    .fs
                    .write_at(&self.lock_path, lf, &m.encode(), COPY_AT)
                    .is_ok()
            {
                self.copy = Some(m);
            }
        }
        let _ = f.unlock();
    }
}
