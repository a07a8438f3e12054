//! Helpers for the context tests: the scenario fixtures (`tests/fixtures/scenarios/`), playing
//! payloads through the library's hook path (the real commit, fold and injection policy, in
//! process), and reading back what was injected.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sjournal::format::payload::{decode_system, Injected, KIND_INJECTED};
use sjournal::hook::config::Config;
use sjournal::hook::context_bridge::FoldContext;
use sjournal::hook::protocol::HostFlag;
use sjournal::hook::{HookOptions, InputReady};
use sjournal::journal::{JournalReader, Root};

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One hook invocation of a scenario.
#[derive(Debug, Clone)]
pub struct Step {
    pub event: String,
    pub variant: Option<String>,
    pub note: String,
    pub payload: serde_json::Value,
}

impl Step {
    pub fn json(&self) -> String {
        self.payload.to_string()
    }
    pub fn session(&self) -> String {
        self.payload["session_id"].as_str().unwrap().to_owned()
    }
}

/// The steps of `tests/fixtures/scenarios/<name>.jsonl`.
pub fn scenario(name: &str) -> Vec<Step> {
    let text = std::fs::read_to_string(fixtures().join(format!("scenarios/{name}.jsonl"))).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Step {
                event: v["event"].as_str().unwrap().to_owned(),
                variant: v["variant"].as_str().map(str::to_owned),
                note: v["note"].as_str().unwrap_or("").to_owned(),
                payload: v["payload"].clone(),
            }
        })
        .collect()
}

/// A payload of the real Claude Code capture, in session `session`, with `<OUTDIR>` made
/// `/home/dev`.
pub fn real(event: &str, variant: Option<&str>, session: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(fixtures().join("claude-code/payloads-2.1.332.jsonl")).unwrap();
    let line = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["event"] == event && v["variant"].as_str() == variant)
        .unwrap_or_else(|| panic!("no {event} {variant:?} in the capture"));
    let s = line["payload"].to_string().replace("<OUTDIR>", "/home/dev");
    let mut p: serde_json::Value = serde_json::from_str(&s).unwrap();
    p["session_id"] = session.into();
    p
}

/// Runs the library's hook (the production context source) on one payload; returns the
/// context it printed (`additionalContext`), if any.
pub fn hook(root: &Root, config: &Config, payload: &str) -> Option<String> {
    let opts = HookOptions {
        root: root.clone(),
        host: HostFlag::Auto,
        deadline: Duration::from_secs(60),
        config: config.clone(),
        env_session_id: None,
        input_ready: Some(InputReady(Arc::new(|| true))),
        checkpoints: None,
    };
    let out = sjournal::hook::run(
        opts,
        std::io::Cursor::new(payload.as_bytes().to_vec()),
        Arc::new(FoldContext),
    );
    assert!(
        matches!(
            out.landed,
            Some(sjournal::hook::commit::Landed::Journal { .. })
        ),
        "the event went to the journal: {:?} {:?}",
        out.landed,
        out.diagnostics
    );
    let v: serde_json::Value = serde_json::from_str(out.stdout.as_deref()?).unwrap();
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .or_else(|| v["additional_context"].as_str())
        .map(str::to_owned)
}

/// Plays `steps` through the hook; returns what each one injected.
pub fn play(root: &Root, config: &Config, steps: &[Step]) -> Vec<Option<String>> {
    steps
        .iter()
        .map(|s| hook(root, config, &s.json()))
        .collect()
}

/// The session's `sjournal.injected` records, in order.
pub fn injected(root: &Root, session: &str) -> Vec<Injected> {
    let paths = root.session(session).unwrap();
    let r = JournalReader::open(&paths.journal, None).unwrap();
    r.records()
        .unwrap()
        .map(|r| r.unwrap())
        .filter(|r| r.kind == KIND_INJECTED)
        .map(|r| decode_system::<Injected>(r.seq, r.payload).unwrap())
        .collect()
}
