//! `fetch`: rebuilds shipped journals byte for byte, after verifying them. The remote copy is
//! verified first ([`super::verify`]); a stream with any finding is not written. The header
//! and the segments, in key order, with the erasure objects in place ([`super::erasure`]), are
//! the journal; quarantine objects are written back beside it under their names.
//!
//! Into `DIR`: when the scope holds one host's streams, `DIR` is a root
//! (`DIR/sessions/<stem>.sjl`), so `sjournal --root DIR replay --session ID` works as is; with
//! several hosts, each host gets its own root `DIR/<host id>/`.
//!
//! An existing journal is replaced only by one that extends it (its bytes are a prefix of the
//! remote's); one with other bytes is left as it is and reported. Files are written to a
//! temporary file (0600), fsynced and renamed into place; directories are 0700, symlinks
//! refused.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{RemoteError, Result};
use super::layout::StreamKind;
use super::store::Remote;
use super::verify::{self, StreamVerdict};
use crate::journal::paths::{ensure_dir, sync_dir};
use crate::journal::Root;

/// What fetch did with one stream. `fetch --json` prints one per line.
#[derive(Debug, Clone, Serialize)]
pub struct Fetched {
    pub verdict: StreamVerdict,
    pub path: Option<PathBuf>,
    /// written, up to date, refused: …
    pub outcome: String,
    pub ok: bool,
}

/// Fetches every stream under the remote's scope into `into`.
pub async fn fetch(remote: &Remote, into: &Path, opts: &verify::Options) -> Result<Vec<Fetched>> {
    let verdicts = verify::verify(remote, opts).await?;
    let hosts: BTreeSet<String> = verdicts
        .iter()
        .filter_map(|v| v.location.as_ref().map(|l| l.host.clone()))
        .collect();
    let mut out = Vec::new();
    for v in verdicts {
        let Some(loc) = v.location.clone() else {
            out.push(Fetched {
                outcome: "refused: objects outside the layout".into(),
                ok: false,
                path: None,
                verdict: v,
            });
            continue;
        };
        if !v.findings.is_empty() {
            out.push(Fetched {
                outcome: "refused: the remote copy has findings; nothing written".into(),
                ok: false,
                path: None,
                verdict: v,
            });
            continue;
        }
        let root = if hosts.len() > 1 {
            Root::new(into.join(&loc.host))
        } else {
            Root::new(into)
        };
        let sessions = root.ensure()?;
        let name = match loc.kind {
            StreamKind::Main => format!("{}.sjl", loc.stem),
            StreamKind::Rescue => format!("{}.rescue.sjl", loc.stem),
        };
        let path = sessions.join(&name);
        let mut bytes = match remote.get(&loc.header_key()).await? {
            Some(o) => o.bytes.to_vec(),
            None => Vec::new(),
        };
        let mut first = 1;
        loop {
            let key = loc.segment_key(first);
            let Some(o) = remote.get(&key).await? else {
                break;
            };
            bytes.extend_from_slice(&o.bytes);
            // Segments are contiguous (verified): the next starts after this one's last seq.
            let meta = super::segment::SegmentMeta::from_meta(&o.meta)
                .map_err(|e| RemoteError::Config(format!("{key}: {e}")))?;
            first = meta.last + 1;
        }
        // Erased records: the copy verify rebuilt with the erasure objects in place, so the
        // erased bytes the segments still hold are never written here.
        if let Some(rebuilt) = &v.rebuilt {
            bytes = rebuilt.clone();
        }
        let outcome = write_journal(&sessions, &path, &bytes)?;
        if !outcome.starts_with("refused") {
            mark_fetched(&path, &v)?;
        }
        for q in remote.list(&format!("{}/quarantine/", loc.base())).await? {
            let Some((_, super::layout::Part::Quarantine(qname))) = super::layout::parse_key(&q)
            else {
                continue;
            };
            if !qname.starts_with(&format!("{name}.quarantine-")) {
                continue;
            }
            if let Some(o) = remote.get(&q).await? {
                let qpath = sessions.join(&qname);
                if !qpath.exists() {
                    write_atomic(&sessions, &qpath, &o.bytes)?;
                }
            }
        }
        let ok = !outcome.starts_with("refused");
        out.push(Fetched {
            verdict: v,
            path: Some(path),
            outcome,
            ok,
        });
    }
    Ok(out)
}

/// Gives the journal written its high-water mark (the last record fetched, which was synced
/// before it was shipped), so the fetched root verifies as the shipping one does: a journal
/// with records and no mark is a finding. Forward only; after the journal's rename.
fn mark_fetched(path: &Path, v: &verify::StreamVerdict) -> Result<()> {
    let Some(&hash) = v.hashes.last() else {
        return Ok(());
    };
    let seq = v.hashes.len() as u64;
    if crate::journal::hwm::read(path)?.is_some_and(|m| m.seq >= seq) {
        return Ok(());
    }
    crate::journal::hwm::reset(
        &crate::storage::RealFs,
        path,
        crate::format::mark::Mark { seq, hash },
    )?;
    Ok(())
}

fn write_journal(dir: &Path, path: &Path, bytes: &[u8]) -> Result<String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(crate::Error::Symlink { path: path.into() }.into())
        }
        Ok(_) => {
            let have = crate::storage::read_regular(path, crate::storage::Owner::Anyone, u64::MAX)?;
            if have == bytes {
                return Ok("up to date".into());
            }
            if !bytes.starts_with(&have) {
                return Ok(format!(
                    "refused: {} exists with other bytes (it does not extend to the remote copy); \
                     move it away to fetch",
                    path.display()
                ));
            }
            write_atomic(dir, path, bytes)?;
            Ok(format!("extended ({} bytes were there)", have.len()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            write_atomic(dir, path, bytes)?;
            Ok("written".into())
        }
        Err(e) => Err(crate::Error::io("inspect", path, e).into()),
    }
}

fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    ensure_dir(dir, false)?;
    let err = |reason: String| RemoteError::File {
        path: path.to_owned(),
        reason,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".fetch-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(|e| err(e.to_string()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| err(e.to_string()))?;
    tmp.persist(path).map_err(|e| err(e.error.to_string()))?;
    sync_dir(dir)?;
    Ok(())
}
