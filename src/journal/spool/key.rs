//! The root's spool key: the secret that authenticates what sjournal writes to the fallback
//! spool, outside the root.
//!
//! The fallback spool lives in a place the root does not control (`$XDG_RUNTIME_DIR`, the
//! system's temp directory, a configured directory), and everything that names a root or a
//! session there (the root key, the file stems) is an unkeyed hash of strings anyone can
//! compute. So a file found there is merged only if it carries a MAC, under this key, of its
//! entry frame: a file another user planted, copied from another root, or changed after it
//! was written does not verify, and is refused.
//!
//! - Where: `<root>/spool.key`, 32 random bytes from the operating system, 0600, owned by the
//!   user. It never leaves the machine (shipping, export and the fallback spool never carry
//!   it) and sjournal never prints it.
//! - When: created the first time a writer ensures the root (`Root::ensure_with`), before any
//!   event can need it: by the time the root cannot take a file, its key is already there.
//!   Created under a temporary name and hard-linked into place, so two processes creating it
//!   at once agree on one key (a link never replaces a file).
//! - Read: only a regular file owned by this user, closed to group and others, of exactly
//!   32 bytes (`storage::open_regular`); anything else is no key, and fallback files then
//!   cannot be authenticated (they are kept, and reported).
//! - The MAC: blake3 in keyed mode, under `derive_key("sjournal fallback spool v2 mac", key)`,
//!   of the entry frame's bytes. The key id the file carries is the first 16 hex digits of
//!   `derive_key("sjournal fallback spool v2 key id", key)`: it says which key made a MAC
//!   (another root's, an older key) without saying anything about the key.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use rand_core::RngCore;

use crate::error::{Error, Result};
use crate::format::spool::{Auth, FALLBACK_FORMAT};
use crate::journal::paths::{self, Root};
use crate::storage::{self, Fs, Owner};

/// The key file's name in the root.
pub const FILE: &str = "spool.key";
const LEN: usize = 32;
const MAC_CONTEXT: &str = "sjournal fallback spool v2 mac";
const ID_CONTEXT: &str = "sjournal fallback spool v2 key id";

/// A root's spool key, ready to make and check MACs.
#[derive(Clone)]
pub struct SpoolKey {
    mac_key: [u8; 32],
    id: String,
}

impl std::fmt::Debug for SpoolKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SpoolKey({})", self.id)
    }
}

impl SpoolKey {
    fn from_secret(secret: &[u8; LEN]) -> SpoolKey {
        let id =
            blake3::Hash::from(blake3::derive_key(ID_CONTEXT, secret)).to_hex()[..16].to_owned();
        SpoolKey {
            mac_key: blake3::derive_key(MAC_CONTEXT, secret),
            id,
        }
    }

    /// The key's id (what a file's [`Auth::key_id`] must say).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The authentication of an entry frame.
    pub fn sign(&self, entry: &[u8]) -> Auth {
        Auth {
            format: FALLBACK_FORMAT,
            key_id: self.id.clone(),
            mac: blake3::keyed_hash(&self.mac_key, entry).as_bytes().to_vec(),
        }
    }

    /// Checks an entry frame's authentication; why it fails, if it does.
    pub fn check(&self, entry: &[u8], auth: &Auth) -> std::result::Result<(), String> {
        if auth.key_id != self.id {
            return Err(format!(
                "its MAC was made with another key (id {}), not this root's (id {})",
                crate::escape::text(&auth.key_id),
                self.id
            ));
        }
        let Ok(mac) = <[u8; 32]>::try_from(auth.mac.as_slice()) else {
            return Err(format!("its MAC is {} bytes, not 32", auth.mac.len()));
        };
        // `blake3::Hash` compares in constant time.
        if blake3::Hash::from(mac) != blake3::keyed_hash(&self.mac_key, entry) {
            return Err(
                "its MAC does not match its content (changed after it was written, or \
                        not written by sjournal for this root)"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The key file of `root`.
pub fn path(root: &Root) -> PathBuf {
    root.dir().join(FILE)
}

/// Reads the root's key; why there is none usable, if there is not.
pub fn load(root: &Root) -> std::result::Result<SpoolKey, String> {
    Ok(SpoolKey::from_secret(&read_secret(root)?))
}

/// A key for another purpose derived from the root's key (blake3's `derive_key` under
/// `context`, which names the purpose): the redaction tags use one. Never the spool MAC's.
pub fn derived(root: &Root, context: &str) -> std::result::Result<[u8; 32], String> {
    assert!(context != MAC_CONTEXT && context != ID_CONTEXT);
    Ok(blake3::derive_key(context, &read_secret(root)?))
}

/// The root's key file's 32 bytes, if it is usable (see the module docs).
fn read_secret(root: &Root) -> std::result::Result<[u8; LEN], String> {
    let path = path(root);
    let file = storage::open_regular(&path, Owner::Me).map_err(|e| match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => format!(
            "the root's spool key {} does not exist (the root was never writable since this \
             version of sjournal ran)",
            path.display()
        ),
        e => format!("the root's spool key is unusable: {e}"),
    })?;
    let meta = file
        .metadata()
        .map_err(|e| format!("the root's spool key {}: {e}", path.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "the root's spool key {} is open to other users (mode {:o}); it is not used: \
             remove it (a new one is made), which leaves spool files made with it to review",
            path.display(),
            meta.permissions().mode() & 0o777
        ));
    }
    let mut secret = [0u8; LEN];
    let mut extra = [0u8; 1];
    use std::os::unix::fs::FileExt;
    let ok = file.read_exact_at(&mut secret, 0).is_ok()
        && matches!(file.read_at(&mut extra, LEN as u64), Ok(0));
    if !ok {
        return Err(format!(
            "the root's spool key {} is not {LEN} bytes long; it is not used",
            path.display()
        ));
    }
    Ok(secret)
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Creates the root's key if there is none (the root's directory must exist). Through `fs`,
/// so a root that cannot take a file fails here as it fails everywhere else.
pub fn ensure(fs: &dyn Fs, root: &Root) -> Result<()> {
    let path = path(root);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("inspect", &path, e)),
    }
    let mut secret = [0u8; LEN];
    rand_core::OsRng
        .try_fill_bytes(&mut secret)
        .map_err(|e| Error::io("make", &path, std::io::Error::other(e.to_string())))?;
    let tmp = root.dir().join(format!(
        ".{FILE}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let made = fs
        .write_new(&tmp, &secret)
        .map_err(|e| Error::io("write", &tmp, e))
        .and_then(|()| match fs.hard_link(&tmp, &path) {
            // Another process made it first: that one is the key.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            r => r.map_err(|e| Error::io("link", &path, e)),
        });
    let _ = fs.remove_file(&tmp);
    made?;
    paths::sync_dir_with(fs, dir_of(&path))
}

fn dir_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mac_checks_only_under_its_key_and_content() {
        let a = SpoolKey::from_secret(&[1; 32]);
        let b = SpoolKey::from_secret(&[2; 32]);
        let auth = a.sign(b"entry");
        assert!(a.check(b"entry", &auth).is_ok());
        assert!(a
            .check(b"entrY", &auth)
            .unwrap_err()
            .contains("does not match"));
        assert!(b
            .check(b"entry", &auth)
            .unwrap_err()
            .contains("another key"));
        let mut forged = auth.clone();
        forged.key_id = b.id().to_owned();
        assert!(b.check(b"entry", &forged).is_err());
        // An unkeyed hash of the content (what anyone can compute) is not the MAC.
        let mut unkeyed = auth.clone();
        unkeyed.mac = blake3::hash(b"entry").as_bytes().to_vec();
        assert!(a.check(b"entry", &unkeyed).is_err());
        assert_ne!(a.id(), b.id());
    }

    #[test]
    fn the_key_is_made_once_private_and_refused_when_open_to_others() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        assert!(load(&root).unwrap_err().contains("does not exist"));
        ensure(&crate::storage::RealFs, &root).unwrap();
        let first = std::fs::read(path(&root)).unwrap();
        assert_eq!(first.len(), 32);
        ensure(&crate::storage::RealFs, &root).unwrap();
        assert_eq!(std::fs::read(path(&root)).unwrap(), first, "never replaced");
        let mode = std::fs::metadata(path(&root)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let k = load(&root).unwrap();
        assert_eq!(
            k.id(),
            SpoolKey::from_secret(&first.try_into().unwrap()).id()
        );
        std::fs::set_permissions(path(&root), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load(&root).unwrap_err().contains("open to other users"));
    }
}
