//! A `config.toml` that blocks when read must not hang the hook. A FIFO there (with no writer)
//! used to block the hook forever in `read`; a hung network mount can block even `open`. The
//! hook reads only a regular file (opened non-blocking, without following links, checked with
//! fstat); anything else is refused, and the hook answers with the defaults, says why on
//! stderr, and journals the event.

use crate::support as common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EVENT: &str = r#"{"session_id":"s","hook_event_name":"Stop"}"#;

/// Runs the hook; kills it (and fails) if it has not exited after a minute (a hang guard,
/// not a timing assertion).
fn hook(root: &Path) -> std::process::Output {
    use std::io::Write;
    let mut c = Command::new(common::bin())
        .arg("--root")
        .arg(root)
        .arg("hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(EVENT.as_bytes()).unwrap();
    let start = Instant::now();
    while c.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = c.kill();
            panic!("the hook hung on its config file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    c.wait_with_output().unwrap()
}

fn journaled(root: &Path) -> Vec<String> {
    let p = common::parse(&common::read(&root.join("sessions/s.sjl")));
    p.records
        .iter()
        .filter(|r| r.kind == "Stop")
        .map(|r| r.json())
        .collect()
}

#[test]
fn a_fifo_config_does_not_hang_the_hook() {
    let dir = common::scratch();
    let root = dir.path();
    let fifo = root.join("config.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = hook(root);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml") && err.contains("FIFO"), "{err}");
    assert_eq!(journaled(root), vec![EVENT.to_owned()]);
}

#[test]
fn a_symlinked_or_directory_config_is_refused_and_the_event_kept() {
    let dir = common::scratch();
    let root = dir.path();
    let elsewhere = root.join("elsewhere.toml");
    std::fs::write(&elsewhere, "[hook]\ndeadline_ms = 5000\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("config.toml")).unwrap();
    let out = hook(root);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("symlink"), "{err}");
    std::fs::remove_file(root.join("config.toml")).unwrap();
    std::fs::create_dir(root.join("config.toml")).unwrap();
    let out = hook(root);
    assert!(String::from_utf8_lossy(&out.stderr).contains("directory"));
    assert_eq!(journaled(root).len(), 2);
}
