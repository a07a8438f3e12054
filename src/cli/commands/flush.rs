//! `sjournal flush (--session ID | --all) [--wait-ms MS] [--json]`: merges pending spooled
//! events (from the root's spool and the fallback spool) into their journals now, instead of
//! at the next write or read. Exit 0 if nothing is left pending, 1 if something is (the
//! journal's lock was held past `--wait-ms`, the root is still read-only or full, the journal
//! is damaged, or a spool file was damaged and set aside), 2 on error.
//!
//! `--json` prints one object per session: `{"session", "merged", "merged_records",
//! "merged_fallback", "settled", "damaged", "pending", "why", "warnings"}`.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::{self, spool, Root};

/// Merge spooled events into their journals now
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[arg(long, required_unless_present = "all", conflicts_with = "all")]
    pub session: Option<String>,
    /// Every session with spooled events
    #[arg(long)]
    pub all: bool,
    /// Wait this long for a session's lock
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub wait_ms: u64,
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let base = crate::cli::shared::writer_options(root);
    let ids = match &args.session {
        Some(s) => vec![s.clone()],
        None => spool::sessions_with_pending(root, &base)?,
    };
    let mut out = output::stdout();
    let mut left = false;
    for id in &ids {
        let mut opts = base.clone();
        opts.deadline = Some(Instant::now() + Duration::from_millis(args.wait_ms));
        let f = journal::flush(root, id, &opts)?;
        let m = &f.merged;
        left |= !f.waiting.is_empty() || !m.damaged.is_empty();
        let line = if args.json {
            let summary =
                sjournal::json::FlushSummary::new(id, m, f.waiting.len(), f.why.as_deref());
            sjournal::json::line(&summary)
        } else {
            let mut l = format!(
                "{id}: merged {} spooled file(s) ({} records",
                m.merged.len(),
                m.merged_records
            );
            if m.merged_fallback > 0 {
                l.push_str(&format!(", {} from the fallback spool", m.merged_fallback));
            }
            l.push(')');
            if !m.settled.is_empty() {
                l.push_str(&format!(
                    "; {} already in the journal, deleted",
                    m.settled.len()
                ));
            }
            if !m.damaged.is_empty() {
                l.push_str(&format!(
                    "; {} damaged, set aside as .damaged",
                    m.damaged.len()
                ));
            }
            if !f.waiting.is_empty() {
                l.push_str(&format!(
                    "; {} still pending: {}",
                    f.waiting.len(),
                    f.why.as_deref().unwrap_or("unknown")
                ));
            }
            for w in &m.warnings {
                eprintln!("sjournal: warning: {w}");
            }
            l
        };
        output::line(&mut out, &line)?;
    }
    if ids.is_empty() && !args.json {
        output::line(&mut out, "nothing to flush: no spooled events are pending")?;
    }
    out.flush().map_err(output::write_err)?;
    Ok(if left { Outcome::Findings } else { Outcome::Ok })
}
