//! Fold throughput over a journal of 1M events (the hook's path: load = snapshot + tail).
//!
//! (Under `cargo test` the same code runs once over 20k events.)
//!
//! - `cold_from_journal`: open + mmap the journal, validate every record (CRC, seq; the first
//!   record's chain link) and fold all 1M from their digests: `load_state` without a snapshot
//!   (a tail this long is read and decoded on a second thread while the caller's folds).
//! - `cold_one_thread`: the same checks and fold on one thread (what `load_state` does for a
//!   tail under 4 MiB).
//! - `cold_every_link`: the same with every chain link checked (the reader's `records()`),
//!   as loads did before digests.
//! - `fold_only`: `State::apply` over the 1M records already validated and in memory: the
//!   fold's own cost.
//! - `from_snapshot_tail_1000` / `from_snapshot_tail_1`: `load_state` with a snapshot 1000
//!   records (or 1) before the end, what the hook pays on every event.
//!
//! - `instructions/one_pass` against `instructions/first_rule`: the standing-instruction scan
//!   of `fold::instructions` over a set of prompts, and the rule as first written
//!   (`tests/support/instruction_oracle.rs`), side by side in one run.
//!
//! The journal (about 600 MB) is built once per run in a temporary directory. Run with
//! `cargo bench --bench fold`.

use std::sync::OnceLock;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use sjournal::fold::digest::encode_event;
use sjournal::fold::{RecordView, State};
use sjournal::format::payload::{self as p, encode_system};
use sjournal::journal::{JournalReader, Root, Writer, WriterOptions};
use sjournal::snapshot::{self, load_state, LoadOptions, SnapshotUse};

#[path = "../tests/support/instruction_oracle.rs"]
mod instruction_oracle;

/// 1M under `cargo bench`; under `cargo test` (which runs each benchmark once to check it
/// works, without `--bench`) a small journal keeps the test suite fast.
fn events() -> u64 {
    static N: OnceLock<u64> = OnceLock::new();
    *N.get_or_init(|| {
        if std::env::args().any(|a| a == "--bench") {
            1_000_000
        } else {
            20_000
        }
    })
}
const SESSION: &str = "bench-3f1c9e2a-5b7d-4c1e-9a2b-8d6f0e4c2a1b";

struct Fixture {
    _dir: tempfile::TempDir,
    root: Root,
    bytes: u64,
}

fn common(kind: &str) -> String {
    format!(
        r#""session_id":"{SESSION}","transcript_path":"/home/dev/.claude/projects/-home-dev-app/{SESSION}.jsonl","cwd":"/home/dev/app","prompt_id":"6bdad6f3-6090-42bd-8d78-2f82a0845661","permission_mode":"default","effort":{{"level":"medium"}},"hook_event_name":"{kind}""#
    )
}

/// Record `i` of a plausible session: turns of a prompt, 12 tool calls (Pre + Post), a Stop;
/// now and then a compaction or a context entry.
fn record(i: u64) -> (String, Vec<u8>) {
    let turn = i / 26;
    let step = i % 26;
    let call = (step.saturating_sub(1)) / 2;
    let id = format!("toolu_{turn:08x}{call:04x}");
    let file = format!(
        "/home/dev/app/src/module_{}/file_{}.rs",
        turn % 40,
        (turn * 7 + call) % 50
    );
    let tools = ["Read", "Edit", "Bash", "Grep", "Write", "Bash"];
    let tool = tools[(call % 6) as usize];
    let input = match tool {
        "Bash" => format!(
            r#"{{"command":"cargo test -p module_{} -- --nocapture","description":"Run the tests"}}"#,
            turn % 40
        ),
        "Grep" => r#"{"pattern":"fn apply","path":"/home/dev/app/src","output_mode":"content"}"#
            .to_owned(),
        "Edit" => format!(
            r#"{{"file_path":"{file}","old_string":"let x = 1;","new_string":"let x = 2;","replace_all":false}}"#
        ),
        _ => format!(r#"{{"file_path":"{file}"}}"#),
    };
    let kind;
    let json = match step {
        0 if turn % 500 == 499 => {
            kind = "PreCompact";
            format!(
                r#"{{{},"trigger":"auto","custom_instructions":null}}"#,
                common(kind)
            )
        }
        0 => {
            kind = "UserPromptSubmit";
            format!(
                r#"{{{},"prompt":"Step {turn}: refactor module {} and keep the tests green"}}"#,
                common(kind),
                turn % 40
            )
        }
        25 => {
            if turn.is_multiple_of(100) {
                let c = p::ContextSet {
                    channel: "persistent".into(),
                    key: format!("note-{}", turn % 8),
                    text: format!("Progress after turn {turn}: modules 0-{} done.", turn % 40),
                };
                return (p::KIND_CONTEXT_SET.to_owned(), encode_system(&c));
            }
            kind = "Stop";
            format!(
                r#"{{{},"stop_hook_active":false,"last_assistant_message":"Done with step {turn}.","background_tasks":[],"session_crons":[]}}"#,
                common(kind)
            )
        }
        s if s % 2 == 1 => {
            kind = "PreToolUse";
            format!(
                r#"{{{},"tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}"}}"#,
                common(kind)
            )
        }
        _ => {
            kind = "PostToolUse";
            format!(
                r#"{{{},"tool_name":"{tool}","tool_input":{input},"tool_response":{{"stdout":"ok","stderr":"","interrupted":false,"isImage":false}},"tool_use_id":"{id}","duration_ms":{}}}"#,
                common(kind),
                10 + call * 3
            )
        }
    };
    (kind.to_owned(), encode_event(kind, &json))
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let t = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let mut w = Writer::open(&root, SESSION, &WriterOptions::default()).unwrap();
        let base = 1_767_225_600_000_000_000i64;
        let mut i = 0;
        while i < events() {
            let batch: Vec<(String, Vec<u8>)> =
                (i..(i + 20_000).min(events())).map(record).collect();
            let items: Vec<(&str, &[u8])> = batch
                .iter()
                .map(|(k, p)| (k.as_str(), p.as_slice()))
                .collect();
            w.append_batch_at(base + i as i64 * 1_000_000, &items)
                .unwrap();
            i += batch.len() as u64;
        }
        let bytes = w.len();
        drop(w);
        eprintln!(
            "built a journal of {} records, {bytes} bytes, in {:?}",
            events(),
            t.elapsed()
        );
        Fixture {
            _dir: dir,
            root,
            bytes,
        }
    })
}

/// Writes a snapshot `tail` records before the end.
fn snapshot_before_end(f: &Fixture, tail: u64) {
    let at = LoadOptions {
        at: Some(events() - tail),
        use_snapshot: false,
        deadline: None,
    };
    let (s, info) = load_state(&f.root, SESSION, &at).unwrap();
    snapshot::write(&f.root.session(SESSION).unwrap(), &s, &info.head.unwrap()).unwrap();
}

fn bench(c: &mut Criterion) {
    let f = fixture();
    let mut g = c.benchmark_group("fold_1m");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events()));
    let full = LoadOptions {
        use_snapshot: false,
        ..LoadOptions::latest()
    };
    g.bench_function("cold_from_journal", |b| {
        b.iter(|| {
            let (s, _) = load_state(&f.root, SESSION, &full).unwrap();
            assert_eq!(s.seq, events());
        })
    });
    let journal = f.root.session(SESSION).unwrap().journal;
    g.bench_function("cold_one_thread", |b| {
        b.iter(|| {
            let reader = JournalReader::open(&journal, None).unwrap();
            let (_, hlen, genesis) = reader.header().unwrap();
            let chain = sjournal::journal::scan::Chain::genesis(genesis);
            let mut s = State::new();
            for r in reader.records_from(hlen, chain).first_link_only() {
                s.apply(&RecordView::from(&r.unwrap()));
            }
            assert_eq!(s.seq, events());
        })
    });
    g.bench_function("cold_every_link", |b| {
        b.iter(|| {
            let reader = JournalReader::open(&journal, None).unwrap();
            let mut s = State::new();
            for r in reader.records().unwrap() {
                s.apply(&RecordView::from(&r.unwrap()));
            }
            assert_eq!(s.seq, events());
        })
    });
    let reader = JournalReader::open(&journal, None).unwrap();
    let recs: Vec<RecordView> = reader
        .records()
        .unwrap()
        .map(|r| RecordView::from(&r.unwrap()))
        .collect();
    g.bench_function("fold_only", |b| {
        b.iter_batched(
            State::new,
            |mut s| {
                for r in &recs {
                    s.apply(r);
                }
                s
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("load_with_snapshot");
    for tail in [1000u64, 1] {
        snapshot_before_end(f, tail);
        let (s, info) = load_state(&f.root, SESSION, &LoadOptions::latest()).unwrap();
        assert_eq!(
            info.snapshot,
            SnapshotUse::Used {
                seq: events() - tail
            }
        );
        eprintln!(
            "state at the end: {} encoded bytes; journal {} bytes",
            s.encode().len(),
            f.bytes
        );
        g.throughput(Throughput::Elements(tail));
        g.bench_function(format!("from_snapshot_tail_{tail}"), |b| {
            b.iter(|| load_state(&f.root, SESSION, &LoadOptions::latest()).unwrap())
        });
    }
    g.finish();

    // The recovery block the hook injects after a compaction, from the state at the end of
    // the journal: at the default budget, and at a small one that forces the truncation path
    // (`benches/context.rs` measures it at the size of a real session).
    let (state, _) = load_state(&f.root, SESSION, &LoadOptions::latest()).unwrap();
    let at = sjournal::context::InjectionPoint {
        event_seq: state.seq + 1,
        kind: sjournal::event::EventKind::SessionStart,
        source: Some("compact".into()),
        host: sjournal::event::Host::Claude,
    };
    let mut g = c.benchmark_group("context_render");
    for budget in [sjournal::limits::CONTEXT_BUDGET_DEFAULT_CHARS, 400] {
        let policy = sjournal::context::Policy {
            budget_chars: budget,
            ..Default::default()
        };
        g.bench_function(format!("budget_{budget}"), |b| {
            b.iter(|| sjournal::context::inject(&state, &at, &policy, &Default::default()))
        });
    }
    g.finish();
}

/// What the lenient JSON pre-pass (`event::lenient::text`, run by the fold before each
/// event is parsed) costs, against parsing the event alone, over the events of the same
/// plausible session (no event here needs rewriting: this is the cost every event pays).
fn bench_lenient(c: &mut Criterion) {
    let texts: Vec<(String, String)> = (0..100_000)
        .map(record)
        .filter(|(k, _)| !p::is_system_kind(k))
        .map(|(k, payload)| (k, p::decode_event(0, &payload).unwrap().to_owned()))
        .collect();
    let mut g = c.benchmark_group("lenient_json");
    g.throughput(Throughput::Elements(texts.len() as u64));
    g.bench_function("event_parse", |b| {
        b.iter(|| {
            texts
                .iter()
                .filter(|(k, t)| sjournal::event::Event::parse(k, t).parsed)
                .count()
        })
    });
    g.bench_function("lenient_then_event_parse", |b| {
        b.iter(|| {
            texts
                .iter()
                .filter(|(k, t)| {
                    let t = sjournal::event::lenient::text(t);
                    sjournal::event::Event::parse(k, &t).parsed
                })
                .count()
        })
    });
    g.finish();
}

/// Reading an event from its digest (`fold::digest::decode`, what a fold from this build's
/// journals does) against reading it from its JSON (lenient pre-pass and `Event::parse`,
/// what it does for a journal without digests) and against a `serde_json::Value` parse of
/// the same JSON, over the same events.
fn bench_digest(c: &mut Criterion) {
    let payloads: Vec<(String, Vec<u8>)> = (0..100_000)
        .map(record)
        .filter(|(k, _)| !p::is_system_kind(k))
        .collect();
    let texts: Vec<&str> = payloads
        .iter()
        .map(|(_, payload)| p::decode_event(0, payload).unwrap())
        .collect();
    // Each digest copied out of its payload: the rows compare decoders over the same memory
    // layout (a digest read in place, after its JSON, is one cache miss more per event).
    let digests: Vec<Vec<u8>> = payloads
        .iter()
        .map(|(_, payload)| {
            p::event_digest(payload)
                .expect("this build writes digests")
                .to_vec()
        })
        .collect();
    let mut g = c.benchmark_group("event_read");
    g.throughput(Throughput::Elements(payloads.len() as u64));
    g.bench_function("digest_decode", |b| {
        b.iter(|| {
            digests
                .iter()
                .filter(|d| sjournal::fold::digest::decode(d).is_some_and(|e| e.parsed))
                .count()
        })
    });
    // Decoded over the event before it, in place, as the load's reader thread does into its
    // batch's slots (`fold::digest::decode_into`).
    g.bench_function("digest_decode_into", |b| {
        let mut slot = sjournal::fold::digest::decode(&digests[0]).unwrap();
        b.iter(|| {
            digests
                .iter()
                .filter(|d| sjournal::fold::digest::decode_into(d, &mut slot) && slot.parsed)
                .count()
        })
    });
    g.bench_function("json_lenient_then_event_parse", |b| {
        b.iter(|| {
            payloads
                .iter()
                .zip(&texts)
                .filter(|((k, _), t)| {
                    let t = sjournal::event::lenient::text(t);
                    sjournal::event::Event::parse(k, &t).parsed
                })
                .count()
        })
    });
    g.bench_function("serde_json_value", |b| {
        b.iter(|| {
            texts
                .iter()
                .filter(|t| {
                    serde_json::from_str::<serde_json::Value>(t).is_ok_and(|v| v.is_object())
                })
                .count()
        })
    });
    g.finish();
}

/// Prompts as users write them: requests, rules, questions, lists, curly apostrophes.
const PROMPTS: &[&str] = &[
    "run echo hello",
    "Add a greeting module. Never touch vendor/ and always run `make check` before finishing.",
    "Why does the build fail on CI but not locally? Look at the logs in target/ci.log first.",
    "Refactor src/fold/state.rs so that each list is bounded.\n- Don\u{2019}t change the on-disk format\n- keep FOLD_VERSION at 7\n- make sure the golden hashes still pass",
    "From now on, prefer `rg` to grep! Also, please stop adding comments that restate the code. Thanks.",
    "Fix the flaky test in tests/concurrency.rs; it times out about once in twenty runs on the 2-core machine, usually after the third writer joins. I think the lock is held across the fsync.",
    "ok",
    "Implement the export command: it should print the session's records as JSON Lines, payloads byte for byte, one per line. Use serde_json for the envelope only. Remember to document it in the README and add a test that round-trips through import.",
];

fn bench_instructions(c: &mut Criterion) {
    let bytes: usize = PROMPTS.iter().map(|p| p.len()).sum();
    for p in PROMPTS {
        assert_eq!(
            sjournal::fold::instructions::instructions(p),
            instruction_oracle::oracle_instructions(p),
            "{p:?}"
        );
    }
    let mut g = c.benchmark_group("instructions");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("one_pass", |b| {
        b.iter(|| {
            PROMPTS
                .iter()
                .map(|p| sjournal::fold::instructions::instructions(p).len())
                .sum::<usize>()
        })
    });
    g.bench_function("first_rule", |b| {
        b.iter(|| {
            PROMPTS
                .iter()
                .map(|p| instruction_oracle::oracle_instructions(p).len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_lenient,
    bench_digest,
    bench_instructions,
    bench
);
criterion_main!(benches);
