//! Helpers shared by the integration tests: running the binary against a temporary root,
//! and building journals byte by byte with fixed timestamps (deterministic fixtures).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use sjournal::format::hash::genesis_hash;
use sjournal::format::payload::encode_event;
use sjournal::format::{record, Hash, Header};

pub const CLAUDE_FIXTURE: &str = include_str!("../fixtures/claude-code/payloads-2.1.332.jsonl");

/// `sjournal --root ROOT ARGS...`
pub fn sjournal(root: &Path) -> Command {
    let mut c = Command::cargo_bin("sjournal").unwrap();
    c.arg("--root").arg(root);
    c.env_remove("SJOURNAL_HOME");
    c
}

/// The recorded Claude Code payload of `event` (and `variant`, if given), byte for byte as
/// it stands in the fixture file.
pub fn claude_payload(event: &str, variant: Option<&str>) -> String {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        event: &'a str,
        variant: Option<&'a str>,
        #[serde(borrow)]
        payload: &'a serde_json::value::RawValue,
    }
    for line in CLAUDE_FIXTURE.lines() {
        let l: Line = serde_json::from_str(line).unwrap();
        if l.event == event && variant.is_none_or(|w| l.variant == Some(w)) {
            return l.payload.get().to_owned();
        }
    }
    panic!("no fixture payload for {event} {variant:?}");
}

/// A journal built in memory: the bytes and where each record starts and ends.
pub struct Built {
    pub bytes: Vec<u8>,
    pub header_len: usize,
    /// `(start, end)` of record seq i+1.
    pub frames: Vec<(usize, usize)>,
    pub hashes: Vec<Hash>,
}

impl Built {
    pub fn frame(&self, seq: usize) -> &[u8] {
        let (s, e) = self.frames[seq - 1];
        &self.bytes[s..e]
    }
}

/// Encodes a journal for `session` whose records are `events` (kind, raw JSON; for system
/// kinds, the JSON object of the record's fields), the header
/// created at `created_ns` and record i stamped `created_ns + i` seconds.
pub fn build_journal(session: &str, created_ns: i64, events: &[(&str, &str)]) -> Built {
    let header = Header::new(session, created_ns).encode();
    let mut prev = genesis_hash(&header);
    let mut bytes = header.clone();
    let mut frames = Vec::new();
    let mut hashes = Vec::new();
    for (i, (kind, json)) in events.iter().enumerate() {
        let start = bytes.len();
        let ts = created_ns + (i as i64 + 1) * 1_000_000_000;
        // System records (`sjournal.*`) hold their fields as a MessagePack map.
        let payload = if sjournal::format::payload::is_system_kind(kind) {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            sjournal::format::payload::encode_system(&v)
        } else {
            encode_event(json)
        };
        record::encode(&mut bytes, i as u64 + 1, ts, kind, &prev, &payload);
        prev = sjournal::format::hash::record_hash(&bytes[start..]);
        frames.push((start, bytes.len()));
        hashes.push(prev);
    }
    Built {
        bytes,
        header_len: header.len(),
        frames,
        hashes,
    }
}

/// A short Claude Code session from the recorded payloads: start, a prompt, a tool call
/// that succeeds and one that fails, a compaction, the end.
pub fn claude_session() -> Vec<(&'static str, String)> {
    [
        ("SessionStart", Some("startup")),
        ("UserPromptSubmit", None),
        ("PreToolUse", None),
        ("PostToolUse", None),
        ("PostToolUseFailure", None),
        ("Stop", None),
        ("PreCompact", Some("manual")),
        ("SessionEnd", Some("other")),
    ]
    .iter()
    .map(|(e, v)| (*e, claude_payload(e, *v)))
    .collect()
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// blake3 of a file's bytes, to show a file was left untouched.
pub fn file_digest(path: &Path) -> String {
    blake3_hex(&std::fs::read(path).unwrap())
}

pub fn blake3_hex(b: &[u8]) -> String {
    sjournal::format::hash::content_hash(b).to_hex()
}
