//! `sjournal ship (--session ID | --all) [--to s3://BUCKET/PREFIX] [--json]`: sends sealed
//! segments of journals to object storage (see [`sjournal::remote::ship`]). Exit 0 when every
//! journal was shipped (or was up to date), 1 when one DIVERGED from what was shipped or is
//! damaged (nothing more is written for it), 2 on errors (network, credentials). Pending
//! spooled events are merged into their journals first, as every reader does.

use crate::cli::shared::remote_err;
use crate::cli::{output, Outcome};
use sjournal::config::Config;
use sjournal::error::{Error, Result};
use sjournal::journal::Root;
use sjournal::remote::{self, cursor, identity, ship};

/// Ship journals to object storage (sealed, create-only segments of the journal's own bytes)
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Destination: --to, else [remote] to in <root>/config.toml. s3://BUCKET/PREFIX takes credentials,
region and endpoint from the standard AWS environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL, web identity, container or instance credentials);
file:///DIR writes to a directory. Safe to run any number of times, concurrently too.
Exit codes: 0 shipped or up to date; 1 DIVERGED or damaged (named on stdout); 2 error.")]
pub struct Args {
    /// The session: its id, as the host gave it (or --all)
    #[arg(long, required_unless_present = "all", conflicts_with = "all")]
    pub session: Option<String>,
    /// Every journal under the root
    #[arg(long)]
    pub all: bool,
    /// Destination: s3://BUCKET/PREFIX or file:///DIR
    #[arg(long, value_name = "URL")]
    pub to: Option<String>,
    /// One JSON object per journal
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let config = Config::load(root).map_err(|e| Error::Remote {
        reason: e.to_string(),
    })?;
    let url = args
        .to
        .clone()
        .or(config.remote.to.clone())
        .ok_or_else(|| Error::Remote {
            reason:
                "no destination: pass --to s3://BUCKET/PREFIX or set [remote] to in config.toml"
                    .into(),
        })?;
    // Spooled events are shipped too: merged into their journals first when the journal can
    // take them now (else shipped by a later run; `settle` says so on stderr). A SessionEnd
    // spooled because the lock was held is then in what the detached ship sends.
    let with_pending = match &args.session {
        Some(s) => vec![s.clone()],
        None => sjournal::journal::spool::sessions_with_pending(root, &config.writer_options())?,
    };
    for s in &with_pending {
        crate::cli::pending::settle(root, s)?;
    }
    let journals = match &args.session {
        Some(s) => {
            let p = root.existing_session(s)?;
            let mut v = vec![p.journal];
            if p.rescue.exists() {
                v.push(p.rescue);
            }
            v
        }
        None => root.journals()?,
    };
    let dest = remote::Remote::open(&url).map_err(remote_err)?;
    let id = identity::load(root, &config).map_err(remote_err)?;
    let cursors = cursor::dir_for(root, &url);
    let rt = remote::runtime().map_err(|e| Error::io("start runtime", root.dir(), e))?;
    let mut out = output::stdout();
    let mut bad = 0;
    for j in &journals {
        let r = rt
            .block_on(ship::ship_journal(&dest, j, &id, &cursors, &ship::NoFaults))
            .map_err(remote_err)?;
        if !r.ok() {
            bad += 1;
        }
        let line = if args.json {
            serde_json::to_string(&r).expect("serializable")
        } else {
            r.summary()
        };
        output::emit(&mut out, &line, args.json)?;
    }
    Ok(if bad == 0 {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
