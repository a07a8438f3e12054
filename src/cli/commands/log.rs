//! `sjournal log --session ID [--json]`: the records in order.
//!
//! `--json` prints one object per line (JSON Lines):
//! `{"seq":1,"ts":"2026-11-29T22:37:06.123456789Z","ts_unix_ns":..,"kind":"PostToolUse",
//!   "hash":"<hex>","offset":43,"payload":<the JSON that was appended>}`.
//! For system records (`sjournal.*`) `payload` holds the record's fields.

use std::io::Write;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::cli::{output, Outcome};
use crate::error::{Error, Result};
use crate::format::payload;
use crate::journal::{JournalReader, Record, Root};

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

#[derive(Serialize)]
struct LogLine<'a> {
    seq: u64,
    ts: String,
    ts_unix_ns: i64,
    kind: &'a str,
    hash: String,
    offset: u64,
    payload: Box<RawValue>,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let pending = crate::cli::pending::settle(root, &args.session)?;
    let paths = root.session(&args.session)?;
    if !paths.journal.exists() && pending.waiting.is_empty() {
        return Err(Error::NoSuchSession {
            session: args.session,
            root: root.dir().to_owned(),
        });
    }
    let mut out = output::stdout();
    let reader = match paths.journal.exists() {
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
                eprintln!(
                    "sjournal: {}: stopped at offset {}: {} (run `sjournal verify --session {}`)",
                    paths.journal.display(),
                    stop.offset,
                    stop.problem,
                    args.session
                );
                return Ok(Outcome::Findings);
            }
        };
        output::line(&mut out, &render(&rec, args.json)?)?;
    }
    for line in crate::cli::pending::lines(&pending.waiting, args.json)? {
        output::line(&mut out, &line)?;
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
        return Ok(serde_json::to_string(&line).expect("serializable"));
    }
    let mut p = payload.get().to_owned();
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
