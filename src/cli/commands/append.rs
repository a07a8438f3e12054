//! `sjournal append --session ID [--kind NAME]`: one JSON value on stdin becomes one record.
//! Prints `{"seq":N,"hash":"<hex>"}` once the record is durable in the journal (exit 0). If the
//! journal cannot take it, it goes where the session's policy puts it (`journal::session`),
//! stdout says where, and the exit code is 1: the rescue journal when the journal is damaged
//! (`"rescued":true`), else the spool (`"spooled":true`, with `"fallback":true` when it is
//! outside the root and less durable), merged later. Exit 2 only if it was kept nowhere.

use std::io::Read;

use crate::cli::{output, Outcome};
use crate::error::{Error, Result};
use crate::format::payload::{encode_event, is_system_kind};
use crate::format::record::valid_kind;
use crate::journal::{session, Batch, Root};
use crate::limits::INPUT_MAX_BYTES;

/// Append one JSON value from stdin to a session's journal
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// Session id (any string; unsafe characters are mapped, the id is kept in the header)
    #[arg(long)]
    pub session: String,
    /// Record kind [default: the payload's hook_event_name, else "event"]
    #[arg(long, value_name = "NAME")]
    pub kind: Option<String>,
}

/// Reads all of stdin, up to the input limit.
pub fn read_stdin() -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(INPUT_MAX_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", "<stdin>", e))?;
    if buf.len() > INPUT_MAX_BYTES {
        return Err(Error::TooLarge {
            len: buf.len() as u64,
            max: INPUT_MAX_BYTES as u64,
        });
    }
    Ok(buf)
}

/// Checks that `bytes` hold exactly one JSON value; returns it as text and as a value.
pub fn parse_json(bytes: &[u8]) -> Result<(&str, serde_json::Value)> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::InvalidJson {
            message: "stdin is empty; expected one JSON value".into(),
            line: 1,
            column: 0,
        });
    }
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        // A lone surrogate escape or an out-of-range number is valid JSON text that
        // serde_json refuses: read it leniently (the text is kept as it came).
        Err(e) => crate::event::lenient_json::value(bytes).map_err(|_| Error::InvalidJson {
            message: e.to_string(),
            line: e.line(),
            column: e.column(),
        })?,
    };
    // serde_json accepted it, so it is UTF-8 (JSON text outside strings is ASCII).
    let text = std::str::from_utf8(bytes).expect("valid JSON is UTF-8");
    Ok((text, value))
}

/// The kind for an event: the flag, else the payload's event name when it is a valid kind
/// (`hook_event_name`, or Cline's `hookName`, as the hook reads them), else "event".
pub fn event_kind(flag: Option<&str>, value: &serde_json::Value) -> Result<String> {
    if let Some(k) = flag {
        if !valid_kind(k) || is_system_kind(k) {
            return Err(Error::InvalidKind { kind: k.to_owned() });
        }
        return Ok(k.to_owned());
    }
    Ok(value
        .get("hook_event_name")
        .or_else(|| value.get("hookName"))
        .and_then(|v| v.as_str())
        .filter(|k| valid_kind(k) && !is_system_kind(k))
        .unwrap_or("event")
        .to_owned())
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let input = read_stdin()?;
    let (text, value) = parse_json(&input)?;
    let kind = event_kind(args.kind.as_deref(), &value)?;
    let batch = Batch::one(&kind, encode_event(&kind, text));
    let landed = session::write(
        root,
        &args.session,
        &batch,
        &crate::cli::writer_options(root),
    )?;
    let mut out = output::stdout();
    crate::cli::print_landed(&mut out, root, &args.session, &landed, |a| {
        format!(r#"{{"seq":{},"hash":"{}"}}"#, a.seq, a.hash)
    })
}
