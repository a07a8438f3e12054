//! The hook fails open and still loses nothing. Through the built binary: malformed or empty
//! stdin exits 0 with nothing on stdout and is kept as a `sjournal.unparsed` record (in the
//! session named by the bytes, the environment, or the catch-all session); with the
//! session's lock held by another process the hook exits 0 (no timing is asserted), the event
//! is spooled, and once the lock is released the next append puts it in the journal, before
//! its own event. Through the library: a worker held under the session's lock past the
//! deadline makes the watchdog spool the event, and the worker, finishing late, does not write
//! it a second time.

use crate::support;

use std::time::Duration;

use sjournal::format::payload::{self, Unparsed, KIND_UNPARSED};
use sjournal::hook::route::UNATTRIBUTED_SESSION;
use sjournal::journal::{spool, Root, Writer, WriterOptions};
use sjournal::session::{Landed, Session};
use support::Stall;

fn unparsed(root: &std::path::Path, session: &str) -> Vec<Unparsed> {
    support::payloads(root, session, KIND_UNPARSED)
        .into_iter()
        .map(|(seq, _, p)| payload::decode_system(seq, &p).unwrap())
        .collect()
}

#[test]
fn malformed_stdin_is_kept_raw() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let bad = b"{\"session_id\": \"abc-1\", \"hook_event_name\": \"Stop\", oops \xff";
    let hook = ["hook", "--deadline-ms", support::PATIENT_MS];
    let out = support::run(root, &hook, bad);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    let u = unparsed(root, "abc-1");
    assert_eq!(u.len(), 1, "the session id was salvaged from the bytes");
    assert_eq!(u[0].raw, bad);

    // No session in the bytes: the host's environment names it, else the catch-all session.
    let out = support::run_env(
        root,
        &hook,
        b"not json",
        &[("CLAUDE_CODE_SESSION_ID", "env-sess")],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(unparsed(root, "env-sess")[0].raw, b"not json");
    for input in [&b""[..], b"[1, 2"] {
        let out = support::run(root, &hook, input);
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty());
    }
    let raws: Vec<Vec<u8>> = unparsed(root, UNATTRIBUTED_SESSION)
        .into_iter()
        .map(|u| u.raw)
        .collect();
    assert_eq!(raws, [b"".to_vec(), b"[1, 2".to_vec()]);
    support::verify_all(root);
}

/// Cline expects a JSON answer even when the hook fails: it gets `{"cancel":false}`.
#[test]
fn cline_gets_a_complete_answer_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = support::run(dir.path(), &["hook", "--host", "cline"], b"{{{");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"{\"cancel\":false}\n");
}

#[test]
fn held_lock_spools_then_merges_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let holder = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    let ev = |n: u32| format!(r#"{{"session_id":"s","hook_event_name":"PostToolUse","n":{n}}}"#);
    for n in 1..=2 {
        let out = support::run(
            dir.path(),
            &["hook", "--deadline-ms", "150"],
            ev(n).as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(out.stdout.is_empty());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("spooled"),
            "{out:?}"
        );
    }
    assert_eq!(spool::pending(&root, "s").unwrap().len(), 2);
    drop(holder);
    // Another append, through the CLI: it merges the spool first.
    let out = support::run(dir.path(), &["append", "--session", "s"], ev(3).as_bytes());
    assert!(out.status.success(), "{out:?}");
    let ns: Vec<u64> = support::records(dir.path(), "s")
        .into_iter()
        .filter(|r| r.1 == "PostToolUse")
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r.2).unwrap()["n"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(ns, [1, 2, 3]);
    assert!(spool::pending(&root, "s").unwrap().is_empty());
    support::verify_all(dir.path());
}

#[test]
fn watchdog_takes_over_a_slow_worker_without_duplicating() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    // The worker holds the session's lock until the watchdog has taken the event over.
    let stall = Stall::new(|s| s.locked_waits_for_takeover = true);
    let opts = support::stalled(
        support::hook_opts(&root, Duration::from_millis(100)),
        &stall,
    );
    let input = br#"{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}"#;
    let out = support::run_hook(opts, std::io::Cursor::new(input.to_vec()));
    assert!(out.timed_out);
    assert_eq!(
        out.stdout, None,
        "no context was committed, none is printed"
    );
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{:?}",
        out.landed
    );
    // The worker finds the event taken over and writes nothing. It holds the session's lock
    // until then, so this open waits for it, then merges the spool.
    drop(Session::open(&root, "s", &WriterOptions::default()).unwrap());
    let kinds: Vec<String> = support::records(dir.path(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(kinds, ["sjournal.spool-merge", "SessionStart"]);
}

/// A host that stops reading the hook's stderr (its end of the pipe closed) still gets exit 0
/// and the event kept: a warning that cannot be written is dropped, not a panic (exit 101).
#[test]
fn a_closed_stderr_pipe_does_not_turn_a_warning_into_a_failure() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut child = support::spawnable(dir.path())
        .arg("hook")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before the hook reads its input, so before it has anything to warn about.
    drop(child.stderr.take());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{not json").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
    assert_eq!(unparsed(dir.path(), UNATTRIBUTED_SESSION).len(), 1);
}

/// A host that starts the hook with stdout and stderr closed: the first files the hook opened
/// would take descriptors 1 and 2, and a reply or a warning would be written into them (the
/// session's lock file, the journal itself). The process opens `/dev/null` on closed standard
/// descriptors before anything else: the hook, blocked reading its stdin (a FIFO the test
/// holds open), already has 1 and 2 on `/dev/null`. Then it takes its event, exits 0, and
/// the journal verifies. (The Rust runtime's start-up did this; the binary's own entry point,
/// `start::main`, does it now. The test fails with that step taken out: checked.)
#[test]
fn a_hook_started_with_stdout_and_stderr_closed_has_them_on_dev_null() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let fifo = dir.path().join("stdin");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // `exec` with `>&- 2>&-`: the hook starts with descriptors 1 and 2 closed.
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"exec "$0" --root "$1" hook --deadline-ms "$2" <"$3" >&- 2>&-"#)
        .arg(support::bin())
        .arg(&root)
        .arg(support::PATIENT_MS)
        .arg(&fifo)
        .env_remove("SJOURNAL_HOME")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .spawn()
        .unwrap();
    // Opening the FIFO for writing waits for the shell to open it for reading.
    let mut stdin = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let fd = |n: u32| std::fs::read_link(format!("/proc/{}/fd/{n}", child.id()));
    let exe = || std::fs::read_link(format!("/proc/{}/exe", child.id()));
    // Until the shell has become the hook, and the hook has set up its descriptors (without
    // that step, they never appear while the hook waits for its input).
    let waited = std::time::Instant::now();
    while !(exe().is_ok_and(|e| e.ends_with("sjournal")) && fd(1).is_ok() && fd(2).is_ok()) {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the hook never opened descriptors 1 and 2 (exe {:?}, 1: {:?}, 2: {:?})",
            exe(),
            fd(1),
            fd(2)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(fd(1).unwrap(), std::path::Path::new("/dev/null"));
    assert_eq!(fd(2).unwrap(), std::path::Path::new("/dev/null"));
    stdin
        .write_all(br#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hello","cwd":"/tmp","transcript_path":"/tmp/x"}"#)
        .unwrap();
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    support::verify_all(&root);
    assert_eq!(support::payloads(&root, "s1", "UserPromptSubmit").len(), 1);
}
