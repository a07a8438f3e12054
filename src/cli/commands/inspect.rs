//! `sjournal inspect FILE [--json]`: every record that can be decoded, damaged files
//! included, with offsets and what is wrong where. Never modifies anything: the file is
//! opened read-only and mapped under a shared lock, so it may be any journal, a rescue
//! journal, a quarantine file or a copy outside the root.
//!
//! `--json` prints one [`Inspection`](sjournal::audit::inspect::Inspection) object. Exit 0 if the
//! file is a clean journal, 1 if anything is wrong with it, 2 if it cannot be read.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{output, Outcome};
use sjournal::audit::inspect::{inspect, Inspection, Item};
use sjournal::error::Result;
use sjournal::journal::JournalReader;

/// Decode a journal record by record, damaged or not, and show what is wrong where (read-only)
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// A journal, rescue journal or quarantine file (any path; never modified)
    pub file: PathBuf,
    /// One JSON object with every record and damaged region
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<Outcome> {
    let reader = JournalReader::open(&args.file, None)?;
    let report = inspect(reader.bytes());
    let mut out = output::stdout();
    if args.json {
        output::json_line(
            &mut out,
            &serde_json::to_string(&report).expect("serializable"),
        )?;
    } else {
        render(&mut out, &args.file, &report)?;
    }
    out.flush().map_err(output::write_err)?;
    Ok(if report.summary.clean {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

fn render(out: &mut impl Write, file: &std::path::Path, r: &Inspection) -> Result<()> {
    output::line(out, &format!("{}: {} bytes", file.display(), r.bytes))?;
    let h = &r.header;
    let line = match &h.problem {
        None => format!(
            "@0       header  session {:?}, format v{}, created {}, {} bytes, genesis {}",
            h.session_id.as_deref().unwrap_or(""),
            h.format_version.unwrap_or(0),
            output::rfc3339(h.created_unix_ns.unwrap_or(0)),
            h.len.unwrap_or(0),
            h.genesis.as_deref().unwrap_or("")
        ),
        Some(p) => format!("@0       header  !! {}", p.what),
    };
    output::line(out, &line)?;
    for item in &r.items {
        match item {
            Item::Record(rec) => {
                output::line(
                    out,
                    &format!(
                        "@{:<7} seq {:<6} {}  {:<20} hash {}  {}{}",
                        rec.offset,
                        rec.seq,
                        output::rfc3339(rec.ts_unix_ns),
                        rec.kind,
                        &rec.hash[..16],
                        if rec.after_damage {
                            "[after damage] "
                        } else {
                            ""
                        },
                        sjournal::audit::one_line(&rec.summary, 80)
                    ),
                )?;
                for i in &rec.issues {
                    output::line(out, &format!("         !! {}: {}", i.code.as_str(), i.what))?;
                }
            }
            Item::Damage(d) => {
                let c = &d.claimed;
                let mut claims = Vec::new();
                if let Some(s) = c.seq {
                    claims.push(format!("seq {s}"));
                }
                if let Some(k) = &c.kind {
                    claims.push(format!("kind {k}"));
                }
                if let Some(l) = c.len {
                    claims.push(format!("len {l}"));
                }
                let next = match d.resync_at {
                    Some(n) => format!("; reading resumes at offset {n}"),
                    None => "; nothing valid after it".into(),
                };
                output::line(
                    out,
                    &format!(
                        "@{:<7} !! DAMAGE {} bytes: {} (the bytes claim: {}){}",
                        d.offset,
                        d.len,
                        d.issue.what,
                        if claims.is_empty() {
                            "nothing readable".into()
                        } else {
                            claims.join(", ")
                        },
                        next
                    ),
                )?;
            }
        }
    }
    let s = &r.summary;
    let verdict = match s.first_problem_at {
        None => "clean".to_owned(),
        Some(at) => format!("first problem at offset {at}"),
    };
    output::line(
        out,
        &format!(
            "{} records ({} with issues), {} damaged region(s) ({} bytes); {}",
            s.records, s.records_with_issues, s.damaged_regions, s.damaged_bytes, verdict
        ),
    )
}
