//! `sjournal-bench searchbig --sjournal BIN [--before BIN] [--events N] [--sessions S] [--runs R]`: search at
//! scale, as a user runs it, against what the user would do instead.
//!
//! N events (default 1,000,000) in S sessions (default 1,000) of one project, the generator
//! of `searchcmp` (one prompt in 1,000 holds the rare word "quokka"), are written as journals
//! and, the same events, as one JSONL file. Then:
//! - the cold fold of every journal (`snapshot::load_paths`, no snapshot) against the index
//!   build of the same journals (`search::update(root, rebuild)`): events/s of each;
//! - R searches (default 200), each a fresh `sjournal search QUERY --project DIR --limit 20
//!   --json` process with its catch-up (nothing new), for a rare word and two common words:
//!   p50 and p95 of the wall time, process start included;
//! - `rg -F quokka` over the JSONL, its output read through a pipe (as a terminal or a `| less`
//!   would; with stdout on /dev/null rg stops at the first match), R/10 runs (at least 5): p50
//!   and p95, and the ratio to the search's;
//! - with `--before BIN`, the searches and MCP calls of that build too, run by run in turn
//!   with BIN's, on the same journals and index;
//! - one long-lived `sjournal mcp --project DIR`, R `tools/call` of `search` over stdio, each
//!   timed from the request written to the response read: p50 and p95.
//!
//! Everything is made under $TMPDIR and removed at the end; with `--keep DIR`, in DIR and kept,
//! and a later run with the same DIR reuses it (no generation, no build).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sjournal::fold::digest::encode_event;
use sjournal::journal::{Root, Writer, WriterOptions};

use crate::searchcmp::{event_in, text, Rng};

struct Opts {
    bin: PathBuf,
    /// Another build, measured in the same run (interleaved with `bin`).
    before: Option<PathBuf>,
    events: usize,
    sessions: usize,
    runs: usize,
    /// Keep the corpus here (and reuse it when it is already there) instead of a temp dir.
    keep: Option<PathBuf>,
}

fn parse(args: &[String]) -> Opts {
    let mut o = Opts {
        bin: PathBuf::new(),
        before: None,
        events: 1_000_000,
        sessions: 1_000,
        runs: 200,
        keep: None,
    };
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--sjournal" => o.bin = PathBuf::from(v),
            "--before" => o.before = Some(PathBuf::from(v)),
            "--events" => o.events = v.parse().expect("--events N"),
            "--sessions" => o.sessions = v.parse().expect("--sessions N"),
            "--runs" => o.runs = v.parse().expect("--runs N"),
            "--keep" => o.keep = Some(PathBuf::from(v)),
            other => panic!("searchbig: unknown argument {other}"),
        }
        i += 2;
    }
    assert!(
        !o.bin.as_os_str().is_empty(),
        "searchbig: --sjournal BIN is required"
    );
    o
}

/// Writes the journals and the JSONL export; returns (journal bytes, JSONL bytes, events).
fn generate(
    root: &Root,
    project: &str,
    sessions: usize,
    events: usize,
    jsonl: &Path,
) -> (u64, u64, usize) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(jsonl).unwrap());
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let per = events.div_ceil(sessions);
    let (mut made, mut bytes, mut jbytes) = (0, 0u64, 0u64);
    for s in 0..sessions {
        let session = format!("bench-big-{s:04}");
        let mut w = Writer::open(root, &session, &WriterOptions::default()).unwrap();
        for start in (0..per).step_by(1000) {
            let mut recs = Vec::new();
            for i in start..(start + 1000).min(per) {
                let mut v = event_in(&mut r, project, &session, i);
                if (made + i) % 1_000 == 500 {
                    v["prompt"] = json!(format!("where is the quokka {}", text(&mut r, 5)));
                    v["hook_event_name"] = json!("UserPromptSubmit");
                }
                let line = v.to_string();
                out.write_all(line.as_bytes()).unwrap();
                out.write_all(b"\n").unwrap();
                jbytes += line.len() as u64 + 1;
                let name = v["hook_event_name"].as_str().unwrap().to_owned();
                recs.push((name.clone(), encode_event(&name, &line)));
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
    out.flush().unwrap();
    (bytes, jbytes, made)
}

/// (p50, p95) of `t`.
fn pct(mut t: Vec<Duration>) -> (Duration, Duration) {
    t.sort();
    let at = |p: f64| t[((t.len() as f64 * p) as usize).min(t.len() - 1)];
    (at(0.50), at(0.95))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `c` to the end, reading all it prints; its wall time.
fn timed(c: &mut Command) -> (Duration, Vec<u8>) {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let t = Instant::now();
    let mut child = c.spawn().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let status = child.wait().unwrap();
    let d = t.elapsed();
    assert!(
        status.success() || status.code() == Some(1),
        "{c:?}: {status}"
    );
    (d, out)
}

pub fn run(args: &[String]) {
    let o = parse(args);
    let tmp = match &o.keep {
        Some(d) => {
            std::fs::create_dir_all(d).unwrap();
            d.clone()
        }
        None => tempfile::Builder::new()
            .prefix("sjournal-searchbig-")
            .tempdir_in(std::env::temp_dir())
            .unwrap()
            .keep(),
    };
    let _cleanup = Cleanup(o.keep.is_none().then(|| tmp.clone()));
    let project = tmp.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    let project_s = project.display().to_string();
    let root_dir = tmp.join("root");
    let root = Root::new(&root_dir);
    let jsonl = tmp.join("events.jsonl");
    let ready = tmp.join("ready");

    if ready.exists() {
        println!(
            "searchbig: the corpus kept in {} (journals and index as built before)",
            tmp.display()
        );
    } else {
        let t = Instant::now();
        let (jbytes, xbytes, events) = generate(&root, &project_s, o.sessions, o.events, &jsonl);
        println!(
            "searchbig: {events} events in {} sessions: journals {:.0} MB, JSONL {:.0} MB (written in {:.1} s)",
            o.sessions,
            jbytes as f64 / 1e6,
            xbytes as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );

        // Cold fold of every journal (no snapshot exists) against the index build.
        let t = Instant::now();
        let lopts = sjournal::snapshot::LoadOptions::default();
        let mut records = 0u64;
        for s in 0..o.sessions {
            let paths = root.session(&format!("bench-big-{s:04}")).unwrap();
            records += sjournal::snapshot::load_paths(&paths, &lopts)
                .unwrap()
                .0
                .records;
        }
        let fold = t.elapsed();
        let t = Instant::now();
        let u = sjournal::search::update(&root, true, None).unwrap();
        let build = t.elapsed();
        println!(
            "cold fold: {records} records in {:.1} s ({:.0} events/s); index build: {} documents in {:.1} s ({:.0} events/s, {:.2}x the fold's rate); index {:.0} MB",
            fold.as_secs_f64(),
            events as f64 / fold.as_secs_f64(),
            u.docs,
            build.as_secs_f64(),
            events as f64 / build.as_secs_f64(),
            fold.as_secs_f64() / build.as_secs_f64(),
            dir_bytes(&root_dir.join("search")) as f64 / 1e6
        );
        std::fs::write(&ready, b"").unwrap();
    }

    let mut bins = vec![("", o.bin.clone())];
    if let Some(b) = &o.before {
        bins.insert(0, (" (before)", b.clone()));
    }
    let search = |bin: &Path, q: &str| {
        let mut c = Command::new(bin);
        c.arg("--root")
            .arg(&root_dir)
            .args(["search", q, "--limit", "20", "--json", "--project"])
            .arg(&project)
            .current_dir(&project);
        c
    };
    // One search first with each build: its catch-up finds nothing new (the build read
    // everything).
    for (_, bin) in &bins {
        let (_, first) = timed(&mut search(bin, "quokka"));
        let hits = first
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        assert_eq!(
            hits,
            20,
            "20 hits for the rare word: {}",
            String::from_utf8_lossy(&first)
        );
    }

    let (rg_p50, rg_p95) = {
        let n = (o.runs / 10).max(5);
        let mut lines = 0;
        let t: Vec<Duration> = (0..n)
            .map(|_| {
                let (d, out) = timed(Command::new("rg").args(["-F", "quokka"]).arg(&jsonl));
                lines = out.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count();
                d
            })
            .collect();
        let (p50, p95) = pct(t);
        println!(
            "rg -F quokka over the JSONL ({lines} lines), {n} runs: p50 {:.1} ms, p95 {:.1} ms",
            ms(p50),
            ms(p95)
        );
        (p50, p95)
    };
    for q in ["quokka", "loader migration"] {
        // The builds in turn, run by run.
        let mut t = vec![Vec::new(); bins.len()];
        for _ in 0..o.runs {
            for (i, (_, bin)) in bins.iter().enumerate() {
                t[i].push(timed(&mut search(bin, q)).0);
            }
        }
        for ((label, _), t) in bins.iter().zip(t) {
            let (p50, p95) = pct(t);
            println!(
                "sjournal search {q:?}{label} (fresh process, catch-up included), {} runs: p50 {:.1} ms, p95 {:.1} ms; rg / search: p50 {:.1}x, p95 {:.1}x",
                o.runs,
                ms(p50),
                ms(p95),
                rg_p50.as_secs_f64() / p50.as_secs_f64(),
                rg_p95.as_secs_f64() / p95.as_secs_f64()
            );
        }
    }

    for (label, bin) in &bins {
        let (p50, p95) = mcp_calls(bin, o.runs, &root_dir, &project);
        println!(
            "sjournal mcp{label}: {} tools/call search \"quokka\" on one server: p50 {:.1} ms, p95 {:.1} ms",
            o.runs,
            ms(p50),
            ms(p95)
        );
    }
}

/// Removes the corpus at the end unless it is kept (`--keep`).
struct Cleanup(Option<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(d) = &self.0 {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// R `tools/call search` on one `sjournal mcp` process: (p50, p95) of the round trips.
fn mcp_calls(bin: &Path, runs: usize, root: &Path, project: &Path) -> (Duration, Duration) {
    let mut child = Command::new(bin)
        .arg("--root")
        .arg(root)
        .arg("mcp")
        .arg("--project")
        .arg(project)
        .current_dir(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    fn call(
        stdin: &mut impl Write,
        out: &mut impl BufRead,
        id: u64,
        method: &str,
        params: Value,
    ) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(out.read_line(&mut line).unwrap() > 0, "sjournal mcp ended");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }
    call(
        &mut stdin,
        &mut out,
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "sjournal-bench", "version": "0"}}),
    );
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    writeln!(stdin, "{note}").unwrap();
    let mut t = Vec::new();
    for i in 0..runs {
        let s = Instant::now();
        let r = call(
            &mut stdin,
            &mut out,
            1 + i as u64,
            "tools/call",
            json!({"name": "search", "arguments": {"query": "quokka", "limit": 20}}),
        );
        t.push(s.elapsed());
        assert_ne!(r["isError"], true, "{r}");
        assert_eq!(
            r["structuredContent"]["hits"].as_array().map(Vec::len),
            Some(20),
            "{r}"
        );
    }
    drop(stdin);
    let _ = child.wait();
    pct(t)
}

fn dir_bytes(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
