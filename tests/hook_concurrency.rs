//! Parallel PostToolUse: Claude Code runs hooks of parallel tool calls concurrently, so 16
//! `sjournal hook` processes start at once on one session, with the default deadline. Each
//! exits 0 with nothing on stdout; some may find the lock busy past their deadline and spool
//! instead. After one more append (which merges the spool), every one of the 16 events is in
//! the journal exactly once, the seqs are contiguous and the chain verifies.

use crate::support;

use std::collections::BTreeSet;
use std::io::Write;
use std::process::Stdio;

use sjournal::journal::{spool, Root};

#[test]
fn sixteen_parallel_hooks_lose_nothing() {
    parallel(&[]);
}

/// The same with a deadline so short that most hooks spool, while others merge the spool:
/// spool writers racing the merge.
#[test]
fn sixteen_parallel_hooks_with_a_tiny_deadline() {
    parallel(&["--deadline-ms", "4"]);
}

fn parallel(flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let payload = |i: usize| {
        format!(
            r#"{{"session_id":"par","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"echo {i}"}},"tool_use_id":"toolu_{i:02}","tool_response":{{"stdout":"{i}"}}}}"#
        )
    };
    let children: Vec<_> = (0..16)
        .map(|i| {
            let mut c = support::spawnable(root)
                .arg("hook")
                .args(flags)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin
                .take()
                .unwrap()
                .write_all(payload(i).as_bytes())
                .unwrap();
            c
        })
        .collect();
    // What each hook said on stderr, shown if an event is missing.
    let mut said = String::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        said.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let spooled = spool::pending(&Root::new(root), "par").unwrap().len();
    let out = support::run(
        root,
        &["append", "--session", "par"],
        br#"{"session_id":"par","hook_event_name":"Stop"}"#,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(spool::pending(&Root::new(root), "par").unwrap().is_empty());

    let recs = support::records(root, "par");
    let seqs: Vec<u64> = recs.iter().map(|r| r.0).collect();
    assert_eq!(
        seqs,
        (1..=recs.len() as u64).collect::<Vec<_>>(),
        "contiguous"
    );
    let ids: Vec<String> = recs
        .iter()
        .filter(|r| r.1 == "PostToolUse")
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r.2).unwrap()["tool_use_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    eprintln!("{spooled} of 16 were spooled");
    assert_eq!(
        ids.len(),
        16,
        "no loss, no duplicate ({spooled} were spooled); the hooks said:\n{said}"
    );
    let distinct: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 16);
    support::verify_all(root);
}
