//! `sjournal sessions`: every session under a root with its host and project taken from its
//! events (Claude Code, Codex and Cursor payload shapes), its first and last record time,
//! counts, size on disk and verify status; filtered by project directory; a damaged session
//! is listed as such and makes the exit code 1. Also: `verify --all` over many sessions
//! prints no progress bar when stderr is not a terminal (the bar is for people, never for
//! pipes or `--json`). A session's time span is its own records', not the webhook
//! deliverer's bookkeeping written after it ended.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::*;

fn append(root: &Path, session: &str, json: &str) {
    sjournal(root)
        .args(["append", "--session", session])
        .write_stdin(json.to_owned())
        .assert()
        .success();
}

fn sessions(root: &Path, extra: &[&str]) -> (i32, Vec<Value>) {
    let out = sjournal(root)
        .args(["sessions", "--json"])
        .args(extra)
        .output()
        .unwrap();
    let v = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap(), v)
}

#[test]
fn lists_sessions_with_host_project_and_status() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for (kind, json) in claude_session() {
        let json = json.replace("<OUTDIR>/project", "/projects/alpha");
        sjournal(r)
            .args(["append", "--session", "claude-1", "--kind", kind])
            .write_stdin(json)
            .assert()
            .success();
    }
    append(
        r,
        "codex-1",
        r#"{"session_id":"codex-1","turn_id":"t1","transcript_path":null,"cwd":"/projects/beta/sub","hook_event_name":"SessionStart","model":"gpt-5","source":"startup"}"#,
    );
    append(
        r,
        "cursor-1",
        r#"{"hook_event_name":"beforeSubmitPrompt","conversation_id":"c1","generation_id":"g1","workspace_roots":["/projects/alpha/web"],"prompt":"hi"}"#,
    );
    let (code, list) = sessions(r, &[]);
    assert_eq!(code, 0);
    assert_eq!(list.len(), 3);
    let by_id = |id: &str| list.iter().find(|s| s["session_id"] == id).unwrap().clone();
    let c = by_id("claude-1");
    assert_eq!(c["host"], "claude");
    assert_eq!(c["project"], "/projects/alpha");
    assert_eq!(c["records"], 8);
    assert_eq!(c["kinds"]["PostToolUse"], 1);
    assert_eq!(c["ok"], true);
    assert!(c["first_ts_unix_ns"].as_i64() <= c["last_ts_unix_ns"].as_i64());
    let size = std::fs::metadata(r.join("sessions/claude-1.sjl"))
        .unwrap()
        .len();
    assert_eq!(c["bytes"], size);
    assert_eq!(by_id("codex-1")["host"], "codex");
    assert_eq!(by_id("codex-1")["model"], "gpt-5");
    assert_eq!(by_id("cursor-1")["host"], "cursor");
    assert_eq!(by_id("cursor-1")["project"], "/projects/alpha/web");
    // Oldest first.
    let firsts: Vec<i64> = list
        .iter()
        .map(|s| s["first_ts_unix_ns"].as_i64().unwrap())
        .collect();
    assert!(firsts.windows(2).all(|w| w[0] <= w[1]));

    // Filtered by project: the directory or anything inside it, whole components only.
    let (_, alpha) = sessions(r, &["--project", "/projects/alpha"]);
    let mut ids: Vec<_> = alpha
        .iter()
        .map(|s| s["session_id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["claude-1", "cursor-1"]);
    let (_, none) = sessions(r, &["--project", "/projects/alp"]);
    assert!(none.is_empty());

    // Text output names every session.
    let out = sjournal(r).arg("sessions").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for id in ["claude-1", "codex-1", "cursor-1"] {
        assert!(text.contains(id), "{text}");
    }
}

#[test]
fn damaged_session_is_listed_as_bad() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for i in 0..3 {
        append(
            r,
            "good",
            &format!(r#"{{"hook_event_name":"Stop","i":{i}}}"#),
        );
        append(
            r,
            "bad",
            &format!(r#"{{"hook_event_name":"Stop","i":{i}}}"#),
        );
    }
    let path = r.join("sessions/bad.sjl");
    let mut b = std::fs::read(&path).unwrap();
    let n = b.len();
    b[n - 40] ^= 4;
    std::fs::write(&path, b).unwrap();
    let (code, list) = sessions(r, &[]);
    assert_eq!(code, 1);
    let bad = list.iter().find(|s| s["session_id"] == "bad").unwrap();
    assert_eq!(bad["ok"], false);
    assert!(bad["problem"].as_str().unwrap().contains("offset"), "{bad}");
    assert_eq!(bad["records"], 2);
    let good = list.iter().find(|s| s["session_id"] == "good").unwrap();
    assert_eq!(good["ok"], true);
}

#[test]
fn no_progress_bar_when_piped() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for s in 0..5 {
        append(r, &format!("s{s}"), r#"{"hook_event_name":"Stop"}"#);
    }
    for json in [false, true] {
        let mut c = sjournal(r);
        c.args(["verify", "--all"]);
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert!(out.status.success());
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = String::from_utf8(out.stdout).unwrap();
        assert_eq!(lines.lines().count(), if json { 5 } else { 6 });
    }
}

#[test]
fn webhook_attempts_after_the_end_do_not_move_the_sessions_end_time() {
    use sjournal::fold::digest::encode_event;
    use sjournal::format::payload::{encode_system, KIND_WEBHOOK};
    use sjournal::journal::{Root, Writer, WriterOptions};
    let root = tempfile::tempdir().unwrap();
    let r = Root::new(root.path());
    let mut w = Writer::open(&r, "wh", &WriterOptions::default()).unwrap();
    let (t0, t1) = (1_767_225_600_000_000_000_i64, 1_767_225_660_000_000_000_i64);
    let ev = encode_event("Stop", r#"{"hook_event_name":"Stop","session_id":"wh"}"#);
    w.append_batch_at(t0, &[("Stop", &ev)]).unwrap();
    let attempt = encode_system(&serde_json::json!({"webhook": "w", "event_seq": 1}));
    w.append_batch_at(t1, &[(KIND_WEBHOOK, &attempt)]).unwrap();
    drop(w);
    let (code, v) = sessions(root.path(), &[]);
    assert_eq!(code, 0, "{v:?}");
    assert_eq!(v[0]["records"], 2, "{v:?}");
    assert_eq!(v[0]["first_ts_unix_ns"].as_i64(), Some(t0), "{v:?}");
    assert_eq!(v[0]["last_ts_unix_ns"].as_i64(), Some(t0), "{v:?}");
}
