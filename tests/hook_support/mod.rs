//! Helpers shared by the hook tests: running the built binary, reading a session's records.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use sjournal::format::payload;
use sjournal::journal::{JournalReader, Root};

/// `--deadline-ms` for tests that check what the hook journals rather than its deadline: long
/// enough that a loaded machine never makes the hook spool the event instead (the hook exits
/// as soon as it is done, so this costs nothing when the machine is idle).
pub const PATIENT_MS: &str = "60000";

pub fn bin() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_sjournal"))
}

/// Runs `sjournal --root ROOT <args>` with `stdin`, no CLAUDE_* variables inherited.
pub fn run(root: &Path, args: &[&str], stdin: &[u8]) -> Output {
    run_env(root, args, stdin, &[])
}

pub fn run_env(root: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("--root").arg(root).args(args);
    cmd.env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("SJOURNAL_HOME");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sjournal");
    // The hook may exit before reading everything (it fails open); a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().expect("wait for sjournal")
}

/// A session's records: (seq, kind, payload as JSON text).
pub fn records(root: &Path, session: &str) -> Vec<(u64, String, String)> {
    let paths = Root::new(root).session(session).unwrap();
    let r = JournalReader::open(&paths.journal, None).expect("open journal");
    r.records()
        .unwrap()
        .map(|rec| {
            let rec = rec.expect("valid record");
            let json = payload::to_json(rec.seq, rec.kind, rec.payload).unwrap();
            (rec.seq, rec.kind.to_owned(), json.get().to_owned())
        })
        .collect()
}

/// Raw record payload bytes of one kind.
pub fn payloads(root: &Path, session: &str, kind: &str) -> Vec<(u64, i64, Vec<u8>)> {
    let paths = Root::new(root).session(session).unwrap();
    let r = JournalReader::open(&paths.journal, None).expect("open journal");
    r.records()
        .unwrap()
        .map(|rec| rec.expect("valid record"))
        .filter(|rec| rec.kind == kind)
        .map(|rec| (rec.seq, rec.ts_unix_ns, rec.payload.to_vec()))
        .collect()
}

/// Fixture payloads: (event, payload JSON text) per line of a fixture file.
pub fn fixture(rel: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["event"].as_str().unwrap().to_owned(),
                serde_json::to_string(&v["payload"]).unwrap(),
            )
        })
        .collect()
}

pub fn verify_all(root: &Path) {
    let out = run(root, &["verify", "--all"], b"");
    assert!(
        out.status.success(),
        "verify failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
