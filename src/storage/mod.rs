//! The storage seam. Everything the write path does to the disk goes through it: the
//! journal file's reads, writes, syncs and truncates ([`Storage`]), and every other file and
//! directory operation — the lock file and its tail hint, quarantine copies, spool files and
//! the merge intent, snapshots, directory syncs, links, renames and deletions ([`Fs`]).
//! Production uses [`RealFs`]. Tests swap in [`FaultyFs`] (fail any operation its rules
//! pick: ENOSPC or EROFS under a root, the n-th removal of a spool file, ...), [`Faulty`]
//! (fail the n-th write, sync or truncate of a journal) or [`SimDisk`] (crash and choose the
//! fate of every unsynced write), without a switch in production code.
//!
//! Reads that only look (listing a spool directory, reading a spool file or a snapshot,
//! mapping a journal for readers) do not go through it: there is nothing to fail there that
//! the write path must survive.

mod faulty;
mod sim;

use std::fmt;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::Path;

pub use faulty::{FaultCounts, FaultPlan, Faulty, FaultyFs};
pub use sim::{PendingFate, SimDisk};

/// The operations the writer performs on a journal file.
#[allow(clippy::len_without_is_empty)]
pub trait Storage: Send {
    fn len(&self) -> io::Result<u64>;
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes every byte written so far durable (`fdatasync` on Linux).
    fn sync_data(&mut self) -> io::Result<()>;
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

impl Storage for File {
    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(self, buf, offset)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
}

/// One operation of the [`Fs`], as fault rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    CreateDir,
    Open {
        write: bool,
        create: bool,
    },
    /// A write to a journal file (through its [`Storage`]).
    Write,
    /// A sync of a journal file.
    Sync,
    /// A truncate of a journal file.
    SetLen,
    /// A new file written whole and synced (quarantine, spool file, intent, snapshot).
    WriteNew,
    /// A write into an open file (the tail hint in the lock file).
    WriteAt,
    SyncDir,
    Link,
    Rename,
    Remove,
}

impl Op {
    /// True for operations that need a writable file system with room (everything that
    /// creates, changes or removes bytes or names); false for opening to read and syncing.
    pub fn mutates(self) -> bool {
        match self {
            Op::Open { write, create } => write || create,
            Op::Sync | Op::SyncDir => false,
            _ => true,
        }
    }
}

/// Every file and directory operation of the write path.
pub trait Fs: Send + Sync + fmt::Debug {
    /// Creates a directory and any missing parents, mode 0700.
    fn create_dir(&self, path: &Path) -> io::Result<()>;
    /// Opens a file without following a symlink at its last component (`O_NOFOLLOW`);
    /// creates it 0600 if `create`.
    fn open(&self, path: &Path, write: bool, create: bool) -> io::Result<File>;
    /// The storage a journal file's operations go through.
    fn journal(&self, path: &Path, file: File) -> Box<dyn Storage>;
    /// Creates `path` (failing if it exists, never through a link), 0600, writes `bytes` and
    /// syncs them (`fdatasync`). The caller syncs the directory.
    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Writes `bytes` at `offset` of an open file, without syncing (the tail hint).
    fn write_at(&self, path: &Path, file: &File, bytes: &[u8], offset: u64) -> io::Result<()>;
    /// fsyncs a directory, so that entries created, renamed or removed in it are durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// Hard-links `from` to `to`; never replaces an existing `to`.
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Renames `from` over `to` (atomic replace).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

/// The real file system, except that every journal file's operations go through the storage
/// a function makes of it (a [`Faulty`] or a [`SimDisk`]). For tests and benches that only
/// fail or simulate the journal file itself; [`FaultyFs`] also fails the other operations.
pub struct JournalWith(Box<WrapJournal>);

/// Makes the storage of a journal file from the opened file.
pub type WrapJournal = dyn Fn(&Path, File) -> Box<dyn Storage> + Send + Sync;

impl JournalWith {
    pub fn new(wrap: impl Fn(&Path, File) -> Box<dyn Storage> + Send + Sync + 'static) -> Self {
        JournalWith(Box::new(wrap))
    }
}

impl fmt::Debug for JournalWith {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JournalWith(..)")
    }
}

impl Fs for JournalWith {
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        RealFs.create_dir(path)
    }
    fn open(&self, path: &Path, write: bool, create: bool) -> io::Result<File> {
        RealFs.open(path, write, create)
    }
    fn journal(&self, path: &Path, file: File) -> Box<dyn Storage> {
        (self.0)(path, file)
    }
    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        RealFs.write_new(path, bytes)
    }
    fn write_at(&self, path: &Path, file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
        RealFs.write_at(path, file, bytes, offset)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        RealFs.sync_dir(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.hard_link(from, to)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl Fs for RealFs {
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        DirBuilder::new().recursive(true).mode(0o700).create(path)
    }
    fn open(&self, path: &Path, write: bool, create: bool) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(write)
            .create(create)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    }
    fn journal(&self, _path: &Path, file: File) -> Box<dyn Storage> {
        Box::new(file)
    }
    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?;
        f.write_all(bytes)?;
        f.sync_data()
    }
    fn write_at(&self, _path: &Path, file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(file, bytes, offset)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(path)?
            .sync_all()
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
}
