//! Verify throughput on a 1 GB journal, two binaries side by side:
//!
//! ```sh
//! tools/bench.sh verify --before OLD_SJOURNAL_BINARY [--quick] [--runs N]
//! ```
//!
//! Rows: `sjournal verify` wall time (spawn to exit) of the binary built from this tree
//! against `--before`, runs interleaved; in process, `verify_file_with` on every core
//! against one worker (the sequential verify); the per-core figure against blake3's own speed
//! (keyed, one call per frame, as verify hashes) and crc32 on frames of the journal's size;
//! peak RSS of both binaries, 1 GB against 100 MB.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use sjournal::journal::{verify_file_with, Root, VerifyOptions};

use crate::gen;
use crate::stats::Samples;

struct Opts {
    after: PathBuf,
    before: Option<PathBuf>,
    payload: String,
    quick: bool,
    runs: usize,
}

fn parse(args: &[String]) -> Opts {
    let mut o = Opts {
        after: PathBuf::from("target/release/sjournal"),
        before: None,
        payload: String::new(),
        quick: false,
        runs: 7,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().expect("a value").clone();
        match a.as_str() {
            "--sjournal" => o.after = val().into(),
            "--before" => o.before = Some(val().into()),
            "--payload" => o.payload = std::fs::read_to_string(val()).unwrap(),
            "--runs" => o.runs = val().parse().unwrap(),
            "--quick" => o.quick = true,
            _ => panic!("unknown option {a}"),
        }
    }
    o
}

/// "median MB/s (min–max)" of byte counts over durations.
fn mbps(bytes: u64, s: &Samples) -> (f64, String) {
    let mb = bytes as f64 / 1e6;
    let med = mb / s.p(50.0);
    (
        med,
        format!(
            "{med:.0} MB/s ({:.0}–{:.0})",
            mb / s.p(100.0),
            mb / s.p(0.0)
        ),
    )
}

/// Runs `f`; returns its wall time and the CPU time (user + system) this process spent.
fn timed(f: impl FnOnce()) -> (std::time::Duration, std::time::Duration) {
    let cpu = cpu_of(libc::RUSAGE_SELF);
    let t = Instant::now();
    f();
    (t.elapsed(), cpu_of(libc::RUSAGE_SELF) - cpu)
}

fn children_cpu() -> std::time::Duration {
    cpu_of(libc::RUSAGE_CHILDREN)
}

/// CPU time (user + system) of this process or of the children waited for so far.
fn cpu_of(who: libc::c_int) -> std::time::Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec as u64)
            + std::time::Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Wall time and CPU time of one `sjournal verify`.
fn cli_verify(
    bin: &Path,
    root: &Path,
    session: &str,
) -> (std::time::Duration, std::time::Duration) {
    let cpu = children_cpu();
    let t = Instant::now();
    let st = Command::new(bin)
        .arg("--root")
        .arg(root)
        .args(["verify", "--session", session])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let d = t.elapsed();
    assert!(st.success(), "{} verify failed", bin.display());
    (d, children_cpu() - cpu)
}

fn peak_kib(me: &Path, bin: &Path, root: &Path, session: &str) -> u64 {
    let out = Command::new(me)
        .arg("rss")
        .arg(bin)
        .arg("--root")
        .arg(root)
        .args(["verify", "--session", session])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

pub fn run(args: &[String]) {
    let o = parse(args);
    let me = std::env::current_exe().unwrap();
    let tmp = tempfile::Builder::new()
        .prefix("verify-bench")
        .tempdir_in(".")
        .unwrap();
    let root = tmp.path();
    let (big_mb, small_mb) = if o.quick { (200, 20) } else { (1024, 100) };
    let big = gen::session_bytes(root, "big", big_mb << 20, &o.payload);
    let small = gen::session_bytes(root, "small", small_mb << 20, &o.payload);
    let journal = Root::new(root).session("big").unwrap().journal;
    let records = sjournal::journal::verify_file(&journal, None)
        .unwrap()
        .records;
    let frame = (big as usize) / records as usize;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("journal: {big} bytes, {records} records of about {frame} bytes; {cores} cores");
    println!("| measurement | now | baseline | ratio |");
    println!("|---|---|---|---|");

    // The CLI, this tree against --before, interleaved (a warm-up run of each first).
    if let Some(before) = &o.before {
        let (mut a, mut b) = (Samples::default(), Samples::default());
        let (mut acpu, mut bcpu) = (Samples::default(), Samples::default());
        cli_verify(&o.after, root, "big");
        cli_verify(before, root, "big");
        for _ in 0..o.runs {
            let (w, c) = cli_verify(before, root, "big");
            b.push(w);
            bcpu.push(c);
            let (w, c) = cli_verify(&o.after, root, "big");
            a.push(w);
            acpu.push(c);
        }
        let ((am, at), (bm, bt)) = (mbps(big, &a), mbps(big, &b));
        println!(
            "| `sjournal verify`, {big_mb} MB journal, wall (median, min–max of {} runs) | {at} | before: {bt} | {:.2}x |",
            o.runs,
            am / bm
        );
        let ((am, at), (bm, bt)) = (mbps(big, &acpu), mbps(big, &bcpu));
        println!(
            "| the same runs, bytes per CPU second (user + system, all threads) | {at} | before: {bt} | {:.2}x |",
            am / bm
        );
    }

    // In process: every core against one worker (the sequential verify), by wall time and
    // by the process's CPU time (every thread's).
    let (mut one, mut all) = (Samples::default(), Samples::default());
    let (mut one_cpu, mut all_cpu) = (Samples::default(), Samples::default());
    let verify = |workers| {
        let opts = VerifyOptions {
            workers,
            ..VerifyOptions::default()
        };
        timed(|| assert!(verify_file_with(&journal, None, opts).unwrap().ok))
    };
    verify(0);
    for _ in 0..o.runs {
        let (w, c) = verify(1);
        one.push(w);
        one_cpu.push(c);
        let (w, c) = verify(0);
        all.push(w);
        all_cpu.push(c);
    }
    let ((om, ot), (am, at)) = (mbps(big, &one), mbps(big, &all));
    println!(
        "| `verify_file`, {big_mb} MB, in process, wall, {cores} workers | {at} | 1 worker: {ot} | {:.2}x |",
        am / om
    );
    let ((ocm, oct), (acm, act)) = (mbps(big, &one_cpu), mbps(big, &all_cpu));
    println!(
        "| the same runs, bytes per CPU second | {act} | 1 worker: {oct} | {:.2}x |",
        acm / ocm
    );

    // The per-core ceiling, per CPU second: blake3 keyed (one call per frame, as verify
    // hashes) and crc32 on frames of the same size, over 256 MiB.
    let buf: Vec<u8> = (0..256usize << 20).map(|i| (i * 31 % 251) as u8).collect();
    let key = [7u8; 32];
    let (mut b3, mut crc) = (Samples::default(), Samples::default());
    for _ in 0..5 {
        let (_, c) = timed(|| {
            let x = buf
                .chunks(frame)
                .fold(0u8, |x, c| x ^ blake3::keyed_hash(&key, c).as_bytes()[0]);
            std::hint::black_box(x);
        });
        b3.push(c);
        let (_, c) = timed(|| {
            let y = buf.chunks(frame).fold(0u32, |y, c| y ^ crc32fast::hash(c));
            std::hint::black_box(y);
        });
        crc.push(c);
    }
    let (b3m, b3t) = mbps(buf.len() as u64, &b3);
    let (crcm, crct) = mbps(buf.len() as u64, &crc);
    let ceiling = 1.0 / (1.0 / b3m + 1.0 / crcm);
    println!(
        "| per core: verify, 1 worker, bytes per CPU second, against blake3 alone on {frame}-byte frames | {oct} | blake3 {b3t} | {:.2}x |",
        ocm / b3m
    );
    println!(
        "| per core: against blake3 + crc32 per frame (crc32 alone: {crct}) | {oct} | {ceiling:.0} MB/s | {:.2}x |",
        ocm / ceiling
    );

    // Peak memory, 1 GB against 100 MB, both binaries.
    let mut bins = vec![("now", &o.after)];
    if let Some(b) = &o.before {
        bins.push(("before", b));
    }
    for (name, bin) in bins {
        let (p_big, p_small) = (
            peak_kib(&me, bin, root, "big"),
            peak_kib(&me, bin, root, "small"),
        );
        println!(
            "| peak RSS of `sjournal verify` ({name}), {big_mb} MB vs {small_mb} MB journal | {} MiB | {} MiB | {:.2}x |",
            p_big / 1024,
            p_small / 1024,
            p_big as f64 / p_small as f64
        );
    }
    let _ = small;
}
