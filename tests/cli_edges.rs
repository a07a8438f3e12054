//! The command line where a new user first trips: each case once said something untrue or did
//! something silently (a clean bill for a root that is not there, every event imported twice,
//! a second demo run appended to the first, a state "at" a seq past the end, a bare
//! "unrecognized subcommand" for a command of a feature the build lacks). Now each says what
//! is wrong and what to do, with the exit code the house rules give: 2, nothing changed.

use crate::support::{self, sjournal};

use std::path::Path;

use serde_json::Value;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn append(root: &Path, session: &str, json: &str) {
    sjournal(root)
        .args(["append", "--session", session])
        .write_stdin(json)
        .assert()
        .success();
}

/// Every record of a session as (kind, payload as text).
fn records(root: &Path, session: &str) -> Vec<(String, String)> {
    let out = sjournal(root)
        .args(["log", "--session", session, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["kind"].as_str().unwrap().to_owned(),
                v["payload"].to_string(),
            )
        })
        .collect()
}

#[test]
fn verify_all_on_a_root_that_is_not_there_is_an_error() {
    let dir = support::scratch();
    let missing = dir.path().join("no-such-root");
    let out = sjournal(&missing)
        .args(["verify", "--all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("there is no journal root at")
            && stderr(&out).contains(&missing.display().to_string()),
        "{out:?}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(!missing.exists(), "verify created the root");
    // A root that is there but holds no journal yet is fine: nothing wrong was found.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = sjournal(&empty).args(["verify", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// An export imported again — into the session it came from, or into the session it was
/// already imported into — adds nothing; an export that grew adds only its new records.
#[test]
fn importing_an_export_twice_adds_each_record_once() {
    let dir = support::scratch();
    let r = dir.path();
    append(
        r,
        "s",
        r#"{"hook_event_name":"SessionStart","source":"startup"}"#,
    );
    append(r, "s", r#"{"hook_event_name":"Stop"}"#);
    let export = |session: &str| {
        let out = sjournal(r)
            .args(["export", "--session", session])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let import = |session: &str, input: Vec<u8>| {
        let out = sjournal(r)
            .args(["import", "--session", session, "--json", "-"])
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let first = export("s");

    // Into its own session: everything is already there.
    let v = import("s", first.clone());
    assert_eq!(
        (v["appended"].as_u64(), v["already_present"].as_u64()),
        (Some(0), Some(2)),
        "{v}"
    );
    assert_eq!(records(r, "s").len(), 2);

    // Into another session, twice: once.
    let v = import("t", first.clone());
    assert_eq!(
        (v["appended"].as_u64(), v["already_present"].as_u64()),
        (Some(2), Some(0)),
        "{v}"
    );
    let v = import("t", first.clone());
    assert_eq!(
        (v["appended"].as_u64(), v["already_present"].as_u64()),
        (Some(0), Some(2)),
        "{v}"
    );
    assert_eq!(records(r, "t"), records(r, "s"));

    // The source session goes on; its new export adds only the new record.
    append(
        r,
        "s",
        r#"{"hook_event_name":"SessionEnd","reason":"logout"}"#,
    );
    let v = import("t", export("s"));
    assert_eq!(
        (v["appended"].as_u64(), v["already_present"].as_u64()),
        (Some(1), Some(2)),
        "{v}"
    );
    assert_eq!(records(r, "t"), records(r, "s"));

    // The human summary says so too.
    let out = sjournal(r)
        .args(["import", "--session", "t", "-"])
        .write_stdin(export("s"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("3 record(s) already in session \"t\""),
        "{out:?}"
    );
}

/// Plain events have no identity: a file whose every event the session already holds, in
/// order, is refused as a repeat (nothing appended) unless --allow-duplicates says otherwise.
#[test]
fn importing_the_same_plain_events_again_is_refused() {
    let dir = support::scratch();
    let r = dir.path();
    let file = r.join("log.jsonl");
    std::fs::write(
        &file,
        "{\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"one\"}\n\
         {\"hook_event_name\":\"Stop\"}\n",
    )
    .unwrap();
    let import = |extra: &[&str]| {
        sjournal(r)
            .args(["import", "--session", "p"])
            .args(extra)
            .arg(&file)
            .output()
            .unwrap()
    };
    assert_eq!(import(&[]).status.code(), Some(0));
    let again = import(&[]);
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    assert!(
        stderr(&again).contains("already holds every event")
            && stderr(&again).contains("--allow-duplicates"),
        "{again:?}"
    );
    assert_eq!(records(r, "p").len(), 2, "nothing appended");
    let forced = import(&["--allow-duplicates"]);
    assert_eq!(forced.status.code(), Some(0), "{forced:?}");
    assert_eq!(records(r, "p").len(), 4);
}

#[test]
fn demo_keep_refuses_a_directory_that_is_not_empty() {
    let dir = support::scratch();
    let kept = dir.path().join("demo");
    std::fs::create_dir(&kept).unwrap();
    std::fs::write(kept.join("notes.txt"), "mine").unwrap();
    let out = support::run(dir.path(), &["demo", "--keep", kept.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("not empty"), "{out:?}");
    let entries: Vec<_> = std::fs::read_dir(&kept).unwrap().collect();
    assert_eq!(entries.len(), 1, "the demo wrote into it");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = support::run(dir.path(), &["demo", "--keep", file.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("not a directory"), "{out:?}");
}

#[test]
fn state_at_a_seq_past_the_end_names_the_last_one() {
    let dir = support::scratch();
    let r = dir.path();
    append(r, "s", r#"{"hook_event_name":"SessionStart"}"#);
    append(r, "s", r#"{"hook_event_name":"Stop"}"#);
    let out = sjournal(r)
        .args(["state", "--session", "s", "--at", "999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("--at 999 is past the end") && stderr(&out).contains("seq 2"),
        "{out:?}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    for at in ["0", "1", "2"] {
        sjournal(r)
            .args(["state", "--session", "s", "--at", at])
            .assert()
            .success();
    }
}

/// A build without the `remote` feature knows what `ship`, `fetch` and `index` are, and says
/// how to get them.
#[cfg(not(feature = "remote"))]
#[test]
fn remote_commands_in_a_default_build_say_which_feature_they_need() {
    let dir = support::scratch();
    for args in [
        &["ship", "--all"][..],
        &["fetch", "file:///x", "--into", "y"],
        &["index", "--from", "file:///x", "--pg", "postgres://"],
    ] {
        let out = support::run(dir.path(), args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "`{}` is a command of the `remote` feature",
                args[0]
            )) && err.contains("cargo install --locked --path . --features remote"),
            "{args:?}: {err}"
        );
    }
    let help = support::run(dir.path(), &["--help"], b"");
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("--features remote"),
        "{help:?}"
    );
    // A mistyped command is still clap's own error.
    let out = support::run(dir.path(), &["shipp"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unrecognized subcommand"), "{out:?}");
}
