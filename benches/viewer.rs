//! The viewer's server time (feature `viewer`): what `sjournal serve` spends producing a page,
//! from its index, without the network or the browser (the HTTP answer carries the same time
//! in `Server-Timing`).
//!
//! - `sessions_page/10000`: the Sessions page (every summary, as JSON) of a root holding
//!   10,000 sessions;
//! - `session_page/100000`: the Session page (the state, files, failures, and the newest
//!   page of the timeline: tables, recovery blocks) of one session of 100,000 events, which
//!   has a snapshot near its end as the hook leaves one (every 128 records);
//! - `timeline_older/100000`: the page of the timeline before the middle record ("load
//!   older");
//! - `slider_step_near_end/100000`: one step of the replay slider near the end (from the
//!   snapshot);
//! - `slider_step/100000`: one step in the middle of that session, once its kept states exist
//!   (the first step makes them with one fold of the whole journal: timed once, printed).
//!
//! Also printed once: how long the index takes to load every journal when the viewer starts,
//! and the first Session page (which also walks the journal's frames once for its places).
//! Under `cargo test` the same code runs once over 200 sessions and 2,000 events.
//! Run with `cargo bench --features viewer --bench viewer`.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use sjournal::fold::digest::encode_event;
use sjournal::journal::{Root, Writer, WriterOptions};
use sjournal::serve::{Index, Views};

fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn sessions_n() -> u64 {
    if full() {
        10_000
    } else {
        200
    }
}

fn events_n() -> u64 {
    if full() {
        100_000
    } else {
        2_000
    }
}

const BIG: &str = "big-3f1c9e2a-5b7d-4c1e-9a2b-8d6f0e4c2a1b";

fn common(session: &str, kind: &str, project: u64) -> String {
    format!(
        r#""session_id":"{session}","transcript_path":"/home/dev/.claude/projects/p/{session}.jsonl","cwd":"/home/dev/project-{project}","permission_mode":"default","hook_event_name":"{kind}""#
    )
}

/// Record `i` of a plausible session: turns of a prompt and 12 tool calls (one in 7 fails),
/// a Stop; a compaction every 500 turns.
fn record(session: &str, i: u64, project: u64) -> (String, Vec<u8>) {
    let turn = i / 26;
    let step = i % 26;
    let call = step.saturating_sub(1) / 2;
    let id = format!("toolu_{turn:08x}{call:04x}");
    let file = format!(
        "/home/dev/project-{project}/src/m{}/f{}.rs",
        turn % 40,
        (turn * 7 + call) % 50
    );
    let (tool, input) = match call % 3 {
        0 => (
            "Bash",
            format!(r#"{{"command":"cargo test -p m{}"}}"#, turn % 40),
        ),
        1 => (
            "Edit",
            format!(r#"{{"file_path":"{file}","old_string":"a","new_string":"b"}}"#),
        ),
        _ => ("Read", format!(r#"{{"file_path":"{file}"}}"#)),
    };
    let c = |k: &str| common(session, k, project);
    let (kind, json) = match step {
        0 if turn % 500 == 499 => (
            "PreCompact",
            format!(r#"{{{},"trigger":"auto"}}"#, c("PreCompact")),
        ),
        0 => (
            "UserPromptSubmit",
            format!(
                r#"{{{},"prompt":"Step {turn}: refactor module {}"}}"#,
                c("UserPromptSubmit"),
                turn % 40
            ),
        ),
        25 => (
            "Stop",
            format!(r#"{{{},"stop_hook_active":false}}"#, c("Stop")),
        ),
        s if s % 2 == 1 => (
            "PreToolUse",
            format!(
                r#"{{{},"tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}"}}"#,
                c("PreToolUse")
            ),
        ),
        _ if (turn + call).is_multiple_of(7) && tool == "Bash" => (
            "PostToolUseFailure",
            format!(
                r#"{{{},"tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}","error":"Exit code 101\ntest m{} failed"}}"#,
                c("PostToolUseFailure"),
                turn % 40
            ),
        ),
        _ => (
            "PostToolUse",
            format!(
                r#"{{{},"tool_name":"{tool}","tool_input":{input},"tool_response":{{"stdout":"ok"}},"tool_use_id":"{id}","duration_ms":{}}}"#,
                c("PostToolUse"),
                10 + call * 3
            ),
        ),
    };
    (kind.to_owned(), encode_event(kind, &json))
}

fn write(root: &Root, session: &str, events: u64, project: u64, base: i64) {
    let mut w = Writer::open(root, session, &WriterOptions::default()).unwrap();
    let mut i = 0;
    while i < events {
        let batch: Vec<(String, Vec<u8>)> = (i..(i + 20_000).min(events))
            .map(|i| record(session, i, project))
            .collect();
        let items: Vec<(&str, &[u8])> = batch
            .iter()
            .map(|(k, p)| (k.as_str(), p.as_slice()))
            .collect();
        w.append_batch_at(base + i as i64 * 1_000_000, &items)
            .unwrap();
        i += batch.len() as u64;
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    views: Views,
}

fn views_of(root: &Root) -> Views {
    let index = Arc::new(Index::new(root.clone(), WriterOptions::default()));
    let t = Instant::now();
    index.load_all();
    eprintln!(
        "the index loaded {} journal(s) in {:?}",
        index.summaries().len(),
        t.elapsed()
    );
    Views::new(
        index,
        sjournal::context::Policy::default(),
        WriterOptions::default(),
    )
}

/// A root of many small sessions (30 events each, 20 projects, three hosts' worth of ids).
fn many() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let t = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let base = 1_767_225_600_000_000_000i64;
        for s in 0..sessions_n() {
            let id = format!("s-{s:05}-0b4f7c1e-5d2a-4e8b-9c3f");
            write(&root, &id, 30, s % 20, base + s as i64 * 60_000_000_000);
        }
        eprintln!("built {} sessions in {:?}", sessions_n(), t.elapsed());
        Fixture {
            views: views_of(&root),
            _dir: dir,
        }
    })
}

/// A root of one long session.
fn long() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let t = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        write(&root, BIG, events_n(), 1, 1_767_225_600_000_000_000);
        // The snapshot the hook would have left (it writes one every 128 records).
        let paths = root.existing_session(BIG).unwrap();
        let (state, info) =
            sjournal::snapshot::load_paths(&paths, &sjournal::snapshot::LoadOptions::default())
                .unwrap();
        sjournal::snapshot::write(&paths, &state, &info.head.unwrap()).unwrap();
        eprintln!(
            "built a session of {} events in {:?}",
            events_n(),
            t.elapsed()
        );
        Fixture {
            views: views_of(&root),
            _dir: dir,
        }
    })
}

fn bench(c: &mut Criterion) {
    let f = many();
    let mut g = c.benchmark_group("viewer");
    g.sample_size(10);
    g.bench_function(format!("sessions_page/{}", sessions_n()), |b| {
        b.iter(|| {
            serde_json::to_vec(&f.views.sessions().unwrap())
                .unwrap()
                .len()
        })
    });
    let l = long();
    let key = BIG;
    let t = Instant::now();
    l.views.session(key).unwrap();
    eprintln!("the first Session page took {:?}", t.elapsed());
    g.bench_function(format!("session_page/{}", events_n()), |b| {
        b.iter(|| {
            serde_json::to_vec(&l.views.session(key).unwrap())
                .unwrap()
                .len()
        })
    });
    let mid = events_n() / 2 + 1;
    g.bench_function(format!("timeline_older/{}", events_n()), |b| {
        b.iter(|| {
            serde_json::to_vec(&l.views.timeline(key, Some(mid)).unwrap())
                .unwrap()
                .len()
        })
    });
    let near = events_n() - 10;
    g.bench_function(format!("slider_step_near_end/{}", events_n()), |b| {
        b.iter(|| {
            serde_json::to_vec(&l.views.at(key, near).unwrap())
                .unwrap()
                .len()
        })
    });
    let t = Instant::now();
    l.views.at(key, mid).unwrap();
    eprintln!(
        "the first slider step (one fold to keep states) took {:?}",
        t.elapsed()
    );
    g.bench_function(format!("slider_step/{}", events_n()), |b| {
        b.iter(|| {
            serde_json::to_vec(&l.views.at(key, mid).unwrap())
                .unwrap()
                .len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
