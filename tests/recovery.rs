//! Recovery on open, exhaustively. From one journal of six records with payloads of varied
//! sizes we take every journal of 1..=6 records, and damage it every way a crash or bit rot
//! can: cut at every byte offset, every bit of the last two records flipped, every 512-byte
//! sector of the tail zeroed. For each case an oracle derived from the record boundaries says
//! what must happen, and the test checks all of it: verify reports the damage at the right
//! offset (or reports a clean, shorter journal when the cut falls on a record boundary) and
//! changes nothing; opening a writer keeps exactly the valid prefix byte for byte, copies
//! exactly the cut bytes to a quarantine file and appends a `sjournal.recovered` record naming
//! their offset, length and blake3, or, when valid records follow the damage, refuses with
//! `Error::Corrupt` and touches nothing (the event then goes to the rescue journal); appending,
//! reopening and verifying afterwards work. Nothing may panic.
//!
//! The second half has one labelled test per row of the recovery case table in
//! journal-format.md ("## Recovery case table").

use crate::support;

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use sjournal::format::hash::content_hash;
use sjournal::format::header::Header;
use sjournal::format::payload::{self, Recovered, KIND_RECOVERED};
use sjournal::journal::hint::TailHint;
use sjournal::journal::{verify_file, Corrupt, Root, Writer};
use sjournal::limits::BATCH_MAX_BYTES;
use sjournal::session::{self, Batch, Landed};
use sjournal::Error;
use support::{parse, quarantine_files, read, Rec};

const SESSION: &str = "recovery-session";
/// JSON sizes of the template's events: fixstr, str8 and str16 MessagePack headers, records
/// that fit in a sector and one that does not fit with its neighbour.
const SIZES: [usize; 6] = [12, 45, 300, 20, 130, 33];

struct Template {
    bytes: Vec<u8>,
    header_len: usize,
    recs: Vec<Rec>,
}

impl Template {
    /// The journal of the first `k` records.
    fn journal(&self, k: usize) -> &[u8] {
        let end = if k == 0 {
            self.header_len
        } else {
            self.recs[k - 1].end as usize
        };
        &self.bytes[..end]
    }
}

fn template() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        let dir = support::scratch();
        let root = Root::new(dir.path());
        let events: Vec<String> = SIZES
            .iter()
            .enumerate()
            .map(|(i, &n)| support::event_json(i, n))
            .collect();
        let path = support::write_events(&root, SESSION, &events);
        let bytes = read(&path);
        let p = parse(&bytes);
        assert!(p.stop.is_none() && p.records.len() == SIZES.len());
        Template {
            header_len: p.header.unwrap().1,
            recs: p.records,
            bytes,
        }
    })
}

/// What must happen to a journal file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A clean journal of this many records.
    Clean { records: usize },
    /// A torn tail from `at`: the `keep` records before it stay, the rest is cut.
    Cut { keep: usize, at: u64 },
    /// Damage at `at` with valid records after it: verify reports, the writer refuses.
    Refuse { keep: usize, at: u64 },
    /// No usable header and no record after it (an interrupted creation): the bytes, if any,
    /// are quarantined and the journal starts afresh.
    FreshHeader,
    /// A header that is damaged with records after it, or of another version: refused.
    BadHeader,
}

/// The oracle for damage confined to bytes `[first, last]` of the journal of `k` records.
fn expect_damage(k: usize, first: usize, last: usize) -> Expect {
    let t = template();
    let recs = &t.recs[..k];
    let j = recs
        .iter()
        .position(|r| (first as u64) < r.end)
        .expect("damage inside a record");
    let at = recs[j].offset;
    if recs[j + 1..].iter().any(|r| r.offset > last as u64) {
        Expect::Refuse { keep: j, at }
    } else {
        Expect::Cut { keep: j, at }
    }
}

/// The oracle for the journal of `k` records cut to `len` bytes.
fn expect_cut(k: usize, len: usize) -> Expect {
    let t = template();
    if len < t.header_len {
        return Expect::FreshHeader;
    }
    if len == t.header_len {
        return Expect::Clean { records: 0 };
    }
    let recs = &t.recs[..k];
    match recs.iter().position(|r| r.end as usize >= len) {
        Some(j) if recs[j].end as usize == len => Expect::Clean { records: j + 1 },
        Some(j) => Expect::Cut {
            keep: j,
            at: recs[j].offset,
        },
        None => unreachable!("cut past the end"),
    }
}

/// Runs one case: writes `bytes` as the session's journal in a fresh root and checks verify,
/// recovery, the quarantine, the recovered record, and appending afterwards.
fn run_case(label: &str, bytes: &[u8], expect: Expect) {
    let dir = support::scratch();
    let root = Root::new(dir.path().join("root"));
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    fs::write(&paths.journal, bytes).unwrap();
    check_case(label, &root, bytes, expect);
}

fn check_case(label: &str, root: &Root, bytes: &[u8], expect: Expect) {
    let t = template();
    let paths = root.session(SESSION).unwrap();
    let journal = &paths.journal;
    let len = bytes.len() as u64;
    // Every journal in a root has its mark from its creation on (seq 0, nothing acknowledged,
    // until the first append's sync): a case that brings none gets that one, which leaves the
    // rows as they are (a missing mark is a finding of its own: tests/rollback.rs).
    let mark = sjournal::journal::hwm::path_for(journal);
    if !mark.exists() {
        let created = sjournal::format::mark::Mark {
            seq: 0,
            hash: sjournal::format::Hash::ZERO,
        };
        fs::write(&mark, created.encode()).unwrap();
    }

    // verify: reports, never modifies.
    let report = verify_file(journal, None).unwrap_or_else(|e| panic!("{label}: verify: {e}"));
    match expect {
        Expect::Clean { records } => {
            assert!(report.ok, "{label}: {report:?}");
            assert_eq!(report.records, records as u64, "{label}");
        }
        Expect::Cut { keep, at } | Expect::Refuse { keep, at } => {
            let p = report
                .problem
                .as_ref()
                .unwrap_or_else(|| panic!("{label}: verify missed it"));
            assert!(!report.ok, "{label}");
            assert_eq!(
                (p.offset, report.records),
                (at, keep as u64),
                "{label}: {p:?}"
            );
            assert_eq!(p.seq, keep as u64 + 1, "{label}: {p:?}");
            let torn = matches!(expect, Expect::Cut { .. });
            assert_eq!(p.torn_tail, torn, "{label}: {p:?}");
        }
        Expect::FreshHeader | Expect::BadHeader => {
            let p = report
                .problem
                .as_ref()
                .unwrap_or_else(|| panic!("{label}: verify missed it"));
            assert_eq!((p.offset, report.records), (0, 0), "{label}: {p:?}");
        }
    }
    assert_eq!(read(journal), bytes, "{label}: verify modified the journal");

    // Open for append: recover or refuse.
    let opened = Writer::open(root, SESSION, &support::opts());
    let base = match expect {
        Expect::Refuse { keep, at } => {
            match opened {
                Err(e) if Corrupt::of(&e).is_some() => {
                    let c = Corrupt::of(&e).unwrap();
                    assert_eq!((c.offset, c.seq), (at, keep as u64 + 1), "{label}")
                }
                Err(e) => panic!("{label}: expected Corrupt, got {e}"),
                Ok(_) => panic!("{label}: expected Corrupt, the writer opened"),
            }
            return check_refused(label, root, bytes);
        }
        Expect::BadHeader => {
            assert!(
                matches!(opened, Err(Error::BadHeader { .. })),
                "{label}: expected BadHeader, got {:?}",
                opened.as_ref().err()
            );
            return check_refused(label, root, bytes);
        }
        Expect::Clean { records } => {
            let w = opened.unwrap_or_else(|e| panic!("{label}: {e}"));
            assert!(w.recovery().is_none(), "{label}: {:?}", w.recovery());
            assert_eq!(w.next_seq(), records as u64 + 1, "{label}");
            assert!(quarantine_files(&paths.dir).is_empty(), "{label}");
            records
        }
        Expect::Cut { keep, at } => {
            let w = opened.unwrap_or_else(|e| panic!("{label}: {e}"));
            let r = w
                .recovery()
                .unwrap_or_else(|| panic!("{label}: no recovery"));
            assert_eq!((r.offset, r.length), (at, len - at), "{label}");
            assert_eq!(r.recovered_seq, keep as u64 + 1, "{label}");
            assert_eq!(w.next_seq(), keep as u64 + 2, "{label}");
            check_quarantine(
                label,
                &paths.dir,
                r.quarantine.as_path(),
                &bytes[at as usize..],
            );
            keep + 1
        }
        Expect::FreshHeader => {
            let w = opened.unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(w.header().session_id, SESSION, "{label}");
            if bytes.is_empty() {
                assert!(w.recovery().is_none(), "{label}");
                assert!(quarantine_files(&paths.dir).is_empty(), "{label}");
                0
            } else {
                let r = w
                    .recovery()
                    .unwrap_or_else(|| panic!("{label}: no recovery"));
                assert_eq!(
                    (r.offset, r.length, r.recovered_seq),
                    (0, len, 1),
                    "{label}"
                );
                check_quarantine(label, &paths.dir, r.quarantine.as_path(), bytes);
                1
            }
        }
    };

    // Append, reopen (nothing left to recover), append, verify.
    let mut w = Writer::open(root, SESSION, &support::opts()).unwrap();
    assert!(w.recovery().is_none(), "{label}: recovered twice");
    w.append(
        "Ev",
        &sjournal::fold::digest::encode_event("Ev", r#"{"after":1}"#),
    )
    .unwrap();
    drop(w);
    let mut w = Writer::open(root, SESSION, &support::opts()).unwrap();
    assert!(
        w.recovery().is_none(),
        "{label}: recovered after a clean append"
    );
    let a = w
        .append(
            "Ev",
            &sjournal::fold::digest::encode_event("Ev", r#"{"after":2}"#),
        )
        .unwrap();
    assert_eq!(a.seq, base as u64 + 2, "{label}");
    drop(w);
    let report = verify_file(journal, None).unwrap();
    assert!(report.ok, "{label}: after recovery: {report:?}");
    assert_eq!(report.records, base as u64 + 2, "{label}");

    // The records: the kept prefix unchanged (byte for byte), then the recovered record.
    let now = read(journal);
    let p = parse(&now);
    let kept = match expect {
        Expect::Clean { records } => records,
        Expect::Cut { keep, at } => {
            assert_eq!(
                &now[..at as usize],
                &bytes[..at as usize],
                "{label}: prefix changed"
            );
            let rec = &p.records[keep];
            check_recovered_record(label, rec, at, &bytes[at as usize..]);
            keep
        }
        Expect::FreshHeader => {
            if !bytes.is_empty() {
                check_recovered_record(label, &p.records[0], 0, bytes);
            }
            0
        }
        Expect::Refuse { .. } | Expect::BadHeader => unreachable!(),
    };
    for (got, want) in p.records[..kept].iter().zip(&t.recs) {
        assert_eq!(got, want, "{label}: a kept record changed");
    }
    assert_eq!(p.records[base].json(), r#"{"after":1}"#, "{label}");
    assert_eq!(p.records[base + 1].json(), r#"{"after":2}"#, "{label}");
}

/// The quarantine holds exactly the cut bytes, in the one quarantine file of the directory.
fn check_quarantine(label: &str, dir: &Path, q: &Path, cut: &[u8]) {
    assert_eq!(quarantine_files(dir), vec![q.to_owned()], "{label}");
    assert_eq!(
        read(q),
        cut,
        "{label}: quarantine differs from the cut bytes"
    );
}

fn check_recovered_record(label: &str, rec: &Rec, offset: u64, cut: &[u8]) {
    assert_eq!(rec.kind, KIND_RECOVERED, "{label}");
    let r: Recovered = payload::decode_system(rec.seq, &rec.payload).unwrap();
    assert_eq!(r.offset, offset, "{label}");
    assert_eq!(r.length, cut.len() as u64, "{label}");
    assert_eq!(r.blake3, content_hash(cut).to_hex(), "{label}");
    assert!(r.quarantine.contains(".quarantine-"), "{label}: {r:?}");
    assert!(!r.reason.is_empty(), "{label}");
}

/// A refused journal is untouched and nothing is quarantined; the event goes to the rescue
/// journal, which verifies.
fn check_refused(label: &str, root: &Root, bytes: &[u8]) {
    let paths = root.session(SESSION).unwrap();
    assert_eq!(
        read(&paths.journal),
        bytes,
        "{label}: a refusing writer changed the journal"
    );
    assert!(quarantine_files(&paths.dir).is_empty(), "{label}");
    let d = session::write(
        root,
        SESSION,
        &Batch::one("Ev", payload::encode_event_json(r#"{"rescued":1}"#)),
        &support::opts(),
    )
    .unwrap_or_else(|e| panic!("{label}: rescue failed: {e}"));
    assert!(matches!(d, Landed::Rescue { .. }), "{label}: {d:?}");
    assert_eq!(
        read(&paths.journal),
        bytes,
        "{label}: rescue changed the journal"
    );
    let r = verify_file(&paths.rescue, None).unwrap();
    assert!(r.ok && r.records == 1, "{label}: rescue journal: {r:?}");
}

// ---- Exhaustive cases ---------------------------------------------------------------------

#[test]
fn truncation_at_every_offset() {
    let t = template();
    let mut cases = 0;
    for k in 1..=SIZES.len() {
        let full = t.journal(k);
        for cut in 0..full.len() {
            let expect = expect_cut(k, cut);
            run_case(&format!("{k} records cut to {cut}"), &full[..cut], expect);
            cases += 1;
        }
    }
    assert_eq!(
        cases,
        (1..=SIZES.len()).map(|k| t.journal(k).len()).sum::<usize>()
    );
}

/// Every bit of record `which` (1-based) of the journal of `k` records.
fn flip_every_bit(k: usize, which: usize) {
    let t = template();
    let full = t.journal(k);
    let rec = &t.recs[which - 1];
    for byte in rec.offset as usize..rec.end as usize {
        for bit in 0..8 {
            let mut b = full.to_vec();
            b[byte] ^= 1 << bit;
            let expect = expect_damage(k, byte, byte);
            if which == k {
                assert!(matches!(expect, Expect::Cut { .. }));
            } else {
                assert!(matches!(expect, Expect::Refuse { .. }));
            }
            run_case(
                &format!("{k} records, bit {bit} of byte {byte} flipped"),
                &b,
                expect,
            );
        }
    }
}

#[test]
fn every_bit_of_the_last_record_flipped() {
    for k in 1..=SIZES.len() {
        flip_every_bit(k, k);
    }
}

#[test]
fn every_bit_of_the_second_to_last_record_flipped() {
    for k in 2..=SIZES.len() {
        flip_every_bit(k, k - 1);
    }
}

#[test]
fn every_sector_of_the_tail_zeroed() {
    let t = template();
    let mut damaged = 0;
    for k in 1..=SIZES.len() {
        let full = t.journal(k);
        let tail_start = t.recs[k.saturating_sub(2)].offset as usize;
        for sector in tail_start / 512..full.len().div_ceil(512) {
            // A sector of the disk; the header's bytes in it are kept (the header row of the
            // table covers a damaged header).
            let from = (sector * 512).max(t.header_len);
            let to = ((sector + 1) * 512).min(full.len());
            let mut b = full.to_vec();
            b[from..to].fill(0);
            let label = format!("{k} records, sector {sector} zeroed");
            let changed: Vec<usize> = (from..to).filter(|&i| full[i] != 0).collect();
            let expect = match (changed.first(), changed.last()) {
                (Some(&first), Some(&last)) => {
                    damaged += 1;
                    expect_damage(k, first, last)
                }
                _ => Expect::Clean { records: k },
            };
            run_case(&label, &b, expect);
        }
    }
    assert!(damaged >= SIZES.len());
}

// ---- The recovery case table, one test per row -------------------------------------------

#[test]
fn row_empty_file() {
    run_case("empty file", &[], Expect::FreshHeader);
}

#[test]
fn row_torn_header() {
    let t = template();
    run_case(
        "torn header",
        &t.bytes[..t.header_len / 2],
        Expect::FreshHeader,
    );
}

#[test]
fn row_damaged_header_followed_by_records() {
    let t = template();
    let mut b = t.journal(2).to_vec();
    b[3] ^= 0x10; // in the magic
    run_case("damaged header with records", &b, Expect::BadHeader);
}

#[test]
fn row_header_of_another_version() {
    let t = template();
    let mut h = Header::new(SESSION, 1);
    h.format_version = sjournal::format::header::FORMAT_VERSION + 1;
    let mut b = h.encode();
    b.extend_from_slice(&t.journal(2)[t.header_len..]);
    run_case(
        "header of a version this build does not know",
        &b,
        Expect::BadHeader,
    );
}

#[test]
fn row_header_of_another_session() {
    let t = template();
    let mut b = Header::new("someone-else", 1).encode();
    b.extend_from_slice(&t.journal(2)[t.header_len..]);
    let dir = support::scratch();
    let root = Root::new(dir.path());
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    fs::write(&paths.journal, &b).unwrap();
    let e = Writer::open(&root, SESSION, &support::opts()).err();
    assert!(matches!(e, Some(Error::SessionMismatch { .. })), "{e:?}");
    check_refused("header of another session", &root, &b);
}

#[test]
fn row_clean() {
    for k in 0..=SIZES.len() {
        run_case("clean", template().journal(k), Expect::Clean { records: k });
    }
}

#[test]
fn row_torn_last_record() {
    let b = template().journal(3);
    let at = template().recs[2].offset;
    run_case(
        "torn last record",
        &b[..b.len() - 7],
        Expect::Cut { keep: 2, at },
    );
}

#[test]
fn row_crc_bad_last_record() {
    let mut b = template().journal(3).to_vec();
    let at = template().recs[2].offset;
    let n = b.len();
    b[n - 1] ^= 0xff; // the CRC itself
    run_case("CRC-bad last record", &b, Expect::Cut { keep: 2, at });
}

#[test]
fn row_bad_record_followed_by_valid_ones() {
    let mut b = template().journal(5).to_vec();
    let r = &template().recs[2];
    b[r.offset as usize + 70] ^= 0x01;
    let expect = Expect::Refuse {
        keep: 2,
        at: r.offset,
    };
    run_case("bad record followed by valid ones", &b, expect);
}

/// Rewrites the last record of the journal of `k` records with `edit`, fixing its CRC.
fn crc_valid_edit_of_last(k: usize, edit: impl Fn(&mut [u8])) -> Vec<u8> {
    let t = template();
    let mut b = t.journal(k).to_vec();
    let r = &t.recs[k - 1];
    let (s, e) = (r.offset as usize, r.end as usize);
    edit(&mut b[s..e]);
    support::fix_crc(&mut b, s, e);
    b
}

#[test]
fn row_crc_valid_record_with_wrong_seq() {
    let b = crc_valid_edit_of_last(3, |f| f[4..12].copy_from_slice(&7u64.to_le_bytes()));
    let at = template().recs[2].offset;
    run_case("CRC-valid wrong seq", &b, Expect::Refuse { keep: 2, at });
}

#[test]
fn row_crc_valid_record_with_wrong_prev_hash() {
    let b = crc_valid_edit_of_last(3, |f| f[30] ^= 0x01);
    let at = template().recs[2].offset;
    run_case(
        "CRC-valid wrong prev_hash",
        &b,
        Expect::Refuse { keep: 2, at },
    );
}

/// A damaged tail longer than one write (BATCH_MAX_BYTES) cannot be the remains of an
/// interrupted append: recovery refuses to cut it, and verify does not call it torn. The file
/// is sparse, so this costs no disk.
#[test]
fn row_damaged_tail_longer_than_one_write() {
    let t = template();
    let dir = support::scratch();
    let root = Root::new(dir.path());
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    let b = t.journal(2);
    fs::write(&paths.journal, b).unwrap();
    let len = b.len() as u64 + BATCH_MAX_BYTES + 1;
    fs::OpenOptions::new()
        .write(true)
        .open(&paths.journal)
        .unwrap()
        .set_len(len)
        .unwrap();
    let at = t.recs[1].end;
    let r = verify_file(&paths.journal, None).unwrap();
    let p = r.problem.expect("verify reports the zeros");
    assert_eq!((p.offset, p.torn_tail), (at, false), "{p:?}");
    match Writer::open(&root, SESSION, &support::opts()) {
        Err(e) if Corrupt::of(&e).is_some() => {
            let c = Corrupt::of(&e).unwrap();
            assert_eq!((c.offset, c.seq), (at, 3))
        }
        other => panic!("expected Corrupt, got {:?}", other.err()),
    }
    assert_eq!(fs::metadata(&paths.journal).unwrap().len(), len);
    assert!(quarantine_files(&paths.dir).is_empty());
}

/// Writes the 3-record template to a fresh root, with `hint` (raw bytes) in the lock file.
fn with_hint(label: &str, k: usize, hint: &[u8]) {
    let t = template();
    let dir = support::scratch();
    let root = Root::new(dir.path());
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    fs::write(&paths.journal, t.journal(k)).unwrap();
    fs::write(&paths.lock, hint).unwrap();
    check_case(label, &root, t.journal(k), Expect::Clean { records: k });
}

#[test]
fn row_garbage_tail_hint() {
    with_hint("garbage hint", 4, &[0x5a; 68]);
    let mut h = hint_for(2).encode();
    h[20] ^= 1; // CRC no longer matches
    with_hint("hint with a bad CRC", 4, &h);
}

fn hint_for(k: usize) -> TailHint {
    let r = &template().recs[k - 1];
    TailHint {
        last_frame_at: r.offset,
        end: r.end,
        last_seq: r.seq,
        last_hash: r.hash,
    }
}

/// A stale hint (an earlier record) costs a scan of the records after it, never a record.
#[test]
fn row_stale_tail_hint() {
    with_hint("stale hint", 5, &hint_for(2).encode());
    // Stale and naming a record that is not there any more.
    let mut h = hint_for(2);
    h.last_hash.0[0] ^= 1;
    with_hint("hint naming another record", 5, &h.encode());
}

#[test]
fn row_tail_hint_past_eof() {
    // The hint's end past EOF, naming the last record: ignored, a scan finds the tail.
    let mut h = hint_for(3);
    h.end += 1000;
    with_hint("hint end past EOF", 3, &h.encode());
    // The hint of the 6-record journal, on the journal of 3: it names records the journal
    // lacks (written, and then cut off, or lost unsynced in a power loss). verify says so,
    // and the writer refuses rather than reuse their seqs.
    let t = template();
    let dir = support::scratch();
    let root = Root::new(dir.path());
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    fs::write(&paths.journal, t.journal(3)).unwrap();
    fs::write(&paths.lock, hint_for(6).encode()).unwrap();
    let r = verify_file(&paths.journal, None).unwrap();
    let p = r.problem.as_ref().expect("a finding");
    assert!(r.rolled_back && p.what.contains("tail hint"), "{r:?}");
    match Writer::open(&root, SESSION, &support::opts()) {
        Err(e)
            if matches!(
                Corrupt::of(&e).map(|c| &c.reason),
                Some(sjournal::journal::recovery::Corruption::RolledBack {
                    seq: 6,
                    last_seq: 3,
                    ..
                })
            ) => {}
        other => panic!("expected a refusal, got {:?}", other.err()),
    }
    assert_eq!(read(&paths.journal), t.journal(3));
}

/// A stale hint on a journal with a torn tail: recovery still finds and cuts the tail.
#[test]
fn row_stale_hint_and_torn_tail() {
    let t = template();
    let dir = support::scratch();
    let root = Root::new(dir.path());
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    let b = &t.journal(4)[..t.recs[3].end as usize - 5];
    fs::write(&paths.journal, b).unwrap();
    fs::write(&paths.lock, hint_for(1).encode()).unwrap();
    let at = t.recs[3].offset;
    check_case(
        "stale hint, torn tail",
        &root,
        b,
        Expect::Cut { keep: 3, at },
    );
}

/// Recovery interrupted after the quarantine copy and before the cut (a crash) leaves the
/// same bytes to cut on the next open, which reuses the quarantine file rather than making a
/// second one.
#[test]
fn row_recovery_interrupted_after_quarantine() {
    let t = template();
    let b = &t.journal(3)[..t.recs[2].end as usize - 1];
    let at = t.recs[2].offset;
    let dir = support::scratch();
    let root = Root::new(dir.path());
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    fs::write(&paths.journal, b).unwrap();
    let w = Writer::open(&root, SESSION, &support::opts()).unwrap();
    let q = w.recovery().unwrap().quarantine.clone();
    drop(w);
    // Put the journal back as it was before the cut; the quarantine file stays. The
    // interrupted recovery never appended its record, so no mark acknowledges it.
    fs::write(&paths.journal, b).unwrap();
    fs::write(&paths.lock, b"").unwrap();
    fs::remove_file(sjournal::journal::hwm::path_for(&paths.journal)).unwrap();
    check_case(
        "interrupted recovery",
        &root,
        b,
        Expect::Cut { keep: 2, at },
    );
    assert_eq!(quarantine_files(&paths.dir), vec![q]);
}

/// Damage before the record a valid tail hint names is not seen by the writer: it trusts the
/// prefix up to the hinted record (that is what the hint is for) and appends after it, never
/// truncating anything. Verify, which reads everything, still reports the damage.
#[test]
fn row_damage_before_a_valid_hint() {
    let t = template();
    let dir = support::scratch();
    let root = Root::new(dir.path());
    root.ensure().unwrap();
    let paths = root.session(SESSION).unwrap();
    let mut b = t.journal(4).to_vec();
    let at = t.recs[1].offset;
    b[at as usize + 70] ^= 0x04;
    fs::write(&paths.journal, &b).unwrap();
    fs::write(&paths.lock, hint_for(4).encode()).unwrap();
    let mut w = Writer::open(&root, SESSION, &support::opts()).unwrap();
    assert!(w.recovery().is_none());
    assert_eq!(
        w.append("Ev", &sjournal::fold::digest::encode_event("Ev", "{}"))
            .unwrap()
            .seq,
        5
    );
    drop(w);
    let now = read(&paths.journal);
    assert_eq!(&now[..b.len()], &b[..], "the writer changed existing bytes");
    let p = verify_file(&paths.journal, None).unwrap().problem.unwrap();
    assert_eq!((p.offset, p.torn_tail), (at, false), "{p:?}");
}
