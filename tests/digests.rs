//! Event digests: this build stores, after each event's JSON text, the facts the fold reads of
//! the event (pre-parsed, versioned), and the fold reads those instead of parsing the JSON.
//! Journals written before digests (the checked-in journals of tests/fixtures/journals were
//! written by that format) still verify and fold to their golden states; the same records
//! written again through this build's writer, with digests, load to the same state hash. Every
//! fixture payload of every host folds alike from its digest and from its JSON alone. The
//! fold really reads the digest: one that disagrees with its JSON wins, which is why
//! `verify --digests` re-derives every digest and reports that record; a digest of another
//! version is left alone and the JSON is read.

use crate::support;

use sjournal::audit::digests::verify_digests;
use sjournal::fold::digest;
use sjournal::fold::digest::encode_event;
use sjournal::fold::{fold, RecordView, State};
use sjournal::format::payload::{decode_event, encode_event_json, event_digest, is_system_kind};
use sjournal::format::record::valid_kind;
use sjournal::journal::{verify_file, JournalReader, Root, Writer, WriterOptions};
use sjournal::snapshot::{load_paths, LoadOptions};

/// The checked-in journals written before digests (all but `*-digests*.sjl`).
fn checked_in_journals() -> Vec<std::path::PathBuf> {
    let dir = support::fixtures_dir().join("journals");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sjl"))
        .filter(|p| !p.to_string_lossy().contains("-digests"))
        .collect();
    v.sort();
    v
}

#[test]
fn journals_written_before_digests_load_alike_rewritten_with_them() {
    let journals = checked_in_journals();
    assert!(journals.len() >= 4);
    for path in journals {
        let name = path.display().to_string();
        assert!(verify_file(&path, None).unwrap().ok, "{name}");
        let reader = JournalReader::open(&path, None).unwrap();
        let recs: Vec<_> = reader.records().unwrap().map(|r| r.unwrap()).collect();
        let events = recs.iter().filter(|r| !is_system_kind(r.kind)).count() as u64;
        assert!(
            recs.iter()
                .filter(|r| !is_system_kind(r.kind))
                .all(|r| event_digest(r.payload).is_none()),
            "{name} was written before digests"
        );
        let before = fold(recs.iter().map(RecordView::from));

        // The same records (kinds, timestamps, JSON), written by this build's writer.
        let dir = support::scratch();
        let root = Root::new(dir.path());
        let items: Vec<(String, Vec<u8>, i64)> = recs
            .iter()
            .map(|r| {
                let p = if is_system_kind(r.kind) {
                    r.payload.to_vec()
                } else {
                    encode_event(r.kind, decode_event(r.seq, r.payload).unwrap())
                };
                (r.kind.to_owned(), p, r.ts_unix_ns)
            })
            .collect();
        let batch: Vec<(&str, &[u8])> =
            items.iter().map(|(k, p, _)| (k.as_str(), &p[..])).collect();
        let mut w = Writer::open(&root, "rewritten", &WriterOptions::default()).unwrap();
        w.append_batch_timed(|i| items[i].2, &batch).unwrap();
        drop(w);
        let paths = root.session("rewritten").unwrap();
        assert!(verify_file(&paths.journal, None).unwrap().ok, "{name}");
        let d = verify_digests(&paths.journal, None).unwrap();
        assert_eq!(
            (d.events, d.checked, d.without),
            (events, events, 0),
            "{name}"
        );
        assert!(d.mismatch.is_none(), "{name}: {:?}", d.mismatch);

        let (after, info) = load_paths(&paths, &LoadOptions::default()).unwrap();
        assert!(info.stopped.is_none(), "{name}: {:?}", info.stopped);
        assert_eq!(after.seq, before.seq, "{name}");
        assert_eq!(after.state_hash(), before.state_hash(), "{name}");
        // And the loader, on the journal as it was written before digests.
        let (_dir, original) = copied(&path);
        let (again, _) = load_paths(&original, &LoadOptions::default()).unwrap();
        assert_eq!(again.state_hash(), before.state_hash(), "{name}");
    }
}

/// The digests a build stored are trusted by every later build of the same versions, so what
/// `digest::derive` makes of an event must not change without a `FOLD_VERSION` (or
/// `DIGEST_VERSION`) bump, even where the change is outside digest.rs (a host adapter, the
/// lenient pre-pass). A journal written with digests by a build of these versions is checked
/// in (regenerated with every bump): each digest is of the versions the fold reads, equals
/// what this build derives, and the journal folds, record by record, as the same records with
/// the digests cut off.
#[test]
fn the_checked_in_journal_with_digests_folds_as_its_json() {
    let file = "claude-real-digests-v3.sjl";
    let path = support::fixtures_dir().join("journals").join(file);
    let reader = JournalReader::open(&path, None).unwrap();
    let recs: Vec<_> = reader.records().unwrap().map(|r| r.unwrap()).collect();
    let mut stripped = Vec::new();
    for r in &recs {
        if is_system_kind(r.kind) {
            stripped.push(r.payload.to_vec());
            continue;
        }
        let stored = event_digest(r.payload).expect("every event has its digest");
        assert_eq!(
            digest::version(stored),
            Some(digest::CURRENT),
            "{file} seq {}: the checked-in digests are of another FOLD_VERSION or \
             DIGEST_VERSION; regenerate tests/fixtures/journals/claude-real-digests-v3.sjl \
             (cargo run --example gen_fixture_journals -- DIR, copy that file)",
            r.seq
        );
        assert!(digest::decode(stored).is_some(), "{file} seq {}", r.seq);
        let json = decode_event(r.seq, r.payload).unwrap();
        assert_eq!(
            digest::derive(r.kind, json),
            stored,
            "{file} seq {} ({}): this build derives another digest from the same JSON: bump \
             FOLD_VERSION (or DIGEST_VERSION) and regenerate the fixture",
            r.seq,
            r.kind
        );
        stripped.push(encode_event_json(json));
    }
    let (mut with, mut without) = (State::new(), State::new());
    for (r, p) in recs.iter().zip(&stripped) {
        with.apply(&RecordView::from(r));
        without.apply(&RecordView {
            payload: p,
            ..RecordView::from(r)
        });
        assert_eq!(
            with.encode(),
            without.encode(),
            "{file} after seq {}",
            r.seq
        );
    }
    let d = verify_digests(&path, None).unwrap();
    assert!(d.mismatch.is_none(), "{file}: {d:?}");
    assert_eq!((d.checked, d.other_version), (d.events, 0), "{file}");
}

/// A checked-in journal copied into a scratch root (loading takes locks beside it).
fn copied(path: &std::path::Path) -> (tempfile::TempDir, sjournal::journal::SessionPaths) {
    let bytes = std::fs::read(path).unwrap();
    let (h, _) = sjournal::format::Header::decode(&bytes).unwrap();
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let paths = root.session(&h.session_id).unwrap();
    root.ensure().unwrap();
    std::fs::write(&paths.journal, bytes).unwrap();
    (dir, paths)
}

#[test]
fn every_fixture_payload_folds_alike_from_its_digest_and_its_json() {
    let (mut with, mut without) = (State::new(), State::new());
    let mut seq = 0u64;
    for p in support::all_payloads() {
        let (file, raw) = (&p.file, &p.json);
        let kind = p.event.as_deref();
        let kind = kind.filter(|k| valid_kind(k)).unwrap_or("event");
        let (a, b) = (encode_event(kind, raw), encode_event_json(raw));
        assert!(
            event_digest(&a).and_then(digest::decode).is_some(),
            "{}: {kind}",
            file.display()
        );
        seq += 1;
        let view = |payload| RecordView {
            seq,
            ts_unix_ns: 1_000_000 * seq as i64,
            kind,
            payload,
        };
        with.apply(&view(&a));
        without.apply(&view(&b));
        assert_eq!(
            with.encode(),
            without.encode(),
            "{} {kind}: the digest folds otherwise than the JSON",
            file.display()
        );
    }
    assert!(seq > 200, "{seq} fixture payloads");
    assert!(with.tools.calls > 0 && with.files.by_path.len() > 1 && with.compactions.count > 0);
}

/// Digests of every version the fold reads (this build's) decode, for every fixture payload of
/// every host, to the
/// event the fold reads from the JSON (`Event::parse` after the lenient pre-pass), less what
/// no fold reads: `turn_id`, the prompt's `origin`, a tool's `outcome_unknown` and a response
/// outside `Tool::read_response`.
#[test]
fn digests_of_every_version_decode_as_the_json_parses() {
    let mut n = 0;
    for p in support::all_payloads() {
        let kind = p
            .event
            .as_deref()
            .filter(|k| valid_kind(k))
            .unwrap_or("event");
        let raw = sjournal::event::lenient::text(&p.json);
        let mut parsed = sjournal::event::Event::parse(kind, &raw);
        parsed.turn_id = None;
        parsed.origin = Default::default();
        if let Some(t) = &mut parsed.tool {
            t.response = t.read_response();
            t.outcome_unknown = false;
        }
        let want = format!("{parsed:?}");
        let bytes = digest::derive(kind, &p.json);
        assert_eq!(digest::version(&bytes), Some(digest::CURRENT));
        let got = digest::decode(&bytes).map(|e| format!("{e:?}"));
        assert_eq!(
            got.as_deref(),
            Some(want.as_str()),
            "{} ({kind})",
            p.file.display()
        );
        n += 1;
    }
    assert!(n > 200, "{n} fixture payloads");
}

const JSON: &str =
    r#"{"hook_event_name":"UserPromptSubmit","session_id":"dg","prompt":"from the json"}"#;
const OTHER: &str =
    r#"{"hook_event_name":"UserPromptSubmit","session_id":"dg","prompt":"from the digest"}"#;

/// The JSON of `JSON` followed by the digest of `OTHER`.
fn disagreeing() -> Vec<u8> {
    let mut p = encode_event_json(JSON);
    p.extend_from_slice(event_digest(&encode_event("UserPromptSubmit", OTHER)).unwrap());
    p
}

fn prompt_folded(payload: &[u8]) -> String {
    let s = fold([RecordView {
        seq: 1,
        ts_unix_ns: 1,
        kind: "UserPromptSubmit",
        payload,
    }]);
    s.prompts.back().unwrap().text.clone()
}

#[test]
fn the_fold_reads_the_digest_and_verify_digests_catches_one_that_disagrees() {
    assert_eq!(
        prompt_folded(&encode_event("UserPromptSubmit", JSON)),
        "from the json"
    );
    assert_eq!(prompt_folded(&disagreeing()), "from the digest");

    let dir = support::scratch();
    let root = Root::new(dir.path());
    let ok = encode_event("UserPromptSubmit", JSON);
    let mut w = Writer::open(&root, "dg", &WriterOptions::default()).unwrap();
    w.append_batch(&[
        ("UserPromptSubmit", &ok[..]),
        ("UserPromptSubmit", &disagreeing()[..]),
    ])
    .unwrap();
    drop(w);
    let path = root.session("dg").unwrap().journal;
    // Chained and checksummed like any record: only the digest check sees it.
    assert!(verify_file(&path, None).unwrap().ok);
    let d = verify_digests(&path, None).unwrap();
    let m = d.mismatch.expect("the disagreeing digest is reported");
    assert_eq!(m.seq, 2);
    assert!(
        m.what.contains("differs from the one its JSON derives"),
        "{}",
        m.what
    );

    let out = support::sjournal(dir.path())
        .args(["verify", "--digests", "--session", "dg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(seq 2)") && stdout.contains("digest"),
        "{stdout}"
    );
    // Without --digests, verify checks what it always did.
    let out = support::sjournal(dir.path())
        .args(["verify", "--session", "dg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn a_digest_of_another_version_is_left_alone() {
    // Versions 1 and 2 were written by earlier builds and are no longer read; 127 stands for
    // one no build wrote. Each folds from its JSON, and the journal verifies.
    for version in [1u8, 2, 127] {
        let mut p = disagreeing();
        // The digest is `[version, fold version, body, strs]`: a fixarray of four, then the
        // versions (positive fixints while they are below 128).
        let at = p.len() - event_digest(&p).unwrap().len();
        let (v, f) = digest::CURRENT;
        assert_eq!(p[at..at + 3], [0x94, v as u8, f as u8]);
        p[at + 1] = version;
        assert_eq!(
            digest::version(event_digest(&p).unwrap()),
            Some((u32::from(version), f))
        );
        assert_eq!(
            prompt_folded(&p),
            "from the json",
            "digest version {version}"
        );

        let dir = support::scratch();
        let root = Root::new(dir.path());
        let mut w = Writer::open(&root, "dg", &WriterOptions::default()).unwrap();
        w.append("UserPromptSubmit", &p).unwrap();
        drop(w);
        let journal = root.session("dg").unwrap().journal;
        verify_file(&journal, None).unwrap();
        let d = verify_digests(&journal, None).unwrap();
        assert_eq!(
            (d.events, d.checked, d.other_version),
            (1, 0, 1),
            "{version}"
        );
        assert!(d.mismatch.is_none());
    }
}
