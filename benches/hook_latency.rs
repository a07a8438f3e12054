//! Hook latency, spawn to exit: runs the built `sjournal-hook hook` (what `sjournal install`
//! points hosts at) as a host would (a new process
//! per event, the event on stdin) against a session that already holds 10, then 1,000,000
//! events, and prints the median, p90 and max wall time per invocation.
//!
//! `cargo bench --bench hook_latency` for the full run (about a minute, ~200 MB of journal in a
//! temporary directory); under `cargo test` it only checks that it runs (a few invocations).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sjournal::format::payload::encode_event_json;
use sjournal::journal::{Root, Writer, WriterOptions};

const SESSION: &str = "bench-0000-4000-8000-000000000001";

fn event(i: u64) -> String {
    format!(
        r#"{{"session_id":"{SESSION}","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"echo {i}"}},"tool_use_id":"toolu_{i}","tool_response":{{"stdout":"{i}"}}}}"#
    )
}

/// Fills the session with `n` events, in batches (one fsync each).
fn fill(root: &Root, n: u64) {
    let mut w = Writer::open(root, SESSION, &WriterOptions::default()).unwrap();
    let mut i = 0;
    while i < n {
        let k = (n - i).min(20_000);
        let payloads: Vec<Vec<u8>> = (i..i + k).map(|j| encode_event_json(&event(j))).collect();
        let items: Vec<(&str, &[u8])> = payloads
            .iter()
            .map(|p| ("PostToolUse", p.as_slice()))
            .collect();
        w.append_batch(&items).unwrap();
        i += k;
    }
}

fn run_once(root: &Root, payload: &str, deadline_ms: &str) -> Duration {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sjournal-hook"))
        .arg("--root")
        .arg(root.dir())
        .args(["hook", "--host", "claude", "--deadline-ms", deadline_ms])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn report(label: &str, mut t: Vec<Duration>) {
    t.sort();
    let q = |p: f64| t[((t.len() - 1) as f64 * p).round() as usize];
    println!(
        "{label:<40} n={:<4} median {:>7.2} ms  p90 {:>7.2} ms  max {:>7.2} ms",
        t.len(),
        q(0.5).as_secs_f64() * 1e3,
        q(0.9).as_secs_f64() * 1e3,
        t[t.len() - 1].as_secs_f64() * 1e3
    );
}

/// SessionStart(startup) without a project (no `cwd`: memory is not looked at) against the
/// same event in a project whose journal holds reviewed memory, pending proposals and an
/// unfinished last session (so the hook reads the project and global journals, the last
/// session's state, injects memory and the handoff, and records the session after the
/// reply). `cargo bench --bench hook_latency -- memory` runs only this.
fn memory_rows(runs: usize, deadline_ms: &str) {
    use sjournal::memory::{ops, Scope};
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path().join("root"));
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let project = std::fs::canonicalize(project).unwrap();
    let scope = Scope::Project(project.to_string_lossy().into_owned());
    let opts = WriterOptions::default();
    for i in 0..40 {
        let op = ops::propose(
            &format!("Always run check {i} before finishing."),
            "explicit",
            None,
            None,
            None,
        );
        let id = op.id.clone();
        ops::apply_one(&root, &scope, op, &opts).unwrap();
        if i % 2 == 0 {
            ops::apply_one(
                &root,
                &scope,
                ops::on_item("accept", &id, None, None),
                &opts,
            )
            .unwrap();
        }
    }
    // The last session: a prompt and a failing command, no Stop (unfinished).
    let cwd = project.to_string_lossy();
    let prev = "bench-prev-0000-0000-000000000001";
    for ev in [
        format!(
            r#"{{"session_id":"{prev}","cwd":"{cwd}","hook_event_name":"SessionStart","source":"startup"}}"#
        ),
        format!(
            r#"{{"session_id":"{prev}","cwd":"{cwd}","hook_event_name":"UserPromptSubmit","prompt":"Fix the build."}}"#
        ),
        format!(
            r#"{{"session_id":"{prev}","cwd":"{cwd}","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{{"command":"make check"}},"tool_use_id":"t1","error":"exit 2: missing target"}}"#
        ),
    ] {
        run_once(&root, &ev, deadline_ms);
    }
    for (label, with_cwd) in [
        ("SessionStart startup, no project", false),
        ("SessionStart startup, project memory", true),
    ] {
        let t: Vec<Duration> = (0..runs)
            .map(|_| {
                // One session started again and again: the handoff from `prev` every time.
                let (id, cwd) = if with_cwd {
                    ("bench-start-mem", format!(r#","cwd":"{cwd}""#))
                } else {
                    ("bench-start-none", String::new())
                };
                let ev = format!(
                    r#"{{"session_id":"{id}"{cwd},"hook_event_name":"SessionStart","source":"startup"}}"#
                );
                run_once(&root, &ev, deadline_ms)
            })
            .collect();
        report(label, t);
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    if std::env::args().any(|a| a == "memory") {
        memory_rows(
            if full { 200 } else { 3 },
            if full { "250" } else { "60000" },
        );
        return;
    }
    let (runs, big) = if full { (200, 1_000_000) } else { (3, 1_000) };
    // Under `cargo test` (a loaded machine) only the run is checked, never the deadline.
    let deadline_ms = if full { "250" } else { "60000" };
    for prior in [10, big] {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let t0 = Instant::now();
        fill(&root, prior);
        eprintln!(
            "filled {prior} events in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
        for (label, payload) in [
            ("PostToolUse", event(u64::MAX)),
            (
                "SessionStart (context event)",
                format!(
                    r#"{{"session_id":"{SESSION}","hook_event_name":"SessionStart","source":"compact"}}"#
                ),
            ),
        ] {
            let t: Vec<Duration> = (0..runs)
                .map(|_| run_once(&root, &payload, deadline_ms))
                .collect();
            report(&format!("{label}, {prior} prior events"), t);
        }
    }
    memory_rows(runs, deadline_ms);
}
