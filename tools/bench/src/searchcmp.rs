//! `sjournal-bench searchcmp N [RUNS]`: the search engine, measured against the other one the
//! design allows: tantivy (what `sjournal search` uses) and SQLite FTS5 (rusqlite, bundled),
//! fed the same documents from the same journals.
//!
//! N events in 100 sessions of one project (the generator of `benches/search.rs`: prompts,
//! Bash calls with output, edits, failures, reads, replies; one prompt in 1,000 holds the
//! rare word "quokka") are written as journals. Then, interleaved RUNS times each:
//! - build: tantivy through `sjournal::search::update(root, rebuild)` (the real index: reads
//!   every journal, makes every document with `search::doc::content`); FTS5 reading the same
//!   journals, the same `doc::content` for each record, into one FTS5 table with the same
//!   searchable fields (body and file text, tool, failed, kind; session, seq and hash stored),
//!   in one transaction;
//! - size on disk of each;
//! - query latency, top 20 by BM25 with a snippet: a rare word, two common words, a phrase,
//!   a field filter (`tool:Bash failed:yes loader`). tantivy through `sjournal::search::search`
//!   without the catch-up (its full path: parse, scope, rank, snippet, citation); FTS5 with
//!   `MATCH`, `bm25()` and `snippet()`.
//!
//! Medians are printed, with the ratio FTS5 / tantivy.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sjournal::fold::digest::encode_event;
use sjournal::journal::{JournalReader, Root, Writer, WriterOptions};
use sjournal::search::{self, doc, Options, Request, Scope};

const SESSIONS: usize = 100;
const PROJECT: &str = "/home/dev/app";
const WORDS: &str = "loader migration column parser config schema index cache token session \
    journal render budget window socket retry timeout buffer thread channel commit branch release \
    version module import export handler request response client server table query filter limit";

/// A small xorshift generator: the same stream on every machine, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn word(r: &mut Rng) -> &'static str {
    let w: Vec<&str> = WORDS.split_whitespace().collect();
    w[r.below(w.len())]
}

pub fn text(r: &mut Rng, n: usize) -> String {
    (0..n).map(|_| word(r)).collect::<Vec<_>>().join(" ")
}

/// The event `i` of a session (the distribution of `benches/search.rs`).
fn event(r: &mut Rng, session: &str, i: usize) -> Value {
    event_in(r, PROJECT, session, i)
}

/// The event `i` of a session whose project is `project`.
pub fn event_in(r: &mut Rng, project: &str, session: &str, i: usize) -> Value {
    let mut v = match i % 10 {
        0 => json!({"hook_event_name": "UserPromptSubmit", "prompt": text(r, 20)}),
        1..=3 => json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"command": format!("cargo test {}", text(r, 2))},
            "tool_response": {"stdout": text(r, 60), "stderr": "", "interrupted": false}}),
        4..=6 => json!({"hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"file_path": format!("{project}/src/{}.rs", word(r)),
                "old_string": text(r, 8), "new_string": text(r, 10)},
            "tool_response": {}}),
        7 => json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"command": format!("cargo build -p {}", word(r))},
            "error": format!("Exit code 101\nerror[E0308]: {}", text(r, 30))}),
        8 => json!({"hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_use_id": format!("t{i}"),
            "tool_input": {"file_path": format!("{project}/src/{}.rs", word(r))}}),
        _ => json!({"hook_event_name": "Stop", "last_assistant_message": text(r, 40)}),
    };
    v["session_id"] = json!(session);
    v["cwd"] = json!(project);
    v
}

/// Writes `events` events into `root`; returns the journals' total size.
pub fn generate(root: &Root, events: usize) -> u64 {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let per = events.div_ceil(SESSIONS);
    let mut made = 0;
    let mut bytes = 0;
    for s in 0..SESSIONS {
        let session = format!("bench-search-{s:03}");
        let mut w = Writer::open(root, &session, &WriterOptions::default()).unwrap();
        for start in (0..per).step_by(1000) {
            let mut recs = Vec::new();
            for i in start..(start + 1000).min(per) {
                let mut v = event(&mut r, &session, i);
                if (made + i) % 1_000 == 500 {
                    v["prompt"] = json!(format!("where is the quokka {}", text(&mut r, 5)));
                    v["hook_event_name"] = json!("UserPromptSubmit");
                }
                let name = v["hook_event_name"].as_str().unwrap().to_owned();
                recs.push((name.clone(), encode_event(&name, &v.to_string())));
            }
            let items: Vec<(&str, &[u8])> = recs
                .iter()
                .map(|(k, b)| (k.as_str(), b.as_slice()))
                .collect();
            let ts = 1_780_000_000_000_000_000 + ((s * per + start) as i64) * 1_000_000_000;
            w.append_batch_at(ts, &items).unwrap();
        }
        made += per;
        bytes += std::fs::metadata(root.session(&session).unwrap().journal)
            .unwrap()
            .len();
    }
    bytes
}

fn journals(root: &Root) -> Vec<std::path::PathBuf> {
    (0..SESSIONS)
        .map(|s| {
            root.session(&format!("bench-search-{s:03}"))
                .unwrap()
                .journal
        })
        .collect()
}

/// FTS5 over the same documents: one row per record that makes a document.
fn build_fts(root: &Root, db_path: &Path) -> usize {
    let _ = std::fs::remove_file(db_path);
    let mut db = rusqlite::Connection::open(db_path).unwrap();
    db.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
         CREATE VIRTUAL TABLE docs USING fts5(body, file, tool, failed, kind,
             session UNINDEXED, seq UNINDEXED, hash UNINDEXED, tokenize = 'unicode61');",
    )
    .unwrap();
    let tx = db.transaction().unwrap();
    let mut n = 0;
    {
        let mut st = tx
            .prepare("INSERT INTO docs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
            .unwrap();
        for (s, path) in journals(root).iter().enumerate() {
            let session = format!("bench-search-{s:03}");
            let r = JournalReader::open(path, None).unwrap();
            for rec in r.records().unwrap() {
                let rec = rec.unwrap();
                let c = doc::content(rec.seq, rec.kind, rec.payload);
                let Some(kind) = c.kind else { continue };
                st.execute(rusqlite::params![
                    c.text,
                    c.files.join(" "),
                    c.tool.unwrap_or_default(),
                    if c.failed { "yes" } else { "no" },
                    kind.as_str(),
                    session,
                    rec.seq as i64,
                    rec.hash.to_hex().to_string(),
                ])
                .unwrap();
                n += 1;
            }
        }
    }
    tx.commit().unwrap();
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    n
}

fn dir_size(p: &Path) -> u64 {
    let m = std::fs::symlink_metadata(p).unwrap();
    if m.is_dir() {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| dir_size(&e.unwrap().path()))
            .sum()
    } else {
        m.len()
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
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

/// The queries, as `sjournal search` takes them and as FTS5 `MATCH` expressions.
const QUERIES: &[(&str, &str, &str)] = &[
    ("rare word", "quokka", "body:quokka"),
    (
        "two common words",
        "loader migration",
        "body:loader AND body:migration",
    ),
    ("phrase", "\"parser config\"", "body:\"parser config\""),
    (
        "field filter",
        "tool:Bash failed:yes loader",
        "tool:Bash AND failed:yes AND body:loader",
    ),
];

pub fn run(args: &[String]) {
    let events: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let runs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let qruns = 50;
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path().join("root"));
    let t = Instant::now();
    let bytes = generate(&root, events);
    eprintln!(
        "searchcmp: {events} events, {:.1} MB of journals, generated in {:.1?}",
        bytes as f64 / 1e6,
        t.elapsed()
    );
    let db_path = dir.path().join("fts.sqlite");
    let (mut tb, mut fb) = (Vec::new(), Vec::new());
    let mut docs = 0;
    for _ in 0..runs {
        let t = Instant::now();
        search::update(&root, true, None).unwrap();
        tb.push(t.elapsed());
        let t = Instant::now();
        docs = build_fts(&root, &db_path);
        fb.push(t.elapsed());
    }
    let (tb, fb) = (median(tb), median(fb));
    let tsize = dir_size(&root.dir().join("search"));
    let fsize = dir_size(&db_path);
    println!("| engine | build ({docs} documents) | events/s | size on disk |");
    println!("|---|---|---|---|");
    for (name, b, size) in [("tantivy", tb, tsize), ("SQLite FTS5", fb, fsize)] {
        println!(
            "| {name} | {:.2} s | {:.0} | {:.1} MB |",
            b.as_secs_f64(),
            events as f64 / b.as_secs_f64(),
            size as f64 / 1e6
        );
    }
    println!(
        "| FTS5 / tantivy | {:.2}x | | {:.2}x |",
        fb.as_secs_f64() / tb.as_secs_f64(),
        fsize as f64 / tsize as f64
    );
    println!();
    let db = rusqlite::Connection::open(&db_path).unwrap();
    let mut st = db
        .prepare(
            "SELECT session, seq, hash, snippet(docs, 0, '[', ']', '…', 16) FROM docs \
             WHERE docs MATCH ?1 ORDER BY bm25(docs) LIMIT 20",
        )
        .unwrap();
    let quiet = Options {
        no_update: true,
        ..Default::default()
    };
    println!("| query (top 20, median of {qruns}) | tantivy | SQLite FTS5 | FTS5 / tantivy | hits (tantivy, FTS5) |");
    println!("|---|---|---|---|---|");
    for (name, q, fq) in QUERIES {
        let (mut tq, mut fqt) = (Vec::new(), Vec::new());
        let (mut th, mut fh) = (0, 0);
        for _ in 0..qruns {
            let t = Instant::now();
            let f = search::search(&root, &req(q), &quiet).unwrap();
            tq.push(t.elapsed());
            th = f.hits.len();
            let t = Instant::now();
            let rows: Vec<(String, i64, String, String)> = st
                .query_map([fq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            fqt.push(t.elapsed());
            fh = rows.len();
        }
        let (a, b) = (median(tq), median(fqt));
        println!(
            "| {name} `{q}` | {:.2} ms | {:.2} ms | {:.2}x | {th}, {fh} |",
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
