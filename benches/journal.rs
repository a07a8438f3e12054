//! Baseline figures for the journal engine, for later work to be measured against:
//!
//! - `append/durable`: one ~300-byte event per append, `sync_data` each time, on a real file in
//!   the default temporary directory: what a hook pays.
//! - `append/not_durable`: the same through `SimDisk` (memory, no fsync): the cost of
//!   encoding, CRC, blake3 chaining and framing alone.
//! - `append/batch_100_durable`: 100 events in one write and one fsync.
//! - `read/records_100k`: map a 100,000-record journal and iterate every validated record
//!   (length, CRC, seq, chain hash); throughput in bytes.
//! - `read/verify_file_100k`: `verify_file` on the same journal, on every core (the default).
//! - `read/verify_file_100k_1_worker`: the same with one worker: the sequential verify, the
//!   baseline the parallel one is measured against.
//!
//! - `format/{verify,cold_fold}_{v1,v2,v3}`: the same 20,000 events in a format-1, -2 and -3
//!   journal, verified sequentially and folded from the first record: the cost of the payload
//!   digest and of each version's record hash (`journal-format.md`, "Records"); compare them in
//!   one run. `_300b`: synthetic 300-byte PostToolUse events (the worst case: the record hash
//!   of formats 2 and 3 is a constant per record); `_real`: the 37 events of a real Claude
//!   Code session (tests/fixtures, median 1,076 bytes) in turn.
//!
//! Run: `cargo bench --bench journal` (add `-- --warm-up-time 1 --measurement-time 3` for a
//! quicker pass).

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sjournal::format::payload::encode_event_json;
use sjournal::journal::{
    verify_file, verify_file_with, JournalReader, Root, Target, VerifyOptions, Writer,
    WriterOptions,
};
use sjournal::testing::{JournalWith, SimDisk};

fn event(i: usize, size: usize) -> String {
    let head = format!(r#"{{"hook_event_name":"PostToolUse","i":{i},"pad":""#);
    format!(
        "{head}{}\"}}",
        "x".repeat(size.saturating_sub(head.len() + 2))
    )
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sjournal-bench-")
        .tempdir()
        .expect("temporary directory")
}

fn append(c: &mut Criterion) {
    let opts = WriterOptions::default();
    let payload = encode_event_json(&event(0, 300));
    let mut g = c.benchmark_group("append");
    g.sample_size(10);

    let dir = tempdir();
    let root = Root::new(dir.path());
    g.throughput(Throughput::Elements(1));
    {
        let mut w = Writer::open(&root, "durable", &opts).unwrap();
        g.bench_function("durable", |b| {
            b.iter(|| w.append("PostToolUse", &payload).unwrap())
        });
    }

    // A fresh simulated disk every 10,000 appends keeps memory bounded; opening it is not
    // timed.
    g.bench_function("not_durable", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min(10_000);
                left -= n;
                let disk = SimDisk::new();
                let d = disk.clone();
                let sim = WriterOptions::with_fs(JournalWith::new(move |_, _| Box::new(d.clone())));
                let mut w = Writer::open_with(&root, "sim", Target::Main, &sim).unwrap();
                let start = Instant::now();
                for _ in 0..n {
                    w.append("PostToolUse", &payload).unwrap();
                }
                total += start.elapsed();
            }
            total
        })
    });

    let items: Vec<(&str, &[u8])> = (0..100).map(|_| ("PostToolUse", &payload[..])).collect();
    g.throughput(Throughput::Elements(100));
    {
        let mut w = Writer::open(&root, "batch", &opts).unwrap();
        g.bench_function("batch_100_durable", |b| {
            b.iter(|| w.append_batch(&items).unwrap())
        });
    }
    g.finish();
}

fn read(c: &mut Criterion) {
    const RECORDS: usize = 100_000;
    let dir = tempdir();
    let root = Root::new(dir.path());
    let path = {
        let mut w = Writer::open(&root, "big", &WriterOptions::default()).unwrap();
        let payloads: Vec<Vec<u8>> = (0..1000)
            .map(|i| encode_event_json(&event(i, 200)))
            .collect();
        let items: Vec<(&str, &[u8])> = payloads
            .iter()
            .map(|p| ("PostToolUse", p.as_slice()))
            .collect();
        for _ in 0..RECORDS / items.len() {
            w.append_batch(&items).unwrap();
        }
        w.path().to_owned()
    };
    let bytes = std::fs::metadata(&path).unwrap().len();

    let mut g = c.benchmark_group("read");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("records_100k", |b| {
        b.iter(|| {
            let r = JournalReader::open(&path, None).unwrap();
            let n = r
                .records()
                .unwrap()
                .inspect(|rec| assert!(rec.is_ok()))
                .count();
            assert_eq!(n, RECORDS);
        })
    });
    g.bench_function("verify_file_100k", |b| {
        b.iter(|| {
            let report = verify_file(&path, None).unwrap();
            assert!(report.ok && report.records == RECORDS as u64);
        })
    });
    g.bench_function("verify_file_100k_1_worker", |b| {
        let one = VerifyOptions {
            workers: 1,
            ..VerifyOptions::default()
        };
        b.iter(|| {
            let report = verify_file_with(&path, None, one).unwrap();
            assert!(report.ok && report.records == RECORDS as u64);
        })
    });
    g.finish();
}

/// A journal of `n` events written by a writer of format `version` (an older format's journal
/// is made by writing its header first: the writer appends in the header's version), event `i`
/// being `events[i % events.len()]` (kind, JSON).
fn journal_of(
    root: &Root,
    session: &str,
    version: u16,
    n: usize,
    events: &[(String, String)],
) -> std::path::PathBuf {
    let paths = root.session(session).unwrap();
    if version != sjournal::format::header::FORMAT_VERSION {
        std::fs::create_dir_all(paths.journal.parent().unwrap()).unwrap();
        let h = sjournal::format::header::Header::with_version(session, 1, version);
        std::fs::write(&paths.journal, h.encode()).unwrap();
    }
    let mut w = Writer::open(root, session, &WriterOptions::default()).unwrap();
    let payloads: Vec<(&str, Vec<u8>)> = (0..n)
        .map(|i| {
            let (kind, json) = &events[i % events.len()];
            (
                kind.as_str(),
                sjournal::fold::digest::encode_event(kind, json),
            )
        })
        .collect();
    for chunk in payloads.chunks(1000) {
        let items: Vec<(&str, &[u8])> = chunk.iter().map(|(k, p)| (*k, p.as_slice())).collect();
        w.append_batch_at(1, &items).unwrap();
    }
    assert_eq!(w.header().format_version, version);
    w.path().to_owned()
}

/// The events of a real Claude Code session (kind, JSON), as the host sent them.
fn real_events() -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/payloads-2.1.332.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let kind = v["hook_event_name"].as_str().unwrap_or("event").to_owned();
            (kind, l.to_owned())
        })
        .collect()
}

fn format(c: &mut Criterion) {
    const N: usize = 20_000;
    let dir = tempdir();
    let root = Root::new(dir.path());
    let one = VerifyOptions {
        workers: 1,
        ..VerifyOptions::default()
    };
    let synthetic: Vec<(String, String)> = (0..N)
        .map(|i| ("PostToolUse".to_owned(), event(i, 300)))
        .collect();
    let real = real_events();
    let mut g = c.benchmark_group("format");
    g.sample_size(10);
    for (name, events) in [("300b", &synthetic), ("real", &real)] {
        for version in [1u16, 2, 3] {
            let path = journal_of(&root, &format!("{name}-v{version}"), version, N, events);
            g.bench_function(format!("verify_v{version}_{name}"), |b| {
                b.iter(|| {
                    let report = verify_file_with(&path, None, one).unwrap();
                    assert!(report.ok && report.records == N as u64);
                })
            });
            g.bench_function(format!("cold_fold_v{version}_{name}"), |b| {
                b.iter(|| {
                    let r = JournalReader::open(&path, None).unwrap();
                    let state = sjournal::fold::fold(
                        r.records()
                            .unwrap()
                            .first_link_only()
                            .map(|rec| sjournal::fold::RecordView::from(&rec.unwrap().frame)),
                    );
                    assert_eq!(state.records, N as u64);
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, append, read, format);
criterion_main!(benches);
