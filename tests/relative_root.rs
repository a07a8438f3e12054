//! A relative `--root` (or `$SJOURNAL_HOME`) is resolved once, against the directory sjournal
//! was started in. The first event of a new relative root used to fail creating it (the
//! parent of `rel` is "", which cannot be opened to sync it), so the hook spooled its event
//! and `append` failed. Now the first event is journaled like any other.

use crate::support as common;

use assert_cmd::Command;

const EVENT: &str = r#"{"session_id":"s","hook_event_name":"Stop"}"#;

fn journaled(dir: &std::path::Path) -> Vec<String> {
    let p = common::parse(&common::read(&dir.join("rel/sessions/s.sjl")));
    p.records.iter().map(|r| r.json()).collect()
}

#[test]
fn the_first_hook_event_of_a_new_relative_root_is_journaled() {
    let dir = common::scratch();
    let out = Command::new(common::bin())
        .current_dir(dir.path())
        .args(["--root", "rel", "hook"])
        .write_stdin(EVENT)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(journaled(dir.path()), vec![EVENT.to_owned()]);
    assert!(
        !dir.path().join("rel/sessions/s.spool").exists(),
        "the event was spooled"
    );
}

#[test]
fn append_and_a_relative_sjournal_home_work_too() {
    let dir = common::scratch();
    let out = Command::new(common::bin())
        .current_dir(dir.path())
        .env("SJOURNAL_HOME", "rel")
        .args(["append", "--session", "s"])
        .write_stdin(EVENT)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = Command::new(common::bin())
        .current_dir(dir.path())
        .args(["--root", "./rel/../rel", "verify", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(journaled(dir.path()), vec![EVENT.to_owned()]);
}
