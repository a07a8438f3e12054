//! Terminal escape injection: session ids, working directories and payload text come from
//! hosts and files, and used to be printed raw by `sessions`, `state` and the other human
//! outputs, so an ESC sequence could rewrite the screen or the window title, a carriage return
//! overwrite a line, and a bidi override reverse what a line seems to say. Every human-facing
//! output (and every error message quoting an id or a path) now escapes control and bidi
//! characters; the `--json` outputs stay exact.

use crate::support as common;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// ESC (an OSC title change, a CSI clear), BEL, CR, LF, a C1 CSI, and bidi overrides.
const EVIL_ID: &str = "evil\u{1b}]0;pwned\u{7}\r\u{202e}ko\u{2066}\n\u{9b}2J";
const EVIL_CWD: &str = "/tmp/\u{1b}[31mred\u{202d}";
const EVIL_PROMPT: &str = "hi \u{1b}[2J\r\u{2069}there";

fn cli(root: &Path) -> Command {
    let mut c = Command::new(common::bin());
    c.arg("--root").arg(root);
    c
}

fn unsafe_chars(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| c != '\n' && sjournal::escape::is_unsafe(c))
        .collect()
}

/// Runs a command; stdout and stderr must hold no character a terminal acts on.
fn clean(root: &Path, args: &[&str]) -> (String, String) {
    let out = cli(root).args(args).output().unwrap();
    let (o, e) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        unsafe_chars(&o).is_empty(),
        "{args:?} stdout: {:?}",
        unsafe_chars(&o)
    );
    assert!(
        unsafe_chars(&e).is_empty(),
        "{args:?} stderr: {:?}",
        unsafe_chars(&e)
    );
    (o, e)
}

fn evil_root(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("root");
    let payload = serde_json::json!({
        "session_id": EVIL_ID,
        "hook_event_name": "UserPromptSubmit",
        "cwd": EVIL_CWD,
        "prompt": EVIL_PROMPT,
    })
    .to_string();
    let out = cli(&root)
        .arg("hook")
        .write_stdin(payload)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    root
}

#[test]
fn human_outputs_escape_control_and_bidi_characters() {
    let dir = common::scratch();
    let root = evil_root(dir.path());
    let (o, _) = clean(&root, &["sessions"]);
    assert!(
        o.contains("evil\\x1b]0;pwned\\x07\\r\\u{202e}ko\\u{2066}\\n\\u{9b}2J"),
        "{o}"
    );
    assert!(o.contains("/tmp/\\x1b[31mred\\u{202d}"), "{o}");
    assert_eq!(
        o.lines().count(),
        3,
        "a line break in the id started a row: {o}"
    );
    let (o, _) = clean(&root, &["state", "--session", EVIL_ID]);
    assert!(o.contains("evil\\x1b"), "{o}");
    let (o, _) = clean(&root, &["log", "--session", EVIL_ID]);
    let records = cli(&root)
        .args(["log", "--session", EVIL_ID, "--json"])
        .output()
        .unwrap()
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(o.lines().count(), records, "one line per record: {o}");
    clean(&root, &["tail", "--session", EVIL_ID]);
    clean(&root, &["replay", "--session", EVIL_ID]);
    clean(&root, &["verify", "--session", EVIL_ID]);
    clean(&root, &["verify", "--all"]);
    clean(&root, &["context", "show", "--session", EVIL_ID]);
    let (o, _) = clean(&root, &["show", "--session", EVIL_ID, "prompts"]);
    assert!(o.contains("there"), "{o}");
    let stem = sjournal::journal::paths::file_stem(EVIL_ID).unwrap();
    let file = root.join(format!("sessions/{stem}.sjl"));
    let (o, _) = clean(&root, &["inspect", file.to_str().unwrap()]);
    assert!(o.contains("header"), "{o}");
}

#[test]
fn error_messages_quoting_ids_and_paths_are_escaped() {
    let dir = common::scratch();
    let root = evil_root(dir.path());
    let (_, e) = clean(&root, &["log", "--session", "no\u{1b}[2Jsuch\u{202e}"]);
    assert!(e.contains("no journal for session"), "{e}");
    let bad_root = dir.path().join("r\u{1b}]0;x\u{7}");
    std::fs::write(&bad_root, b"a file, not a directory").unwrap();
    let (_, e) = clean(&bad_root, &["append", "--session", "s"]);
    assert!(e.contains("error"), "{e}");
}

#[test]
fn json_outputs_stay_exact() {
    let dir = common::scratch();
    let root = evil_root(dir.path());
    let out = cli(&root).args(["sessions", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["session_id"], EVIL_ID);
    assert_eq!(v["project"], EVIL_CWD);
    let out = cli(&root)
        .args(["state", "--session", EVIL_ID, "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"]["prompts"][0]["text"], EVIL_PROMPT);
    // Bidi characters are valid raw in JSON strings and stay as they are.
    assert!(String::from_utf8(out.stdout).unwrap().contains('\u{2069}'));
    let out = cli(&root)
        .args(["show", "--session", EVIL_ID, "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["session"], EVIL_ID);
}
