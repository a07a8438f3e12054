//! Read commands show what the session holds, spooled events included. Before reading, each
//! merges the session's pending spool into the journal when it can take the session's lock
//! within `READER_MERGE_WAIT_MS` (and the root is writable); what it cannot merge it shows as
//! pending: `log` and `tail` print those records marked `pending`, `state` and `context show`
//! fold them in and say so, the others warn on stderr, and `checkpoint` refuses to sign.

use std::time::{Duration, Instant};

use crate::cli::output;
use sjournal::error::Result;
use sjournal::format::payload;
use sjournal::journal::{PendingSpool, Root};
use sjournal::limits::READER_MERGE_WAIT_MS;
use sjournal::session::Flushed;

/// Merges the session's pending spool if it can; warns on stderr about what stays pending.
pub fn settle(root: &Root, session: &str) -> Result<Flushed> {
    let mut opts = crate::cli::shared::writer_options(root);
    opts.deadline = Some(Instant::now() + Duration::from_millis(READER_MERGE_WAIT_MS));
    let f = sjournal::session::flush(root, session, &opts)?;
    for w in &f.merged.warnings {
        output::warn(&format!("sjournal: warning: {w}"));
    }
    if !f.waiting.is_empty() {
        output::warn(&format!(
            "sjournal: warning: {} spooled event file(s) of session {session:?} are not yet in the \
             journal ({}); they are shown as pending. `sjournal flush --session {session}` merges \
             them once the journal can take them",
            f.waiting.len(),
            f.why.as_deref().unwrap_or("unknown")
        ));
    }
    Ok(f)
}

/// The records of pending spool files as `log` prints them: text lines with `pending` where
/// the seq would be, or (`json`) objects with `"pending": true` and no seq or hash.
pub fn lines(waiting: &[PendingSpool], json: bool) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for p in waiting {
        let Some(file) = &p.file else {
            out.push(if json {
                sjournal::report::line(&sjournal::report::PendingUnreadableLine {
                    pending: true,
                    spool_file: &p.path,
                    damaged: p.damaged.as_deref(),
                })
            } else {
                format!(
                    "pending  (unreadable spool file {}: {})",
                    sjournal::escape::path(&p.path),
                    sjournal::escape::text(p.damaged.as_deref().unwrap_or(""))
                )
            });
            continue;
        };
        for r in &file.records {
            let payload = payload::to_json(0, &r.kind, &r.payload)?;
            // The time the record will keep once merged, where it has its own.
            let ts_unix_ns = r.ts_unix_ns.unwrap_or(file.spooled_at_ns);
            let ts = output::rfc3339(ts_unix_ns);
            if json {
                let line = sjournal::report::PendingRecordLine {
                    pending: true,
                    spool_file: &p.path,
                    fallback: p.fallback,
                    ts,
                    ts_unix_ns,
                    kind: &r.kind,
                    payload,
                };
                out.push(sjournal::report::line(&line));
            } else {
                let mut text = payload.get().to_owned();
                if text.len() > 120 {
                    let cut = (0..=117)
                        .rev()
                        .find(|&i| text.is_char_boundary(i))
                        .unwrap_or(0);
                    text.truncate(cut);
                    text.push_str("...");
                }
                out.push(format!(
                    "pending {ts}  {:<20} ({}spooled: not yet in the journal)  {}",
                    sjournal::escape::text(&r.kind),
                    if p.fallback { "fallback-" } else { "" },
                    sjournal::escape::text(&text)
                ));
            }
        }
    }
    Ok(out)
}
