//! The hook's answer to the host: the event's context in the host's protocol, with a notice
//! for the user whenever the event was not stored durably in the root, was cut short, or was
//! lost (the host's visible channel: `systemMessage`; Cursor's `user_message`; Cline's
//! `errorMessage`), or the fail-open reply when there is nothing to say.

use std::time::Instant;

use crate::hook::commit::Committed;
use crate::hook::route::Captured;
use crate::host::{Host, HostFlag};
use crate::limits::INPUT_MAX_BYTES;
use crate::session::Landed;

/// What the user must be told about where the event went, if anything: it is not durable
/// in the root, it was cut, or it was still arriving when the input time limit passed.
pub fn notice(landed: Option<&Landed>, cap: &Captured) -> Option<String> {
    let mut parts: Vec<String> = landed.and_then(Landed::notice).into_iter().collect();
    parts.extend(
        cap.redacted
            .as_ref()
            .and_then(|r| r.notice(&cap.session_id)),
    );
    if let Some(len) = cap.cut {
        parts.push(format!(
            "This event was {len} bytes, more than a journal record holds: its first \
             {INPUT_MAX_BYTES} bytes are kept, the rest is left out (its length and blake3 are \
             recorded)."
        ));
    }
    if let Some(limit) = cap.incomplete {
        parts.push(format!(
            "This event was still arriving when sjournal's input time limit ({limit} ms, \
             [hook] input_timeout_ms) passed: what arrived is kept as an unparsed record, the \
             rest was not read, and the event is not in the session's state."
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The stdout for a committed event. `late`: the host no longer waits for it, so no context
/// goes with it (only a notice the user must see). `extra` is added to the notice.
pub fn reply_with(
    protocol: Option<Host>,
    event: Option<&str>,
    c: &Committed,
    cap: &Captured,
    late: bool,
    extra: Option<&str>,
) -> Option<String> {
    let p = protocol?;
    let notice = match (notice(Some(&c.written.landed), cap), extra) {
        (Some(a), Some(b)) => Some(format!("{a} {b}")),
        (a, b) => a.or_else(|| b.map(str::to_owned)),
    };
    if late {
        return p.reply_with_notice(None, None, notice.as_deref());
    }
    let context = c.context.as_ref().map(|c| c.text.as_str());
    p.reply_with_notice(event, context, notice.as_deref())
}

/// The reply when the event was kept nowhere: the fail-open reply, with the notice.
pub(crate) fn lost(host: HostFlag, detected: Option<Host>, notice: &str) -> Option<String> {
    protocol_of(host, detected)?.reply_with_notice(None, None, Some(notice))
}

/// The protocol to answer in: the one the payload was read as, else the one `--host` named.
pub(crate) fn protocol_of(host: HostFlag, detected: Option<Host>) -> Option<Host> {
    detected.or(match host {
        HostFlag::Fixed(p) => Some(p),
        HostFlag::Auto => None,
    })
}

/// Whether the reply may still carry context at `now`: the host is still waiting for it.
pub(crate) fn timely(host_gives_up: Instant) -> bool {
    Instant::now() <= host_gives_up
}

/// The diagnostic saying where an event that did not go into the journal went.
pub(crate) fn describe(landed: &Landed, diag: &mut Vec<String>) {
    match landed {
        Landed::Journal { .. } => {}
        Landed::Rescue { appended, cause } => diag.push(format!(
            "{cause}; the event was kept as seq {} of the session's rescue journal",
            appended.first().map_or(0, |a| a.seq)
        )),
        Landed::Spooled {
            files,
            reason,
            fallback,
            ..
        } => diag.push(format!(
            "{reason}; the event was spooled to {}{} and will be merged by the next writer or reader",
            files.first().map(|f| f.display().to_string()).unwrap_or_default(),
            if *fallback {
                " (the FALLBACK spool, outside the root: less durable)"
            } else {
                ""
            }
        )),
    }
}
