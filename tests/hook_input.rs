//! Input the hook receives is never dropped. A host writes a 1 MB event slowly (16 KiB chunks
//! with pauses, seconds in all) to a hook whose deadline is 50 ms: the hook reads it to its
//! end and the event is journaled byte for byte (the deadline bounds waiting for the lock and
//! for work, counted from the input's end, never received input). A host that stops
//! writing half way past the input time limit: what arrived is journaled as
//! `sjournal.unparsed`, with the reason. An input longer than a record holds keeps its first
//! 16 MiB − 4 KiB, the record gives the whole input's length and blake3, `log` marks it cut,
//! and the user is told through the host's visible channel (`systemMessage`).

use crate::support;

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use sjournal::format::hash::content_hash;
use sjournal::format::payload::{self, Unparsed, KIND_UNPARSED};
use sjournal::limits::INPUT_MAX_BYTES;

/// A Claude Code PostToolUse of about `size` bytes.
fn big_event(session: &str, size: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"session_id":"{session}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{{"stdout":""#
    );
    let tail = r#""}}"#;
    let mut v = head.into_bytes();
    let fill = size - v.len() - tail.len();
    v.extend((0..fill).map(|i| b'a' + (i % 26) as u8));
    v.extend_from_slice(tail.as_bytes());
    v
}

fn config(root: &std::path::Path, text: &str) {
    std::fs::write(root.join("config.toml"), text).unwrap();
}

/// Spawns `sjournal hook` and writes `chunks` to its stdin with `pause` between them;
/// `keep_open` keeps stdin open after the last one (until the hook exits).
fn hook_fed(
    root: &std::path::Path,
    args: &[&str],
    chunks: &[&[u8]],
    pause: Duration,
    keep_open: bool,
) -> std::process::Output {
    let mut child = support::spawnable(root)
        .arg("hook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for c in chunks {
        if stdin.write_all(c).is_err() {
            break;
        }
        std::thread::sleep(pause);
    }
    let held = keep_open.then_some(stdin);
    let out = child.wait_with_output().unwrap();
    drop(held);
    out
}

#[test]
fn a_slow_writer_of_one_megabyte_is_journaled_byte_equal() {
    let dir = support::scratch();
    // Generous on a loaded machine; the deadline is 50 ms.
    config(dir.path(), "[hook]\ninput_timeout_ms = 120000\n");
    let event = big_event("slow", 1 << 20);
    let chunks: Vec<&[u8]> = event.chunks(16 * 1024).collect();
    // 64 chunks, 30 ms apart: about two seconds, well past the deadline and its grace.
    let out = hook_fed(
        dir.path(),
        &["--deadline-ms", "50"],
        &chunks,
        Duration::from_millis(30),
        false,
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("nothing was recorded"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "a PostToolUse of a new session gets nothing: {out:?}"
    );
    // Journaled (or, had the lock been busy, spooled and merged by this flush).
    let flushed = support::run(dir.path(), &["flush", "--session", "slow"], b"");
    assert!(flushed.status.success(), "{flushed:?}");
    let recs = support::payloads(dir.path(), "slow", "PostToolUse");
    assert_eq!(recs.len(), 1, "{err}");
    let (seq, _, p) = &recs[0];
    assert_eq!(
        payload::decode_event(*seq, p).unwrap().as_bytes(),
        &event[..],
        "byte for byte"
    );
    support::verify_all(dir.path());
}

#[test]
fn input_cut_off_by_the_time_limit_keeps_what_arrived() {
    let dir = support::scratch();
    config(dir.path(), "[hook]\ninput_timeout_ms = 300\n");
    let event = big_event("half", 64 * 1024);
    let half = &event[..40 * 1024];
    // The host writes 40 KiB and then nothing, holding stdin open.
    let out = hook_fed(
        dir.path(),
        &["--deadline-ms", "50"],
        &[half],
        Duration::ZERO,
        true,
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("input time limit"), "{err}");
    support::run(dir.path(), &["flush", "--all"], b"");
    let u = support::payloads(dir.path(), "half", KIND_UNPARSED);
    assert_eq!(
        u.len(),
        1,
        "the session id was salvaged from what arrived: {err}"
    );
    let rec: Unparsed = payload::decode_system(u[0].0, &u[0].2).unwrap();
    assert_eq!(rec.raw, half);
    assert!(rec.error.contains("input time limit"), "{}", rec.error);
}

#[test]
fn an_input_longer_than_a_record_is_cut_and_says_so() {
    let dir = support::scratch();
    let total = 17 << 20;
    let event = big_event("huge", total);
    let out = support::run(
        dir.path(),
        &[
            "hook",
            "--host",
            "claude",
            "--deadline-ms",
            support::PATIENT_MS,
        ],
        &event,
    );
    assert_eq!(out.status.code(), Some(0));
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notice = reply["systemMessage"].as_str().unwrap();
    assert!(notice.contains("rest is left out"), "{notice}");

    let u = support::payloads(dir.path(), "huge", KIND_UNPARSED);
    assert_eq!(u.len(), 1);
    let rec: Unparsed = payload::decode_system(u[0].0, &u[0].2).unwrap();
    assert_eq!(rec.raw, &event[..INPUT_MAX_BYTES]);
    assert_eq!(rec.input_len, Some(total as u64));
    assert_eq!(
        rec.input_blake3.as_deref(),
        Some(content_hash(&event).to_hex().as_str())
    );
    let log = support::run(dir.path(), &["log", "--session", "huge"], b"");
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(
        text.contains(&format!(
            "[CUT: {INPUT_MAX_BYTES} of {total} input bytes kept"
        )),
        "{text}"
    );
}
