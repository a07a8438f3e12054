//! Rollback with the high-water mark rolled back too. Someone with write
//! access to the root cuts acknowledged records off a journal (at a record boundary, by putting
//! an older copy back, or by deleting it) and deals with the mark so that it cannot tell:
//! deletes it, truncates it (to nothing, or part of it), corrupts it, or puts its older copy
//! back. Every combination must be a finding naming the witnesses that disagree (the mark's
//! copy and the tail hint in the lock file, and the mark itself when it is gone or ahead), in
//! the human output and in `--json`; the next writer must not reuse the lost seqs (it refuses:
//! the event goes to the rescue journal, and the hook still exits 0); and `repair` must settle
//! it, recording what the witnesses named.
//!
//! Then the witnesses one at a time: the tail hint alone (the mark and its copy rolled back as
//! well: what a power loss before a sync also leaves, and says so), the snapshot alone (the
//! lock file put back too), and a ship cursor alone (with the `remote` feature).

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use sjournal::format::payload::{decode_system, Repaired, KIND_REPAIRED};
use sjournal::journal::hwm;

const S: &str = "rb";

#[derive(Debug, Clone, Copy)]
enum JournalOp {
    /// Cut at the end of record 2.
    CutAtRecordBoundary,
    /// The copy taken at seq 3 put back.
    OlderCopy,
    /// Deleted.
    Deleted,
}

#[derive(Debug, Clone, Copy)]
enum MarkOp {
    Deleted,
    TruncatedToNothing,
    TruncatedToPart,
    Corrupted,
    /// The copy taken at seq 3 put back.
    OlderCopy,
}

const JOURNAL_OPS: [JournalOp; 3] = [
    JournalOp::CutAtRecordBoundary,
    JournalOp::OlderCopy,
    JournalOp::Deleted,
];
const MARK_OPS: [MarkOp; 5] = [
    MarkOp::Deleted,
    MarkOp::TruncatedToNothing,
    MarkOp::TruncatedToPart,
    MarkOp::Corrupted,
    MarkOp::OlderCopy,
];

struct Session {
    _dir: tempfile::TempDir,
    root: PathBuf,
    journal: PathBuf,
    mark: PathBuf,
    lock: PathBuf,
    /// Journal, mark and lock file as they were at seq 3.
    at3: (Vec<u8>, Vec<u8>, Vec<u8>),
}

fn append(root: &Path, i: usize) -> Output {
    support::run(
        root,
        &["append", "--session", S],
        format!(r#"{{"hook_event_name":"Stop","i":{i}}}"#).as_bytes(),
    )
}

/// A session of 5 records appended through the binary, with copies of its files at seq 3.
fn session() -> Session {
    let dir = support::scratch();
    let root = dir.path().to_owned();
    for i in 0..3 {
        assert!(append(&root, i).status.success());
    }
    let journal = root.join(format!("sessions/{S}.sjl"));
    let mark = hwm::path_for(&journal);
    let lock = root.join(format!("sessions/{S}.lock"));
    let at3 = (
        fs::read(&journal).unwrap(),
        fs::read(&mark).unwrap(),
        fs::read(&lock).unwrap(),
    );
    for i in 3..5 {
        assert!(append(&root, i).status.success());
    }
    Session {
        _dir: dir,
        root,
        journal,
        mark,
        lock,
        at3,
    }
}

fn set_len(path: &Path, len: u64) {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

impl Session {
    fn roll_back(&self, j: JournalOp, m: MarkOp) {
        match j {
            JournalOp::CutAtRecordBoundary => {
                let p = support::parse(&support::read(&self.journal));
                set_len(&self.journal, p.records[1].end);
            }
            JournalOp::OlderCopy => fs::write(&self.journal, &self.at3.0).unwrap(),
            JournalOp::Deleted => fs::remove_file(&self.journal).unwrap(),
        }
        match m {
            MarkOp::Deleted => fs::remove_file(&self.mark).unwrap(),
            MarkOp::TruncatedToNothing => set_len(&self.mark, 0),
            MarkOp::TruncatedToPart => set_len(&self.mark, 20),
            MarkOp::Corrupted => {
                let mut b = fs::read(&self.mark).unwrap();
                b[12] ^= 0x01;
                fs::write(&self.mark, b).unwrap();
            }
            MarkOp::OlderCopy => fs::write(&self.mark, &self.at3.1).unwrap(),
        }
    }

    fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        support::run(&self.root, args, stdin)
    }

    /// The journal's records now (none if it is gone or empty).
    fn last_seq(&self) -> u64 {
        match fs::read(&self.journal) {
            Ok(b) if !b.is_empty() => support::parse(&b).records.last().map_or(0, |r| r.seq),
            _ => 0,
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The witnesses `verify --json` lists as disagreeing with the journal: (kind, verdict).
fn disagreeing(json: &Value) -> Vec<(String, String)> {
    json["witnesses"]
        .as_array()
        .unwrap_or_else(|| panic!("no witnesses: {json}"))
        .iter()
        .filter(|w| w["verdict"] != "agrees" && w["verdict"] != "not-checked")
        .map(|w| {
            (
                w["kind"].as_str().unwrap().to_owned(),
                w["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Every combination of a journal rollback and a mark dealt with: a finding naming the
/// witnesses (human and JSON, `--session` and `--all`), no seq reused by `append` or the hook,
/// and `repair` settles it.
#[test]
fn every_rollback_with_the_mark_gone_or_rolled_back_is_found() {
    for j in JOURNAL_OPS {
        for m in MARK_OPS {
            let case = format!("{j:?} + mark {m:?}");
            let s = session();
            s.roll_back(j, m);
            let last = s.last_seq();
            assert!(last < 5, "{case}");

            // verify, human: exit 1, "rolled back", every disagreeing witness on its own line.
            let out = s.run(&["verify", "--session", S], b"");
            let t = text(&out);
            assert_eq!(out.status.code(), Some(1), "{case}: {t}");
            assert!(t.contains("rolled back"), "{case}: {t}");
            for w in ["mark's copy in rb.lock", "tail hint in rb.lock"] {
                assert!(
                    t.lines()
                        .any(|l| l.contains("witness:") && l.contains(w) && l.contains("AHEAD")),
                    "{case}: no witness line for {w}: {t}"
                );
            }
            if !matches!(m, MarkOp::OlderCopy) {
                assert!(
                    t.lines()
                        .any(|l| l.contains("witness: high-water mark") && l.contains("MISSING")),
                    "{case}: {t}"
                );
            }

            // verify --json: the same, as data.
            let out = s.run(&["verify", "--session", S, "--json"], b"");
            assert_eq!(out.status.code(), Some(1), "{case}");
            let report: Value = serde_json::from_slice(
                out.stdout
                    .split(|&b| b == b'\n')
                    .next()
                    .expect("a report line"),
            )
            .unwrap_or_else(|e| panic!("{case}: {e}: {}", text(&out)));
            assert_eq!(report["ok"], false, "{case}: {report}");
            assert_eq!(report["rolled_back"], true, "{case}: {report}");
            let against = disagreeing(&report);
            for kind in ["mark-copy", "tail-hint"] {
                assert!(
                    against.contains(&(kind.to_owned(), "ahead".to_owned())),
                    "{case}: {against:?}"
                );
            }
            let mark_verdict = match (j, m) {
                (_, MarkOp::OlderCopy) if last < 3 => Some("ahead"),
                (_, MarkOp::OlderCopy) => None,
                _ => Some("missing"),
            };
            assert_eq!(
                against
                    .iter()
                    .find(|(k, _)| k == "mark")
                    .map(|(_, v)| v.as_str()),
                mark_verdict,
                "{case}: {against:?}"
            );

            // verify --all finds it too (a deleted journal included).
            let out = s.run(&["verify", "--all"], b"");
            assert_eq!(out.status.code(), Some(1), "{case}: {}", text(&out));
            assert!(text(&out).contains("rolled back"), "{case}");

            // The next append does not reuse a lost seq: refused, kept in the rescue journal.
            let out = append(&s.root, 99);
            let t = text(&out);
            assert_eq!(out.status.code(), Some(1), "{case}: {t}");
            assert!(
                t.contains("rolled back") && t.contains("rescue") && t.contains("repair"),
                "{case}: {t}"
            );
            assert_eq!(s.last_seq(), last, "{case}: a seq was reused");
            // Nor the hook (which still exits 0).
            let hooked = format!(r#"{{"session_id":"{S}","hook_event_name":"Stop","n":1}}"#);
            let out = s.run(&["hook"], hooked.as_bytes());
            assert_eq!(out.status.code(), Some(0), "{case}: {}", text(&out));
            assert_eq!(s.last_seq(), last, "{case}: the hook reused a seq");
            let rescue = support::parse(&support::read(
                &s.root.join(format!("sessions/{S}.rescue.sjl")),
            ));
            assert_eq!(rescue.records.len(), 2, "{case}");

            // repair settles it: the witnesses' record is kept in `sjournal.repaired`, and the
            // session verifies and takes appends again, after every seq ever acknowledged.
            let out = s.run(&["repair", "--session", S], b"");
            assert!(out.status.success(), "{case}: {}", text(&out));
            let out = s.run(&["verify", "--session", S], b"");
            assert_eq!(out.status.code(), Some(0), "{case}: {}", text(&out));
            let repaired: Vec<Repaired> = support::payloads(&s.root, S, KIND_REPAIRED)
                .into_iter()
                .map(|(seq, _, p)| decode_system(seq, &p).unwrap())
                .collect();
            assert_eq!(repaired.len(), 1, "{case}");
            let acked = repaired[0]
                .acknowledged
                .as_ref()
                .expect("what was acknowledged");
            // The furthest acknowledged record any witness named (the mark's copy: seq 5).
            assert_eq!(acked.seq, 5, "{case}: {:?}", repaired[0]);
            assert!(
                repaired[0].problem.contains("rolled back"),
                "{case}: {:?}",
                repaired[0]
            );
            assert!(append(&s.root, 100).status.success(), "{case}");
        }
    }
}

/// The mark and its copy rolled back with the journal, the tail hint left: it alone names the
/// later records. That is also what a power loss leaves when it drops records written but not
/// yet synced after the hint reached the disk; verify says both, and the writer refuses rather
/// than reuse the seqs (repair settles it).
#[test]
fn the_tail_hint_alone_names_the_lost_records() {
    let s = session();
    let mut lock = fs::read(&s.lock).unwrap();
    let copy_at = hwm::COPY_AT as usize;
    let len = sjournal::format::mark::LEN;
    lock[copy_at..copy_at + len].copy_from_slice(&s.at3.2[copy_at..copy_at + len]);
    fs::write(&s.lock, &lock).unwrap();
    fs::write(&s.journal, &s.at3.0).unwrap();
    fs::write(&s.mark, &s.at3.1).unwrap();

    let out = s.run(&["verify", "--session", S, "--json"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(
        disagreeing(&report),
        [("tail-hint".to_owned(), "ahead".to_owned())]
    );
    let what = report["problem"]["what"].as_str().unwrap();
    assert!(
        what.contains("later records were written") && what.contains("power loss"),
        "{what}"
    );
    let out = append(&s.root, 9);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("tail hint"), "{}", text(&out));
    assert_eq!(s.last_seq(), 3);
    assert!(s.run(&["repair", "--session", S], b"").status.success());
    assert_eq!(
        s.run(&["verify", "--session", S], b"").status.code(),
        Some(0)
    );
}

/// The journal, its mark and its whole lock file put back together: the snapshot still names
/// the later record. verify names it, the writer refuses, and repair sets the snapshot aside
/// (kept) once the journal no longer holds its record.
#[test]
fn the_snapshot_alone_catches_a_rollback_of_the_journal_and_the_lock_file() {
    let s = session();
    let out = s.run(&["snapshot", "--session", S], b"");
    assert!(out.status.success(), "{}", text(&out));
    fs::write(&s.journal, &s.at3.0).unwrap();
    fs::write(&s.mark, &s.at3.1).unwrap();
    fs::write(&s.lock, &s.at3.2).unwrap();

    let out = s.run(&["verify", "--session", S], b"");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.lines()
            .any(|l| l.contains("witness: snapshot rb.snap") && l.contains("AHEAD")),
        "{t}"
    );
    let out = s.run(&["verify", "--session", S, "--json"], b"");
    let report: Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(
        disagreeing(&report),
        [("snapshot".to_owned(), "ahead".to_owned())]
    );
    let out = append(&s.root, 9);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("snapshot"), "{}", text(&out));
    assert_eq!(s.last_seq(), 3);

    assert!(s.run(&["repair", "--session", S], b"").status.success());
    assert!(!s.root.join(format!("sessions/{S}.snap")).exists());
    let kept: Vec<_> = fs::read_dir(s.root.join("sessions"))
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains(".snap.superseded-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "the snapshot is kept aside");
    assert_eq!(
        s.run(&["verify", "--session", S], b"").status.code(),
        Some(0)
    );
}

/// Every local witness put back with the journal (mark, lock file, no snapshot): the ship
/// cursor still names the records shipped. Local `verify` names it; `verify --remote` names the
/// seqs the local journal lacks.
#[cfg(feature = "remote")]
#[test]
fn a_ship_cursor_catches_a_rollback_of_every_local_witness() {
    let s = session();
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    let out = s.run(&["ship", "--all", "--to", &url], b"");
    assert!(out.status.success(), "{}", text(&out));
    fs::write(&s.journal, &s.at3.0).unwrap();
    fs::write(&s.mark, &s.at3.1).unwrap();
    fs::write(&s.lock, &s.at3.2).unwrap();

    let out = s.run(&["verify", "--session", S], b"");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.lines()
            .any(|l| l.contains("witness: ship cursor rb.cursor") && l.contains("AHEAD")),
        "{t}"
    );
    assert!(t.contains(&url), "the destination is named: {t}");
    let out = s.run(&["verify", "--remote", &url], b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("lacks seq 4..=5"), "{}", text(&out));
}
