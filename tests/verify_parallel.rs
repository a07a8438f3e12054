//! Verify on every core reports exactly what the sequential verify reports. An auditor runs
//! `sjournal verify` on a journal someone may have damaged or edited; the journal is cut into
//! chunks that workers check at the same time, and whichever worker finishes first, the
//! report must be the sequential one's, field for field: the same first problem (offset,
//! seq, what, torn or not), the same count of valid records before it, the same head, the same
//! rollback verdict. The sequential verify (`workers: 1`) is the reference.
//!
//! The damage: a byte flipped in every part of every record (so in the middle of chunks and
//! on both sides of every chunk boundary, for chunks of one record up to many), an edit with
//! the CRC recomputed (caught by the next record's link, which may be in the next chunk), the
//! tail truncated at every byte of the last records and at every record boundary, bytes
//! inserted between records, records swapped, a record copied in from another session's
//! journal, and two damages at once (a
//! later chunk's worker finds its damage first; the earlier damage must be reported). Then a
//! proptest over random damage, worker counts and chunk sizes.

use crate::support as common;

use std::fs;
use std::path::PathBuf;

use common::{fix_crc, parse, read, Rec};
use proptest::prelude::*;
use sjournal::journal::{verify_file_with, Root, VerifyOptions, VerifyReport};

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    bytes: Vec<u8>,
    recs: Vec<Rec>,
    /// A record of another session's journal, with a seq of this one's.
    foreign: Vec<u8>,
}

/// A session of 240 records of 100 to 500 bytes, and another session's journal.
fn fixture() -> Fixture {
    let dir = common::scratch();
    let root = Root::new(dir.path());
    let events: Vec<String> = (0..240)
        .map(|i| common::event_json(i, 100 + (i * 53) % 400))
        .collect();
    let path = common::write_events(&root, "par", &events);
    let other = common::write_events(&root, "other", &events[..60]);
    let bytes = read(&path);
    let recs = parse(&bytes).records;
    let other_bytes = read(&other);
    let o = &parse(&other_bytes).records[40];
    Fixture {
        foreign: other_bytes[o.offset as usize..o.end as usize].to_vec(),
        _dir: dir,
        path,
        bytes,
        recs,
    }
}

fn verify(f: &Fixture, workers: usize, chunk_bytes: usize) -> VerifyReport {
    let opts = VerifyOptions {
        workers,
        chunk_bytes,
    };
    verify_file_with(&f.path, None, opts).unwrap()
}

/// Writes `bytes` as the journal and checks every split against the sequential verify;
/// returns the sequential report.
fn same_as_sequential(
    f: &Fixture,
    bytes: &[u8],
    splits: &[(usize, usize)],
    what: &str,
) -> VerifyReport {
    fs::write(&f.path, bytes).unwrap();
    let reference = verify(f, 1, 0);
    for &(workers, chunk) in splits {
        let parallel = verify(f, workers, chunk);
        assert_eq!(
            parallel, reference,
            "{what}: {workers} workers, chunks of {chunk} bytes"
        );
    }
    reference
}

/// Ranges shorter than any record (most hold no record start), of a few records, and of
/// many; 2 workers and more workers than cores.
const SPLITS: &[(usize, usize)] = &[(2, 61), (2, 900), (3, 2500), (8, 300), (4, 20_000)];

#[test]
fn intact_journal_reports_the_same_on_every_split() {
    let f = fixture();
    let r = same_as_sequential(&f, &f.bytes.clone(), SPLITS, "intact");
    assert!(r.ok);
    assert_eq!(r.records, 240);
}

#[test]
fn a_flipped_byte_anywhere_in_any_record_is_reported_as_sequentially() {
    let f = fixture();
    for r in &f.recs {
        let (s, e) = (r.offset as usize, r.end as usize);
        // The length word, the seq, the link, the kind, the payload, the CRC.
        for at in [s, s + 5, s + 30, s + 57, (s + e) / 2, e - 1] {
            let mut b = f.bytes.clone();
            b[at] ^= 0x10;
            let what = format!("byte {at} of seq {}", r.seq);
            let rep = same_as_sequential(&f, &b, &SPLITS[1..4], &what);
            let p = rep.problem.expect("a flipped byte is found");
            assert_eq!(p.offset, r.offset, "{what}: {}", p.what);
        }
    }
}

#[test]
fn an_edit_with_its_crc_recomputed_is_reported_as_sequentially() {
    let f = fixture();
    for r in &f.recs {
        let (s, e) = (r.offset as usize, r.end as usize);
        // The seq, the timestamp, the link, the payload: a CRC-valid record that does not
        // belong (reported at it), or whose hash the next record's link no longer matches
        // (reported at the next; the last record's only by its mark).
        for at in [s + 4, s + 13, s + 30, (s + e) / 2] {
            let mut b = f.bytes.clone();
            b[at] ^= 0x01;
            fix_crc(&mut b, s, e);
            let what = format!("edit of byte {} of seq {} with its CRC", at - s, r.seq);
            let rep = same_as_sequential(&f, &b, SPLITS, &what);
            let p = rep.problem.expect("found");
            assert!(
                p.offset == r.offset || p.offset == r.end || r.seq == 240,
                "{what}: {p:?}"
            );
        }
    }
}

#[test]
fn bytes_inserted_between_records_are_reported_as_sequentially() {
    let f = fixture();
    for r in f.recs.iter().step_by(2) {
        let s = r.offset as usize;
        // Shorter than a range, longer than several, and zeros (an impossible length).
        for garbage in [vec![b'x'; 40], vec![b'y'; 2600], vec![0; 100]] {
            let b = [&f.bytes[..s], &garbage[..], &f.bytes[s..]].concat();
            let what = format!("{} bytes inserted before seq {}", garbage.len(), r.seq);
            let rep = same_as_sequential(&f, &b, SPLITS, &what);
            assert_eq!(rep.problem.expect("found").offset, r.offset, "{what}");
        }
    }
}

#[test]
fn a_truncated_tail_is_reported_as_sequentially() {
    let f = fixture();
    let len = f.bytes.len();
    let last_three = f.recs[f.recs.len() - 3].offset as usize;
    let cuts = (last_three..len).chain(f.recs.iter().map(|r| r.offset as usize));
    for cut in cuts {
        let rep = same_as_sequential(&f, &f.bytes[..cut], &SPLITS[1..4], &format!("cut at {cut}"));
        assert!(!rep.ok, "cut at {cut}: the mark says records are missing");
    }
}

#[test]
fn swapped_records_are_reported_as_sequentially() {
    let f = fixture();
    for pair in f.recs.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (s, m, e) = (a.offset as usize, b.offset as usize, b.end as usize);
        let swapped = [&f.bytes[..s], &f.bytes[m..e], &f.bytes[s..m], &f.bytes[e..]].concat();
        let rep = same_as_sequential(&f, &swapped, &SPLITS[1..4], &format!("swap {}", a.seq));
        assert_eq!(rep.problem.unwrap().offset, a.offset);
    }
}

#[test]
fn a_record_copied_from_another_journal_is_reported_as_sequentially() {
    let f = fixture();
    for r in f.recs.iter().step_by(3) {
        let (s, e) = (r.offset as usize, r.end as usize);
        let replaced = [&f.bytes[..s], &f.foreign[..], &f.bytes[e..]].concat();
        let inserted = [&f.bytes[..s], &f.foreign[..], &f.bytes[s..]].concat();
        for (how, b) in [("replaces", replaced), ("inserted before", inserted)] {
            let what = format!("foreign record {how} seq {}", r.seq);
            let rep = same_as_sequential(&f, &b, SPLITS, &what);
            assert_eq!(rep.problem.unwrap().offset, r.offset, "{what}");
        }
    }
}

#[test]
fn of_two_damages_the_earlier_is_reported_whichever_worker_finds_its_first() {
    let f = fixture();
    // The later damage sits in a small chunk near the end, the earlier one in a large
    // chunk near the start: with chunks of one record the later is found first often.
    for (early, late) in [(3, 230), (50, 51), (100, 200), (0, 239)] {
        let mut b = f.bytes.clone();
        let (e, l) = (&f.recs[early], &f.recs[late]);
        b[e.offset as usize + 40] ^= 1;
        b[l.offset as usize + 40] ^= 1;
        for _ in 0..5 {
            let rep = same_as_sequential(&f, &b, SPLITS, &format!("damage at {early} and {late}"));
            assert_eq!(rep.problem.unwrap().offset, e.offset);
        }
    }
}

#[derive(Debug, Clone)]
enum Damage {
    Flip { at: usize, bit: u8 },
    Truncate { at: usize },
    Swap { rec: usize },
    Foreign { rec: usize },
    EditFixCrc { rec: usize, at: usize },
    Insert { at: usize, len: usize, byte: u8 },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Damage::Flip { at, bit }),
        any::<usize>().prop_map(|at| Damage::Truncate { at }),
        any::<usize>().prop_map(|rec| Damage::Swap { rec }),
        any::<usize>().prop_map(|rec| Damage::Foreign { rec }),
        (any::<usize>(), any::<usize>()).prop_map(|(rec, at)| Damage::EditFixCrc { rec, at }),
        (any::<usize>(), 1usize..3000, any::<u8>()).prop_map(|(at, len, byte)| Damage::Insert {
            at,
            len,
            byte
        }),
    ]
}

fn apply(f: &Fixture, d: &Damage) -> Vec<u8> {
    let mut b = f.bytes.clone();
    let n = f.recs.len();
    let span = |i: usize| (f.recs[i].offset as usize, f.recs[i].end as usize);
    match *d {
        Damage::Flip { at, bit } => {
            let at = at % b.len();
            b[at] ^= 1 << bit;
        }
        Damage::Truncate { at } => b.truncate(at % b.len()),
        Damage::Swap { rec } => {
            let ((s, m), (_, e)) = (span(rec % (n - 1)), span(rec % (n - 1) + 1));
            b = [&b[..s], &b[m..e], &b[s..m], &b[e..]].concat();
        }
        Damage::Foreign { rec } => {
            let (s, e) = span(rec % n);
            b = [&b[..s], &f.foreign[..], &b[e..]].concat();
        }
        Damage::EditFixCrc { rec, at } => {
            let (s, e) = span(rec % n);
            // Any byte between the length word and the CRC.
            b[s + 4 + at % (e - s - 8)] ^= 0x20;
            fix_crc(&mut b, s, e);
        }
        Damage::Insert { at, len, byte } => {
            let at = at % b.len();
            b = [&b[..at], &vec![byte; len][..], &b[at..]].concat();
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_damage_is_reported_as_sequentially(
        d in damage(),
        also_flip in prop::option::of((any::<usize>(), 0u8..8)),
        workers in 2usize..6,
        chunk in prop_oneof![Just(61usize), 64usize..4096, Just(1 << 20)],
    ) {
        let f = fixture();
        let mut bytes = apply(&f, &d);
        if let Some((at, bit)) = also_flip.filter(|_| !bytes.is_empty()) {
            let at = at % bytes.len();
            bytes[at] ^= 1 << bit;
        }
        same_as_sequential(&f, &bytes, &[(workers, chunk)], &format!("{d:?} {also_flip:?}"));
    }
}
