//! Turning the bytes on stdin into the record that must not be lost: an event (the JSON text
//! byte for byte, its kind the host's event name) or, when it does not parse, a
//! `sjournal.unparsed` record holding the raw bytes. Either way the record gets a session:
//! the payload's own session id, else one salvaged from the bytes or from the environment,
//! else the catch-all session [`UNATTRIBUTED_SESSION`].

use std::sync::Arc;

use crate::event::Event;
use crate::format::payload::{encode_system, Unparsed, KIND_UNPARSED};
use crate::hook::read::Received;
use crate::host::{Host, HostFlag};
use crate::journal::paths::file_stem;
use crate::limits::INPUT_MAX_BYTES;

/// Session of records whose own session could not be told.
pub const UNATTRIBUTED_SESSION: &str = "sjournal-unattributed";

/// The record made of one hook input, and what it says.
#[derive(Debug, Clone)]
pub struct Captured {
    pub session_id: String,
    pub kind: String,
    /// The record payload (encoded).
    pub payload: Vec<u8>,
    /// The JSON text, for events (None for unparsed input). Shared, so that the hook can
    /// hold the event it parsed from it (see `route`) beside the record.
    pub raw_json: Option<Arc<str>>,
    /// The host's event name, for events.
    pub event: Option<String>,
    pub protocol: Option<Host>,
    /// The host the payload alone reads as (the fold's reading), when `--host` named another.
    pub detected: Option<Host>,
    /// Set when the input was longer than a record holds (its length): the record keeps its
    /// first bytes only, and the user is told.
    pub cut: Option<u64>,
    /// Set when the input time limit passed while the input was still arriving (the input
    /// time limit, in ms): the record keeps what arrived, and the user is told.
    pub incomplete: Option<u64>,
    /// What redaction replaced in the payload: its `sjournal.redacted` record goes in the
    /// event's batch (`crate::redact`).
    pub redacted: Option<crate::redact::Redaction>,
}

/// An input that parsed as JSON, routed (its session, record kind and host) but not yet made
/// a record: the record's payload carries the event's fold digest, derived from the event as
/// the fold reads it, `Event::parse(kind, &lenient::text(text))`. The hook parses that
/// event once and uses it for the digest ([`Routed::into_captured`]), the injection point and
/// memory.
#[derive(Debug, Clone)]
pub(crate) struct Routed {
    pub session_id: String,
    /// The record kind (the host's event name, else `event`).
    pub kind: String,
    /// The JSON text, byte for byte as it came.
    pub text: Arc<str>,
    event: Option<String>,
    protocol: Host,
    detected: Host,
    redaction: Option<crate::redact::Report>,
}

impl Routed {
    /// The record. `parsed` must be the event as the fold reads it (see [`Routed`]); None
    /// derives it here.
    pub(crate) fn into_captured(self, parsed: Option<&Event<'_>>) -> Captured {
        let redacted = self
            .redaction
            .and_then(|r| crate::redact::Redaction::of(&r, &self.kind, self.text.as_bytes()));
        let payload = match parsed {
            Some(e) => crate::fold::digest::encode_parsed_event(&self.text, e),
            None => crate::fold::digest::encode_event(&self.kind, &self.text),
        };
        Captured {
            session_id: self.session_id,
            payload,
            kind: self.kind,
            raw_json: Some(self.text),
            event: self.event,
            protocol: Some(self.protocol),
            detected: (self.detected != self.protocol).then_some(self.detected),
            cut: None,
            incomplete: None,
            redacted,
        }
    }
}

/// Makes the record for an input that was read to its end. `env` looks up environment
/// variables (a parameter so tests do not depend on the process environment). Notes go to
/// `diag`.
pub fn capture(
    received: Received,
    host: HostFlag,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Vec<String>,
) -> Captured {
    match route(received, host, env, diag) {
        Routing::Event(r) => r.into_captured(None),
        Routing::Unparsed(c) => c,
    }
}

/// What [`route`] made of the input.
#[derive(Debug)]
pub(crate) enum Routing {
    /// A JSON value: routed, its record made once the event is parsed.
    Event(Routed),
    /// Not a JSON value: the complete `sjournal.unparsed` record.
    Unparsed(Captured),
}

/// The first half of [`capture`]: the routed event, or the complete `sjournal.unparsed`
/// record of input that is not a JSON value.
pub(crate) fn route(
    received: Received,
    host: HostFlag,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Vec<String>,
) -> Routing {
    let overflow = received.overflow();
    let redaction = received.redaction;
    let raw = received.bytes;
    let parsed = if let Some((len, _)) = overflow {
        Err(format!(
            "the input is {len} bytes, longer than a record holds ({INPUT_MAX_BYTES}); the first \
             {INPUT_MAX_BYTES} bytes are kept, the other {} bytes are left out (input_len and \
             input_blake3 describe the whole input)",
            len - INPUT_MAX_BYTES as u64
        ))
    } else if raw.iter().all(u8::is_ascii_whitespace) {
        Err("stdin is empty".to_owned())
    } else {
        crate::event::lenient::value(&raw)
    };
    let value = match parsed {
        Ok(v) => v,
        Err(error) => {
            let mut c = unparsed(raw, error, overflow, host, env, diag);
            c.redacted = redaction.and_then(|r| redacted_unparsed(&r, &c));
            return Routing::Unparsed(c);
        }
    };
    let detected = Host::detect(&value);
    let protocol = match host {
        HostFlag::Fixed(p) => p,
        HostFlag::Auto => detected,
    };
    let event = protocol.event_name(&value).map(str::to_owned);
    let kind = protocol.event_kind(&value).to_owned();
    let session = match protocol.session_id(&value) {
        Some(s) if file_stem(s).is_ok() => s.to_owned(),
        found => {
            let s = env("CLAUDE_CODE_SESSION_ID")
                .filter(|s| protocol == Host::Claude && file_stem(s).is_ok())
                .unwrap_or_else(|| UNATTRIBUTED_SESSION.to_owned());
            diag.push(match found {
                Some(bad) => format!(
                    "the payload's session id ({} bytes) is not usable; the event goes to session {s:?}",
                    bad.len()
                ),
                None => format!(
                    "the payload names no session ({} protocol); the event goes to session {s:?}",
                    protocol.as_str()
                ),
            });
            s
        }
    };
    // serde_json accepted the bytes, so they are UTF-8.
    let text = String::from_utf8(raw).expect("valid JSON is UTF-8");
    Routing::Event(Routed {
        session_id: session,
        kind,
        text: text.into(),
        event,
        protocol,
        detected,
        redaction,
    })
}

/// The redaction of an unparsed record: of the raw input it keeps.
fn redacted_unparsed(r: &crate::redact::Report, c: &Captured) -> Option<crate::redact::Redaction> {
    let u: Unparsed = crate::format::payload::decode_system(0, &c.payload).ok()?;
    crate::redact::Redaction::of(r, &c.kind, &u.raw)
}

/// Makes the record for an input whose end never came: the input time limit (`limit_ms`)
/// passed while it was still arriving. What arrived is kept, with `reason`.
pub fn capture_partial(
    received: Received,
    reason: String,
    limit_ms: u64,
    host: HostFlag,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Vec<String>,
) -> Captured {
    let overflow = received.overflow();
    let redaction = received.redaction;
    let mut c = Captured {
        incomplete: Some(limit_ms),
        ..unparsed(received.bytes, reason, overflow, host, env, diag)
    };
    c.redacted = redaction.and_then(|r| redacted_unparsed(&r, &c));
    c
}

/// A `sjournal.unparsed` record of `raw`, in the session its bytes name (else the
/// environment's, else the catch-all one).
fn unparsed(
    raw: Vec<u8>,
    error: String,
    overflow: Option<(u64, String)>,
    host: HostFlag,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Vec<String>,
) -> Captured {
    let session = salvage_session_id(&raw)
        .or_else(|| env("CLAUDE_CODE_SESSION_ID"))
        .filter(|s| file_stem(s).is_ok())
        .unwrap_or_else(|| UNATTRIBUTED_SESSION.to_owned());
    diag.push(format!(
        "input is not valid JSON ({error}); kept as a sjournal.unparsed record in session {session:?}"
    ));
    let cut = overflow.as_ref().map(|(len, _)| *len);
    let (input_len, input_blake3) = match overflow {
        Some((len, hash)) => (Some(len), Some(hash)),
        None => (None, None),
    };
    let payload = encode_system(&Unparsed {
        raw,
        error,
        input_len,
        input_blake3,
    });
    Captured {
        session_id: session,
        kind: KIND_UNPARSED.to_owned(),
        payload,
        raw_json: None,
        event: None,
        protocol: match host {
            HostFlag::Fixed(p) => Some(p),
            HostFlag::Auto => None,
        },
        detected: None,
        cut,
        incomplete: None,
        redacted: None,
    }
}

/// Finds `"session_id": "<string>"` (or a host's other session key) in bytes that are not
/// valid JSON as a whole.
pub fn salvage_session_id(raw: &[u8]) -> Option<String> {
    for key in [
        &b"\"session_id\""[..],
        b"\"conversation_id\"",
        b"\"taskId\"",
    ] {
        let Some(at) = raw.windows(key.len()).position(|w| w == key) else {
            continue;
        };
        let rest = &raw[at + key.len()..];
        let rest = trim_start(rest);
        let Some(rest) = rest.strip_prefix(b":") else {
            continue;
        };
        let rest = trim_start(rest);
        let mut it = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
        if let Some(Ok(s)) = it.next() {
            if !s.is_empty() {
                return Some(s);
            }
        }
    }
    None
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn received(b: &[u8]) -> Received {
        let mut r = Received::default();
        r.push(b);
        r.eof = true;
        r
    }

    /// Input past the record limit: the first bytes are kept, and the record says how long
    /// the whole input was and its blake3, never silently cut.
    #[test]
    fn oversized_input_says_what_it_left_out() {
        let mut r = Received::default();
        let chunk = vec![b'x'; 1 << 20];
        let mut all = blake3::Hasher::new();
        for _ in 0..17 {
            r.push(&chunk);
            all.update(&chunk);
        }
        let mut diag = Vec::new();
        let c = capture(r, HostFlag::Auto, &no_env, &mut diag);
        assert_eq!(c.kind, KIND_UNPARSED);
        assert_eq!(c.cut, Some(17 << 20));
        let u: Unparsed = crate::format::payload::decode_system(1, &c.payload).unwrap();
        assert_eq!(u.raw.len(), INPUT_MAX_BYTES);
        assert_eq!(u.input_len, Some(17 << 20));
        assert_eq!(u.bytes_left_out(), (17 << 20) - INPUT_MAX_BYTES as u64);
        assert_eq!(u.input_blake3.unwrap(), all.finalize().to_hex().to_string());
        assert!(u.error.contains("left out"), "{}", u.error);
    }

    #[test]
    fn salvages_session_from_broken_json() {
        assert_eq!(
            salvage_session_id(br#"{"session_id" : "abc-1", "cwd": "/x", oops"#).as_deref(),
            Some("abc-1")
        );
        assert_eq!(salvage_session_id(b"garbage"), None);
    }

    #[test]
    fn unparsed_input_is_kept() {
        let mut diag = Vec::new();
        let c = capture(received(b"{not json"), HostFlag::Auto, &no_env, &mut diag);
        assert_eq!(c.kind, KIND_UNPARSED);
        assert_eq!(c.session_id, UNATTRIBUTED_SESSION);
        let u: Unparsed = crate::format::payload::decode_system(1, &c.payload).unwrap();
        assert_eq!(u.raw, b"{not json");
        assert_eq!(diag.len(), 1);
    }

    #[test]
    fn event_keeps_bytes_and_session() {
        let mut diag = Vec::new();
        let raw = br#"{"session_id":"s1","hook_event_name":"Stop"}"#.to_vec();
        let c = capture(received(&raw), HostFlag::Auto, &no_env, &mut diag);
        assert_eq!((c.session_id.as_str(), c.kind.as_str()), ("s1", "Stop"));
        assert_eq!(c.raw_json.unwrap().as_bytes(), &raw[..]);
        assert!(diag.is_empty());
    }

    #[test]
    fn system_kinds_cannot_be_forged() {
        let mut diag = Vec::new();
        let raw = br#"{"session_id":"s1","hook_event_name":"sjournal.injected"}"#.to_vec();
        let c = capture(received(&raw), HostFlag::Auto, &no_env, &mut diag);
        assert_eq!(c.kind, "event");
    }
}
