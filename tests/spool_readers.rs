//! Spooled events are never invisible. An event spooled while the session's lock was held
//! is merged into the journal by the next reader (`log`, `state`, `sessions`, ...) once the
//! lock is free; while the lock is still held, readers show it marked as pending (`log`'s
//! `"pending": true` lines, `state`'s folded-in count), `verify` lists the pending spool file
//! and exits 1, and `checkpoint` refuses to sign a head that leaves it out. A spooled
//! SessionEnd — after which nothing writes to the session again — is merged by a reader, and
//! `sjournal flush` merges everything explicitly.

use crate::support;

use std::time::Duration;

use sjournal::journal::{spool, Root, Writer, WriterOptions};
use sjournal::session::Landed;

fn ev(session: &str, event: &str, n: u32) -> Vec<u8> {
    format!(r#"{{"session_id":"{session}","hook_event_name":"{event}","reason":"other","n":{n}}}"#)
        .into_bytes()
}

/// Runs the hook in-process with a short deadline, so a held lock makes it spool.
fn hook_spooled(root: &Root, event: Vec<u8>) {
    let out = support::run_hook(
        support::hook_opts(root, Duration::from_millis(100)),
        std::io::Cursor::new(event),
    );
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{out:?}"
    );
}

fn json_lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn readers_merge_the_pending_spool_first() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let holder = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    hook_spooled(&root, ev("s", "PostToolUse", 1));
    drop(holder);
    let out = support::run(dir.path(), &["log", "--session", "s", "--json"], b"");
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[1]["kind"], "PostToolUse");
    assert_eq!(lines[1]["seq"], 2, "merged into the journal, with a seq");
    assert!(spool::pending(&root, "s").unwrap().is_empty());
    support::verify_all(dir.path());
}

#[test]
fn with_the_lock_held_readers_show_pending_events_as_pending() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    support::run(
        dir.path(),
        &["append", "--session", "s"],
        &ev("s", "Stop", 0),
    );
    let holder = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    hook_spooled(&root, ev("s", "PostToolUse", 1));

    let out = support::run(dir.path(), &["log", "--session", "s", "--json"], b"");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "{out:?}");
    assert_eq!(lines[1]["pending"], true);
    assert_eq!(lines[1]["kind"], "PostToolUse");
    assert_eq!(lines[1]["payload"]["n"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not yet in the journal"));

    let out = support::run(dir.path(), &["state", "--session", "s", "--json"], b"");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pending"], 1, "{v}");
    assert_eq!(v["state"]["counts"]["by_kind"]["PostToolUse"], 1, "{v}");

    let out = support::run(dir.path(), &["verify", "--session", "s"], b"");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("PENDING s: 1 spooled event file(s)"),
        "{text}"
    );
    let out = support::run(dir.path(), &["verify", "--session", "s", "--json"], b"");
    let pending = json_lines(&out)
        .into_iter()
        .find(|l| l.get("pending_spool").is_some())
        .unwrap();
    assert_eq!(pending["pending_spool"][0]["kinds"][0], "PostToolUse");

    let cp = dir.path().join("cp");
    let out = support::run(dir.path(), &["checkpoint", "--session", "s"], b"");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "no checkpoint is signed while events are pending"
    );
    assert!(!cp.exists());

    drop(holder);
    let out = support::run(dir.path(), &["flush", "--session", "s"], b"");
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("merged 1 spooled file(s)"));
    let out = support::run(dir.path(), &["checkpoint", "--session", "s"], b"");
    assert!(out.status.success(), "{out:?}");
    support::verify_all(dir.path());
}

/// Nothing writes to a session after its SessionEnd: a spooled one is merged by a reader.
#[test]
fn a_spooled_session_end_is_merged_by_a_reader() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    support::run(
        dir.path(),
        &["append", "--session", "s"],
        &ev("s", "SessionStart", 0),
    );
    let holder = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    hook_spooled(&root, ev("s", "SessionEnd", 1));
    drop(holder);
    let out = support::run(dir.path(), &["sessions", "--json"], b"");
    assert!(out.status.success(), "{out:?}");
    assert!(spool::pending(&root, "s").unwrap().is_empty());
    let out = support::run(dir.path(), &["state", "--session", "s", "--json"], b"");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"]["ended"]["event"], "SessionEnd", "{v}");
    assert_eq!(v["pending"], 0);
}

#[test]
fn flush_all_merges_every_session() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let a = Writer::open(&root, "a", &WriterOptions::default()).unwrap();
    let b = Writer::open(&root, "b", &WriterOptions::default()).unwrap();
    hook_spooled(&root, ev("a", "PostToolUse", 1));
    hook_spooled(&root, ev("b", "PostToolUse", 2));
    let out = support::run(dir.path(), &["flush", "--all", "--wait-ms", "10"], b"");
    assert_eq!(out.status.code(), Some(1), "still locked: {out:?}");
    drop((a, b));
    let out = support::run(dir.path(), &["flush", "--all", "--json"], b"");
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["merged"] == 1 && l["pending"] == 0));
    for s in ["a", "b"] {
        assert!(spool::pending(&root, s).unwrap().is_empty());
        assert_eq!(support::payloads(dir.path(), s, "PostToolUse").len(), 1);
    }
    support::verify_all(dir.path());
}
