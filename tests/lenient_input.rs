//! Valid-looking input that serde_json refuses: a lone surrogate escape (`\ud83d`, what a
//! JavaScript host writes when it cuts a string in the middle of an emoji) and a number out
//! of `f64` range (`1e400`). Both used to turn the whole event into a `sjournal.unparsed`
//! record, so the event did not count (no turn, no tool call, no context). Now the hook
//! journals them as events with their bytes exactly as sent, and the fold reads them
//! leniently: the lone surrogate as U+FFFD, the number as its text.

use crate::support as common;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn cli(root: &Path) -> Command {
    let mut c = Command::new(common::bin());
    c.arg("--root").arg(root);
    c
}

fn state(root: &Path) -> Value {
    let out = cli(root)
        .args(["state", "--session", "s", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["state"].clone()
}

const PROMPT: &str =
    r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"fix the bug \ud83d"}"#;
const TOOL: &str = r#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"ls","n":1e400},"duration_ms":1e400}"#;

#[test]
fn the_hook_journals_them_as_events_byte_for_byte() {
    let dir = common::scratch();
    let root = dir.path();
    for p in [PROMPT, TOOL] {
        let out = cli(root).arg("hook").write_stdin(p).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let p = common::parse(&common::read(&root.join("sessions/s.sjl")));
    let events: Vec<(String, String)> = p
        .records
        .iter()
        .filter(|r| !r.kind.starts_with("sjournal."))
        .map(|r| (r.kind.clone(), r.json()))
        .collect();
    assert_eq!(
        events,
        [
            ("UserPromptSubmit".to_owned(), PROMPT.to_owned()),
            ("PostToolUse".to_owned(), TOOL.to_owned())
        ]
    );
    let s = state(root);
    assert_eq!(s["journal"]["unparsed"], 0, "{s}");
    assert_eq!(s["turns"]["count"], 1, "{s}");
    assert_eq!(s["tools"]["calls"], 1, "{s}");
    assert_eq!(s["prompts"][0]["text"], "fix the bug \u{fffd}", "{s}");
    // `sjournal show` reads the journal's events itself, as leniently as the fold.
    let out = cli(root)
        .args(["show", "--session", "s", "prompts", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["prompts"][0]["text"], "fix the bug \u{fffd}", "{v}");
}

/// The injection point of an event is read as leniently as the fold reads it: a compaction's
/// SessionStart whose payload has a lone surrogate still gets the recovery context, as the
/// same event without it does, and replay re-derives it.
#[test]
fn a_lone_surrogate_does_not_cost_the_context() {
    let context = |start: &str| {
        let dir = common::scratch();
        let root = dir.path();
        let mut printed = Vec::new();
        for p in [PROMPT, start] {
            let out = cli(root).arg("hook").write_stdin(p).output().unwrap();
            assert_eq!(out.status.code(), Some(0));
            printed = out.stdout;
        }
        let out = cli(root)
            .args(["replay", "--session", "s", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let last = String::from_utf8(out.stdout).unwrap();
        let fin: Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
        assert_eq!(fin["differing"], serde_json::json!([]), "{fin}");
        String::from_utf8(printed).unwrap()
    };
    let plain =
        r#"{"session_id":"s","hook_event_name":"SessionStart","source":"compact","cwd":"/p"}"#;
    let cut = r#"{"session_id":"s","hook_event_name":"SessionStart","source":"compact","cwd":"/p\ud83d"}"#;
    let (a, b) = (context(plain), context(cut));
    assert!(a.contains("Original request: fix the bug"), "{a}");
    assert_eq!(a, b);
}

#[test]
fn append_and_import_accept_them_too() {
    let dir = common::scratch();
    let root = dir.path();
    cli(root)
        .args(["append", "--session", "s"])
        .write_stdin(PROMPT)
        .assert()
        .success();
    cli(root)
        .args(["import", "--session", "s", "-"])
        .write_stdin(format!("{TOOL}\n"))
        .assert()
        .success();
    let s = state(root);
    assert_eq!(
        (s["turns"]["count"].as_u64(), s["tools"]["calls"].as_u64()),
        (Some(1), Some(1))
    );
}
