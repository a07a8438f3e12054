//! The fallback spool: where an event goes when the root itself cannot take a file (no space,
//! a read-only or unwritable file system, `sessions/` replaced by a symlink). It must be on
//! another file system to help, and it must be private: the default places are shared
//! (`/tmp`), where another user could create the directory first and read or replace what is
//! spooled there.
//!
//! Where: `[hook] fallback_spool_dir` in `config.toml` if set; else
//! `$XDG_RUNTIME_DIR/sjournal/fallback` (per user, mode 0700, usually a tmpfs); else
//! `<system temp dir>/sjournal-<uid>/fallback`. Under it, `<root key>/<stem>.spool/`, where the
//! root key is the first 32 hex digits of the blake3 of the root's absolute path, so roots
//! never share a fallback; `<root key>/root` names the root for people looking around.
//!
//! Every directory sjournal creates or uses there must be a real directory (not a symlink),
//! owned by this user, with no permission for group or others; anything else is refused
//! ([`Error::UnsafeDir`]) and the event is then kept nowhere — and the user is told.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::hash::content_hash;
use crate::journal::paths::Root;
use crate::storage::Fs;

/// One place the fallback spool may be.
struct Base {
    path: PathBuf,
    /// The first directory level sjournal owns (and checks is private): the configured
    /// directory itself, or, for a default place, the `sjournal` directory above `fallback`.
    private_from: PathBuf,
}

/// The fallback bases to look in, the preferred first (where events are written).
fn candidates(configured: Option<&Path>) -> Vec<Base> {
    if let Some(c) = configured {
        return vec![Base {
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
        v.push(Base {
            path: own.join("fallback"),
            private_from: own,
        });
    }
    let uid = rustix::process::geteuid().as_raw();
    let own = std::env::temp_dir().join(format!("sjournal-{uid}"));
    v.push(Base {
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

/// The session's fallback spool directories, one per base (they may not exist).
pub fn session_dirs(root: &Root, stem: &str, configured: Option<&Path>) -> Vec<PathBuf> {
    let key = root_key(root);
    bases(configured)
        .into_iter()
        .map(|b| b.join(&key).join(format!("{stem}.{}", super::EXT)))
        .collect()
}

/// The root's directories in the fallback spool, one per base (they may not exist).
pub fn root_dirs(root: &Root, configured: Option<&Path>) -> Vec<PathBuf> {
    let key = root_key(root);
    bases(configured)
        .into_iter()
        .map(|b| b.join(&key))
        .collect()
}

/// Creates (or checks) the session's fallback spool directory under the first base that
/// works; returns it.
pub fn ensure_session_dir(
    fs: &dyn Fs,
    root: &Root,
    stem: &str,
    configured: Option<&Path>,
) -> Result<PathBuf> {
    let key = root_key(root);
    let mut last = None;
    for base in candidates(configured) {
        match ensure_under(fs, &base, root, &key, stem) {
            Ok(dir) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("there is always a base"))
}

fn ensure_under(fs: &dyn Fs, base: &Base, root: &Root, key: &str, stem: &str) -> Result<PathBuf> {
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
    let unsafe_dir = |reason: String| Error::UnsafeDir {
        path: path.to_owned(),
        reason,
    };
    if m.file_type().is_symlink() {
        return Err(unsafe_dir("it is a symlink".into()));
    }
    if !m.is_dir() {
        return Err(unsafe_dir("it is not a directory".into()));
    }
    let me = rustix::process::geteuid().as_raw();
    if m.uid() != me {
        return Err(unsafe_dir(format!(
            "it belongs to uid {}, not to this user (uid {me})",
            m.uid()
        )));
    }
    if m.permissions().mode() & 0o077 != 0 {
        return Err(unsafe_dir(format!(
            "its mode is {:o}: other users have access",
            m.permissions().mode() & 0o777
        )));
    }
    Ok(created)
}
