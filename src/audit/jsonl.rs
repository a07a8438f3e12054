//! JSON Lines export: one object per record, carrying the host's payload byte for byte.
//!
//! ```text
//! {"seq":1,"ts":"2026-11-29T22:37:06.123456789Z","ts_unix_ns":..,"kind":"PostToolUse",
//!  "hash":"<hex>","payload":<the event's JSON text, as the host sent it>}
//! ```
//!
//! A JSONL line cannot hold a line break, and a JSON value carries no surrounding
//! whitespace. So when the host's text has either (pretty-printed input, a trailing newline),
//! `payload` holds it with line breaks turned into spaces and the ends trimmed (line breaks
//! can only be insignificant whitespace in JSON text, since strings must escape them), and
//! `raw` holds the exact text as a JSON string. `import` takes `raw` when present, so the
//! round trip is exact either way. System records (`sjournal.*`: context, primitives,
//! injections, recoveries, ...) carry their fields as `payload` for reading, and their exact
//! payload bytes (MessagePack) in `payload_base64`, from which `import` writes them back.
//! An event's digest is not exported: `import` derives it again from the kind and the JSON
//! (`fold::digest::encode_event`), as every writer of event records does. An erased event's
//! line has `"erased": true` and what is left of its payload (`null` for all of it); `import`
//! refuses it, and `sjournal.erased` records, naming the line (the erased content is gone),
//! unless `--skip-erased` leaves them out, and with them every system record after the first
//! one left out (system records refer to records by seq, and those seqs move). A line whose
//! `ts` and `ts_unix_ns` disagree is refused (a tool rounded the number).
//!
//! Import reads JSON Lines into an [`ImportPlan`] ([`plan`]): every line is checked before
//! anything is written, and the records are appended in [`chunks`] of one write and one
//! sync each.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::format::payload;
use crate::format::record::{frame_len, valid_kind};
use crate::host::Host;
use crate::journal::Record;
use crate::limits::{BATCH_MAX_BYTES, FRAME_MAX_BYTES};

/// One exported line. Field order is the output order.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ExportLine<'a> {
    pub seq: u64,
    #[serde(default)]
    pub ts: String,
    #[serde(default)]
    pub ts_unix_ns: i64,
    #[serde(borrow)]
    pub kind: std::borrow::Cow<'a, str>,
    pub hash: String,
    #[serde(borrow)]
    pub payload: &'a RawValue,
    /// The payload text exactly, when `payload` could not hold it byte for byte.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<std::borrow::Cow<'a, str>>,
    /// A system record's payload bytes (MessagePack), exactly, in base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_base64: Option<String>,
    /// The event was erased after it was written: `payload` is what is left (`null` for the
    /// whole payload). Such a line is not imported (see [`read_export_line`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub erased: bool,
}

fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The export line for one record (without the line break).
pub fn export_line(rec: &Record<'_>, ts: String) -> Result<String> {
    let line = |payload: &RawValue, raw: Option<&str>, payload_base64: Option<String>| {
        serde_json::to_string(&ExportLine {
            erased: rec.erased(),
            seq: rec.seq,
            ts: ts.clone(),
            ts_unix_ns: rec.ts_unix_ns,
            kind: rec.kind.into(),
            hash: rec.hash.to_hex(),
            payload,
            raw: raw.map(Into::into),
            payload_base64,
        })
        .expect("serializable")
    };
    if payload::is_system_kind(rec.kind) {
        use base64::Engine;
        let exact = base64::engine::general_purpose::STANDARD.encode(rec.payload);
        // A payload that does not decode is still exported exactly.
        let fields = payload::to_json(rec.seq, rec.kind, rec.payload).unwrap_or_else(|_| null());
        return Ok(line(&fields, None, Some(exact)));
    }
    if rec.erased() {
        return Ok(line(
            &payload::to_json(rec.seq, rec.kind, rec.payload)?,
            None,
            None,
        ));
    }
    let text = payload::decode_event(rec.seq, rec.payload)?;
    let trimmed = text.trim_matches(is_json_ws);
    let flat: std::borrow::Cow<str> = if trimmed.contains(['\n', '\r']) {
        trimmed.replace(['\n', '\r'], " ").into()
    } else {
        trimmed.into()
    };
    Ok(match serde_json::from_str::<&RawValue>(&flat) {
        Ok(v) => line(v, (flat != text).then_some(text), None),
        // Not JSON (only the library can append such an event): keep it as text.
        Err(_) => line(&null(), Some(text), None),
    })
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

/// An export line read back: the record kind, its time, and its exact payload.
pub(crate) struct Imported<'a> {
    pub kind: std::borrow::Cow<'a, str>,
    /// The record's time (None if the line has none).
    pub ts_unix_ns: Option<i64>,
    pub payload: ImportedPayload<'a>,
}

/// What an export line carries to append.
pub(crate) enum ImportedPayload<'a> {
    /// An event's JSON text, byte for byte.
    Event(std::borrow::Cow<'a, str>),
    /// A system record's payload bytes, exactly.
    System(Vec<u8>),
    /// A system record exported without its exact bytes (by an older sjournal): it cannot be
    /// written back as it was.
    SystemWithoutBytes,
    /// An event erased after it was written, or the `sjournal.erased` record binding one: the
    /// erased content is gone, and an erased record is bound to the digest of what it held,
    /// so no import can write it again as it was.
    Erased { seq: u64 },
}

/// True if a parsed line looks like an export line (as opposed to a plain event).
pub(crate) fn is_export_line(v: &serde_json::Value) -> bool {
    v.get("seq").is_some_and(|s| s.is_u64())
        && v.get("kind").is_some_and(|s| s.is_string())
        && v.get("hash").is_some_and(|s| s.is_string())
        && v.get("payload").is_some()
}

/// Reads an export line: its kind and the payload text, byte for byte as exported.
pub(crate) fn read_export_line(line: &str) -> Result<Imported<'_>, String> {
    let l: ExportLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let ts_unix_ns = Some(l.ts_unix_ns).filter(|&t| t != 0);
    if let (false, Some(ns)) = (l.ts.is_empty(), ts_unix_ns) {
        let said = humantime::parse_rfc3339(&l.ts)
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_nanos()).ok());
        if said != Some(ns) {
            return Err(format!(
                "its ts {:?} and ts_unix_ns {ns} do not name the same time: a tool rewrote the \
                 number (jq 1.6 rounds integers past 2^53); filter the export with a tool that \
                 keeps them, or `sjournal import --skip-erased` for what jq was used to drop",
                l.ts
            ));
        }
    }
    if l.erased || l.kind == payload::KIND_ERASED {
        return Ok(Imported {
            kind: l.kind,
            ts_unix_ns,
            payload: ImportedPayload::Erased { seq: l.seq },
        });
    }
    if payload::is_system_kind(&l.kind) {
        use base64::Engine;
        let payload = match &l.payload_base64 {
            Some(b) => ImportedPayload::System(
                base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .map_err(|e| format!("payload_base64 is not base64: {e}"))?,
            ),
            None => ImportedPayload::SystemWithoutBytes,
        };
        return Ok(Imported {
            kind: l.kind,
            ts_unix_ns,
            payload,
        });
    }
    let text = match l.raw {
        Some(raw) => raw,
        None if l.payload.get() == "null" => {
            return Err("payload is null and there is no raw text".into())
        }
        None => l.payload.get().into(),
    };
    Ok(Imported {
        kind: l.kind,
        ts_unix_ns,
        payload: ImportedPayload::Event(text),
    })
}

/// An import error naming the input and line.
pub(crate) fn line_error(input: &str, line: usize, reason: impl Into<String>) -> Error {
    Error::ImportLine {
        input: input.to_owned(),
        line,
        reason: reason.into(),
    }
}

/// How `import` reads its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImportFormat {
    /// Export lines where they look like one (`is_export_line`), plain events otherwise.
    #[default]
    Auto,
    /// Only `sjournal export` lines.
    Export,
    /// Every line is one event, taken as it is.
    Events,
}

/// One record to append, read from a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportItem {
    pub kind: String,
    pub payload: Vec<u8>,
    /// Its time, for an export line; None: the time of the import.
    pub ts: Option<i64>,
    /// A system record (`sjournal.*`), written back from its exact bytes.
    pub system: bool,
}

/// What an input holds, checked and encoded, ready to append.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportPlan {
    pub items: Vec<ImportItem>,
    /// System records exported without their exact bytes (by an older sjournal): left out.
    pub without_bytes: u64,
    /// Erased events and their `sjournal.erased` records: left out (`skip_erased`).
    pub erased_skipped: u64,
    /// System records after the first record left out by `skip_erased`: left out too. They
    /// refer to records by seq (the event an injection answered, a host or redaction record's
    /// event), and every seq after a left-out record moves.
    pub system_after_skip: u64,
}

/// Checks every line of `input` (named `name` in errors) and encodes its payload; fails on
/// the first bad line, naming it, so that nothing is appended from a bad input. Blank lines
/// are skipped; `kind` is the kind for plain events (see [`event_kind`]). Erased records (and
/// the records binding them) are an error unless `skip_erased`, which leaves them out.
pub fn plan(
    name: &str,
    input: &[u8],
    format: ImportFormat,
    kind: Option<&str>,
    skip_erased: bool,
) -> Result<ImportPlan> {
    let mut plan = ImportPlan::default();
    for (i, raw_line) in input.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let raw_line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
        if raw_line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = std::str::from_utf8(raw_line)
            .map_err(|e| line_error(name, n, format!("not UTF-8 ({e})")))?;
        let value: serde_json::Value = serde_json::from_str(line)
            .or_else(|e| crate::event::lenient::value(raw_line).map_err(|_| e))
            .map_err(|e| {
                line_error(
                    name,
                    n,
                    format!("not valid JSON: {e} (column {})", e.column()),
                )
            })?;
        let export = match format {
            ImportFormat::Auto => is_export_line(&value),
            ImportFormat::Export => true,
            ImportFormat::Events => false,
        };
        let item = if export {
            let l = read_export_line(line)
                .map_err(|e| line_error(name, n, format!("not an sjournal export line: {e}")))?;
            if let ImportedPayload::Erased { seq } = l.payload {
                if !skip_erased {
                    return Err(line_error(
                        name,
                        n,
                        format!(
                            "record seq {seq} {}: an erasure cannot be imported (the erased \
                             content is gone, and the record is bound to its digest); pass \
                             --skip-erased to import the rest without the erased records and \
                             the records about them",
                            if l.kind == payload::KIND_ERASED {
                                "is an sjournal.erased record"
                            } else {
                                "was erased after it was written"
                            }
                        ),
                    ));
                }
                plan.erased_skipped += 1;
                continue;
            }
            if plan.erased_skipped > 0 && payload::is_system_kind(&l.kind) {
                plan.system_after_skip += 1;
                continue;
            }
            if !valid_kind(&l.kind) {
                return Err(line_error(name, n, format!("invalid kind {:?}", l.kind)));
            }
            let (payload, system) = match l.payload {
                ImportedPayload::Event(text) => {
                    if payload::is_system_kind(&l.kind) {
                        return Err(line_error(name, n, "a system record with an event payload"));
                    }
                    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&text) {
                        return Err(line_error(name, n, format!("raw payload is not JSON: {e}")));
                    }
                    (crate::fold::digest::encode_event(&l.kind, &text), false)
                }
                ImportedPayload::System(bytes) => (bytes, true),
                ImportedPayload::SystemWithoutBytes => {
                    plan.without_bytes += 1;
                    continue;
                }
                ImportedPayload::Erased { .. } => unreachable!("handled above"),
            };
            ImportItem {
                kind: l.kind.into_owned(),
                payload,
                ts: l.ts_unix_ns,
                system,
            }
        } else {
            let k = event_kind(kind, &value).map_err(|e| line_error(name, n, e.to_string()))?;
            ImportItem {
                payload: crate::fold::digest::encode_event(&k, line),
                kind: k,
                ts: None,
                system: false,
            }
        };
        let len = frame_len(&item.kind, item.payload.len());
        if len > FRAME_MAX_BYTES as usize {
            return Err(line_error(
                name,
                n,
                format!("the record would be {len} bytes; the limit is {FRAME_MAX_BYTES}"),
            ));
        }
        plan.items.push(item);
    }
    Ok(plan)
}

/// Splits the items into batches of at most `BATCH_MAX_BYTES` of frames each (one write and
/// one sync each): the bound is what lets recovery tell a torn batch from mid-log
/// corruption, so a bigger import is split rather than written in one go.
pub fn chunks<'i>(items: &'i [&'i ImportItem]) -> Vec<&'i [&'i ImportItem]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, item) in items.iter().enumerate() {
        let len = frame_len(&item.kind, item.payload.len()) as u64;
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

/// The kind for an event (`append`, and plain lines of `import`): `flag`, else the kind the
/// hook would give the payload (the detected host's [`Host::event_kind`]: `hook_event_name`,
/// Cline's `hookName`, OpenClaw's `event`, when it is a valid kind), else "event". A `flag`
/// that is not a valid kind, or names a system kind, is an error.
pub fn event_kind(flag: Option<&str>, value: &serde_json::Value) -> Result<String> {
    if let Some(k) = flag {
        if !valid_kind(k) || payload::is_system_kind(k) {
            return Err(Error::InvalidKind { kind: k.to_owned() });
        }
        return Ok(k.to_owned());
    }
    Ok(Host::detect(value).event_kind(value).to_owned())
}
