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
//! Only `repair` moves it backwards (`reset`), after it has written the journal the new mark
//! describes, and it syncs it.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::format::mark::{self, Mark};
use crate::format::Hash;
use crate::journal::lock::{self, Mode};
use crate::journal::paths;
use crate::journal::recovery::{self, Corruption};
use crate::storage::Fs;

/// The mark file of a journal: `<stem>.sjl` → `<stem>.hwm`, `<stem>.rescue.sjl` →
/// `<stem>.rescue.hwm`.
pub fn path_for(journal: &Path) -> PathBuf {
    journal.with_extension("hwm")
}

fn read_from(f: &File) -> Option<Mark> {
    let mut b = [0u8; mark::LEN];
    f.read_exact_at(&mut b, 0).ok()?;
    // Seq 0 (written by `repair` for a rescue journal it moved aside) acknowledges nothing.
    Mark::decode(&b).filter(|m| m.seq > 0)
}

/// Reads a journal's mark without locking (a reader's view: a torn read fails the CRC and
/// reads as absent). `Ok(None)` if there is none, or it is damaged; `Err` if the path is a
/// symlink or not a regular file (detection is then impossible, which `verify` reports).
pub fn read(journal: &Path) -> Result<Option<Mark>> {
    let path = path_for(journal);
    match paths::open_file(&path, false, false) {
        Ok(f) => Ok(read_from(&f)),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Replaces a journal's mark, whatever it held (`repair`, after writing the journal it
/// describes), and syncs it.
pub fn reset(fs: &dyn Fs, journal: &Path, to: Mark) -> Result<()> {
    let path = path_for(journal);
    let f = paths::open_file_with(fs, &path, true, true)?;
    f.lock().map_err(|e| Error::io("lock", &path, e))?;
    fs.write_at(&path, &f, &to.encode(), 0)
        .map_err(|e| Error::io("write", &path, e))?;
    f.sync_data().map_err(|e| Error::io("fsync", &path, e))?;
    let _ = f.unlock();
    if let Some(dir) = path.parent() {
        paths::sync_dir_with(fs, dir)?;
    }
    Ok(())
}

/// A writer's handle on its journal's mark, opened with the writer (through its `Fs`, so
/// fault injection covers the mark's writes too).
#[derive(Debug)]
pub struct Keeper {
    fs: Arc<dyn Fs>,
    path: PathBuf,
    file: Option<File>,
    mark: Option<Mark>,
    /// Stop waiting for the mark's lock at this instant (None: as long as it takes).
    deadline: Option<Instant>,
}

impl Keeper {
    /// Opens (creating, 0600) the mark of `journal` and reads it. Never fails: a mark that
    /// cannot be opened (a read-only directory, a symlink planted there) leaves detection off
    /// for this writer, and `verify` reports the symlink. The mark's lock is waited for until
    /// `deadline` (the writer's).
    pub fn open(fs: Arc<dyn Fs>, journal: &Path, deadline: Option<Instant>) -> Keeper {
        let path = path_for(journal);
        let file = paths::open_file_with(&*fs, &path, true, true).ok();
        let mark = file.as_ref().and_then(read_from);
        Keeper {
            fs,
            path,
            file,
            mark,
            deadline,
        }
    }

    /// The seq of the last acknowledged record, as the mark said when the writer opened.
    pub fn acknowledged(&self) -> Option<u64> {
        self.mark.map(|m| m.seq)
    }

    /// Whether a journal ending at `last_seq` with hash `head` still holds the acknowledged
    /// record (case-table rows 23, 24).
    pub fn check(&self, last_seq: u64, head: Hash) -> std::result::Result<(), Corruption> {
        match self.mark {
            Some(m) => recovery::check_mark(last_seq, head, m.seq, m.hash),
            None => Ok(()),
        }
    }

    /// Records that `seq` (hash `hash`) is durable. Call only after the journal's sync
    /// returned. Moves the mark forward only; best effort (a failure, or the lock held by
    /// another process past the deadline, only weakens detection).
    pub fn advance(&mut self, seq: u64, hash: Hash) {
        let Some(f) = &self.file else {
            return;
        };
        if lock::lock(f, &self.path, Mode::Exclusive, self.deadline).is_err() {
            return;
        }
        let current = read_from(f);
        if current.is_none_or(|m| seq > m.seq) {
            let m = Mark { seq, hash };
            if self.fs.write_at(&self.path, f, &m.encode(), 0).is_ok() {
                self.mark = Some(m);
            }
        }
        let _ = f.unlock();
    }
}
