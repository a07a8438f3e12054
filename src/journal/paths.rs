//! Where journals live, and how a session id becomes a file name that can never leave the
//! root. Every file is opened with `O_NOFOLLOW` and created 0600; every directory is created
//! 0700 and checked not to be a symlink; the root and `sessions/`, when found, must be this
//! user's and not writable by group or others (else [`Error::UntrustedDir`]: what is read
//! from them reaches the model).

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::hash::content_hash;
use crate::limits::{FILE_STEM_MAX_BYTES, SESSION_ID_MAX_BYTES};
use crate::storage::{Fs, RealFs};

pub const JOURNAL_EXT: &str = "sjl";
pub const SNAPSHOT_EXT: &str = "snap";
const SESSIONS_DIR: &str = "sessions";

/// The directory that holds every session's files.
#[derive(Debug, Clone)]
pub struct Root {
    dir: PathBuf,
}

/// The files of one session, all in the root's `sessions/` directory.
#[derive(Debug, Clone)]
pub struct SessionPaths {
    pub session_id: String,
    pub stem: String,
    pub dir: PathBuf,
    /// `<stem>.sjl`: the journal.
    pub journal: PathBuf,
    /// `<stem>.lock`: the writers' lock, which also holds the tail hint.
    pub lock: PathBuf,
    /// `<stem>.rescue.sjl`: a journal of events that could not go into the main one.
    pub rescue: PathBuf,
    /// `<stem>.rescue.lock`: the rescue journal's writers' lock (and its tail hint).
    pub rescue_lock: PathBuf,
    /// `<stem>.spool/`: events waiting to be merged into the journal (see `journal::spool`).
    pub spool: PathBuf,
    /// `<stem>.snap`: the latest snapshot of the folded state (see `snapshot`).
    pub snapshot: PathBuf,
}

impl Root {
    pub fn new(dir: impl Into<PathBuf>) -> Root {
        Root { dir: dir.into() }
    }

    /// `--root DIR`, else `$SJOURNAL_HOME`, else `$XDG_STATE_HOME/sjournal`, else
    /// `~/.local/state/sjournal`. Empty variables count as unset. A relative directory is
    /// made absolute here, once, against the current directory (without resolving links), so
    /// every path derived from the root is absolute whatever the process does later.
    pub fn resolve(flag: Option<&Path>) -> Result<Root> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let absolute =
            |p: &Path| std::path::absolute(p).map_err(|e| Error::io("resolve the root", p, e));
        if let Some(p) = flag {
            return Ok(Root::new(absolute(p)?));
        }
        if let Some(p) = var("SJOURNAL_HOME") {
            return Ok(Root::new(absolute(&p)?));
        }
        if let Some(p) = var("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
            return Ok(Root::new(p.join("sjournal")));
        }
        var("HOME")
            .map(|h| Root::new(h.join(".local/state/sjournal")))
            .ok_or(Error::NoRoot)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The paths of a session whose journal exists; `NoSuchSession` otherwise. A symlink or
    /// other entry in the journal's place counts as existing (opening it then says what it
    /// is).
    pub fn existing_session(&self, session: &str) -> Result<SessionPaths> {
        let paths = self.session(session)?;
        match std::fs::symlink_metadata(&paths.journal) {
            Ok(_) => Ok(paths),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NoSuchSession {
                session: session.to_owned(),
                root: self.dir.clone(),
            }),
            Err(e) => Err(Error::io("stat", &paths.journal, e)),
        }
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.dir.join(SESSIONS_DIR)
    }

    /// Creates the root and its `sessions/` directory (0700) if missing; refuses a symlinked
    /// `sessions/`. The root itself is the user's choice and may be reached through links.
    pub fn ensure(&self) -> Result<PathBuf> {
        self.ensure_with(&RealFs)
    }

    /// [`Root::ensure`] through `fs`. Also makes the root's spool key if it has none yet
    /// (best effort: a root that cannot take it now gets it on a later write), so that it is
    /// there before the root ever needs the fallback spool (see `spool::key`).
    pub fn ensure_with(&self, fs: &dyn Fs) -> Result<PathBuf> {
        ensure_trusted_dir_with(fs, &self.dir, true)?;
        let _ = crate::journal::spool::key::ensure(fs, self);
        let sessions = self.sessions_dir();
        ensure_trusted_dir_with(fs, &sessions, false)?;
        Ok(sessions)
    }

    /// Checks, without creating anything, that the root and `sessions/` (where they exist) are
    /// this user's and not writable by others ([`Error::UntrustedDir`]), `sessions/` no
    /// symlink: for readers whose answers reach the model (the MCP server). Writers check the
    /// same through [`Root::ensure_with`].
    pub fn check_trusted(&self) -> Result<()> {
        for (dir, follow) in [(self.dir.clone(), true), (self.sessions_dir(), false)] {
            let m = match if follow {
                fs::metadata(&dir)
            } else {
                fs::symlink_metadata(&dir)
            } {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("inspect", dir, e)),
            };
            if m.file_type().is_symlink() {
                return Err(Error::Symlink { path: dir });
            }
            crate::storage::check_dir_trusted(&m)
                .map_err(|reason| Error::UntrustedDir { path: dir, reason })?;
        }
        Ok(())
    }

    pub fn session(&self, session_id: &str) -> Result<SessionPaths> {
        let stem = file_stem(session_id)?;
        let dir = self.sessions_dir();
        Ok(SessionPaths {
            session_id: session_id.to_owned(),
            journal: dir.join(format!("{stem}.{JOURNAL_EXT}")),
            lock: dir.join(format!("{stem}.lock")),
            rescue: dir.join(format!("{stem}.rescue.{JOURNAL_EXT}")),
            rescue_lock: dir.join(format!("{stem}.rescue.lock")),
            spool: dir.join(format!("{stem}.spool")),
            snapshot: dir.join(format!("{stem}.{SNAPSHOT_EXT}")),
            stem,
            dir,
        })
    }

    /// Every journal under the root (main and rescue journals), sorted by file name.
    pub fn journals(&self) -> Result<Vec<PathBuf>> {
        let dir = self.sessions_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io("read directory", dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("read directory", &dir, e))?;
            let path = entry.path();
            if path.extension().is_some_and(|x| x == JOURNAL_EXT) {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }
}

/// True if the id can be used as a file stem as it is.
fn is_plain_stem(id: &str) -> bool {
    id.len() <= FILE_STEM_MAX_BYTES
        && !id.starts_with("h-")
        && id.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Maps a session id to a file stem inside the root. Ids of letters, digits, `-` and `_`
/// (the UUIDs hosts send) are kept; anything else (`../../x`, `/`, dots, spaces, long ids)
/// becomes `h-` and 32 hex digits of its blake3. The header keeps the original id, and a
/// writer refuses a journal whose header names another session (a hash collision, or a file
/// moved into place), so the mapping can never merge two sessions.
pub fn file_stem(session_id: &str) -> Result<String> {
    if session_id.is_empty() {
        return Err(Error::InvalidSessionId {
            reason: "it is empty".into(),
        });
    }
    if session_id.len() > SESSION_ID_MAX_BYTES {
        return Err(Error::InvalidSessionId {
            reason: format!(
                "it is {} bytes long; the limit is {SESSION_ID_MAX_BYTES}",
                session_id.len()
            ),
        });
    }
    if is_plain_stem(session_id) {
        return Ok(session_id.to_owned());
    }
    Ok(format!(
        "h-{}",
        &content_hash(session_id.as_bytes()).to_hex()[..32]
    ))
}

/// Creates a directory (0700) if missing; refuses a symlink unless `allow_link`.
pub(crate) fn ensure_dir(path: &Path, allow_link: bool) -> Result<()> {
    ensure_dir_with(&RealFs, path, allow_link)
}

/// Creates a directory (0700) through `fs` if missing; refuses a symlink unless
/// `allow_link`. A directory it creates is made durable (its parent synced).
pub(crate) fn ensure_dir_with(fs: &dyn Fs, path: &Path, allow_link: bool) -> Result<()> {
    ensure_dir_found(fs, path, allow_link).map(drop)
}

/// [`ensure_dir_with`] for a directory whose content reaches the model (the root,
/// `sessions/`): one found there must also be this user's and not writable by others
/// ([`Error::UntrustedDir`]).
pub(crate) fn ensure_trusted_dir_with(fs: &dyn Fs, path: &Path, allow_link: bool) -> Result<()> {
    match ensure_dir_found(fs, path, allow_link)? {
        Some(m) => crate::storage::check_dir_trusted(&m).map_err(|reason| Error::UntrustedDir {
            path: path.into(),
            reason,
        }),
        None => Ok(()),
    }
}

/// [`ensure_dir_with`], and the directory's metadata (through a link) if it was there already.
fn ensure_dir_found(fs: &dyn Fs, path: &Path, allow_link: bool) -> Result<Option<fs::Metadata>> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() && !allow_link => {
            Err(Error::Symlink { path: path.into() })
        }
        Ok(m) => {
            // Only a symlink (allowed here) needs a second look, through the link.
            let m = match m.file_type().is_symlink() {
                true => fs::metadata(path).map_err(|e| Error::io("inspect", path, e))?,
                false => m,
            };
            if !m.is_dir() {
                return Err(Error::WrongFileType {
                    path: path.into(),
                    expected: "directory",
                });
            }
            Ok(Some(m))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs.create_dir(path)
                .map_err(|e| Error::io("create directory", path, e))?;
            // `Path::parent` of a bare relative name is "": that is the current directory.
            match path.parent() {
                Some(p) if p.as_os_str().is_empty() => sync_dir_with(fs, Path::new("."))?,
                Some(parent) => sync_dir_with(fs, parent)?,
                None => {}
            }
            Ok(None)
        }
        Err(e) => Err(Error::io("inspect", path, e)),
    }
}

/// Opens a regular file without following a symlink at its last component and without
/// waiting on a FIFO (`storage::open_checked`); creates it 0600 if `create`.
pub fn open_file(path: &Path, write: bool, create: bool) -> Result<File> {
    open_file_with(&RealFs, path, write, create)
}

/// [`open_file`] through `fs`.
pub fn open_file_with(fs: &dyn Fs, path: &Path, write: bool, create: bool) -> Result<File> {
    crate::storage::open_checked(fs, path, write, create, crate::storage::Owner::Anyone)
}

/// Creates a new file (failing if it exists), 0600, no links followed.
pub fn create_new(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| Error::io("create", path, e))
}

/// fsyncs a directory so that entries created or renamed in it are durable.
pub fn sync_dir(path: &Path) -> Result<()> {
    sync_dir_with(&RealFs, path)
}

/// [`sync_dir`] through `fs`.
pub fn sync_dir_with(fs: &dyn Fs, path: &Path) -> Result<()> {
    fs.sync_dir(path)
        .map_err(|e| Error::io("fsync directory", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_stay_inside() {
        assert_eq!(
            file_stem("02733d39-8653-4cc9-8b83-d8990370a61c").unwrap(),
            "02733d39-8653-4cc9-8b83-d8990370a61c"
        );
        for bad in [
            "../../x",
            "/etc/passwd",
            ".",
            "..",
            "a/b",
            "a b",
            "h-1234",
            "-x",
            "é",
            "a\0b",
        ] {
            let s = file_stem(bad).unwrap();
            assert!(s.starts_with("h-") && s.len() == 34, "{bad:?} -> {s}");
        }
        assert_ne!(file_stem("../a").unwrap(), file_stem("../b").unwrap());
        assert!(file_stem("").is_err());
        assert!(file_stem(&"x".repeat(2000)).is_err());
    }
}
