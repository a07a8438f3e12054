//! The ship cursor: how far a journal was shipped to one destination. One file per journal
//! and destination, `<root>/remote/cursors/<destination id>/<stem>[.rescue].cursor`, where the
//! destination id is 16 hex digits of the blake3 of the destination URL (its `dest` file
//! names the URL).
//!
//! ```text
//! {"v":1,"genesis":"<hex>","last_seq":N,"end":OFFSET,"head":"<hex>","quarantine":["name",…]}
//! crc32 of the line above, 8 hex digits
//! ```
//!
//! Written to a temporary file in the same directory (0600, `O_EXCL`), fsynced, renamed over
//! the cursor, directory fsynced: a crash leaves the old cursor or the new one. Never trusted
//! alone: ship checks that the local journal still has record `last_seq` ending at `end` with
//! hash `head` (else the journal diverged from what was shipped). A missing or unreadable
//! cursor only costs time: ship then walks the remote segments and compares their bytes.
//! Directories are 0700 and never followed through a symlink.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{RemoteError, Result};
use super::layout::StreamKind;
use crate::format::Hash;
use crate::journal::paths::{ensure_dir, sync_dir};
use crate::journal::Root;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub v: u32,
    /// Genesis hash of the journal shipped (binds the cursor to that journal).
    pub genesis: String,
    pub last_seq: u64,
    /// Offset just past record `last_seq`.
    pub end: u64,
    /// Record hash of `last_seq` (the genesis hash if 0).
    pub head: String,
    /// Quarantine files already shipped.
    #[serde(default)]
    pub quarantine: Vec<String>,
    /// Erased records whose erasure object was shipped (`erasure/<seq>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub erasures: Vec<u64>,
}

impl Cursor {
    pub fn start(genesis: Hash, header_len: u64) -> Cursor {
        Cursor {
            v: 1,
            genesis: genesis.to_hex(),
            last_seq: 0,
            end: header_len,
            head: genesis.to_hex(),
            quarantine: Vec::new(),
            erasures: Vec::new(),
        }
    }

    pub fn head_hash(&self) -> Option<Hash> {
        Hash::from_hex(&self.head)
    }
}

/// The directory of a destination's cursors under the root.
pub fn dir_for(root: &Root, url: &str) -> PathBuf {
    let id =
        &crate::format::hash::content_hash(url.trim_end_matches('/').as_bytes()).to_hex()[..16];
    root.dir().join("remote").join("cursors").join(id)
}

pub fn path_for(dir: &Path, stem: &str, kind: StreamKind) -> PathBuf {
    match kind {
        StreamKind::Main => dir.join(format!("{stem}.cursor")),
        StreamKind::Rescue => dir.join(format!("{stem}.rescue.cursor")),
    }
}

fn encode(c: &Cursor) -> String {
    let line = serde_json::to_string(c).expect("a cursor serializes");
    format!("{line}\n{:08x}\n", crc32fast::hash(line.as_bytes()))
}

/// Reads a cursor; Ok(None) if there is none or it does not check out (then it is ignored:
/// shipping resumes by comparing with the remote instead).
pub fn load(path: &Path) -> Result<Option<Cursor>> {
    let text = match crate::storage::read_regular_text(path, crate::storage::Owner::Anyone, 1 << 20)
    {
        Ok(t) => t,
        Err(crate::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        // Too long, or not text: not a cursor this writes.
        Err(crate::Error::Io { op: "read", .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut lines = text.lines();
    let (Some(line), Some(crc)) = (lines.next(), lines.next()) else {
        return Ok(None);
    };
    if format!("{:08x}", crc32fast::hash(line.as_bytes())) != crc {
        return Ok(None);
    }
    Ok(serde_json::from_str(line)
        .ok()
        .filter(|c: &Cursor| c.v == 1))
}

/// Writes a cursor durably (temporary file, fsync, rename, directory fsync).
pub fn store(dir: &Path, path: &Path, c: &Cursor, url: &str) -> Result<()> {
    for d in [dir.parent().and_then(Path::parent), dir.parent(), Some(dir)]
        .into_iter()
        .flatten()
    {
        ensure_dir(d, false)?;
    }
    let dest = dir.join("dest");
    if !dest.exists() {
        // Names the destination for people looking at the directory; not used by ship.
        let _ = write_atomic(dir, &dest, format!("{url}\n").as_bytes());
    }
    write_atomic(dir, path, encode(c).as_bytes())
}

fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    let err = |reason: String| RemoteError::File {
        path: path.to_owned(),
        reason,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(|e| err(format!("cannot create a temporary file: {e}")))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| err(format!("cannot write: {e}")))?;
    // rename(2) replaces a symlink at `path` itself, never following it.
    tmp.persist(path)
        .map_err(|e| err(format!("cannot rename into place: {}", e.error)))?;
    sync_dir(dir)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path());
        let dir = dir_for(&root, "s3://b/p");
        let p = path_for(&dir, "s", StreamKind::Main);
        assert_eq!(load(&p).unwrap(), None);
        let mut c = Cursor::start(Hash([1; 32]), 40);
        c.last_seq = 7;
        store(&dir, &p, &c, "s3://b/p").unwrap();
        assert_eq!(load(&p).unwrap(), Some(c));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("\"last_seq\":7", "\"last_seq\":8");
        std::fs::write(&p, text).unwrap();
        assert_eq!(
            load(&p).unwrap(),
            None,
            "a cursor failing its CRC is ignored"
        );
    }
}
