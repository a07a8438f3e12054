//! A host's hook command line, as the built binary sees it. `sjournal hook` is parsed by a
//! clap-free reader before the full command line is built (`src/cli/lean.rs`); everything that
//! parser declines goes to the full CLI. A host configures one of many spellings
//! (`--root` before or after `hook`, `--host X` or `--host=X` or the host as a word,
//! `--deadline-ms`), and each must journal the event and exit 0 exactly as before; help must
//! print the hook's help, and a broken hook command line must still fail open (exit 0, a
//! diagnostic, nothing on stdout). Both binaries that run hooks are checked: `sjournal` and
//! `sjournal-hook` (the hook alone, which hands everything else to the `sjournal` beside it).

use crate::support;

use support::cmd::PATIENT_MS;

const EVENT: &str = r#"{"session_id":"cl","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_response":{}}"#;

/// The two built binaries a host may be pointed at.
fn binaries() -> [&'static str; 2] {
    [support::cmd::bin(), support::cmd::hook_bin()]
}

/// Runs the built `bin` with exactly `args` (no `--root` added) and `EVENT` on stdin.
fn run_raw(bin: &str, args: &[&str]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(bin)
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
    for bin in binaries() {
        every_spelling_journals_the_event(bin);
    }
}

fn every_spelling_journals_the_event(bin: &str) {
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
        let out = run_raw(bin, line);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{bin} {line:?}: {stderr}");
        assert!(
            out.stdout.is_empty()
                || serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok(),
            "{bin} {line:?}: stdout is the host's JSON or nothing"
        );
        let records = support::records(dir.path(), "cl");
        let events = records.iter().filter(|r| r.1 == "PostToolUse").count();
        assert_eq!(
            events,
            i + 1,
            "{bin} {line:?} journaled the event: {stderr}"
        );
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
    // `help hook` never looks like a hook invocation to the hook-only parser: the full CLI's
    // answer, which `hook --help` must equal, from either binary.
    let full = run_raw(support::cmd::bin(), &["help", "hook"]);
    let full = String::from_utf8(full.stdout).unwrap();
    for bin in binaries() {
        let help = run_raw(bin, &["hook", "--help"]);
        assert_eq!(help.status.code(), Some(0), "{bin}");
        let text = String::from_utf8(help.stdout).unwrap();
        assert!(text.contains("Always exits 0 (fail-open)"), "{text}");
        assert!(text.contains("--deadline-ms"), "{text}");
        assert!(text.contains("--root"), "{text}");
        assert_eq!(full, text, "{bin}");
    }
}

#[test]
fn a_broken_hook_command_line_still_fails_open_through_the_full_cli() {
    for bin in binaries() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        for line in [
            vec!["--root", root, "hook", "--deadline-ms"],
            vec!["--root", root, "hook", "--host"],
            vec!["hook", "--root"],
        ] {
            let out = run_raw(bin, &line);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{bin} {line:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{bin} {line:?}");
            assert!(
                stderr.contains("the command line is invalid; the event was not recorded"),
                "{bin} {line:?}: {stderr}"
            );
        }
        // And a command that is not the hook keeps its exit code 2.
        let out = run_raw(bin, &["--root", root, "log", "--bogus"]);
        assert_eq!(out.status.code(), Some(2), "{bin}");
    }
}

/// `sjournal-hook` runs a hook line itself and gives every other command line to the
/// `sjournal` beside it, which answers exactly as when run directly; its `--version` is its
/// own (the build stamp `install` compares). Fails if the handover drops the arguments,
/// stdin or the exit code.
#[test]
fn the_hook_binary_hands_every_other_command_line_to_sjournal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let out = run_raw(support::cmd::hook_bin(), &["--root", root, "hook"]);
    assert_eq!(out.status.code(), Some(0));
    for line in [
        vec!["--root", root, "log", "--session", "cl"],
        vec!["--root", root, "verify", "--session", "cl"],
        vec!["--root", root, "sessions"],
        vec!["--root", root, "log", "--session", "nobody"],
        vec!["--version"],
        vec!["--help"],
    ] {
        let full = run_raw(support::cmd::bin(), &line);
        let lean = run_raw(support::cmd::hook_bin(), &line);
        assert_eq!(lean.status.code(), full.status.code(), "{line:?}");
        if line != ["--version"] {
            assert_eq!(lean.stdout, full.stdout, "{line:?}");
            assert_eq!(lean.stderr, full.stderr, "{line:?}");
        } else {
            let own = String::from_utf8(lean.stdout).unwrap();
            assert!(own.starts_with("sjournal-hook 0."), "{own}");
            assert!(own.contains("(build "), "{own}");
        }
    }
    // `append` reads stdin: the handover keeps it.
    let out = run_raw(
        support::cmd::hook_bin(),
        &["--root", root, "append", "--session", "ap"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(support::records(dir.path(), "ap").len(), 1);
    support::cmd::verify_all(dir.path());
}

/// Alone in a directory (no `sjournal` beside it), `sjournal-hook` still journals every valid
/// hook line, those the clap-free reader declines included (extra words, `--`); anything else
/// says what is missing and exits 2, except an invalid hook line, which fails open (exit 0).
/// Named `sjournal` beside itself (a hard link), it refuses to hand a line to itself rather
/// than loop.
#[test]
fn the_hook_binary_alone_still_journals_and_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let lone = dir.path().join("sjournal-hook");
    std::fs::copy(support::cmd::hook_bin(), &lone).unwrap();
    let lone = lone.to_str().unwrap();
    let root = dir.path().join("root");
    let root = root.to_str().unwrap();
    let hook = ["--root", root, "hook", "--deadline-ms", PATIENT_MS];
    let out = run_raw(lone, &hook);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(support::records(std::path::Path::new(root), "cl").len(), 1);
    for line in [
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
            "--",
            "claude",
        ],
        vec![
            "hook",
            "--deadline-ms",
            PATIENT_MS,
            "--root",
            root,
            "--host",
            "nonsense",
        ],
    ] {
        let before = support::records(std::path::Path::new(root), "cl").len();
        let out = run_raw(lone, &line);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line:?}: {stderr}");
        let after = support::records(std::path::Path::new(root), "cl").len();
        assert_eq!(after, before + 1, "{line:?} was journaled: {stderr}");
    }
    let out = run_raw(lone, &["--root", root, "log", "--session", "cl"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("could not be started"), "{stderr}");
    assert!(
        stderr.contains("cargo install --locked --path ."),
        "{stderr}"
    );
    let out = run_raw(lone, &["--root", root, "hook", "--deadline-ms"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the event was not recorded"), "{stderr}");

    // A `sjournal` beside it that another user could have planted (the directory is
    // group-writable) is never run: here a script that would leave a mark.
    use std::os::unix::fs::PermissionsExt;
    let planted = dir.path().join("sjournal");
    let mark = dir.path().join("ran");
    std::fs::write(
        &planted,
        format!(
            "#!/bin/sh
touch '{}'
",
            mark.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o770)).unwrap();
    let out = run_raw(lone, &["--root", root, "log", "--session", "cl"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("other users can write to it"), "{stderr}");
    assert!(!mark.exists(), "the planted program ran");
    // The control: in a directory only this user writes, the same script runs.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = run_raw(lone, &["--root", root, "log", "--session", "cl"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(mark.exists(), "the control did not run");

    // The hook binary as `sjournal` beside itself: no loop, a clear refusal.
    std::fs::remove_file(&planted).unwrap();
    std::fs::hard_link(lone, &planted).unwrap();
    let out = run_raw(lone, &["--root", root, "log", "--session", "cl"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("it is this binary itself"), "{stderr}");
}

/// The hook binary links none of the search engine's or the MCP server's code, which is what
/// makes it start faster than `sjournal` (BENCHMARKS.md, "Speed mechanisms": hook binary);
/// `sjournal` itself, the control, does link them (with the `search` feature).
#[test]
fn the_hook_binary_links_no_search_or_mcp_code() {
    let symbols = |bin: &str| -> String {
        let out = std::process::Command::new("nm")
            .arg("--demangle")
            .arg(bin)
            .output()
            .expect("`nm` (binutils, which links the binaries) lists the symbols");
        assert!(out.status.success(), "nm {bin}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let lean = symbols(support::cmd::hook_bin());
    // nm read the symbols (the binary is not stripped): the hook's own code is there.
    assert!(lean.contains("sjournal::hook::"), "no symbols read");
    for engine in ["tantivy::", "rmcp::"] {
        let n = lean.lines().filter(|l| l.contains(engine)).count();
        assert_eq!(n, 0, "sjournal-hook links {n} symbols of {engine}");
    }
    let full = symbols(support::cmd::bin());
    if cfg!(feature = "search") {
        assert!(
            full.contains("tantivy::"),
            "the control: sjournal links tantivy"
        );
        assert!(full.contains("rmcp::"), "the control: sjournal links rmcp");
    }
}
