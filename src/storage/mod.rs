//! The storage seam. Everything the write path does to the disk goes through it: the
//! journal file's reads, writes, syncs and truncates ([`Storage`]), and every other file and
//! directory operation — the lock file and its tail hint, quarantine copies, spool files and
//! the merge intent, snapshots, directory syncs, links, renames and deletions ([`Fs`]).
//! Production uses [`RealFs`]. Tests swap in the backends of [`crate::testing`]: `FaultyFs`
//! (fail any operation its rules pick: ENOSPC or EROFS under a root, the n-th removal of a
//! spool file, ...), `Faulty` (fail the n-th write, sync or truncate of a journal) or
//! `SimDisk` (crash and choose the fate of every unsynced write), without a switch in
//! production code.
//!
//! Reads that only look (listing a spool directory, reading a spool file or a snapshot,
//! mapping a journal for readers) do not go through it: there is nothing to fail there that
//! the write path must survive.
//!
//! [`lock`] is the advisory lock (flock with a deadline) every writer of a shared file takes.
//!
//! Every open of a file sjournal reads, through the seam or not, is one function:
//! [`open_checked`] (and [`open_regular`], its read-only form on the real file system). It
//! opens with `O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY`, so a FIFO, a device or a
//! link planted where a file should be can neither block the open nor redirect it, then
//! checks with `fstat` that it got a regular file (and, where it matters, one owned by this
//! user) before a byte is read. `O_NONBLOCK` stays set: it changes nothing for a regular
//! file's reads, writes or locks (`flock` blocks by its own flag).
//!
//! # What we assume of the storage
//!
//! The journal's recovery, the high-water mark and the readers' locking rely on this, and on
//! nothing more:
//!
//! - `fdatasync` (Rust's `File::sync_data`) returns only when the written bytes, and the file
//!   size needed to read them, are durable; a directory fsync makes a newly created or renamed
//!   entry durable. On macOS `sync_data` uses `F_FULLFSYNC`.
//! - Writes that were not synced may be lost, torn at any byte, reordered, or (on some file
//!   systems) read back as zeros after a crash. The CRC and the seq/length checks detect all of
//!   these at the tail.
//! - Bytes that were synced stay as they were, except through bit rot or another program, which
//!   the CRC and the chain detect (but cannot repair).
//! - Locks are advisory flocks. Programs that do not take them (an editor, `truncate`) are not
//!   defended against: they can make a reader fault or corrupt the journal, which verify will
//!   then report.
//! - A write of the 52-byte high-water mark at offset 0 of an existing file is atomic: after a
//!   crash it holds the old mark or the new one (it lies within one sector; devices write sectors
//!   whole). So a damaged mark is bit rot or an edit, never a crash.
//! - We do not defend against an attacker who can write the journal *and* every checkpoint of
//!   it; the chain proves consistency relative to a head held elsewhere. Rolling back a journal
//!   and every witness kept with it (mark, lock file, snapshot) consistently is caught only by a
//!   ship cursor, a shipped copy or a checkpoint held elsewhere.

pub(crate) mod faulty;
pub mod lock;
pub(crate) mod sim;

use std::fmt;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::Path;

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
    /// Opens a file without following a symlink at its last component and without waiting
    /// (`O_NOFOLLOW | O_NONBLOCK`, see [`open_checked`]); creates it 0600 if `create`. Callers
    /// go through [`open_checked`], which checks what was opened.
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
/// a function makes of it (a [`Faulty`](crate::testing::Faulty) or a [`SimDisk`](crate::testing::SimDisk)). For tests and benches that only
/// fail or simulate the journal file itself; [`FaultyFs`](crate::testing::FaultyFs) also fails the other operations.
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
            .custom_flags(OPEN_FLAGS)
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

/// The flags of every open of a file sjournal reads: never through a link at the last
/// component, never waiting (a FIFO opens at once instead of waiting for a writer), never
/// inherited by a child, never a controlling terminal.
pub const OPEN_FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;

/// Who must own a file [`open_checked`] opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// Anyone (a journal an auditor reads, a file the user named on the command line).
    Anyone,
    /// This process's effective user: files whose content is trusted as this user's own
    /// (spool files merged into journals, the fallback spool's key).
    Me,
}

/// Opens `path` through `fs` (`write`/`create` as [`Fs::open`]) and checks what it got: a
/// regular file, owned by this user if `owner` is [`Owner::Me`]. A symlink at the last
/// component is [`Error::Symlink`](crate::Error::Symlink); a FIFO, socket, device or
/// directory is [`Error::NotRegular`](crate::Error::NotRegular) (the open did not wait on
/// it); another user's file is [`Error::ForeignOwner`](crate::Error::ForeignOwner).
pub fn open_checked(
    fs: &dyn Fs,
    path: &Path,
    write: bool,
    create: bool,
    owner: Owner,
) -> crate::error::Result<File> {
    use crate::error::Error;
    let file = fs.open(path, write, create).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            Error::Symlink { path: path.into() }
        } else {
            Error::io("open", path, e)
        }
    })?;
    check_opened(path, &file, owner)?;
    Ok(file)
}

/// [`open_checked`] read-only, on the real file system: the one way sjournal opens a file
/// it only reads.
pub fn open_regular(path: &Path, owner: Owner) -> crate::error::Result<File> {
    open_checked(&RealFs, path, false, false, owner)
}

/// Reads a whole file opened by [`open_regular`], refusing one longer than `max` bytes.
pub fn read_regular(path: &Path, owner: Owner, max: u64) -> crate::error::Result<Vec<u8>> {
    use crate::error::Error;
    use std::io::Read;
    let file = open_regular(path, owner)?;
    let len = file.metadata().map_or(0, |m| m.len()).min(max);
    let mut buf = Vec::with_capacity(len as usize + 1);
    file.take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", path, e))?;
    if buf.len() as u64 > max {
        return Err(Error::io(
            "read",
            path,
            io::Error::other(format!("it is larger than {max} bytes")),
        ));
    }
    Ok(buf)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, owner: Owner, max: u64) -> crate::error::Result<String> {
    let bytes = read_regular(path, owner, max)?;
    String::from_utf8(bytes).map_err(|_| {
        crate::error::Error::io(
            "read",
            path,
            io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"),
        )
    })
}

/// The `fstat` check of [`open_checked`] on a file already open.
pub fn check_opened(path: &Path, file: &File, owner: Owner) -> crate::error::Result<()> {
    use crate::error::Error;
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().map_err(|e| Error::io("stat", path, e))?;
    if !meta.is_file() {
        return Err(Error::NotRegular {
            path: path.into(),
            found: file_type_name(&meta.file_type()),
        });
    }
    if owner == Owner::Me {
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return Err(Error::ForeignOwner {
                path: path.into(),
                uid: meta.uid(),
                me,
            });
        }
    }
    Ok(())
}

/// Why a directory is not to be trusted with what sjournal reads, if it is not: another
/// user's, or writable by group or others (who could plant or replace files in it).
pub fn check_dir_trusted(m: &std::fs::Metadata) -> std::result::Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let me = rustix::process::geteuid().as_raw();
    if m.uid() != me {
        return Err(format!(
            "it belongs to uid {}, not to this user (uid {me})",
            m.uid()
        ));
    }
    if m.permissions().mode() & 0o022 != 0 {
        return Err(format!(
            "its mode is {:o}: other users can write in it",
            m.permissions().mode() & 0o7777
        ));
    }
    Ok(())
}

/// Why a program beside this one (`sjournal-hook`'s `sjournal`, `install`'s `sjournal-hook`)
/// is not to be run, if it is not: not a regular file (a symlink is not followed), or it or
/// its directory belongs to someone other than this user or root, or group or others can
/// write to it (who could plant or replace it).
pub fn check_program_trusted(path: &Path) -> std::result::Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let me = rustix::process::geteuid().as_raw();
    let check = |what: &str, m: &std::fs::Metadata| -> std::result::Result<(), String> {
        if m.uid() != me && m.uid() != 0 {
            return Err(format!(
                "{what} belongs to uid {}, neither this user (uid {me}) nor root",
                m.uid()
            ));
        }
        if m.permissions().mode() & 0o022 != 0 {
            return Err(format!(
                "{what} has mode {:o}: other users can write to it",
                m.permissions().mode() & 0o7777
            ));
        }
        Ok(())
    };
    let file = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !file.is_file() {
        return Err(format!("it is a {}", file_type_name(&file.file_type())));
    }
    check("it", &file)?;
    let dir = path.parent().ok_or("it has no directory")?;
    let dm = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    check("its directory", &dm)
}

/// The program detached work runs (a hook's snapshot rebuild, webhook deliverer, search
/// update, ship): `program` if given and trusted ([`check_program_trusted`]), else this
/// executable; Err says why there is none.
pub fn worker_program(program: Option<&Path>) -> std::result::Result<std::path::PathBuf, String> {
    match program {
        Some(p) => check_program_trusted(p)
            .map(|()| p.to_owned())
            .map_err(|why| format!("{}: {why}", p.display())),
        None => std::env::current_exe().map_err(|e| format!("this executable: {e}")),
    }
}

/// What a file that is not a regular file is, in words.
pub fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else if t.is_fifo() {
        "FIFO (named pipe)"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_file() {
        "regular file"
    } else {
        "special file"
    }
}
