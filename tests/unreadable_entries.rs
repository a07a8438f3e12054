//! `verify --all` and `sessions` over a root that holds entries they cannot open: a symlink
//! named like a journal (never followed), a directory named `x.sjl`, a journal without read
//! permission. They used to stop at the first such entry with an error, leaving every other
//! journal unchecked. Now each is reported as a finding, the others are checked as usual,
//! and the exit code is 1.

use crate::support as common;

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn cli(root: &Path) -> Command {
    let mut c = Command::new(common::bin());
    c.arg("--root").arg(root);
    c
}

/// Sessions "a" and "z" (good) around a symlink, a directory and (when the tests do not run
/// as root, which reads anything) an unreadable journal.
fn root_with_bad_entries(dir: &Path) -> (std::path::PathBuf, usize) {
    let root = dir.join("root");
    for s in ["a", "z"] {
        cli(&root)
            .args(["append", "--session", s])
            .write_stdin(r#"{"hook_event_name":"Stop"}"#)
            .assert()
            .success();
    }
    let sessions = root.join("sessions");
    let target = dir.join("outside.sjl");
    fs::copy(sessions.join("a.sjl"), &target).unwrap();
    std::os::unix::fs::symlink(&target, sessions.join("link.sjl")).unwrap();
    fs::create_dir(sessions.join("x.sjl")).unwrap();
    let mut bad = 2;
    if !rustix::process::geteuid().is_root() {
        use std::os::unix::fs::PermissionsExt;
        let p = sessions.join("m.sjl");
        fs::copy(sessions.join("a.sjl"), &p).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
        bad += 1;
    } else {
        common::skip::part(
            "its unreadable-journal case",
            "running as root, which reads it anyway",
            "tools/test.sh as a user other than root",
        );
    }
    (root, bad)
}

#[test]
fn verify_all_reports_each_entry_and_goes_on() {
    let dir = common::scratch();
    let (root, bad) = root_with_bad_entries(dir.path());
    let out = cli(&root).args(["verify", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ok  ") && text.contains("a.sjl") && text.contains("z.sjl"),
        "{text}"
    );
    assert!(
        text.contains("link.sjl") && text.contains("symlink"),
        "{text}"
    );
    assert!(
        text.contains("x.sjl") && text.contains("not a regular file"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} journal(s) verified, {bad} with problems",
            2 + bad
        )),
        "{text}"
    );
    let out = cli(&root)
        .args(["verify", "--all", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let reports: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2 + bad);
    assert_eq!(reports.iter().filter(|r| r["ok"] == false).count(), bad);
}

#[test]
fn sessions_lists_each_entry_and_goes_on() {
    let dir = common::scratch();
    let (root, bad) = root_with_bad_entries(dir.path());
    let out = cli(&root).args(["sessions", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2 + bad);
    let good: Vec<&Value> = rows.iter().filter(|r| r["ok"] == true).collect();
    assert_eq!(good.len(), 2);
    assert!(rows
        .iter()
        .filter(|r| r["ok"] == false)
        .all(|r| r["problem"].as_str().unwrap().starts_with("cannot be read")));
    let out = cli(&root).arg("sessions").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{} session(s)", 2 + bad)));
}
