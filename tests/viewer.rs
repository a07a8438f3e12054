//! `sjournal serve` (feature `viewer`), driven as a person would: the real binary on
//! 127.0.0.1 and Debian's Chromium over the DevTools protocol (`headless_chrome`).
//!
//! - sessions appear on the open Sessions page while hooks run, without a reload;
//! - the replay slider shows the state at a chosen seq: the page's state hash is the one
//!   `sjournal state --at SEQ` prints;
//! - accepting a proposal in the page writes the record `sjournal memory accept` writes;
//! - a hostile payload (script and img tags, terminal escapes, bidi overrides) renders as
//!   text: no script runs, no element is injected;
//! - a request without the token, from another Origin or for another Host, is refused (over
//!   plain HTTP, and from a page of another origin in the browser).
//!
//! Screenshots of the main pages are kept in `target/viewer-screenshots/`. Without
//! /usr/bin/chromium the browser tests skip, recording why in the skip ledger
//! (`support::skip`), except in CI (`CI` set), where they fail: `.ci/run` installs it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::{json, Value};

use crate::support::{run, sjournal, spawnable, PATIENT_MS};

const CHROMIUM: &str = "/usr/bin/chromium";
/// How long a page may take to show what a test waits for: a bound so a broken page fails
/// the test instead of hanging it, not a speed check.
const PATIENCE: Duration = Duration::from_secs(60);

/// `sjournal serve` on a root, stopped when dropped.
pub struct Served {
    child: Child,
    pub url: String,
    pub base: String,
    pub port: u16,
    pub token: String,
}

impl Served {
    pub fn start(root: &Path) -> Served {
        Served::start_with(root, &[], &[])
    }

    pub fn start_with(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut cmd = spawnable(root);
        cmd.args(["serve", "--port", "0"]).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn sjournal serve");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).expect("the URL line");
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = out.read_to_string(&mut sink);
        });
        let url = line
            .trim()
            .strip_prefix("sjournal serve: ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let (base, token) = url.split_once("/?token=").unwrap();
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Served {
            child,
            url: url.clone(),
            base: base.to_owned(),
            port,
            token: token.to_owned(),
        }
    }

    /// One HTTP/1.1 request with raw headers; (status, headers, body).
    pub fn raw(&self, request: &str) -> (u16, String, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).unwrap();
        let text = String::from_utf8_lossy(&buf).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, head.to_owned(), body.to_owned())
    }

    /// GET `path` with `extra` header lines (each ending in \r\n).
    pub fn get(&self, path: &str, extra: &str) -> (u16, String, String) {
        self.raw(&format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{extra}Connection: close\r\n\r\n",
            self.port
        ))
    }

    pub fn cookie(&self) -> String {
        format!("Cookie: sjournal_{}={}\r\n", self.port, self.token)
    }

    /// GET a JSON API path with the token.
    pub fn json(&self, path: &str) -> Value {
        let (status, head, body) = self.get(path, &self.cookie());
        assert_eq!(status, 200, "{path}: {head}\n{body}");
        serde_json::from_str(body_of(&head, &body).trim()).unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A chunked body decoded (axum answers JSON with a length, SSE chunked).
fn body_of(head: &str, body: &str) -> String {
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return body.to_owned();
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((len, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

/// Debian's Chromium, headless, with a fresh profile; None (the test skips) without it
/// outside CI.
pub fn browser() -> Option<(Browser, tempfile::TempDir)> {
    if !Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{CHROMIUM} is missing in CI (.ci/run installs Debian's chromium)"
        );
        crate::support::skip::whole(
            &format!("{CHROMIUM} is missing (no headless browser to drive the pages)"),
            "apt-get install -y chromium",
        );
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let args: Vec<&std::ffi::OsStr> = [
        "--disable-gpu",
        "--disable-quic",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--hide-scrollbars",
    ]
    .iter()
    .map(std::ffi::OsStr::new)
    .collect();
    let opts = LaunchOptions::default_builder()
        .path(Some(PathBuf::from(CHROMIUM)))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1360, 1000)))
        .user_data_dir(Some(profile.path().to_owned()))
        .idle_browser_timeout(Duration::from_secs(600))
        .args(args)
        .build()
        .unwrap();
    Some((Browser::new(opts).expect("start chromium"), profile))
}

/// Evaluates `js` in the page; its value as JSON (the expression is wrapped in
/// `JSON.stringify`).
pub fn eval(tab: &Tab, js: &str) -> Value {
    let wrapped = format!("JSON.stringify((() => {{ return ({js}); }})())");
    let r = tab.evaluate(&wrapped, false).expect("evaluate");
    match r.value {
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// Waits until `js` is true in the page.
pub fn wait_for(tab: &Tab, what: &str, js: &str) {
    let end = Instant::now() + PATIENCE;
    while Instant::now() < end {
        if eval(tab, js) == json!(true) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let main = eval(
        tab,
        "document.getElementById('main').innerText.slice(0, 2000)",
    );
    panic!("the page never showed {what} ({js}); it shows: {main}");
}

/// Keeps a screenshot of the page under `target/viewer-screenshots/NAME.png`.
pub fn screenshot(tab: &Tab, name: &str) {
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .expect("screenshot");
    assert!(png.len() > 1000 && png.starts_with(b"\x89PNG"), "not a PNG");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("viewer-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// One hook event of Claude Code's shape for `session`.
pub fn hook(root: &Path, session: &str, mut event: Value) {
    event["session_id"] = json!(session);
    event["cwd"] = json!("/home/dev/project-viewer");
    event["transcript_path"] = json!("/tmp/t.jsonl");
    let out = run(
        root,
        &["hook", "--deadline-ms", PATIENT_MS],
        event.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn start(root: &Path, session: &str) {
    hook(
        root,
        session,
        json!({"hook_event_name": "SessionStart", "source": "startup", "model": "claude-test"}),
    );
}

pub fn prompt(root: &Path, session: &str, text: &str) {
    hook(
        root,
        session,
        json!({"hook_event_name": "UserPromptSubmit", "prompt": text}),
    );
}

pub fn bash(root: &Path, session: &str, id: &str, command: &str, fail: Option<&str>) {
    hook(
        root,
        session,
        json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": id,
               "tool_input": {"command": command}}),
    );
    let post = match fail {
        None => json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": id,
                        "tool_input": {"command": command}, "duration_ms": 1200,
                        "tool_response": {"stdout": "ok", "stderr": "", "interrupted": false}}),
        Some(err) => json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                            "tool_use_id": id, "tool_input": {"command": command},
                            "error": err}),
    };
    hook(root, session, post);
}

#[test]
fn refuses_without_the_token_from_other_origins_and_hosts() {
    let root = tempfile::tempdir().unwrap();
    let v = Served::start(root.path());
    let ok = v.cookie();
    // No token, a wrong one, a token for another port's cookie.
    assert_eq!(v.get("/", "").0, 401);
    assert_eq!(v.get("/api/sessions", "").0, 401);
    assert_eq!(v.get("/app.js", "").0, 401);
    assert_eq!(v.get(&format!("/?token={}", "0".repeat(64)), "").0, 401);
    let wrong = format!("Cookie: sjournal_{}={}\r\n", v.port, "f".repeat(64));
    assert_eq!(v.get("/api/sessions", &wrong).0, 401);
    let other_port = format!("Cookie: sjournal_{}={}\r\n", v.port + 1, v.token);
    assert_eq!(v.get("/api/sessions", &other_port).0, 401);
    // The printed URL sets the cookie and leaves the token out of the address.
    let (status, head, _) = v.get(&format!("/?token={}", v.token), "");
    assert_eq!(status, 303, "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("location: /\r\n"), "{head}");
    assert!(
        lower.contains(&format!(
            "set-cookie: sjournal_{}={}; path=/; httponly; samesite=strict",
            v.port, v.token
        )),
        "{head}"
    );
    // With it: the page, its script, the API; every answer with the policy.
    let (status, head, body) = v.get("/", &ok);
    assert_eq!(status, 200);
    assert!(body.contains("<script src=\"/app.js\""), "{body}");
    assert!(!body.contains("<script>"), "an inline script in the page");
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains("content-security-policy: default-src 'none'; script-src 'self'"),
        "{head}"
    );
    assert!(
        lower.contains("x-frame-options: deny") && lower.contains("referrer-policy: no-referrer")
    );
    assert_eq!(v.get("/api/sessions", &ok).0, 200);
    assert_eq!(
        v.get(
            "/api/sessions",
            &format!("X-Sjournal-Token: {}\r\n", v.token)
        )
        .0,
        200
    );
    // DNS rebinding: the right token, but the Host of another name.
    let rebound = v.raw(&format!(
        "GET /api/sessions HTTP/1.1\r\nHost: attacker.example:{}\r\n{ok}Connection: close\r\n\r\n",
        v.port
    ));
    assert_eq!(rebound.0, 421, "{}", rebound.1);
    assert!(rebound
        .1
        .to_ascii_lowercase()
        .contains("content-security-policy"));
    let no_host = v.raw(&format!("GET /api/sessions HTTP/1.0\r\n{ok}\r\n"));
    assert_eq!(no_host.0, 421, "{}", no_host.1);
    // Another origin, another site (another port of this machine is the same site).
    let foreign = format!("{ok}Origin: http://attacker.example\r\n");
    assert_eq!(v.get("/api/sessions", &foreign).0, 403);
    let next_port = format!("{ok}Origin: http://127.0.0.1:{}\r\n", v.port + 1);
    assert_eq!(v.get("/api/sessions", &next_port).0, 403);
    assert_eq!(
        v.get(
            "/api/sessions",
            &format!("{ok}Sec-Fetch-Site: cross-site\r\n")
        )
        .0,
        403
    );
    assert_eq!(
        v.get(
            "/api/sessions",
            &format!("{ok}Sec-Fetch-Site: same-site\r\n")
        )
        .0,
        403
    );
    assert_eq!(
        v.get(
            "/api/sessions",
            &format!("{ok}Sec-Fetch-Site: same-origin\r\n")
        )
        .0,
        200
    );
    // Writes: a POST with the token in the header, this origin, JSON.
    let body = r#"{"journal":"scope:global","op":"accept","id":"m0"}"#;
    let post = |headers: &str| {
        v.raw(&format!(
            "POST /api/memory HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            v.port,
            body.len()
        ))
        .0
    };
    let origin = format!("Origin: http://127.0.0.1:{}\r\n", v.port);
    let header = format!("X-Sjournal-Token: {}\r\n", v.token);
    let json_type = "Content-Type: application/json\r\n";
    assert_eq!(
        post(&format!("{ok}{origin}{json_type}")),
        401,
        "a cookie alone writes"
    );
    assert_eq!(post(&format!("{header}{json_type}")), 403, "no Origin");
    assert_eq!(
        post(&format!(
            "{header}Origin: http://attacker.example\r\n{json_type}"
        )),
        403
    );
    assert_eq!(
        post(&format!("{header}{origin}Content-Type: text/plain\r\n")),
        415
    );
    // Past the checks, the request itself is judged: no such scope here.
    assert_eq!(post(&format!("{header}{origin}{json_type}")), 404);
    let put = v.raw(&format!(
        "PUT /api/memory HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{header}{origin}{json_type}Content-Length: 0\r\nConnection: close\r\n\r\n",
        v.port
    ));
    assert_eq!(put.0, 405);
    // Nothing but the routes: no files, no listing, nothing outside the root.
    for path in [
        "/../../etc/passwd",
        "/sessions/",
        "/api/session/..%2F..%2Fetc%2Fpasswd",
        "/assets/",
        "/src/serve/mod.rs",
    ] {
        let (status, _, body) = v.get(path, &ok);
        assert_eq!(status, 404, "{path}: {body}");
        assert!(!body.contains("root:"), "{path}");
    }
}

#[test]
fn open_without_an_opener_still_serves() {
    let root = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let path = empty.path().to_str().unwrap();
    let v = Served::start_with(root.path(), &["--open"], &[("PATH", path)]);
    let (status, _, body) = v.get("/", &v.cookie());
    assert_eq!(status, 200);
    assert!(body.contains("sjournal-token"));
}

#[test]
fn sessions_appear_live_and_the_slider_replays_the_state() {
    let Some((browser, _profile)) = browser() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    start(r, "before-1");
    prompt(r, "before-1", "an earlier session");
    let v = Served::start(r);
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(PATIENCE);
    tab.navigate_to(&v.url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    wait_for(
        &tab,
        "the earlier session",
        "!!document.querySelector('tr[data-key=\"before-1\"]')",
    );
    // A mark that a reload would lose.
    eval(&tab, "(window.__sameDocument = 'kept', true)");
    // Hooks run while the page is open: a new session appears, then its events count up.
    start(r, "live-1");
    wait_for(
        &tab,
        "the new session",
        "!!document.querySelector('tr[data-key=\"live-1\"]')",
    );
    prompt(r, "live-1", "fix the flaky test");
    bash(
        r,
        "live-1",
        "t1",
        "cargo test",
        Some("Exit code 101\nthread panicked"),
    );
    bash(r, "live-1", "t2", "cargo test --release", None);
    hook(
        r,
        "live-1",
        json!({"hook_event_name": "Stop", "stop_hook_active": false}),
    );
    wait_for(
        &tab,
        "the live session's tool calls and failure",
        "(() => { const tr = document.querySelector('tr[data-key=\"live-1\"]'); \
           return !!tr && tr.children[7].textContent === '2' && tr.children[8].textContent === '1'; })()",
    );
    assert_eq!(
        eval(&tab, "window.__sameDocument"),
        json!("kept"),
        "the page was reloaded"
    );
    assert!(eval(&tab, "window.__sjournalLive").as_u64().unwrap() >= 5);
    let rows = eval(
        &tab,
        "document.querySelector('tr[data-key=\"live-1\"]').innerText",
    );
    assert!(rows.as_str().unwrap().contains("running"), "{rows}");
    screenshot(&tab, "sessions");

    // The session page: its slider at seq 3 shows the state `sjournal state --at 3` folds.
    eval(
        &tab,
        "(document.querySelector('tr[data-key=\"live-1\"] a').click(), true)",
    );
    wait_for(
        &tab,
        "the session page",
        "!!document.getElementById('slider')",
    );
    let last = eval(&tab, "Number(document.getElementById('slider').max)");
    let records = run(r, &["log", "--session", "live-1", "--json"], b"");
    let lines = String::from_utf8_lossy(&records.stdout).lines().count() as u64;
    assert_eq!(last, json!(lines), "the slider spans the journal");
    let seq = 3;
    eval(
        &tab,
        &format!(
            "(() => {{ const s = document.getElementById('slider'); s.value = {seq}; \
               s.dispatchEvent(new Event('input')); return true; }})()"
        ),
    );
    wait_for(
        &tab,
        "the step at seq 3",
        &format!("document.getElementById('at-seq')?.textContent === '{seq}'"),
    );
    let shown = eval(&tab, "document.getElementById('state-hash').title");
    let state = run(
        r,
        &[
            "state",
            "--session",
            "live-1",
            "--at",
            &seq.to_string(),
            "--json",
        ],
        b"",
    );
    let state: Value = serde_json::from_slice(&state.stdout).unwrap();
    assert_eq!(
        shown, state["state_hash"],
        "the slider's state is not `state --at {seq}`'s"
    );
    let turns = eval(&tab, "document.getElementById('at-turns').textContent");
    assert_eq!(turns, json!(state["state"]["turns"]["count"].to_string()));
    // The URL names the step, so it can be shared.
    assert!(eval(&tab, "location.hash")
        .as_str()
        .unwrap()
        .ends_with("/live-1/3"));
    // The step of the prompt: its injection, re-derived from the journal identically.
    let prompt_seq = seq_of(r, "live-1", "UserPromptSubmit");
    eval(
        &tab,
        &format!("(location.hash = '#/session/live-1/{prompt_seq}', true)"),
    );
    wait_for(
        &tab,
        "the prompt's step",
        &format!("document.getElementById('at-seq')?.textContent === '{prompt_seq}'"),
    );
    let at = v.json(&format!("/api/session/live-1/at/{prompt_seq}"));
    if at["injection"].is_object() {
        assert_eq!(at["injection"]["status"], "match", "{at}");
        wait_for(
            &tab,
            "the injection's check",
            "!!document.querySelector('#at .pill.match')",
        );
    }
    // The tables: the failed call and its error, the passing one.
    wait_for(
        &tab,
        "the failure",
        "document.getElementById('main').innerText.includes('failed: Exit code 101')",
    );
    // New events reach the open session page too: a compaction, and the recovery block the
    // hook injected after it, as the agent got it, re-derived identically from the journal.
    hook(
        r,
        "live-1",
        json!({"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": null}),
    );
    hook(
        r,
        "live-1",
        json!({"hook_event_name": "SessionStart", "source": "compact", "model": "claude-test"}),
    );
    prompt(r, "live-1", "and now the docs");
    wait_for(
        &tab,
        "the new prompt in the latest records",
        "document.getElementById('latest').innerText.includes('and now the docs')",
    );
    wait_for(
        &tab,
        "the recovery block",
        "!!document.querySelector('pre.recovery')",
    );
    let block = eval(&tab, "document.querySelector('pre.recovery').textContent");
    let injected = run(r, &["log", "--session", "live-1", "--json"], b"");
    let journaled: Vec<Value> = String::from_utf8_lossy(&injected.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "sjournal.injected" && v["payload"]["mode"] == "recovery")
        .collect();
    assert_eq!(journaled.len(), 1, "one recovery block journaled");
    assert_eq!(
        block, journaled[0]["payload"]["text"],
        "the page's block is not the one injected"
    );
    let event = journaled[0]["payload"]["event_seq"].as_u64().unwrap();
    let at = v.json(&format!("/api/session/live-1/at/{event}"));
    assert_eq!(at["injection"]["status"], "match", "{at}");
    assert_eq!(
        at["injection"]["journaled"],
        journaled[0]["payload"]["text"]
    );
    // Nothing the script builds shows as the words a JavaScript value stringifies to.
    let shown = eval(&tab, "document.getElementById('main').innerText");
    let shown = shown.as_str().unwrap();
    for word in ["[object ", "\nnull\n", "undefined", "NaN"] {
        assert!(!shown.contains(word), "the page shows {word:?}: {shown}");
    }
    eval(&tab, "(window.scrollTo(0, 0), true)");
    screenshot(&tab, "session");
    eval(&tab, "(location.hash = '#/verify', true)");
    wait_for(
        &tab,
        "the verify page",
        "document.getElementById('main').innerText.includes('journal(s) verify')",
    );
    wait_for(
        &tab,
        "doctor",
        "document.getElementById('main').innerText.includes('doctor:')",
    );
    screenshot(&tab, "verify");
    eval(&tab, "(location.hash = '#/search', true)");
    wait_for(&tab, "the search page", "!!document.getElementById('q')");
    screenshot(&tab, "search");
}

/// The seq of the first record of `kind` in the session.
fn seq_of(root: &Path, session: &str, kind: &str) -> u64 {
    let out = run(root, &["log", "--session", session, "--json"], b"");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["kind"] == kind)
        .and_then(|v| v["seq"].as_u64())
        .unwrap_or_else(|| panic!("no {kind} record"))
}

/// The last record of a journal as `log --json` prints it, without what differs between two
/// writes of the same thing (time, hash, offset).
fn last_record(root: &Path, session: &str) -> Value {
    let out = run(root, &["log", "--session", session, "--json"], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["ts", "ts_unix_ns", "hash", "offset"] {
        o.remove(k);
    }
    v
}

#[test]
fn accepting_in_the_page_writes_what_memory_accept_writes() {
    let Some((browser, _profile)) = browser() else {
        return;
    };
    // Two roots with the same proposal: one is accepted in the page, one by the command.
    let page_root = tempfile::tempdir().unwrap();
    let cli_root = tempfile::tempdir().unwrap();
    let text = "run `make check` before finishing";
    let mut id = String::new();
    for r in [page_root.path(), cli_root.path()] {
        let out = run(
            r,
            &[
                "memory",
                "--scope",
                "global",
                "--json",
                "propose",
                text,
                "--session",
                "s-1",
                "--seq",
                "4",
            ],
            b"",
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        id = v["id"].as_str().unwrap().to_owned();
    }
    let v = Served::start(page_root.path());
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(PATIENCE);
    tab.navigate_to(&v.url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    eval(&tab, "(location.hash = '#/memory', true)");
    let card = format!("document.querySelector('.item[data-id=\"{id}\"]')");
    wait_for(
        &tab,
        "the proposal",
        &format!("!!{card}?.querySelector('button.accept')"),
    );
    assert!(eval(&tab, &format!("{card}.innerText"))
        .as_str()
        .unwrap()
        .contains("session s-1 seq 4"));
    screenshot(&tab, "memory");
    eval(
        &tab,
        &format!("({card}.querySelector('button.accept').click(), true)"),
    );
    wait_for(
        &tab,
        "the accepted item",
        &format!("{card}?.querySelector('.pill')?.textContent === 'accepted'"),
    );
    sjournal(cli_root.path())
        .args(["memory", "--scope", "global", "accept", &id])
        .assert()
        .success();
    let page = last_record(page_root.path(), "scope:global");
    let cli = last_record(cli_root.path(), "scope:global");
    assert_eq!(page["kind"], "sjournal.memory");
    assert_eq!(page["payload"]["op"], "accept", "{page}");
    assert_eq!(page, cli, "the page's accept is not the command's");
    // And the state agrees: accepted, as `memory list` says.
    let out = run(
        page_root.path(),
        &["memory", "--scope", "global", "--json", "list"],
        b"",
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["items"][0]["status"], "accepted", "{list}");
}

#[test]
fn a_hostile_payload_renders_inert() {
    let Some((browser, _profile)) = browser() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let attack = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">\
                  \x1b]0;owned\x07\x1b[2J ok\u{202e}gnp.exe\u{2066}";
    start(r, "hostile");
    prompt(r, "hostile", attack);
    hook(
        r,
        "hostile",
        json!({"hook_event_name": "PreToolUse", "tool_name": "<b>Bash</b>", "tool_use_id": "x1",
               "tool_input": {"command": attack}}),
    );
    hook(
        r,
        "hostile",
        json!({"hook_event_name": "PostToolUseFailure", "tool_name": "<b>Bash</b>", "tool_use_id": "x1",
               "tool_input": {"command": attack}, "error": attack}),
    );
    let v = Served::start(r);
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(PATIENCE);
    tab.navigate_to(&v.url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    eval(&tab, "(location.hash = '#/session/hostile/2', true)");
    wait_for(
        &tab,
        "the session's tables",
        "document.getElementById('main').innerText.includes('Tool calls (1')",
    );
    wait_for(
        &tab,
        "the step",
        "document.getElementById('at-seq')?.textContent === '2'",
    );
    wait_for(
        &tab,
        "the records",
        "document.querySelectorAll('tr[data-seq]').length > 0",
    );
    let main = eval(&tab, "document.getElementById('main').innerText");
    let main = main.as_str().unwrap();
    // Shown as text, escaped as the command line escapes it.
    assert!(main.contains("<script>window.__pwned=1</script>"), "{main}");
    assert!(
        main.contains("\\x1b]0;owned\\x07\\x1b[2J ok\\u{202e}gnp.exe\\u{2066}"),
        "{main}"
    );
    assert!(
        !main.contains('\u{202e}') && !main.contains('\x1b'),
        "a raw control reached the page"
    );
    // Nothing ran, nothing was injected.
    assert_eq!(eval(&tab, "typeof window.__pwned"), json!("undefined"));
    assert_eq!(
        eval(
            &tab,
            "document.querySelectorAll('main script, main img, main iframe, main object').length"
        ),
        json!(0)
    );
    // The page's own labels are <b>; the tool named `<b>Bash</b>` is text, not one of them.
    assert_eq!(
        eval(
            &tab,
            "[...document.querySelectorAll('main b')].filter(b => b.textContent === 'Bash').length"
        ),
        json!(0)
    );
    assert!(main.contains("<b>Bash</b>"), "{main}");
    assert_eq!(eval(&tab, "document.scripts.length"), json!(1));
    assert_eq!(eval(&tab, "document.title"), json!("sjournal"));
    // The Sessions page too.
    eval(&tab, "(location.hash = '#/', true)");
    wait_for(
        &tab,
        "the sessions page",
        "!!document.querySelector('tr[data-key=\"hostile\"]')",
    );
    assert_eq!(eval(&tab, "typeof window.__pwned"), json!("undefined"));
    assert_eq!(
        eval(
            &tab,
            "document.querySelectorAll('main script, main img').length"
        ),
        json!(0)
    );
}

#[test]
fn a_page_of_another_origin_cannot_read_or_write() {
    let Some((browser, _profile)) = browser() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    start(r, "secret-session");
    sjournal(r)
        .args(["memory", "--scope", "global", "propose", "a proposal"])
        .assert()
        .success();
    let v = Served::start(r);
    // The user opened the viewer (the cookie is set in this browser)...
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(PATIENCE);
    tab.navigate_to(&v.url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    wait_for(
        &tab,
        "the session",
        "!!document.querySelector('tr[data-key=\"secret-session\"]')",
    );
    // ...then a page of another origin on this machine tries to read and write it.
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let other = server.server_addr().to_ip().unwrap().port();
    let s2 = server.clone();
    std::thread::spawn(move || {
        for req in s2.incoming_requests() {
            let page = "<!DOCTYPE html><title>other</title><p>other origin</p>";
            let _ = req.respond(
                tiny_http::Response::from_string(page).with_header(
                    "Content-Type: text/html"
                        .parse::<tiny_http::Header>()
                        .unwrap(),
                ),
            );
        }
    });
    let evil = browser.new_tab().unwrap();
    evil.navigate_to(&format!("http://127.0.0.1:{other}/"))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    let probe = format!(
        "(async () => {{ const out = {{}}; \
           try {{ const r = await fetch('{0}/api/sessions', {{credentials: 'include'}}); out.read = r.status; \
                 out.body = await r.text(); }} catch (e) {{ out.read = 'blocked'; }} \
           try {{ const r = await fetch('{0}/api/memory', {{method: 'POST', credentials: 'include', mode: 'no-cors', \
                 headers: {{'Content-Type': 'text/plain'}}, body: '{{}}'}}); out.write = r.type; }} \
           catch (e) {{ out.write = 'blocked'; }} \
           return JSON.stringify(out); }})()",
        v.base
    );
    let res = evil.evaluate(&probe, true).unwrap();
    let out: Value = serde_json::from_str(res.value.unwrap().as_str().unwrap()).unwrap();
    assert_eq!(
        out["read"], "blocked",
        "another origin read the viewer: {out}"
    );
    assert!(out.get("body").is_none());
    // The memory is as it was: nothing accepted.
    let list = run(r, &["memory", "--scope", "global", "--json", "list"], b"");
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list["items"][0]["status"], "proposed", "{list}");
}

/// A session of `turns` turns written straight through the library's writer (hooks would take
/// minutes): each a prompt, two tool calls (the second of every third turn fails) and a Stop,
/// six records; record 1 is the first prompt.
fn long_session(root: &Path, session: &str, turns: u64) {
    use sjournal::fold::digest::encode_event;
    use sjournal::journal::{Root, Writer, WriterOptions};
    let common = |kind: &str| {
        format!(
            r#""session_id":"{session}","transcript_path":"/tmp/t.jsonl","cwd":"/home/dev/project-viewer","hook_event_name":"{kind}""#
        )
    };
    let mut items: Vec<(String, Vec<u8>)> = Vec::new();
    for t in 0..turns {
        let mut push = |kind: &str, rest: String| {
            let json = format!("{{{}{rest}}}", common(kind));
            items.push((kind.to_owned(), encode_event(kind, &json)));
        };
        push("UserPromptSubmit", format!(r#","prompt":"step {t}""#));
        for c in 0..2 {
            let id = format!("t{t}c{c}");
            let input = format!(
                r#","tool_name":"Bash","tool_use_id":"{id}","tool_input":{{"command":"make {t}.{c}"}}"#
            );
            push("PreToolUse", input.clone());
            if c == 1 && t % 3 == 0 {
                push(
                    "PostToolUseFailure",
                    format!(r#"{input},"error":"Exit code 2""#),
                );
            } else {
                push(
                    "PostToolUse",
                    format!(r#"{input},"duration_ms":20,"tool_response":{{"stdout":"ok"}}"#),
                );
            }
        }
        push("Stop", r#","stop_hook_active":false"#.to_owned());
    }
    let mut w = Writer::open(&Root::new(root), session, &WriterOptions::default()).unwrap();
    let base = 1_767_225_600_000_000_000i64;
    for (n, chunk) in items.chunks(5_000).enumerate() {
        let batch: Vec<(&str, &[u8])> = chunk
            .iter()
            .map(|(k, p)| (k.as_str(), p.as_slice()))
            .collect();
        w.append_batch_at(base + n as i64 * 5_000_000_000_000, &batch)
            .unwrap();
    }
}

/// The `hash` `log --json` prints for record `seq`.
fn hash_of(root: &Path, session: &str, seq: u64) -> Value {
    let out = run(root, &["log", "--session", session, "--json"], b"");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["seq"] == seq)
        .map(|v| v["hash"].clone())
        .unwrap_or_else(|| panic!("no record {seq}"))
}

#[test]
fn a_long_session_opens_at_its_newest_page_and_pages_back_to_seq_1() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let turns = 1_500;
    long_session(r, "long-1", turns);
    // Hooks on top, as a live session has: the first leaves a snapshot (the hook writes one
    // every 128 records), the next records come after it.
    prompt(r, "long-1", "the newest prompt");
    let newest = turns * 6 + 1;
    bash(r, "long-1", "x1", "make it", None);
    let v = Served::start(r);
    // The viewer reads the journals after it starts listening.
    let t0 = Instant::now();
    while v.get("/api/session/long-1", &v.cookie()).0 != 200 {
        assert!(t0.elapsed() < PATIENCE, "the session never showed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let page = v.json("/api/session/long-1");
    let w = &page["window"];
    let last = page["last_seq"].as_u64().unwrap();
    assert!(last > newest + 1, "{w}");
    assert_eq!(w["to"], json!(last), "{w}");
    assert_eq!(w["older"], json!(true), "{w}");
    let from = w["from"].as_u64().unwrap();
    assert!(from > 1 && from > last - 2_100, "{w}");
    let turns_shown = page["turns"].as_array().unwrap();
    assert_eq!(turns_shown.last().unwrap()["seq"], json!(newest));
    assert_eq!(
        turns_shown[0]["seq"],
        json!(from),
        "a page starts at a prompt"
    );
    assert!(
        turns_shown.len() < turns as usize,
        "the whole timeline was sent"
    );
    assert_eq!(page["counts"]["turns"], json!(turns + 1));
    // The page before it ends where it starts.
    let older = v.json(&format!("/api/session/long-1/timeline?before={from}"));
    assert_eq!(older["window"]["to"], json!(from - 1));
    let ot = older["turns"].as_array().unwrap();
    assert!(ot.iter().all(|t| t["seq"].as_u64().unwrap() < from));
    // The records table reads from the middle: the records and hashes `log` prints.
    let recs = v.json("/api/session/long-1/records?from=4100&limit=3");
    let seqs: Vec<u64> = recs["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [4100, 4101, 4102]);
    assert_eq!(recs["records"][0]["hash"], hash_of(r, "long-1", 4100));
    // The slider near the end (from the snapshot) and at the start (from the states one fold
    // of the journal keeps) shows the state `state --at` folds.
    for (seq, start) in [(last, "snapshot"), (10, "kept"), (newest, "kept")] {
        let at = v.json(&format!("/api/session/long-1/at/{seq}"));
        let state = run(
            r,
            &[
                "state",
                "--session",
                "long-1",
                "--at",
                &seq.to_string(),
                "--json",
            ],
            b"",
        );
        let state: Value = serde_json::from_slice(&state.stdout).unwrap();
        assert_eq!(at["state_hash"], state["state_hash"], "at {seq}");
        assert_eq!(at["record"]["seq"], json!(seq));
        assert_eq!(
            at["start"]["from"],
            json!(start),
            "at {seq}: {}",
            at["start"]
        );
    }

    // In the browser: the newest rows, then "load older" until the first record.
    let Some((browser, _profile)) = browser() else {
        return;
    };
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(PATIENCE);
    tab.navigate_to(&v.url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    eval(&tab, "(location.hash = '#/session/long-1', true)");
    wait_for(
        &tab,
        "the newest turn",
        &format!("!!document.querySelector('#turns a[href=\"#/session/long-1/{newest}\"]')"),
    );
    assert_eq!(
        eval(
            &tab,
            "!!document.querySelector('#turns a[href=\"#/session/long-1/1\"]')"
        ),
        json!(false),
        "the first turn is on the first page"
    );
    let mut clicks = 0;
    while eval(&tab, "!!document.getElementById('load-older')") == json!(true) {
        let shown = eval(&tab, "document.getElementById('window').textContent");
        eval(
            &tab,
            "(document.getElementById('load-older').click(), true)",
        );
        wait_for(
            &tab,
            "an older page",
            &format!(
                "document.getElementById('window')?.textContent !== {}",
                serde_json::to_string(&shown).unwrap()
            ),
        );
        clicks += 1;
        assert!(clicks < 20, "paging does not reach the first record");
    }
    assert!(clicks >= 4, "{clicks} pages");
    assert!(eval(
        &tab,
        "!!document.querySelector('#turns a[href=\"#/session/long-1/1\"]')"
    )
    .as_bool()
    .unwrap());
    // Every turn and call once: no row lost or doubled between pages.
    assert_eq!(
        eval(&tab, "document.querySelectorAll('#turns tr').length - 1"),
        json!(turns + 1)
    );
    assert_eq!(
        eval(&tab, "document.querySelectorAll('#tools tr').length - 1"),
        json!(turns * 2 + 1)
    );
    assert_eq!(
        eval(&tab, "[...document.querySelectorAll('#tools tr')].filter(r => r.innerText.includes('no result recorded')).length"),
        json!(0),
        "a call was cut in two between pages"
    );
    // The slider still replays any seq of it.
    eval(&tab, "(location.hash = '#/session/long-1/7', true)");
    wait_for(
        &tab,
        "the step at seq 7",
        "document.getElementById('at-seq')?.textContent === '7'",
    );
    screenshot(&tab, "session-long");
}

#[test]
fn search_finds_the_record_links_to_it_and_a_hostile_hit_is_inert() {
    let Some((browser, _profile)) = browser() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let attack = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">\
                  \x1b]0;owned\x07\x1b[2J ok\u{202e}gnp.exe\u{2066}";
    start(r, "find-1");
    prompt(r, "find-1", "the axolotl migration is flaky");
    prompt(r, "find-1", &format!("axolotl {attack}"));
    start(r, "other-1");
    prompt(r, "other-1", "nothing to see");
    let v = Served::start(r);
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(PATIENCE);
    tab.navigate_to(&v.url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    eval(
        &tab,
        "(location.hash = '#/search?q=axolotl%20migration', true)",
    );
    wait_for(
        &tab,
        "a hit",
        "document.querySelectorAll('#results .hit').length > 0",
    );
    assert_eq!(
        eval(&tab, "document.querySelectorAll('#results .hit').length"),
        json!(1)
    );
    let seq = seq_of(r, "find-1", "UserPromptSubmit");
    let href = eval(
        &tab,
        "document.querySelector('#results a.hit-link').getAttribute('href')",
    );
    assert_eq!(href, json!(format!("#/session/find-1/{seq}")));
    let marks = eval(
        &tab,
        "[...document.querySelectorAll('#results mark')].map(m => m.textContent).join(' ')",
    );
    assert_eq!(marks, json!("axolotl migration"));
    // The same engine and syntax as `sjournal search`: a field query.
    let api = v.json("/api/search?q=tool%3Anone%20axolotl");
    assert_eq!(api["hits"], json!([]), "{api}");
    // The hit opens the session at that record.
    eval(
        &tab,
        "(document.querySelector('#results a.hit-link').click(), true)",
    );
    wait_for(
        &tab,
        "the record of the hit",
        &format!("document.getElementById('at-seq')?.textContent === '{seq}'"),
    );
    screenshot(&tab, "search-hit");

    // A hit whose snippet is hostile: shown as text, highlighted, inert.
    eval(&tab, "(location.hash = '#/search?q=axolotl%20pwned', true)");
    wait_for(
        &tab,
        "the hostile hit",
        "document.querySelectorAll('#results .hit').length === 1",
    );
    let shown = eval(&tab, "document.getElementById('results').innerText");
    let shown = shown.as_str().unwrap();
    assert!(
        shown.contains("<script>window.__pwned=1</script>"),
        "{shown}"
    );
    assert!(
        !shown.contains('\u{202e}') && !shown.contains('\x1b'),
        "{shown}"
    );
    assert_eq!(eval(&tab, "typeof window.__pwned"), json!("undefined"));
    assert_eq!(
        eval(
            &tab,
            "document.querySelectorAll('main script, main img, main iframe').length"
        ),
        json!(0)
    );
    let marks = eval(
        &tab,
        "[...document.querySelectorAll('#results mark')].map(m => m.textContent)",
    );
    assert!(
        marks.as_array().unwrap().iter().any(|m| m == "axolotl")
            && marks.as_array().unwrap().iter().any(|m| m == "pwned"),
        "{marks}"
    );
    screenshot(&tab, "search-hostile");
}

/// The viewer's pages over `root`, as `sjournal serve` builds them, after the first load.
fn views(root: &Path) -> sjournal::serve::Views {
    use sjournal::journal::{Root, WriterOptions};
    let index = Arc::new(sjournal::serve::Index::new(
        Root::new(root),
        WriterOptions::default(),
    ));
    index.load_all();
    sjournal::serve::Views::new(
        index,
        sjournal::context::Policy::default(),
        WriterOptions::default(),
    )
}

/// `turns` turns of a prompt and a Bash call written straight to `session`'s journal, each
/// prompt padded with `pad` bytes of `fill`.
fn write_turns(root: &Path, session: &str, turns: u64, pad: usize, fill: &str) {
    use sjournal::fold::digest::encode_event;
    use sjournal::journal::{Root, Writer, WriterOptions};
    let pad = fill.repeat(pad);
    let mut items: Vec<(String, Vec<u8>)> = Vec::new();
    for t in 0..turns {
        for (kind, rest) in [
            ("UserPromptSubmit", format!(r#","prompt":"step {t} {pad}""#)),
            (
                "PreToolUse",
                format!(
                    r#","tool_name":"Bash","tool_use_id":"c{t}","tool_input":{{"command":"make {t}"}}"#
                ),
            ),
        ] {
            let json = format!(
                r#"{{"session_id":"{session}","cwd":"/home/dev/p","hook_event_name":"{kind}"{rest}}}"#
            );
            items.push((kind.to_owned(), encode_event(kind, &json)));
        }
    }
    let mut w = Writer::open(&Root::new(root), session, &WriterOptions::default()).unwrap();
    let batch: Vec<(&str, &[u8])> = items
        .iter()
        .map(|(k, p)| (k.as_str(), p.as_slice()))
        .collect();
    w.append_batch_at(1_767_225_600_000_000_000, &batch)
        .unwrap();
}

fn journal_of(root: &Path, session: &str) -> PathBuf {
    sjournal::journal::Root::new(root)
        .existing_session(session)
        .unwrap()
        .journal
}

#[test]
fn the_session_page_counts_the_whole_session_and_says_how_its_state_was_loaded() {
    use sjournal::journal::{JournalReader, Root};
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    start(r, "count-1");
    prompt(r, "count-1", "first");
    bash(r, "count-1", "b1", "make", Some("Exit code 2"));
    hook(
        r,
        "count-1",
        json!({"hook_event_name": "PreCompact", "trigger": "auto"}),
    );
    hook(
        r,
        "count-1",
        json!({"hook_event_name": "SessionStart", "source": "compact", "model": "claude-test"}),
    );
    prompt(r, "count-1", "after the compaction");
    hook(
        r,
        "count-1",
        json!({"hook_event_name": "SessionEnd", "reason": "exit"}),
    );
    let reader = JournalReader::open(&journal_of(r, "count-1"), None).unwrap();
    let whole = sjournal::audit::timeline::build(&reader).unwrap();
    drop(reader);
    assert!(
        !whole.injections.is_empty(),
        "the compaction's recovery block"
    );
    assert!(whole.marks.len() >= 3, "{:?}", whole.marks);

    let page = views(r).session("count-1").unwrap();
    assert_eq!(page["counts"]["injections"], json!(whole.injections.len()));
    assert_eq!(page["counts"]["marks"], json!(whole.marks.len()));
    assert_eq!(page["marks"].as_array().unwrap().len(), whole.marks.len());
    assert_eq!(page["snapshot"], json!("none"), "no snapshot yet");

    // With the snapshot the hook leaves on long sessions, the state starts from it.
    let paths = Root::new(r).existing_session("count-1").unwrap();
    let (state, info) =
        sjournal::snapshot::load_paths(&paths, &sjournal::snapshot::LoadOptions::default())
            .unwrap();
    sjournal::snapshot::write(&paths, &state, &info.head.unwrap()).unwrap();
    let page = views(r).session("count-1").unwrap();
    assert_eq!(page["snapshot"], json!("used"));
    assert_eq!(page["state_hash"], json!(state.state_hash().to_hex()));
    assert_eq!(page["counts"]["injections"], json!(whole.injections.len()));
}

#[test]
fn a_state_that_cannot_be_loaded_says_why_escaped() {
    // A root whose path holds a bidi override and a terminal escape: the error names it.
    let root = tempfile::Builder::new()
        .prefix("viewer-\u{202e}gnp-\x1b[2J-")
        .tempdir()
        .unwrap();
    let r = root.path();
    // More sessions than the index keeps states of: some state is loaded from its journal.
    let n = sjournal::serve::HOT_STATES + 2;
    let keys: Vec<String> = (0..n).map(|i| format!("s-{i:03}")).collect();
    for k in &keys {
        write_turns(r, k, 1, 0, "p");
    }
    let v = views(r);
    for k in &keys {
        std::fs::write(journal_of(r, k), b"not a journal at all").unwrap();
    }
    let mut failed = 0;
    for k in &keys {
        // A state kept in memory is shown; the page's timeline then says the journal is bad.
        let Err(sjournal::serve::Failed(status, why)) = v.session(k) else {
            panic!("{k}: a page of a journal that is not one");
        };
        if !why.starts_with("the session's state could not be loaded") {
            continue;
        }
        failed += 1;
        assert_eq!(status, 500, "{why}");
        assert!(why.contains(&format!("{k}.sjl")), "the why: {why}");
        assert!(
            why.contains("\\u{202e}") && !why.contains('\u{202e}') && !why.contains('\x1b'),
            "escaped: {why:?}"
        );
    }
    assert!(failed >= 2, "{failed} of {n} failed to load");
}

#[test]
fn a_journal_renamed_over_is_walked_again() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    // Record 600 is in the second place kept (every 512th record): paged from there.
    write_turns(a.path(), "swap-1", 400, 10, "p");
    let v = views(a.path());
    let seqs = |v: &Value| -> Vec<u64> {
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["seq"].as_u64().unwrap())
            .collect()
    };
    let before = v.records("swap-1", 600, 3).unwrap();
    assert_eq!(seqs(&before), [600, 601, 602]);
    // Another journal of the session renamed over it (as repair, erase and migrate do): as
    // long, its records where the old ones were, but other records (other hashes).
    write_turns(b.path(), "swap-1", 400, 10, "q");
    let len = |p: &Path| std::fs::metadata(journal_of(p, "swap-1")).unwrap().len();
    assert_eq!(len(a.path()), len(b.path()));
    std::fs::rename(
        journal_of(b.path(), "swap-1"),
        journal_of(a.path(), "swap-1"),
    )
    .unwrap();
    let after = v.records("swap-1", 600, 3).unwrap();
    assert_eq!(seqs(&after), [600, 601, 602], "{after}");
    assert_eq!(
        after["records"][0]["hash"],
        hash_of(a.path(), "swap-1", 600)
    );
    assert_ne!(after["records"][0]["hash"], before["records"][0]["hash"]);
    // Then longer: a third journal, with more records, renamed over it.
    let c = tempfile::tempdir().unwrap();
    write_turns(c.path(), "swap-1", 420, 40, "r");
    std::fs::rename(
        journal_of(c.path(), "swap-1"),
        journal_of(a.path(), "swap-1"),
    )
    .unwrap();
    let after = v.records("swap-1", 600, 3).unwrap();
    assert_eq!(seqs(&after), [600, 601, 602], "{after}");
    assert_eq!(
        after["records"][0]["hash"],
        hash_of(a.path(), "swap-1", 600)
    );
    let page = v.timeline("swap-1", None).unwrap();
    assert_eq!(page["window"]["to"], json!(840), "{}", page["window"]);
}

/// Built without the `search` feature, the Search page says search needs it (its API: not
/// available, the note naming the feature, no hits).
#[cfg(not(feature = "search"))]
#[test]
fn without_the_search_feature_the_search_page_says_it_needs_it() {
    let root = tempfile::tempdir().unwrap();
    start(root.path(), "nosearch-1");
    let v = Served::start(root.path());
    let r = v.json("/api/search?q=anything");
    assert_eq!(r["status"]["available"], json!(false), "{r}");
    let note = r["status"]["note"].as_str().unwrap();
    assert!(note.contains("needs the `search` feature"), "{note}");
    assert_eq!(r["hits"], json!([]));
}
