//! `sjournal verify --remote URL [--pubkey KEYFILE]…`: the remote part of verify (see
//! [`sjournal::remote::verify`]). Compares with the local root's journals of the same host id.

use std::path::{Path, PathBuf};

use crate::cli::error::Result;
use crate::cli::shared::{load_keys, remote_err};
use crate::cli::{output, Outcome};
use sjournal::config::Config;
use sjournal::error::Error;
use sjournal::journal::Root;
use sjournal::remote::{self, verify};

/// The local host id, if this root has shipped before (or names one in its config).
fn local_host(root: &Root) -> Option<String> {
    let config = Config::load(root).ok()?;
    if let Some(h) = config.remote.host_id {
        return Some(h);
    }
    let p = root.dir().join("remote").join("host-id");
    sjournal::storage::read_regular_text(Path::new(&p), sjournal::storage::Owner::Anyone, 1 << 10)
        .ok()
        .map(|s| s.trim().to_owned())
}

pub fn run(root: &Root, url: &str, pubkeys: &[PathBuf], json: bool) -> Result<Outcome> {
    let remote = remote::Remote::open(url).map_err(remote_err)?;
    let opts = verify::Options {
        keys: load_keys(pubkeys)?,
        local: local_host(root).map(|h| (root.clone(), h)),
    };
    let rt = remote::runtime().map_err(|e| Error::io("start runtime", root.dir(), e))?;
    let verdicts = rt
        .block_on(verify::verify(&remote, &opts))
        .map_err(remote_err)?;
    let mut out = output::stdout();
    let mut bad = 0;
    for v in &verdicts {
        if !v.ok {
            bad += 1;
        }
        let line = if json {
            serde_json::to_string(v).expect("serializable")
        } else {
            v.summary()
        };
        output::emit(&mut out, &line, json)?;
    }
    if !json {
        output::line(
            &mut out,
            &format!(
                "{} remote journal(s) verified under {url}, {bad} with problems",
                verdicts.iter().filter(|v| v.location.is_some()).count()
            ),
        )?;
    }
    Ok(if bad == 0 {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
