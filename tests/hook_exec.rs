//! Exec handlers from `<root>/config.toml`, through the built binary: for a matching event
//! each handler runs with the event JSON on stdin, concurrently, and its result is journaled
//! as a `sjournal.exec` record right after the event (same batch), pointing at the event's
//! seq: stdout of a good handler, the exit code of a failing one, `timeout` for one that runs
//! past its timeout (killed with what it started), `spawn-failed` for a missing program.
//! The hook exits 0 whatever the handlers do; failures are reported on stderr. No timing is
//! asserted.

use crate::support;

use sjournal::format::payload::{self, Exec, ExecContext, ExecOutcome, KIND_EXEC};

const CONFIG: &str = r#"
[hook]
deadline_ms = 4000

[[exec]]
name = "echo-stdin"
events = ["UserPromptSubmit"]
command = ["cat"]
timeout_ms = 1500
context = "ephemeral"

[[exec]]
name = "branch"
events = ["*"]
command = ["sh", "-c", "echo main; echo note >&2"]
timeout_ms = 1500
context = "persistent"

[[exec]]
name = "fails"
events = ["UserPromptSubmit"]
command = ["sh", "-c", "echo bad >&2; exit 3"]
timeout_ms = 1500

[[exec]]
name = "slow"
events = ["UserPromptSubmit"]
command = ["sh", "-c", "sleep 30 & sleep 30"]
timeout_ms = 100

[[exec]]
name = "missing"
events = ["UserPromptSubmit"]
command = ["/nonexistent/handler"]

[[exec]]
name = "other-event"
events = ["Stop"]
command = ["echo", "never"]
"#;

#[test]
fn handlers_run_and_are_journaled_with_their_event() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), CONFIG).unwrap();
    let raw = r#"{"session_id":"x","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#;
    let out = support::run(dir.path(), &["hook"], raw.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // The handlers' output is folded into the context injected for this very event.
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");
    let ctx = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(
        ctx.contains("[exec:branch] main"),
        "persistent handler output: {ctx}"
    );
    assert!(
        ctx.contains("exec:echo-stdin"),
        "ephemeral handler output: {ctx}"
    );
    assert!(
        !ctx.contains("bad"),
        "a failed handler's output is not injected: {ctx}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    for name in ["fails", "slow", "missing"] {
        assert!(stderr.contains(&format!("{name:?} failed")), "{stderr}");
    }

    let recs = support::records(dir.path(), "x");
    let kinds: Vec<&str> = recs.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "UserPromptSubmit",
            KIND_EXEC,
            KIND_EXEC,
            KIND_EXEC,
            KIND_EXEC,
            KIND_EXEC,
            payload::KIND_INJECTED
        ]
    );
    let execs: Vec<Exec> = support::payloads(dir.path(), "x", KIND_EXEC)
        .into_iter()
        .map(|(seq, _, p)| payload::decode_system(seq, &p).unwrap())
        .collect();
    let by = |n: &str| {
        execs
            .iter()
            .find(|e| e.name == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    assert!(execs.iter().all(|e| e.event_seq == 1));
    assert!(by("echo-stdin").succeeded());
    assert_eq!(
        by("echo-stdin").stdout,
        raw,
        "the handler got the event JSON on stdin"
    );
    assert_eq!(by("echo-stdin").context, ExecContext::Ephemeral);
    assert_eq!(by("branch").stdout, "main\n");
    assert_eq!(by("branch").stderr, "note\n");
    assert_eq!(by("branch").context, ExecContext::Persistent);
    assert_eq!(
        (by("fails").outcome, by("fails").exit_code),
        (ExecOutcome::Exited, Some(3))
    );
    assert_eq!(by("slow").outcome, ExecOutcome::Timeout);
    assert_eq!(by("missing").outcome, ExecOutcome::SpawnFailed);
    assert!(execs.iter().all(|e| e.name != "other-event"));
    support::verify_all(dir.path());
}

/// A broken configuration is reported on stderr and the event is still journaled.
#[test]
fn broken_configuration_fails_open() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[hook]\ndeadline = 'x'\n").unwrap();
    let out = support::run(
        dir.path(),
        &["hook", "--deadline-ms", support::PATIENT_MS],
        br#"{"session_id":"x","hook_event_name":"Stop"}"#,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("config.toml"),
        "{out:?}"
    );
    assert_eq!(support::records(dir.path(), "x").len(), 1);
}
