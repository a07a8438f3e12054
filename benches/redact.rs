//! What redaction at ingest costs (`src/redact`), in bytes per second:
//!
//! - `clean_text_1mb`: 1 MiB of real hosts' payloads (tests/fixtures) as text, no secret: the
//!   keyword prefilter and the regexes of the rules whose keywords occur;
//! - `secret_text_1mb`: the same 1 MiB with a secret (of a rotating kind) every 4 KiB;
//! - `json_real_posttooluse`: a real Claude Code PostToolUse payload, as the hook redacts it
//!   (the common case: the keyword prefilter over the event, nothing found);
//! - `json_tool_output_1mb`: a PostToolUse whose tool output is 1 MiB of clean text;
//! - `json_tool_output_1mb_secrets`: the same with a secret every 4 KiB.
//!
//! Then the hook, spawn to exit, with redaction on against off in the same run: two roots on
//! the same file system, one with `[redact] enabled = false`, each seeded with 10 events;
//! each payload goes to both roots alternately (which one goes first alternates too), and
//! the rows give p50 and p90 of each and the ratio of the medians, on/off. Payloads: the real
//! Claude Code PostToolUse and UserPromptSubmit (tests/fixtures), and a PostToolUse whose tool
//! output is the 1 MiB above, clean and with secrets. The hook runs with `--deadline-ms
//! 10000`, so a slow moment of a loaded machine does not turn a run into a spool.
//!
//! `cargo bench --bench redact` runs both; `cargo bench --bench redact -- hook` only the hook
//! rows. Under `cargo test` each runs once or twice, as a check.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion, Throughput};
use sjournal::redact::{RedactSection, Redactor};

const MIB: usize = 1 << 20;

fn fixtures_text() -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut text = String::new();
    let mut todo = vec![dir];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                text.push_str(&std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = String::with_capacity(MIB + text.len());
    while out.len() < MIB {
        out.push_str(&text);
    }
    let mut end = MIB;
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// Secrets of several kinds, made from parts at run time.
fn secrets() -> Vec<String> {
    let mut r = fastrand::Rng::with_seed(5);
    let mut pick = |n: usize| -> String { (0..n).map(|_| r.alphanumeric()).collect::<String>() };
    vec![
        format!("{}_{}", ["gh", "p"].concat(), pick(36)),
        format!(
            "export AWS_ACCESS_KEY_ID={}{}",
            ["AK", "IA"].concat(),
            "Q7HZ3K5N2P4R6T2V"
        ),
        format!("DB_PASSWORD={}!7", pick(10)),
        format!("postgres://app:{}@db:5432/app", pick(16)),
        format!("Authorization: Bearer {}", pick(40)),
        format!("{}{}", ["sk-ant-", "api03-"].concat(), pick(95)),
    ]
}

fn with_secrets(clean: &str) -> String {
    let s = secrets();
    let mut out = String::with_capacity(clean.len() + 64 * 1024);
    let mut at = 0;
    for (i, chunk) in clean.as_bytes().chunks(4096).enumerate() {
        let end = at + chunk.len();
        let mut e = end.min(clean.len());
        while !clean.is_char_boundary(e) {
            e -= 1;
        }
        out.push_str(&clean[at.min(e)..e]);
        out.push(' ');
        out.push_str(&s[i % s.len()]);
        out.push(' ');
        at = e;
    }
    out
}

fn post_tool_use(stdout: &str) -> String {
    serde_json::json!({
        "session_id": "bench",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false},
        "tool_use_id": "toolu_01",
    })
    .to_string()
}

fn real_payload(event: &str) -> serde_json::Value {
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/payloads-2.1.332.jsonl");
    for line in std::fs::read_to_string(f).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["event"] == event && v["variant"].is_null() {
            return v["payload"].clone();
        }
    }
    panic!("no {event} in the fixture");
}

fn real_post_tool_use() -> String {
    real_payload("PostToolUse").to_string()
}

fn bench(c: &mut Criterion) {
    let red = Redactor::with_key(&RedactSection::default(), [3; 32]);
    let clean = fixtures_text();
    let dirty = with_secrets(&clean);
    assert!(red.bytes(clean.as_bytes()).1.found.is_empty());
    assert!(red.bytes(dirty.as_bytes()).1.found.len() >= 200);

    let mut g = c.benchmark_group("redact");
    g.throughput(Throughput::Bytes(clean.len() as u64));
    g.bench_function("clean_text_1mb", |b| {
        b.iter(|| red.bytes(std::hint::black_box(clean.as_bytes())))
    });
    g.throughput(Throughput::Bytes(dirty.len() as u64));
    g.bench_function("secret_text_1mb", |b| {
        b.iter(|| red.bytes(std::hint::black_box(dirty.as_bytes())))
    });
    let real = real_post_tool_use();
    g.throughput(Throughput::Bytes(real.len() as u64));
    g.bench_function("json_real_posttooluse", |b| {
        b.iter(|| red.json(std::hint::black_box(&real)))
    });
    let big = post_tool_use(&clean);
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("json_tool_output_1mb", |b| {
        b.iter(|| red.json(std::hint::black_box(&big)))
    });
    let big_dirty = post_tool_use(&dirty);
    g.throughput(Throughput::Bytes(big_dirty.len() as u64));
    g.bench_function("json_tool_output_1mb_secrets", |b| {
        b.iter(|| red.json(std::hint::black_box(&big_dirty)))
    });
    g.finish();
}

/// `sjournal-hook hook` (what hosts run) once against `root`, spawn to exit.
fn hook_once(root: &Path, payload: &[u8]) -> Duration {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sjournal-hook"))
        .arg("--root")
        .arg(root)
        .args(["hook", "--host", "claude", "--deadline-ms", "10000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload).unwrap();
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

fn median(t: &mut [Duration]) -> Duration {
    t.sort();
    t[t.len() / 2]
}

fn p90(t: &mut [Duration]) -> Duration {
    t.sort();
    t[((t.len() - 1) as f64 * 0.9).round() as usize]
}

/// The hook with redaction on against off, interleaved in one run.
fn hook_on_off(full: bool) {
    let dir = tempfile::tempdir().unwrap();
    let off = dir.path().join("off");
    let on = dir.path().join("on");
    std::fs::create_dir(&off).unwrap();
    std::fs::create_dir(&on).unwrap();
    std::fs::write(off.join("config.toml"), "[redact]\nenabled = false\n").unwrap();
    let clean = fixtures_text();
    let dirty = with_secrets(&clean);
    let with_output = |stdout: &str| {
        let mut p = real_payload("PostToolUse");
        p["tool_response"] =
            serde_json::json!({"stdout": stdout, "stderr": "", "interrupted": false});
        p.to_string().into_bytes()
    };
    let payloads = [
        ("PostToolUse (real)", real_post_tool_use().into_bytes()),
        (
            "UserPromptSubmit (real)",
            real_payload("UserPromptSubmit").to_string().into_bytes(),
        ),
        ("PostToolUse, 1 MiB output", with_output(&clean)),
        ("PostToolUse, 1 MiB output, secrets", with_output(&dirty)),
    ];
    for (label, payload) in &payloads {
        let seed = if full { 10 } else { 1 };
        for _ in 0..seed {
            hook_once(&off, payload);
            hook_once(&on, payload);
        }
        let runs = match (full, payload.len() > 100_000) {
            (false, _) => 2,
            (true, false) => 200,
            (true, true) => 40,
        };
        let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
        for i in 0..runs {
            if i % 2 == 0 {
                t_off.push(hook_once(&off, payload));
                t_on.push(hook_once(&on, payload));
            } else {
                t_on.push(hook_once(&on, payload));
                t_off.push(hook_once(&off, payload));
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let (m_off, m_on) = (median(&mut t_off), median(&mut t_on));
        println!(
            "hook {label:<36} {:>8} B n={runs:<3}  off p50 {:>7.2} ms p90 {:>7.2}  on p50 {:>7.2} ms p90 {:>7.2}  on/off {:.3}x",
            payload.len(),
            ms(m_off),
            ms(p90(&mut t_off)),
            ms(m_on),
            ms(p90(&mut t_on)),
            m_on.as_secs_f64() / m_off.as_secs_f64()
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4));
    targets = bench
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    if !std::env::args().skip(1).any(|a| a == "hook") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    hook_on_off(full);
}
