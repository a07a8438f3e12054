//! The session handle every write goes through. Its state — a snapshot and the records
//! after it, read through the writer's own storage — equals a full replay of the journal;
//! `preview` shows the state a batch will make without writing it, and `commit` makes exactly
//! that state. A snapshot that falls due is written after the commit (not under the lock),
//! checks out, and loads to the same state. A commit whose journal write fails (an I/O error
//! injected through the storage seam) spools the batch with where it was written, and the next
//! open merges it once.

use crate::support;

use sjournal::format::payload::encode_event_json;
use sjournal::journal::WriterOptions;
use sjournal::limits::SNAPSHOT_EVERY_RECORDS;
use sjournal::session::{Batch, Landed, Session};
use sjournal::snapshot::{load_state, LoadOptions, SnapshotUse};
use sjournal::testing::{FaultyFs, Op};

fn records(n: usize) -> Vec<(String, Vec<u8>)> {
    support::real_claude()
        .iter()
        .cycle()
        .take(n)
        .map(|f| support::event(&f.raw.replace("\"session_id\":\"", "\"session_id\":\"x")))
        .collect()
}

#[test]
fn state_preview_and_commit_agree_with_a_full_replay() {
    let (_dir, root) = support::temp_root();
    support::write_journal(&root, "s", &records(300), 1_700_000_000_000_000_000);
    let mut s = Session::open(&root, "s", &WriterOptions::default()).unwrap();
    assert_eq!(s.state().unwrap(), &support::replay(&root, "s"));

    let mut batch = Batch::new();
    for (k, p) in records(3) {
        batch.push(&k, p);
    }
    let preview = s.preview(&batch).unwrap();
    let committed = s.commit(&batch).unwrap();
    assert!(matches!(committed.landed, Landed::Journal { .. }));
    assert_eq!(committed.state.as_ref(), Some(&preview));
    assert_eq!(preview, support::replay(&root, "s"));
}

#[test]
fn a_due_snapshot_is_written_after_the_commit_and_loads_the_same_state() {
    let (_dir, root) = support::temp_root();
    let n = SNAPSHOT_EVERY_RECORDS as usize;
    support::write_journal(&root, "s", &records(n), 1_700_000_000_000_000_000);
    let mut s = Session::open(&root, "s", &WriterOptions::default()).unwrap();
    s.state().unwrap();
    let mut c = s
        .commit(&Batch::one(
            "Stop",
            encode_event_json(r#"{"hook_event_name":"Stop"}"#),
        ))
        .unwrap();
    let written = c.write_snapshot().expect("due").unwrap();
    assert_eq!(written.seq, n as u64 + 1);
    let (state, info) = load_state(&root, "s", &LoadOptions::latest()).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::Used { seq: n as u64 + 1 });
    assert_eq!(state, support::replay(&root, "s"));
    // The next session starts from it, and still agrees with a replay.
    let mut s = Session::open(&root, "s", &WriterOptions::default()).unwrap();
    assert_eq!(s.state().unwrap(), &support::replay(&root, "s"));
}

#[test]
fn a_failed_journal_write_is_spooled_and_merged_once() {
    let (_dir, root) = support::temp_root();
    support::write_journal(&root, "s", &records(5), 1_700_000_000_000_000_000);
    let fs = FaultyFs::new();
    let journal = root.session("s").unwrap().journal;
    fs.fail(libc::EIO, move |op, p| op == Op::Write && p == journal);
    let s = Session::open(&root, "s", &WriterOptions::with_fs(fs)).unwrap();
    let batch = Batch::one(
        "Stop",
        encode_event_json(r#"{"hook_event_name":"Stop","n":1}"#),
    );
    let c = s.commit(&batch).unwrap();
    let Landed::Spooled {
        fallback, reason, ..
    } = &c.landed
    else {
        panic!("{:?}", c.landed);
    };
    assert!(
        !fallback && reason.contains("Input/output error"),
        "{reason}"
    );
    let s = Session::open(&root, "s", &WriterOptions::default()).unwrap();
    assert_eq!(s.merge_report().merged.len(), 1);
    drop(s);
    let stops = support::payloads(root.dir(), "s", "Stop");
    assert_eq!(stops.len(), 1, "merged exactly once");
    support::verify_all(root.dir());
}
