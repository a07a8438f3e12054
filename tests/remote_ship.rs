//! Shipping journals to object storage and back, on every backend (in-memory, a directory,
//! and the real S3 server when `SJOURNAL_TEST_S3` is set: always in CI). A session is
//! shipped, grows and is shipped again; the remote reassembles byte for byte to the local
//! journal, every seq in exactly one object; `verify --remote` finds nothing and says the
//! local journal is in sync; `fetch` rebuilds it byte for byte. Quarantined bytes are shipped
//! as evidence; a torn tail is not shipped; bit rot in shipped records is DIVERGED and nothing
//! is written; a lost cursor is rebuilt by adopting what the remote holds.
#![cfg(feature = "remote")]

use crate::support;

use sjournal::journal::Root;
use sjournal::remote::ship::{ship_journal, NoFaults};
use sjournal::remote::verify::{self, Options};
use sjournal::remote::{cursor, fetch};
use support::remote::*;

#[tokio::test]
async fn round_trip_grow_and_fetch_on_every_backend() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("rt", d.path()).await {
        let root = Root::new(d.path().join(format!("root-{name}")));
        let id = identity(d.path());
        let cursors = cursor::dir_for(&root, remote.url());
        append(&root, "sess-1", 0, 40, 700);
        let j = journal(&root, "sess-1");
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok(), "{name}: {}", r.summary());
        assert_eq!((r.last_seq, r.created, r.records), (40, 1, 40), "{name}");
        assert_exactly_once(&remote, &main_loc("sess-1"), &j, true).await;

        // Nothing new: nothing written.
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert_eq!((r.created, r.adopted, r.last_seq), (0, 0, 40), "{name}");

        // Grow past one segment (4 MiB): several segments, cut at record boundaries.
        append(&root, "sess-1", 40, 200, 40_000);
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok() && r.created >= 2, "{name}: {}", r.summary());
        assert_eq!(r.last_seq, 200);
        assert_exactly_once(&remote, &main_loc("sess-1"), &j, true).await;

        let opts = Options {
            keys: vec![verifier_key(d.path())],
            local: Some((root.clone(), HOST.into())),
        };
        let v = verify::verify(&remote, &opts).await.unwrap();
        assert_eq!(v.len(), 1, "{name}");
        assert!(v[0].ok, "{name}: {}", v[0].summary());
        assert_eq!(v[0].local.as_deref(), Some("in sync"), "{name}");
        assert_eq!(v[0].last_seq, 200);

        // Local extends remote once more records arrive.
        append(&root, "sess-1", 200, 203, 100);
        let v = verify::verify(&remote, &opts).await.unwrap();
        assert_eq!(
            v[0].local.as_deref(),
            Some("local extends remote (3 record(s) not shipped yet)"),
            "{name}"
        );

        // Fetch rebuilds the shipped journal byte for byte.
        let into = d.path().join(format!("fetched-{name}"));
        let f = fetch::fetch(&remote, &into, &opts).await.unwrap();
        assert_eq!(f.len(), 1);
        assert!(f[0].ok, "{name}: {}", f[0].outcome);
        let fetched = std::fs::read(into.join("sessions/sess-1.sjl")).unwrap();
        let local = std::fs::read(&j).unwrap();
        assert!(local.starts_with(&fetched) && fetched.len() < local.len());
        let rep = sjournal::journal::verify_file(&into.join("sessions/sess-1.sjl"), None).unwrap();
        assert!(rep.ok && rep.last_seq == 200, "{name}: {}", rep.summary());
    }
}

#[tokio::test]
async fn bit_rot_after_shipping_is_diverged_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("rot", d.path()).await {
        let root = Root::new(d.path().join(format!("root-{name}")));
        let id = identity(d.path());
        let cursors = cursor::dir_for(&root, remote.url());
        append(&root, "s", 0, 30, 300);
        let j = journal(&root, "s");
        ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        append(&root, "s", 30, 35, 300);
        let before = remote.list("v1/").await.unwrap();
        let cursor_path = cursor::path_for(&cursors, "s", sjournal::remote::StreamKind::Main);
        let cursor_before = std::fs::read(&cursor_path).unwrap();
        // Flip one bit inside record 3 (already shipped).
        let mut bytes = std::fs::read(&j).unwrap();
        let at = bytes.len() / 8;
        bytes[at] ^= 0x10;
        std::fs::write(&j, &bytes).unwrap();
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        let why = r
            .diverged
            .clone()
            .unwrap_or_else(|| panic!("{name}: {}", r.summary()));
        assert!(why.contains("changed after shipping"), "{name}: {why}");
        assert!(r.summary().starts_with("DIVERGED"), "{}", r.summary());
        assert_eq!(
            remote.list("v1/").await.unwrap(),
            before,
            "{name}: nothing written"
        );
        assert_eq!(
            std::fs::read(&cursor_path).unwrap(),
            cursor_before,
            "{name}: cursor kept"
        );
        // The auditor's view: the remote is intact, the local journal diverged.
        let opts = Options {
            keys: vec![],
            local: Some((root.clone(), HOST.into())),
        };
        let v = verify::verify(&remote, &opts).await.unwrap();
        assert!(!v[0].ok);
        assert!(
            v[0].local
                .as_deref()
                .unwrap()
                .starts_with("diverged at seq"),
            "{:?}",
            v[0].local
        );
        // Without the cursor, ship compares bytes instead, and still writes nothing.
        std::fs::remove_file(&cursor_path).unwrap();
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.diverged.is_some(), "{name}: {}", r.summary());
        assert_eq!(
            remote.list("v1/").await.unwrap(),
            before,
            "{name}: nothing written"
        );
    }
}

#[tokio::test]
async fn a_rewritten_last_shipped_record_is_diverged() {
    // A CRC-valid rewrite of the last shipped record (the chain alone cannot see it): the
    // cursor's head catches it.
    let d = tempfile::tempdir().unwrap();
    let root = Root::new(d.path().join("root"));
    let id = identity(d.path());
    let remote =
        sjournal::remote::Remote::open(&format!("file://{}", d.path().join("b").display()))
            .unwrap();
    let cursors = cursor::dir_for(&root, remote.url());
    append(&root, "s", 0, 5, 200);
    let j = journal(&root, "s");
    ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    // Rebuild the journal with a different record 5 (same session, same header).
    let bytes = std::fs::read(&j).unwrap();
    let recs = sjournal::journal::JournalReader::open(&j, None).unwrap();
    let last = recs.records().unwrap().last().unwrap().unwrap();
    let (off, prev, seq, ts) = (
        last.offset as usize,
        last.prev_hash,
        last.seq,
        last.ts_unix_ns,
    );
    drop(recs);
    let mut rewritten = bytes[..off].to_vec();
    let payload =
        sjournal::format::payload::encode_event_json(r#"{"hook_event_name":"Stop","forged":true}"#);
    sjournal::format::record::encode(&mut rewritten, seq, ts, "Stop", &prev, &payload);
    std::fs::write(&j, &rewritten).unwrap();
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert!(
        r.diverged
            .as_deref()
            .is_some_and(|w| w.contains("rewritten")),
        "{}",
        r.summary()
    );
    // Without the cursor, the refused create is answered by comparing bytes: still DIVERGED,
    // at the forged record, and nothing is written.
    let before = remote.list("v1/").await.unwrap();
    std::fs::remove_dir_all(&cursors).unwrap();
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    let why = r.diverged.clone().unwrap_or_else(|| r.summary());
    assert!(
        why.contains("differs from the local journal") && why.contains("(seq 5)"),
        "{why}"
    );
    assert_eq!(remote.list("v1/").await.unwrap(), before);
}

#[tokio::test]
async fn quarantine_is_shipped_and_a_torn_tail_is_not() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("q", d.path()).await {
        let root = Root::new(d.path().join(format!("root-{name}")));
        let id = identity(d.path());
        let cursors = cursor::dir_for(&root, remote.url());
        append(&root, "s", 0, 10, 300);
        let j = journal(&root, "s");
        // A torn tail: half a record of garbage at the end.
        let mut f = std::fs::OpenOptions::new().append(true).open(&j).unwrap();
        std::io::Write::write_all(&mut f, &[0x55; 40]).unwrap();
        drop(f);
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok(), "{name}: {}", r.summary());
        assert_eq!(r.last_seq, 10);
        assert!(
            r.notes.iter().any(|n| n.contains("torn tail")),
            "{:?}",
            r.notes
        );
        assert_exactly_once(&remote, &main_loc("s"), &j, false).await;
        // The next append quarantines the tail; the next ship ships the evidence.
        append(&root, "s", 10, 12, 300);
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert_eq!(r.quarantine.len(), 1, "{name}: {}", r.summary());
        let keys = remote.list("v1/").await.unwrap();
        assert!(
            keys.iter()
                .any(|k| k.contains("/quarantine/s.sjl.quarantine-")),
            "{keys:?}"
        );
        assert_exactly_once(&remote, &main_loc("s"), &j, true).await;
        let v = verify::verify(&remote, &Options::default()).await.unwrap();
        assert!(v[0].ok, "{name}: {}", v[0].summary());
        // Fetch brings the evidence back too.
        let into = d.path().join(format!("f-{name}"));
        fetch::fetch(&remote, &into, &Options::default())
            .await
            .unwrap();
        let q: Vec<_> = std::fs::read_dir(into.join("sessions"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".quarantine-"))
            .collect();
        assert_eq!(q.len(), 1);
    }
}

#[tokio::test]
async fn a_lost_cursor_is_rebuilt_by_adopting_the_remote() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("lost", d.path()).await {
        let root = Root::new(d.path().join(format!("root-{name}")));
        let id = identity(d.path());
        let cursors = cursor::dir_for(&root, remote.url());
        append(&root, "s", 0, 20, 300);
        let j = journal(&root, "s");
        ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        append(&root, "s", 20, 25, 300);
        ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        std::fs::remove_dir_all(&cursors).unwrap();
        append(&root, "s", 25, 27, 300);
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok(), "{name}: {}", r.summary());
        assert_eq!((r.adopted, r.created, r.last_seq), (2, 1, 27), "{name}");
        assert_exactly_once(&remote, &main_loc("s"), &j, true).await;
    }
}
