//! Erasure of shipped records, on every backend (in-memory, a directory, and the real S3
//! server when `SJOURNAL_TEST_S3` is set). A session is shipped; one field of one record and
//! the whole payload of another are erased (`sjournal erase`), more records follow, and it is
//! shipped again: not DIVERGED, one `erasure/<seq>` object per erased record; `verify --remote`
//! passes and lists both erasures; `fetch` into another root gives a journal that verifies and
//! holds neither erased text (every file of the fetched root is searched). The segments still
//! hold the old bytes (create-only storage: what the README says of Object Lock). An erasure
//! object that is not an erasure of its record (another payload digest; no chained
//! `sjournal.erased` record naming it) is a finding.
#![cfg(feature = "remote")]

use crate::support;

use bytes::Bytes;
use sjournal::format::record;
use sjournal::journal::erase::{erase, Request};
use sjournal::journal::{Root, Writer, WriterOptions};
use sjournal::remote::identity::Identity;
use sjournal::remote::ship::{ship_journal, NoFaults};
use sjournal::remote::store::Meta;
use sjournal::remote::verify::{self, Options};
use sjournal::remote::{cursor, fetch, Remote};
use support::remote::*;

const FIELD_SECRET: &str = "hunter2-field-secret-7f3a";
const RECORD_SECRET: &str = "12 Elm Street, record secret 91bc";

fn event(w: &mut Writer, kind: &str, json: &str) {
    w.append(kind, &sjournal::fold::digest::encode_event(kind, json))
        .unwrap();
}

/// Seq 1..=10 written and shipped: seq 2 runs a command holding FIELD_SECRET, seq 3 is a
/// prompt holding RECORD_SECRET.
async fn shipped(remote: &Remote, dir: &std::path::Path, tag: &str, id: &Identity) -> Root {
    let root = Root::new(dir.join(format!("root-{tag}")));
    let cursors = cursor::dir_for(&root, remote.url());
    append(&root, "s", 0, 1, 300);
    let mut w = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    event(
        &mut w,
        "PostToolUse",
        &format!(
            r#"{{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"login --password {FIELD_SECRET}"}},"tool_response":{{"stdout":"ok"}},"tool_use_id":"t1"}}"#
        ),
    );
    event(
        &mut w,
        "UserPromptSubmit",
        &format!(
            r#"{{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"ship it to {RECORD_SECRET}"}}"#
        ),
    );
    drop(w);
    append(&root, "s", 3, 10, 300);
    let r = ship_journal(remote, &journal(&root, "s"), id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert!(r.ok() && r.last_seq == 10, "{}", r.summary());
    root
}

fn erase_both(root: &Root) {
    let opts = WriterOptions::default();
    let field = Request {
        seq: 2,
        field: Some("/tool_input/command".into()),
        reason: "a password".into(),
    };
    erase(root, "s", &field, &opts).unwrap();
    let whole = Request {
        seq: 3,
        field: None,
        reason: "a home address".into(),
    };
    erase(root, "s", &whole, &opts).unwrap();
}

fn files_holding(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            out.extend(files_holding(&p, needle));
        } else if t.is_file() {
            let b = std::fs::read(&p).unwrap();
            if b.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test]
async fn erased_records_ship_verify_and_fetch_without_the_erased_bytes() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("erase", d.path()).await {
        let id = identity(d.path());
        let root = shipped(&remote, d.path(), name, &id).await;
        let cursors = cursor::dir_for(&root, remote.url());
        let j = journal(&root, "s");
        erase_both(&root);
        append(&root, "s", 12, 20, 300);
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok(), "{name}: {}", r.summary());
        assert_eq!(r.erasures, vec![2, 3], "{name}: {}", r.summary());
        assert_eq!(r.last_seq, 20, "{name}");
        let keys = remote.list(&main_loc("s").base()).await.unwrap();
        for seq in [2, 3] {
            assert!(
                keys.contains(&main_loc("s").erasure_key(seq)),
                "{name}: {keys:?}"
            );
        }
        // Shipping again writes nothing more; the cursor is in step with the erased journal.
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok(), "{name}: {}", r.summary());
        assert_eq!((r.created, r.erasures.len()), (0, 0), "{name}");
        append(&root, "s", 20, 22, 300);
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok() && r.last_seq == 22, "{name}: {}", r.summary());

        let opts = Options {
            keys: vec![verifier_key(d.path())],
            local: Some((root.clone(), HOST.into())),
        };
        let v = verify::verify(&remote, &opts).await.unwrap();
        assert_eq!(v.len(), 1, "{name}");
        assert!(v[0].ok, "{name}: {}", v[0].summary());
        assert_eq!(v[0].local.as_deref(), Some("in sync"), "{name}");
        let listed: Vec<(u64, Option<&str>, &str)> = v[0]
            .erasures
            .iter()
            .map(|e| (e.seq, e.field.as_deref(), e.reason.as_str()))
            .collect();
        assert_eq!(
            listed,
            vec![
                (2, Some("/tool_input/command"), "a password"),
                (3, None, "a home address")
            ],
            "{name}"
        );
        let local = sjournal::journal::verify_file(&j, None).unwrap();
        let digests = |es: &[sjournal::journal::verify::Erasure]| -> Vec<String> {
            es.iter().map(|e| e.erased_digest.clone()).collect()
        };
        assert_eq!(digests(&v[0].erasures), digests(&local.erasures), "{name}");
        assert!(v[0].summary().contains("erased seq 3"), "{name}");

        // Fetch: the erased journal, byte for byte the local one, without the erased text.
        let into = d.path().join(format!("fetched-{name}"));
        let f = fetch::fetch(&remote, &into, &opts).await.unwrap();
        assert!(f.len() == 1 && f[0].ok, "{name}: {}", f[0].outcome);
        let path = f[0].path.clone().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(&j).unwrap());
        let fv = sjournal::journal::verify_file(&path, None).unwrap();
        assert!(fv.ok, "{name}: {}", fv.summary());
        assert_eq!(fv.erasures.len(), 2, "{name}");
        for secret in [FIELD_SECRET, RECORD_SECRET] {
            assert_eq!(
                files_holding(&into, secret),
                Vec::<std::path::PathBuf>::new()
            );
            assert!(files_holding(root.dir(), secret).is_empty(), "{name}");
        }
        if name == "dir" {
            // Create-only storage keeps the segment's old bytes: hidden, not deleted.
            assert!(!files_holding(&d.path().join("bucket"), RECORD_SECRET).is_empty());
        }
    }
}

/// Uploads `frame` as the erasure object of `seq`, as someone with write access could.
async fn put_erasure(remote: &Remote, seq: u64, frame: Vec<u8>, erased_by: u64) {
    let meta: Meta = sjournal::remote::erasure::meta(erased_by, &frame);
    remote
        .put_create(&main_loc("s").erasure_key(seq), Bytes::from(frame), &meta)
        .await
        .unwrap();
}

/// Record `seq` of the journal at `path`, as an erased frame: its payload emptied, salt
/// zeroed, and `digest` as its payload digest (the record's own, or another).
fn erased_frame(path: &std::path::Path, seq: u64, other_digest: bool) -> Vec<u8> {
    let reader = sjournal::journal::JournalReader::open(path, None).unwrap();
    let rec = reader
        .records()
        .unwrap()
        .map(|r| r.unwrap())
        .find(|r| r.seq == seq)
        .unwrap();
    let mut digest = rec.payload_digest;
    if other_digest {
        digest.0[0] ^= 1;
    }
    let mut out = Vec::new();
    record::encode_digested(
        &mut out,
        rec.version(),
        rec.seq,
        rec.ts_unix_ns,
        rec.kind,
        &rec.prev_hash,
        b"",
        &[0; record::SALT_LEN],
        Some(&digest),
    );
    out
}

#[tokio::test]
async fn an_erasure_object_that_erases_nothing_is_a_finding() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("erasetamper", d.path()).await {
        let root = shipped(&remote, d.path(), name, &identity(d.path())).await;
        let j = journal(&root, "s");
        let opts = Options {
            keys: vec![verifier_key(d.path())],
            local: None,
        };
        // Seq 5 erased without a chained `sjournal.erased` record naming it.
        put_erasure(&remote, 5, erased_frame(&j, 5, false), 9).await;
        let v = verify::verify(&remote, &opts).await.unwrap();
        assert!(!v[0].ok, "{name}: {}", v[0].summary());
        assert!(
            v[0].findings
                .iter()
                .any(|f| f.contains("no sjournal.erased record names it")),
            "{name}: {:?}",
            v[0].findings
        );
        // Seq 6 with another payload digest: not the shipped record.
        put_erasure(&remote, 6, erased_frame(&j, 6, true), 9).await;
        let v = verify::verify(&remote, &opts).await.unwrap();
        let f = &v[0].findings;
        assert!(
            f.iter().any(|f| f.contains("erasure/00000000000000000006")
                && f.contains("is not the shipped record's")),
            "{name}: {f:?}"
        );
        // Fetch refuses a copy with findings.
        let into = d.path().join(format!("fetched-{name}"));
        let got = fetch::fetch(&remote, &into, &opts).await.unwrap();
        assert!(!got[0].ok, "{name}");
    }
}

/// Without erasure objects, the erased journal is DIVERGED from a shipped copy when a record
/// before the cursor changed otherwise: an edit is no erasure.
#[tokio::test]
async fn a_changed_shipped_record_that_is_not_an_erasure_still_diverges() {
    let d = tempfile::tempdir().unwrap();
    let remote = Remote::with_store(
        std::sync::Arc::new(object_store::memory::InMemory::new()),
        "fleet",
    );
    let id = identity(d.path());
    let root = shipped(&remote, d.path(), "edit", &id).await;
    let j = journal(&root, "s");
    // Mark seq 4 erased in place (payload emptied), with no `sjournal.erased` record.
    let bytes = std::fs::read(&j).unwrap();
    let (_, hlen) = sjournal::format::Header::decode(&bytes).unwrap();
    let mut at = hlen;
    let mut out = bytes[..hlen].to_vec();
    while at < bytes.len() {
        let f = record::parse(&bytes[at..]).unwrap();
        if f.seq == 4 {
            out.extend_from_slice(&erased_frame(&j, 4, false));
        } else {
            out.extend_from_slice(f.bytes);
        }
        at += f.len();
    }
    std::fs::write(&j, &out).unwrap();
    let cursors = cursor::dir_for(&root, remote.url());
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert!(r.diverged.is_some(), "{}", r.summary());
    assert!(r.erasures.is_empty());
}

/// A ship stopped (as by a crash) before the PUT of the second erasure object leaves the
/// first one shipped and the cursor saying so; the next run ships the second, and the copy
/// verifies with both.
#[tokio::test]
async fn a_ship_stopped_between_erasures_is_finished_by_the_next_run() {
    use sjournal::remote::ship::{Seam, Step};
    use sjournal::remote::RemoteError;
    struct StopAt3;
    impl Seam for StopAt3 {
        fn at(&self, s: &Step) -> Result<(), RemoteError> {
            match s {
                Step::Erasure(3) => Err(RemoteError::Injected("before erasure 3".into())),
                _ => Ok(()),
            }
        }
    }
    let d = tempfile::tempdir().unwrap();
    let remote = Remote::with_store(
        std::sync::Arc::new(object_store::memory::InMemory::new()),
        "fleet",
    );
    let id = identity(d.path());
    let root = shipped(&remote, d.path(), "crash", &id).await;
    let j = journal(&root, "s");
    let cursors = cursor::dir_for(&root, remote.url());
    erase_both(&root);
    assert!(ship_journal(&remote, &j, &id, &cursors, &StopAt3)
        .await
        .is_err());
    let keys = remote.list(&main_loc("s").base()).await.unwrap();
    assert!(keys.contains(&main_loc("s").erasure_key(2)));
    assert!(!keys.contains(&main_loc("s").erasure_key(3)));
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert!(r.ok(), "{}", r.summary());
    assert_eq!(r.erasures, vec![3]);
    let opts = Options {
        keys: vec![verifier_key(d.path())],
        local: Some((root.clone(), HOST.into())),
    };
    let v = verify::verify(&remote, &opts).await.unwrap();
    assert!(v[0].ok, "{}", v[0].summary());
    assert_eq!(v[0].erasures.len(), 2);
}

/// `index` forgets erased content: the session is indexed with both secrets, then erased,
/// shipped and indexed again (the erasure arrives after its record was indexed): no row of any
/// table holds either secret (as text, or as the bytes of the stream's fold state), the erased
/// rows keep seq, kind and hash and say erased, and a rebuild from the bucket gives the same
/// rows as the incremental run.
#[tokio::test]
async fn index_drops_erased_content_also_when_the_erasure_comes_after_the_record() {
    use crate::remote_index::{dump, pg, schema};
    use sjournal::remote::index::{self, Options as IndexOptions};
    let Some(pg) = pg() else { return };
    let d = tempfile::tempdir().unwrap();
    let remote = Remote::with_store(
        std::sync::Arc::new(object_store::memory::InMemory::new()),
        "fleet",
    );
    let id = identity(d.path());
    let root = shipped(&remote, d.path(), "index", &id).await;
    let s = schema("eraseix");
    let mut opts = IndexOptions {
        schema: s.clone(),
        rebuild: true,
        keys: vec![verifier_key(d.path())],
    };
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let hex = |t: &str| t.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let holding = |rows: &[String], secret: &str| -> Vec<String> {
        rows.iter()
            .filter(|r| r.contains(secret) || r.contains(&hex(secret)))
            .cloned()
            .collect()
    };
    let before = dump(&pg, &s).await;
    assert!(
        !holding(&before, FIELD_SECRET).is_empty(),
        "the test's premise"
    );
    assert!(
        !holding(&before, RECORD_SECRET).is_empty(),
        "the test's premise"
    );
    let c = index::connect(&pg).await.unwrap();
    let row = |seq: i64| {
        let c = &c;
        let s = s.clone();
        async move {
            let r = c
                .query_one(
                    &format!("SELECT kind, hash, erased FROM {s}.record WHERE seq = $1"),
                    &[&seq],
                )
                .await
                .unwrap();
            (
                r.get::<_, String>(0),
                r.get::<_, Vec<u8>>(1),
                r.get::<_, bool>(2),
            )
        }
    };
    let (k2, h2, e2) = row(2).await;
    let (k3, h3, e3) = row(3).await;
    assert!(!e2 && !e3);

    erase_both(&root);
    append(&root, "s", 12, 20, 300);
    let cursors = cursor::dir_for(&root, remote.url());
    let j = journal(&root, "s");
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert_eq!(r.erasures, vec![2, 3], "{}", r.summary());
    opts.rebuild = false;
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let after = dump(&pg, &s).await;
    for secret in [FIELD_SECRET, RECORD_SECRET] {
        assert_eq!(holding(&after, secret), Vec::<String>::new(), "{secret}");
    }
    assert_eq!(row(2).await, (k2, h2, true));
    assert_eq!(row(3).await, (k3, h3, true));
    let n: i64 = c
        .query_one(&format!("SELECT count(*) FROM {s}.record"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        n, 20,
        "every record, the erased ones and their erased records too"
    );

    // Again: nothing changes. Rebuilt from the bucket: the same rows.
    index::index(&remote, &pg, &opts).await.unwrap();
    assert_eq!(dump(&pg, &s).await, after);
    opts.rebuild = true;
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(dump(&pg, &s).await, after);
    c.batch_execute(&format!("DROP SCHEMA {s} CASCADE"))
        .await
        .unwrap();
}

/// A lost cursor (the local one removed, as after a reinstall or a reset of the root's remote
/// state) after an erasure of shipped records: ship adopts the segments that hold the
/// records as they were before the erasure (each differing frame has the erased record's hash,
/// so the same payload digest, and is bound by its `sjournal.erased` record), ships the
/// erasures and what follows, and the copy verifies. Not DIVERGED.
#[tokio::test]
async fn a_lost_cursor_after_an_erasure_adopts_the_shipped_segments() {
    let d = tempfile::tempdir().unwrap();
    let remote = Remote::with_store(
        std::sync::Arc::new(object_store::memory::InMemory::new()),
        "fleet",
    );
    let id = identity(d.path());
    let root = shipped(&remote, d.path(), "lost", &id).await;
    let j = journal(&root, "s");
    let cursors = cursor::dir_for(&root, remote.url());
    erase_both(&root);
    append(&root, "s", 12, 16, 300);
    std::fs::remove_dir_all(&cursors).unwrap();
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert!(r.ok(), "{}", r.summary());
    assert_eq!(r.adopted, 1, "{}", r.summary());
    assert_eq!(r.erasures, vec![2, 3], "{}", r.summary());
    assert_eq!(r.last_seq, 16);
    let opts = Options {
        keys: vec![verifier_key(d.path())],
        local: Some((root.clone(), HOST.into())),
    };
    let v = verify::verify(&remote, &opts).await.unwrap();
    assert!(v[0].ok, "{}", v[0].summary());
    assert_eq!(v[0].erasures.len(), 2);
    // Lost again, with everything shipped: nothing to write, still in step.
    std::fs::remove_dir_all(&cursors).unwrap();
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert!(r.ok(), "{}", r.summary());
    assert_eq!((r.created, r.last_seq), (0, 16), "{}", r.summary());
}

/// With a lost cursor, a shipped record that differs from the local one other than by a
/// recorded erasure (here: its bytes changed in the segment's place, hash and all) still
/// diverges.
#[tokio::test]
async fn a_lost_cursor_with_an_unrecorded_change_still_diverges() {
    let d = tempfile::tempdir().unwrap();
    let remote = Remote::with_store(
        std::sync::Arc::new(object_store::memory::InMemory::new()),
        "fleet",
    );
    let id = identity(d.path());
    let root = shipped(&remote, d.path(), "lostedit", &id).await;
    let j = journal(&root, "s");
    let cursors = cursor::dir_for(&root, remote.url());
    erase_both(&root);
    // Seq 4 erased in place, bound by no `sjournal.erased` record.
    let bytes = std::fs::read(&j).unwrap();
    let (_, hlen) = sjournal::format::Header::decode(&bytes).unwrap();
    let mut at = hlen;
    let mut out = bytes[..hlen].to_vec();
    while at < bytes.len() {
        let f = record::parse(&bytes[at..]).unwrap();
        if f.seq == 4 {
            out.extend_from_slice(&erased_frame(&j, 4, false));
        } else {
            out.extend_from_slice(f.bytes);
        }
        at += f.len();
    }
    std::fs::write(&j, &out).unwrap();
    std::fs::remove_dir_all(&cursors).unwrap();
    let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    assert!(r.diverged.is_some(), "{}", r.summary());
    assert!(r.erasures.is_empty());
}
