//! The spool: where an event goes when the journal cannot take it now (its lock is held past
//! the hook's deadline, the disk refused the write, older spooled events are still waiting),
//! so that it is still not lost; and the merge that moves spooled events into the journal, in
//! order, the next time the session is opened for writing (`Session::open`), read, or flushed.
//!
//! A session has two spool directories:
//!
//! - `<root>/sessions/<stem>.spool/`, next to the journal: as durable as the journal itself;
//! - the **fallback spool**, `<fallback>/<root key>/<stem>.spool/` (see [`fallback`]), on
//!   another file system, used only when the root cannot take a file at all (full, read-only,
//!   unwritable, a symlink where `sessions/` should be). It is less durable (by default it is
//!   `$XDG_RUNTIME_DIR`, a tmpfs lost on reboot) and the user is told whenever an event goes
//!   there.
//!
//! The file formats are in `format::spool`; the durable write in [`write`]; the merge and the
//! settling of an interrupted merge in [`merge`]. The design, and what each crash between its
//! steps leaves, is in "The spool" in `journal-format.md`.

pub mod fallback;
pub mod merge;
pub mod write;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::spool::{self as format, SpoolFile};
use crate::journal::paths::{Root, SessionPaths};
use crate::journal::WriterOptions;
use crate::limits::FRAME_MAX_BYTES;

pub use merge::{merge_pending, MergeReport};
pub use write::{write_records, KeptIn};

pub(crate) const EXT: &str = "spool";
pub(crate) const INTENT: &str = "merge.intent";
pub(crate) const TMP_PREFIX: &str = ".tmp-";
pub(crate) const DAMAGED_EXT: &str = "damaged";

/// One directory of a session's spool files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoolDir {
    pub path: PathBuf,
    /// The fallback spool (outside the root, less durable).
    pub fallback: bool,
}

/// The session's spool directories: the root's, then the fallback's (every place one may be).
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
    for (name, dir) in list_all(&dirs(root, &paths, opts))? {
        let path = dir.path.join(&name);
        let read = read_file(&path).and_then(|b| format::decode_entry(&b, session_id));
        let (file, damaged) = match read {
            Ok(f) => (Some(f), None),
            Err(e) => (None, Some(e)),
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
            // The first file that reads names the session (stems of long ids are hashes).
            for n in list_pending(&dir)? {
                let read = read_file(&dir.join(&n)).and_then(|b| format::decode_entry_any(&b));
                if let Ok(f) = read {
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

/// Reads a whole small file, refusing links and anything larger than a frame.
pub(crate) fn read_file(path: &Path) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let f = crate::journal::paths::open_file(path, false, false).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    f.take(FRAME_MAX_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("read {}: {e}", path.display()))?;
    Ok(buf)
}
