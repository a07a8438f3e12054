//! `sjournal import --session ID FILE|-`: appends the events of a JSON Lines file, for users
//! moving from a jq-based log or re-importing an `sjournal export`.
//!
//! Each non-blank line is one of:
//! - an `sjournal export` line (it has `seq`, `kind`, `hash` and `payload`): the record is
//!   appended with its kind and its payload text byte for byte (`raw` when present). System
//!   records (`sjournal.*`) describe the journal they came from and are skipped;
//! - any other JSON value: one event, the line's text byte for byte (without its line break);
//!   its kind is `--kind`, else its `hook_event_name`, else "event".
//!
//! Every line is checked before anything is written: a bad line is an error naming its line
//! number, and nothing is appended. The events are then appended in as few batches as the
//! per-write bound allows (`BATCH_MAX_BYTES`, 64 MiB), each batch one write and one sync, so a
//! typical import costs one fsync. The bound is what lets recovery tell a torn batch from
//! mid-log corruption, so a bigger import is split rather than written in one go.

use std::io::Read;
use std::path::PathBuf;

use crate::audit::jsonl::{is_export_line, line_error, read_export_line};
use crate::cli::commands::append::event_kind;
use crate::cli::{output, Outcome};
use crate::error::{Error, Result};
use crate::format::payload::{encode_event, is_system_kind};
use crate::format::record::{frame_len, valid_kind};
use crate::journal::writer::now_unix_ns;
use crate::journal::{session, Batch, Landed, Root};
use crate::limits::{BATCH_MAX_BYTES, FRAME_MAX_BYTES};

/// Append the events of a JSON Lines file (or stdin) with one sync
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[arg(long)]
    pub session: String,
    /// JSONL file, or - for stdin
    pub file: PathBuf,
    /// How to read lines [default: auto, by the shape of each line]
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Kind for plain events [default: hook_event_name, else "event"]
    #[arg(long, value_name = "NAME")]
    pub kind: Option<String>,
    /// Print the summary as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Export lines where they look like one, plain events otherwise
    Auto,
    /// Only `sjournal export` lines
    Export,
    /// Every line is one event, taken as it is
    Events,
}

/// What was read, ready to append.
struct Plan {
    items: Vec<(String, Vec<u8>)>,
    skipped_system: u64,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let (name, input) = read_input(&args.file)?;
    let plan = plan(&name, &input, args.format, args.kind.as_deref())?;
    let mut syncs = 0;
    let mut range = None;
    let mut landed = None;
    if !plan.items.is_empty() {
        syncs = chunks(&plan.items).len();
        let batch = Batch {
            ts_unix_ns: now_unix_ns(),
            records: plan.items.clone(),
        };
        let l = session::write(
            root,
            &args.session,
            &batch,
            &crate::cli::writer_options(root),
        )?;
        if let (Some(first), Some(last)) = (l.appended().first(), l.appended().last()) {
            range = Some((first.seq, last.seq, last.hash));
        }
        landed = Some(l);
    }
    let mut out = output::stdout();
    let line = match (args.json, range) {
        (true, _) => serde_json::json!({
            "session": args.session,
            "appended": plan.items.len(),
            "first_seq": range.map(|r| r.0),
            "last_seq": range.map(|r| r.1),
            "head": range.map(|r| r.2.to_hex()),
            "skipped_system": plan.skipped_system,
            "syncs": syncs,
        })
        .to_string(),
        (false, Some((first, last, head))) => format!(
            "imported {} event(s) into session {:?} as seq {first}..={last} (head {head}) with {syncs} sync(s); {} system record(s) skipped",
            plan.items.len(),
            args.session,
            plan.skipped_system
        ),
        (false, None) => format!(
            "nothing to import from {name}; {} system record(s) skipped",
            plan.skipped_system
        ),
    };
    output::line(&mut out, &line)?;
    match landed {
        None | Some(Landed::Journal { .. }) => Ok(Outcome::Ok),
        // Not (all) in the journal: say where the rest is, exit 1.
        Some(other) => {
            crate::cli::print_landed(&mut out, root, &args.session, &other, |_| String::new())
        }
    }
}

fn read_input(file: &std::path::Path) -> Result<(String, Vec<u8>)> {
    if file.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| Error::io("read", "<stdin>", e))?;
        return Ok(("<stdin>".into(), buf));
    }
    let buf = std::fs::read(file).map_err(|e| Error::io("read", file, e))?;
    Ok((file.display().to_string(), buf))
}

/// Checks every line and encodes its payload; fails on the first bad line.
fn plan(name: &str, input: &[u8], format: Format, kind: Option<&str>) -> Result<Plan> {
    let mut plan = Plan {
        items: Vec::new(),
        skipped_system: 0,
    };
    for (i, raw_line) in input.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let raw_line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
        if raw_line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = std::str::from_utf8(raw_line)
            .map_err(|e| line_error(name, n, format!("not UTF-8 ({e})")))?;
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            line_error(
                name,
                n,
                format!("not valid JSON: {e} (column {})", e.column()),
            )
        })?;
        let export = match format {
            Format::Auto => is_export_line(&value),
            Format::Export => true,
            Format::Events => false,
        };
        let (kind, text) = if export {
            let l = read_export_line(line)
                .map_err(|e| line_error(name, n, format!("not an sjournal export line: {e}")))?;
            if is_system_kind(&l.kind) {
                plan.skipped_system += 1;
                continue;
            }
            if !valid_kind(&l.kind) {
                return Err(line_error(name, n, format!("invalid kind {:?}", l.kind)));
            }
            if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&l.text) {
                return Err(line_error(name, n, format!("raw payload is not JSON: {e}")));
            }
            (l.kind.into_owned(), l.text.into_owned())
        } else {
            let k = event_kind(kind, &value).map_err(|e| line_error(name, n, e.to_string()))?;
            (k, line.to_owned())
        };
        let payload = encode_event(&text);
        let len = frame_len(&kind, payload.len());
        if len > FRAME_MAX_BYTES as usize {
            return Err(line_error(
                name,
                n,
                format!("the record would be {len} bytes; the limit is {FRAME_MAX_BYTES}"),
            ));
        }
        plan.items.push((kind, payload));
    }
    Ok(plan)
}

/// Splits the items into batches of at most `BATCH_MAX_BYTES` of frames each.
fn chunks(items: &[(String, Vec<u8>)]) -> Vec<&[(String, Vec<u8>)]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, (k, p)) in items.iter().enumerate() {
        let len = frame_len(k, p.len()) as u64;
        if bytes + len > BATCH_MAX_BYTES && i > start {
            out.push(&items[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += len;
    }
    if start < items.len() {
        out.push(&items[start..]);
    }
    out
}
