//! `sjournal doctor` through the built binary, with HOME, the project and the root in a
//! temporary directory and nothing else of the caller's environment: on a machine with nothing
//! installed all is well (exit 0); then each finding is made for real and must show, as a
//! `WARN`/`FAIL` check with its fix (exit 1), and go once fixed: a hook running a binary that is
//! not there, a hook missing for some events, a host installed but silent (and silent since its
//! configuration changed), Codex hooks not trusted (or changed since, or turned off), a Gemini
//! CLI folder not trusted, a bridge running a missing binary or not the one this sjournal
//! installs, OpenClaw's plugin entry missing, a root others can write and an open `sessions/`,
//! spooled events waiting (in the root, and in the fallback spool behind a `sessions/` that is
//! a link), an untrusted spool file (accepted with the `flush --accept` it names) and a fallback
//! directory open to others, a damaged journal (named with its `repair` command), journals
//! whose witnesses disagree (rolled back, the mark gone, the journal deleted; each repaired with
//! the command it names), Codex hooks left in `~/.codex` while `CODEX_HOME` is elsewhere, a
//! webhook whose deliveries fail. Bad input exits 2.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

struct Machine {
    dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    root: PathBuf,
    /// `CODEX_HOME` for every command, when set.
    codex_home: std::cell::RefCell<Option<PathBuf>>,
}

impl Machine {
    /// A HOME, a project and a root (0700, its fallback spool named in config.toml, inside
    /// the test's directory).
    fn new() -> Machine {
        let dir = support::scratch();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        let root = dir.path().join("root");
        for d in [&home, &project] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir(&root).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
        let m = Machine {
            home,
            project,
            root,
            dir,
            codex_home: Default::default(),
        };
        m.config("");
        m
    }

    fn fallback(&self) -> PathBuf {
        self.dir.path().join("fallback")
    }

    /// config.toml: the fallback spool and `extra`.
    fn config(&self, extra: &str) {
        std::fs::write(
            self.root.join("config.toml"),
            format!(
                "[hook]\nfallback_spool_dir = {:?}\ndeadline_ms = {}\n{extra}",
                self.fallback(),
                support::PATIENT_MS
            ),
        )
        .unwrap();
    }

    /// `sjournal --root ROOT <args>` in the project, with only PATH and HOME set (and
    /// CODEX_HOME, if the test set it).
    fn sj(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut c = assert_cmd::Command::new(support::bin());
        c.env_clear();
        if let Some(h) = &*self.codex_home.borrow() {
            c.env("CODEX_HOME", h);
        }
        c.env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .current_dir(&self.project)
            .arg("--root")
            .arg(&self.root)
            .args(args)
            .write_stdin(stdin.to_vec());
        c.output().unwrap()
    }

    fn ok(&self, args: &[&str], stdin: &[u8]) -> String {
        let o = self.sj(args, stdin);
        assert!(o.status.success(), "sjournal {args:?}: {o:?}");
        String::from_utf8(o.stdout).unwrap()
    }

    /// `doctor --json`: (exit code, report).
    fn doctor(&self) -> (i32, Value) {
        let o = self.sj(&["doctor", "--json"], b"");
        let code = o.status.code().unwrap();
        let report: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("doctor --json: {e}: {o:?}"));
        (code, report)
    }

    /// The checks named `check` (of `host`, or of none).
    fn checks(&self, check: &str, host: Option<&str>) -> Vec<Value> {
        let (code, r) = self.doctor();
        let findings = r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "warn" || c["status"] == "fail")
            .count();
        assert_eq!(r["findings"], findings, "{r}");
        assert_eq!(code, if findings == 0 { 0 } else { 1 }, "{r}");
        r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["check"] == check && c["host"] == json!(host))
            .cloned()
            .collect()
    }

    /// The one check named so; its status, message and fix.
    fn one(&self, check: &str, host: Option<&str>) -> (String, String, String) {
        let c = self.checks(check, host);
        assert_eq!(c.len(), 1, "{check} {host:?}: {c:?}");
        let s = |k: &str| c[0][k].as_str().unwrap_or("").to_owned();
        (s("status"), s("message"), s("fix"))
    }

    fn install(&self, args: &[&str]) {
        let mut a = vec!["install"];
        a.extend_from_slice(args);
        self.ok(&a, b"");
    }

    /// A Claude Code SessionStart through the hook.
    fn claude_event(&self, session: &str) {
        let e = json!({"session_id": session, "hook_event_name": "SessionStart", "source": "startup",
                       "cwd": self.project, "transcript_path": "/dev/null"});
        self.ok(&["hook", "--host", "claude"], e.to_string().as_bytes());
    }
}

fn has(hay: &str, needle: &str) {
    assert!(hay.contains(needle), "{needle:?} not in {hay:?}");
}

#[test]
fn a_fresh_machine_is_well() {
    let m = Machine::new();
    let (code, r) = m.doctor();
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["ok"], true);
    assert_eq!(r["findings"], 0);
    for c in r["checks"].as_array().unwrap() {
        assert!(
            c["status"] == "ok" || c["status"] == "info",
            "{c}: nothing is wrong here"
        );
    }
    let hosts: Vec<&str> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "install")
        .map(|c| c["host"].as_str().unwrap())
        .collect();
    assert_eq!(
        hosts,
        [
            "claude-code",
            "codex",
            "gemini",
            "opencode",
            "pi",
            "openclaw",
            "cline"
        ]
    );
    let (_, bin, _) = m.one("binary", None);
    has(&bin, "linked");
    // The human form: one line per check, then the verdict.
    let text = m.ok(&["doctor"], b"");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        r["checks"].as_array().unwrap().len() + 1,
        "{text}"
    );
    assert_eq!(*lines.last().unwrap(), "doctor: all is well");
}

#[test]
fn bad_input_exits_2() {
    let m = Machine::new();
    let o = m.sj(&["doctor", "--project-dir", "/nonexistent/project"], b"");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    has(&String::from_utf8_lossy(&o.stderr), "not a directory");
}

#[test]
fn a_hook_running_a_missing_binary_then_fixed() {
    let m = Machine::new();
    m.install(&["claude-code", "--command", "/nonexistent/sjournal"]);
    let (status, msg, fix) = m.one("hook", Some("claude-code"));
    assert_eq!(status, "fail");
    has(&msg, "/nonexistent/sjournal does not exist");
    has(&fix, "sjournal install claude-code");
    // The human line says it and how to fix it, and doctor exits 1.
    let o = m.sj(&["doctor"], b"");
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("FAIL  claude-code hook"))
        .unwrap_or_else(|| panic!("{text}"));
    has(line, "— fix: sjournal install claude-code");
    m.install(&["claude-code"]);
    let (status, msg, _) = m.one("hook", Some("claude-code"));
    assert_eq!(status, "ok", "{msg}");
    has(&msg, support::bin());
}

/// Run from `$HOME`, Claude Code's project settings are its user settings: doctor checks
/// the one file once (one hook line, not the same file under two scopes).
#[test]
fn run_from_home_the_user_settings_are_checked_once() {
    let mut m = Machine::new();
    m.project = m.home.clone();
    m.install(&["claude-code"]);
    let hooks = m.checks("hook", Some("claude-code"));
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(hooks[0]["status"], "ok", "{hooks:?}");
}

#[test]
fn a_hook_missing_for_some_events_is_a_warning() {
    let m = Machine::new();
    m.install(&["claude-code"]);
    let path = m.home.join(".claude/settings.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["hooks"].as_object_mut().unwrap().remove("Stop");
    v["hooks"].as_object_mut().unwrap().remove("PreCompact");
    std::fs::write(&path, v.to_string()).unwrap();
    let (status, msg, fix) = m.one("hook", Some("claude-code"));
    assert_eq!(status, "warn");
    has(&msg, "lack 2 (PreCompact, Stop)");
    assert_eq!(fix, "sjournal install claude-code");
}

#[test]
fn a_host_installed_but_silent_until_it_delivers_an_event() {
    let m = Machine::new();
    m.install(&["claude-code"]);
    let (status, msg, fix) = m.one("activity", Some("claude-code"));
    assert_eq!(status, "warn");
    has(&msg, "no event from it");
    has(&fix, "sjournal doctor");
    m.claude_event("s-claude-1");
    let (status, msg, _) = m.one("activity", Some("claude-code"));
    assert_eq!(status, "ok", "{msg}");
    has(&msg, "session s-claude-1");
    let (code, r) = m.doctor();
    assert_eq!((code, &r["ok"]), (0, &json!(true)), "{r}");
    // Its hook configuration changed after the last event, and nothing came since.
    let settings = std::fs::File::options()
        .append(true)
        .open(m.home.join(".claude/settings.json"))
        .unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    settings.set_modified(later).unwrap();
    let (status, msg, _) = m.one("activity", Some("claude-code"));
    assert_eq!(status, "warn");
    has(&msg, "no event since its hook configuration changed");
}

#[test]
fn codex_hooks_not_trusted_then_trusted() {
    use sjournal::install::inspect;
    let m = Machine::new();
    m.install(&["codex"]);
    let (status, msg, fix) = m.one("trust", Some("codex"));
    assert_eq!(status, "fail");
    has(&msg, "10 not trusted: Codex skips them");
    has(&fix, "open /hooks");
    // What Codex's /hooks screen writes when the user trusts them.
    let hooks_json = m.home.join(".codex/hooks.json");
    let hooks = inspect::read_hooks(&hooks_json).unwrap().unwrap();
    let state = |hash: &dyn Fn(&inspect::InstalledHook) -> String, extra: &str| -> String {
        hooks
            .iter()
            .map(|h| {
                format!(
                    "[hooks.state.\"{}:{}:{}:{}\"]\ntrusted_hash = {:?}\n{extra}\n",
                    hooks_json.display(),
                    inspect::codex_event_label(&h.event),
                    h.group,
                    h.index,
                    hash(h)
                )
            })
            .collect()
    };
    let config = m.home.join(".codex/config.toml");
    std::fs::write(&config, state(&inspect::codex_hook_hash, "")).unwrap();
    let (status, msg, _) = m.one("trust", Some("codex"));
    assert_eq!(status, "ok", "{msg}");
    has(&msg, "Codex trusts sjournal's 10 hooks");
    // Trusted once, then changed (a reinstall from elsewhere): skipped again.
    std::fs::write(&config, state(&|_| "sha256:0123".into(), "")).unwrap();
    let (status, msg, _) = m.one("trust", Some("codex"));
    assert_eq!(status, "fail");
    has(&msg, "10 changed since they were trusted");
    std::fs::write(&config, state(&inspect::codex_hook_hash, "enabled = false")).unwrap();
    let (status, msg, _) = m.one("trust", Some("codex"));
    assert_eq!(status, "fail");
    has(&msg, "10 turned off");
}

#[test]
fn a_gemini_folder_not_trusted_then_trusted() {
    let m = Machine::new();
    m.install(&["gemini"]);
    let (status, msg, fix) = m.one("trust", Some("gemini"));
    assert_eq!(status, "fail");
    has(
        &msg,
        "is not a trusted folder: Gemini CLI runs no hook there",
    );
    has(&fix, "TRUST_FOLDER");
    let folders = m.home.join(".gemini/trustedFolders.json");
    let rule = |level: &str| json!({ m.project.to_str().unwrap(): level }).to_string();
    std::fs::write(&folders, rule("TRUST_FOLDER")).unwrap();
    assert_eq!(m.one("trust", Some("gemini")).0, "ok");
    std::fs::write(&folders, rule("DO_NOT_TRUST")).unwrap();
    let (status, msg, _) = m.one("trust", Some("gemini"));
    assert_eq!(status, "fail");
    has(&msg, "distrusted");
    std::fs::write(&folders, "{ not json").unwrap();
    let (status, msg, _) = m.one("trust", Some("gemini"));
    assert_eq!(status, "fail");
    has(&msg, "not valid JSON");
}

#[test]
fn a_bridge_running_a_missing_binary_or_not_this_sjournals() {
    let m = Machine::new();
    m.install(&["pi", "--command", "/nonexistent/sjournal"]);
    let (status, msg, fix) = m.one("hook", Some("pi"));
    assert_eq!(status, "fail");
    has(&msg, "/nonexistent/sjournal does not exist");
    has(&fix, "sjournal install pi");
    m.install(&["pi"]);
    assert_eq!(m.one("hook", Some("pi")).0, "ok");
    let ext = m.home.join(".pi/agent/extensions/sjournal.ts");
    let mut text = std::fs::read_to_string(&ext).unwrap();
    text.push_str("// edited\n");
    std::fs::write(&ext, text).unwrap();
    let (status, msg, _) = m.one("hook", Some("pi"));
    assert_eq!(status, "warn");
    has(&msg, "not the one this sjournal installs");
}

#[test]
fn openclaw_without_its_plugin_entry() {
    let m = Machine::new();
    m.install(&["openclaw"]);
    assert_eq!(m.one("hook", Some("openclaw")).0, "ok");
    assert_eq!(m.one("trust", Some("openclaw")).0, "ok");
    let config = m.home.join(".openclaw/openclaw.json");
    std::fs::write(&config, r#"{"plugins": {"entries": {}}}"#).unwrap();
    let (status, msg, fix) = m.one("trust", Some("openclaw"));
    assert_eq!(status, "fail");
    has(&msg, "does not enable the plugin");
    assert_eq!(fix, "sjournal install openclaw");
}

#[test]
fn a_root_others_can_write_and_an_open_sessions_directory() {
    let m = Machine::new();
    m.claude_event("s-1");
    assert_eq!(m.one("root", None).0, "ok");
    std::fs::set_permissions(&m.root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (status, msg, fix) = m.one("root", None);
    assert_eq!(status, "fail");
    has(&msg, "others can write in it");
    has(&fix, &format!("chmod go-w {}", m.root.display()));
    std::fs::set_permissions(&m.root, std::fs::Permissions::from_mode(0o700)).unwrap();
    let sessions = m.root.join("sessions");
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (status, _, fix) = m.one("root", None);
    assert_eq!(status, "fail");
    has(&fix, &format!("chmod 700 {}", sessions.display()));
}

#[test]
fn spooled_events_waiting_then_flushed() {
    let m = Machine::new();
    m.claude_event("s-spool");
    let root = sjournal::journal::Root::new(&m.root);
    let event = sjournal::format::payload::encode_event_json(
        r#"{"session_id":"s-spool","hook_event_name":"Stop"}"#,
    );
    sjournal::session::keep_elsewhere(
        &root,
        "s-spool",
        &[("Stop", event.as_slice())],
        &[],
        "lock held",
        None,
        &sjournal::journal::WriterOptions::default(),
    )
    .unwrap();
    let (status, msg, fix) = m.one("spool", None);
    assert_eq!(status, "warn");
    has(&msg, "1 spooled event file(s) of 1 session(s)");
    assert_eq!(fix, "sjournal flush --all");
    m.ok(&["flush", "--all"], b"");
    assert_eq!(m.one("spool", None).0, "ok");
}

#[test]
fn events_waiting_in_the_fallback_spool() {
    let m = Machine::new();
    m.claude_event("s-fb");
    // `sessions/` replaced by a link: the root cannot take an event; it goes to the fallback.
    let sessions = m.root.join("sessions");
    let moved = m.dir.path().join("sessions-moved");
    std::fs::rename(&sessions, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &sessions).unwrap();
    let e = json!({"session_id": "s-fb", "hook_event_name": "Stop", "cwd": m.project});
    m.ok(&["hook", "--host", "claude"], e.to_string().as_bytes());
    let (status, msg, _) = m.one("root", None);
    assert_eq!(status, "fail");
    has(&msg, "is a symbolic link");
    let (status, msg, fix) = m.one("fallback", None);
    assert_eq!(status, "warn");
    has(
        &msg,
        "1 event file(s) of 1 session(s) wait in the fallback spool",
    );
    has(&msg, &m.fallback().display().to_string());
    has(&fix, "sjournal flush --all");
    // Fixed as it says: the link away, the directory back, a flush.
    std::fs::remove_file(&sessions).unwrap();
    std::fs::rename(&moved, &sessions).unwrap();
    m.ok(&["flush", "--all"], b"");
    assert_eq!(m.one("fallback", None).0, "ok");
    assert_eq!(m.one("root", None).0, "ok");
}

#[test]
fn a_damaged_journal_names_its_repair_command() {
    let m = Machine::new();
    for i in 0..5 {
        m.ok(
            &["append", "--session", "s-dmg"],
            format!(r#"{{"n": {i}, "pad": "{}"}}"#, "x".repeat(200)).as_bytes(),
        );
    }
    assert_eq!(m.one("journals", None).0, "ok");
    let journal = m.root.join("sessions/s-dmg.sjl");
    let mut bytes = std::fs::read(&journal).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&journal, bytes).unwrap();
    let (status, msg, fix) = m.one("journals", None);
    assert_eq!(status, "fail");
    has(&msg, "session s-dmg: the journal is damaged");
    has(&fix, "sjournal repair --session s-dmg");
    m.ok(&["repair", "--session", "s-dmg"], b"");
    assert_eq!(m.one("journals", None).0, "ok");
}

#[test]
fn a_webhook_whose_deliveries_fail() {
    let m = Machine::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    m.config(&format!(
        "\n[[webhook]]\nname = \"ci\"\nevents = [\"Stop\"]\nurl = \"http://127.0.0.1:{port}/\"\n\n[webhook.retry]\nattempts = 1\n"
    ));
    assert_eq!(m.one("webhooks", None).0, "ok");
    m.ok(
        &["append", "--session", "s-wh", "--kind", "Stop"],
        br#"{"session_id":"s-wh","hook_event_name":"Stop"}"#,
    );
    let o = m.sj(
        &["webhook", "deliver", "--session", "s-wh", "--attempts", "1"],
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let (status, msg, fix) = m.one("webhooks", None);
    assert_eq!(status, "warn");
    has(&msg, "webhook ci: 1 event(s) of session s-wh not delivered");
    has(&fix, "sjournal webhook deliver --all");
}

#[test]
fn project_scope_fixes_name_the_project() {
    let m = Machine::new();
    let other = m.dir.path().join("other project");
    std::fs::create_dir(&other).unwrap();
    let o = m.sj(
        &[
            "install",
            "claude-code",
            "--scope",
            "project",
            "--project-dir",
            other.to_str().unwrap(),
            "--command",
            "/nonexistent/sjournal",
        ],
        b"",
    );
    assert!(o.status.success(), "{o:?}");
    // Not seen from the current project; seen with --project-dir.
    assert_eq!(m.one("install", Some("claude-code")).0, "info");
    let o = m.sj(
        &["doctor", "--json", "--project-dir", other.to_str().unwrap()],
        b"",
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let hook = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "hook" && c["host"] == "claude-code")
        .unwrap_or_else(|| panic!("{r}"))
        .clone();
    assert_eq!(hook["status"], "fail");
    let fix = hook["fix"].as_str().unwrap();
    has(
        fix,
        &format!(
            "sjournal install claude-code --scope project --project-dir '{}'",
            other.display()
        ),
    );
    assert!(Path::new(&other).join(".claude/settings.json").exists());
}

/// Runs the shell command a fix names (`sjournal [--root ROOT] ...`, with this binary and
/// this machine's root).
fn run_fix(m: &Machine, fix: &str) {
    let words: Vec<String> = shlex::split(fix).unwrap();
    assert_eq!(words[0], "sjournal", "{fix}");
    let mut args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    if args[0] == "--root" {
        assert_eq!(Path::new(args[1]), m.root, "{fix}");
        args.drain(..2);
    }
    m.ok(&args, b"");
}

/// The command in backquotes after `marker` in an advice text.
fn command_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} in {text:?}"))
        + marker.len();
    let rest = &text[at..];
    let start = rest.find('`').unwrap() + 1;
    let end = start + rest[start..].find('`').unwrap();
    &rest[start..end]
}

#[test]
fn an_untrusted_spool_file_then_accepted_and_merged() {
    let m = Machine::new();
    m.claude_event("s-untrusted");
    assert_eq!(m.one("untrusted", None).0, "ok");
    // A fallback spool file without a MAC (what an older sjournal wrote, or someone else).
    let root = sjournal::journal::Root::new(&m.root);
    let fs = sjournal::storage::RealFs;
    let stem = root.session("s-untrusted").unwrap().stem;
    let dir = sjournal::journal::spool::fallback::ensure_session_dir(
        &fs,
        &root,
        &stem,
        Some(&m.fallback()),
    )
    .unwrap();
    let event = sjournal::format::payload::encode_event_json(
        r#"{"session_id":"s-untrusted","hook_event_name":"Stop","marker":"untrusted-marker"}"#,
    );
    let files = sjournal::journal::spool::write_records(
        &fs,
        &dir,
        &sjournal::journal::spool::ToSpool {
            session_id: "s-untrusted",
            records: &[("Stop", event.as_slice())],
            times: &[],
            reason: "the root was full",
            attempted: None,
        },
        None,
    )
    .unwrap();
    let (status, msg, fix) = m.one("untrusted", None);
    assert_eq!(status, "warn");
    has(&msg, "spool file in the fallback spool");
    has(&msg, &files[0].display().to_string());
    has(&msg, "not authenticated");
    has(&fix, "flush --accept");
    // Nothing of it is merged meanwhile: not waiting, not in the journal (the reader's merge
    // sets it aside as `.untrusted`, where doctor still finds it).
    assert_eq!(m.one("fallback", None).0, "ok");
    let log = m.ok(&["log", "--session", "s-untrusted", "--json"], b"");
    assert!(!log.contains("untrusted-marker"), "{log}");
    let (status, msg, fix) = m.one("untrusted", None);
    assert_eq!(status, "warn");
    has(&msg, ".spool.untrusted");
    // Fixed as it says: the user reviews it, recognises it, accepts it; then it is merged.
    let accept = command_after(&fix, "merge it with");
    has(accept, "flush --accept");
    run_fix(&m, accept);
    assert_eq!(m.one("untrusted", None).0, "ok");
    m.ok(&["flush", "--all"], b"");
    let log = m.ok(&["log", "--session", "s-untrusted", "--json"], b"");
    assert!(log.contains("untrusted-marker"), "{log}");
    let (code, r) = m.doctor();
    assert_eq!(code, 0, "{r}");
}

#[test]
fn a_fallback_directory_open_to_others_is_refused_until_private() {
    let m = Machine::new();
    std::fs::create_dir(m.fallback()).unwrap();
    std::fs::set_permissions(m.fallback(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (status, msg, fix) = m.one("untrusted", None);
    assert_eq!(status, "warn");
    has(&msg, "fallback spool directory");
    has(&msg, &m.fallback().display().to_string());
    has(&fix, "fallback_spool_dir");
    std::fs::set_permissions(m.fallback(), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(m.one("untrusted", None).0, "ok");
}

/// A session of five records through the binary, with its journal as it was at seq 3.
fn five_records(m: &Machine, session: &str) -> (PathBuf, Vec<u8>) {
    let journal = m.root.join(format!("sessions/{session}.sjl"));
    let mut at3 = Vec::new();
    for i in 0..5 {
        m.ok(
            &["append", "--session", session, "--kind", "Stop"],
            format!(r#"{{"session_id":"{session}","hook_event_name":"Stop","i":{i}}}"#).as_bytes(),
        );
        if i == 2 {
            at3 = std::fs::read(&journal).unwrap();
        }
    }
    (journal, at3)
}

#[test]
fn a_journal_rolled_back_behind_its_witnesses_then_repaired() {
    let m = Machine::new();
    let (journal, at3) = five_records(&m, "s-rb");
    assert_eq!(m.one("witnesses", None).0, "ok");
    // An older copy put back: every record verifies, but the mark and the lock file name seq 5.
    std::fs::write(&journal, at3).unwrap();
    assert!(m
        .checks("journals", None)
        .iter()
        .all(|c| c["status"] == "ok"));
    let (status, msg, fix) = m.one("witnesses", None);
    assert_eq!(status, "fail");
    has(&msg, "session s-rb: the journal ends at seq 3, but");
    has(&msg, "high-water mark s-rb.hwm names seq 5");
    has(&msg, "tail hint in s-rb.lock names seq 5");
    has(&msg, "records it held were lost");
    has(&fix, "sjournal repair --session s-rb");
    run_fix(&m, fix.split(" (").next().unwrap());
    assert_eq!(m.one("witnesses", None).0, "ok");
    assert_eq!(m.doctor().0, 0);
}

#[test]
fn a_journal_whose_mark_is_gone_then_repaired() {
    let m = Machine::new();
    let (journal, _) = five_records(&m, "s-nomark");
    std::fs::remove_file(sjournal::journal::hwm::path_for(&journal)).unwrap();
    let (status, msg, fix) = m.one("witnesses", None);
    assert_eq!(status, "fail");
    has(&msg, "high-water mark s-nomark.hwm is missing");
    has(&msg, "cannot be checked");
    has(
        &fix,
        "sjournal repair --session s-nomark (it writes the mark again",
    );
    run_fix(&m, fix.split(" (").next().unwrap());
    assert_eq!(m.one("witnesses", None).0, "ok");
    assert_eq!(m.doctor().0, 0);
}

#[test]
fn a_journal_deleted_while_its_witnesses_name_its_records_then_repaired() {
    let m = Machine::new();
    let (journal, _) = five_records(&m, "s-gone");
    std::fs::remove_file(&journal).unwrap();
    let (status, msg, fix) = m.one("witnesses", None);
    assert_eq!(status, "fail");
    has(&msg, &format!("{} is gone", journal.display()));
    has(&msg, "names seq 5");
    has(&fix, "sjournal repair --session s-gone");
    run_fix(&m, fix.split(" (").next().unwrap());
    assert_eq!(m.one("witnesses", None).0, "ok");
    assert_eq!(m.doctor().0, 0);
}

/// With `CODEX_HOME` set, Codex reads its hooks and their trust there: doctor checks sjournal's
/// hooks in `$CODEX_HOME/hooks.json` against `$CODEX_HOME/config.toml`, and hooks left in
/// `~/.codex/hooks.json` (where an older sjournal installed them whatever CODEX_HOME said) are a
/// finding: Codex never runs them. Fixed as it says, they are gone.
#[test]
fn codex_hooks_where_codex_home_is_not() {
    use sjournal::install::inspect;
    let m = Machine::new();
    m.install(&["codex"]);
    let codex_home = m.dir.path().join("codex-home");
    *m.codex_home.borrow_mut() = Some(codex_home.clone());
    let (status, msg, fix) = m.one("hook", Some("codex"));
    assert_eq!(status, "fail");
    has(
        &msg,
        &format!(
            "sjournal's hooks are in {}, but Codex reads {} (CODEX_HOME): they never run",
            m.home.join(".codex/hooks.json").display(),
            codex_home.join("hooks.json").display()
        ),
    );
    has(&fix, "sjournal install codex");
    has(&fix, "`env -u CODEX_HOME sjournal uninstall codex`");
    // Fixed as it says.
    m.install(&["codex"]);
    *m.codex_home.borrow_mut() = None;
    m.ok(&["uninstall", "codex"], b"");
    *m.codex_home.borrow_mut() = Some(codex_home.clone());
    let (status, msg, _) = m.one("hook", Some("codex"));
    assert_eq!(status, "ok", "{msg}");
    has(&msg, &codex_home.join("hooks.json").display().to_string());
    // Their trust is read from $CODEX_HOME/config.toml.
    assert_eq!(m.one("trust", Some("codex")).0, "fail");
    let hooks_json = codex_home.join("hooks.json");
    let hooks = inspect::read_hooks(&hooks_json).unwrap().unwrap();
    let state: String = hooks
        .iter()
        .map(|h| {
            format!(
                "[hooks.state.\"{}:{}:{}:{}\"]\ntrusted_hash = {:?}\n",
                hooks_json.display(),
                inspect::codex_event_label(&h.event),
                h.group,
                h.index,
                inspect::codex_hook_hash(h)
            )
        })
        .collect();
    std::fs::write(m.home.join(".codex/config.toml"), &state).unwrap();
    assert_eq!(
        m.one("trust", Some("codex")).0,
        "fail",
        "~/.codex is not read"
    );
    std::fs::write(codex_home.join("config.toml"), &state).unwrap();
    let (status, msg, _) = m.one("trust", Some("codex"));
    assert_eq!(status, "ok", "{msg}");
}
