//! The fallback spool: where an event goes when the root itself cannot take a file (no space,
//! a read-only or unwritable file system, `sessions/` replaced by a symlink). It must be on
//! another file system to help, and it must be private: the default places are shared
//! (`/tmp`), where another user could create the directory first and read or replace what is
//! spooled there.
//!
//! Where: `[hook] fallback_spool_dir` in `config.toml` if set; else
//! `$XDG_RUNTIME_DIR/sjournal/fallback` (per user, mode 0700, usually a tmpfs), then
//! `<system temp dir>/sjournal-<uid>/fallback`. Under it, `<root key>/<stem>.spool/`, where
//! the root key is the first 32 hex digits of the blake3 of the root's absolute path, so roots
//! never share a fallback; `<root key>/root` names the root for people looking around.
//!
//! Every directory sjournal creates, uses **or reads** there must be a real directory (not a
//! symlink), owned by this user, with no permission for group or others, from the first level
//! sjournal owns down to the session's spool directory. A writer refuses anything else
//! ([`Error::UnsafeDir`]) and tries the next place; only when no place takes the event is it
//! kept nowhere — and the user is told. A reader merges nothing from a directory that fails
//! those checks: it reports it ([`Base::Refused`], `spool::refused`). The files in a directory
//! that passes are still authenticated before they are merged (see `spool::key`).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::hash::content_hash;
use crate::journal::paths::Root;
use crate::storage::Fs;

/// One place the fallback spool may be.
struct Place {
    path: PathBuf,
    /// The first directory level sjournal owns (and checks is private): the configured
    /// directory itself, or, for a default place, the `sjournal` directory above `fallback`.
    private_from: PathBuf,
}

/// The fallback bases to look in, the preferred first (where events are written).
fn candidates(configured: Option<&Path>) -> Vec<Place> {
    if let Some(c) = configured {
        return vec![Place {
            path: c.to_owned(),
            private_from: c.to_owned(),
        }];
    }
    let mut v = Vec::new();
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        let own = x.join("sjournal");
        v.push(Place {
            path: own.join("fallback"),
            private_from: own,
        });
    }
    let uid = rustix::process::geteuid().as_raw();
    let own = std::env::temp_dir().join(format!("sjournal-{uid}"));
    v.push(Place {
        path: own.join("fallback"),
        private_from: own,
    });
    v
}

/// The fallback bases to look in, the preferred first (where events are written).
pub fn bases(configured: Option<&Path>) -> Vec<PathBuf> {
    candidates(configured).into_iter().map(|b| b.path).collect()
}

/// The key naming a root in the fallback spool.
pub fn root_key(root: &Root) -> String {
    let abs = std::path::absolute(root.dir()).unwrap_or_else(|_| root.dir().to_owned());
    content_hash(abs.as_os_str().as_encoded_bytes()).to_hex()[..32].to_owned()
}

/// What a reader finds at one fallback base for a root (or a session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// Nothing there (some level does not exist).
    Absent,
    /// Every level passed the checks: the directory to read.
    Trusted(PathBuf),
    /// A level that exists failed the checks (another user's, open to others, a link, not a
    /// directory): nothing under it is read.
    Refused { path: PathBuf, reason: String },
}

/// For readers: the root's directory under each fallback base, checked level by level from
/// the first level sjournal owns (see [`Base`]).
pub fn root_bases(root: &Root, configured: Option<&Path>) -> Vec<Base> {
    let key = root_key(root);
    candidates(configured)
        .into_iter()
        .map(|b| {
            let mut levels = vec![b.private_from.clone()];
            if b.path != b.private_from {
                levels.push(b.path.clone());
            }
            levels.push(b.path.join(&key));
            check_levels(&levels)
        })
        .collect()
}

/// For readers: the session's spool directory under each fallback base, checked level by
/// level (see [`Base`]).
pub fn session_bases(root: &Root, stem: &str, configured: Option<&Path>) -> Vec<Base> {
    root_bases(root, configured)
        .into_iter()
        .map(|b| match b {
            Base::Trusted(keyed) => check_levels(&[keyed.join(format!("{stem}.{}", super::EXT))]),
            other => other,
        })
        .collect()
}

/// The session's fallback spool directories a reader may merge from (those that exist and
/// pass the checks).
pub fn session_dirs(root: &Root, stem: &str, configured: Option<&Path>) -> Vec<PathBuf> {
    trusted(session_bases(root, stem, configured))
}

/// The root's directories in the fallback spool a reader may look in.
pub fn root_dirs(root: &Root, configured: Option<&Path>) -> Vec<PathBuf> {
    trusted(root_bases(root, configured))
}

fn trusted(bases: Vec<Base>) -> Vec<PathBuf> {
    bases
        .into_iter()
        .filter_map(|b| match b {
            Base::Trusted(p) => Some(p),
            _ => None,
        })
        .collect()
}

/// Checks one directory as [`root_bases`] checks each level.
pub fn check_dir(path: &Path) -> Base {
    check_levels(&[path.to_owned()])
}

/// Checks each of `levels` (outermost first) without creating anything.
fn check_levels(levels: &[PathBuf]) -> Base {
    for path in levels {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Base::Absent,
            Err(e) => {
                return Base::Refused {
                    path: path.clone(),
                    reason: format!("it cannot be inspected: {e}"),
                }
            }
            Ok(m) => {
                if let Err(reason) = check_private(&m) {
                    return Base::Refused {
                        path: path.clone(),
                        reason,
                    };
                }
            }
        }
    }
    levels
        .last()
        .map_or(Base::Absent, |p| Base::Trusted(p.clone()))
}

/// Keeps records in the fallback spool: under each base in turn (the preferred first),
/// creates (or checks) the session's directory and runs `write` there, until one takes them.
/// A base that is refused, unwritable or full is passed over for the next one; the error
/// says what each base answered.
pub fn write_first<T>(
    fs: &dyn Fs,
    root: &Root,
    stem: &str,
    configured: Option<&Path>,
    mut write: impl FnMut(&Path) -> Result<T>,
) -> Result<T> {
    let key = root_key(root);
    let places = candidates(configured);
    let mut failed: Vec<Error> = Vec::new();
    for place in &places {
        match ensure_under(fs, place, root, &key, stem).and_then(|dir| write(&dir)) {
            Ok(t) => return Ok(t),
            Err(e) => failed.push(e),
        }
    }
    if failed.len() == 1 {
        return Err(failed.pop().expect("one error"));
    }
    let all: Vec<String> = failed.iter().map(|e| e.to_string()).collect();
    Err(Error::io(
        "keep in the fallback spool",
        &places[0].path,
        std::io::Error::other(format!(
            "no fallback place took it ({})",
            all.join("; then ")
        )),
    ))
}

/// Creates (or checks) the session's fallback spool directory under the first base that
/// works; returns it.
pub fn ensure_session_dir(
    fs: &dyn Fs,
    root: &Root,
    stem: &str,
    configured: Option<&Path>,
) -> Result<PathBuf> {
    write_first(fs, root, stem, configured, |dir| Ok(dir.to_owned()))
}

fn ensure_under(fs: &dyn Fs, base: &Place, root: &Root, key: &str, stem: &str) -> Result<PathBuf> {
    private_dir(fs, &base.private_from, true)?;
    private_dir(fs, &base.path, false)?;
    let keyed = base.path.join(key);
    if private_dir(fs, &keyed, false)? {
        // Names the root for people looking around; not needed by sjournal.
        let abs = std::path::absolute(root.dir()).unwrap_or_else(|_| root.dir().to_owned());
        let mut text = abs.as_os_str().as_encoded_bytes().to_vec();
        text.push(b'\n');
        let _ = fs.write_new(&keyed.join("root"), &text);
    }
    let dir = keyed.join(format!("{stem}.{}", super::EXT));
    private_dir(fs, &dir, false)?;
    Ok(dir)
}

/// Makes sure `path` is a private directory of this user, creating it (0700) if missing
/// (with its parents if `parents`). Returns true if it was created.
fn private_dir(fs: &dyn Fs, path: &Path, parents: bool) -> Result<bool> {
    let created = match std::fs::symlink_metadata(path) {
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !parents && path.parent().is_some_and(|p| !p.is_dir()) {
                return Err(Error::io(
                    "create directory",
                    path,
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                ));
            }
            fs.create_dir(path)
                .map_err(|e| Error::io("create directory", path, e))?;
            if let Some(parent) = path.parent() {
                crate::journal::paths::sync_dir_with(fs, parent)?;
            }
            true
        }
        Err(e) => return Err(Error::io("inspect", path, e)),
    };
    // Checked after creating too: someone may have put a link or a directory there first.
    let m = std::fs::symlink_metadata(path).map_err(|e| Error::io("inspect", path, e))?;
    check_private(&m).map_err(|reason| Error::UnsafeDir {
        path: path.to_owned(),
        reason,
    })?;
    Ok(created)
}

/// Why a directory of the fallback spool is not private to this user, if it is not: a
/// symlink, not a directory, another user's, or open to group or others.
pub(crate) fn check_private(m: &std::fs::Metadata) -> std::result::Result<(), String> {
    if m.file_type().is_symlink() {
        return Err("it is a symlink".into());
    }
    if !m.is_dir() {
        return Err("it is not a directory".into());
    }
    let me = rustix::process::geteuid().as_raw();
    if m.uid() != me {
        return Err(format!(
            "it belongs to uid {}, not to this user (uid {me})",
            m.uid()
        ));
    }
    if m.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "its mode is {:o}: other users have access",
            m.permissions().mode() & 0o777
        ));
    }
    Ok(())
}
