//! The ingest points: every way an event's bytes enter sjournal passes through one of these
//! before anything is written.
//!
//! - the hook: `crate::hook::read::Received::redact`, on the bytes read from stdin, before they are routed (the
//!   worker) or kept as they stand (the watchdog's take-over of input still arriving), so the
//!   record, its fold digest, exec handlers' stdin, the spool and the reply all see only the
//!   redacted event;
//! - `sjournal append`: [`push_event`];
//! - `sjournal import`: [`import`], on events and on the raw input of `sjournal.unparsed`
//!   records (an export made before redaction, or with it off, is redacted on the way in).
//!
//! Hook-author primitives (`slot`, `list`, `once`, `fire`, `context set`) are not redacted:
//! their values are the user's own data, read back by their scripts.

use crate::audit::jsonl::ImportItem;
use crate::format::payload::{self, Unparsed, KIND_UNPARSED};
use crate::journal::Root;
use crate::session::Batch;

use super::{RedactSection, Redactor, Report, KIND_REDACTED};

/// The redactor of a root, as its configuration says (file operations through the real file
/// system).
pub fn for_root(root: &Root, section: &RedactSection) -> Redactor {
    Redactor::new(section, root, std::sync::Arc::new(crate::storage::RealFs))
}

/// Adds the event `text` under `kind` to `batch`, redacted, with its `sjournal.redacted`
/// record when something was. Returns what was redacted.
pub fn push_event(batch: &mut Batch, red: &Redactor, kind: &str, text: &str) -> Report {
    let (out, report) = red.json(text);
    let text = out.as_deref().unwrap_or(text);
    batch.event(kind, text);
    if let Some(r) = report.record(kind, text.as_bytes()) {
        batch.push(KIND_REDACTED, r);
    }
    report
}

/// The items of an import, redacted: events and unparsed inputs get their secrets replaced,
/// each followed by its `sjournal.redacted` record (counted as a system record). Returns the
/// items and the secrets redacted.
pub fn import(red: &Redactor, items: Vec<ImportItem>) -> (Vec<ImportItem>, usize) {
    let mut out = Vec::with_capacity(items.len());
    let mut count = 0;
    for mut item in items {
        let mut record = None;
        if !payload::is_system_kind(&item.kind) {
            if let Ok(text) = payload::decode_event(0, &item.payload) {
                let (new, report) = red.json(text);
                if let Some(new) = new {
                    record = report.record(&item.kind, new.as_bytes());
                    item.payload = crate::fold::digest::encode_event(&item.kind, &new);
                }
                count += report.found.len();
            }
        } else if item.kind == KIND_UNPARSED {
            if let Ok(mut u) = payload::decode_system::<Unparsed>(0, &item.payload) {
                let (new, report) = red.bytes(&u.raw);
                if let Some(new) = new {
                    record = report.record(&item.kind, &new);
                    u.raw = new;
                    item.payload = payload::encode_system(&u);
                }
                count += report.found.len();
            }
        }
        let ts = item.ts;
        out.push(item);
        if let Some(r) = record {
            out.push(ImportItem {
                kind: KIND_REDACTED.to_owned(),
                payload: r,
                ts,
                system: true,
            });
        }
    }
    (out, count)
}
