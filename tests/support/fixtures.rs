//! The fixture corpora under `tests/fixtures`: recorded Claude Code payloads and the
//! constructed payloads of the other hosts.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One fixture payload, with its JSON text exactly as in the file.
#[derive(Debug)]
pub struct Fixture {
    pub file: String,
    pub event: String,
    pub variant: Option<String>,
    pub expect: Option<Expect>,
    pub raw: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Expect {
    pub host: String,
    pub kind: String,
    pub session: String,
    pub tool: Option<String>,
}

#[derive(Deserialize)]
struct Line<'a> {
    event: String,
    variant: Option<String>,
    expect: Option<Expect>,
    #[serde(borrow)]
    payload: &'a RawValue,
}

/// The `*.jsonl` files of the fixture directory `dir`, sorted.
fn jsonl_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// Every fixture line of `dir/*.jsonl`, in file then line order.
pub fn load_dir(dir: &str) -> Vec<Fixture> {
    let mut out = Vec::new();
    for f in jsonl_files(dir) {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let l: Line = serde_json::from_str(line).unwrap();
            out.push(Fixture {
                file: f.file_name().unwrap().to_string_lossy().into_owned(),
                event: l.event,
                variant: l.variant,
                expect: l.expect,
                raw: l.payload.get().to_owned(),
            });
        }
    }
    out
}

/// The fixture directories holding hook payloads, one per host (`constructed`: every other
/// host's constructed payloads).
pub const PAYLOAD_DIRS: &[&str] = &[
    "claude-code",
    "cline",
    "codex",
    "constructed",
    "cursor",
    "gemini",
    "openclaw",
    "opencode",
    "pi",
];

/// One hook payload of [`all_payloads`].
#[derive(Debug)]
pub struct Payload {
    pub file: PathBuf,
    /// The event the line names (a valid record kind or not), if it names one.
    pub event: Option<String>,
    /// The payload's JSON text, byte for byte.
    pub json: String,
}

/// Every hook payload of every host's fixtures ([`PAYLOAD_DIRS`]), in directory, file and
/// line order. Lines without a payload (OpenClaw's raw plugin captures) are left out.
pub fn all_payloads() -> Vec<Payload> {
    #[derive(Deserialize)]
    struct AnyLine<'a> {
        /// In OpenClaw's raw plugin captures, the event object itself.
        event: Option<serde_json::Value>,
        #[serde(borrow)]
        payload: Option<&'a RawValue>,
    }
    let mut out = Vec::new();
    for dir in PAYLOAD_DIRS {
        for f in jsonl_files(dir) {
            let text = std::fs::read_to_string(&f).unwrap();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let l: AnyLine = serde_json::from_str(line).unwrap();
                let Some(p) = l.payload else { continue };
                out.push(Payload {
                    file: f.clone(),
                    event: l.event.and_then(|e| e.as_str().map(str::to_owned)),
                    json: p.get().to_owned(),
                });
            }
        }
    }
    out
}

pub fn real_claude() -> Vec<Fixture> {
    load_dir("claude-code")
}

pub fn constructed() -> Vec<Fixture> {
    load_dir("constructed")
}

/// Fixture payloads: (event, payload JSON text) per line of a fixture file.
pub fn fixture(rel: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["event"].as_str().unwrap().to_owned(),
                serde_json::to_string(&v["payload"]).unwrap(),
            )
        })
        .collect()
}

pub const CLAUDE_FIXTURE: &str = include_str!("../fixtures/claude-code/payloads-2.1.332.jsonl");

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
