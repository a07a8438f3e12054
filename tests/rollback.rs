//! Rollback: acknowledged records cut off a journal (an older copy of the file restored, a
//! truncation exactly at a record boundary) leave a chain that is valid on its own. The
//! high-water mark kept beside the journal (`<stem>.hwm`: seq and hash of the last
//! acknowledged record) catches it: `verify` reports "rolled back: seq N (hash H) was
//! acknowledged" and exits 1, and the next `append` or `hook` puts its event in the rescue
//! journal instead of reusing the lost seqs, leaving the journal as it was. An acknowledged
//! last record that is damaged is not cut as a torn tail. And the mark raises no false alarm:
//! simulated crashes (unsynced writes lost, torn, zeroed) never make it claim a record the
//! disk does not hold, concurrent writers never move it backwards, and a lost or damaged mark
//! only turns detection off until the next append writes it again.

use crate::support as common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;
use sjournal::format::payload::encode_event_json;
use sjournal::journal::recovery::Corruption;
use sjournal::journal::Corrupt;
use sjournal::journal::{hwm, verify_file, Root, Target, Writer, WriterOptions};
use sjournal::testing::{FaultPlan, Faulty, FaultyFs, JournalWith, Op, PendingFate, SimDisk};
use sjournal::Error;

fn cli(root: &Path) -> Command {
    let mut c = Command::new(common::bin());
    c.arg("--root").arg(root);
    c
}

fn append(root: &Path, session: &str, i: usize) -> std::process::Output {
    cli(root)
        .args(["append", "--session", session])
        .write_stdin(format!(r#"{{"hook_event_name":"Stop","i":{i}}}"#))
        .output()
        .unwrap()
}

/// `verify --session` exit code and stdout.
fn verify(root: &Path, session: &str) -> (i32, String) {
    let out = cli(root)
        .args(["verify", "--session", session])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// After a rollback: verify names the acknowledged record, and the next append goes to the
/// rescue journal without touching the journal.
fn assert_rolled_back(root: &Path, session: &str, acked: (u64, String)) {
    let journal = root.join(format!("sessions/{session}.sjl"));
    let before = common::read(&journal);
    let (code, text) = verify(root, session);
    assert_eq!(code, 1, "{text}");
    let expect = format!(
        "rolled back: seq {} (hash {}) was acknowledged",
        acked.0, acked.1
    );
    assert!(text.contains(&expect), "{text}");
    let report = verify_file(&journal, None).unwrap();
    assert!(report.rolled_back && !report.ok, "{report:?}");
    assert_eq!(report.acknowledged.map(|a| a.seq), Some(acked.0));

    let out = append(root, session, 99);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rolled back") && err.contains("rescue"),
        "{err}"
    );
    assert_eq!(common::read(&journal), before, "the journal was changed");
    let rescue = common::parse(&common::read(
        &root.join(format!("sessions/{session}.rescue.sjl")),
    ));
    assert_eq!(
        rescue.records.last().unwrap().json(),
        r#"{"hook_event_name":"Stop","i":99}"#
    );

    // The hook too: it exits 0 and its event is in the rescue journal.
    let payload = format!(r#"{{"session_id":"{session}","hook_event_name":"Stop","n":"hooked"}}"#);
    let out = cli(root)
        .arg("hook")
        .write_stdin(payload.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        common::read(&journal),
        before,
        "the hook changed the journal"
    );
    let rescue = common::parse(&common::read(
        &root.join(format!("sessions/{session}.rescue.sjl")),
    ));
    assert!(
        rescue
            .records
            .iter()
            .any(|r| r.kind == "Stop" && r.json() == payload),
        "the hooked event is not in the rescue journal"
    );
}

fn last_acked(journal: &Path) -> (u64, String) {
    let p = common::parse(&common::read(journal));
    let r = p.records.last().unwrap();
    (r.seq, r.hash.to_hex())
}

#[test]
fn an_older_copy_restored_is_rolled_back() {
    let dir = common::scratch();
    let root = dir.path();
    for i in 0..3 {
        assert!(append(root, "s", i).status.success());
    }
    let journal = root.join("sessions/s.sjl");
    let old = common::read(&journal);
    for i in 3..5 {
        assert!(append(root, "s", i).status.success());
    }
    let acked = last_acked(&journal);
    assert_eq!(acked.0, 5);
    fs::write(&journal, &old).unwrap();
    assert_rolled_back(root, "s", acked);
}

#[test]
fn a_truncation_at_a_record_boundary_is_rolled_back() {
    let dir = common::scratch();
    let root = dir.path();
    for i in 0..4 {
        assert!(append(root, "s", i).status.success());
    }
    let journal = root.join("sessions/s.sjl");
    let acked = last_acked(&journal);
    let p = common::parse(&common::read(&journal));
    fs::OpenOptions::new()
        .write(true)
        .open(&journal)
        .unwrap()
        .set_len(p.records[1].end)
        .unwrap();
    assert_rolled_back(root, "s", acked);
}

#[test]
fn a_journal_replaced_at_the_same_length_is_rolled_back() {
    // The last record rewritten with a valid CRC: same seq, another hash (format 1, whose
    // hash covers the payload; format 2's digest check: tests/erase.rs).
    let dir = common::scratch();
    let root = Root::new(dir.path());
    common::start_v1(&root, "s");
    let path = common::write_events(&root, "s", &["{\"a\":1}".into(), "{\"b\":2}".into()]);
    let mark = hwm::read(&path).unwrap().unwrap();
    let mut b = common::read(&path);
    let p = common::parse(&b);
    let last = &p.records[1];
    let at = last.end as usize - 6;
    b[at] ^= 1;
    common::fix_crc(&mut b, last.offset as usize, last.end as usize);
    fs::write(&path, &b).unwrap();
    match Writer::open(&root, "s", &common::opts()) {
        Err(e) => match Corrupt::of(&e).map(|c| &c.reason) {
            Some(Corruption::Replaced { seq: 2, hash, .. }) => assert_eq!(*hash, mark.hash),
            _ => panic!("expected Replaced, got {e}"),
        },
        Ok(_) => panic!("expected Replaced, the writer opened"),
    }
    let r = verify_file(&path, None).unwrap();
    assert!(r.rolled_back, "{r:?}");
}

/// Row 22 of the case table: a damaged last record the mark says was acknowledged is bit rot
/// or an edit, not a torn write; recovery must not cut it.
#[test]
fn damage_to_an_acknowledged_record_is_not_cut() {
    let dir = common::scratch();
    let root = Root::new(dir.path());
    let path = common::write_events(&root, "s", &["{\"a\":1}".into(), "{\"b\":2}".into()]);
    let mut b = common::read(&path);
    let n = b.len();
    b[n - 8] ^= 0x40;
    fs::write(&path, &b).unwrap();
    match Writer::open(&root, "s", &common::opts()) {
        Err(e)
            if matches!(
                Corrupt::of(&e).map(|c| &c.reason),
                Some(Corruption::Acknowledged {
                    seq: 2,
                    acknowledged: 2,
                    ..
                })
            ) => {}
        other => panic!("expected Acknowledged, got {:?}", other.err()),
    }
    assert_eq!(common::read(&path), b, "the acknowledged record was cut");
    assert!(common::quarantine_files(&root.sessions_dir()).is_empty());
    let r = verify_file(&path, None).unwrap();
    let f = r.problem.unwrap();
    assert!(!f.torn_tail && f.what.contains("was acknowledged"), "{f:?}");
}

/// Simulated crashes with every fate for the unsynced writes, the mark file kept as it was
/// (the worst case: a mark that survives while the journal loses its unsynced bytes). Every
/// reopen must accept the journal: a false alarm would refuse it.
#[test]
fn crashes_never_raise_a_false_alarm() {
    for seed in 0..300u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let dir = common::scratch();
        let root = Root::new(dir.path());
        let disk = SimDisk::new();
        let mut n = 0;
        for _epoch in 0..4 {
            // The k-th sync fails: the writes after the last good sync stay unsynced.
            let plan = FaultPlan {
                fail_sync: Some(rng.u64(1..6)),
                ..FaultPlan::default()
            };
            let on = disk.clone();
            let opts = WriterOptions::with_fs(JournalWith::new(move |_, _| {
                Box::new(Faulty::new(on.clone(), plan.clone()).0)
            }));
            let opened = Writer::open_with(&root, "s", Target::Main, &opts);
            match opened {
                Ok(mut w) => {
                    for _ in 0..rng.usize(1..6) {
                        let batch: Vec<Vec<u8>> = (0..rng.usize(1..4))
                            .map(|_| {
                                n += 1;
                                encode_event_json(&common::event_json(n, rng.usize(10..700)))
                            })
                            .collect();
                        let items: Vec<(&str, &[u8])> =
                            batch.iter().map(|p| ("Ev", p.as_slice())).collect();
                        if w.append_batch(&items).is_err() {
                            break;
                        }
                    }
                }
                // Only a zeroed sector inside a multi-record write may leave damage with
                // valid records after it; never a rollback.
                Err(e) if Corrupt::of(&e).is_some() => {
                    let reason = &Corrupt::of(&e).unwrap().reason;
                    assert!(
                        matches!(reason, Corruption::ValidRecordFollows { .. }),
                        "seed {seed}: false alarm: {reason}"
                    );
                    break;
                }
                // The open's own sync (recovery, header) failed.
                Err(Error::Io { .. }) => {}
                Err(e) => panic!("seed {seed}: {e}"),
            }
            disk.crash(|_, len| match rng.u8(0..4) {
                0 => PendingFate::Lost,
                1 => PendingFate::Kept,
                2 => PendingFate::Torn(rng.usize(0..=len)),
                _ => PendingFate::ZeroedSector(rng.usize(0..2)),
            });
            let journal = root.session("s").unwrap().journal;
            fs::write(&journal, disk.visible()).unwrap();
            let r = verify_file(&journal, None).unwrap();
            assert!(!r.rolled_back, "seed {seed}: false alarm: {r:?}");
            fs::write(&journal, b"").unwrap();
        }
    }
}

/// Many processes appending at once (group commit: each releases the lock before its sync):
/// the mark ends at the last record, never behind it.
#[test]
fn concurrent_writers_never_move_the_mark_backwards() {
    let dir = common::scratch();
    let root = dir.path().to_owned();
    let handles: Vec<_> = (0..6)
        .map(|t| {
            let root = root.clone();
            std::thread::spawn(move || {
                for i in 0..15 {
                    let out = append(&root, "s", t * 100 + i);
                    assert!(out.status.success(), "{out:?}");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let journal = root.join("sessions/s.sjl");
    let (seq, hash) = last_acked(&journal);
    assert_eq!(seq, 90);
    let m = hwm::read(&journal).unwrap().unwrap();
    assert_eq!((m.seq, m.hash.to_hex()), (seq, hash));
}

/// A mark is written (and synced) when its journal is created, so where the journal has
/// records a damaged or deleted mark is no crash's doing: verify reports it (exit 1) until the
/// next writer, finding every other witness in agreement, writes it again.
#[test]
fn a_lost_or_damaged_mark_is_a_finding_until_a_writer_writes_it_again() {
    let dir = common::scratch();
    let root = dir.path();
    for i in 0..3 {
        assert!(append(root, "s", i).status.success());
    }
    let journal = root.join("sessions/s.sjl");
    let mark = hwm::path_for(&journal);
    assert_eq!(
        fs::metadata(&mark).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Torn (CRC fails): a finding, and the next append rewrites it.
    let mut b = fs::read(&mark).unwrap();
    b[10] ^= 1;
    fs::write(&mark, &b).unwrap();
    let (code, text) = verify(root, "s");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("high-water mark is missing or damaged"),
        "{text}"
    );
    assert!(append(root, "s", 3).status.success());
    assert_eq!(hwm::read(&journal).unwrap().map(|m| m.seq), Some(4));
    assert_eq!(verify(root, "s").0, 0);
    // Deleted: the same.
    fs::remove_file(&mark).unwrap();
    assert_eq!(verify(root, "s").0, 1);
    assert!(append(root, "s", 4).status.success());
    assert_eq!(hwm::read(&journal).unwrap().map(|m| m.seq), Some(5));
    assert_eq!(verify(root, "s").0, 0);
}

#[test]
fn a_symlinked_mark_is_never_followed_and_is_reported() {
    let dir = common::scratch();
    let root = dir.path();
    assert!(append(root, "s", 0).status.success());
    let journal = root.join("sessions/s.sjl");
    let mark = hwm::path_for(&journal);
    let victim = dir.path().join("victim");
    fs::write(&victim, b"precious").unwrap();
    fs::remove_file(&mark).unwrap();
    std::os::unix::fs::symlink(&victim, &mark).unwrap();
    assert!(append(root, "s", 1).status.success());
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
    let (code, text) = verify(root, "s");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("high-water mark") && text.contains("symlink"),
        "{text}"
    );
}

#[test]
fn the_mark_is_not_advanced_by_a_failed_sync() {
    let dir = common::scratch();
    let root = Root::new(dir.path());
    let path = common::write_events(&root, "s", &["{\"a\":1}".into()]);
    let before = hwm::read(&path).unwrap().unwrap();
    let opts = WriterOptions::with_fs(JournalWith::new(|_, f| {
        let plan = FaultPlan {
            fail_sync: Some(1),
            ..FaultPlan::default()
        };
        Box::new(Faulty::new(f, plan).0)
    }));
    let mut w = Writer::open_with(&root, "s", Target::Main, &opts).unwrap();
    assert!(w
        .append(
            "Ev",
            &sjournal::fold::digest::encode_event("Ev", "{\"b\":2}")
        )
        .is_err());
    assert_eq!(hwm::read(&path).unwrap(), Some(before));
}

/// The mark is written through the writer's file-system seam, so fault injection reaches it:
/// a mark write that fails costs only detection (the append is still acknowledged, and the
/// mark stays where it was), never the event.
#[test]
fn the_mark_goes_through_the_fs_seam_and_its_failure_costs_only_detection() {
    let dir = common::scratch();
    let root = Root::new(dir.path());
    let path = common::write_events(&root, "s", &["{\"a\":1}".into()]);
    let before = hwm::read(&path).unwrap().unwrap();
    let fs = FaultyFs::new();
    fs.fail(libc::EIO, |op, p| {
        op == Op::WriteAt && p.extension().is_some_and(|e| e == "hwm")
    });
    let mut w = Writer::open_with(
        &root,
        "s",
        Target::Main,
        &WriterOptions::with_fs(fs.clone()),
    )
    .unwrap();
    let a = w
        .append(
            "Ev",
            &sjournal::fold::digest::encode_event("Ev", "{\"b\":2}"),
        )
        .unwrap();
    assert_eq!(a.seq, 2);
    assert!(
        fs.injected() > 0,
        "the mark's write did not go through the seam"
    );
    assert_eq!(hwm::read(&path).unwrap(), Some(before));
}

/// The demo's last step tears a write as a crash would: before its sync returned, so before
/// the mark named it. Its recovery must cut the torn half-record (no rollback, no refusal),
/// and the demo must run to the end.
#[test]
fn the_demo_tears_a_write_and_recovers_it() {
    let dir = common::scratch();
    let out = Command::new(common::bin())
        .args(["demo", "--keep"])
        .arg(dir.path().join("demo"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("verify after recovery: ok"), "{text}");
}
