//! The spool under crashes. Events spooled while the journal could not take them are merged
//! by the next session open, in spool order, after a `sjournal.spool-merge` record, and then
//! deleted. A crash at each step of the merge is simulated through the storage seam: the
//! operation after that step fails (the merge stops there, leaving what a dead process would
//! leave; for a torn batch, a simulated disk keeps part of the unsynced write). After the next
//! open every spooled event is in the journal exactly once, in order. Damaged spool files are
//! set aside, never deleted, and named in the journal.

use crate::support;

use std::path::Path;

use sjournal::format::payload::{
    self, encode_event_json, Exec, ExecContext, ExecOutcome, SpoolMerge, KIND_EXEC,
    KIND_SPOOL_MERGE,
};
use sjournal::format::spool::Attempted;
use sjournal::journal::{spool, Root, Writer, WriterOptions};
use sjournal::session::{keep_elsewhere, Session};
use sjournal::testing::{FaultPlan, Faulty, FaultyFs, JournalWith, Op, PendingFate, SimDisk};

const S: &str = "sess-1";

fn event(n: u32) -> Vec<u8> {
    encode_event_json(&format!(
        r#"{{"session_id":"{S}","hook_event_name":"PostToolUse","n":{n}}}"#
    ))
}

fn spool_records(root: &Root, session: &str, records: &[(&str, &[u8])], reason: &str) {
    keep_elsewhere(
        root,
        session,
        records,
        &[],
        reason,
        None,
        &WriterOptions::default(),
    )
    .unwrap();
}

fn spool_attempted(root: &Root, n: u32, reason: &str, at: Attempted) {
    let e = event(n);
    let items = [("PostToolUse", e.as_slice())];
    keep_elsewhere(
        root,
        S,
        &items,
        &[],
        reason,
        Some(at),
        &WriterOptions::default(),
    )
    .unwrap();
}

fn spool_events(root: &Root, ns: &[u32]) {
    for &n in ns {
        spool_records(root, S, &[("PostToolUse", &event(n))], "lock held");
    }
}

/// The `n` of every PostToolUse in the journal, in order.
fn ns(root: &Root) -> Vec<u64> {
    support::records(root.dir(), S)
        .into_iter()
        .filter(|(_, k, _)| k == "PostToolUse")
        .map(|(_, _, j)| {
            serde_json::from_str::<serde_json::Value>(&j).unwrap()["n"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

fn open(root: &Root) -> Session {
    Session::open(root, S, &WriterOptions::default()).unwrap()
}

fn writer(root: &Root) -> Writer {
    Writer::open(root, S, &WriterOptions::default()).unwrap()
}

/// Opens the session with the `n`-th operation `pick` selects failing, as if the process had
/// died right before it: what the merge did up to there stays on disk.
fn crash_at(root: &Root, n: u64, pick: impl Fn(Op, &Path) -> bool + Send + Sync + 'static) {
    let fs = FaultyFs::new();
    fs.fail_nth(n, libc::EIO, pick);
    let _ = Session::open(root, S, &WriterOptions::with_fs(fs.clone()));
    assert_eq!(fs.injected(), 1, "the crash point was reached");
}

fn name_of(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// A session whose journal file is `disk`, its syncs failing as `plan` says.
fn open_on(root: &Root, disk: &SimDisk, plan: FaultPlan) -> sjournal::Result<Session> {
    let d = disk.clone();
    let fs = JournalWith::new(move |_, _| Box::new(Faulty::new(d.clone(), plan.clone()).0));
    Session::open(root, S, &WriterOptions::with_fs(fs))
}

#[test]
fn spooled_then_merged_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let mut w = writer(&root);
    w.append("PostToolUse", &event(0)).unwrap();
    drop(w);
    spool_events(&root, &[1, 2, 3]);
    assert_eq!(spool::pending(&root, S).unwrap().len(), 3);
    let s = open(&root);
    assert_eq!(s.merge_report().merged.len(), 3);
    s.commit(&sjournal::session::Batch::one("PostToolUse", event(4)))
        .unwrap();
    assert_eq!(ns(&root), [0, 1, 2, 3, 4]);
    let recs = support::records(dir.path(), S);
    assert_eq!(recs[1].1, KIND_SPOOL_MERGE);
    let merge: SpoolMerge = serde_json::from_str(&recs[1].2).unwrap();
    assert_eq!(merge.entries.len(), 3);
    assert!(merge
        .entries
        .iter()
        .all(|e| e.reason == "lock held" && e.records.len() == 1));
    assert!(spool::pending(&root, S).unwrap().is_empty());
    support::verify_all(dir.path());
}

#[test]
fn crash_after_intent_before_batch() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    spool_events(&root, &[1, 2]);
    // The journal's first write is its header; the second is the merge batch.
    let journal = root.session(S).unwrap().journal;
    crash_at(&root, 2, move |op, p| op == Op::Write && p == journal);
    let spool_dir = root.session(S).unwrap().spool;
    assert!(
        spool_dir.join("merge.intent").exists(),
        "the intent is written"
    );
    let w = open(&root);
    assert!(w.merge_report().settled.is_empty());
    assert_eq!(w.merge_report().merged.len(), 2);
    drop(w);
    assert_eq!(ns(&root), [1, 2]);
}

#[test]
fn crash_after_journal_sync_before_spool_delete() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    spool_events(&root, &[1, 2]);
    crash_at(&root, 1, |op, p| {
        op == Op::Remove && name_of(p).ends_with(".spool")
    });
    assert_eq!(
        spool::pending(&root, S).unwrap().len(),
        2,
        "files still there"
    );
    assert_eq!(ns(&root), [1, 2]);
    let w = open(&root);
    assert_eq!(w.merge_report().settled.len(), 2, "recognised as merged");
    assert!(w.merge_report().merged.is_empty(), "not merged again");
    drop(w);
    assert_eq!(ns(&root), [1, 2]);
    assert!(spool::pending(&root, S).unwrap().is_empty());
    support::verify_all(dir.path());
}

#[test]
fn crash_after_spool_delete_before_intent_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    spool_events(&root, &[1, 2]);
    crash_at(&root, 1, |op, p| {
        op == Op::Remove && name_of(p) == "merge.intent"
    });
    assert!(
        spool::pending(&root, S).unwrap().is_empty(),
        "files deleted"
    );
    // A new event spooled meanwhile is merged; the old ones are not repeated.
    spool_events(&root, &[3]);
    drop(open(&root));
    assert_eq!(ns(&root), [1, 2, 3]);
}

/// The merge batch is torn by a crash: the merge record and the first event reached the disk,
/// the second event only in part. Recovery cuts the torn record; the open after it finds the
/// first spool file merged (deleted, not repeated) and merges the second.
#[test]
fn torn_merge_batch() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let disk = SimDisk::new();
    spool_events(&root, &[1, 2]);
    // Sync 1 is the new journal's header; sync 2 the merge batch, which fails.
    let r = open_on(
        &root,
        &disk,
        FaultPlan {
            fail_sync: Some(2),
            ..Default::default()
        },
    );
    assert!(r.is_err(), "the merge's fsync failed, so the open fails");
    let header_len = disk.durable().len();
    let batch = disk.visible().len() - header_len;
    // Keep all but the last 10 bytes of the batch: the second event is torn.
    disk.crash(|_, len| PendingFate::Torn(len.min(batch) - 10));
    let w = open_on(&root, &disk, FaultPlan::default()).unwrap();
    let rep = w.merge_report().clone();
    assert!(w.writer().recovery().is_some(), "the torn record was cut");
    assert_eq!(rep.settled.len(), 1, "{rep:?}");
    assert_eq!(rep.merged.len(), 1, "{rep:?}");
    drop(w);
    // Read the simulated journal back through a file to check it.
    let paths = root.session(S).unwrap();
    std::fs::write(&paths.journal, disk.durable()).unwrap();
    assert_eq!(ns(&root), [1, 2]);
    let kinds: Vec<String> = support::records(dir.path(), S)
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        kinds,
        [
            KIND_SPOOL_MERGE,
            "PostToolUse",
            "sjournal.recovered",
            KIND_SPOOL_MERGE,
            "PostToolUse"
        ]
    );
}

#[test]
fn damaged_spool_files_are_set_aside_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    spool_events(&root, &[1]);
    let pending = spool::pending(&root, S).unwrap();
    let spool_dir = pending[0].parent().unwrap().to_owned();
    // A torn copy of a real spool file, and one of another session.
    let good = std::fs::read(&pending[0]).unwrap();
    std::fs::write(
        spool_dir.join("00000000000000000000-0000000001-0000000001.spool"),
        &good[..good.len() - 3],
    )
    .unwrap();
    spool_records(&root, "other", &[("PostToolUse", &event(9))], "x");
    let other = spool::pending(&root, "other").unwrap();
    std::fs::rename(
        &other[0],
        spool_dir.join("99999999999999999999-0000000001-0000000001.spool"),
    )
    .unwrap();
    let w = open(&root);
    assert_eq!(w.merge_report().damaged.len(), 2, "{:?}", w.merge_report());
    drop(w);
    assert_eq!(ns(&root), [1]);
    let recs = support::records(dir.path(), S);
    let merge: SpoolMerge = serde_json::from_str(&recs[0].2).unwrap();
    assert_eq!(merge.damaged.len(), 2);
    let kept = std::fs::read_dir(&spool_dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".damaged")
        })
        .count();
    assert_eq!(kept, 2, "damaged files are kept");
}

/// An exec record spooled with its event gets the event's seq when merged.
#[test]
fn spooled_exec_record_points_at_its_event() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    drop(writer(&root));
    let exec = Exec {
        event_seq: 0,
        name: "h".into(),
        command: vec!["true".into()],
        outcome: ExecOutcome::Exited,
        exit_code: Some(0),
        signal: None,
        duration_ms: 1,
        stdout: "out".into(),
        stdout_truncated: false,
        stderr: String::new(),
        context: ExecContext::Ephemeral,
        error: None,
    };
    let e = payload::encode_system(&exec);
    spool_records(
        &root,
        S,
        &[("PostToolUse", &event(1)), (KIND_EXEC, &e)],
        "lock",
    );
    drop(open(&root));
    let recs = support::records(dir.path(), S);
    let (ev_seq, _, _) = recs.iter().find(|r| r.1 == "PostToolUse").unwrap();
    let (_, _, j) = recs.iter().find(|r| r.1 == KIND_EXEC).unwrap();
    let got: Exec = serde_json::from_str(j).unwrap();
    assert_eq!(got.event_seq, *ev_seq);
}

/// An append whose fsync failed may or may not have reached the journal; the hook spools the
/// event with where it was written. If the record is there after all, the merge does not
/// repeat it; if it is not, the merge puts it in.
#[test]
fn failed_append_spooled_with_its_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let mut w = writer(&root);
    w.append("PostToolUse", &event(0)).unwrap();
    // Event 1: the write reached the file (here: it simply succeeded), the caller saw a failure.
    let at = Attempted {
        offset: w.len(),
        seq: w.next_seq(),
    };
    w.append("PostToolUse", &event(1)).unwrap();
    spool_attempted(&root, 1, "fsync failed", at);
    // Event 2: the write never reached the file.
    let at = Attempted {
        offset: w.len(),
        seq: w.next_seq(),
    };
    spool_attempted(&root, 2, "write failed", at);
    drop(w);
    let w = open(&root);
    assert_eq!(w.merge_report().settled.len(), 1, "{:?}", w.merge_report());
    assert_eq!(w.merge_report().merged.len(), 1);
    drop(w);
    assert_eq!(ns(&root), [0, 1, 2]);
    assert!(spool::pending(&root, S).unwrap().is_empty());
}

/// A merge wrote its batch but died before its sync (here: the sync failed). The next open
/// finds the batch in the journal and deletes the spool files; it must make the batch durable
/// first, or a crash right after would leave neither the journal records nor the spool files.
#[test]
fn settling_syncs_the_interrupted_batch_before_deleting_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let disk = SimDisk::new();
    spool_events(&root, &[1, 2]);
    // Sync 1 is the new journal's header; sync 2 the merge batch, which fails.
    let r = open_on(
        &root,
        &disk,
        FaultPlan {
            fail_sync: Some(2),
            ..Default::default()
        },
    );
    assert!(r.is_err());
    assert!(
        disk.pending_writes() > 0,
        "the batch is written, not synced"
    );
    let w = open_on(&root, &disk, FaultPlan::default()).unwrap();
    assert_eq!(w.merge_report().settled.len(), 2, "{:?}", w.merge_report());
    drop(w);
    assert!(spool::pending(&root, S).unwrap().is_empty());
    // Power loss now: only what was synced survives.
    disk.crash(|_, _| PendingFate::Lost);
    let paths = root.session(S).unwrap();
    std::fs::write(&paths.journal, disk.durable()).unwrap();
    assert_eq!(ns(&root), [1, 2]);
}

/// The same for a failed append spooled with its attempt: the record found at the attempt is
/// made durable before its spool file is deleted unmerged.
#[test]
fn a_found_attempt_is_synced_before_its_spool_file_goes() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let disk = SimDisk::new();
    // Sync 1: header; sync 2: event 0; sync 3: event 1, which fails.
    let d = disk.clone();
    let fs = JournalWith::new(move |_, _| {
        Box::new(
            Faulty::new(
                d.clone(),
                FaultPlan {
                    fail_sync: Some(3),
                    ..Default::default()
                },
            )
            .0,
        )
    });
    let mut w = Writer::open(&root, S, &WriterOptions::with_fs(fs)).unwrap();
    w.append("PostToolUse", &event(0)).unwrap();
    let at = Attempted {
        offset: w.len(),
        seq: w.next_seq(),
    };
    assert!(w.append("PostToolUse", &event(1)).is_err());
    drop(w);
    spool_attempted(&root, 1, "fsync failed", at);
    let w = open_on(&root, &disk, FaultPlan::default()).unwrap();
    assert_eq!(w.merge_report().settled.len(), 1, "{:?}", w.merge_report());
    drop(w);
    disk.crash(|_, _| PendingFate::Lost);
    let paths = root.session(S).unwrap();
    std::fs::write(&paths.journal, disk.durable()).unwrap();
    assert_eq!(ns(&root), [0, 1]);
}
