//! The quarantine copy recovery relies on before it cuts a torn tail. A file already at the
//! copy's name is used only if it holds exactly the bytes being cut: after a run that ran out
//! of space the name held an empty file, and recovery cut the tail and pointed its
//! `sjournal.recovered` record at that empty file, so the bytes were kept nowhere. Now such a
//! file is left as it is, the bytes go to a new file, and the record names the good copy.

use crate::support as common;

use std::fs;

use sjournal::format::hash::content_hash;
use sjournal::format::payload::{decode_system, Recovered, KIND_RECOVERED};
use sjournal::journal::{Root, Writer};

const SESSION: &str = "q";

/// A journal with a torn last record, and the (offset, bytes) recovery will cut.
fn torn_journal(root: &Root) -> (std::path::PathBuf, u64, Vec<u8>) {
    let path = common::write_events(root, SESSION, &[r#"{"a":1}"#.into(), r#"{"b":22}"#.into()]);
    // The torn write was never acknowledged: no high-water mark covers it.
    fs::remove_file(sjournal::journal::hwm::path_for(&path)).unwrap();
    let full = common::read(&path);
    let torn = full[..full.len() - 7].to_vec();
    fs::write(&path, &torn).unwrap();
    fs::write(root.session(SESSION).unwrap().lock, b"").unwrap();
    let at = common::parse(&torn).stop.unwrap().offset;
    let cut = torn[at as usize..].to_vec();
    (path, at, cut)
}

fn canonical_name(at: u64, cut: &[u8]) -> String {
    format!(
        "{SESSION}.sjl.quarantine-{at}-{}.bin",
        &content_hash(cut).to_hex()[..16]
    )
}

/// The quarantine file the journal's `sjournal.recovered` record names.
fn named_by_record(path: &std::path::Path) -> (String, String) {
    let p = common::parse(&common::read(path));
    let rec = p.records.iter().find(|r| r.kind == KIND_RECOVERED).unwrap();
    let r: Recovered = decode_system(rec.seq, &rec.payload).unwrap();
    (r.quarantine, r.blake3)
}

#[test]
fn an_empty_copy_left_by_a_full_disk_is_not_relied_on() {
    let dir = common::scratch();
    let root = Root::new(dir.path());
    let (path, at, cut) = torn_journal(&root);
    let sessions = root.sessions_dir();
    let stale = sessions.join(canonical_name(at, &cut));
    fs::write(&stale, b"").unwrap();

    let w = Writer::open(&root, SESSION, &common::opts()).unwrap();
    let report = w.recovery().unwrap().clone();
    drop(w);
    assert_ne!(
        report.quarantine, stale,
        "recovery relied on the empty copy"
    );
    assert_eq!(fs::read(&report.quarantine).unwrap(), cut);
    let (name, blake3) = named_by_record(&path);
    assert_eq!(sessions.join(&name), report.quarantine);
    assert_eq!(
        content_hash(&fs::read(sessions.join(&name)).unwrap()).to_hex(),
        blake3
    );
    // The stale file is kept as it was (nothing is deleted).
    assert_eq!(fs::read(&stale).unwrap(), b"");
}

#[test]
fn a_copy_with_other_bytes_of_the_same_length_is_not_relied_on() {
    let dir = common::scratch();
    let root = Root::new(dir.path());
    let (_path, at, cut) = torn_journal(&root);
    let stale = root.sessions_dir().join(canonical_name(at, &cut));
    fs::write(&stale, vec![0u8; cut.len()]).unwrap();
    let w = Writer::open(&root, SESSION, &common::opts()).unwrap();
    let q = w.recovery().unwrap().quarantine.clone();
    assert_eq!(fs::read(&q).unwrap(), cut);
    assert_eq!(fs::read(&stale).unwrap(), vec![0u8; cut.len()]);
}

#[test]
fn a_good_copy_is_reused() {
    let dir = common::scratch();
    let root = Root::new(dir.path());
    let (_path, at, cut) = torn_journal(&root);
    let good = root.sessions_dir().join(canonical_name(at, &cut));
    fs::write(&good, &cut).unwrap();
    let w = Writer::open(&root, SESSION, &common::opts()).unwrap();
    assert_eq!(w.recovery().unwrap().quarantine, good);
    assert_eq!(common::quarantine_files(&root.sessions_dir()), vec![good]);
}
