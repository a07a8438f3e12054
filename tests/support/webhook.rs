//! A webhook receiver for the tests: a real HTTP server (tiny_http) on 127.0.0.1 that records
//! every POST and answers as told (200, another status, or never), and helpers to wait for the
//! detached deliverer the hook starts.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the receiver answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Ok,
    /// Answer this status, with `body` (`{auth}` replaced by the Authorization header received;
    /// `{auth:lower}`, `{auth:upper}`, `{auth:b64}`, `{auth:b64url}`, `{auth:hex}` and
    /// `{auth:url}` by that header transformed, as receivers echo credentials back).
    Status(u16, String),
    /// Read the request, never answer (the connection stays open until the receiver stops).
    Hang,
    /// Answer 200, except the `n`-th request (1-based, counted from now), which hangs.
    HangNth(usize),
}

/// One request received.
#[derive(Debug, Clone)]
pub struct Post {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The status answered; None if never answered.
    pub answered: Option<u16>,
}

impl Post {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn key(&self) -> &str {
        self.header("Idempotency-Key").expect("an Idempotency-Key")
    }
}

struct State {
    mode: Mode,
    since_mode: usize,
    posts: Vec<Post>,
    held: Vec<tiny_http::Request>,
}

pub struct Receiver {
    pub port: u16,
    server: Arc<tiny_http::Server>,
    state: Arc<Mutex<State>>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    pub fn start(mode: Mode) -> Receiver {
        Self::start_on(0, mode)
    }

    /// On `port` (0: any free port).
    pub fn start_on(port: u16, mode: Mode) -> Receiver {
        let server =
            Arc::new(tiny_http::Server::http(("127.0.0.1", port)).expect("bind the test receiver"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let state = Arc::new(Mutex::new(State {
            mode,
            since_mode: 0,
            posts: Vec::new(),
            held: Vec::new(),
        }));
        let (srv, st) = (server.clone(), state.clone());
        let thread = std::thread::spawn(move || {
            while let Ok(mut req) = srv.recv() {
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let headers: Vec<(String, String)> = req
                    .headers()
                    .iter()
                    .map(|h| (h.field.to_string(), h.value.to_string()))
                    .collect();
                let mut s = st.lock().unwrap();
                s.since_mode += 1;
                let answer = match s.mode.clone() {
                    Mode::Ok => Some((200, String::from("ok"))),
                    Mode::Status(code, text) => {
                        let auth = headers
                            .iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                            .map(|(_, v)| v.clone())
                            .unwrap_or_default();
                        Some((code, echo(&text, &auth)))
                    }
                    Mode::Hang => None,
                    Mode::HangNth(n) if s.since_mode == n => None,
                    Mode::HangNth(_) => Some((200, String::from("ok"))),
                };
                s.posts.push(Post {
                    path: req.url().to_owned(),
                    headers,
                    body,
                    answered: answer.as_ref().map(|a| a.0),
                });
                match answer {
                    Some((code, text)) => {
                        drop(s);
                        let _ = req
                            .respond(tiny_http::Response::from_string(text).with_status_code(code));
                    }
                    None => s.held.push(req),
                }
            }
        });
        Receiver {
            port,
            server,
            state,
            thread: Some(thread),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn set_mode(&self, mode: Mode) {
        let mut s = self.state.lock().unwrap();
        s.mode = mode;
        s.since_mode = 0;
    }

    pub fn posts(&self) -> Vec<Post> {
        self.state.lock().unwrap().posts.clone()
    }

    /// Requests received and not answered (hanging).
    pub fn held(&self) -> usize {
        self.state.lock().unwrap().held.len()
    }

    /// Posts answered 2xx.
    pub fn accepted(&self) -> Vec<Post> {
        self.posts()
            .into_iter()
            .filter(|p| p.answered.is_some_and(|s| (200..300).contains(&s)))
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Held requests are dropped with the state: tiny_http answers them 500.
    }
}

/// Runs `sjournal --root ROOT <args>` with `stdin` and waits, at most `limit`, for it to exit
/// and for its stdout and stderr to close; panics if either does not happen. So a hook that
/// waited for a delivery, or left a child holding the host's pipes, fails here instead of
/// hanging the test.
pub fn run_bounded(root: &Path, args: &[&str], stdin: &[u8], limit: Duration) -> Output {
    let mut child = super::spawnable(root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sjournal");
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let pipes: Vec<_> = [
        Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ]
    .into_iter()
    .map(|mut p| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = p.read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
        rx
    })
    .collect();
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("sjournal {args:?} did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut got = pipes.into_iter().map(|rx| {
        rx.recv_timeout(limit.saturating_sub(start.elapsed()))
            .unwrap_or_else(|_| {
                panic!("sjournal {args:?} exited, but something still holds its stdout or stderr")
            })
    });
    Output {
        status,
        stdout: got.next().unwrap(),
        stderr: got.next().unwrap(),
    }
}

/// A port with nothing listening (for an endpoint that is down): bound, then released.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Polls `what` every 50 ms until it holds; panics with `describe()` after `limit`. A bound on
/// waiting for an outcome, not a timing assertion: it only decides when to give up.
pub fn wait_until(limit: Duration, mut what: impl FnMut() -> bool, describe: impl Fn() -> String) {
    let start = Instant::now();
    while !what() {
        if start.elapsed() > limit {
            panic!("gave up after {limit:?}: {}", describe());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `webhook status --json` rows.
pub fn status(root: &Path, session: &str) -> Vec<serde_json::Value> {
    let out = super::run(
        root,
        &[
            "webhook",
            "status",
            "--json",
            &format!("--session={session}"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The pid of the session's running deliverer, if any.
pub fn deliverer(root: &Root, session: &str) -> Option<u64> {
    status(root.dir(), session)
        .first()
        .and_then(|r| r["deliverer_pid"].as_u64())
}

use sjournal::journal::Root;

/// Waits until no deliverer runs for the session and every webhook's pending count is 0.
pub fn wait_delivered(root: &Path, session: &str, limit: Duration) {
    wait_until(
        limit,
        || {
            let rows = status(root, session);
            !rows.is_empty()
                && rows
                    .iter()
                    .all(|r| r["pending"] == 0 && r["deliverer_pid"].is_null())
        },
        || format!("{:#?}", status(root, session)),
    );
}

/// Kills a deliverer left running (a test that hangs an endpoint) and waits for it to go.
pub fn kill(pid: u64) {
    let p = rustix::process::Pid::from_raw(pid as i32).unwrap();
    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
    wait_until(
        Duration::from_secs(30),
        || !sjournal::webhook::outbox::alive(pid as u32),
        || format!("pid {pid} still alive"),
    );
}

/// Distinct values of a header over `posts`.
pub fn distinct(posts: &[Post], header: &str) -> BTreeSet<String> {
    posts
        .iter()
        .filter_map(|p| p.header(header).map(str::to_owned))
        .collect()
}

/// `template` with the `{auth…}` placeholders of [`Mode::Status`] filled from `auth`.
fn echo(template: &str, auth: &str) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(auth);
    let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(auth);
    let hex: String = auth.bytes().map(|b| format!("{b:02X}")).collect();
    let url: String = auth
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    template
        .replace("{auth:lower}", &auth.to_lowercase())
        .replace("{auth:upper}", &auth.to_uppercase())
        .replace("{auth:b64}", &b64)
        .replace("{auth:b64url}", &b64url)
        .replace("{auth:hex}", &hex)
        .replace("{auth:url}", &url)
        .replace("{auth}", auth)
}
