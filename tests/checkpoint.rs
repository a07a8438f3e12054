//! Checkpoints for auditors: a checkpoint taken now and stored elsewhere must keep
//! verifying while the journal grows, and must stop verifying when the journal is cut
//! below it (even at a record boundary, where the journal alone still verifies) or rewritten
//! (a journal recreated with other records, which also verifies on its own). Signed
//! checkpoints verify with the right public key and are rejected when the text was edited,
//! the signature damaged, or the key is another one.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;
use support::*;

fn append_n(root: &Path, session: &str, from: usize, to: usize) {
    for i in from..to {
        sjournal(root)
            .args(["append", "--session", session])
            .write_stdin(format!(r#"{{"hook_event_name":"PostToolUse","i":{i}}}"#))
            .assert()
            .success();
    }
}

/// Writes the session's checkpoint to `file`, signed with `key` if given.
fn checkpoint(root: &Path, session: &str, key: Option<&Path>, file: &Path) -> String {
    let mut c = sjournal(root);
    c.args(["checkpoint", "--session", session]);
    if let Some(k) = key {
        c.arg("--sign").arg(k);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(file, &out.stdout).unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `verify --checkpoint` and returns (exit code, the checkpoint's JSON line).
fn verify(root: &Path, session: &str, cp: &Path, pubkey: Option<&Path>) -> (i32, Value) {
    let mut c = sjournal(root);
    c.args(["verify", "--json", "--session", session, "--checkpoint"])
        .arg(cp);
    if let Some(k) = pubkey {
        c.arg("--pubkey").arg(k);
    }
    let out = c.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last = stdout
        .lines()
        .last()
        .unwrap_or_else(|| panic!("no output; stderr {}", String::from_utf8_lossy(&out.stderr)));
    (
        out.status.code().unwrap(),
        serde_json::from_str(last).unwrap(),
    )
}

/// Offset just past record `seq`, from `log --json`.
fn end_of(root: &Path, session: &str, seq: u64) -> u64 {
    let out = sjournal(root)
        .args(["log", "--json", "--session", session])
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[seq as usize]["offset"].as_u64().unwrap()
}

#[test]
fn checkpoint_text_is_a_tlog_checkpoint() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append_n(r, "s1", 0, 3);
    let text = checkpoint(r, "s1", None, &r.join("cp"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], "sjournal/s1");
    assert_eq!(lines[1], "3");
    // The hash is the head verify reports, in base64.
    let v: Value = serde_json::from_slice(
        &sjournal(r)
            .args(["verify", "--json", "--session", "s1"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    use base64::Engine;
    let b = base64::engine::general_purpose::STANDARD
        .decode(lines[2])
        .unwrap();
    assert_eq!(
        sjournal::format::Hash(b.try_into().unwrap()).to_hex(),
        v["head"]
    );
}

#[test]
fn growing_journal_still_extends_its_checkpoint() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append_n(r, "s", 0, 5);
    let cp = r.join("cp.txt");
    checkpoint(r, "s", None, &cp);
    let (code, v) = verify(r, "s", &cp, None);
    assert_eq!((code, v["extends"].as_bool()), (0, Some(true)), "{v}");
    append_n(r, "s", 5, 8);
    let (code, v) = verify(r, "s", &cp, None);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["journal_records"], 8);
    assert_eq!(v["size"], 5);
}

#[test]
fn truncation_at_a_record_boundary_is_caught() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append_n(r, "s", 0, 6);
    let cp = r.join("cp.txt");
    checkpoint(r, "s", None, &cp);
    let cut = end_of(r, "s", 3);
    let path = r.join("sessions/s.sjl");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(cut)
        .unwrap();
    // The chain of the shortened journal is intact, but its high-water mark says seq 6 was
    // acknowledged...
    let out = sjournal(r)
        .args(["verify", "--session", "s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("rolled back: seq 6 (hash "),
        "{out:?}"
    );
    // ...and even with the mark gone, it no longer extends the checkpoint.
    std::fs::remove_file(r.join("sessions/s.hwm")).unwrap();
    let (code, v) = verify(r, "s", &cp, None);
    assert_eq!(code, 1);
    assert_eq!(v["extends"], false);
    assert!(v["problem"].as_str().unwrap().contains("TRUNCATED"), "{v}");
    let text = sjournal(r)
        .args(["verify", "--session", "s", "--checkpoint"])
        .arg(&cp)
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&text.stdout).contains("BAD checkpoint"));
}

#[test]
fn rewritten_journal_is_caught() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append_n(r, "s", 0, 4);
    let cp = r.join("cp.txt");
    checkpoint(r, "s", None, &cp);
    // Recreate the journal with other (more) records: it verifies on its own.
    // (Its high-water mark would refuse the new journal: whoever rewrites it removes that too.)
    std::fs::remove_file(r.join("sessions/s.sjl")).unwrap();
    std::fs::remove_file(r.join("sessions/s.lock")).unwrap();
    std::fs::remove_file(r.join("sessions/s.hwm")).unwrap();
    append_n(r, "s", 100, 106);
    sjournal(r)
        .args(["verify", "--session", "s"])
        .assert()
        .success();
    let (code, v) = verify(r, "s", &cp, None);
    assert_eq!(code, 1);
    assert!(v["problem"].as_str().unwrap().contains("REWRITTEN"), "{v}");
    // A checkpoint of another session does not verify this one.
    append_n(r, "other", 0, 4);
    let other = r.join("other.txt");
    checkpoint(r, "other", None, &other);
    let (code, v) = verify(r, "s", &other, None);
    assert_eq!(code, 1);
    assert!(
        v["problem"].as_str().unwrap().contains("sjournal/other"),
        "{v}"
    );
}

#[test]
fn signed_checkpoints_and_bad_signatures() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let key = r.join("auditor.key");
    sjournal(r)
        .args(["checkpoint", "keygen", "--name", "auditor"])
        .arg(&key)
        .assert()
        .success();
    let pubkey = r.join("auditor.key.pub");
    for k in [&key, &pubkey] {
        let mode = std::fs::metadata(k).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", k.display());
    }
    // Never overwrites a key.
    let before = std::fs::read(&key).unwrap();
    sjournal(r)
        .args(["checkpoint", "keygen"])
        .arg(&key)
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&key).unwrap(), before);

    append_n(r, "s", 0, 3);
    let cp = r.join("cp.txt");
    let text = checkpoint(r, "s", Some(&key), &cp);
    assert!(text.contains("\n\n\u{2014} auditor "), "{text}");
    let (code, v) = verify(r, "s", &cp, Some(&pubkey));
    assert_eq!((code, &v["signature"]), (0, &Value::from("valid")), "{v}");

    // The text edited (and a matching journal made for it would not help): invalid.
    let forged = r.join("forged.txt");
    std::fs::write(&forged, text.replacen("\n3\n", "\n2\n", 1)).unwrap();
    let (code, v) = verify(r, "s", &forged, Some(&pubkey));
    assert_eq!(code, 1);
    assert_eq!(v["signature"], "invalid", "{v}");

    // The signature itself damaged: invalid.
    let (body, sig) = text.split_once("\u{2014} auditor ").unwrap();
    let mut sig_bytes = sig.trim_end().to_owned().into_bytes();
    sig_bytes[10] = if sig_bytes[10] == b'A' { b'B' } else { b'A' };
    let damaged = r.join("damaged.txt");
    std::fs::write(
        &damaged,
        format!(
            "{body}\u{2014} auditor {}\n",
            String::from_utf8(sig_bytes).unwrap()
        ),
    )
    .unwrap();
    let (code, v) = verify(r, "s", &damaged, Some(&pubkey));
    assert_eq!((code, &v["signature"]), (1, &Value::from("invalid")), "{v}");

    // Another key: no signature by it.
    let other = r.join("other.key");
    sjournal(r)
        .args(["checkpoint", "keygen", "--name", "auditor"])
        .arg(&other)
        .assert()
        .success();
    let (code, v) = verify(r, "s", &cp, Some(&r.join("other.key.pub")));
    assert_eq!((code, &v["signature"]), (1, &Value::from("missing")), "{v}");
    // An unsigned checkpoint when a key is required: missing.
    let unsigned = r.join("unsigned.txt");
    checkpoint(r, "s", None, &unsigned);
    let (code, v) = verify(r, "s", &unsigned, Some(&pubkey));
    assert_eq!((code, &v["signature"]), (1, &Value::from("missing")), "{v}");

    // The private key passed as the public one is a usage error.
    let out = sjournal(r)
        .args(["verify", "--session", "s", "--checkpoint"])
        .arg(&cp)
        .arg("--pubkey")
        .arg(&key)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("private"), "{stderr}");
    assert!(
        stderr.contains(&format!("key file {}", key.display())),
        "{stderr}"
    );
}

#[test]
fn damaged_journal_gets_no_checkpoint_and_garbage_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append_n(r, "s", 0, 3);
    let path = r.join("sessions/s.sjl");
    let mut b = std::fs::read(&path).unwrap();
    let at = end_of(r, "s", 1) as usize + 30;
    b[at] ^= 1;
    std::fs::write(&path, b).unwrap();
    let out = sjournal(r)
        .args(["checkpoint", "--session", "s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no checkpoint made"));

    let junk = r.join("junk.txt");
    std::fs::write(&junk, "sjournal/s\nnot a number\nxx\n").unwrap();
    let out = sjournal(r)
        .args(["verify", "--session", "s", "--checkpoint"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("record count"), "{stderr}");
    assert!(
        stderr.contains(&format!("checkpoint {}", junk.display())),
        "{stderr}"
    );
}

/// `verify --checkpoint` is one library call (`audit::checkpoint::verify`) and one line: the
/// report the library returns is the line the command prints, for a checkpoint the journal
/// extends and for one it no longer does.
#[test]
fn the_checkpoint_check_is_a_library_call_and_the_cli_prints_its_report() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    let cp = d.path().join("cp.txt");
    append_n(&root, "s", 0, 3);
    checkpoint(&root, "s", None, &cp);
    append_n(&root, "s", 3, 5);
    let lib = sjournal::journal::Root::new(&root);
    let report = sjournal::audit::checkpoint::verify(&lib, "s", &cp, None).unwrap();
    assert!(report.ok && report.size == 3);
    let (code, line) = verify(&root, "s", &cp, None);
    assert_eq!(code, 0);
    assert_eq!(line, serde_json::to_value(&report).unwrap());

    // Rewritten below the checkpoint: the same journal name with other records.
    std::fs::remove_dir_all(&root).unwrap();
    append_n(&root, "s", 10, 14);
    let report = sjournal::audit::checkpoint::verify(&lib, "s", &cp, None).unwrap();
    assert!(!report.ok);
    let (code, line) = verify(&root, "s", &cp, None);
    assert_eq!(code, 1);
    assert_eq!(line, serde_json::to_value(&report).unwrap());

    // A checkpoint file that does not parse is an error naming it, before any journal is read.
    std::fs::write(&cp, "not a checkpoint\n").unwrap();
    let e = sjournal::audit::checkpoint::verify(&lib, "s", &cp, None).unwrap_err();
    assert!(e.to_string().contains("cp.txt"), "{e}");
    // The auditor's own error family: a file that is not a checkpoint is its variant, naming
    // the file; what the library fails with (here, no such session) converts into it whole.
    use sjournal::audit::checkpoint::Error;
    assert!(
        matches!(&e, Error::Checkpoint { path, .. } if *path == cp),
        "{e:?}"
    );
    checkpoint(&root, "s", None, &cp);
    let e = sjournal::audit::checkpoint::verify(&lib, "nobody", &cp, None).unwrap_err();
    assert!(
        matches!(&e, Error::Journal(sjournal::Error::NoSuchSession { .. })),
        "{e:?}"
    );
}
