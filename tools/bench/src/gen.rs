//! Builds large journals fast, through the library, in batches of one sync each.

use std::path::Path;

use sjournal::fold::digest::encode_event;
use sjournal::journal::{Root, Writer, WriterOptions};

/// The payload with its session id replaced.
pub fn payload_for(template: &str, session: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(template).unwrap();
    v["session_id"] = serde_json::Value::String(session.into());
    serde_json::to_string(&v).unwrap()
}

/// A session with `n` events.
pub fn session(root: &Path, session: &str, n: usize, template: &str) {
    let root = Root::new(root);
    let mut w = Writer::open(&root, session, &WriterOptions::default()).unwrap();
    let p = encode_event("PostToolUse", &payload_for(template, session));
    let batch: Vec<(&str, &[u8])> = (0..10_000.min(n))
        .map(|_| ("PostToolUse", &p[..]))
        .collect();
    let mut left = n;
    while left > 0 {
        let k = left.min(batch.len());
        w.append_batch(&batch[..k]).unwrap();
        left -= k;
    }
}

/// A session of at least `bytes` bytes; returns its size.
pub fn session_bytes(root: &Path, name: &str, bytes: u64, template: &str) -> u64 {
    let one = sjournal::format::record::frame_len(
        "PostToolUse",
        encode_event("PostToolUse", &payload_for(template, name)).len(),
    );
    session(root, name, (bytes / one as u64) as usize + 1, template);
    std::fs::metadata(Root::new(root).session(name).unwrap().journal)
        .unwrap()
        .len()
}

const FIXTURE: &str = include_str!("../../../tests/fixtures/claude-code/payloads-2.1.332.jsonl");

/// `n` events cycling through the real Claude Code fixture payloads (all event kinds).
pub fn fixture_events(n: usize) -> Vec<String> {
    let all: Vec<String> = FIXTURE
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let mut p = v["payload"].clone();
            p["session_id"] = serde_json::Value::String("fold".into());
            serde_json::to_string(&p).unwrap()
        })
        .collect();
    (0..n).map(|i| all[i % all.len()].clone()).collect()
}

/// The event's name, as the record kind.
pub fn kind_of(raw: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(raw).unwrap();
    v["hook_event_name"].as_str().unwrap_or("event").to_owned()
}
