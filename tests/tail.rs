//! `sjournal tail`: the last records of a session, and with `--follow` the records other
//! processes append while it runs. The follower is started before the session exists, then
//! events are appended through the CLI (separate processes); its output is read line by line
//! until the expected records arrive (bounded waits only to keep a broken build from hanging:
//! nothing here asserts how fast). A torn tail left by a crashed writer is waited on, and
//! once the next writer recovers it, the recovery record and the new event show up. Closing
//! the follower's output ends it.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// Generous bound on how long to wait for a line before calling the test failed.
const PATIENCE: Duration = Duration::from_secs(60);

fn append(root: &Path, session: &str, i: u32) {
    sjournal(root)
        .args(["append", "--session", session])
        .write_stdin(format!(r#"{{"hook_event_name":"PostToolUse","i":{i}}}"#))
        .assert()
        .success();
}

/// Starts `tail --follow --json`; its stdout lines arrive on the returned channel.
fn follow(root: &Path, session: &str) -> (Child, Receiver<String>) {
    let mut child = support::spawnable(root)
        .args(["tail", "--follow", "--json", "--interval-ms", "20"])
        .args(["--session", session])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The next `n` lines as JSON, failing the test if they do not come.
fn next_lines(rx: &Receiver<String>, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + PATIENCE;
    (0..n)
        .map(|i| {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("line {i} of {n} did not come: {e}"));
            serde_json::from_str(&line).unwrap()
        })
        .collect()
}

#[test]
fn last_n_records() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for i in 0..7 {
        append(r, "s", i);
    }
    let out = sjournal(r)
        .args(["tail", "--json", "-n", "3", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let seqs: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [5, 6, 7]);
    // A session that does not exist is an error without --follow.
    sjournal(r)
        .args(["tail", "--session", "nope"])
        .assert()
        .code(2);
}

#[test]
fn follow_shows_records_appended_by_other_processes() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    // Started before the session exists.
    let (mut child, rx) = follow(r, "live");
    for i in 0..3 {
        append(r, "live", i);
    }
    let got = next_lines(&rx, 3);
    let seqs: Vec<_> = got.iter().map(|v| v["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(got[2]["payload"]["i"], 2);

    // A crashed writer leaves half a record; the follower waits at it. The next writer
    // recovers the tail, and the follower shows the recovery record and the new event.
    let path = r.join("sessions/live.sjl");
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[0x90, 0x00, 0x00, 0x00, 4, 0, 0, 0]).unwrap();
    }
    let _ = std::fs::write(r.join("sessions/live.lock"), b"");
    append(r, "live", 3);
    let got = next_lines(&rx, 2);
    assert_eq!(got[0]["kind"], "sjournal.recovered");
    assert_eq!(got[0]["seq"], 4);
    assert_eq!(got[1]["seq"], 5);
    assert_eq!(got[1]["payload"]["i"], 3);

    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn closing_the_output_ends_the_follower() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append(r, "s", 0);
    let (mut child, rx) = follow(r, "s");
    next_lines(&rx, 1);
    drop(rx); // the reader thread ends at its next line, closing the pipe
    append(r, "s", 1);
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("tail --follow kept running after its output was closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
