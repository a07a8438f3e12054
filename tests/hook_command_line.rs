//! A host's hook command line, as the built binary sees it. `sjournal hook` is parsed by a
//! clap-free reader before the full command line is built (`src/cli/lean.rs`); everything that
//! parser declines goes to the full CLI. A host configures one of many spellings
//! (`--root` before or after `hook`, `--host X` or `--host=X` or the host as a word,
//! `--deadline-ms`), and each must journal the event and exit 0 exactly as before; help must
//! print the hook's help, and a broken hook command line must still fail open (exit 0, a
//! diagnostic, nothing on stdout).

use crate::support;

use support::cmd::PATIENT_MS;

const EVENT: &str = r#"{"session_id":"cl","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_response":{}}"#;

/// Runs the built binary with exactly `args` (no `--root` added) and `EVENT` on stdin.
fn run_raw(args: &[&str]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(support::cmd::bin())
        .args(args)
        .env_remove("SJOURNAL_HOME")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sjournal");
    // The hook may exit before reading it all (it fails open); a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(EVENT.as_bytes());
    child.wait_with_output().expect("run sjournal")
}

#[test]
fn every_spelling_of_the_hook_command_line_journals_the_event_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let root_eq = format!("--root={root}");
    let lines: Vec<Vec<&str>> = vec![
        vec!["--root", root, "hook", "--deadline-ms", PATIENT_MS],
        vec![&root_eq, "hook", "--deadline-ms", PATIENT_MS],
        vec!["hook", "--root", root, "--deadline-ms", PATIENT_MS],
        vec!["hook", "--deadline-ms", PATIENT_MS, &root_eq],
        vec![
            "--root",
            root,
            "hook",
            "--host",
            "claude",
            "--deadline-ms",
            PATIENT_MS,
        ],
        vec![
            "--root",
            root,
            "hook",
            "--host=claude",
            "--deadline-ms=60000",
        ],
        vec![
            "--root",
            root,
            "hook",
            "--deadline-ms",
            PATIENT_MS,
            "claude",
        ],
        vec![
            "--root",
            root,
            "hook",
            "--deadline-ms",
            PATIENT_MS,
            "claude",
            "extra",
        ],
        vec![
            "--root",
            root,
            "hook",
            "--deadline-ms",
            PATIENT_MS,
            "--host",
            "nonsense",
        ],
    ];
    for (i, line) in lines.iter().enumerate() {
        let out = run_raw(line);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line:?}: {stderr}");
        assert!(
            out.stdout.is_empty()
                || serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok(),
            "{line:?}: stdout is the host's JSON or nothing"
        );
        let records = support::records(dir.path(), "cl");
        let events = records.iter().filter(|r| r.1 == "PostToolUse").count();
        assert_eq!(events, i + 1, "{line:?} journaled the event: {stderr}");
        if line.contains(&"extra") {
            assert!(stderr.contains("ignoring unknown arguments"), "{stderr}");
        }
        if line.contains(&"nonsense") {
            assert!(
                stderr.contains("detecting the host from the payload"),
                "{stderr}"
            );
        }
    }
    support::cmd::verify_all(dir.path());
}

#[test]
fn hook_help_is_the_full_clis_help_for_the_hook() {
    let help = run_raw(&["hook", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(text.contains("Always exits 0 (fail-open)"), "{text}");
    assert!(text.contains("--deadline-ms"), "{text}");
    assert!(text.contains("--root"), "{text}");
    // `help hook` never looks like a hook invocation to the hook-only parser: the full CLI's
    // answer, which `hook --help` must equal.
    let full = run_raw(&["help", "hook"]);
    assert_eq!(String::from_utf8(full.stdout).unwrap(), text);
}

#[test]
fn a_broken_hook_command_line_still_fails_open_through_the_full_cli() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for line in [
        vec!["--root", root, "hook", "--deadline-ms"],
        vec!["--root", root, "hook", "--host"],
        vec!["hook", "--root"],
    ] {
        let out = run_raw(&line);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{line:?}");
        assert!(
            stderr.contains("the command line is invalid; the event was not recorded"),
            "{line:?}: {stderr}"
        );
    }
    // And a command that is not the hook keeps its exit code 2.
    let out = run_raw(&["--root", root, "log", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
}
