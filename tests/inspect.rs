//! `sjournal inspect` on damaged journals. The corrupt fixtures in `tests/fixtures/corrupt/`
//! are checked in; `fixtures_match_their_generator` rebuilds them from the recorded Claude
//! Code payloads with fixed timestamps and fails if a checked-in file differs (run it with
//! `SJOURNAL_WRITE_FIXTURES=1` to rewrite them after a deliberate format change). Each one
//! is a kind of damage a journal can suffer: a torn tail, a flipped bit mid-log, a deleted
//! record, two records swapped, a damaged header, an impossible length word, and a
//! quarantine file (the bytes recovery cut from a torn tail). For each, inspect must name
//! the damage at the right offset, keep decoding the records after it, exit 1, and leave
//! the file byte-identical.

use crate::support;

use std::path::PathBuf;

use serde_json::Value;
use support::*;

const SESSION: &str = "fixture-session";
const CREATED_NS: i64 = 1_764_000_000_000_000_000;

fn clean() -> Built {
    let events = claude_session();
    let refs: Vec<(&str, &str)> = events.iter().map(|(k, j)| (*k, j.as_str())).collect();
    build_journal(SESSION, CREATED_NS, &refs)
}

/// Every fixture: its file name and its bytes.
fn generate() -> Vec<(&'static str, Vec<u8>)> {
    let c = clean();
    let b = &c.bytes;
    let (s8, _) = c.frames[7];
    let torn_at = s8 + (b.len() - s8) / 2;

    let mut flipped = b.clone();
    let (s4, e4) = c.frames[3];
    flipped[s4 + (e4 - s4) / 2] ^= 0x10;

    let mut deleted = b[..s4].to_vec();
    deleted.extend_from_slice(&b[e4..]);

    let (s5, e5) = c.frames[4];
    let mut reordered = b[..s4].to_vec();
    reordered.extend_from_slice(&b[s5..e5]);
    reordered.extend_from_slice(&b[s4..e4]);
    reordered.extend_from_slice(&b[e5..]);

    let mut bad_header = b.clone();
    bad_header[17] ^= 0x01; // a bit of the creation time: the header CRC no longer matches

    let mut bad_length = b.clone();
    let (s3, _) = c.frames[2];
    bad_length[s3..s3 + 4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());

    vec![
        ("clean.sjl", b.clone()),
        ("torn-tail.sjl", b[..torn_at].to_vec()),
        ("torn-tail.quarantine.bin", b[s8..torn_at].to_vec()),
        ("flipped-bit.sjl", flipped),
        ("deleted-record.sjl", deleted),
        ("reordered-records.sjl", reordered),
        ("bad-header.sjl", bad_header),
        ("bad-length.sjl", bad_length),
    ]
}

fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join("corrupt").join(name)
}

#[test]
fn fixtures_match_their_generator() {
    let write = std::env::var_os("SJOURNAL_WRITE_FIXTURES").is_some();
    for (name, bytes) in generate() {
        let path = fixture(name);
        if write {
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (generate with SJOURNAL_WRITE_FIXTURES=1)",
                path.display()
            )
        });
        assert!(
            on_disk == bytes,
            "{name} differs from what the generator makes"
        );
    }
}

/// Runs `inspect --json` on a fixture; checks the file is untouched and the exit code.
fn inspect(name: &str, expect_exit: i32) -> Value {
    let path = fixture(name);
    let before = file_digest(&path);
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let root = tempfile::tempdir().unwrap();
    let out = sjournal(root.path())
        .args(["inspect", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(expect_exit),
        "{name}: stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(file_digest(&path), before, "{name} was modified");
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    // Text mode too: it must run and name every damaged offset.
    let text = sjournal(root.path())
        .arg("inspect")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(expect_exit));
    assert_eq!(file_digest(&path), before, "{name} was modified");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    for item in v["items"].as_array().unwrap() {
        if item["type"] == "damage" {
            assert!(
                text.contains(&format!(
                    "@{:<7} !! DAMAGE",
                    item["offset"].as_u64().unwrap()
                )),
                "{text}"
            );
        }
    }
    v
}

fn items(v: &Value) -> &Vec<Value> {
    v["items"].as_array().unwrap()
}

fn codes(item: &Value) -> Vec<&str> {
    item["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect()
}

fn seqs(v: &Value) -> Vec<u64> {
    items(v)
        .iter()
        .filter(|i| i["type"] == "record")
        .map(|i| i["seq"].as_u64().unwrap())
        .collect()
}

#[test]
fn clean_journal_is_clean() {
    let c = clean();
    let v = inspect("clean.sjl", 0);
    assert_eq!(v["header"]["session_id"], SESSION);
    assert_eq!(seqs(&v), (1..=8).collect::<Vec<_>>());
    for (i, item) in items(&v).iter().enumerate() {
        assert_eq!(item["offset"], c.frames[i].0 as u64);
        assert_eq!(item["hash"], c.hashes[i].to_hex());
        assert!(codes(item).is_empty());
    }
    assert_eq!(items(&v)[3]["payload"]["tool_name"], "Bash");
    assert_eq!(v["summary"]["clean"], true);
}

#[test]
fn torn_tail_is_the_last_region() {
    let c = clean();
    let v = inspect("torn-tail.sjl", 1);
    assert_eq!(seqs(&v), (1..=7).collect::<Vec<_>>());
    let last = items(&v).last().unwrap();
    assert_eq!(last["type"], "damage");
    assert_eq!(last["offset"], c.frames[7].0 as u64);
    assert_eq!(last["issue"]["code"], "incomplete");
    assert_eq!(last["claimed"]["seq"], 8);
    assert_eq!(last["claimed"]["kind"], "SessionEnd");
    assert!(last["resync_at"].is_null());
    assert_eq!(v["summary"]["first_problem_at"], c.frames[7].0 as u64);
}

#[test]
fn flipped_bit_mid_log_is_skipped_and_later_records_still_shown() {
    let c = clean();
    let v = inspect("flipped-bit.sjl", 1);
    let it = items(&v);
    assert_eq!(seqs(&v), vec![1, 2, 3, 5, 6, 7, 8]);
    let d = &it[3];
    assert_eq!(d["type"], "damage");
    assert_eq!(d["issue"]["code"], "bad_crc");
    assert_eq!(d["offset"], c.frames[3].0 as u64);
    assert_eq!(d["len"], (c.frames[3].1 - c.frames[3].0) as u64);
    assert_eq!(d["resync_at"], c.frames[4].0 as u64);
    assert_eq!(d["claimed"]["seq"], 4);
    // After the damage: flagged, the lost record counted, the chain checked again from there.
    assert_eq!(it[4]["after_damage"], true);
    assert_eq!(codes(&it[4]), vec!["unverified"]);
    assert!(it[4]["issues"][0]["what"]
        .as_str()
        .unwrap()
        .contains("1 record(s) lost"));
    for later in &it[5..] {
        assert_eq!(later["after_damage"], true);
        assert!(codes(later).is_empty(), "{later}");
    }
    assert_eq!(v["summary"]["damaged_regions"], 1);
}

#[test]
fn deleted_record_breaks_seq_and_chain() {
    let c = clean();
    let v = inspect("deleted-record.sjl", 1);
    let it = items(&v);
    assert_eq!(seqs(&v), vec![1, 2, 3, 5, 6, 7, 8]);
    assert_eq!(it[3]["offset"], c.frames[3].0 as u64);
    assert_eq!(codes(&it[3]), vec!["seq_gap", "chain_break"]);
    assert!(it[4..].iter().all(|i| codes(i).is_empty()));
    assert_eq!(v["summary"]["damaged_regions"], 0);
    assert_eq!(v["summary"]["records_with_issues"], 1);
}

#[test]
fn reordered_records_are_each_flagged() {
    let c = clean();
    let v = inspect("reordered-records.sjl", 1);
    let it = items(&v);
    assert_eq!(seqs(&v), vec![1, 2, 3, 5, 4, 6, 7, 8]);
    assert_eq!(it[3]["offset"], c.frames[3].0 as u64);
    for item in &it[3..=5] {
        assert!(codes(item).contains(&"seq_gap"), "{item}");
    }
    assert!(it[6..].iter().all(|i| codes(i).is_empty()));
}

#[test]
fn bad_header_still_shows_every_record() {
    let v = inspect("bad-header.sjl", 1);
    assert_eq!(v["header"]["ok"], false);
    assert_eq!(v["header"]["problem"]["code"], "bad_header");
    assert!(v["header"]["problem"]["what"]
        .as_str()
        .unwrap()
        .contains("CRC"));
    assert_eq!(seqs(&v), (1..=8).collect::<Vec<_>>());
    // Without the header, record 1's link to it cannot be checked; the rest chain as usual.
    assert_eq!(codes(&items(&v)[0]), vec!["unverified"]);
    assert!(items(&v)[1..].iter().all(|i| codes(i).is_empty()));
    assert_eq!(v["summary"]["first_problem_at"], 0);
}

#[test]
fn impossible_length_resynchronizes_on_the_next_record() {
    let c = clean();
    let v = inspect("bad-length.sjl", 1);
    let d = &items(&v)[2];
    assert_eq!(d["type"], "damage");
    assert_eq!(d["issue"]["code"], "bad_length");
    assert_eq!(d["offset"], c.frames[2].0 as u64);
    assert_eq!(d["resync_at"], c.frames[3].0 as u64);
    assert_eq!(seqs(&v), vec![1, 2, 4, 5, 6, 7, 8]);
}

#[test]
fn quarantine_file_is_read_as_a_fragment() {
    let c = clean();
    let v = inspect("torn-tail.quarantine.bin", 1);
    assert_eq!(v["header"]["ok"], false);
    assert!(v["header"]["problem"]["what"]
        .as_str()
        .unwrap()
        .contains("fragment"));
    let it = items(&v);
    assert_eq!(it.len(), 1);
    assert_eq!(it[0]["offset"], 0);
    assert_eq!(it[0]["issue"]["code"], "incomplete");
    assert_eq!(it[0]["claimed"]["seq"], 8);
    assert_eq!(
        it[0]["claimed"]["len"],
        (c.frames[7].1 - c.frames[7].0) as u64
    );
}

/// A real journal under a root, damaged in place after it was written, inspected where it
/// lies (read-only, next to the lock file the writer left).
#[test]
fn inspects_a_live_journal_read_only() {
    let root = tempfile::tempdir().unwrap();
    for i in 0..5 {
        sjournal(root.path())
            .args(["append", "--session", "s1"])
            .write_stdin(format!(r#"{{"hook_event_name":"PostToolUse","i":{i}}}"#))
            .assert()
            .success();
    }
    let path = root.path().join("sessions/s1.sjl");
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let before = file_digest(&path);
    let out = sjournal(root.path())
        .args(["inspect", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seqs(&v), vec![1, 2, 3, 4]);
    assert_eq!(items(&v)[4]["issue"]["code"], "bad_crc");
    assert_eq!(file_digest(&path), before);
}

#[test]
fn missing_file_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    let out = sjournal(root.path())
        .args(["inspect"])
        .arg(root.path().join("x.sjl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("x.sjl"));
}

/// A damaged version-2 record: the kind a damaged frame claims is read where a version-2
/// frame has it (after the payload digest and salt), for a torn tail and for a flipped bit.
#[test]
fn a_damaged_v2_record_names_its_kind() {
    let d = tempfile::tempdir().unwrap();
    let root = sjournal::journal::Root::new(d.path().join("root"));
    let mut w = sjournal::journal::Writer::open(&root, "v2", &Default::default()).unwrap();
    for (kind, json) in [
        (
            "SessionStart",
            r#"{"session_id":"v2","hook_event_name":"SessionStart","source":"startup"}"#,
        ),
        (
            "UserPromptSubmit",
            r#"{"session_id":"v2","hook_event_name":"UserPromptSubmit","prompt":"hello there"}"#,
        ),
        ("Stop", r#"{"session_id":"v2","hook_event_name":"Stop"}"#),
    ] {
        w.append(kind, &sjournal::fold::digest::encode_event(kind, json))
            .unwrap();
    }
    drop(w);
    let bytes = std::fs::read(root.session("v2").unwrap().journal).unwrap();
    let (h, hlen) = sjournal::format::Header::decode(&bytes).unwrap();
    assert_eq!(h.format_version, sjournal::format::header::FORMAT_VERSION);
    let mut frames = Vec::new();
    let mut at = hlen;
    while at < bytes.len() {
        let f = sjournal::format::record::parse(&bytes[at..]).unwrap();
        frames.push((at, at + f.len()));
        at += f.len();
    }
    let (s3, e3) = frames[2];
    // Torn after its kind: only the payload's end and the CRC are missing.
    let torn = bytes[..e3 - 6].to_vec();
    assert!(e3 - 6 > s3 + sjournal::format::record::FIXED_LEN_V2 + "Stop".len());
    let (_, e2) = frames[1];
    let mut flipped = bytes.clone();
    flipped[e2 - 8] ^= 0x10;
    for (name, b, seq, kind) in [
        ("torn.sjl", torn, 3, "Stop"),
        ("flipped.sjl", flipped, 2, "UserPromptSubmit"),
    ] {
        let path = d.path().join(name);
        std::fs::write(&path, &b).unwrap();
        let out = sjournal(d.path())
            .args(["inspect", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let dmg = items(&v)
            .iter()
            .find(|i| i["type"] == "damage")
            .unwrap_or_else(|| panic!("{name}: {v}"));
        assert_eq!(dmg["claimed"]["seq"], seq, "{name}: {dmg}");
        assert_eq!(dmg["claimed"]["kind"], kind, "{name}: {dmg}");
    }
}
