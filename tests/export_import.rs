//! `sjournal export` and `sjournal import`: a session exported as JSON Lines and imported
//! into another session gives back the same payload bytes, including awkward ones (a
//! pretty-printed payload with line breaks, a trailing newline, key order and number
//! spelling jq would change, non-ASCII text). Plain JSONL from a jq-based log imports one
//! event per line with its kind from `hook_event_name`. A bad line anywhere is an error
//! naming its line number, and nothing is appended. System records (context, primitives,
//! injections, recoveries) travel with their exact bytes: a session exported and imported
//! into a new session folds to the same state hash (checked over every fixture journal); into
//! a session that already has records they are skipped.

use crate::support;

use serde_json::Value;
use sjournal::format::payload::decode_event;
use sjournal::journal::JournalReader;
use support::*;

/// The (kind, exact payload text) of every event record of a session.
fn payloads(root: &std::path::Path, session: &str) -> Vec<(String, String)> {
    let r = JournalReader::open(&root.join(format!("sessions/{session}.sjl")), None).unwrap();
    r.records()
        .unwrap()
        .map(|rec| {
            let rec = rec.unwrap();
            (
                rec.kind.to_owned(),
                decode_event(rec.seq, rec.payload).unwrap().to_owned(),
            )
        })
        .collect()
}

fn export(root: &std::path::Path, session: &str) -> String {
    let out = sjournal(root)
        .args(["export", "--session", session])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn append(root: &std::path::Path, session: &str, stdin: &str) {
    sjournal(root)
        .args(["append", "--session", session])
        .write_stdin(stdin.to_owned())
        .assert()
        .success();
}

const AWKWARD: &[&str] = &[
    "{\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}",
    // Pretty-printed, with a trailing newline: line breaks a JSONL line cannot hold.
    "{\n  \"hook_event_name\": \"UserPromptSubmit\",\n  \"prompt\": \"fix the \\\"bug\\\"\\n now\"\n}\n",
    // Key order, number spelling and escapes that a parse-and-reprint would change.
    "{\"z\":1.50,\"a\":1e3,\"hook_event_name\":\"PostToolUse\",\"s\":\"\\u00e9t\u{e9} \u{1f600}\"}",
    "  [1, 2, {\"x\": null}]  ",
];

#[test]
fn export_then_import_roundtrips_payload_bytes() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for (kind, json) in claude_session() {
        sjournal(r)
            .args(["append", "--session", "a", "--kind", kind])
            .write_stdin(json)
            .assert()
            .success();
    }
    for p in AWKWARD {
        append(r, "a", p);
    }
    let exported = export(r, "a");
    assert_eq!(exported.lines().count(), 8 + AWKWARD.len());
    for line in exported.lines() {
        let v: Value = serde_json::from_str(line).expect("every line is JSON");
        for key in ["seq", "ts", "kind", "hash", "payload"] {
            assert!(v.get(key).is_some(), "{key} missing in {line}");
        }
    }
    // A payload without surrounding whitespace or line breaks sits in the line byte for byte.
    let first: Vec<_> = payloads(r, "a");
    assert!(exported.contains(&format!("\"payload\":{}", first[0].1)));

    let file = r.join("a.jsonl");
    std::fs::write(&file, &exported).unwrap();
    let out = sjournal(r)
        .args(["import", "--session", "b", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["appended"], 8 + AWKWARD.len());
    assert_eq!(summary["syncs"], 1, "one batch, one sync");

    assert_eq!(payloads(r, "b"), payloads(r, "a"));
    // And again through stdin, then export: the payload fields are identical.
    sjournal(r)
        .args(["import", "--session", "c", "-"])
        .write_stdin(export(r, "b"))
        .assert()
        .success();
    let field = |s: &str| -> Vec<(Value, Value, Value)> {
        s.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (v["kind"].clone(), v["payload"].clone(), v["raw"].clone())
            })
            .collect()
    };
    assert_eq!(field(&export(r, "c")), field(&exported));
    assert_eq!(payloads(r, "c"), payloads(r, "a"));
    sjournal(r)
        .args(["verify", "--session", "c"])
        .assert()
        .success();
}

#[test]
fn plain_jsonl_from_a_jq_log_imports_line_by_line() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let lines = [
        claude_payload("SessionStart", Some("startup")).replace(": ", ":"),
        claude_payload("PreToolUse", None),
        r#"{"no_event_name":true}"#.to_owned(),
    ];
    let input = format!("{}\r\n\n{}\n{}", lines[0], lines[1], lines[2]);
    let file = r.join("log.jsonl");
    std::fs::write(&file, input).unwrap();
    sjournal(r)
        .args(["import", "--session", "jq"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicates::str::contains("seq 1..=3"));
    let got = payloads(r, "jq");
    let kinds: Vec<_> = got.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["SessionStart", "PreToolUse", "event"]);
    let texts: Vec<_> = got.iter().map(|(_, t)| t.clone()).collect();
    assert_eq!(texts, lines);
}

#[test]
fn a_bad_line_appends_nothing() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append(r, "s", r#"{"hook_event_name":"SessionStart"}"#);
    let before = file_digest(&r.join("sessions/s.sjl"));
    let input = "{\"hook_event_name\":\"Stop\"}\n{\"ok\":1}\n{\"broken\": \n{\"ok\":2}\n";
    let out = sjournal(r)
        .args(["import", "--session", "s", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("nothing was appended"), "{err}");
    assert_eq!(file_digest(&r.join("sessions/s.sjl")), before);

    // An export line with a kind no record may have is refused the same way.
    let bad = r#"{"seq":1,"kind":"bad kind!","hash":"00","payload":{}}"#;
    let out = sjournal(r)
        .args(["import", "--session", "s", "-"])
        .write_stdin(format!("{{\"a\":1}}\n{bad}\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
    assert_eq!(file_digest(&r.join("sessions/s.sjl")), before);
    // And nothing was created for a session that did not exist.
    let out = sjournal(r)
        .args(["import", "--session", "new", "-"])
        .write_stdin("not json\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!r.join("sessions/new.sjl").exists());
}

#[test]
fn system_records_are_copied_into_a_new_session_only() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    append(r, "s", r#"{"hook_event_name":"SessionStart"}"#);
    // Tear the tail so the next append recovers and writes a sjournal.recovered record.
    append(
        r,
        "s",
        r#"{"hook_event_name":"Stop","pad":"xxxxxxxxxxxxxxxxxxxxxxxx"}"#,
    );
    let path = r.join("sessions/s.sjl");
    // A torn write is one that was never acknowledged: no high-water mark (nor its copy in the
    // lock file) covers it.
    std::fs::remove_file(r.join("sessions/s.hwm")).unwrap();
    std::fs::write(r.join("sessions/s.lock"), b"").unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 20)
        .unwrap();
    append(r, "s", r#"{"hook_event_name":"SessionEnd"}"#);
    let exported = export(r, "s");
    assert!(
        exported.contains("\"kind\":\"sjournal.recovered\"") && exported.contains("payload_base64"),
        "{exported}"
    );
    // Into a new session: every record, the system one too.
    let out = sjournal(r)
        .args(["import", "--session", "t", "--json", "-"])
        .write_stdin(exported.clone())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["events"].as_u64(), v["system"].as_u64()),
        (Some(2), Some(1)),
        "{v}"
    );
    assert_eq!(state_hash(r, "t"), state_hash(r, "s"));
    // Into a session with records of its own: the events only (their seqs would not line up).
    append(
        r,
        "u",
        r#"{"hook_event_name":"SessionStart","source":"resume"}"#,
    );
    let out = sjournal(r)
        .args(["import", "--session", "u", "--json", "-"])
        .write_stdin(exported)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["events"].as_u64(), v["skipped_system"].as_u64()),
        (Some(2), Some(1)),
        "{v}"
    );
}

fn state_hash(root: &std::path::Path, session: &str) -> String {
    let out = sjournal(root)
        .args(["state", "--session", session, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["state_hash"].as_str().unwrap().to_owned()
}

/// Every fixture journal (real Claude Code payloads, every host, and a scripted session with
/// context channels, primitives, injections and exec records, and the recovery scenario with
/// its injections), exported and imported into a new session, folds to the same state: the
/// same `state_hash`.
#[test]
fn export_then_import_keeps_the_state_of_every_fixture() {
    let dir = fixtures_dir().join("journals");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let header = sjournal::format::header::Header::decode(&std::fs::read(&path).unwrap())
            .unwrap()
            .0;
        let id = header.session_id;
        let stem = sjournal::journal::paths::file_stem(&id).unwrap();
        std::fs::create_dir_all(r.join("sessions")).unwrap();
        std::fs::copy(&path, r.join(format!("sessions/{stem}.sjl"))).unwrap();
        let exported = export(r, &id);
        n += 1;
        if exported.contains("\"erased\":true") {
            // The format-2 fixture with a field and a whole record erased: exported with what
            // is left of them, and refused by import, naming the line and what to do; with
            // --skip-erased the rest is imported (the two erased events and the two records
            // binding them left out), and verifies.
            assert_eq!(exported.matches("\"erased\":true").count(), 2);
            assert!(
                exported.contains("\"seq\":15,")
                    && exported.contains("\"payload\":null,\"erased\":true")
            );
            let out = sjournal(r)
                .args(["import", "--session", "copy", "-"])
                .write_stdin(exported.clone())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(
                err.contains("line 11")
                    && err.contains("record seq 11 was erased after it was written")
                    && err.contains("--skip-erased"),
                "{err}"
            );
            let out = sjournal(r)
                .args([
                    "import",
                    "--session",
                    "copy",
                    "--skip-erased",
                    "--json",
                    "-",
                ])
                .write_stdin(exported.clone())
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["skipped_erased"].as_u64(), Some(4), "{v}");
            assert_eq!(v["appended"].as_u64(), Some(35), "{v}");
            let out = sjournal(r)
                .args(["verify", "--session", "copy"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            // A line whose ts_unix_ns a tool rounded (jq 1.6 does, past 2^53) is refused.
            let line = exported.lines().next().unwrap();
            let l: Value = serde_json::from_str(line).unwrap();
            let ns = l["ts_unix_ns"].as_i64().unwrap();
            let rounded = line.replace(&ns.to_string(), &(ns - ns % 1000).to_string());
            assert_ne!(rounded, line);
            let out = sjournal(r)
                .args(["import", "--session", "rounded", "-"])
                .write_stdin(rounded)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(
                err.contains("do not name the same time") && err.contains("jq"),
                "{err}"
            );
            continue;
        }
        let systems = exported.matches("\"kind\":\"sjournal.").count();
        let out = sjournal(r)
            .args(["import", "--session", "copy", "--json", "-"])
            .write_stdin(exported)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {out:?}", path.display());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["system"].as_u64(), Some(systems as u64), "{v}");
        assert_eq!(
            state_hash(r, "copy"),
            state_hash(r, &id),
            "{}: the copy folds to another state",
            path.display()
        );
    }
    assert_eq!(n, 6);
}
