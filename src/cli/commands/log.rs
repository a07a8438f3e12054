//! `sjournal log --session ID [--json]`: the records in order.
//!
//! `--json` prints one [`report::LogLine`](sjournal::report::LogLine) per line (JSON Lines), then
//! one [`report::PendingRecordLine`](sjournal::report::PendingRecordLine) per record of a spool file
//! not yet merged.

use std::io::Write;

use crate::cli::shared::render;
use crate::cli::{output, Outcome};
use sjournal::error::{Error, Result};
use sjournal::journal::{JournalReader, Root};

/// Print a session's records in order
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// One JSON object per line
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let pending = crate::cli::pending::settle(root, &args.session)?;
    // A session with nothing but pending spool files is shown too.
    let paths = match root.existing_session(&args.session) {
        Err(Error::NoSuchSession { .. }) if !pending.waiting.is_empty() => {
            root.session(&args.session)?
        }
        r => r?,
    };
    let exists = std::fs::symlink_metadata(&paths.journal).is_ok();
    let mut out = output::stdout();
    let reader = match exists {
        true => Some(JournalReader::open(&paths.journal, None)?),
        false => None,
    };
    let records = match &reader {
        Some(r) => Some(r.records()?),
        None => None,
    };
    for r in records.into_iter().flatten() {
        let rec = match r {
            Ok(rec) => rec,
            Err(stop) => {
                out.flush().map_err(output::write_err)?;
                output::warn(&format!(
                    "sjournal: {}: stopped at offset {}: {} (run `sjournal verify --session {}`)",
                    paths.journal.display(),
                    stop.offset,
                    stop.problem,
                    args.session
                ));
                return Ok(Outcome::Findings);
            }
        };
        output::emit(&mut out, &render(&rec, args.json)?, args.json)?;
    }
    for line in crate::cli::pending::lines(&pending.waiting, args.json)? {
        output::emit(&mut out, &line, args.json)?;
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}
