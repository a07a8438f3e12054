//! `sjournal export --session ID [--format jsonl]`: every record as one JSON object per line,
//! with the host's original payload byte for byte (see [`sjournal::audit::jsonl`] for the line
//! format), ready for jq or for `sjournal import`. Exit 1 if the journal has a problem
//! (what comes before it is exported, the problem is reported on stderr).

use std::io::Write;

use crate::cli::{output, Outcome};
use sjournal::audit::jsonl::export_line;
use sjournal::error::Result;
use sjournal::journal::{JournalReader, Root};

/// Print a session's records as JSON Lines, payloads byte for byte
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// Output format (JSON Lines is the only one, and already JSON)
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Jsonl,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let pending = crate::cli::pending::settle(root, &args.session)?;
    let paths = root.existing_session(&args.session)?;
    let reader = JournalReader::open(&paths.journal, None)?;
    let mut out = output::stdout();
    for r in reader.records()? {
        match r {
            Ok(rec) => {
                let line = export_line(&rec, output::rfc3339(rec.ts_unix_ns))?;
                output::json_line(&mut out, &line)?;
            }
            Err(stop) => {
                out.flush().map_err(output::write_err)?;
                output::warn(&format!(
                    "sjournal: {}: export stopped at offset {}: {} (run `sjournal inspect` on it)",
                    paths.journal.display(),
                    stop.offset,
                    stop.problem
                ));
                return Ok(Outcome::Findings);
            }
        }
    }
    out.flush().map_err(output::write_err)?;
    if !pending.waiting.is_empty() {
        // Export lines are journal records (seq, hash); pending events have neither yet.
        eprintln!(
            "sjournal: the export leaves out the {} pending spool file(s) above; it is complete \
             once they are merged (`sjournal flush --session {}`)",
            pending.waiting.len(),
            args.session
        );
        return Ok(Outcome::Findings);
    }
    Ok(Outcome::Ok)
}
