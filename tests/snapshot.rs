//! Snapshots that must not be trusted: corrupt (body, header, cut short), of a stale format or
//! fold version, ahead of a journal that is now shorter, taken of another journal, or a
//! symlink. Each is detected, reported as a warning in `LoadInfo`, and the state is rebuilt by
//! a full replay, byte-identical to a replay without any snapshot. Also: written files are
//! 0600 and never follow a link; `--at` before the snapshot replays from the start.

use crate::support;

use std::os::unix::fs::PermissionsExt;

use sjournal::fold::FOLD_VERSION;
use sjournal::journal::Root;
use sjournal::snapshot::{
    self, load_state, maybe_snapshot, LoadOptions, SnapshotHeader, SnapshotUse, HEADER_LEN,
};
use support::{event, replay, temp_root, write_journal};

const S: &str = "snap-session";

fn records(n: usize, from: usize) -> Vec<(String, Vec<u8>)> {
    (from..from + n)
        .map(|i| {
            let raw = match i % 3 {
                0 => format!(r#"{{"hook_event_name":"UserPromptSubmit","session_id":"{S}","prompt":"p{i}"}}"#),
                1 => format!(r#"{{"hook_event_name":"PreToolUse","session_id":"{S}","tool_name":"Edit","tool_use_id":"t{i}","tool_input":{{"file_path":"/f{}"}}}}"#, i % 5),
                _ => format!(r#"{{"hook_event_name":"PostToolUse","session_id":"{S}","tool_name":"Edit","tool_use_id":"t{}","tool_input":{{"file_path":"/f{}"}}}}"#, i - 1, (i - 1) % 5),
            };
            event(&raw)
        })
        .collect()
}

/// A journal of `n` records and a snapshot at `at`.
fn setup(n: usize, at: u64) -> (tempfile::TempDir, Root) {
    let (dir, root) = temp_root();
    write_journal(&root, S, &records(n, 0), 1_700_000_000_000_000_000);
    snap_at(&root, at);
    (dir, root)
}

fn snap_at(root: &Root, at: u64) {
    let opts = LoadOptions {
        at: Some(at),
        use_snapshot: false,
        deadline: None,
    };
    let (s, info) = load_state(root, S, &opts).unwrap();
    snapshot::write(&root.session(S).unwrap(), &s, &info.head.unwrap()).unwrap();
}

fn snap_path(root: &Root) -> std::path::PathBuf {
    root.session(S).unwrap().snapshot
}

/// Loads, expecting the snapshot to be rejected with `why` in the reason, and the state to be
/// the full replay.
fn assert_rejected(root: &Root, why: &str) {
    let (state, info) = load_state(root, S, &LoadOptions::latest()).unwrap();
    match &info.snapshot {
        SnapshotUse::Rejected { reason: r } => {
            assert!(r.contains(why), "reason {r:?} lacks {why:?}")
        }
        other => panic!("snapshot not rejected ({why}): {other:?}"),
    }
    assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
    assert!(info.warnings[0].contains("replaying the journal in full"));
    assert_eq!(state.encode(), replay(root, S).encode());
    assert_eq!(info.tail_records, state.seq);
}

/// After a rejection the hook's `maybe_snapshot` replaces the bad file at once (however far
/// the next regular snapshot is), and the new one is used.
fn assert_rebuilds(root: &Root) {
    let (state, info) = load_state(root, S, &LoadOptions::latest()).unwrap();
    let w = maybe_snapshot(&root.session(S).unwrap(), &state, &info, u64::MAX).unwrap();
    assert_eq!(w.unwrap().seq, state.seq);
    let (again, info) = load_state(root, S, &LoadOptions::latest()).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::Used { seq: state.seq });
    assert_eq!(again.encode(), state.encode());
}

fn rewrite_header(root: &Root, f: impl FnOnce(&mut SnapshotHeader)) {
    let p = snap_path(root);
    let mut b = std::fs::read(&p).unwrap();
    let mut h = SnapshotHeader::decode(&b).unwrap();
    f(&mut h);
    b[..HEADER_LEN].copy_from_slice(&h.encode());
    std::fs::write(&p, b).unwrap();
}

#[test]
fn valid_snapshot_is_used_and_saves_the_prefix() {
    let (_d, root) = setup(300, 200);
    let (state, info) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::Used { seq: 200 });
    assert_eq!(info.tail_records, 100);
    assert!(info.warnings.is_empty());
    assert_eq!(state.encode(), replay(&root, S).encode());
    let mode = std::fs::metadata(snap_path(&root))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn corrupt_body_is_rejected() {
    let (_d, root) = setup(120, 90);
    let p = snap_path(&root);
    let mut b = std::fs::read(&p).unwrap();
    let last = b.len() - 1;
    b[last] ^= 0x40;
    std::fs::write(&p, b).unwrap();
    assert_rejected(&root, "body hash");
    assert_rebuilds(&root);
}

#[test]
fn corrupt_header_is_rejected() {
    let (_d, root) = setup(120, 90);
    let p = snap_path(&root);
    let mut b = std::fs::read(&p).unwrap();
    b[20] ^= 1;
    std::fs::write(&p, b).unwrap();
    assert_rejected(&root, "CRC");
}

#[test]
fn truncated_snapshot_is_rejected() {
    let (_d, root) = setup(120, 90);
    let p = snap_path(&root);
    let b = std::fs::read(&p).unwrap();
    std::fs::write(&p, &b[..b.len() / 2]).unwrap();
    assert_rejected(&root, "header says");
    std::fs::write(&p, &b[..10]).unwrap();
    assert_rejected(&root, "shorter than a snapshot header");
}

#[test]
fn stale_fold_version_is_rejected() {
    let (_d, root) = setup(120, 90);
    rewrite_header(&root, |h| h.fold_version = FOLD_VERSION - 1);
    assert_rejected(&root, "fold version");
    assert_rebuilds(&root);
}

#[test]
fn unknown_format_version_is_rejected() {
    let (_d, root) = setup(120, 90);
    rewrite_header(&root, |h| h.format_version += 1);
    assert_rejected(&root, "snapshot format version");
}

#[test]
fn state_hash_must_match_the_body() {
    let (_d, root) = setup(120, 90);
    rewrite_header(&root, |h| h.state_hash.0[0] ^= 1);
    assert_rejected(&root, "state hash");
}

#[test]
fn snapshot_ahead_of_a_shorter_journal_is_rejected() {
    let (_d, root) = temp_root();
    write_journal(&root, S, &records(100, 0), 1_700_000_000_000_000_000);
    let journal = root.session(S).unwrap().journal;
    let short = std::fs::read(&journal).unwrap();
    write_journal(&root, S, &records(150, 100), 1_700_000_100_000_000_000);
    snap_at(&root, 230);
    // The journal goes back to its first 100 records (restored from a backup, say).
    std::fs::write(&journal, &short).unwrap();
    assert_rejected(&root, "shorter than the snapshot says");
    let (state, _) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert_eq!(state.seq, 100);
    assert_rebuilds(&root);
}

#[test]
fn snapshot_of_another_journal_is_rejected() {
    // Same session id, same records, another file: the chain (bound to the header, which
    // holds the creation time) differs.
    let (_d, root) = setup(120, 60);
    let (_d2, other) = temp_root();
    // Headers record their creation time in nanoseconds; a pause makes sure the two differ.
    std::thread::sleep(std::time::Duration::from_millis(2));
    write_journal(&other, S, &records(120, 0), 1_700_000_000_000_000_000);
    std::fs::copy(
        other.session(S).unwrap().journal,
        root.session(S).unwrap().journal,
    )
    .unwrap();
    assert_rejected(&root, "chain hash");
}

#[test]
fn snapshot_offset_pointing_elsewhere_is_rejected() {
    let (_d, root) = setup(120, 60);
    rewrite_header(&root, |h| h.frame_offset += 1);
    assert_rejected(&root, "no valid record");
    rewrite_header(&root, |h| {
        h.frame_offset -= 1;
        h.seq += 1
    });
    assert_rejected(&root, "not seq 61");
}

#[test]
fn symlinked_snapshot_is_neither_read_nor_followed() {
    let (d, root) = setup(120, 60);
    let p = snap_path(&root);
    let target = d.path().join("elsewhere.snap");
    std::fs::rename(&p, &target).unwrap();
    std::os::unix::fs::symlink(&target, &p).unwrap();
    assert_rejected(&root, "symlink");
    let before = std::fs::read(&target).unwrap();
    snap_at(&root, 100);
    assert_eq!(
        std::fs::read(&target).unwrap(),
        before,
        "the link's target is untouched"
    );
    assert!(!std::fs::symlink_metadata(&p)
        .unwrap()
        .file_type()
        .is_symlink());
    let (_, info) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::Used { seq: 100 });
}

#[test]
fn at_before_the_snapshot_replays_from_the_start() {
    let (_d, root) = setup(120, 100);
    let opts = LoadOptions {
        at: Some(50),
        ..LoadOptions::latest()
    };
    let (state, info) = load_state(&root, S, &opts).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::PastTarget { seq: 100 });
    assert!(info.warnings.is_empty());
    assert_eq!(state.seq, 50);
    let opts = LoadOptions {
        at: Some(110),
        ..LoadOptions::latest()
    };
    let (state, info) = load_state(&root, S, &opts).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::Used { seq: 100 });
    assert_eq!((state.seq, info.tail_records), (110, 10));
}

#[test]
fn maybe_snapshot_writes_only_when_due() {
    let (_d, root) = setup(120, 100);
    let paths = root.session(S).unwrap();
    let (state, info) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert!(maybe_snapshot(&paths, &state, &info, 21).unwrap().is_none());
    let w = maybe_snapshot(&paths, &state, &info, 20).unwrap().unwrap();
    assert_eq!((w.seq, w.state_hash), (120, state.state_hash()));
    let no_temp_left = std::fs::read_dir(&paths.dir)
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp"));
    assert!(no_temp_left);
}
