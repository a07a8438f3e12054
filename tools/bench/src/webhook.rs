//! The hook's latency with a webhook configured, against the same hook without one, in the
//! same run (interleaved): an endpoint that accepts and never answers (the deliverer hangs in
//! its POST; each hook only probes the delivery lock), and one that answers 200 at once (the
//! deliverer finishes between events, so most hooks start a new one). Also `hookab`: the same
//! hook under two builds of sjournal, to price a dependency.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::gen;
use crate::stats::{self, Samples};

/// Accepts connections and never answers; closes them all when dropped.
struct Hanging {
    port: u16,
    held: Arc<Mutex<Vec<std::net::TcpStream>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Hanging {
    fn start() -> Hanging {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let held = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (h, s) = (held.clone(), stop.clone());
        std::thread::spawn(move || {
            for c in l.incoming() {
                if s.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                if let Ok(c) = c {
                    h.lock().unwrap().push(c);
                }
            }
        });
        Hanging { port, held, stop }
    }
}

impl Drop for Hanging {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        self.held.lock().unwrap().clear();
    }
}

/// Answers every request 200 at once; counts them.
fn answering() -> (u16, Arc<Mutex<usize>>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let count = Arc::new(Mutex::new(0usize));
    let c = count.clone();
    std::thread::spawn(move || {
        for req in server.incoming_requests() {
            *c.lock().unwrap() += 1;
            let _ = req.respond(tiny_http::Response::empty(200));
        }
    });
    (port, count)
}

fn root_with(dir: &Path, name: &str, payload: &str, config: &str) -> PathBuf {
    let root = dir.join(name);
    gen::session(&root, "bench-wh", 10, payload);
    std::fs::write(root.join("config.toml"), config).unwrap();
    root
}

fn webhook_config(name: &str, port: u16) -> String {
    format!(
        "[[webhook]]\nname = \"{name}\"\nevents = [\"*\"]\nurl = \"http://127.0.0.1:{port}/in\"\ntimeout_ms = 600000\n[webhook.retry]\nattempts = 1\n"
    )
}

fn hook(sjournal: &Path, root: &Path, payload: &[u8]) -> Duration {
    let mut c = Command::new(sjournal);
    c.arg("--root").arg(root).arg("hook");
    crate::time_spawn(&mut c, payload)
}

/// The deliverer pid recorded for the bench session, if it still runs.
fn deliverer(root: &Path) -> Option<i32> {
    let lock = root.join("sessions/bench-wh.webhook/deliver.lock");
    let pid: i32 = std::fs::read_to_string(lock).ok()?.trim().parse().ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
    (state != 'Z' && state != 'X').then_some(pid)
}

pub fn rows(sjournal: &Path, payload: &str, dir: &Path, runs: usize, row: &mut impl FnMut(String)) {
    let hang = Hanging::start();
    let (ok_port, answered) = answering();
    let none = root_with(dir, "wh-none", payload, "");
    let hung = root_with(dir, "wh-hang", payload, &webhook_config("hang", hang.port));
    let ok = root_with(dir, "wh-ok", payload, &webhook_config("ok", ok_port));
    let p = gen::payload_for(payload, "bench-wh");
    let (mut t_none, mut t_hang, mut t_ok) =
        (Samples::default(), Samples::default(), Samples::default());
    for _ in 0..runs {
        t_none.push(hook(sjournal, &none, p.as_bytes()));
        t_hang.push(hook(sjournal, &hung, p.as_bytes()));
        t_ok.push(hook(sjournal, &ok, p.as_bytes()));
    }
    let hanging_deliverer = deliverer(&hung);
    // Let the answering endpoint's deliverer finish, then count what arrived.
    let t = Instant::now();
    while deliverer(&ok).is_some() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let delivered = *answered.lock().unwrap();
    let held = hang.held.lock().unwrap().len();
    row(format!(
        "| hook latency p50, webhook to a hanging endpoint ({held} connection(s) held open, deliverer {}) | {} | no webhook {} | {:.2}x | ~1x |",
        if hanging_deliverer.is_some() { "still hanging at the end" } else { "not running" },
        stats::ms(t_hang.p(50.0)),
        stats::ms(t_none.p(50.0)),
        t_hang.p(50.0) / t_none.p(50.0)
    ));
    row(format!(
        "| hook latency p99, webhook to a hanging endpoint | {} | no webhook {} | {:.2}x | |",
        stats::ms(t_hang.p(99.0)),
        stats::ms(t_none.p(99.0)),
        t_hang.p(99.0) / t_none.p(99.0)
    ));
    row(format!(
        "| hook latency p50, webhook to an endpoint answering 200 at once ({delivered} of {} events delivered) | {} | no webhook {} | {:.2}x | |",
        runs + 10,
        stats::ms(t_ok.p(50.0)),
        stats::ms(t_none.p(50.0)),
        t_ok.p(50.0) / t_none.p(50.0)
    ));
    drop(hang);
    // The hung deliverer gets its connection closed, fails its one attempt and exits.
    let t = Instant::now();
    while deliverer(&hung).is_some() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `webhook BIN PAYLOAD RUNS`: only the webhook rows of the report.
pub fn rows_only(args: &[String]) {
    let payload = std::fs::read_to_string(&args[1]).unwrap();
    let runs: usize = args[2].parse().unwrap();
    let tmp = tempfile::tempdir_in(".").unwrap();
    println!("| measurement | sjournal | baseline | ratio | target |");
    println!("|---|---|---|---|---|");
    rows(Path::new(&args[0]), &payload, tmp.path(), runs, &mut |r| {
        println!("{r}")
    });
}

/// `hookab BIN_A BIN_B PAYLOAD RUNS`: `sjournal hook` (PostToolUse, 10 prior events, no
/// config) under two builds, interleaved; prints a table row of B against A.
pub fn hook_ab(args: &[String]) {
    let (a, b) = (PathBuf::from(&args[0]), PathBuf::from(&args[1]));
    let payload = std::fs::read_to_string(&args[2]).unwrap();
    let runs: usize = args[3].parse().unwrap();
    let tmp = tempfile::tempdir_in(".").unwrap();
    let (ra, rb) = (
        root_with(tmp.path(), "a", &payload, ""),
        root_with(tmp.path(), "b", &payload, ""),
    );
    let p = gen::payload_for(&payload, "bench-wh");
    let (mut ta, mut tb) = (Samples::default(), Samples::default());
    for _ in 0..runs {
        ta.push(hook(&a, &ra, p.as_bytes()));
        tb.push(hook(&b, &rb, p.as_bytes()));
    }
    println!("| measurement | B | A | ratio |");
    println!("|---|---|---|---|");
    for q in [50.0, 99.0] {
        println!(
            "| hook latency p{q}, {} vs {} ({runs} runs each, interleaved) | {} | {} | {:.2}x |",
            b.display(),
            a.display(),
            stats::ms(tb.p(q)),
            stats::ms(ta.p(q)),
            tb.p(q) / ta.p(q)
        );
    }
}
