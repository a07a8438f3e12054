//! Who ships: the host id that names this machine's objects, and the key that signs its
//! checkpoints. Both come from `<root>/config.toml` (`[remote] host_id`, `sign_key`) when set,
//! else from files in `<root>/remote/` made on first use and kept:
//!
//! - `host-id`: the short host name (letters, digits, `-`, `_`) and 8 random hex digits, e.g.
//!   `laptop-3f9c01aa`, so that two machines named alike never share a prefix;
//! - `host.key` (0600) and `host.key.pub`: an ed25519 signed-note key pair named
//!   `sjournal-<host id>`. Give `host.key.pub` to auditors (`verify --remote --pubkey`).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{RemoteError, Result};
use super::layout::valid_component;
use crate::audit::checkpoint::generate_keys;
use crate::config::Config;
use crate::journal::paths::{create_new, ensure_dir};
use crate::journal::Root;

/// This machine's identity as a shipper.
#[derive(Debug, Clone)]
pub struct Identity {
    pub host_id: String,
    /// The signer key's text (`PRIVATE+KEY+…`).
    pub signer: String,
    pub signer_path: PathBuf,
}

fn read_small(path: &Path) -> Result<Option<String>> {
    match crate::storage::read_regular_text(path, crate::storage::Owner::Anyone, 64 * 1024) {
        Ok(s) => Ok(Some(s.trim().to_owned())),
        Err(crate::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(crate::Error::Io {
            op: "read", source, ..
        }) => Err(RemoteError::File {
            path: path.to_owned(),
            reason: source.to_string(),
        }),
        Err(e) => Err(e.into()),
    }
}

fn write_new(path: &Path, text: &str) -> Result<bool> {
    match create_new(path) {
        Ok(mut f) => {
            f.write_all(format!("{text}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(|e| RemoteError::File {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?;
            if let Some(d) = path.parent() {
                crate::journal::paths::sync_dir(d)?;
            }
            Ok(true)
        }
        // Another process made it first: use theirs.
        Err(crate::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::AlreadyExists =>
        {
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

/// The short host name, reduced to `[A-Za-z0-9_-]`.
fn hostname() -> String {
    let uts = rustix::system::uname();
    let raw = String::from_utf8_lossy(uts.nodename().to_bytes()).into_owned();
    let name: String = raw
        .split('.')
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let name = name.trim_matches(|c| c == '-' || c == '_').to_owned();
    if name.is_empty() {
        "host".into()
    } else {
        name
    }
}

/// The host id: config, else `<root>/remote/host-id`, made on first use.
pub fn host_id(root: &Root, config: &Config) -> Result<String> {
    if let Some(id) = &config.remote.host_id {
        if !valid_component(id) {
            return Err(RemoteError::Config(format!(
                "[remote] host_id {id:?} in {}: use 1 to 128 of A-Z a-z 0-9 - _, starting with a letter or digit",
                Config::path(root).display()
            )));
        }
        return Ok(id.clone());
    }
    let dir = root.dir().join("remote");
    ensure_dir(root.dir(), true)?;
    ensure_dir(&dir, false)?;
    let path = dir.join("host-id");
    if let Some(id) = read_small(&path)? {
        if valid_component(&id) {
            return Ok(id);
        }
        return Err(RemoteError::Config(format!(
            "{} holds {id:?}, not a host id; fix or delete it",
            path.display()
        )));
    }
    let mut rnd = [0u8; 4];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut rnd);
    let id = format!("{}-{:08x}", hostname(), u32::from_be_bytes(rnd));
    write_new(&path, &id)?;
    Ok(read_small(&path)?.unwrap_or(id))
}

/// The identity: host id and signer key (config `sign_key`, else `<root>/remote/host.key`,
/// made on first use).
pub fn load(root: &Root, config: &Config) -> Result<Identity> {
    let host_id = host_id(root, config)?;
    let path = match &config.remote.sign_key {
        Some(p) => root.dir().join(p),
        None => root.dir().join("remote").join("host.key"),
    };
    if config.remote.sign_key.is_none() && read_small(&path)?.is_none() {
        // `<root>/remote/` does not exist yet when the host id comes from the configuration.
        ensure_dir(root.dir(), true)?;
        ensure_dir(&root.dir().join("remote"), false)?;
        let (signer, verifier) = generate_keys(&format!("sjournal-{host_id}"))
            .map_err(|e| RemoteError::Config(e.to_string()))?;
        if write_new(&path, &signer)? {
            let mut p = path.clone().into_os_string();
            p.push(".pub");
            write_new(Path::new(&p), &verifier)?;
        }
    }
    let signer = read_small(&path)?.ok_or_else(|| RemoteError::File {
        path: path.clone(),
        reason: "no signer key here (config [remote] sign_key names it; make one with `sjournal checkpoint keygen`)".into(),
    })?;
    Ok(Identity {
        host_id,
        signer,
        signer_path: path,
    })
}
