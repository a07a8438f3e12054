//! Fault injection through the storage seam. A fixed workload (create the journal, append
//! single records and a batch, reopen, find a torn tail left by an earlier crash and recover
//! it, append again) runs once per fault: the n-th write fails (writing nothing, some, or all
//! of its bytes first), the n-th fsync fails, the n-th truncate fails, or the disk fills up
//! after every possible byte count (ENOSPC). For every n: the failing call returns an error;
//! a writer whose write or fsync failed is poisoned and refuses every further append with
//! `Error::Poisoned`; reopening with the real file keeps every append that returned Ok, with
//! the same seq and hash, and the journal then verifies.
//!
//! The second half crashes a simulated disk (`SimDisk`) at random points of random workloads
//! (proptest): every write not yet synced is lost, kept, torn, or kept with a zeroed sector,
//! and after reopening every acknowledged record is still there and the journal verifies.

use crate::support;

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use sjournal::format::payload::encode_event_json;
use sjournal::format::Hash;
use sjournal::journal::{verify_file, Appended, Corrupt, Root, Target, Writer, WriterOptions};
use sjournal::testing::{FaultCounts, FaultPlan, Faulty, JournalWith, PendingFate, SimDisk};
use sjournal::Error;

const SESSION: &str = "fault-session";

/// Everything a workload run observed.
#[derive(Debug, Default)]
struct Run {
    acked: Vec<Appended>,
    /// The error of the call that failed, if one did.
    failed: Option<String>,
}

/// Opens a writer whose journal operations go through a `Faulty` sharing `counts`.
fn open_faulty(
    root: &Root,
    plan: &FaultPlan,
    counts: &Arc<Mutex<FaultCounts>>,
) -> Result<Writer, Error> {
    let (plan, counts) = (plan.clone(), counts.clone());
    let fs = JournalWith::new(move |_, f| {
        Box::new(Faulty::with_counts(f, plan.clone(), counts.clone()))
    });
    Writer::open_with(root, SESSION, Target::Main, &WriterOptions::with_fs(fs))
}

/// Options whose journal file is `disk`, through a `Faulty` with `plan` counting into `counts`.
fn on_disk(disk: &SimDisk, plan: &FaultPlan, counts: &Arc<Mutex<FaultCounts>>) -> WriterOptions {
    let (disk, plan, counts) = (disk.clone(), plan.clone(), counts.clone());
    WriterOptions::with_fs(JournalWith::new(move |_, _| {
        Box::new(Faulty::with_counts(
            disk.clone(),
            plan.clone(),
            counts.clone(),
        ))
    }))
}

/// After a failed append the writer must refuse every further one.
fn assert_poisoned(w: &mut Writer, what: &str) {
    assert!(
        w.is_poisoned(),
        "{what}: a failed write/fsync did not poison the writer"
    );
    for _ in 0..3 {
        match w.append(
            "Ev",
            &sjournal::fold::digest::encode_event("Ev", r#"{"after":"poison"}"#),
        ) {
            Err(Error::Poisoned { .. }) => {}
            other => panic!("{what}: append after poison gave {other:?}"),
        }
    }
    assert!(matches!(
        w.append_batch(&[("Ev", b"\xa0"), ("Ev", b"\xa0")]),
        Err(Error::Poisoned { .. })
    ));
}

/// The workload. Stops at the first failing call (checking the poison rule on the way).
fn workload(root: &Root, plan: &FaultPlan, counts: &Arc<Mutex<FaultCounts>>, what: &str) -> Run {
    let mut run = Run::default();
    let events: Vec<String> = (0..8)
        .map(|i| support::event_json(i, 20 + i * 37))
        .collect();
    macro_rules! step {
        ($w:expr, $call:expr) => {
            match $call {
                Ok(v) => v,
                Err(e) => {
                    assert_poisoned(&mut $w, what);
                    run.failed = Some(e.to_string());
                    return run;
                }
            }
        };
    }
    macro_rules! open {
        () => {
            match open_faulty(root, plan, counts) {
                Ok(w) => w,
                Err(e) => {
                    run.failed = Some(e.to_string());
                    return run;
                }
            }
        };
    }

    let mut w = open!();
    for e in &events[..3] {
        let a = step!(
            w,
            w.append("Ev", &sjournal::fold::digest::encode_event("Ev", e))
        );
        run.acked.push(a);
    }
    let p3 = encode_event_json(&events[3]);
    let p4 = encode_event_json(&events[4]);
    let batch = step!(w, w.append_batch(&[("Ev", &p3), ("Ev", &p4)]));
    run.acked.extend(batch);
    drop(w);

    let mut w = open!();
    let a = step!(
        w,
        w.append(
            "Ev",
            &sjournal::fold::digest::encode_event("Ev", &events[5])
        )
    );
    run.acked.push(a);
    let path = w.path().to_owned();
    drop(w);

    // A crash left half a record at the end (written outside the seam, as a dead process
    // would have): the next open quarantines it, truncates, and appends a recovered record.
    let torn = {
        let mut b = Vec::new();
        sjournal::format::record::encode(
            &mut b,
            99,
            1,
            "Ev",
            &Hash::ZERO,
            &encode_event_json("{}"),
        );
        b.truncate(b.len() / 2);
        b
    };
    OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&torn)
        .unwrap();
    fs::write(root.session(SESSION).unwrap().lock, b"").unwrap();

    let mut w = open!();
    assert!(
        w.recovery().is_some(),
        "{what}: the torn tail was not recovered"
    );
    let a = step!(
        w,
        w.append(
            "Ev",
            &sjournal::fold::digest::encode_event("Ev", &events[6])
        )
    );
    run.acked.push(a);
    drop(w);
    run
}

/// Reopens with the real file (recovering what the fault left) and checks every acked record.
fn check_after(root: &Root, run: &Run, what: &str) {
    let w = Writer::open(root, SESSION, &support::opts())
        .unwrap_or_else(|e| panic!("{what}: reopen after the fault: {e}"));
    drop(w);
    let path = root.session(SESSION).unwrap().journal;
    let p = support::parse(&support::read(&path));
    let by_seq: BTreeMap<u64, Hash> = p.records.iter().map(|r| (r.seq, r.hash)).collect();
    for a in &run.acked {
        assert_eq!(
            by_seq.get(&a.seq),
            Some(&a.hash),
            "{what}: acknowledged seq {} lost or changed",
            a.seq
        );
    }
    let report = verify_file(&path, None).unwrap();
    assert!(report.ok, "{what}: {report:?}");
}

/// Runs the workload under `plan`; returns whether a fault was injected.
fn run_plan(plan: FaultPlan, what: &str) -> bool {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let counts = Arc::new(Mutex::new(FaultCounts::default()));
    let run = workload(&root, &plan, &counts, what);
    let injected = counts.lock().unwrap().injected;
    assert_eq!(
        injected > 0,
        run.failed.is_some(),
        "{what}: a fault was injected but every call succeeded, or a call failed unprovoked: {:?}",
        run.failed
    );
    check_after(&root, &run, what);
    injected > 0
}

/// How many writes, fsyncs and truncates the workload does when nothing fails.
fn clean_counts() -> FaultCounts {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let counts = Arc::new(Mutex::new(FaultCounts::default()));
    let run = workload(&root, &FaultPlan::default(), &counts, "clean");
    assert!(run.failed.is_none(), "{:?}", run.failed);
    assert_eq!(run.acked.len(), 7);
    check_after(&root, &run, "clean");
    let c = counts.lock().unwrap().clone();
    assert!(c.writes >= 7 && c.syncs >= 7 && c.set_lens >= 1, "{c:?}");
    c
}

#[test]
fn every_write_fails_in_turn_whole_torn_or_empty() {
    let c = clean_counts();
    for n in 1..=c.writes {
        for torn in [0, 1, 17, 61, usize::MAX] {
            let plan = FaultPlan {
                fail_write: Some(n),
                torn_write_bytes: torn,
                ..FaultPlan::default()
            };
            assert!(run_plan(
                plan,
                &format!("write {n} fails after {torn} bytes")
            ));
        }
    }
}

#[test]
fn every_fsync_fails_in_turn() {
    let c = clean_counts();
    for n in 1..=c.syncs {
        let plan = FaultPlan {
            fail_sync: Some(n),
            ..FaultPlan::default()
        };
        assert!(run_plan(plan, &format!("fsync {n} fails")));
    }
}

#[test]
fn every_truncate_fails_in_turn() {
    let c = clean_counts();
    for n in 1..=c.set_lens {
        let plan = FaultPlan {
            fail_set_len: Some(n),
            ..FaultPlan::default()
        };
        assert!(run_plan(plan, &format!("truncate {n} fails")));
    }
}

#[test]
fn disk_full_after_every_byte_count() {
    let c = clean_counts();
    for limit in 0..c.bytes_written {
        let plan = FaultPlan {
            enospc_after_bytes: Some(limit),
            ..FaultPlan::default()
        };
        assert!(run_plan(plan, &format!("ENOSPC after {limit} bytes")));
    }
    // With room for everything, nothing fails.
    let plan = FaultPlan {
        enospc_after_bytes: Some(c.bytes_written),
        ..FaultPlan::default()
    };
    assert!(!run_plan(plan, "ENOSPC with room to spare"));
}

// ---- Crash simulation --------------------------------------------------------------------

/// The fate of one pending write, as generated; lengths are scaled to the write at crash time.
#[derive(Debug, Clone, Copy)]
enum FateSpec {
    Lost,
    Kept,
    /// Keep this many 256ths of the write.
    Torn(u8),
    ZeroedSector(u8),
}

#[derive(Debug, Clone)]
enum Fault {
    None,
    FailSync(u64),
    FailWrite(u64, usize),
}

#[derive(Debug, Clone)]
struct Epoch {
    /// Batches of payload sizes; one batch is one `append_batch`.
    batches: Vec<Vec<usize>>,
    fault: Fault,
    fates: Vec<FateSpec>,
}

fn epoch() -> impl Strategy<Value = Epoch> {
    let fate = prop_oneof![
        Just(FateSpec::Lost),
        Just(FateSpec::Kept),
        any::<u8>().prop_map(FateSpec::Torn),
        (0u8..3).prop_map(FateSpec::ZeroedSector),
    ];
    let fault = prop_oneof![
        Just(Fault::None),
        (1u64..6).prop_map(Fault::FailSync),
        ((1u64..6), (0usize..900)).prop_map(|(n, t)| Fault::FailWrite(n, t)),
    ];
    (
        prop::collection::vec(prop::collection::vec(10usize..700, 1..4), 0..5),
        fault,
        prop::collection::vec(fate, 1..4),
    )
        .prop_map(|(batches, fault, fates)| Epoch {
            batches,
            fault,
            fates,
        })
}

/// Runs epochs on one simulated disk: open (recovering), append, maybe fail, crash.
fn simulate(epochs: &[Epoch]) -> Result<(), TestCaseError> {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let disk = SimDisk::new();
    let mut acked: BTreeMap<u64, Hash> = BTreeMap::new();
    let mut acked_end = 0u64;
    let mut zeroed = false;
    let mut i = 0usize;
    for ep in epochs {
        let plan = match ep.fault {
            Fault::None => FaultPlan::default(),
            Fault::FailSync(n) => FaultPlan {
                fail_sync: Some(n),
                ..FaultPlan::default()
            },
            Fault::FailWrite(n, torn) => FaultPlan {
                fail_write: Some(n),
                torn_write_bytes: torn,
                ..FaultPlan::default()
            },
        };
        let counts = Arc::new(Mutex::new(FaultCounts::default()));
        let opened = Writer::open_with(
            &root,
            SESSION,
            Target::Main,
            &on_disk(&disk, &plan, &counts),
        );
        match opened {
            Ok(mut w) => {
                for batch in &ep.batches {
                    let payloads: Vec<Vec<u8>> = batch
                        .iter()
                        .map(|&n| {
                            i += 1;
                            encode_event_json(&support::event_json(i, n))
                        })
                        .collect();
                    let items: Vec<(&str, &[u8])> =
                        payloads.iter().map(|p| ("Ev", p.as_slice())).collect();
                    match w.append_batch(&items) {
                        Ok(v) => {
                            for a in v {
                                acked.insert(a.seq, a.hash);
                            }
                            acked_end = w.len();
                        }
                        Err(_) => {
                            assert_poisoned(&mut w, "simulation");
                            break;
                        }
                    }
                }
            }
            Err(e) if Corrupt::of(&e).is_some() => {
                let offset = Corrupt::of(&e).unwrap().offset;
                // Only a zeroed sector inside a multi-record write leaves damage followed
                // by valid records; those records were never acknowledged.
                prop_assert!(zeroed, "Corrupt without a zeroed sector");
                prop_assert!(offset >= acked_end);
                return check_acked(&disk, &acked);
            }
            Err(Error::Io { .. }) => {}
            Err(e) => return Err(TestCaseError::fail(format!("open: {e}"))),
        }
        let mut k = 0;
        disk.crash(|_, len| {
            let f = ep.fates[k % ep.fates.len()];
            k += 1;
            match f {
                FateSpec::Lost => PendingFate::Lost,
                FateSpec::Kept => PendingFate::Kept,
                FateSpec::Torn(frac) => PendingFate::Torn(len * frac as usize / 256),
                FateSpec::ZeroedSector(s) => {
                    zeroed |= len > 512 * s as usize;
                    PendingFate::ZeroedSector(s as usize)
                }
            }
        });
        check_acked(&disk, &acked)?;
    }
    // A last open without faults recovers whatever the last crash left; then verify.
    let clean = on_disk(&disk, &FaultPlan::default(), &Arc::default());
    match Writer::open_with(&root, SESSION, Target::Main, &clean) {
        Ok(w) => drop(w),
        Err(e) if Corrupt::of(&e).is_some() => {
            let offset = Corrupt::of(&e).unwrap().offset;
            prop_assert!(zeroed && offset >= acked_end);
            return check_acked(&disk, &acked);
        }
        Err(e) => return Err(TestCaseError::fail(format!("final open: {e}"))),
    }
    check_acked(&disk, &acked)?;
    let bytes = disk.visible();
    let vdir = support::scratch();
    let path = vdir.path().join(format!("{SESSION}.sjl"));
    fs::write(&path, &bytes).unwrap();
    let report = verify_file(&path, None).unwrap();
    prop_assert!(report.ok, "{:?}", report);
    Ok(())
}

/// Every acknowledged record is on the (crashed) disk with its seq and hash.
fn check_acked(disk: &SimDisk, acked: &BTreeMap<u64, Hash>) -> Result<(), TestCaseError> {
    let p = support::parse(&disk.visible());
    for (seq, hash) in acked {
        let got = p.records.get(*seq as usize - 1).map(|r| (r.seq, r.hash));
        prop_assert_eq!(got, Some((*seq, *hash)), "acknowledged seq {} lost", seq);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn crashes_keep_every_acknowledged_record(epochs in prop::collection::vec(epoch(), 1..6)) {
        simulate(&epochs)?;
    }
}
