//! `sessions [--project DIR] [--json]`: every session under the root, oldest first, with its
//! host, project, first and last record time, record count, size on disk and whether it
//! verifies. `--json` prints one [`SessionSummary`](sjournal::audit::sessions::SessionSummary)
//! per line. Spool files and fallback directories sjournal refuses to merge from (untrusted)
//! are listed after the table, with what to do (on stderr with `--json`). Exit 1 if any
//! listed session fails to verify or anything is refused.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{output, Outcome};
use sjournal::audit::sessions::{list, SessionSummary};
use sjournal::error::{Error, Result};
use sjournal::journal::Root;

/// List every session: host, project, start and end, records, size, verify status
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// Only sessions whose project directory is DIR or inside it
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// One JSON object per session, one per line
    #[arg(long)]
    pub json: bool,
    /// Also list the scope journals (project and global memory; see `sjournal memory`)
    #[arg(long)]
    pub scopes: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let filter = match &args.project {
        None => None,
        Some(p) => Some(std::path::absolute(p).map_err(|e| Error::io("resolve", p, e))?),
    };
    // Spooled events first: merged where the journal can take them now (a session that so far
    // exists only in a spool gets its journal); the rest are counted below, as pending.
    let mut waiting = 0;
    let opts = crate::cli::shared::writer_options(root);
    for id in sjournal::journal::spool::sessions_with_pending(root, &opts)? {
        waiting += crate::cli::pending::settle(root, &id)?.waiting.len();
    }
    let all = list(root)?;
    let shown: Vec<&SessionSummary> = all
        .iter()
        .filter(|s| {
            args.scopes
                || !s
                    .session_id
                    .as_deref()
                    .is_some_and(sjournal::memory::is_scope_journal)
        })
        .filter(|s| match (&filter, &s.identity.project) {
            (None, _) => true,
            (Some(dir), Some(project)) => Path::new(project).starts_with(dir),
            (Some(_), None) => false,
        })
        .collect();
    let mut out = output::stdout();
    if args.json {
        for s in &shown {
            output::json_line(&mut out, &serde_json::to_string(s).expect("serializable"))?;
        }
    } else {
        output::line(
            &mut out,
            &format!(
                "{:<38} {:<7} {:<20} {:<20} {:>7} {:>10}  {:<6} PROJECT",
                "SESSION", "HOST", "START", "END", "RECORDS", "BYTES", "VERIFY"
            ),
        )?;
        for s in &shown {
            output::line(&mut out, &row(s))?;
        }
        output::line(&mut out, &format!("{} session(s)", shown.len()))?;
        if waiting > 0 {
            output::line(
                &mut out,
                &format!(
                    "{waiting} spooled event file(s) are pending, not yet in their journals (see \
                     the warnings above; `sjournal flush --all` merges them)"
                ),
            )?;
        }
    }
    // Spool files and fallback directories refused as untrusted: on stdout with the table,
    // on stderr with --json (which prints sessions only).
    let refused = if args.json {
        let r = sjournal::journal::spool::refused(root, &opts)?;
        for x in &r {
            output::warn(&format!("sjournal: warning: {}", x.summary()));
        }
        !r.is_empty()
    } else {
        super::flush::report_refused(root, &opts, false, &mut out)?
    };
    out.flush().map_err(output::write_err)?;
    Ok(if shown.iter().all(|s| s.ok) && !refused {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

fn row(s: &SessionSummary) -> String {
    let ts = |t: Option<i64>| {
        t.map(|t| output::rfc3339(t)[..19].to_owned())
            .unwrap_or_else(|| "-".into())
    };
    // Every field comes from a journal: escaped whole (a line break in an id or a cwd must not
    // start a row of its own).
    let esc = |t: &str| sjournal::escape::text(t).into_owned();
    let id = match &s.session_id {
        Some(id) => esc(id),
        None => format!("<{}>", sjournal::escape::path(&s.journal)),
    };
    let project = esc(s.identity.project.as_deref().unwrap_or("-"));
    format!(
        "{:<38} {:<7} {:<20} {:<20} {:>7} {:>10}  {:<6} {}",
        id,
        esc(s.identity.host.as_deref().unwrap_or("-")),
        ts(s.first_ts_unix_ns),
        ts(s.last_ts_unix_ns),
        s.records,
        s.bytes,
        if s.ok { "ok" } else { "BAD" },
        match &s.problem {
            None => project,
            Some(p) => format!("{project}  [{}]", esc(p)),
        }
    )
}
