//! Determinism of the fold, by property: for random sequences of records (events of every
//! host, garbage, system records of every kind, including ones that must be rejected), a
//! state encoded after any prefix, decoded, and fed the rest gives the very bytes of a full
//! replay; two replays hash alike; decoding and re-encoding a state changes no byte. The last
//! property runs through the real snapshot files and loader on disk. Events carry their fold
//! digests, and fold after every record as their JSON alone does.

use crate::support;

use proptest::prelude::*;
use sjournal::fold::digest::encode_event;
use sjournal::fold::{fold, RecordView, State};
use sjournal::format::payload::{self as p, encode_system, without_digest};
use sjournal::snapshot::{self, load_state, LoadOptions, SnapshotUse};
use support::{constructed, temp_root, write_journal};

type Rec = (String, Vec<u8>);

fn ev(kind: &str, json: serde_json::Value) -> Rec {
    let mut v = json;
    v["hook_event_name"] = kind.into();
    v["session_id"] = "prop".into();
    (kind.to_owned(), encode_event(kind, &v.to_string()))
}

fn sys<T: serde::Serialize>(kind: &str, v: &T) -> Rec {
    (kind.to_owned(), encode_system(v))
}

fn tool_event() -> impl Strategy<Value = Rec> {
    let kinds = prop_oneof![
        Just("PreToolUse"),
        Just("PostToolUse"),
        Just("PostToolUseFailure"),
        Just("PermissionDenied")
    ];
    let tools = prop_oneof![
        Just("Bash"),
        Just("Read"),
        Just("Write"),
        Just("Edit"),
        Just("mcp__x__y")
    ];
    (kinds, tools, 0..6u8, 0..5u8, proptest::option::of(0..500u64)).prop_map(
        |(k, t, id, file, ms)| {
            let mut v = serde_json::json!({
                "tool_name": t, "tool_use_id": format!("t{id}"),
                "tool_input": {"file_path": format!("/p/f{file}"), "command": "echo hi"},
                "agent_id": if id == 0 { serde_json::Value::from("a1") } else { serde_json::Value::Null },
            });
            if let Some(ms) = ms {
                v["duration_ms"] = ms.into();
            }
            ev(k, v)
        },
    )
}

fn lifecycle_event() -> impl Strategy<Value = Rec> {
    prop_oneof![
        prop_oneof![
            Just("startup"),
            Just("resume"),
            Just("compact"),
            Just("clear"),
            Just("fork")
        ]
        .prop_map(|s| ev(
            "SessionStart",
            serde_json::json!({"source": s, "model": "m1"})
        )),
        "[a-z ]{0,12}".prop_map(|t| ev("UserPromptSubmit", serde_json::json!({"prompt": t}))),
        Just(ev(
            "Stop",
            serde_json::json!({"last_assistant_message": "ok"})
        )),
        Just(ev(
            "StopFailure",
            serde_json::json!({"error": "server_error"})
        )),
        prop_oneof![Just("auto"), Just("manual")]
            .prop_map(|t| ev("PreCompact", serde_json::json!({"trigger": t}))),
        Just(ev(
            "PostCompact",
            serde_json::json!({"trigger": "auto", "compact_summary": "s"})
        )),
        (0..3u8).prop_map(|a| ev(
            "SubagentStart",
            serde_json::json!({"agent_id": format!("a{a}"), "agent_type": "x"})
        )),
        (0..3u8).prop_map(|a| ev(
            "SubagentStop",
            serde_json::json!({"agent_id": format!("a{a}")})
        )),
        Just(ev("SessionEnd", serde_json::json!({"reason": "other"}))),
        Just(ev(
            "CwdChanged",
            serde_json::json!({"old_cwd": "/a", "new_cwd": "/b"})
        )),
        "[A-Z][a-z]{1,6}".prop_map(|n| ev(&n, serde_json::json!({"x": [1, {"y": null}]}))),
        Just(("event".to_owned(), encode_event("event", "{not json"))),
        Just(("event".to_owned(), encode_event("event", "[1,2]"))),
    ]
}

fn host_event() -> impl Strategy<Value = Rec> {
    let all: Vec<Rec> = constructed()
        .iter()
        .map(|f| (f.event.clone(), encode_event(&f.event, &f.raw)))
        .filter(|(k, _)| sjournal::format::record::valid_kind(k))
        .collect();
    proptest::sample::select(all)
}

fn system_record() -> impl Strategy<Value = Rec> {
    let channel = prop_oneof![
        Just("persistent"),
        Just("ephemeral"),
        Just("at-stop"),
        Just("bogus")
    ];
    prop_oneof![
        (channel.clone(), 0..4u8, "[a-z]{0,8}").prop_map(|(c, k, t)| sys(
            p::KIND_CONTEXT_SET,
            &p::ContextSet {
                channel: c.into(),
                key: format!("k{k}"),
                text: t
            }
        )),
        (proptest::option::of(channel), proptest::option::of(0..4u8)).prop_map(|(c, k)| sys(
            p::KIND_CONTEXT_CLEAR,
            &p::ContextClear {
                channel: c.map(Into::into),
                key: k.map(|k| format!("k{k}"))
            }
        )),
        (0..3u8, proptest::option::of(0..3u64)).prop_map(|(n, m)| sys(
            p::KIND_FIRE,
            &p::Fire {
                name: format!("f{n}"),
                max: m
            }
        )),
        proptest::collection::vec(0..5u8, 0..3).prop_map(|ks| sys(
            p::KIND_ONCE,
            &p::Once {
                keys: ks.into_iter().map(|k| format!("o{k}")).collect()
            }
        )),
        (0..3u8, 0..100u32, proptest::option::of(0..40u64)).prop_map(|(n, v, e)| sys(
            p::KIND_SLOT_SET,
            &p::SlotSet {
                name: format!("s{n}"),
                value: v.to_string(),
                expect_seq: e
            }
        )),
        (0..2u8, 0..100u32, proptest::option::of(1..4u32)).prop_map(|(n, v, m)| sys(
            p::KIND_LIST_PUSH,
            &p::ListPush {
                name: format!("l{n}"),
                value: format!("[{v}]"),
                max: m
            }
        )),
        (0..2u8).prop_map(|n| sys(
            p::KIND_LIST_CLEAR,
            &p::ListClear {
                name: format!("l{n}")
            }
        )),
        (
            1..50u64,
            "[a-z]{0,5}",
            prop::collection::vec((0..6u8, 0..3u8), 0..4),
            0..4u8
        )
            .prop_map(|(s, t, items, mode)| sys(
                p::KIND_INJECTED,
                &p::Injected {
                    event_seq: s,
                    event_kind: "Stop".into(),
                    text_blake3: "00".into(),
                    len: t.len() as u64,
                    truncated: false,
                    text: t,
                    // The seen set (and a compaction's answer) folds from these.
                    mode: ["recovery", "prompt", "subagent"]
                        .get(mode as usize)
                        .map(|m| m.to_string()),
                    items: items
                        .into_iter()
                        .map(|(k, h)| p::InjectedItem {
                            key: format!("file:f{k}"),
                            hash: format!("{h:016}"),
                        })
                        .collect(),
                    ..Default::default()
                }
            )),
        Just(sys(
            p::KIND_UNPARSED,
            &p::Unparsed {
                raw: b"{x".to_vec(),
                error: "eof".into(),
                ..Default::default()
            }
        )),
        Just(sys(
            p::KIND_RECOVERED,
            &p::Recovered {
                offset: 9,
                length: 3,
                blake3: "ab".into(),
                quarantine: "q".into(),
                reason: "torn".into()
            }
        )),
        (prop::collection::vec(0..3u8, 0..4), 0..3u64).prop_map(|(rules, more)| redacted(
            &rules
                .into_iter()
                .map(|r| ["aws-access-key", "github-pat", "jwt"][r as usize])
                .collect::<Vec<_>>(),
            more
        )),
        Just((p::KIND_REDACTED.to_owned(), encode_system(&"not a record"))),
        Just(("sjournal.future".to_owned(), vec![0x80])),
        Just((p::KIND_ONCE.to_owned(), vec![0xc1])),
    ]
}

/// A `sjournal.redacted` record as the hook writes it, naming `rules`.
fn redacted(rules: &[&str], more: u64) -> Rec {
    use sjournal::redact::{Finding, RedactedRecord};
    sys(
        p::KIND_REDACTED,
        &RedactedRecord {
            event_kind: "PostToolUse".into(),
            event_blake3: String::new(),
            event_hash: "00".into(),
            key_id: Some("0123456789abcdef".into()),
            ruleset: 1,
            found: rules
                .iter()
                .enumerate()
                .map(|(i, r)| Finding {
                    rule: r.to_string(),
                    path: format!("/tool_response/stdout/{i}"),
                    tag: "3f9a1c07".into(),
                })
                .collect(),
            more,
        },
    )
}

/// The fold counts the events redacted and their secrets by rule (a record that does not
/// decode is rejected and counts nothing), and no `sjournal.redacted` record is an unknown kind.
#[test]
fn redacted_records_fold_into_counts_by_rule() {
    let recs = vec![
        redacted(&["github-pat", "github-pat", "jwt"], 0),
        redacted(&["jwt"], 2),
        (p::KIND_REDACTED.to_owned(), encode_system(&"not a record")),
    ];
    let state = fold(views(&recs.into_iter().map(|r| (r, 1)).collect::<Vec<_>>()));
    let j = &state.journal;
    assert_eq!(j.redacted, 2);
    assert_eq!(j.unknown_system, 0);
    let by_rule: Vec<(&str, u64)> = j.redactions.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        by_rule,
        [
            (sjournal::fold::REDACTED_OTHER, 2),
            ("github-pat", 2),
            ("jwt", 2)
        ]
    );
}

/// Counts saturate: a record claiming `u64::MAX` findings left out (written around the CLI,
/// or imported) does not overflow the fold, in any build profile.
#[test]
fn redaction_counts_saturate() {
    let recs = vec![
        (redacted(&["jwt"], u64::MAX), 1),
        (redacted(&["jwt"], u64::MAX), 1),
    ];
    let state = fold(views(&recs));
    assert_eq!(
        state.journal.redactions[sjournal::fold::REDACTED_OTHER],
        u64::MAX
    );
    let s = sjournal::redact::Summary::of_state(&state).unwrap();
    assert_eq!(s.secrets, u64::MAX);
}

/// At most `REDACTION_RULES_MAX` rules are counted by name, the rest together.
#[test]
fn redaction_rules_counted_by_name_are_bounded() {
    use sjournal::limits::REDACTION_RULES_MAX;
    let names: Vec<String> = (0..REDACTION_RULES_MAX + 5)
        .map(|i| format!("r{i:04}"))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let recs = vec![(redacted(&refs, 0), 1), (redacted(&refs[..1], 0), 1)];
    let state = fold(views(&recs));
    let m = &state.journal.redactions;
    assert_eq!(m.len(), REDACTION_RULES_MAX + 1);
    assert_eq!(m[sjournal::fold::REDACTED_OTHER], 5);
    assert_eq!(m["r0000"], 2);
}

fn records(max: usize) -> impl Strategy<Value = Vec<(Rec, i64)>> {
    let rec = prop_oneof![
        4 => tool_event(),
        3 => lifecycle_event(),
        2 => host_event(),
        3 => system_record(),
    ];
    proptest::collection::vec((rec, 0..3_000_000_000i64), 0..max)
}

fn views(recs: &[(Rec, i64)]) -> Vec<RecordView<'_>> {
    let mut ts = 1_700_000_000_000_000_000i64;
    recs.iter()
        .enumerate()
        .map(|(i, ((kind, payload), dt))| {
            ts += dt;
            RecordView {
                seq: i as u64 + 1,
                ts_unix_ns: ts,
                kind,
                payload,
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn snapshot_at_every_k_plus_tail_equals_full_replay(recs in records(120)) {
        let v = views(&recs);
        let full = fold(v.iter().copied());
        let full_bytes = full.encode();
        prop_assert_eq!(full.seq, v.len() as u64);
        let mut prefix = State::new();
        for k in 0..=v.len() {
            if k > 0 {
                prefix.apply(&v[k - 1]);
            }
            let bytes = prefix.encode();
            let mut resumed = State::decode(&bytes).unwrap();
            prop_assert_eq!(resumed.encode(), bytes.clone(), "decode/encode is canonical at k={}", k);
            for r in &v[k..] {
                resumed.apply(r);
            }
            prop_assert_eq!(resumed.encode(), full_bytes.clone(), "k={}", k);
        }
        // Records already folded are skipped: folding the whole journal again changes nothing.
        let mut again = full.clone();
        for r in &v {
            again.apply(r);
        }
        prop_assert_eq!(again.encode(), full_bytes);
    }

    /// The events carry digests (as this build writes them): folding the same records with
    /// the digests cut off (as the format wrote events before digests, so the fold parses
    /// each JSON) gives the same state after every record.
    #[test]
    fn digests_fold_like_their_json(recs in records(200)) {
        let v = views(&recs);
        let (mut with, mut without) = (State::new(), State::new());
        for r in &v {
            with.apply(r);
            let json_only = if p::is_system_kind(r.kind) { r.payload } else { without_digest(r.payload) };
            without.apply(&RecordView { payload: json_only, ..*r });
            prop_assert_eq!(with.encode(), without.encode(), "after seq {} ({})", r.seq, r.kind);
        }
    }

    /// A digest with its bytes changed (as a tampered journal with recomputed CRCs would hold
    /// it) never makes the fold panic: it decodes to an event (which `verify --digests`
    /// flags), or the fold reads the JSON. The decoder's string and array lengths, versions and
    /// markers all get hit.
    #[test]
    fn a_changed_digest_never_panics_the_fold(
        recs in records(40),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let v = views(&recs);
        let mut state = State::new();
        for r in &v {
            if p::is_system_kind(r.kind) {
                state.apply(r);
                continue;
            }
            let json = without_digest(r.payload);
            let mut digest = r.payload[json.len()..].to_vec();
            for (at, byte, how) in &edits {
                if digest.is_empty() {
                    digest.push(*byte);
                    continue;
                }
                let i = at.index(digest.len());
                match how {
                    0 => digest[i] = *byte,
                    1 => digest.insert(i, *byte),
                    _ => {
                        digest.remove(i);
                    }
                }
            }
            let _ = sjournal::fold::digest::decode(&digest);
            let payload = [json, &digest[..]].concat();
            state.apply(&RecordView { payload: &payload, ..*r });
        }
        prop_assert_eq!(state.seq, v.len() as u64);
    }

    #[test]
    fn two_replays_hash_alike(recs in records(200)) {
        let v = views(&recs);
        let a = fold(v.iter().copied());
        let b = fold(v.iter().copied());
        prop_assert_eq!(a.state_hash(), b.state_hash());
        prop_assert_eq!(&a, &b);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The same property through the real files: a snapshot written at seq k and loaded back
    /// with the journal's tail gives the bytes of a full replay.
    #[test]
    fn snapshot_files_plus_tail_equal_full_replay(recs in records(80), picks in proptest::collection::vec(any::<proptest::sample::Index>(), 1..4)) {
        let (_dir, root) = temp_root();
        let rs: Vec<Rec> = recs.into_iter().map(|(r, _)| r).collect();
        if rs.is_empty() {
            return Ok(());
        }
        write_journal(&root, "prop", &rs, 1_700_000_000_000_000_000);
        let paths = root.session("prop").unwrap();
        let full = support::replay(&root, "prop");
        for pick in picks {
            let k = pick.index(rs.len()) as u64 + 1;
            let at = LoadOptions { at: Some(k), use_snapshot: false, deadline: None };
            let (sk, info) = load_state(&root, "prop", &at).unwrap();
            prop_assert_eq!(sk.seq, k);
            snapshot::write(&paths, &sk, &info.head.unwrap()).unwrap();
            let (loaded, info) = load_state(&root, "prop", &LoadOptions::latest()).unwrap();
            prop_assert_eq!(&info.snapshot, &SnapshotUse::Used { seq: k });
            prop_assert_eq!(info.tail_records, rs.len() as u64 - k);
            prop_assert!(info.warnings.is_empty(), "{:?}", info.warnings);
            prop_assert_eq!(loaded.encode(), full.encode(), "snapshot at {}", k);
        }
    }
}
