//! The hook parses each event once and derives the event's fold digest from that one parse
//! (`hook::route::Routed::into_captured`), where other writers derive it from the JSON text
//! (`digest::derive`). Every fixture payload of every host, run through the hook (host
//! detected, and again with `--host` naming another host, and one with a lone surrogate escape
//! that only the lenient reading accepts), must land with exactly the digest `derive` gives
//! its JSON: `verify --digests` checks every one and finds no mismatch. Input that is not JSON
//! is still kept, as a `sjournal.unparsed` record, with no digest.

use std::time::Duration;

use sjournal::audit::digests::verify_digests;
use sjournal::fold::digest;
use sjournal::format::payload::{decode_event, event_digest, is_system_kind, KIND_UNPARSED};
use sjournal::host::HostFlag;
use sjournal::journal::{JournalReader, Root};

use crate::support::{self, hook_opts};

/// Runs the hook on `input` in `root`, with `host`.
fn hook(root: &Root, host: HostFlag, input: &str) {
    let mut opts = hook_opts(root, Duration::from_secs(30));
    opts.host = host;
    let out = support::run_hook(opts, std::io::Cursor::new(input.as_bytes().to_vec()));
    assert!(out.landed.is_some(), "{input}: {:?}", out.diagnostics);
}

#[test]
fn every_digest_the_hook_writes_is_the_one_its_json_derives() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let payloads: Vec<String> = support::all_payloads()
        .into_iter()
        .map(|p| p.json)
        .collect();
    assert!(payloads.len() > 200, "{} fixture payloads", payloads.len());
    for p in &payloads {
        hook(&root, HostFlag::Auto, p);
    }
    // `--host` naming another host than the payload reads as: the digest is still the fold's
    // reading of the JSON (the host override is a record of its own).
    for p in payloads.iter().step_by(7) {
        hook(&root, "codex".parse().unwrap(), p);
        hook(&root, "claude".parse().unwrap(), p);
    }
    // A lone surrogate escape: serde_json refuses it, the lenient reading does not.
    let lenient =
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"dg-lenient","prompt":"cut \ud83d"}"#;
    hook(&root, HostFlag::Auto, lenient);
    hook(
        &root,
        HostFlag::Auto,
        r#"{"session_id":"dg-lenient", not json"#,
    );

    let (mut events, mut unparsed) = (0u64, 0u64);
    let mut sessions: Vec<_> = std::fs::read_dir(root.sessions_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sjl"))
        .collect();
    sessions.sort();
    assert!(sessions.len() > 5, "{sessions:?}");
    for path in sessions {
        let reader = JournalReader::open(&path, None).unwrap();
        for r in reader.records().unwrap().map(|r| r.unwrap()) {
            if r.kind == KIND_UNPARSED {
                unparsed += 1;
            }
            if is_system_kind(r.kind) {
                continue;
            }
            let json = decode_event(r.seq, r.payload).unwrap();
            assert_eq!(
                event_digest(r.payload),
                Some(&digest::derive(r.kind, json)[..]),
                "{} seq {} ({}): {json}",
                path.display(),
                r.seq,
                r.kind
            );
            events += 1;
        }
        let d = verify_digests(&path, None).unwrap();
        assert_eq!(d.mismatch, None, "{}", path.display());
        assert_eq!(d.checked, d.events, "{}: {d:?}", path.display());
    }
    assert!(events as usize > payloads.len(), "{events} events");
    assert_eq!(unparsed, 1, "the input that is not JSON is kept, once");
}
