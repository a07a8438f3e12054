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
//!
//! What is merged, and what is refused. A spool file's records become journal records (and,
//! for a scope journal, memory that reaches the model), so a file is merged only if it is
//! the user's own: a regular file owned by this user ([`read_spool`], opened without waiting
//! and without following a link), in a directory that passed the fallback's checks
//! ([`fallback::Base`]) and, outside the root, authenticated by the root's spool key
//! ([`key`]). A file that fails is **untrusted**: never merged, never folded into what a
//! reader shows, never deleted; the merge renames it `<name>.untrusted` (out of the way of
//! later merges) and [`refused`] lists it, with the directories that failed their checks,
//! for `sessions`, `verify --all` and `flush` to report with the command to deal with it
//! ([`accept`] merges a file the user reviewed and recognises as theirs).

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
pub use write::{write_records, KeptIn};

pub(crate) const EXT: &str = "spool";
pub(crate) const INTENT: &str = "merge.intent";
pub(crate) const TMP_PREFIX: &str = ".tmp-";
pub(crate) const DAMAGED_EXT: &str = "damaged";
/// What the user is told of a fallback file written without a MAC (the root's key could not
/// be had): it waits for the user to accept it.
pub const UNAUTHENTICATED: &str = "NOT authenticated";
/// The suffix an untrusted spool file is set aside under (kept, never merged).
pub const UNTRUSTED_EXT: &str = "untrusted";
/// The suffix a spool file the user accepted is kept under once its records are spooled
/// again in the root.
pub const ACCEPTED_EXT: &str = "accepted";

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
    crate::install::shell_quote(&p.to_string_lossy())
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
        &file.session_id,
        &items,
        &times,
        &reason,
        file.attempted,
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
