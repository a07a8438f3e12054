//! `sjournal repair --session ID [--dry-run] [--json]`: rebuilds a journal that refuses
//! appends (damage recovery may not cut, a rollback) from every record that can be salvaged,
//! merges the session's rescue journal after them, and keeps both old files byte for byte
//! beside it (see [`sjournal::journal::repair`]). Exit 0 when the journal was repaired or needed
//! nothing, 2 if it could not be (nothing was changed then).
//!
//! `--json` prints the [`RepairReport`](sjournal::journal::repair::RepairReport).

use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::repair::{repair, RepairOptions, RepairReport};
use sjournal::journal::Root;

/// Rebuild a damaged journal from what can be salvaged; the damaged file is kept beside it
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// Build and check the repaired journal and report, but change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let opts = RepairOptions {
        dry_run: args.dry_run,
        ..RepairOptions::default()
    };
    let report = repair(root, &args.session, &opts)?;
    let mut out = output::stdout();
    if args.json {
        output::json_line(
            &mut out,
            &serde_json::to_string(&report).expect("serializable"),
        )?;
    } else {
        for line in describe(&report) {
            output::line(&mut out, &line)?;
        }
    }
    Ok(Outcome::Ok)
}

fn describe(r: &RepairReport) -> Vec<String> {
    let id = sjournal::escape::text(&r.session_id);
    if !r.repaired {
        return vec![format!(
            "session {id}: the journal verifies and has no rescue journal; nothing to repair"
        )];
    }
    let shown = |p: &std::path::Path| sjournal::escape::path(p);
    if r.finished_earlier {
        return vec![format!(
            "session {id}: an earlier repair had merged the rescue journal; it is now kept as {}",
            r.rescue_kept
                .as_deref()
                .map(shown)
                .unwrap_or_else(|| "-".into())
        )];
    }
    let Some(rec) = &r.record else {
        return Vec::new();
    };
    let verb = if r.dry_run {
        "would repair"
    } else {
        "repaired"
    };
    let mut lines = vec![format!(
        "{verb} session {id}: {} record(s) salvaged, {} byte range(s) lost ({} bytes), {} \
         sjournal.lost record(s) keep the seqs after them, {} record(s) renumbered, {} \
         record(s) merged from the rescue journal",
        rec.salvaged,
        rec.lost.len() as u64 + rec.lost_more,
        rec.lost_bytes,
        rec.lost_records,
        rec.renumbered.len(),
        rec.rescue.as_ref().map_or(0, |x| x.records),
    )];
    if !rec.problem.is_empty() {
        lines.push(format!(
            "  what was wrong: {}",
            sjournal::escape::text(&rec.problem)
        ));
    }
    for l in rec.lost.iter().take(10) {
        lines.push(format!(
            "  lost: bytes {}..{} of the damaged journal",
            l.offset,
            l.offset + l.length
        ));
    }
    if let Some(a) = &rec.acknowledged {
        lines.push(format!(
            "  its high-water mark was seq {} (hash {})",
            a.seq, a.hash
        ));
    }
    if r.dry_run {
        lines.push(format!(
            "  the new journal would hold {} record(s), head {}; nothing was changed (--dry-run)",
            r.records,
            r.head.as_deref().unwrap_or("-")
        ));
        return lines;
    }
    if let Some(k) = &r.kept {
        lines.push(format!(
            "  the damaged journal is kept, byte for byte, as {} (blake3 {})",
            shown(k),
            rec.damaged_blake3
        ));
    }
    if let Some(k) = &r.rescue_kept {
        lines.push(format!("  the rescue journal is kept as {}", shown(k)));
    }
    lines.push(format!(
        "  {} now holds {} record(s), head {}; `sjournal verify --session {id}` checks it",
        shown(&r.journal),
        r.records,
        r.head.as_deref().unwrap_or("-")
    ));
    lines
}
