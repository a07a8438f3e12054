//! `sjournal repair`: a bit flipped in a record in the middle of a journal makes it refuse
//! appends (valid records follow the damage), so new events go to the rescue journal. Repair
//! writes a new journal of every record that can be salvaged, in which the lost record is
//! replaced by a `sjournal.lost` record (so every record after it keeps its seq), followed by a
//! `sjournal.repaired` record naming the damaged file's blake3 and the byte range lost, and
//! then the rescue journal's records. The new journal verifies, `log` shows all of it, the
//! damaged journal and the rescue journal are kept byte for byte beside it, and appends go to
//! the journal again. Also: a journal that needs nothing is left alone, `--dry-run` changes
//! nothing, a rolled-back journal and a damaged header are repaired, the seqs that rescued
//! system records refer to are renumbered with them, and a repair that stopped before moving
//! the rescue journal aside is finished without merging it twice.

use crate::support as common;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use sjournal::format::hash::content_hash;
use sjournal::format::payload::{
    self, HostOverride, Injected, Repaired, KIND_HOST, KIND_INJECTED, KIND_REPAIRED,
};
use sjournal::journal::repair::{repair, RepairOptions};
use sjournal::journal::{Root, Writer};
use sjournal::testing::{FaultyFs, Op};

fn cli(root: &Path) -> Command {
    let mut c = Command::new(common::bin());
    c.arg("--root").arg(root);
    c
}

fn append(root: &Path, i: usize) -> std::process::Output {
    cli(root)
        .args(["append", "--session", "s"])
        .write_stdin(format!(
            r#"{{"hook_event_name":"Stop","i":{i},"pad":"{}"}}"#,
            "x".repeat(40)
        ))
        .output()
        .unwrap()
}

fn sessions(root: &Path) -> PathBuf {
    root.join("sessions")
}

/// `log --json` lines.
fn log(root: &Path) -> Vec<Value> {
    let out = cli(root)
        .args(["log", "--session", "s", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kept(root: &Path, infix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(sessions(root))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy().contains(infix) && p.extension().is_some_and(|x| x == "bin")
        })
        .collect();
    v.sort();
    v
}

fn repaired_record(root: &Path) -> Repaired {
    let p = common::parse(&common::read(&sessions(root).join("s.sjl")));
    let r = p
        .records
        .iter()
        .rev()
        .find(|r| r.kind == KIND_REPAIRED)
        .unwrap();
    payload::decode_system(r.seq, &r.payload).unwrap()
}

/// Eight events, then a bit flipped inside record 4, then two events that go to the rescue
/// journal (one by `append`, one by `hook`).
fn damaged_session(root: &Path) -> (Vec<u8>, Vec<u8>) {
    for i in 1..=8 {
        assert!(append(root, i).status.success());
    }
    let journal = sessions(root).join("s.sjl");
    let mut b = common::read(&journal);
    let p = common::parse(&b);
    let r4 = &p.records[3];
    b[(r4.offset + r4.end) as usize / 2] ^= 0x08;
    common::overwrite(&journal, &b);
    // Without the tail hint the writer reads the whole journal and finds the damage.
    fs::write(sessions(root).join("s.lock"), b"").unwrap();
    let out = append(root, 9);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let out = cli(root)
        .arg("hook")
        .write_stdin(r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"go on"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let rescue = common::read(&sessions(root).join("s.rescue.sjl"));
    assert_eq!(common::parse(&rescue).records.len(), 2);
    (b, rescue)
}

#[test]
fn a_bit_flip_mid_log_is_repaired() {
    let dir = common::scratch();
    let root = dir.path();
    let (damaged, rescue) = damaged_session(root);
    let (code, _) = verify(root);
    assert_eq!(code, 1);

    let out = cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("repaired session s: 7 record(s) salvaged"),
        "{text}"
    );

    let (code, vtext) = verify(root);
    assert_eq!(code, 0, "{vtext}");
    let lines = log(root);
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Stop",
            "Stop",
            "Stop",
            "sjournal.lost",
            "Stop",
            "Stop",
            "Stop",
            "Stop",
            "sjournal.repaired",
            "Stop",
            "UserPromptSubmit"
        ]
    );
    // Every salvaged record kept its seq: record n holds event i = n.
    for (n, l) in lines.iter().enumerate().take(8) {
        assert_eq!(l["seq"], n as u64 + 1);
        if n != 3 {
            assert_eq!(l["payload"]["i"], n as u64 + 1, "{l}");
        }
    }
    assert_eq!(lines[9]["payload"]["i"], 9);
    assert_eq!(lines[10]["payload"]["prompt"], "go on");

    // The repair record names the damaged file, its digest and the byte range lost.
    let rec = repaired_record(root);
    let p = common::parse(&damaged);
    let lost_at = p.records.len() as u64; // records before the damage: 3
    assert_eq!(lost_at, 3);
    let r4_start = p.stop.as_ref().unwrap().offset;
    assert_eq!(rec.damaged_blake3, content_hash(&damaged).to_hex());
    assert_eq!(rec.lost.len(), 1);
    assert_eq!(rec.lost[0].offset, r4_start);
    assert_eq!((rec.salvaged, rec.lost_records), (7, 1));
    assert_eq!(rec.rescue.as_ref().unwrap().records, 2);
    assert_eq!(rec.rescue.as_ref().unwrap().first_seq, 10);

    // Both old files are kept beside it, byte for byte; the rescue journal is gone.
    let d = kept(root, ".damaged-");
    assert_eq!(d, vec![sessions(root).join(&rec.damaged)]);
    assert_eq!(common::read(&d[0]), damaged);
    let m = kept(root, ".merged-");
    assert_eq!(common::read(&m[0]), rescue);
    assert!(!sessions(root).join("s.rescue.sjl").exists());

    // The records before the damage kept their bytes (same header, same chain).
    let new = common::read(&sessions(root).join("s.sjl"));
    assert_eq!(new[..r4_start as usize], damaged[..r4_start as usize]);

    // Appends go to the journal again, after everything.
    let out = append(root, 10);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(log(root).last().unwrap()["seq"], 12);
    assert!(!sessions(root).join("s.rescue.sjl").exists());
    // The state folds all of it.
    let out = cli(root)
        .args(["state", "--session", "s", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state["seq"], 12, "{state}");
}

fn verify(root: &Path) -> (i32, String) {
    let out = cli(root)
        .args(["verify", "--session", "s"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_healthy_journal_is_left_alone() {
    let dir = common::scratch();
    let root = dir.path();
    for i in 0..3 {
        assert!(append(root, i).status.success());
    }
    let before = common::read(&sessions(root).join("s.sjl"));
    let out = cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to repair"));
    assert_eq!(common::read(&sessions(root).join("s.sjl")), before);
    assert!(kept(root, ".damaged-").is_empty());
}

#[test]
fn dry_run_changes_nothing() {
    let dir = common::scratch();
    let root = dir.path();
    let (damaged, rescue) = damaged_session(root);
    let listing = |r: &Path| {
        let mut v: Vec<_> = fs::read_dir(sessions(r))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let files = listing(root);
    let out = cli(root)
        .args(["repair", "--session", "s", "--dry-run", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["repaired"].as_bool(), v["dry_run"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(v["records"], 11);
    assert_eq!(common::read(&sessions(root).join("s.sjl")), damaged);
    assert_eq!(common::read(&sessions(root).join("s.rescue.sjl")), rescue);
    assert_eq!(listing(root), files, "dry run left files behind");
}

#[test]
fn a_rolled_back_journal_is_repaired() {
    let dir = common::scratch();
    let root = dir.path();
    for i in 0..2 {
        assert!(append(root, i).status.success());
    }
    let journal = sessions(root).join("s.sjl");
    let old = common::read(&journal);
    for i in 2..4 {
        assert!(append(root, i).status.success());
    }
    let acked = common::parse(&common::read(&journal)).records[3].hash;
    fs::write(&journal, &old).unwrap();
    assert_eq!(append(root, 5).status.code(), Some(1));
    let out = cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(verify(root).0, 0);
    let rec = repaired_record(root);
    let a = rec.acknowledged.unwrap();
    assert_eq!((a.seq, a.hash), (4, acked.to_hex()));
    assert!(rec.lost.is_empty());
    assert_eq!(common::read(&kept(root, ".damaged-")[0]), old);
    assert!(append(root, 6).status.success());
}

#[test]
fn a_damaged_header_is_repaired() {
    let dir = common::scratch();
    let root = dir.path();
    for i in 0..3 {
        assert!(append(root, i).status.success());
    }
    let journal = sessions(root).join("s.sjl");
    let mut b = common::read(&journal);
    let first = common::parse(&b).records[0].offset;
    b[20] ^= 0xff; // inside the header's created time: its CRC fails
    common::overwrite(&journal, &b);
    assert_eq!(append(root, 3).status.code(), Some(1));
    let out = cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(verify(root).0, 0);
    let rec = repaired_record(root);
    assert_eq!((rec.lost[0].offset, rec.lost[0].length), (0, first));
    assert_eq!(rec.salvaged, 3);
    let lines = log(root);
    assert_eq!(lines[2]["payload"]["i"], 2);
    assert_eq!(lines[2]["seq"], 3);
}

/// A rescued event and the injection record pointing at it (by its seq in the rescue
/// journal) keep pointing at each other after the merge.
#[test]
fn rescued_system_records_follow_their_events() {
    let dir = common::scratch();
    let root = dir.path();
    let (_, _) = damaged_session(root);
    let r = Root::new(root);
    let mut w = Writer::open_rescue(&r, "s", &common::opts()).unwrap();
    let ev = w
        .append(
            "Stop",
            &sjournal::fold::digest::encode_event("Stop", r#"{"hook_event_name":"Stop"}"#),
        )
        .unwrap();
    let inj = Injected {
        event_seq: ev.seq,
        event_kind: "Stop".into(),
        text_blake3: String::new(),
        len: 0,
        truncated: false,
        text: String::new(),
        ..Default::default()
    };
    w.append(KIND_INJECTED, &payload::encode_system(&inj))
        .unwrap();
    let host = HostOverride {
        event_seq: ev.seq,
        host: "codex".into(),
        detected: "claude".into(),
    };
    w.append(KIND_HOST, &payload::encode_system(&host)).unwrap();
    drop(w);
    assert!(cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap()
        .status
        .success());
    let p = common::parse(&common::read(&sessions(root).join("s.sjl")));
    let i = p.records.iter().find(|r| r.kind == KIND_INJECTED).unwrap();
    let got: Injected = payload::decode_system(i.seq, &i.payload).unwrap();
    assert_eq!(got.event_seq, i.seq - 1);
    assert_eq!(p.records[i.seq as usize - 2].kind, "Stop");
    let h = p.records.iter().find(|r| r.kind == KIND_HOST).unwrap();
    let got: HostOverride = payload::decode_system(h.seq, &h.payload).unwrap();
    assert_eq!(got.event_seq, i.seq - 1);
}

/// A repair that stopped after it renamed the new journal into place, before it moved the
/// rescue journal aside: the next run sees the rescue journal named by the repair record and
/// only moves it, merging nothing twice.
#[test]
fn an_interrupted_repair_is_finished() {
    let dir = common::scratch();
    let root = dir.path();
    let (_, rescue) = damaged_session(root);
    assert!(cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap()
        .status
        .success());
    let journal = common::read(&sessions(root).join("s.sjl"));
    fs::write(sessions(root).join("s.rescue.sjl"), &rescue).unwrap();
    let out = cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("earlier repair"),
        "{out:?}"
    );
    assert_eq!(common::read(&sessions(root).join("s.sjl")), journal);
    assert!(!sessions(root).join("s.rescue.sjl").exists());
    assert_eq!(kept(root, ".merged-").len(), 1);
}

/// Repair's links, renames and removals go through the file-system seam: a repair whose
/// last step (removing the merged rescue journal) fails reports the error, and the next
/// repair finishes it without merging the rescue journal twice.
#[test]
fn a_repair_failing_at_its_last_step_is_finished_by_the_next() {
    let dir = common::scratch();
    let root = dir.path();
    damaged_session(root);
    let fs = FaultyFs::new();
    fs.fail(libc::EIO, |op, p| {
        op == Op::Remove && p.file_name().is_some_and(|n| n == "s.rescue.sjl")
    });
    let opts = RepairOptions {
        fs: std::sync::Arc::new(fs.clone()),
        ..RepairOptions::default()
    };
    let err = repair(&Root::new(root), "s", &opts).unwrap_err();
    assert!(err.to_string().contains("s.rescue.sjl"), "{err}");
    assert_eq!(fs.injected(), 1);
    let journal = common::read(&sessions(root).join("s.sjl"));
    let out = cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("earlier repair"),
        "{out:?}"
    );
    assert_eq!(common::read(&sessions(root).join("s.sjl")), journal);
    assert!(!sessions(root).join("s.rescue.sjl").exists());
    assert_eq!(kept(root, ".merged-").len(), 1);
}

/// A rescue writer still finishing its sync when repair moved its journal aside advances the
/// mark file it opened, which moved aside too, and leaves the copy in the lock file alone:
/// the next rescue journal is not taken for a rolled-back one.
#[test]
fn a_late_rescue_writer_does_not_mark_the_next_rescue_journal() {
    let dir = common::scratch();
    let root = dir.path();
    damaged_session(root);
    let rescue = sessions(root).join("s.rescue.sjl");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(sessions(root).join("s.rescue.lock"))
        .unwrap();
    let mut late = sjournal::journal::hwm::Keeper::open(
        std::sync::Arc::new(sjournal::storage::RealFs),
        &rescue,
        Some(lock),
        None,
    );
    assert!(cli(root)
        .args(["repair", "--session", "s"])
        .output()
        .unwrap()
        .status
        .success());
    late.advance(7, sjournal::format::Hash([7; 32]));
    assert!(!sjournal::journal::hwm::path_for(&rescue).exists());
    assert_eq!(sjournal::journal::hwm::read_copy(&rescue), None);
    let r = Root::new(root);
    let mut w = Writer::open_rescue(&r, "s", &common::opts()).unwrap();
    w.append("Stop", &sjournal::fold::digest::encode_event("Stop", "{}"))
        .unwrap();
}
