//! `sjournal show --session ID --seq N [--context K] [--rescue] [--json]`: the record seq N of
//! the session's journal (or its rescue journal) and K records either side, as `log` prints
//! records, the record asked for marked with `>` (with `--json`: `"shown": true`). Where the
//! journal stops at damage before N, the records after it that still read are printed
//! marked `DAMAGED` (with `--json`: `"damaged": true`), as `search` finds them.

use std::io::Write;

use crate::cli::shared::render;
use crate::cli::{output, Outcome};
use sjournal::error::{Error, Result};
use sjournal::format::record;
use sjournal::journal::{JournalReader, Root};

pub fn run(root: &Root, args: &super::show::Args, seq: u64) -> Result<Outcome> {
    let paths = root.existing_session(&args.session)?;
    let path = if args.rescue {
        paths.rescue.clone()
    } else {
        paths.journal.clone()
    };
    let reader = JournalReader::open(&path, None)?;
    let (lo, hi) = (
        seq.saturating_sub(args.context),
        seq.saturating_add(args.context),
    );
    let mut out = output::stdout();
    let mut found = false;
    let mut stop_at = None;
    for r in reader.records()? {
        match r {
            Ok(rec) => {
                if rec.seq > hi {
                    break;
                }
                if rec.seq >= lo {
                    found |= rec.seq == seq;
                    emit(
                        &mut out,
                        &render(&rec, args.json)?,
                        rec.seq == seq,
                        false,
                        args.json,
                    )?;
                }
            }
            Err(stop) => {
                stop_at = Some(stop);
                break;
            }
        }
    }
    if let Some(stop) = &stop_at {
        // Past damage: the CRC-valid frames that follow, by their own seq.
        let bytes = reader.bytes();
        let mut at = stop.offset as usize;
        while at < bytes.len() {
            let next = match record::parse(&bytes[at..]) {
                Ok(f) => {
                    let len = f.len();
                    if f.seq >= lo && f.seq <= hi {
                        let rec = sjournal::journal::Record {
                            offset: at as u64,
                            frame: f,
                            hash: f.hash(),
                        };
                        found |= f.seq == seq;
                        emit(
                            &mut out,
                            &render(&rec, args.json)?,
                            f.seq == seq,
                            true,
                            args.json,
                        )?;
                    }
                    Some(at + len)
                }
                Err(_) => {
                    sjournal::journal::scan::find_any_frame_after(&bytes[at..]).map(|r| at + r)
                }
            };
            match next {
                Some(n) => at = n,
                None => break,
            }
        }
    }
    out.flush().map_err(output::write_err)?;
    if let Some(stop) = &stop_at {
        output::warn(&format!(
            "sjournal: {}: the journal stops at offset {}: {}; records after it are shown marked \
             DAMAGED (run `sjournal verify --session {}`)",
            path.display(),
            stop.offset,
            stop.problem,
            args.session
        ));
    }
    if !found {
        return Err(Error::InvalidInput {
            reason: format!(
                "session {:?} has no record seq {seq} in its {}journal",
                args.session,
                if args.rescue { "rescue " } else { "" }
            ),
        });
    }
    Ok(if stop_at.is_some() {
        Outcome::Findings
    } else {
        Outcome::Ok
    })
}

fn emit(out: &mut impl Write, line: &str, shown: bool, damaged: bool, json: bool) -> Result<()> {
    if json {
        let mut v: serde_json::Value = serde_json::from_str(line).expect("render gives JSON");
        if shown {
            v["shown"] = true.into();
        }
        if damaged {
            v["damaged"] = true.into();
        }
        return output::json_line(out, &v.to_string());
    }
    let mark = if shown { ">" } else { " " };
    let dmg = if damaged { " DAMAGED" } else { "" };
    output::line(out, &format!("{mark}{line}{dmg}"))
}
