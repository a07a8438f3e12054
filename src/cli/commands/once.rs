//! `sjournal once --session ID KEY...`: marks keys seen and prints those seen for the first
//! time, one per line. Exit 0 if at least one key was new (the caller's "once" action should
//! run), 1 if all were seen before. Decided under the session's lock: of two concurrent
//! callers with the same key, exactly one gets it.
//!
//! `sjournal unseen --session ID KEY...`: prints the keys not seen yet, changing nothing;
//! exit 0 if any, 1 if none.

use crate::cli::shared::load;
use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::Root;
use sjournal::primitives;

/// Mark keys seen; print the ones seen for the first time
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[command(flatten)]
    pub target: crate::cli::target::Target,
    /// The keys: any text, each marked once
    #[arg(required = true)]
    pub keys: Vec<String>,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let new = primitives::once(
        root,
        &args.target.id()?,
        &args.keys,
        &crate::cli::shared::writer_options(root),
    )?;
    print(&new)
}

/// Print the keys a session has not seen yet (changes nothing)
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct UnseenArgs {
    #[command(flatten)]
    pub target: crate::cli::target::Target,
    /// The keys to look up
    #[arg(required = true)]
    pub keys: Vec<String>,
}

pub fn run_unseen(root: &Root, args: UnseenArgs) -> Result<Outcome> {
    let (state, _) = load(root, &args.target.id()?, None, true)?;
    let keys: Vec<String> = primitives::unseen(&state, &args.keys)
        .into_iter()
        .map(str::to_owned)
        .collect();
    print(&keys)
}

fn print(keys: &[String]) -> Result<Outcome> {
    let mut out = output::stdout();
    for k in keys {
        output::json_line(&mut out, k)?;
    }
    Ok(if keys.is_empty() {
        Outcome::Findings
    } else {
        Outcome::Ok
    })
}
