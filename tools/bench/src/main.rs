//! Side-by-side measurements for BENCHMARKS.md. Every figure is a median (or p99) over
//! repeated runs taken in this one process, interleaved with its baseline, and reported as a
//! ratio against that baseline. See tools/bench.sh.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sjournal::fold::digest::encode_event;
use sjournal::format::payload::encode_event_json;
use sjournal::journal::{Root, Writer, WriterOptions};

mod gen;
mod searchbig;
mod searchcmp;
mod stats;
mod tokens;
mod verify;
mod webhook;

use stats::Samples;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("floor") => floor(Path::new(&args[2])),
        Some("appender") => appender(&args[2..]),
        Some("rss") => rss(&args[2..]),
        Some("report") => report(&args[2..]),
        Some("hashspeed") => hash_speed(args[2].parse().unwrap()),
        Some("rssprobe") => rss_probe(Path::new(&args[2]), &args[3]),
        Some("tokens") => {
            let flag = |f: &str| {
                args.iter()
                    .position(|a| a == f)
                    .map(|i| PathBuf::from(&args[i + 1]))
            };
            let bin =
                flag("--sjournal").unwrap_or_else(|| PathBuf::from("target/release/sjournal"));
            for r in tokens::rows(&bin, flag("--baseline").as_deref()) {
                println!("{r}");
            }
        }
        Some("hookab") => webhook::hook_ab(&args[2..]),
        Some("webhook") => webhook::rows_only(&args[2..]),
        Some("verify") => verify::run(&args[2..]),
        // tantivy against SQLite FTS5 on the same documents (`sjournal-bench searchcmp N [RUNS]`).
        Some("searchcmp") => searchcmp::run(&args[2..]),
        // Search at 1M events against rg, index build against the cold fold, MCP calls
        // (`sjournal-bench searchbig --sjournal BIN [--before BIN] [--events N] [--sessions S] [--runs R]`).
        Some("searchbig") => searchbig::run(&args[2..]),
        // Only the fold rows (`sjournal-bench fold [--quick]`), for iterating on the fold.
        Some("fold") => {
            let o = Opts {
                sjournal: PathBuf::new(),
                hooker: PathBuf::new(),
                payload: String::new(),
                prompt: String::new(),
                quick: args.iter().any(|a| a == "--quick"),
                hook: false,
                hook_only: false,
                before: None,
            };
            let tmp = tempfile::tempdir().unwrap();
            fold_rows(&o, tmp.path(), &mut |r| println!("{r}"));
        }
        // One cold load of N fixture events with digests (`sjournal-bench foldload N`), for
        // instruction counts: `valgrind --tool=callgrind --toggle-collect='*load_paths*'`.
        Some("foldload") => fold_load(args[2].parse().unwrap()),
        // Where a cold load's wall time goes (`sjournal-bench foldparts N RUNS`): the frames
        // alone, the frames and the digests decoded, the load on one thread and on two, and a
        // serde_json::Value parse, interleaved; medians.
        Some("foldparts") => fold_parts(args[2].parse().unwrap(), args[3].parse().unwrap()),
        Some("gen") => {
            let template = std::fs::read_to_string(&args[5]).unwrap();
            let mb: u64 = args[4].parse().unwrap();
            gen::session_bytes(Path::new(&args[2]), &args[3], mb << 20, &template);
        }
        _ => {
            eprintln!("usage: sjournal-bench report --sjournal BIN --payload FILE [--quick] | tokens --sjournal BIN [--baseline BIN] | verify --sjournal BIN --payload FILE [--before BIN] [--runs N] [--quick] | fold [--quick] | foldload N | foldparts N RUNS | searchcmp N [RUNS] | searchbig --sjournal BIN [--before BIN] [--events N] [--sessions S] [--runs R] | gen ROOT SESSION MB PAYLOAD | floor FILE | appender ROOT SESSION N | rss CMD... | hookab BIN_A BIN_B PAYLOAD RUNS | webhook BIN PAYLOAD RUNS");
            std::process::exit(2);
        }
    }
}

/// The floor of a hook: a process that reads stdin and makes it durable with one
/// write + fdatasync, and nothing else.
fn floor(path: &Path) {
    let mut buf = Vec::new();
    std::io::stdin().read_to_end(&mut buf).unwrap();
    let mut f = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    f.write_all(&buf).unwrap();
    f.sync_data().unwrap();
}

/// One of many concurrent writers: N hook-like appends (open, lock, append, sync, close).
fn appender(args: &[String]) {
    let root = Root::new(&args[0]);
    let n: usize = args[2].parse().unwrap();
    let payload = encode_event("PostToolUse", &std::fs::read_to_string(&args[3]).unwrap());
    let release = args.get(4).is_some_and(|m| m == "release");
    for _ in 0..n {
        let mut w = Writer::open(&root, &args[1], &WriterOptions::default()).unwrap();
        if release {
            w.append_batch_and_release(&[("PostToolUse", &payload)])
                .unwrap();
        } else {
            w.append("PostToolUse", &payload).unwrap();
        }
    }
}

/// Runs a command and prints its peak resident set size in KiB (ru_maxrss of children).
fn rss(cmd: &[String]) {
    let status = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    println!("{} {}", ru.ru_maxrss, status.code().unwrap_or(-1));
}

struct Opts {
    sjournal: PathBuf,
    /// What the hook rows run: the `sjournal-hook` beside `sjournal` (what `sjournal install`
    /// points hosts at), else `sjournal` itself.
    hooker: PathBuf,
    payload: String,
    prompt: String,
    quick: bool,
    hook: bool,
    /// Only the hook-latency rows.
    hook_only: bool,
    /// Another build of sjournal (an earlier commit) timed in the same run, interleaved.
    before: Option<PathBuf>,
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        sjournal: PathBuf::from("target/release/sjournal"),
        hooker: PathBuf::new(),
        payload: String::new(),
        prompt: String::new(),
        quick: false,
        hook: true,
        hook_only: false,
        before: None,
    };
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--sjournal" => {
                o.sjournal = PathBuf::from(&args[i + 1]);
                i += 1
            }
            "--payload" => {
                o.payload = std::fs::read_to_string(&args[i + 1]).unwrap();
                i += 1
            }
            "--prompt-payload" => {
                o.prompt = std::fs::read_to_string(&args[i + 1]).unwrap();
                i += 1
            }
            "--quick" => o.quick = true,
            "--hook-only" => o.hook_only = true,
            "--before" => {
                o.before = Some(PathBuf::from(&args[i + 1]));
                i += 1
            }
            _ => panic!("unknown option {}", args[i]),
        }
        i += 1;
    }
    let lean = o.sjournal.with_file_name("sjournal-hook");
    o.hooker = if lean.is_file() {
        lean
    } else {
        o.sjournal.clone()
    };
    o.hook = Command::new(&o.sjournal)
        .args(["hook", "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    o
}

/// The CPU time (all threads, nanosecond clock: `perf stat -e task-clock`) of one hook run of
/// `bin`, or None without a usable `perf`. Much less sensitive than wall time to the
/// scheduling noise of a shared machine; `getrusage` times are counted in scheduler ticks,
/// too coarse for a 3 ms process.
fn task_clock(bin: &Path, root: &Path, stdin: &[u8]) -> Option<Duration> {
    let mut child = Command::new("perf")
        .args(["stat", "-x,", "-e", "task-clock", "--"])
        .arg(bin)
        .arg("--root")
        .arg(root)
        .arg("hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(stdin).ok()?;
    let out = child.wait_with_output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    let ms: f64 = err
        .lines()
        .find(|l| l.contains("task-clock"))?
        .split(',')
        .next()?
        .parse()
        .ok()?;
    Some(Duration::from_secs_f64(ms / 1e3))
}

/// The floor, timed right before every hook that is timed: each hook sample and each floor
/// sample then follows a run of another program. Run back to back, the second of two runs of
/// one binary found its code in warm caches and answered faster (the session that came second
/// in a round measured 0.88x-0.90x of the first, whatever its size).
struct Floor {
    bin: PathBuf,
    file: PathBuf,
    stdin: Vec<u8>,
    t: Samples,
}

impl Floor {
    /// Times a floor run, then `cmd` (returned).
    fn then(&mut self, cmd: &mut Command, stdin: &[u8]) -> Duration {
        let mut f = Command::new(&self.bin);
        f.arg("floor").arg(&self.file);
        self.t.push(time_spawn(&mut f, &self.stdin));
        time_spawn(cmd, stdin)
    }
}

fn time_spawn(cmd: &mut Command, stdin: &[u8]) -> Duration {
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let st = child.wait().unwrap();
    let d = t.elapsed();
    assert!(st.success(), "{cmd:?} failed");
    d
}

fn report(args: &[String]) {
    let o = parse_opts(args);
    let tmp = tempfile::tempdir_in(".").unwrap();
    let me = std::env::current_exe().unwrap();
    let mut rows: Vec<String> = Vec::new();
    let mut row = |r: String| {
        println!("{r}");
        rows.push(r);
    };
    row("| measurement | sjournal | baseline | ratio | target |".into());
    row("|---|---|---|---|---|".into());

    // 1. Hook latency, spawn to exit, against the floor and jq.
    let runs = if o.quick { 60 } else { 300 };
    let big = if o.quick { 100_000 } else { 1_000_000 };
    let root = tmp.path().join("hook");
    // The earlier build gets sessions of its own, made the same way: sharing them, each
    // build would reject the other's snapshot when their fold versions differ, replay the
    // journal in full and write its own snapshot before exiting, every time.
    let root_before = tmp.path().join("hook-before");
    let mut roots = vec![(&o.sjournal, &root)];
    if let Some(b) = &o.before {
        roots.push((b, &root_before));
    }
    for (bin, r) in roots {
        gen::session(r, "bench-small", 10, &o.payload);
        gen::session(r, "bench-big", big, &o.payload);
        for s in ["bench-small", "bench-big"] {
            let _ = Command::new(bin)
                .args(["--root"])
                .arg(r)
                .args(["snapshot", "--session", s])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
    let sub = if o.hook { "hook" } else { "append" };
    let with_session = |s: &str| gen::payload_for(&o.payload, s);
    let (p_small, p_big) = (with_session("bench-small"), with_session("bench-big"));
    let floor_file = tmp.path().join("floor.bin");
    let jq_file = tmp.path().join("jq.jsonl");
    let mut floor = Floor {
        bin: me.clone(),
        file: floor_file.clone(),
        stdin: p_small.clone().into_bytes(),
        t: Samples::default(),
    };
    let (mut small_t, mut big_t, mut jq_t) =
        (Samples::default(), Samples::default(), Samples::default());
    let (q_small, q_big) = (
        gen::payload_for(&o.prompt, "bench-small"),
        gen::payload_for(&o.prompt, "bench-big"),
    );
    let (mut qs_t, mut qb_t) = (Samples::default(), Samples::default());
    // The earlier build, same sessions, same payloads, interleaved with the rest.
    let mut before_t: [Samples; 4] = Default::default();
    // CPU time of the four hook figures, before and this build.
    let (mut cpu_before, mut cpu_after): ([Samples; 4], [Samples; 4]) = Default::default();
    for run in 0..runs {
        // The earlier build runs before this one's samples on even rounds, after on odd ones.
        let before_first = run % 2 == 0;
        let time_before =
            |floor: &mut Floor, before_t: &mut [Samples; 4], cpu: &mut [Samples; 4]| {
                let Some(b) = &o.before else { return };
                for (k, p) in [&p_small, &p_big, &q_small, &q_big].iter().enumerate() {
                    if p.is_empty() {
                        continue;
                    }
                    let mut c = Command::new(b);
                    c.arg("--root").arg(&root_before).arg("hook");
                    before_t[k].push(floor.then(&mut c, p.as_bytes()));
                    if let Some(t) = task_clock(b, &root_before, p.as_bytes()) {
                        cpu[k].push(t);
                    }
                }
            };
        // This build's CPU time, for the same comparison.
        let cpu_this = |cpu: &mut [Samples; 4]| {
            if o.before.is_none() {
                return;
            }
            for (k, p) in [&p_small, &p_big, &q_small, &q_big].iter().enumerate() {
                if let Some(t) = task_clock(&o.hooker, &root, p.as_bytes()) {
                    cpu[k].push(t);
                }
            }
        };
        if !before_first {
            cpu_this(&mut cpu_after);
        }
        if before_first {
            time_before(&mut floor, &mut before_t, &mut cpu_before);
        }
        if o.hook && !o.prompt.is_empty() {
            let mut c = Command::new(&o.hooker);
            c.arg("--root").arg(&root).arg(sub);
            qs_t.push(floor.then(&mut c, q_small.as_bytes()));
            let mut c = Command::new(&o.hooker);
            c.arg("--root").arg(&root).arg(sub);
            qb_t.push(floor.then(&mut c, q_big.as_bytes()));
        }
        let mut c = Command::new(&o.hooker);
        c.arg("--root").arg(&root).arg(sub);
        if !o.hook {
            c.args(["--session", "bench-small"]);
        }
        small_t.push(floor.then(&mut c, p_small.as_bytes()));
        let mut c = Command::new(&o.hooker);
        c.arg("--root").arg(&root).arg(sub);
        if !o.hook {
            c.args(["--session", "bench-big"]);
        }
        big_t.push(floor.then(&mut c, p_big.as_bytes()));
        jq_t.push(time_spawn(
            Command::new("sh")
                .arg("-c")
                .arg(format!("jq -c . >> '{}'", jq_file.display())),
            p_small.as_bytes(),
        ));
        if !before_first {
            time_before(&mut floor, &mut before_t, &mut cpu_before);
        } else {
            cpu_this(&mut cpu_after);
        }
    }
    let floor_t = floor.t;
    let cmd = format!("`sjournal {sub}`");
    row(format!(
        "| hook latency p50, 10 prior events ({cmd}) | {} | floor {} | {:.2}x | <= 1.5x |",
        stats::ms(small_t.p(50.0)),
        stats::ms(floor_t.p(50.0)),
        small_t.p(50.0) / floor_t.p(50.0)
    ));
    row(format!(
        "| hook latency p99, 10 prior events | {} | floor {} | {:.2}x | |",
        stats::ms(small_t.p(99.0)),
        stats::ms(floor_t.p(99.0)),
        small_t.p(99.0) / floor_t.p(99.0)
    ));
    row(format!(
        "| hook latency p50, {big} prior events | {} | 10 prior {} | {:.2}x | <= 1.2x |",
        stats::ms(big_t.p(50.0)),
        stats::ms(small_t.p(50.0)),
        big_t.p(50.0) / small_t.p(50.0)
    ));
    row(format!(
        "| hook latency p99, {big} prior events | {} | floor {} | {:.2}x | |",
        stats::ms(big_t.p(99.0)),
        stats::ms(floor_t.p(99.0)),
        big_t.p(99.0) / floor_t.p(99.0)
    ));
    if !qs_t.is_empty() {
        row(format!(
            "| hook latency p50, UserPromptSubmit (folds + renders context), 10 prior | {} | floor {} | {:.2}x | <= 1.5x |",
            stats::ms(qs_t.p(50.0)),
            stats::ms(floor_t.p(50.0)),
            qs_t.p(50.0) / floor_t.p(50.0)
        ));
        row(format!(
            "| hook latency p50, UserPromptSubmit, {big} prior | {} | 10 prior {} | {:.2}x | <= 1.2x |",
            stats::ms(qb_t.p(50.0)),
            stats::ms(qs_t.p(50.0)),
            qb_t.p(50.0) / qs_t.p(50.0)
        ));
        row(format!(
            "| hook latency p99, UserPromptSubmit, {big} prior | {} | floor {} | {:.2}x | |",
            stats::ms(qb_t.p(99.0)),
            stats::ms(floor_t.p(99.0)),
            qb_t.p(99.0) / floor_t.p(99.0)
        ));
    }
    row(format!(
        "| hook latency p50 vs `jq -c . >> file` (no fsync) | {} | jq {} | {:.2}x | |",
        stats::ms(small_t.p(50.0)),
        stats::ms(jq_t.p(50.0)),
        small_t.p(50.0) / jq_t.p(50.0)
    ));
    if o.before.is_some() {
        let labels = [
            "PostToolUse, 10 prior",
            "PostToolUse, big prior",
            "UserPromptSubmit, 10 prior",
            "UserPromptSubmit, big prior",
        ];
        let after = [&small_t, &big_t, &qs_t, &qb_t];
        for k in 0..4 {
            if before_t[k].is_empty() || after[k].is_empty() {
                continue;
            }
            row(format!(
                "| before (--before build) p50, {} | {} (floor ratio {:.2}x) | this build {} (floor ratio {:.2}x) | {:.2}x this/before | |",
                labels[k],
                stats::ms(before_t[k].p(50.0)),
                before_t[k].p(50.0) / floor_t.p(50.0),
                stats::ms(after[k].p(50.0)),
                after[k].p(50.0) / floor_t.p(50.0),
                after[k].p(50.0) / before_t[k].p(50.0)
            ));
            if cpu_before[k].is_empty() || cpu_after[k].is_empty() {
                continue;
            }
            row(format!(
                "| before (--before build) CPU p50 (perf task-clock), {} | {} | this build {} | {:.2}x this/before | |",
                labels[k],
                stats::ms(cpu_before[k].p(50.0)),
                stats::ms(cpu_after[k].p(50.0)),
                cpu_after[k].p(50.0) / cpu_before[k].p(50.0)
            ));
        }
    }
    if o.hook_only {
        let _ = std::fs::write("bench-table.md", rows.join("\n") + "\n");
        return;
    }

    // The hook with a webhook to a hanging endpoint (and to a fast one) against none.
    if o.hook {
        webhook::rows(&o.hooker, &o.payload, tmp.path(), runs, &mut row);
    }

    // 2. Durable append rate against a raw write+fdatasync loop of the same bytes.
    let n = if o.quick { 300 } else { 2000 };
    let payload = encode_event("PostToolUse", &p_small);
    let aroot = Root::new(tmp.path().join("append"));
    let mut w = Writer::open(&aroot, "rate", &WriterOptions::default()).unwrap();
    let frame_len = sjournal::format::record::frame_len("PostToolUse", payload.len());
    let raw_path = tmp.path().join("raw.bin");
    let mut raw = OpenOptions::new()
        .append(true)
        .create(true)
        .open(&raw_path)
        .unwrap();
    let frame = vec![0x5au8; frame_len];
    let (mut sj, mut rw) = (Samples::default(), Samples::default());
    for _ in 0..n {
        let t = Instant::now();
        w.append("PostToolUse", &payload).unwrap();
        sj.push(t.elapsed());
        let t = Instant::now();
        raw.write_all(&frame).unwrap();
        raw.sync_data().unwrap();
        rw.push(t.elapsed());
    }
    drop(w);
    row(format!(
        "| durable append, 1 writer (appends/s, from median) | {:.0}/s | raw write+fdatasync {:.0}/s | {:.2}x | >= 0.9x |",
        1.0 / sj.p(50.0),
        1.0 / rw.p(50.0),
        rw.p(50.0) / sj.p(50.0)
    ));

    // 16 concurrent writers (hook-like: open, lock, append, sync, close) vs 1.
    let per = if o.quick { 50 } else { 200 };
    let payload_file = tmp.path().join("payload.json");
    std::fs::write(&payload_file, &p_small).unwrap();
    let croot = tmp.path().join("conc");
    let run_writers = |k: usize, session: &str, mode: &str| {
        let t = Instant::now();
        let children: Vec<_> = (0..k)
            .map(|_| {
                Command::new(&me)
                    .arg("appender")
                    .arg(&croot)
                    .arg(session)
                    .arg(per.to_string())
                    .arg(&payload_file)
                    .arg(mode)
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        (k * per) as f64 / t.elapsed().as_secs_f64()
    };
    let one = run_writers(1, "one", "release");
    let held = run_writers(16, "held", "hold");
    let sixteen = run_writers(16, "sixteen", "release");
    row(format!(
        "| durable appends/s, 16 concurrent writers, lock held through fsync (before) | {held:.0}/s | 1 writer {one:.0}/s | {:.2}x | |",
        held / one
    ));
    row(format!(
        "| durable appends/s, 16 concurrent writers, lock released before fsync (group commit) | {sixteen:.0}/s | 1 writer {one:.0}/s | {:.2}x | well above 1x |",
        sixteen / one
    ));

    // Fold throughput against serde_json over the same events as JSONL, and SQLite.
    fold_rows(&o, tmp.path(), &mut row);

    // 3. Verify throughput and peak memory.
    let mb100 = if o.quick { 20 } else { 100 };
    let vroot = tmp.path().join("verify");
    let small_bytes = gen::session_bytes(&vroot, "v100", mb100 << 20, &o.payload);
    let path = Root::new(&vroot).session("v100").unwrap().journal;
    let mut vt = Samples::default();
    for _ in 0..5 {
        let t = Instant::now();
        let r = sjournal::journal::verify_file(&path, None).unwrap();
        assert!(r.ok);
        vt.push(t.elapsed());
    }
    let mbps = small_bytes as f64 / 1e6 / vt.p(50.0);
    row(format!(
        "| verify throughput, one core | {mbps:.0} MB/s | | | >= 1000 MB/s |"
    ));
    let peak = |session: &str| -> u64 {
        let out = Command::new(&me)
            .arg("rss")
            .arg(&o.sjournal)
            .arg("--root")
            .arg(&vroot)
            .args(["verify", "--session", session])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let p100 = peak("v100");
    if !o.quick {
        gen::session_bytes(&vroot, "v1g", 1 << 30, &o.payload);
        let p1g = peak("v1g");
        let r100 = peak_replay(&me, &o.sjournal, &vroot, "v100");
        let r1g = peak_replay(&me, &o.sjournal, &vroot, "v1g");
        row(format!(
            "| peak RSS of `sjournal state` (full replay), 1 GB vs 100 MB journal | {} MiB | {} MiB | {:.2}x | <= 1.2x |",
            r1g / 1024,
            r100 / 1024,
            r1g as f64 / r100 as f64
        ));
        row(format!(
            "| peak RSS of `sjournal verify`, 1 GB vs 100 MB journal | {} MiB | {} MiB | {:.2}x | <= 1.2x |",
            p1g / 1024,
            p100 / 1024,
            p1g as f64 / p100 as f64
        ));
    } else {
        row(format!(
            "| peak RSS of `sjournal verify`, {mb100} MB journal | {} MiB | | | |",
            p100 / 1024
        ));
    }

    // The context injected over a scripted session, against a model of the code before the
    // injection policy (a build of it can be compared with `sjournal-bench tokens --baseline`).
    if o.hook {
        for r in tokens::rows(&o.sjournal, None) {
            row(r);
        }
    }

    let _ = std::fs::write("bench-table.md", rows.join("\n") + "\n");
}

/// Ceiling of per-record hashing: blake3 and crc32 over frames of the given size.
#[allow(dead_code)]
pub fn hash_speed(frame: usize) {
    let buf = vec![7u8; 64 << 20];
    for (name, f) in [
        (
            "blake3",
            &(|b: &[u8]| blake3::hash(b).as_bytes()[0] as u32) as &dyn Fn(&[u8]) -> u32,
        ),
        ("crc32", &|b: &[u8]| crc32fast::hash(b)),
    ] {
        let t = Instant::now();
        let mut x = 0u32;
        for c in buf.chunks(frame) {
            x ^= f(c);
        }
        println!(
            "{name} on {frame}-byte frames: {:.0} MB/s ({x})",
            buf.len() as f64 / 1e6 / t.elapsed().as_secs_f64()
        );
    }
}

fn peak_replay(me: &Path, sjournal: &Path, root: &Path, session: &str) -> u64 {
    let out = Command::new(me)
        .arg("rss")
        .arg(sjournal)
        .arg("--root")
        .arg(root)
        .args(["state", "--no-snapshot", "--session", session])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn fold_load(n: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let root = Root::new(tmp.path().join("fold"));
    write_fixture_journal(&root, "fold", &gen::fixture_events(n), true);
    let paths = root.session("fold").unwrap();
    let opts = sjournal::snapshot::LoadOptions::default();
    let state = sjournal::snapshot::load_paths(&paths, &opts).unwrap().0;
    println!("{} records", state.records);
}

/// Appends `lines` (fixture events) to a new journal `session` under `root`, ten thousand
/// per durable batch, with fixed timestamps (the same in every journal of them: the fold
/// reads time from records), with digests (as this build writes events) or without (as the
/// format wrote them before digests). Returns the seconds it took.
fn write_fixture_journal(root: &Root, session: &str, lines: &[String], digests: bool) -> f64 {
    let mut w = Writer::open(root, session, &WriterOptions::default()).unwrap();
    let t = Instant::now();
    for (c, chunk) in lines.chunks(10_000).enumerate() {
        let payloads: Vec<(String, Vec<u8>)> = chunk
            .iter()
            .map(|l| {
                let k = gen::kind_of(l);
                let p = if digests {
                    encode_event(&k, l)
                } else {
                    encode_event_json(l)
                };
                (k, p)
            })
            .collect();
        let items: Vec<(&str, &[u8])> =
            payloads.iter().map(|(k, p)| (k.as_str(), &p[..])).collect();
        let base = 1_767_225_600_000_000_000i64 + c as i64 * 10_000_000_000;
        w.append_batch_timed(|i| base + i as i64 * 1_000_000, &items)
            .unwrap();
    }
    t.elapsed().as_secs_f64()
}

/// Where a cold load's wall time goes, over `n` fixture events with digests: the frames
/// alone (from the mapped journal, and from a copy in memory), a CRC of the whole file, the
/// frames and the digests decoded, the load on one thread and as `load_paths` runs it, and
/// a `serde_json::Value` parse of the same events; `runs` of each, interleaved, medians.
fn fold_parts(n: usize, runs: usize) {
    use sjournal::event::{Event, EventKind, Host};
    use sjournal::fold::State;
    use sjournal::format::payload::{event_digest, is_system_kind};
    use sjournal::journal::reader::Records;
    use sjournal::journal::scan::Chain;
    use sjournal::journal::JournalReader;
    use sjournal::snapshot::{load_paths, LoadOptions};
    let tmp = tempfile::tempdir().unwrap();
    let root = Root::new(tmp.path().join("fold"));
    let lines: Vec<String> = gen::fixture_events(n);
    write_fixture_journal(&root, "fold", &lines, true);
    let paths = root.session("fold").unwrap();
    let jsonl = lines.join("\n");
    let in_memory = std::fs::read(&paths.journal).unwrap();
    let reader = || JournalReader::open(&paths.journal, None).unwrap();
    let (_, hlen, genesis) = reader().header().unwrap();
    let chain = Chain::genesis(genesis);
    let frames = |records: Records<'_>| {
        records
            .first_link_only()
            .map(|r| r.unwrap().seq & 1)
            .sum::<u64>()
    };
    type Part<'a> = (&'static str, Box<dyn Fn() -> u64 + 'a>);
    let parts: Vec<Part<'_>> = vec![
        (
            "frames",
            Box::new(|| frames(reader().records_from(hlen, chain))),
        ),
        (
            "frames in memory",
            Box::new(|| frames(Records::new(&in_memory, hlen, chain))),
        ),
        (
            "CRC of the file",
            Box::new(|| u64::from(crc32fast::hash(&in_memory))),
        ),
        (
            "frames+decode",
            Box::new(|| {
                // Each event decoded into one slot, as the load's reader does.
                let r = reader();
                let mut slot = Event::bare(Host::Unknown, EventKind::Other, "".into());
                let decoded = r.records_from(hlen, chain).first_link_only().filter(|r| {
                    let r = r.as_ref().unwrap();
                    !is_system_kind(r.kind)
                        && event_digest(r.payload)
                            .is_some_and(|d| sjournal::fold::digest::decode_into(d, &mut slot))
                });
                decoded.count() as u64
            }),
        ),
        (
            "one thread",
            Box::new(|| {
                let r = reader();
                let mut state = State::default();
                let records = r.records_from(hlen, chain).first_link_only();
                sjournal::snapshot::fold_records(records, &mut state, false)
            }),
        ),
        (
            "load_paths",
            Box::new(|| {
                load_paths(&paths, &LoadOptions::default())
                    .unwrap()
                    .0
                    .records
            }),
        ),
        (
            "Value parse",
            Box::new(|| {
                jsonl
                    .lines()
                    .filter(|l| {
                        serde_json::from_str::<serde_json::Value>(l)
                            .unwrap()
                            .is_object()
                    })
                    .count() as u64
            }),
        ),
    ];
    let mut t: Vec<Samples> = parts.iter().map(|_| Samples::default()).collect();
    for _ in 0..runs {
        for ((_, part), samples) in parts.iter().zip(&mut t) {
            let s = Instant::now();
            std::hint::black_box(part());
            samples.push(s.elapsed());
        }
    }
    let json = t[parts.len() - 1].p(50.0);
    for ((name, _), s) in parts.iter().zip(&t) {
        println!(
            "{name:>16}: {:7.1} ms  {:9.0} ev/s  {:5.2}x of Value",
            s.p(50.0) * 1e3,
            n as f64 / s.p(50.0),
            json / s.p(50.0)
        );
    }
}

/// Fold (cold, from the journal) against parsing the same events as JSONL with serde_json,
/// and against SQLite storing them (synchronous=FULL, one transaction) and reading them back.
fn fold_rows(o: &Opts, dir: &Path, row: &mut impl FnMut(String)) {
    use sjournal::fold::{RecordView, State};
    use sjournal::journal::JournalReader;
    use sjournal::snapshot::{load_paths, LoadOptions};
    let n = if o.quick { 20_000 } else { 200_000 };
    let lines: Vec<String> = gen::fixture_events(n);
    let root = Root::new(dir.join("fold"));
    // The same events twice: with digests (as this build writes them) and without (as the
    // format wrote them before digests).
    let store =
        |session: &str, digests: bool| write_fixture_journal(&root, session, &lines, digests);
    let sj_store = store("fold", true);
    let sj_store_json = store("fold-json", false);
    let paths = root.session("fold").unwrap();
    let json_paths = root.session("fold-json").unwrap();
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    let (with_bytes, json_bytes) = (size(&paths.journal), size(&json_paths.journal));
    let jsonl = lines.join("\n");
    // Every link checked, as loads did before (the reader's `records()`).
    let fold_every_link = |path: &Path| {
        let reader = JournalReader::open(path, None).unwrap();
        let mut state = State::default();
        for r in reader.records().unwrap() {
            state.apply(&RecordView::from(&r.unwrap()));
        }
        state
    };
    // What `load_paths` does on one thread (as it does for a tail under 4 MiB): CRCs and seqs
    // of every record, the first link only, each event decoded into one slot and folded in
    // turn.
    let fold_one_thread = |path: &Path| {
        let reader = JournalReader::open(path, None).unwrap();
        let (_, hlen, genesis) = reader.header().unwrap();
        let chain = sjournal::journal::scan::Chain::genesis(genesis);
        let mut state = State::default();
        let records = reader.records_from(hlen, chain).first_link_only();
        sjournal::snapshot::fold_records(records, &mut state, false);
        state
    };
    // The load path (`load_paths`): CRCs and seqs of every record, the first link only.
    let no_snapshot = LoadOptions::default();
    let load = |p: &sjournal::journal::SessionPaths| load_paths(p, &no_snapshot).unwrap().0;
    let (mut fold_t, mut json_t) = (Samples::default(), Samples::default());
    let (mut chained_t, mut before_t, mut json_load_t) =
        (Samples::default(), Samples::default(), Samples::default());
    let mut one_thread_t = Samples::default();
    for _ in 0..5 {
        let t = Instant::now();
        let state = load(&paths);
        fold_t.push(t.elapsed());
        assert_eq!(state.records as usize, n);
        let t = Instant::now();
        let one_thread = fold_one_thread(&paths.journal);
        one_thread_t.push(t.elapsed());
        let t = Instant::now();
        let chained = fold_every_link(&paths.journal);
        chained_t.push(t.elapsed());
        let t = Instant::now();
        let before = fold_every_link(&json_paths.journal);
        before_t.push(t.elapsed());
        let t = Instant::now();
        let json_loaded = load(&json_paths);
        json_load_t.push(t.elapsed());
        // The digests fold to the very state the JSON does.
        assert_eq!(state.encode(), one_thread.encode());
        assert_eq!(state.encode(), chained.encode());
        assert_eq!(state.encode(), before.encode());
        assert_eq!(state.encode(), json_loaded.encode());
        let t = Instant::now();
        let mut k = 0;
        for l in jsonl.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            k += v.is_object() as usize;
        }
        assert_eq!(k, n);
        json_t.push(t.elapsed());
    }
    let rate = |s: f64| n as f64 / s;
    let json = json_t.p(50.0);
    row(format!(
        "| fold, cold from the journal ({n} fixture events with digests, {:.0} MB; `load_paths`: CRC + seq of every record, first link) | {:.0} ev/s | serde_json::Value over JSONL {:.0} ev/s | {:.2}x | >= 5x |",
        with_bytes as f64 / 1e6,
        rate(fold_t.p(50.0)),
        rate(json),
        json / fold_t.p(50.0)
    ));
    row(format!(
        "| the same load on one thread (what `load_paths` does for a tail under 4 MiB) | {:.0} ev/s | serde_json::Value {:.0} ev/s | {:.2}x | |",
        rate(one_thread_t.p(50.0)),
        rate(json),
        json / one_thread_t.p(50.0)
    ));
    row(format!(
        "| fold with digests, every chain link checked | {:.0} ev/s | serde_json::Value {:.0} ev/s | {:.2}x | |",
        rate(chained_t.p(50.0)),
        rate(json),
        json / chained_t.p(50.0)
    ));
    row(format!(
        "| fold without digests (journal as written before, {:.0} MB), every link checked (the load before) | {:.0} ev/s | serde_json::Value {:.0} ev/s | {:.2}x | |",
        json_bytes as f64 / 1e6,
        rate(before_t.p(50.0)),
        rate(json),
        json / before_t.p(50.0)
    ));
    row(format!(
        "| fold without digests, `load_paths` (first link) | {:.0} ev/s | serde_json::Value {:.0} ev/s | {:.2}x | |",
        rate(json_load_t.p(50.0)),
        rate(json),
        json / json_load_t.p(50.0)
    ));
    row(format!(
        "| store {n} events, with digests vs without (append_batch, one sync per 10,000) | {:.0} ev/s | without {:.0} ev/s | {:.2}x | |",
        rate(sj_store),
        rate(sj_store_json),
        sj_store_json / sj_store
    ));

    // SQLite, bundled, synchronous=FULL, WAL off (rollback journal), one transaction.
    let db_path = dir.join("events.db");
    let mut db = rusqlite::Connection::open(&db_path).unwrap();
    db.execute_batch("PRAGMA synchronous=FULL; CREATE TABLE events(seq INTEGER PRIMARY KEY, kind TEXT, payload TEXT);")
        .unwrap();
    let t = Instant::now();
    let tx = db.transaction().unwrap();
    {
        let mut st = tx
            .prepare("INSERT INTO events(kind, payload) VALUES (?1, ?2)")
            .unwrap();
        for l in &lines {
            st.execute(rusqlite::params![gen::kind_of(l), l]).unwrap();
        }
    }
    tx.commit().unwrap();
    let sq_store = t.elapsed().as_secs_f64();
    let mut sq_read = Samples::default();
    for _ in 0..5 {
        let t = Instant::now();
        let mut st = db
            .prepare("SELECT kind, payload FROM events ORDER BY seq")
            .unwrap();
        let mut rows = st.query([]).unwrap();
        let mut k = 0;
        while let Some(r) = rows.next().unwrap() {
            let p: String = r.get(1).unwrap();
            k += !p.is_empty() as usize;
        }
        assert_eq!(k, n);
        sq_read.push(t.elapsed());
    }
    row(format!(
        "| store {n} events durably (one sync) | sjournal append_batch {:.0} ev/s | SQLite synchronous=FULL, one transaction {:.0} ev/s | {:.2}x | |",
        rate(sj_store),
        rate(sq_store),
        sq_store / sj_store
    ));
    row(format!(
        "| read them back | sjournal fold (parse + fold) {:.0} ev/s | SQLite SELECT (rows only, no parse) {:.0} ev/s | {:.2}x | |",
        rate(fold_t.p(50.0)),
        rate(sq_read.p(50.0)),
        sq_read.p(50.0) / fold_t.p(50.0)
    ));
}

/// Resident memory after iterating a journal in different ways (for finding what holds pages).
#[allow(dead_code)]
pub fn rss_probe(path: &Path, mode: &str) {
    use sjournal::fold::{RecordView, State};
    use sjournal::journal::JournalReader;
    let reader = JournalReader::open(path, None).unwrap();
    let mut state = State::default();
    let mut n = 0u64;
    for r in reader.records().unwrap() {
        let r = r.unwrap();
        match mode {
            "iter" => n += r.payload.len() as u64,
            "decode" => {
                n += sjournal::format::payload::decode_event(r.seq, r.payload)
                    .unwrap()
                    .len() as u64
            }
            _ => state.apply(&RecordView::from(&r)),
        }
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let rss = status.lines().find(|l| l.starts_with("VmRSS")).unwrap();
    let hwm = status.lines().find(|l| l.starts_with("VmHWM")).unwrap();
    println!("{mode}: {rss} {hwm} ({n} {})", state.seq);
}
