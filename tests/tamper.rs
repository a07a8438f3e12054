//! Tampering: someone with write access edits a journal. Editing a record's payload (with or
//! without recomputing its CRC), deleting, reordering or inserting records (a duplicate, a
//! record copied from another session's journal, a forged record with a correct seq and
//! link), and swapping the session id in the header are each reported by verify at the
//! offset where the journal stops being consistent, by the library and by the CLI (`verify`
//! exits 1; `--json` carries the offset). Where verify points: a broken CRC at the edited
//! record; a recomputed CRC at the record after it (whose link to the edited one fails);
//! a deleted, moved or inserted record where the seq or the link first goes wrong.
//!
//! The limit of the chain alone, tested so that it stays documented: the chain proves each
//! record from the one after it, so an edit of the LAST record with a recomputed CRC, or the
//! deletion of the last records, leaves a chain that verifies. The high-water mark kept beside
//! the journal (`<stem>.hwm`) catches both ("rolled back"), and so do its copy and the tail
//! hint in the lock file when the mark is deleted too; an attacker who deletes every witness
//! leaves a missing mark (a finding) and is caught as a rollback only by a head hash kept
//! elsewhere (a checkpoint), and the tests show that the head verify reports does change.

use crate::support;

use std::fs;
use std::path::Path;

use sjournal::format::header::Header;
use sjournal::format::record;
use sjournal::journal::verify::witness::WitnessKind;
use sjournal::journal::{hwm, verify_file, Root};
use support::{fix_crc, parse, read, Rec};

const SESSION: &str = "tamper";

struct Fixture {
    _dir: tempfile::TempDir,
    root: Root,
    path: std::path::PathBuf,
    bytes: Vec<u8>,
    header_len: usize,
    recs: Vec<Rec>,
}

fn fixture() -> Fixture {
    fixture_of(SESSION)
}

impl Fixture {
    fn rec(&self, seq: u64) -> &[u8] {
        let r = &self.recs[seq as usize - 1];
        &self.bytes[r.offset as usize..r.end as usize]
    }

    /// The journal made of these parts, written over the original.
    fn write(&self, parts: &[&[u8]]) {
        fs::write(&self.path, parts.concat()).unwrap();
    }

    fn header(&self) -> &[u8] {
        &self.bytes[..self.header_len]
    }

    fn offset(&self, seq: u64) -> u64 {
        self.recs[seq as usize - 1].offset
    }
}

/// Verify (library and CLI) must report a problem at `offset`; returns the library's text.
fn assert_reported(root: &Root, session: &str, path: &Path, offset: u64, what: &str) -> String {
    let report = verify_file(path, None).unwrap();
    let p = report
        .problem
        .unwrap_or_else(|| panic!("{what}: verify found nothing"));
    assert!(!report.ok, "{what}");
    assert_eq!(p.offset, offset, "{what}: {}", p.what);
    assert!(
        !p.torn_tail,
        "{what}: tampering called a torn tail: {}",
        p.what
    );

    let out = support::sjournal(root.dir())
        .args(["verify", "--json", "--session", session])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
    let line = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(v["ok"], false, "{what}");
    assert_eq!(v["problem"]["offset"], offset, "{what}: {v}");
    p.what
}

/// Replaces a byte of the payload of record `seq`.
fn edit_payload(f: &Fixture, seq: u64, recompute_crc: bool) -> Vec<u8> {
    let mut b = f.bytes.clone();
    let r = &f.recs[seq as usize - 1];
    let (s, e) = (r.offset as usize, r.end as usize);
    // Inside the JSON text: "i":N -> another digit.
    let at = s + 4 + b[s..e].windows(4).position(|w| w == br#""i":"#).unwrap();
    b[at] = if b[at] == b'9' { b'8' } else { b'9' };
    if recompute_crc {
        fix_crc(&mut b, s, e);
        assert!(
            record::parse(&b[s..e]).is_ok(),
            "the edit must leave a valid frame"
        );
    }
    b
}

#[test]
fn edited_payload_without_crc_is_caught_at_the_record() {
    let f = fixture();
    for seq in 1..=5 {
        fs::write(&f.path, edit_payload(&f, seq, false)).unwrap();
        let what = assert_reported(&f.root, SESSION, &f.path, f.offset(seq), "edit");
        assert!(what.contains("CRC"), "{what}");
    }
}

#[test]
fn edited_payload_with_crc_is_caught_at_the_next_record() {
    let f = fixture();
    for seq in 1..=5 {
        fs::write(&f.path, edit_payload(&f, seq, true)).unwrap();
        let what = assert_reported(&f.root, SESSION, &f.path, f.offset(seq + 1), "edit+crc");
        assert!(what.contains("does not link"), "{what}");
    }
}

/// The last record, edited with its CRC recomputed: the chain alone cannot see it, the
/// high-water mark can, and so can its copy and the tail hint in the lock file when the mark is
/// deleted too; without any of them, the missing mark is the finding, and only the head hash
/// (which a checkpoint would pin) is different.
#[test]
fn edit_of_the_last_record_with_crc_needs_the_mark_or_a_checkpoint() {
    let f = fixture();
    let before = verify_file(&f.path, None).unwrap();
    fs::write(&f.path, edit_payload(&f, 6, true)).unwrap();
    let after = verify_file(&f.path, None).unwrap();
    assert!(!after.ok && after.rolled_back, "{after:?}");
    assert!(
        after.problem.unwrap().what.contains("rolled back: seq 6"),
        "the mark names the acknowledged record"
    );
    // The mark deleted too: the lock file's witnesses name the record replaced.
    fs::remove_file(hwm::path_for(&f.path)).unwrap();
    let after = verify_file(&f.path, None).unwrap();
    assert!(!after.ok && after.rolled_back, "{after:?}");
    let against: Vec<WitnessKind> = after
        .witnesses
        .iter()
        .filter(|w| w.verdict.disagrees())
        .map(|w| w.kind)
        .collect();
    assert_eq!(
        against,
        [
            WitnessKind::Mark,
            WitnessKind::MarkCopy,
            WitnessKind::TailHint
        ]
    );
    // Every witness gone (the lock file too): the missing mark is the finding; the head
    // exposes the edit.
    fs::remove_file(f.root.session(SESSION).unwrap().lock).unwrap();
    let after = verify_file(&f.path, None).unwrap();
    assert!(!after.ok && !after.rolled_back, "{after:?}");
    assert!(
        after
            .problem
            .unwrap()
            .what
            .contains("high-water mark is missing"),
        "the missing mark is a finding"
    );
    assert_eq!(after.records, 6);
    assert_ne!(
        after.head, before.head,
        "the head hash must expose the edit"
    );
    // Without the CRC it is caught (and looks like a torn write, which recovery quarantines,
    // when no witness says the record was acknowledged).
    fs::write(&f.path, edit_payload(&f, 6, false)).unwrap();
    let r = verify_file(&f.path, None).unwrap();
    assert_eq!(
        r.problem.map(|p| (p.offset, p.torn_tail)),
        Some((f.offset(6), true))
    );
}

#[test]
fn deleted_record_is_caught() {
    let f = fixture();
    for seq in 1..=5u64 {
        let mut parts = vec![f.header()];
        parts.extend((1..=6).filter(|&s| s != seq).map(|s| f.rec(s)));
        f.write(&parts);
        let what = assert_reported(&f.root, SESSION, &f.path, f.offset(seq), "delete");
        assert!(what.contains(&format!("seq {}", seq + 1)), "{what}");
    }
    // Deleting the last records: the mark says seq 6 was acknowledged.
    f.write(&[f.header(), f.rec(1), f.rec(2)]);
    let r = verify_file(&f.path, None).unwrap();
    assert!(!r.ok && r.rolled_back && r.records == 2, "{r:?}");
    // Without the mark, its copy and the tail hint in the lock file still say so.
    fs::remove_file(hwm::path_for(&f.path)).unwrap();
    let r = verify_file(&f.path, None).unwrap();
    assert!(!r.ok && r.rolled_back && r.records == 2, "{r:?}");
    // Without every witness it is the limit: a shorter journal with another head, and no
    // mark (a finding of its own, not a rollback).
    fs::remove_file(f.root.session(SESSION).unwrap().lock).unwrap();
    let r = verify_file(&f.path, None).unwrap();
    assert!(!r.ok && !r.rolled_back && r.records == 2, "{r:?}");
}

#[test]
fn reordered_records_are_caught() {
    let f = fixture();
    for seq in 1..=5u64 {
        let mut order: Vec<u64> = (1..=6).collect();
        order.swap(seq as usize - 1, seq as usize);
        let mut parts = vec![f.header()];
        parts.extend(order.iter().map(|&s| f.rec(s)));
        f.write(&parts);
        assert_reported(&f.root, SESSION, &f.path, f.offset(seq), "swap");
    }
}

#[test]
fn duplicated_record_is_caught() {
    let f = fixture();
    f.write(&[
        f.header(),
        f.rec(1),
        f.rec(2),
        f.rec(3),
        f.rec(3),
        f.rec(4),
        f.rec(5),
    ]);
    assert_reported(&f.root, SESSION, &f.path, f.offset(4), "duplicate");
}

/// A record copied from another session's journal, with the very seq it needs here, does not
/// link: its chain starts from the other journal's header.
#[test]
fn record_copied_from_another_journal_is_caught() {
    let f = fixture();
    let other = fixture_of("other-session");
    let foreign = {
        let r = &other.recs[3];
        &other.bytes[r.offset as usize..r.end as usize]
    };
    assert_eq!(other.recs[3].seq, 4);
    f.write(&[
        f.header(),
        f.rec(1),
        f.rec(2),
        f.rec(3),
        foreign,
        f.rec(5),
        f.rec(6),
    ]);
    let what = assert_reported(&f.root, SESSION, &f.path, f.offset(4), "foreign record");
    assert!(what.contains("does not link"), "{what}");
}

fn fixture_of(session: &str) -> Fixture {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let events: Vec<String> = (0..6)
        .map(|i| support::event_json(i, 30 + 20 * i))
        .collect();
    // Format 1: what its chain alone catches (format 2 also checks each payload's digest:
    // tests/erase.rs).
    support::start_v1(&root, session);
    let path = support::write_events(&root, session, &events);
    let bytes = read(&path);
    let p = parse(&bytes);
    Fixture {
        root,
        path,
        header_len: p.header.unwrap().1,
        recs: p.records,
        bytes,
        _dir: dir,
    }
}

/// A forged record that links correctly (seq 4, prev_hash of record 3) inserted in the middle:
/// the original record 4 after it no longer fits.
#[test]
fn forged_record_inserted_in_the_middle_is_caught() {
    let f = fixture();
    let mut forged = Vec::new();
    let p = sjournal::format::payload::encode_event_json(r#"{"forged":true}"#);
    record::encode(&mut forged, 4, 1, "Ev", &f.recs[2].hash, &p);
    f.write(&[
        f.header(),
        f.rec(1),
        f.rec(2),
        f.rec(3),
        &forged,
        f.rec(4),
        f.rec(5),
    ]);
    let at = f.offset(4) + forged.len() as u64;
    let what = assert_reported(&f.root, SESSION, &f.path, at, "forged insert");
    assert!(what.contains("seq 4 where seq 5"), "{what}");
}

/// The header names another session (same length, CRC recomputed). In place, the file name no
/// longer matches the header; renamed to match, the chain no longer starts from the header.
#[test]
fn swapped_session_id_in_the_header_is_caught() {
    let f = fixture();
    let (h, _) = Header::decode(&f.bytes).unwrap();
    let mut forged = Header::new("tampex", h.created_unix_ns);
    forged.format_version = h.format_version;
    let hb = forged.encode();
    assert_eq!(hb.len(), f.header_len);
    let body = &f.bytes[f.header_len..];
    f.write(&[&hb, body]);
    let what = assert_reported(&f.root, SESSION, &f.path, 0, "header swap");
    assert!(what.contains("tampex"), "{what}");

    let moved = f.root.session("tampex").unwrap().journal;
    fs::rename(&f.path, &moved).unwrap();
    let what = assert_reported(
        &f.root,
        "tampex",
        &moved,
        f.header_len as u64,
        "header swap",
    );
    assert!(what.contains("does not link"), "{what}");
}

/// Loading a state checks every record's CRC and seq but only the first record's link (see
/// "Loading a state" in journal-format.md): a payload edit with a recomputed CRC is folded, a
/// torn CRC, a seq out of order or a first record that does not link stop the load, and
/// verify reports the edit.
#[test]
fn loads_check_crcs_and_seqs_and_leave_every_link_to_verify() {
    use sjournal::snapshot::{load_state, LoadOptions};
    let full = LoadOptions::default();
    let f = fixture();
    // Edited with a recomputed CRC: folded; verify reports it at the next record.
    fs::write(&f.path, edit_payload(&f, 3, true)).unwrap();
    let (s, info) = load_state(&f.root, SESSION, &full).unwrap();
    assert_eq!(
        (s.seq, info.stopped.is_none()),
        (6, true),
        "{:?}",
        info.stopped
    );
    assert_reported(&f.root, SESSION, &f.path, f.offset(4), "edit+crc");
    // Without the CRC: the load stops before it.
    fs::write(&f.path, edit_payload(&f, 3, false)).unwrap();
    let (s, info) = load_state(&f.root, SESSION, &full).unwrap();
    assert_eq!(s.seq, 2);
    assert!(info.stopped.unwrap().contains("CRC"));
    // A deleted record: the seq check stops it.
    f.write(&[f.header(), f.rec(1), f.rec(2), f.rec(4), f.rec(5)]);
    let (s, info) = load_state(&f.root, SESSION, &full).unwrap();
    assert_eq!(s.seq, 2);
    assert!(info.stopped.unwrap().contains("seq 4 where seq 3"));
    // The first record, copied from another journal: it does not link to this header.
    let other = fixture_of("other-session");
    let foreign = &other.bytes[other.recs[0].offset as usize..other.recs[0].end as usize];
    f.write(&[f.header(), foreign, f.rec(2)]);
    let (s, info) = load_state(&f.root, SESSION, &full).unwrap();
    assert_eq!(s.seq, 0);
    assert!(info.stopped.unwrap().contains("does not link"));
}

/// The session's own fold (the hook's, under the lock: `Session::state`) follows the same
/// rule: an edit with a recomputed CRC is folded without a word (it used to hash every link of
/// the tail and warn of damage), and `verify` reports it.
#[test]
fn the_sessions_fold_checks_crcs_and_seqs_and_leaves_every_link_to_verify() {
    use sjournal::journal::WriterOptions;
    use sjournal::session::Session;
    let f = fixture();
    fs::write(&f.path, edit_payload(&f, 3, true)).unwrap();
    let mut s = Session::open(&f.root, SESSION, &WriterOptions::default()).unwrap();
    assert_eq!(s.state().unwrap().seq, 6);
    assert_eq!(s.warnings().unwrap(), Vec::<String>::new());
    drop(s);
    assert_reported(&f.root, SESSION, &f.path, f.offset(4), "edit+crc");
}
