//! The viewer while agents work (feature `viewer`), measured end to end with the real binary
//! and Debian's Chromium:
//!
//! 1. **Live latency**: a hook runs (spawn to exit: its ack), and the open Sessions page
//!    receives the record over server-sent events. The page notes when each record first
//!    reached it (`Date.now()`), the bench when each hook exited; the difference per record,
//!    median and p95. Same clock (this machine's), millisecond resolution.
//! 2. **The hook with the viewer open**: hooks on a root the viewer watches (with a session
//!    page following the session) against hooks on a root no viewer watches, interleaved in
//!    one run, same binary: p50 and p90 of each, and the ratio.
//!
//! `SJOURNAL_BIN` names the binary (built with `--features viewer`; default
//! `target/release/sjournal`), `RUNS` the hooks per measurement (default 200). Run with
//! `cargo bench --features viewer --bench viewer_live`; under `cargo test` it does nothing.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use headless_chrome::{Browser, LaunchOptions};
use serde_json::{json, Value};

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

fn q(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((p * v.len() as f64) as usize).min(v.len() - 1)]
}

/// One PostToolUse of Claude Code's shape; returns (start, ack) in ms since the epoch.
fn hook(bin: &Path, root: &Path, session: &str, i: usize) -> (f64, f64) {
    let payload = json!({
        "session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": "/home/dev/app",
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": format!("toolu_{i:06}"),
        "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "ok", "stderr": ""},
        "duration_ms": 12
    })
    .to_string();
    let start = now_ms();
    let mut child = Command::new(bin)
        .args(["--root"])
        .arg(root)
        .args(["hook", "--host", "claude", "--deadline-ms", "10000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    (start, now_ms())
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let bin = PathBuf::from(
        std::env::var("SJOURNAL_BIN").unwrap_or_else(|_| "target/release/sjournal".into()),
    );
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200);
    let watched = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let session = "live-bench-0b4f7c1e";
    for i in 0..10 {
        hook(&bin, watched.path(), session, i);
        hook(&bin, plain.path(), session, i);
    }
    let mut serve = Command::new(&bin)
        .arg("--root")
        .arg(watched.path())
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("sjournal serve (built with --features viewer?)");
    let mut out = BufReader::new(serve.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
    });
    let url = line
        .trim()
        .strip_prefix("sjournal serve: ")
        .expect("the URL")
        .to_owned();
    let profile = tempfile::tempdir().unwrap();
    let args: Vec<&std::ffi::OsStr> = [
        "--disable-gpu",
        "--disable-quic",
        "--disable-component-update",
    ]
    .iter()
    .map(std::ffi::OsStr::new)
    .collect();
    let browser = Browser::new(
        LaunchOptions::default_builder()
            .path(Some("/usr/bin/chromium".into()))
            .headless(true)
            .sandbox(false)
            .user_data_dir(Some(profile.path().to_owned()))
            .idle_browser_timeout(Duration::from_secs(3600))
            .args(args)
            .build()
            .unwrap(),
    )
    .unwrap();
    let eval = |tab: &headless_chrome::Tab, js: &str| -> Value {
        let r = tab
            .evaluate(&format!("JSON.stringify({js})"), false)
            .unwrap();
        serde_json::from_str(r.value.unwrap().as_str().unwrap()).unwrap()
    };
    let list = browser.new_tab().unwrap();
    list.navigate_to(&url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    let follow = browser.new_tab().unwrap();
    follow
        .navigate_to(&url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    follow
        .evaluate(&format!("location.hash = '#/session/{session}'"), false)
        .unwrap();
    let t = Instant::now();
    while eval(&list, "!!document.querySelector('tr[data-key]')") != json!(true) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the page never listed the session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // 1. Live latency: one hook at a time, 50 ms apart.
    let mut acks = Vec::new();
    for i in 0..runs {
        let (_, ack) = hook(&bin, watched.path(), session, 100 + i);
        acks.push(ack);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let seen = eval(&list, "window.__sjournalSeen");
    let log = Command::new(&bin)
        .arg("--root")
        .arg(watched.path())
        .args(["log", "--session", session, "--json"])
        .output()
        .unwrap();
    // The record of hook i is the PostToolUse with its tool_use_id.
    let by_call: std::collections::HashMap<String, u64> = String::from_utf8_lossy(&log.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|v| {
            let id = v["payload"]["tool_use_id"].as_str()?.to_owned();
            Some((id, v["seq"].as_u64()?))
        })
        .collect();
    let mut lat = Vec::new();
    let mut missed = 0;
    for (i, ack) in acks.iter().enumerate() {
        let seq = by_call[&format!("toolu_{:06}", 100 + i)];
        match seen.get(format!("{session}/{seq}")).and_then(Value::as_f64) {
            Some(ms) => lat.push(ms - ack),
            None => missed += 1,
        }
    }
    println!(
        "live: {} hooks; a record reached the page {:.1} ms after the hook's ack (median), p95 {:.1} ms, max {:.1} ms; {missed} not seen",
        runs,
        q(&lat, 0.5),
        q(&lat, 0.95),
        q(&lat, 1.0)
    );

    // 2. The hook with the viewer open, against a root no viewer watches.
    let mut with = Vec::new();
    let mut without = Vec::new();
    for i in 0..runs {
        let order: [(&Path, bool); 2] = if i % 2 == 0 {
            [(watched.path(), true), (plain.path(), false)]
        } else {
            [(plain.path(), false), (watched.path(), true)]
        };
        for (root, w) in order {
            let t = Instant::now();
            hook(&bin, root, session, 1000 + i);
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            if w {
                with.push(ms)
            } else {
                without.push(ms)
            }
        }
    }
    println!(
        "hook: viewer open p50 {:.3} ms p90 {:.3} ms; no viewer p50 {:.3} ms p90 {:.3} ms; ratio of p50s {:.3}",
        q(&with, 0.5),
        q(&with, 0.9),
        q(&without, 0.5),
        q(&without, 0.9),
        q(&with, 0.5) / q(&without, 0.5)
    );
    let _ = serve.kill();
    let _ = serve.wait();
}
