//! The hook under stress: whatever the machine and the other processes do, it answers in time,
//! gives the host the reply it is still waiting for, and keeps the event.
//!
//! - **Late stdin.** Every payload of every host's fixtures (the `tests/fixtures` corpora,
//!   which hold every event kind of the real captures) is played twice, in order, into two
//!   roots: once with stdin ready, once written 200 ms after the hook's deadline has passed
//!   (counted from its start). The late hook answers exactly as the ready one did, context
//!   included, and journals the same records: the deadline counts from the input.
//! - **Held locks.** For every file sjournal creates under a root (journals, their locks and
//!   high-water marks, the rescue journal, quarantine, spool, snapshots and the rebuild lock,
//!   the project and global memory journals, webhook state, config), another process holds an
//!   exclusive flock on it while every event kind runs through the hook, with stdin ready and
//!   late. Each hook returns while the lock is still held — the holder lets go only when the
//!   test tells it to, after every hook has exited, and says whether it was still holding then
//!   (a hook that waited for the lock outlasts the holder's 30 s, and the holder says it gave
//!   up) — exits 0, and each event is in the journal once the locks are gone.
//! - **The rest of what real hosts showed:** a complete event on a stdin the host leaves open
//!   is the event, at once; an event cut by the input time limit and an event lost for want of
//!   a root reach the host's visible channel; memory's write after the reply does not wait for
//!   a held scope journal (it is spooled, and merged later); a session whose fold outlasts the
//!   deadline gets its snapshot rebuilt off the hook's path.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use sjournal::format::payload::KIND_UNPARSED;
use sjournal::journal::Root;
use support::{said, Stall};

/// How long another process holds a lock unless told to let go: every hook must have returned
/// long before (none waits past its deadline).
const HOLD_SECS: u64 = 30;

/// Another process holding an exclusive flock on one file (util-linux `flock(1)`) until the
/// test closes its stdin, or `HOLD_SECS` pass; it then says which.
struct Holder {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Holder {
    fn hold(path: &Path) -> Holder {
        let script = format!(
            "echo locked; if timeout {HOLD_SECS} cat >/dev/null; then echo released; \
             else echo expired; fi"
        );
        let mut child = Command::new("flock")
            .arg("-x")
            .arg(path)
            .args(["sh", "-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("flock(1) from util-linux");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "locked", "holding {}", path.display());
        Holder { child, out }
    }

    /// Lets go. True if the lock was still held when the test said so: nothing outwaited it.
    fn release(mut self) -> bool {
        drop(self.child.stdin.take());
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        line.trim() == "released"
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        // The holder leads its own process group (flock, sh, timeout, cat).
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        let _ = self.child.wait();
    }
}

/// Runs `sjournal hook ARGS` with `payload` on stdin, written at once or `late` after the
/// hook started (stdin is closed after it).
fn hook(root: &Path, args: &[&str], payload: &[u8], late: Option<Duration>) -> Output {
    let mut child = support::spawnable(root)
        .arg("hook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let payload = payload.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(d) = late {
            std::thread::sleep(d);
        }
        let _ = stdin.write_all(&payload);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every record kind of every journal under `root`'s `sessions/`, per journal file, with the
/// system records sjournal adds by itself (spool merges, recoveries) left out.
fn record_kinds(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for path in Root::new(root).journals().unwrap() {
        let r = sjournal::journal::JournalReader::open(&path, None).unwrap();
        let kinds = r
            .records()
            .unwrap()
            .map(|rec| rec.unwrap().kind.to_owned())
            .filter(|k| !matches!(k.as_str(), "sjournal.spool-merge" | "sjournal.recovered"))
            .collect();
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            kinds,
        ));
    }
    out.sort();
    out
}

/// The deadline of the late runs, and how long after the hook's start their stdin comes.
const LATE_DEADLINE_MS: u64 = 500;
const LATE_BY: Duration = Duration::from_millis(LATE_DEADLINE_MS + 200);

#[test]
fn late_stdin_gets_the_reply_ready_stdin_gets_for_every_event_of_every_host() {
    let mut by_file: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for p in support::all_payloads() {
        match by_file.last_mut() {
            Some((f, v)) if *f == p.file => v.push(p.json),
            _ => by_file.push((p.file, vec![p.json])),
        }
    }
    assert!(by_file.len() >= 10, "the fixture corpora: {by_file:?}");
    let runs: Vec<_> = by_file
        .into_iter()
        .map(|(file, payloads)| {
            std::thread::spawn(move || {
                let (ready_root, late_root) = (support::scratch(), support::scratch());
                let name = file.display().to_string();
                for (i, json) in payloads.iter().enumerate() {
                    let ready = hook(
                        ready_root.path(),
                        &["--deadline-ms", support::PATIENT_MS],
                        json.as_bytes(),
                        None,
                    );
                    let late = hook(
                        late_root.path(),
                        &["--deadline-ms", &LATE_DEADLINE_MS.to_string()],
                        json.as_bytes(),
                        Some(LATE_BY),
                    );
                    let what = format!("{name} line {}: {json:.160}", i + 1);
                    assert_eq!(ready.status.code(), Some(0), "{what}: {ready:?}");
                    assert_eq!(late.status.code(), Some(0), "{what}: {late:?}");
                    assert_eq!(
                        text(&late.stdout),
                        text(&ready.stdout),
                        "{what}: the late reply differs\nlate stderr: {}\nready stderr: {}",
                        text(&late.stderr),
                        text(&ready.stderr)
                    );
                }
                for root in [&ready_root, &late_root] {
                    let flushed = support::run(root.path(), &["flush", "--all"], b"");
                    assert!(flushed.status.success(), "{name}: {flushed:?}");
                }
                let (ready, late) = (
                    record_kinds(ready_root.path()),
                    record_kinds(late_root.path()),
                );
                assert_eq!(late, ready, "{name}: the late run journaled other records");
                assert!(
                    late.iter()
                        .all(|(_, k)| !k.iter().any(|k| k == KIND_UNPARSED)),
                    "{name}: {late:?}"
                );
            })
        })
        .collect();
    let failed: Vec<String> = runs
        .into_iter()
        .filter_map(|r| r.join().err())
        .map(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| format!("{e:?}"))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// The event kinds the held-lock matrix runs, from the recorded Claude Code payloads (a
/// "remember: …" prompt, so that memory writes after the reply).
const KINDS: &[(&str, Option<&str>)] = &[
    ("SessionStart", Some("startup")),
    ("SessionStart", Some("compact")),
    ("UserPromptSubmit", None),
    ("PreToolUse", None),
    ("PostToolUse", None),
    ("PostToolUseFailure", None),
    ("Stop", None),
    ("PreCompact", Some("manual")),
    ("PostCompact", Some("manual")),
    ("SubagentStop", Some("general-purpose")),
    ("Notification", Some("permission_prompt")),
    ("SessionEnd", Some("other")),
];

/// A recorded Claude Code payload of `event` in `session`, run from `project`, carrying `tag`
/// (to find it in the journal); its prompt, if it has one, is `prompt`.
fn claude(event: &str, variant: Option<&str>, session: &str, project: &Path, tag: &str) -> Vec<u8> {
    let mut v: Value = serde_json::from_str(&support::claude_payload(event, variant)).unwrap();
    v["session_id"] = session.into();
    v["cwd"] = project.display().to_string().into();
    v["sjournal_test_tag"] = tag.into();
    if v.get("prompt").is_some() {
        v["prompt"] = "remember: run the stress suite before merging".into();
    }
    serde_json::to_vec(&v).unwrap()
}

/// Every regular file under `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            out.extend(files_under(&e.path()));
        } else if t.is_file() {
            out.push(e.path());
        }
    }
    out.sort();
    out
}

/// A root where sjournal has created every kind of file it keeps: a session with history, a
/// snapshot and a pending spool file; a damaged session writing to its rescue journal; a
/// recovered session with a quarantined tail; the project's and the global memory journals;
/// a webhook's delivery state; the configuration; a snapshot rebuild's lock.
fn everything_root(root: &Path, project: &Path, receiver: &support::webhook::Receiver) {
    std::fs::write(
        root.join("config.toml"),
        format!(
            "[[webhook]]\nname = \"w\"\nevents = [\"Stop\"]\nurl = \"{}\"\n",
            receiver.url("/hook")
        ),
    )
    .unwrap();
    let patient = ["--host", "claude", "--deadline-ms", support::PATIENT_MS];
    let run = |session: &str, event: &str, variant: Option<&str>| {
        let mut p: Value =
            serde_json::from_slice(&claude(event, variant, session, project, "setup")).unwrap();
        if event == "UserPromptSubmit" {
            p["prompt"] = "remember globally: prefer small commits".into();
        }
        let out = hook(root, &patient, &serde_json::to_vec(&p).unwrap(), None);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    for (e, v) in [
        ("SessionStart", Some("startup")),
        ("UserPromptSubmit", None),
        ("PostToolUse", None),
        ("Stop", None),
    ] {
        run("main", e, v);
    }
    support::webhook::wait_delivered(root, "main", Duration::from_secs(60));
    for args in [
        &["snapshot", "--session", "main"][..],
        &["snapshot", "--session", "main", "--detached"],
    ] {
        let out = support::run(root, args, b"");
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    // A spool file: the session's lock held while an event comes.
    let paths = Root::new(root).session("main").unwrap();
    let holder = Holder::hold(&paths.lock);
    let p = claude("PostToolUse", None, "main", project, "spooled");
    let out = hook(root, &["--host", "claude", "--deadline-ms", "50"], &p, None);
    assert!(holder.release(), "{out:?}");
    assert!(!sjournal::journal::spool::pending(&Root::new(root), "main")
        .unwrap()
        .is_empty());
    // A damaged journal: its second record's payload flipped; the next event is rescued.
    for (e, v) in [("SessionStart", Some("startup")), ("PostToolUse", None)] {
        run("damaged", e, v);
    }
    let damaged = Root::new(root).session("damaged").unwrap().journal;
    let mut bytes = std::fs::read(&damaged).unwrap();
    let at = bytes.len() - 40;
    bytes[at] ^= 0x55;
    std::fs::write(&damaged, &bytes).unwrap();
    run("damaged", "PostToolUse", None);
    assert!(Root::new(root).session("damaged").unwrap().rescue.exists());
    // A torn tail: quarantined by the next writer.
    run("torn", "SessionStart", Some("startup"));
    let torn = Root::new(root).session("torn").unwrap().journal;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&torn)
        .unwrap();
    f.write_all(&[0x53, 0x4a, 0x00, 0x01, 0x02]).unwrap();
    drop(f);
    run("torn", "PostToolUse", None);
    assert!(!support::quarantine_files(&root.join("sessions")).is_empty());
}

/// The session whose files `file` is one of (by its name), else "main".
fn owner(file: &Path) -> &'static str {
    let name = file.file_name().unwrap().to_string_lossy();
    ["damaged", "torn"]
        .into_iter()
        .find(|s| name.starts_with(&format!("{s}.")))
        .unwrap_or("main")
}

/// The raw bytes of every journal and pending spool file of `session` (a tag is found in
/// them byte for byte: the event's JSON is kept verbatim).
fn kept_bytes(root: &Path, session: &str, with_spool: bool) -> Vec<u8> {
    let r = Root::new(root);
    let paths = r.session(session).unwrap();
    let mut all = Vec::new();
    for p in [&paths.journal, &paths.rescue] {
        all.extend(std::fs::read(p).unwrap_or_default());
    }
    if with_spool {
        for p in sjournal::journal::spool::pending(&r, session).unwrap() {
            all.extend(std::fs::read(p).unwrap_or_default());
        }
    }
    all
}

#[test]
fn no_hook_waits_for_a_lock_another_process_holds_on_any_file_of_the_root() {
    let root = support::scratch();
    let project = support::scratch();
    let receiver = support::webhook::Receiver::start(support::webhook::Mode::Ok);
    everything_root(root.path(), project.path(), &receiver);
    let files = files_under(root.path());
    let names: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(root.path()).unwrap().display().to_string())
        .collect();
    // What the root holds: each kind of file is held once below.
    for want in [
        "config.toml",
        "sessions/main.sjl",
        "sessions/main.lock",
        "sessions/main.hwm",
        "sessions/main.snap",
        "sessions/main.snap.lock",
        "sessions/main.spool/",
        "sessions/damaged.rescue.sjl",
        "sessions/damaged.rescue.lock",
        "sessions/damaged.rescue.hwm",
        "quarantine",
        "sessions/main.webhook/",
    ] {
        assert!(
            names.iter().any(|n| n.contains(want)),
            "no {want:?} in the root: {names:#?}"
        );
    }
    // The project's and the global memory journal (scope journals are named by a hash).
    let scopes = names
        .iter()
        .filter(|n| n.starts_with("sessions/h-") && n.ends_with(".sjl"))
        .count();
    assert_eq!(scopes, 2, "{names:#?}");
    let mut tags: Vec<(String, &'static str)> = Vec::new();
    // What each hook said (stderr), for the message of an event that is not kept.
    let mut said_by: std::collections::BTreeMap<String, String> = Default::default();
    for (i, file) in files.iter().enumerate() {
        let session = owner(file);
        let holder = Holder::hold(file);
        let runs: Vec<_> = KINDS
            .iter()
            .enumerate()
            .flat_map(|(k, kind)| [(k, kind, false), (k, kind, true)])
            .map(|(k, (event, variant), late)| {
                let tag = format!("t{i:03}-{k:02}-{}", if late { "late" } else { "ready" });
                let p = claude(event, *variant, session, project.path(), &tag);
                tags.push((tag.clone(), session));
                let root = root.path().to_owned();
                std::thread::spawn(move || {
                    let late = late.then_some(Duration::from_millis(400));
                    (tag, hook(&root, &["--host", "claude"], &p, late))
                })
            })
            .collect();
        for r in runs {
            let (tag, out) = r.join().unwrap();
            assert_eq!(out.status.code(), Some(0), "{tag} ({}): {out:?}", names[i]);
            said_by.insert(
                tag,
                format!("lock held on {}; stderr: {}", names[i], text(&out.stderr)),
            );
        }
        assert!(
            holder.release(),
            "a hook waited for the lock on {} until its holder gave up ({HOLD_SECS} s)",
            names[i]
        );
    }
    // Everything spooled is merged now, but for the damaged journal, which takes no merge
    // (its spooled events wait for `repair`, and `flush` says so).
    let flushed = support::run(root.path(), &["flush", "--all"], b"");
    let said = text(&flushed.stdout);
    assert!(
        said.lines()
            .filter(|l| l.contains("still pending"))
            .all(|l| l.starts_with("damaged:")),
        "{flushed:?}"
    );
    for session in ["main", "torn", "damaged"] {
        let kept = kept_bytes(root.path(), session, session == "damaged");
        let kept = text(&kept);
        for (tag, _) in tags.iter().filter(|(_, s)| *s == session) {
            assert!(
                kept.contains(&format!("\"{tag}\"")),
                "event {tag} of session {session} is not kept ({}); the root holds {:#?}",
                said_by.get(tag).map_or("", String::as_str),
                files_under(root.path())
            );
        }
    }
    // Every journal verifies, but the one damaged on purpose.
    let verified = support::run(root.path(), &["verify", "--all"], b"");
    let said = text(&verified.stdout) + &text(&verified.stderr);
    let bad: Vec<&str> = said.lines().filter(|l| l.starts_with("BAD")).collect();
    assert!(bad.len() == 1 && bad[0].contains("damaged.sjl"), "{said}");
}

#[test]
fn a_complete_event_on_a_stdin_the_host_leaves_open_is_the_event() {
    let dir = support::scratch();
    // Generous, so that an input read to its end would be cut by it, not by the test.
    std::fs::write(
        dir.path().join("config.toml"),
        "[hook]\ninput_timeout_ms = 5000\n",
    )
    .unwrap();
    let payload = support::claude_payload("UserPromptSubmit", None);
    let mut child = support::spawnable(dir.path())
        .args(["hook", "--deadline-ms", support::PATIENT_MS])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(payload.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    // Held open until the hook has exited.
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(!err.contains("input time limit"), "{err}");
    let v: Value = serde_json::from_str(&payload).unwrap();
    let session = v["session_id"].as_str().unwrap();
    let kinds: Vec<String> = support::records(dir.path(), session)
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(kinds, ["UserPromptSubmit"], "{err}");
}

#[test]
fn an_event_cut_by_the_input_time_limit_is_told_to_the_user() {
    let dir = support::scratch();
    std::fs::write(
        dir.path().join("config.toml"),
        "[hook]\ninput_timeout_ms = 300\n",
    )
    .unwrap();
    let payload = support::claude_payload("PostToolUse", None);
    let half = &payload.as_bytes()[..payload.len() / 2];
    let mut child = support::spawnable(dir.path())
        .args(["hook", "--host", "claude", "--deadline-ms", "50"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(half).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    let reply: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("a reply for the user: {out:?}"));
    let said = reply["systemMessage"].as_str().unwrap_or_default();
    assert!(said.contains("input time limit (300 ms"), "{reply}");
    assert!(said.contains("unparsed"), "{reply}");
}

#[test]
fn an_event_lost_for_want_of_a_root_is_told_to_the_user() {
    let payload = support::claude_payload("UserPromptSubmit", None);
    for host in ["claude", "cursor", "cline"] {
        let mut c = std::process::Command::new(support::bin());
        c.args(["hook", "--host", host])
            .env_remove("HOME")
            .env_remove("SJOURNAL_HOME")
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        // A hook that gives up before reading closes the pipe: that is its answer.
        let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let reply = text(&out.stdout);
        assert!(
            reply.contains("sjournal LOST this event"),
            "{host}: {out:?}"
        );
        assert!(reply.contains("--root"), "says what to do: {reply}");
        assert!(text(&out.stderr).contains("LOST"), "{out:?}");
    }
}

#[test]
fn memory_written_after_the_reply_does_not_wait_for_a_held_scope_journal() {
    let root = support::scratch();
    let project = support::scratch();
    let start = claude(
        "SessionStart",
        Some("startup"),
        "m1",
        project.path(),
        "first",
    );
    let patient = ["--host", "claude", "--deadline-ms", "2000"];
    assert_eq!(
        hook(root.path(), &patient, &start, None).status.code(),
        Some(0)
    );
    // The project's memory journal exists now (the session's start is in it).
    let memory: Vec<PathBuf> = files_under(&root.path().join("sessions"))
        .into_iter()
        .filter(|f| f.extension().is_some_and(|x| x == "lock"))
        .filter(|f| !f.file_name().unwrap().to_string_lossy().starts_with("m1."))
        .collect();
    assert_eq!(memory.len(), 1, "the project's memory journal: {memory:?}");
    let holder = Holder::hold(&memory[0]);
    let prompt = claude("UserPromptSubmit", None, "m1", project.path(), "second");
    let out = hook(root.path(), &patient, &prompt, None);
    assert!(holder.release(), "the hook waited for the memory journal");
    assert_eq!(out.status.code(), Some(0));
    // The write was spooled to the memory journal; a flush merges it.
    let flushed = support::run(root.path(), &["flush", "--all"], b"");
    assert!(flushed.status.success(), "{flushed:?}");
    let kept = text(
        &files_under(&root.path().join("sessions"))
            .into_iter()
            .filter(|f| f.extension().is_some_and(|x| x == "sjl"))
            .flat_map(|f| std::fs::read(f).unwrap())
            .collect::<Vec<u8>>(),
    );
    assert!(
        kept.contains("run the stress suite before merging"),
        "the remembered text reached the memory journal: {}",
        text(&out.stderr)
    );
}

#[test]
fn a_fold_that_outlasts_the_deadline_rebuilds_the_snapshot_off_the_hooks_path() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let events: Vec<String> = (0..40).map(|i| support::event_json(i, 200)).collect();
    support::write_events(&root, "s", &events);
    let snap = root.session("s").unwrap().snapshot;
    assert!(!snap.exists());
    // The worker holds the session's lock (it is about to fold) when the deadline passes: the
    // watchdog takes the event over.
    let stall = Stall::new(|s| s.locked_waits_for_takeover = true);
    let opts = support::stalled(support::hook_opts(&root, Duration::from_millis(50)), &stall);
    let ev = r#"{"session_id":"s","hook_event_name":"SessionStart","source":"compact"}"#;
    let out = support::run_hook(opts, std::io::Cursor::new(ev));
    assert!(stall.saw("taken_over"), "{out:?}");
    assert!(said(&out, "rebuilding its snapshot"), "{out:?}");
    // The rebuild runs on its own; wait for what it writes.
    support::webhook::wait_until(
        Duration::from_secs(60),
        || snap.exists(),
        || format!("no snapshot was written: {:?}", out.diagnostics),
    );
    let (_, info) =
        sjournal::snapshot::load_state(&root, "s", &sjournal::snapshot::LoadOptions::latest())
            .unwrap();
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
}
