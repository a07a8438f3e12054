//! `sjournal fetch URL --into DIR [--pubkey KEYFILE]`: rebuilds shipped journals byte for
//! byte after verifying them (see [`sjournal::remote::fetch`]). Exit 1 if any stream has
//! findings (it is not written) or an existing local file was in the way.

use std::path::PathBuf;

use crate::cli::error::Result;
use crate::cli::shared::remote_err;
use crate::cli::{output, Outcome};
use sjournal::error::Error;
use sjournal::remote::{self, fetch};

/// Rebuild shipped journals from object storage, byte for byte, after verifying them
#[derive(Debug, clap::Args)]
#[command(after_help = "\
URL: s3://BUCKET/PREFIX[/v1/hosts/HOST[/sessions/STEM]] or file:///DIR[/v1/...].
DIR becomes a root (DIR/sessions/<stem>.sjl) when the URL covers one host, else DIR/<host>/ per host:
`sjournal --root DIR replay --session ID` then works as on the machine that shipped it.")]
pub struct Args {
    /// What to fetch
    pub url: String,
    /// Where to write the journals
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// Require valid checkpoint signatures by these verifier keys (one per line)
    #[arg(long, value_name = "KEYFILE")]
    pub pubkey: Vec<PathBuf>,
    /// Print JSON (one object per line) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<Outcome> {
    let remote = remote::Remote::open(&args.url).map_err(remote_err)?;
    let opts = remote::verify::Options {
        keys: crate::cli::shared::load_keys(&args.pubkey)?,
        local: None,
    };
    let rt = remote::runtime().map_err(|e| Error::io("start runtime", &args.into, e))?;
    let fetched = rt
        .block_on(fetch::fetch(&remote, &args.into, &opts))
        .map_err(remote_err)?;
    let mut out = output::stdout();
    let mut bad = 0;
    for f in &fetched {
        if !f.ok {
            bad += 1;
        }
        let line = if args.json {
            sjournal::report::line(&sjournal::report::FetchLine::from(f))
        } else {
            format!(
                "{} {}: {}{}",
                if f.ok { "ok " } else { "BAD" },
                f.path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .or_else(|| f.verdict.location.as_ref().map(|l| l.display()))
                    .unwrap_or_default(),
                f.outcome,
                if f.verdict.findings.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", f.verdict.findings.join("; "))
                }
            )
        };
        output::emit(&mut out, &line, args.json)?;
    }
    if fetched.is_empty() {
        output::line(&mut out, &format!("nothing under {}", args.url))?;
    }
    Ok(if bad == 0 {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
