//! `sjournal fire --session ID NAME [--max N]`: counts one firing of hook NAME, unless it
//! already fired N times. Prints `{"fired": bool, "count": n, "max": N|null}`; exit 0 if it
//! fired (run the hook), 1 if the maximum was reached (skip it). Decided under the session's
//! lock, so concurrent callers never exceed the maximum.

use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::Root;
use sjournal::primitives;

/// Count a firing of a hook, up to a maximum
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[command(flatten)]
    pub target: crate::cli::target::Target,
    /// The hook's name: what is counted
    pub name: String,
    /// Fire at most this many times per session
    #[arg(long)]
    pub max: Option<u64>,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let f = primitives::fire(
        root,
        &args.target.id()?,
        &args.name,
        args.max,
        &crate::cli::shared::writer_options(root),
    )?;
    let mut out = output::stdout();
    output::json_line(&mut out, &serde_json::to_string(&f).expect("serializable"))?;
    Ok(if f.fired {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
