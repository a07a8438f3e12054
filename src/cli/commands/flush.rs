//! `sjournal flush (--session ID | --all) [--wait-ms MS] [--json]`: merges pending spooled
//! events (from the root's spool and the fallback spool) into their journals now, instead of
//! at the next write or read. Exit 0 if nothing is left pending, 1 if something is (the
//! journal's lock was held past `--wait-ms`, the root is still read-only or full, the journal
//! is damaged, or a spool file was damaged and set aside) or if a spool file or directory is
//! refused as untrusted, 2 on error.
//!
//! After the sessions, it lists what is refused (`journal::spool::refused`): spool files that
//! are not the user's own or not authenticated, and fallback directories that fail their
//! checks, each with the command to deal with it.
//!
//! `sjournal flush --accept FILE [--dry-run]`: merges one refused spool file the user
//! reviewed and recognises as theirs (with `--dry-run`: prints its records and changes
//! nothing).
//!
//! `--json` prints one object per session: `{"session", "merged", "merged_records",
//! "merged_fallback", "settled", "damaged", "untrusted", "pending", "why", "warnings"}`, then
//! one `{"refused_spool": {...}}` per refused file or directory.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::{spool, Root};

/// Merge spooled events into their journals now
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it (or --all, or --accept FILE)
    #[arg(long, required_unless_present_any = ["all", "accept"], conflicts_with_all = ["all", "accept"])]
    pub session: Option<String>,
    /// Every session with spooled events
    #[arg(long, conflicts_with = "accept")]
    pub all: bool,
    /// Merge this spool file, which sjournal refused as untrusted, after you reviewed it
    /// (`--dry-run`) and recognise it as your own
    #[arg(long, value_name = "FILE")]
    pub accept: Option<std::path::PathBuf>,
    /// With --accept: print the file's records; change nothing
    #[arg(long, requires = "accept")]
    pub dry_run: bool,
    /// Wait this long for a session's lock
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub wait_ms: u64,
    /// Print JSON (one object per line) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let base = crate::cli::shared::writer_options(root);
    let mut out = output::stdout();
    let ids = match (&args.session, &args.accept) {
        (_, Some(file)) => {
            let Some(id) = accept(root, file, args.dry_run, args.json, &mut out)? else {
                return Ok(Outcome::Ok);
            };
            vec![id]
        }
        (Some(s), None) => vec![s.clone()],
        (None, None) => spool::sessions_with_pending(root, &base)?,
    };
    let mut left = false;
    for id in &ids {
        let mut opts = base.clone();
        opts.deadline = Some(Instant::now() + Duration::from_millis(args.wait_ms));
        let f = sjournal::session::flush(root, id, &opts)?;
        let m = &f.merged;
        left |= !f.waiting.is_empty() || !m.damaged.is_empty() || !m.untrusted.is_empty();
        let line = if args.json {
            let summary =
                sjournal::report::FlushSummary::new(id, m, f.waiting.len(), f.why.as_deref());
            sjournal::report::line(&summary)
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
            if !m.untrusted.is_empty() {
                l.push_str(&format!(
                    "; {} refused as untrusted, not merged (listed below)",
                    m.untrusted.len()
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
    left |= report_refused(root, &base, args.json, &mut out)?;
    out.flush().map_err(output::write_err)?;
    Ok(if left { Outcome::Findings } else { Outcome::Ok })
}

/// Prints what the root's readers refuse to merge (`journal::spool::refused`), each with
/// what to do; true if anything is. For `flush`, `verify --all` and `sessions`.
pub fn report_refused(
    root: &Root,
    opts: &sjournal::journal::WriterOptions,
    json: bool,
    out: &mut impl Write,
) -> Result<bool> {
    let refused = spool::refused(root, opts)?;
    for r in &refused {
        let line = if json {
            sjournal::report::line(&sjournal::report::RefusedSpoolLine { refused_spool: r })
        } else {
            r.summary()
        };
        output::emit(out, &line, json)?;
    }
    Ok(!refused.is_empty())
}

/// `--accept FILE`: the session whose spool now holds the file's records (None with
/// `--dry-run`, which prints them instead).
fn accept(
    root: &Root,
    file: &std::path::Path,
    dry_run: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<Option<String>> {
    if dry_run {
        let f = spool::review(file)?;
        let shown = sjournal::journal::PendingSpool {
            path: file.to_owned(),
            fallback: false,
            spooled_at_ns: Some(f.spooled_at_ns),
            reason: Some(f.reason.clone()),
            kinds: f.records.iter().map(|r| r.kind.clone()).collect(),
            damaged: None,
            file: Some(f.clone()),
        };
        if !json {
            output::line(
                out,
                &format!(
                    "{} holds {} record(s) of session {} (spooled: {}); nothing was changed:",
                    sjournal::escape::path(file),
                    f.records.len(),
                    sjournal::escape::text(&f.session_id),
                    sjournal::escape::text(&f.reason)
                ),
            )?;
        }
        for l in crate::cli::pending::lines(std::slice::from_ref(&shown), json)? {
            output::emit(out, &l, json)?;
        }
        return Ok(None);
    }
    let opts = crate::cli::shared::writer_options(root);
    let a = spool::accept(root, file, &opts)?;
    if let Some(w) = &a.warning {
        output::warn(&format!("sjournal: warning: {w}"));
    }
    if !json {
        output::line(
            out,
            &format!(
                "accepted {}: {} record(s) of session {} spooled again in the root{}",
                sjournal::escape::path(file),
                a.file.records.len(),
                sjournal::escape::text(&a.file.session_id),
                a.kept_as
                    .as_ref()
                    .map(|k| format!("; the file is kept as {}", sjournal::escape::path(k)))
                    .unwrap_or_default()
            ),
        )?;
    }
    Ok(Some(a.file.session_id))
}
