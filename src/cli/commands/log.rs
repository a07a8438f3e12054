//! `sjournal log --session ID [--json]`: the records in order.
//!
//! `--json` prints one [`json::LogLine`](crate::json::LogLine) per line (JSON Lines), then
//! one [`json::PendingRecordLine`](crate::json::PendingRecordLine) per record of a spool file
//! not yet merged.

use std::io::Write;

use crate::cli::{output, Outcome};
use crate::error::{Error, Result};
use crate::format::payload;
use crate::journal::{JournalReader, Record, Root};
use crate::json::LogLine;

/// Print a session's records in order
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[arg(long)]
    pub session: String,
    /// One JSON object per line
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let pending = crate::cli::pending::settle(root, &args.session)?;
    // A session with nothing but pending spool files is shown too.
    let paths = match crate::cli::existing_session(root, &args.session) {
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

/// One record as `log` prints it: a line of text, or with `json` the JSON object above.
/// `tail` prints records the same way.
pub fn render(rec: &Record<'_>, json: bool) -> Result<String> {
    let payload = payload::to_json(rec.seq, rec.kind, rec.payload)?;
    if json {
        let line = LogLine {
            seq: rec.seq,
            ts: output::rfc3339(rec.ts_unix_ns),
            ts_unix_ns: rec.ts_unix_ns,
            kind: rec.kind,
            hash: rec.hash.to_hex(),
            offset: rec.offset,
            payload,
        };
        return Ok(crate::json::line(&line));
    }
    // One line per record: a line break in the payload (pretty-printed JSON) is escaped too.
    let mut p = crate::escape::text(payload.get()).into_owned();
    if rec.kind == payload::KIND_UNPARSED {
        // An input longer than a record holds keeps only its first bytes: say so up front.
        if let Ok(u) = payload::decode_system::<payload::Unparsed>(rec.seq, rec.payload) {
            if u.bytes_left_out() > 0 {
                p = format!(
                    "[CUT: {} of {} input bytes kept, {} left out] {p}",
                    u.raw.len(),
                    u.input_len.unwrap_or(0),
                    u.bytes_left_out()
                );
            }
        }
    }
    if p.len() > 160 {
        let cut = (0..=157)
            .rev()
            .find(|&i| p.is_char_boundary(i))
            .unwrap_or(0);
        p.truncate(cut);
        p.push_str("...");
    }
    Ok(format!(
        "{:>6}  {}  {:<20} {}  {}",
        rec.seq,
        output::rfc3339(rec.ts_unix_ns),
        rec.kind,
        &rec.hash.to_hex()[..12],
        p
    ))
}
