//! The bodies of the fuzz targets, shared by the libFuzzer harnesses in `fuzz_targets/` (run
//! by `tools/fuzz.sh`) and by `tests/fuzz_smoke.rs`, which replays the seed corpus and every
//! input a fuzzer ever crashed on (`fuzz/regressions/<target>/`) on the stable toolchain.
//!
//! Each body feeds untrusted bytes to decoders and parsers and checks what must hold whatever
//! the bytes are: no panic, no allocation beyond what the bytes justify (libFuzzer's
//! `-rss_limit_mb` and `-malloc_limit_mb` enforce it), and the invariants named below.
#![allow(dead_code)]

use std::path::Path;

use sjournal::audit::inspect::inspect;
use sjournal::event::{lenient_json, Event, Host};
use sjournal::fold::{RecordView, State};
use sjournal::format::header::Header;
use sjournal::format::mark::Mark;
use sjournal::format::payload::{self, SYSTEM_KINDS};
use sjournal::format::record;
use sjournal::hook::protocol::HostFlag;
use sjournal::hook::read::Received;
use sjournal::hook::route::{capture, salvage_session_id};
use sjournal::journal::hint::TailHint;
use sjournal::journal::reader::Records;
use sjournal::journal::recovery::{self, Verdict};
use sjournal::journal::scan::{self, Chain, Stop};
use sjournal::journal::verify::verify_bytes;
use sjournal::snapshot::SnapshotHeader;

/// Record framing and the recovery rule over arbitrary bytes.
pub fn frame(data: &[u8]) {
    if let Ok(f) = record::parse(data) {
        assert!(f.len() <= data.len());
        assert!(record::valid_kind(f.kind));
        // A frame re-encoded from its fields is the same bytes.
        let mut b = Vec::new();
        record::encode(&mut b, f.seq, f.ts_unix_ns, f.kind, &f.prev_hash, f.payload);
        assert_eq!(b, &data[..f.len()]);
    }
    let last_seq = data.first().copied().unwrap_or(0) as u64;
    if let Some(at) = scan::find_valid_frame_after(data, last_seq) {
        assert!(at > 0 && record::parse(&data[at..]).is_ok());
    }
    if let Some(at) = scan::find_any_frame_after(data) {
        assert!(at > 0 && record::parse(&data[at..]).is_ok());
    }
    if let Err(e) = record::parse(data) {
        let stop = Stop {
            offset: 0,
            problem: scan::Problem::Frame(e),
        };
        let v = recovery::classify(Some(&stop), data.len() as u64, last_seq, None, |o, _| {
            Ok::<_, std::convert::Infallible>(&data[o as usize..])
        })
        .unwrap();
        // A torn tail never holds a frame that could follow the last record.
        if let Verdict::TornTail { tail, .. } = v {
            assert!(scan::find_valid_frame_after(tail, last_seq).is_none());
        }
    }
}

/// The fixed-layout decoders: journal header, tail hint, high-water mark.
pub fn header(data: &[u8]) {
    if let Ok((h, len)) = Header::decode(data) {
        assert!(len <= data.len());
        assert_eq!(h.encode(), &data[..len]);
    }
    let _ = recovery::is_torn_header(data, data.len() as u64);
    if let Some(h) = TailHint::decode(data) {
        assert_eq!(&h.encode()[..], &data[..sjournal::journal::hint::LEN]);
    }
    if let Some(m) = Mark::decode(data) {
        assert_eq!(&m.encode()[..], &data[..sjournal::format::mark::LEN]);
    }
}

/// The snapshot header and the state body (rmp-serde over untrusted bytes).
pub fn snapshot(data: &[u8]) {
    if let Ok(h) = SnapshotHeader::decode(data) {
        assert_eq!(&h.encode()[..], &data[..sjournal::snapshot::HEADER_LEN]);
    }
    if let Ok(s) = State::decode(data) {
        // Whatever decodes encodes again, and folding more into it does not panic.
        let mut s = s;
        let _ = s.encode();
        s.apply(&RecordView {
            seq: s.seq.saturating_add(1),
            ts_unix_ns: 0,
            kind: "Stop",
            payload: &payload::encode_event_json(r#"{"hook_event_name":"Stop"}"#),
        });
    }
}

/// A whole journal file: verify, inspect (resynchronizing past damage), the reader, and the
/// fold of what it yields.
pub fn journal(data: &[u8]) {
    // Not named like a journal, so the file-name binding is not checked.
    let path = Path::new("fuzz-input");
    let v = verify_bytes(path, data, Ok(None), |s, c| Records::new(data, s, c)).unwrap();
    let i = inspect(data);
    if v.ok {
        assert!(i.summary.clean, "verify and inspect disagree");
        assert_eq!(i.summary.records, v.records);
    }
    if let Ok((_, hlen)) = Header::decode(data) {
        let genesis = sjournal::format::hash::genesis_hash(&data[..hlen]);
        let mut state = State::new();
        let mut n = 0;
        for r in Records::new(data, hlen, Chain::genesis(genesis)).map_while(|r| r.ok()) {
            state.apply(&RecordView::from(&r));
            n += 1;
        }
        assert_eq!(n, v.records);
    }
}

/// Payload decoders for every system kind, and events.
pub fn payload(data: &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let kind = SYSTEM_KINDS
        .get(k as usize % (SYSTEM_KINDS.len() + 1))
        .copied()
        .unwrap_or("Ev");
    let _ = payload::to_json(1, kind, rest);
    let _ = payload::decode_event(1, rest);
    let mut s = State::new();
    s.apply(&RecordView {
        seq: 1,
        ts_unix_ns: 0,
        kind,
        payload: rest,
    });
    let _ = s.encode();
}

/// The hook's input: capture (lenient JSON, host detection, session and kind) and the
/// salvage of a session id from bytes that are not JSON.
pub fn capture_input(data: &[u8]) {
    let _ = salvage_session_id(data);
    let mut diag = Vec::new();
    let env = |_: &str| None;
    let mut received = Received::default();
    received.push(data);
    received.eof = true;
    let c = capture(received, HostFlag::Auto, &env, &mut diag);
    assert!(!c.session_id.is_empty());
    assert!(record::valid_kind(&c.kind));
    // An event keeps the input byte for byte.
    if let Some(raw) = &c.raw_json {
        assert_eq!(raw.as_bytes(), data);
    }
}

/// Every host adapter over the same text, and the fold of what it gives.
pub fn adapters(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let text = lenient_json::text(text);
    for host in Host::ALL {
        let e = Event::parse_as(Some(host), "Ev", &text);
        let _ = e.tool_input();
    }
    let e = Event::parse("Ev", &text);
    let _ = e.tool_input();
    let mut s = State::new();
    s.apply(&RecordView {
        seq: 1,
        ts_unix_ns: 1,
        kind: "Ev",
        payload: &payload::encode_event_json(&text),
    });
}

/// The lenient JSON pre-pass: total, idempotent, and never makes accepted JSON refused.
pub fn lenient(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let once = lenient_json::text(text);
    assert_eq!(lenient_json::text(&once), once, "not idempotent");
    let strict = serde_json::from_str::<serde_json::Value>(text);
    let lenient = serde_json::from_str::<serde_json::Value>(&once);
    if strict.is_ok() {
        assert!(lenient.is_ok(), "accepted JSON refused after the pre-pass");
    }
    if once != text {
        assert!(once.len() >= text.len());
    }
}
