//! `sjournal search` over a large root: 100 sessions of one project, `SJOURNAL_BENCH_SEARCH_EVENTS`
//! events in all (default 100,000: prompts, Bash calls with their output, edits, failures,
//! replies), indexed once; then queries against the baseline a user would reach for instead:
//! a substring scan of the same events exported as JSONL (`memchr::memmem`, what `rg` does
//! for a literal, without its output — a lower bound of `rg`'s time).
//!
//! - `scan_jsonl_rare` (baseline): every line holding a rare word;
//! - `search_rare`, `search_common`, `search_phrase`, `search_fields`: the index, top 20,
//!   without the catch-up (`Options::no_update`);
//! - `search_rare_with_catch_up`: the CLI's path, the catch-up (nothing new) included.
//!
//! Before the criterion groups it prints the index build rate and p50/p95 of 200
//! `search_rare` calls with the catch-up. Run with `cargo bench --bench search` (under
//! `cargo test` each runs once, on 2,000 events, as a check).

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use sjournal::fold::digest::encode_event;
use sjournal::journal::{Root, Writer, WriterOptions};
use sjournal::search::{self, Options, Request, Scope};

const SESSIONS: usize = 100;
const PROJECT: &str = "/home/dev/app";
const WORDS: &str = "loader migration column parser config schema index cache token session \
    journal render budget window socket retry timeout buffer thread channel commit branch release \
    version module import export handler request response client server table query filter limit";

fn word(rng: &mut fastrand::Rng) -> &'static str {
    let w: Vec<&str> = WORDS.split_whitespace().collect();
    w[rng.usize(..w.len())]
}

struct World {
    _dir: tempfile::TempDir,
    root: Root,
    jsonl: Vec<u8>,
    events: usize,
    build: Duration,
}

fn text(rng: &mut fastrand::Rng, n: usize) -> String {
    (0..n).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
}

fn event(rng: &mut fastrand::Rng, session: &str, i: usize) -> serde_json::Value {
    let base = json!({"session_id": session, "cwd": PROJECT});
    let mut v = match i % 10 {
        0 => json!({"hook_event_name": "UserPromptSubmit", "prompt": text(rng, 20)}),
        1..=3 => json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"command": format!("cargo test {}", text(rng, 2))},
            "tool_response": {"stdout": text(rng, 60), "stderr": "", "interrupted": false}}),
        4..=6 => json!({"hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"file_path": format!("{PROJECT}/src/{}.rs", word(rng)),
                "old_string": text(rng, 8), "new_string": text(rng, 10)},
            "tool_response": {}}),
        7 => json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"command": format!("cargo build -p {}", word(rng))},
            "error": format!("Exit code 101\nerror[E0308]: {}", text(rng, 30))}),
        8 => json!({"hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"file_path": format!("{PROJECT}/src/{}.rs", word(rng))}}),
        _ => json!({"hook_event_name": "Stop", "last_assistant_message": text(rng, 40)}),
    };
    for (k, x) in base.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn world(events: usize) -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path().join("root"));
    let mut rng = fastrand::Rng::with_seed(7);
    let mut jsonl = Vec::new();
    let per = events.div_ceil(SESSIONS);
    let mut made = 0;
    for s in 0..SESSIONS {
        let session = format!("bench-search-{s:03}");
        let mut w = Writer::open(&root, &session, &WriterOptions::default()).unwrap();
        for chunk in (0..per).collect::<Vec<_>>().chunks(1000) {
            let mut recs = Vec::new();
            for &i in chunk {
                let mut v = event(&mut rng, &session, i);
                // One rare word, in one event in 1,000.
                if (made + i) % 1_000 == 500 {
                    v["prompt"] = json!(format!("where is the quokka {}", text(&mut rng, 5)));
                    v["hook_event_name"] = json!("UserPromptSubmit");
                }
                let line = v.to_string();
                jsonl.extend_from_slice(line.as_bytes());
                jsonl.push(b'\n');
                let name = v["hook_event_name"].as_str().unwrap().to_owned();
                let bytes = encode_event(&name, &line);
                recs.push((name, bytes));
            }
            let items: Vec<(&str, &[u8])> = recs
                .iter()
                .map(|(k, b)| (k.as_str(), b.as_slice()))
                .collect();
            let ts = 1_780_000_000_000_000_000 + ((s * per + chunk[0]) as i64) * 1_000_000_000;
            w.append_batch_at(ts, &items).unwrap();
        }
        made += per;
    }
    let t = Instant::now();
    search::update(&root, true, None).unwrap();
    World {
        _dir: dir,
        root,
        jsonl,
        events: made,
        build: t.elapsed(),
    }
}

fn req(q: &str) -> Request {
    Request {
        query: q.into(),
        scope: Scope::Project(PROJECT.into()),
        session: None,
        kinds: Vec::new(),
        since: None,
        until: None,
        limit: 20,
    }
}

fn scan(jsonl: &[u8], word: &[u8]) -> usize {
    let f = memchr::memmem::Finder::new(word);
    let mut lines = 0;
    let mut at = 0;
    while let Some(i) = f.find(&jsonl[at..]) {
        lines += 1;
        // Past the end of the line that matched, as `rg` prints each line once.
        at += i + memchr::memchr(b'\n', &jsonl[at + i..]).map_or(jsonl.len() - at - i, |n| n + 1);
        if at >= jsonl.len() {
            break;
        }
    }
    lines
}

fn percentiles(root: &Root, q: &str) -> (Duration, Duration) {
    let mut t: Vec<Duration> = (0..200)
        .map(|_| {
            let s = Instant::now();
            let f = search::search(root, &req(q), &Options::default()).unwrap();
            std::hint::black_box(f);
            s.elapsed()
        })
        .collect();
    t.sort();
    (t[100], t[190])
}

fn bench(c: &mut Criterion) {
    let under_test = !std::env::args().any(|a| a == "--bench");
    let events = std::env::var("SJOURNAL_BENCH_SEARCH_EVENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if under_test { 2_000 } else { 100_000 });
    let w = world(events);
    let rare = search::search(&w.root, &req("quokka"), &Options::default()).unwrap();
    assert_eq!(
        rare.hits.len(),
        scan(&w.jsonl, b"quokka").min(20),
        "same finds"
    );
    if !under_test {
        let (p50, p95) = percentiles(&w.root, "quokka");
        eprintln!(
            "search: {} events, {:.1} MB of JSONL; index built in {:.2?} ({:.0} events/s); \
             search with catch-up p50 {p50:.2?}, p95 {p95:.2?}",
            w.events,
            w.jsonl.len() as f64 / 1e6,
            w.build,
            w.events as f64 / w.build.as_secs_f64()
        );
    }
    let quiet = Options {
        no_update: true,
        ..Default::default()
    };
    let mut g = c.benchmark_group("search");
    g.bench_function("scan_jsonl_rare", |b| {
        b.iter(|| scan(std::hint::black_box(&w.jsonl), b"quokka"))
    });
    for (name, q) in [
        ("search_rare", "quokka"),
        ("search_common", "loader migration"),
        ("search_phrase", "\"parser config\""),
        ("search_fields", "tool:Bash failed:yes loader"),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| search::search(&w.root, &req(q), &quiet).unwrap())
        });
    }
    g.bench_function("search_rare_with_catch_up", |b| {
        b.iter(|| search::search(&w.root, &req("quokka"), &Options::default()).unwrap())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
