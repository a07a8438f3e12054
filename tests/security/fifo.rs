//! A FIFO planted at a file sjournal opens must never hang it. A read-only `open` of a FIFO
//! waits for a writer, forever; so every file sjournal reads is opened with `O_NONBLOCK` and
//! checked with `fstat` to be a regular file before a byte is read (`storage::open_regular`).
//!
//! For every file sjournal keeps (the session's journal, lock and tail hint, high-water mark,
//! snapshot, rescue journal, a spool file and the merge intent in the root's spool, a spool
//! file in the fallback spool, the root's spool key and `config.toml`, the project and global
//! memory journals, the webhook state) a FIFO is put in its place, then the hook (three event
//! kinds: a tool call, a session start that reads memory, a `remember globally:` prompt that
//! writes it) and the read commands (`inspect`, `verify --all`, `sessions`, `flush --all`,
//! `state`, `log`, `webhook status`) are run, each with a generous kill-after bound: each
//! must exit by itself (a liveness check, not a timing one) with the exit code it gives for
//! that damage, the hook with 0. Then the FIFO is taken away, the file put back, and the
//! events the hook was given while the FIFO was there are all in the session's journal: the
//! hook kept them (spooled, where the journal could not take them).
//!
//! Files a user names on the command line are opened the same way: a FIFO given to
//! `import`, `verify --checkpoint` or `inspect` is refused at once (exit 2); a FIFO where an
//! installer would edit a host's settings is refused (exit 2), never waited on. `doctor`, which
//! reads the hosts' files too (settings, Codex's config.toml, Gemini CLI's trusted folders,
//! OpenClaw's configuration, the bridges' files), reports a FIFO at any of them as a finding;
//! `verify --remote` passes over a FIFO named like a copy `repair` keeps.

use crate::support::{self, webhook::Receiver};

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sjournal::journal::{spool, Root};
use sjournal::memory::Scope;

const SESSION: &str = "fifo-session";
/// Generous: a command that has not exited by then is waiting on the FIFO.
const KILL_AFTER: Duration = Duration::from_secs(30);
const TOOL_MARKER: &str = "toolu_fifo_marker";
const PROMPT_MARKER: &str = "remember globally: fifo prompt marker";
const FALLBACK_MARKER: &str = "toolu_fallback_marker";

/// Keeps one event of the session in the fallback spool, as a writer does when the root
/// cannot take it (authenticated by the root's key).
fn fallback_event(s: &Scene, marker: &str) {
    let root = Root::new(&s.root);
    let fs = sjournal::storage::RealFs;
    let stem = root.session(SESSION).unwrap().stem;
    let dir = spool::fallback::ensure_session_dir(&fs, &root, &stem, Some(&s.fallback)).unwrap();
    let key = spool::key::load(&root).unwrap();
    let payload = sjournal::format::payload::encode_event_json(&s.tool(marker));
    spool::write_records(
        &fs,
        &dir,
        &spool::ToSpool {
            session_id: SESSION,
            records: &[("PostToolUse", &payload)],
            times: &[],
            reason: "the root was full",
            attempted: None,
        },
        Some(&key),
    )
    .unwrap();
}

/// Runs `cmd` with `stdin`; None if it had not exited (and closed its pipes) by
/// [`KILL_AFTER`], in which case it is killed.
fn bounded(mut cmd: Command, stdin: &[u8]) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sjournal");
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
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
        if start.elapsed() > KILL_AFTER {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut got = pipes.into_iter().map(|rx| {
        rx.recv_timeout(KILL_AFTER.saturating_sub(start.elapsed()))
            .ok()
    });
    let (stdout, stderr) = (got.next().unwrap()?, got.next().unwrap()?);
    Some(Output {
        status,
        stdout,
        stderr,
    })
}

struct Scene {
    dir: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    fallback: PathBuf,
    _receiver: Receiver,
}

impl Scene {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = support::spawnable(&self.root);
        c.args(args);
        c
    }

    fn payload(&self, event: &str, variant: Option<&str>, extra: serde_json::Value) -> String {
        let mut p = support::context::real(event, variant, SESSION);
        p["cwd"] = self.project.to_string_lossy().into();
        for (k, v) in extra.as_object().unwrap() {
            p[k.as_str()] = v.clone();
        }
        p.to_string()
    }

    fn tool(&self, id: &str) -> String {
        self.payload(
            "PostToolUse",
            None,
            serde_json::json!({"tool_use_id": id, "tool_name": "Bash",
                "tool_input": {"command": "true"}, "tool_response": {"stdout": ""}}),
        )
    }

    fn start(&self) -> String {
        self.payload("SessionStart", Some("startup"), serde_json::json!({}))
    }

    fn prompt(&self, text: &str) -> String {
        self.payload(
            "UserPromptSubmit",
            None,
            serde_json::json!({ "prompt": text }),
        )
    }

    fn hook(&self, payload: &str) -> Option<Output> {
        bounded(self.cmd(&["hook"]), payload.as_bytes())
    }
}

/// A root with everything sjournal keeps for a session: its journal, lock (with the tail
/// hint), high-water mark and snapshot; project and global memory journals; webhook state
/// (delivered to a receiver on 127.0.0.1); a fallback spool configured inside the test's
/// directory; the root's spool key.
fn scene() -> Scene {
    let dir = support::scratch();
    let root = dir.path().join("root");
    let project = dir.path().join("project");
    let fallback = dir.path().join("fallback");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir(&root).unwrap();
    let receiver = Receiver::start(support::webhook::Mode::Ok);
    std::fs::write(
        root.join("config.toml"),
        format!(
            "[hook]\nfallback_spool_dir = {fallback:?}\n\n[[webhook]]\nname = \"w\"\n\
             events = [\"PostToolUse\"]\nurl = \"{}\"\n",
            receiver.url("/hook")
        ),
    )
    .unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    let s = Scene {
        dir,
        root,
        project,
        fallback,
        _receiver: receiver,
    };
    for p in [
        s.start(),
        s.prompt("remember: run make check before finishing"),
        s.prompt("remember globally: answer in English"),
        s.tool("toolu_setup"),
    ] {
        let out = s.hook(&p).expect("the hook exits");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    support::webhook::wait_delivered(&s.root, SESSION, KILL_AFTER);
    let out = bounded(s.cmd(&["snapshot", "--session", SESSION]), b"").unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    s
}

/// The files a FIFO is planted at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Journal,
    Lock,
    Mark,
    Snapshot,
    RescueJournal,
    RootSpoolFile,
    SpoolIntent,
    FallbackSpoolFile,
    ProjectMemoryFallbackSpoolFile,
    GlobalMemoryFallbackSpoolFile,
    SpoolKey,
    Config,
    ProjectMemoryJournal,
    ProjectMemoryLock,
    GlobalMemoryJournal,
    WebhookLock,
    WebhookCursor,
}

impl Target {
    fn path(self, s: &Scene) -> PathBuf {
        let root = Root::new(&s.root);
        let paths = root.session(SESSION).unwrap();
        let scope = |sc: Scope| root.session(&sc.journal_id()).unwrap();
        let project = || scope(Scope::Project(s.project.to_string_lossy().into_owned()));
        let webhook = paths.dir.join(format!("{}.webhook", paths.stem));
        match self {
            Target::Journal => paths.journal,
            Target::Lock => paths.lock,
            Target::Mark => sjournal::journal::hwm::path_for(&paths.journal),
            Target::Snapshot => paths.snapshot,
            Target::RescueJournal => paths.rescue,
            Target::RootSpoolFile => paths
                .spool
                .join("00000000000000000001-0000000001-0000000001.spool"),
            Target::SpoolIntent => paths.spool.join("merge.intent"),
            Target::FallbackSpoolFile => fallback_file(s, &paths.stem),
            Target::ProjectMemoryFallbackSpoolFile => fallback_file(s, &project().stem),
            Target::GlobalMemoryFallbackSpoolFile => fallback_file(s, &scope(Scope::Global).stem),
            Target::SpoolKey => spool::key::path(&root),
            Target::Config => s.root.join("config.toml"),
            Target::ProjectMemoryJournal => project().journal,
            Target::ProjectMemoryLock => project().lock,
            Target::GlobalMemoryJournal => scope(Scope::Global).journal,
            Target::WebhookLock => webhook.join("deliver.lock"),
            Target::WebhookCursor => webhook.join("w.cursor"),
        }
    }
}

/// A spool file's place in the fallback spool of the journal with file stem `stem`.
fn fallback_file(s: &Scene, stem: &str) -> PathBuf {
    s.fallback
        .join(spool::fallback::root_key(&Root::new(&s.root)))
        .join(format!("{stem}.spool"))
        .join("00000000000000000001-0000000001-0000000001.spool")
}

/// Processes still running with `root` on their command line (a hook's detached deliverer,
/// say), other than this one.
fn left_running(root: &std::path::Path) -> Vec<u32> {
    let me = std::process::id();
    let needle = root.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle))
        })
        .filter(|&pid| sjournal::webhook::outbox::alive(pid))
        .collect()
}

/// Plants a FIFO at `target`'s file (the file, if any, kept aside), runs every command, takes
/// the FIFO away and puts the file back; returns each command's exit code (None: it did not
/// exit by itself), and checks the hook kept its events.
fn planted(target: Target) -> Vec<(String, Option<i32>)> {
    let s = scene();
    let mut markers = vec![TOOL_MARKER, PROMPT_MARKER];
    if target == Target::SpoolKey {
        // An event waiting in the fallback spool, authenticated by the key: while the key is
        // a FIFO it cannot be checked (kept, not merged); once the key is back it is merged.
        fallback_event(&s, FALLBACK_MARKER);
        markers.push(FALLBACK_MARKER);
    }
    let path = target.path(&s);
    let kept = s.dir.path().join("kept-aside");
    let had = path.exists();
    if had {
        std::fs::rename(&path, &kept).unwrap();
    }
    let parent = path.parent().unwrap();
    std::fs::create_dir_all(parent).unwrap();
    for d in parent
        .ancestors()
        .take_while(|d| d.starts_with(s.dir.path()))
    {
        if d != s.dir.path() {
            std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .unwrap();
        }
    }
    super::mkfifo(&path);

    let journal = Root::new(&s.root).session(SESSION).unwrap().journal;
    let journal = journal.to_string_lossy().into_owned();
    let mut codes = Vec::new();
    let mut run = |name: &str, out: Option<Output>| {
        if let Some(o) = &out {
            if o.status.code().is_none() {
                panic!("{target:?}: `{name}` died of a signal: {o:?}");
            }
        }
        codes.push((name.to_owned(), out.and_then(|o| o.status.code())));
    };
    run("hook PostToolUse", s.hook(&s.tool(TOOL_MARKER)));
    run("hook SessionStart", s.hook(&s.start()));
    run("hook remember", s.hook(&s.prompt(PROMPT_MARKER)));
    for (name, args) in [
        ("inspect", vec!["inspect", journal.as_str()]),
        ("verify --all", vec!["verify", "--all"]),
        ("sessions", vec!["sessions"]),
        ("flush --all", vec!["flush", "--all"]),
        ("state", vec!["state", "--session", SESSION]),
        ("log", vec!["log", "--session", SESSION]),
        ("webhook status", vec!["webhook", "status"]),
    ] {
        run(name, bounded(s.cmd(&args), b""));
    }

    // Nothing the commands started (a detached webhook deliverer) is left waiting on it.
    let start = Instant::now();
    while !left_running(&s.root).is_empty() && start.elapsed() < KILL_AFTER {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stuck = left_running(&s.root);
    for pid in &stuck {
        let p = rustix::process::Pid::from_raw(*pid as i32).unwrap();
        let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
    }
    codes.push((
        "processes it started".into(),
        (stuck.is_empty()).then_some(0),
    ));

    // Put things back; every event the hook was given is then in the session's journal.
    let _ = std::fs::remove_file(&path);
    if had {
        std::fs::rename(&kept, &path).unwrap();
    }
    let out = bounded(s.cmd(&["flush", "--all"]), b"").expect("flush exits");
    assert!(out.status.code().is_some(), "{out:?}");
    let log = bounded(s.cmd(&["log", "--session", SESSION, "--json"]), b"").unwrap();
    let text = String::from_utf8_lossy(&log.stdout);
    for marker in markers {
        assert!(
            text.contains(marker),
            "{target:?}: the hook's event {marker:?} was not kept: {log:?}"
        );
    }
    codes
}

/// Runs [`planted`] and checks every command exited by itself with the code `expected` gives
/// it (the hook always 0).
fn check(target: Target, expected: &[(&str, i32)]) {
    let codes = planted(target);
    let hung: Vec<&str> = codes
        .iter()
        .filter(|(_, c)| c.is_none())
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(
        hung.is_empty(),
        "{target:?}: these did not exit by themselves within {KILL_AFTER:?} (waiting on the \
         FIFO): {hung:?}; all: {codes:?}"
    );
    for (name, code) in &codes {
        let want = if name.starts_with("hook") || name.starts_with("processes") {
            0
        } else {
            expected
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, c)| *c)
        };
        assert_eq!(
            *code,
            Some(want),
            "{target:?}: `{name}` exited {code:?}, expected {want}; all: {codes:?}"
        );
    }
}

#[test]
fn a_fifo_at_the_journal() {
    // The journal cannot be read: every reader says so (exit 2; `verify --all` and
    // `sessions` report it as a finding, exit 1). Events are spooled meanwhile.
    check(
        Target::Journal,
        &[
            ("inspect", 2),
            ("verify --all", 1),
            ("sessions", 1),
            ("flush --all", 1),
            ("state", 2),
            ("log", 2),
        ],
    );
}

#[test]
fn a_fifo_at_the_lock_file() {
    // No writer can lock the session: its events wait in the spool (`flush` and the readers
    // say so, exit 1 for `flush` and `verify`); readers that need the lock refuse (exit 2).
    check(
        Target::Lock,
        &[
            ("inspect", 2),
            ("verify --all", 1),
            ("sessions", 1),
            ("flush --all", 1),
            ("state", 2),
            ("log", 2),
        ],
    );
}

#[test]
fn a_fifo_at_the_high_water_mark() {
    // Rollback detection is off for the writer; `verify` reports the mark as unreadable.
    check(Target::Mark, &[("verify --all", 1), ("sessions", 1)]);
}

#[test]
fn a_fifo_at_the_snapshot() {
    check(Target::Snapshot, &[]);
}

#[test]
fn a_fifo_at_the_rescue_journal() {
    check(
        Target::RescueJournal,
        &[("verify --all", 1), ("sessions", 1)],
    );
}

#[test]
fn a_fifo_in_the_roots_spool() {
    // Not a regular file: never read, set aside as `.untrusted`, reported with what to do.
    check(
        Target::RootSpoolFile,
        &[("verify --all", 1), ("sessions", 1), ("flush --all", 1)],
    );
}

#[test]
fn a_fifo_at_the_spool_merge_intent() {
    check(Target::SpoolIntent, &[]);
}

#[test]
fn a_fifo_in_the_fallback_spool() {
    check(
        Target::FallbackSpoolFile,
        &[("verify --all", 1), ("sessions", 1), ("flush --all", 1)],
    );
}

#[test]
fn a_fifo_in_the_project_memorys_fallback_spool() {
    // The session start's write to the project journal merges its spool after the reply:
    // the FIFO is refused there (set aside, reported), never waited on.
    check(
        Target::ProjectMemoryFallbackSpoolFile,
        &[("verify --all", 1), ("sessions", 1), ("flush --all", 1)],
    );
}

#[test]
fn a_fifo_in_the_global_memorys_fallback_spool() {
    check(
        Target::GlobalMemoryFallbackSpoolFile,
        &[("verify --all", 1), ("sessions", 1), ("flush --all", 1)],
    );
}

#[test]
fn a_fifo_at_the_spool_key() {
    // The fallback file cannot be authenticated meanwhile: kept where it is, not merged,
    // reported (exit 1); merged once the key is back.
    check(
        Target::SpoolKey,
        &[("verify --all", 1), ("sessions", 1), ("flush --all", 1)],
    );
}

#[test]
fn a_fifo_at_the_config_file() {
    // Refused as the configuration: the hook and the readers run with the defaults and say
    // so; `webhook status`, which is about what it configures, stops (exit 2).
    check(Target::Config, &[("webhook status", 2)]);
}

#[test]
fn a_fifo_at_the_project_memory_journal() {
    check(
        Target::ProjectMemoryJournal,
        &[("verify --all", 1), ("sessions", 1)],
    );
}

#[test]
fn a_fifo_at_the_project_memory_lock() {
    // `verify` and `sessions` report the lock they cannot open (a finding, exit 1).
    check(
        Target::ProjectMemoryLock,
        &[("verify --all", 1), ("sessions", 1)],
    );
}

#[test]
fn a_fifo_at_the_global_memory_journal() {
    check(
        Target::GlobalMemoryJournal,
        &[("verify --all", 1), ("sessions", 1)],
    );
}

#[test]
fn a_fifo_at_the_webhook_lock() {
    check(Target::WebhookLock, &[("webhook status", 0)]);
}

#[test]
fn a_fifo_at_the_webhook_cursor() {
    check(Target::WebhookCursor, &[("webhook status", 0)]);
}

/// A FIFO named on the command line is refused at once, not read until a writer comes.
#[test]
fn a_fifo_named_on_the_command_line_is_refused_at_once() {
    let s = scene();
    let fifo = s.dir.path().join("named.fifo");
    super::mkfifo(&fifo);
    let f = fifo.to_string_lossy().into_owned();
    for args in [
        vec!["import", "--session", "imported", f.as_str()],
        vec!["verify", "--session", SESSION, "--checkpoint", f.as_str()],
        vec!["inspect", f.as_str()],
    ] {
        let out =
            bounded(s.cmd(&args), b"").unwrap_or_else(|| panic!("`{args:?}` waited on the FIFO"));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
}

/// A FIFO (or a dangling symlink) where `install` would edit a host's settings is refused
/// with what to do (exit 2), never waited on and never replaced.
#[test]
fn a_fifo_at_a_hosts_settings_file_is_refused() {
    let dir = support::scratch();
    let settings = dir.path().join(".claude/settings.json");
    std::fs::create_dir(dir.path().join(".claude")).unwrap();
    super::mkfifo(&settings);
    let mut c = Command::new(support::bin());
    c.args([
        "install",
        "claude-code",
        "--scope",
        "project",
        "--project-dir",
    ])
    .arg(dir.path())
    .env("HOME", dir.path())
    .env_remove("SJOURNAL_HOME");
    let out = bounded(c, b"").expect("install waited on the FIFO");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FIFO") && err.contains("move it away"),
        "{err}"
    );
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &std::fs::symlink_metadata(&settings).unwrap().file_type()
    ));
}

/// `doctor` reads files the hosts keep (settings, Codex's config.toml with its hook trust,
/// Gemini CLI's trusted folders, OpenClaw's configuration, the bridges' files) and the root's
/// config.toml. A FIFO at any of them is a finding naming it (exit 1), never a wait. Each is
/// planted alone, with every host installed so that doctor reaches it: Gemini CLI in both
/// scopes (its user settings are read again for folder trust while the project's hooks are
/// checked), OpenClaw's and Cline's bridges (each of several files, all read to compare them
/// with what this sjournal installs).
#[test]
fn a_fifo_at_a_file_doctor_reads_is_a_finding_not_a_wait() {
    let dir = support::scratch();
    let (home, project, root) = (
        dir.path().join("home"),
        dir.path().join("project"),
        dir.path().join("root"),
    );
    for d in [&home, &project, &root] {
        std::fs::create_dir_all(d).unwrap();
    }
    let sj = |args: &[&str]| {
        let mut c = Command::new(support::bin());
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .current_dir(&project)
            .arg("--root")
            .arg(&root)
            .args(args);
        c
    };
    for args in [
        &["install", "claude-code"][..],
        &["install", "codex"],
        &["install", "gemini"],
        &["install", "gemini", "--scope", "project"],
        &["install", "openclaw"],
        &["install", "cline"],
    ] {
        let out = bounded(sj(args), b"").expect("install exits");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    }
    std::fs::write(home.join(".codex/config.toml"), "").unwrap();
    std::fs::write(home.join(".gemini/trustedFolders.json"), "{}").unwrap();
    std::fs::write(root.join("config.toml"), "").unwrap();
    for file in [
        home.join(".codex/config.toml"),
        home.join(".codex/hooks.json"),
        home.join(".claude/settings.json"),
        home.join(".gemini/settings.json"),
        home.join(".gemini/trustedFolders.json"),
        home.join(".openclaw/openclaw.json"),
        home.join(".openclaw/extensions/sjournal/package.json"),
        home.join("Documents/Cline/Hooks/PostToolUse"),
        root.join("config.toml"),
    ] {
        let kept = dir.path().join("kept-aside");
        std::fs::rename(&file, &kept).unwrap();
        super::mkfifo(&file);
        let out = bounded(sj(&["doctor", "--json"]), b"")
            .unwrap_or_else(|| panic!("doctor waited on the FIFO at {}", file.display()));
        assert_eq!(out.status.code(), Some(1), "{}: {out:?}", file.display());
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let name = file.file_name().unwrap().to_str().unwrap();
        let named = report["checks"].as_array().unwrap().iter().any(|c| {
            let m = c["message"].as_str().unwrap_or("");
            (c["status"] == "fail" || c["status"] == "warn")
                && m.contains(name)
                && m.contains("FIFO")
        });
        assert!(named, "{}: no finding names it: {report:#}", file.display());
        std::fs::remove_file(&file).unwrap();
        std::fs::rename(&kept, &file).unwrap();
    }
}

/// `verify --remote`, when a journal the remote holds is gone here, looks for its records in
/// the copies `repair` keeps beside the journal (`<journal>.damaged-*.bin`): a FIFO by that
/// name is passed over, never waited on (the finding stands: exit 1).
#[cfg(feature = "remote")]
#[test]
fn a_fifo_named_like_a_repair_copy_does_not_hang_verify_remote() {
    let d = support::scratch();
    let root = d.path().join("root");
    let url = format!("file://{}", d.path().join("bucket").display());
    support::remote::append(&Root::new(&root), "s", 0, 12, 300);
    let ship = support::run(&root, &["ship", "--all", "--to", &url], b"");
    assert!(ship.status.success(), "{ship:?}");
    std::fs::remove_file(root.join("sessions/s.sjl")).unwrap();
    super::mkfifo(&root.join("sessions/s.sjl.damaged-1.bin"));
    let mut c = support::spawnable(&root);
    c.args(["verify", "--remote", &url]);
    let out = bounded(c, b"").expect("verify --remote waited on the FIFO");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(text.contains("lacks seq 1..=12"), "{text}");
}
