//! `sjournal redact`: what redaction at ingest does, without writing anything.
//!
//! - `--check FILE|-`: what would be redacted from a sample (a JSON document, JSON Lines, or
//!   any text) under this root's `[redact]` configuration; nothing is journaled. Each finding
//!   is printed as `<line> <path> <rule> <marker>`; `--print` writes the redacted sample to
//!   stdout instead. Tags are the root's (they match the journal's markers) when the root has
//!   its key, else made under a one-off key (said on stderr).
//! - `--session ID`: what was redacted from the session's events: one line per
//!   `sjournal.redacted` record (the event's seq and kind, then each finding).
//!
//! `--json` prints one object per finding (`--check`: `{"line", "path", "rule", "tag"}`) or
//! per record (`--session`: `{"seq", "event_seq", "event_kind", "key_id", "found", "more"}`).
//! Exit 0: nothing to redact (nothing was redacted); 1: something was.

use std::io::{Read, Write};
use std::path::PathBuf;

use crate::cli::{output, Outcome};
use sjournal::error::{Error, Result};
use sjournal::format::payload::{decode_system, is_system_kind};
use sjournal::journal::{JournalReader, Root};
use sjournal::redact::{marker, Finding, RedactedRecord, Redactor, KIND_REDACTED};

/// Show what redaction at ingest replaces: in a sample, or in a session
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["check", "session"])))]
pub struct Args {
    /// A sample to check (JSON, JSON Lines or text), or - for stdin; nothing is journaled
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
    /// List what was redacted from this session's events
    #[arg(long)]
    pub session: Option<String>,
    /// With --check: print the redacted sample instead of the findings
    #[arg(long, requires = "check")]
    pub print: bool,
    /// One JSON object per line
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    match (&args.check, &args.session) {
        (Some(file), _) => check(root, file, &args),
        (None, Some(session)) => list(root, session, args.json),
        (None, None) => unreachable!("clap requires one of them"),
    }
}

fn check(root: &Root, file: &std::path::Path, args: &Args) -> Result<Outcome> {
    let input = if file.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut b)
            .map_err(|e| Error::io("read", "<stdin>", e))?;
        b
    } else {
        sjournal::storage::read_regular(file, sjournal::storage::Owner::Anyone, u64::MAX)?
    };
    let section = sjournal::config::Config::load(root)
        .map_err(|e| Error::InvalidInput {
            reason: e.to_string(),
        })?
        .redact;
    let (red, keyed) = Redactor::for_check(&section, root);
    if !keyed {
        output::warn(
            "sjournal: this root has no key yet: the tags shown are made under a one-off key and \
             will not match the journal's",
        );
    }
    if !section.enabled && !args.json {
        output::warn(
            "sjournal: [redact] enabled = false in this root's config.toml: the hook keeps these \
             secrets; shown is what it would redact if it were on",
        );
    }
    let mut found: Vec<(usize, Finding)> = Vec::new();
    let mut redacted: Vec<u8> = Vec::with_capacity(input.len());
    for (line, part) in parts(&input) {
        let (out, report) = red.bytes(part);
        redacted.extend_from_slice(out.as_deref().unwrap_or(part));
        found.extend(report.found.into_iter().map(|f| (line, f)));
    }
    let mut out = output::stdout();
    if args.print {
        out.write_all(&redacted).map_err(output::write_err)?;
    } else {
        for (line, f) in &found {
            let text = match args.json {
                true => {
                    serde_json::json!({"line": line, "path": f.path, "rule": f.rule, "tag": f.tag})
                        .to_string()
                }
                false => format!(
                    "line {line}  {}  {}  {}",
                    if f.path.is_empty() { "-" } else { &f.path },
                    f.rule,
                    marker(&f.rule, &f.tag)
                ),
            };
            output::emit(&mut out, &text, args.json)?;
        }
        if !args.json {
            output::line(
                &mut out,
                &format!(
                    "{} secret{} would be redacted",
                    found.len(),
                    if found.len() == 1 { "" } else { "s" }
                ),
            )?;
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(if found.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

/// The sample's parts, each with its first line's number: the whole input when it is one
/// JSON document (or not JSON Lines), else each line of JSON Lines with its line break.
fn parts(input: &[u8]) -> Vec<(usize, &[u8])> {
    let is_json = |b: &[u8]| serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok();
    let lines: Vec<&[u8]> = input.split_inclusive(|&b| b == b'\n').collect();
    let jsonl = lines.len() > 1
        && !is_json(input)
        && lines
            .iter()
            .all(|l| l.trim_ascii().is_empty() || is_json(l.trim_ascii()));
    if !jsonl {
        return vec![(1, input)];
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect()
}

fn list(root: &Root, session: &str, json: bool) -> Result<Outcome> {
    let paths = root.existing_session(session)?;
    let reader = JournalReader::open(&paths.journal, None)?;
    let mut out = output::stdout();
    let (mut event_seq, mut records, mut secrets) = (None, 0u64, 0u64);
    // Up to the first damage, as the fold reads (`sjournal verify` reports the damage).
    for r in reader.records()? {
        let Ok(r) = r else { break };
        if !is_system_kind(r.kind) {
            event_seq = Some(r.seq);
            continue;
        }
        if r.kind != KIND_REDACTED {
            continue;
        }
        let rec: RedactedRecord = decode_system(r.seq, r.payload)?;
        records += 1;
        secrets += rec.found.len() as u64 + rec.more;
        if json {
            let v = serde_json::json!({
                "seq": r.seq,
                "event_seq": event_seq,
                "event_kind": rec.event_kind,
                "key_id": rec.key_id,
                "found": rec.found,
                "more": rec.more,
            });
            output::json_line(&mut out, &v.to_string())?;
            continue;
        }
        output::line(
            &mut out,
            &format!(
                "seq {} ({}, record seq {}): {} secret{}{}",
                event_seq.map_or("?".into(), |s| s.to_string()),
                rec.event_kind,
                r.seq,
                rec.found.len() as u64 + rec.more,
                if rec.found.len() as u64 + rec.more == 1 {
                    ""
                } else {
                    "s"
                },
                if rec.key_id.is_none() {
                    " (one-off key)"
                } else {
                    ""
                }
            ),
        )?;
        for f in &rec.found {
            output::line(
                &mut out,
                &format!(
                    "  {}  {}",
                    if f.path.is_empty() { "-" } else { &f.path },
                    marker(&f.rule, &f.tag)
                ),
            )?;
        }
    }
    if !json {
        output::line(
            &mut out,
            &format!("{secrets} secret(s) redacted in {records} event(s)"),
        )?;
    }
    out.flush().map_err(output::write_err)?;
    Ok(if records == 0 {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
