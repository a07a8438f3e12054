//! The fixture corpus: every real Claude Code payload (tests/fixtures/claude-code) and the
//! payloads constructed from the other hosts' specifications (tests/fixtures/constructed).
//! Each must parse into the canonical event its host's adapter promises, be recognised as
//! coming from its host, fold without being counted as undecodable, and come back out of a
//! journal byte for byte.

use crate::support;

use sjournal::event::{Event, EventKind, Host};
use sjournal::fold::State;
use sjournal::format::payload::decode_event;
use sjournal::journal::JournalReader;
use support::{constructed, event, real_claude, replay, temp_root, write_journal, Fixture};

/// The fixture parsed as the fold parses it; its event name is the record kind.
fn parse(f: &Fixture) -> Event<'_> {
    Event::parse(&f.event, &f.raw)
}

fn what(f: &Fixture) -> String {
    format!("{}: {} {:?}", f.file, f.event, f.variant)
}

#[test]
fn real_claude_payloads_parse_to_their_own_kind() {
    let all = real_claude();
    assert_eq!(all.len(), 37, "the real capture has 37 payloads");
    for f in &all {
        let e = parse(f);
        assert_eq!(e.host, Host::Claude, "{}", what(f));
        assert_eq!(e.kind.as_str(), f.event, "{}", what(f));
        assert!(e.parsed);
        assert!(e.session_id.is_some(), "{}", what(f));
        let v: serde_json::Value = serde_json::from_str(&f.raw).unwrap();
        assert_eq!(Host::detect(&v), Host::Claude, "{}", what(f));
        if let Some(t) = v.get("tool_name").and_then(|t| t.as_str()) {
            assert_eq!(
                e.tool.as_ref().map(|t| t.name.as_ref()),
                Some(t),
                "{}",
                what(f)
            );
        }
    }
}

#[test]
fn every_documented_claude_event_has_a_payload() {
    let mut seen: Vec<EventKind> = real_claude()
        .iter()
        .chain(constructed().iter())
        .map(|f| parse(f))
        .filter(|e| e.host == Host::Claude)
        .map(|e| e.kind)
        .collect();
    seen.sort();
    seen.dedup();
    let missing: Vec<&str> = EventKind::KNOWN
        .iter()
        .filter(|k| !seen.contains(k))
        .map(|k| k.as_str())
        .collect();
    assert!(missing.is_empty(), "no fixture for {missing:?}");
    assert!(
        seen.contains(&EventKind::Other),
        "an unknown event is in the corpus"
    );
}

#[test]
fn constructed_payloads_map_as_their_host_promises() {
    let all = constructed();
    let hosts: std::collections::BTreeSet<String> = all
        .iter()
        .map(|f| f.expect.as_ref().unwrap().host.clone())
        .collect();
    assert_eq!(
        hosts.into_iter().collect::<Vec<_>>(),
        ["claude", "cline", "codex", "cursor", "gemini", "openclaw"]
    );
    for f in &all {
        let x = f.expect.as_ref().unwrap();
        let e = parse(f);
        assert_eq!(e.host.as_str(), x.host, "{}", what(f));
        assert_eq!(e.kind.as_str(), x.kind, "{}", what(f));
        assert_eq!(
            e.session_id.as_deref(),
            Some(x.session.as_str()),
            "{}",
            what(f)
        );
        assert_eq!(
            e.tool.as_ref().map(|t| t.name.as_ref()),
            x.tool.as_deref(),
            "{}",
            what(f)
        );
        let v: serde_json::Value = serde_json::from_str(&f.raw).unwrap();
        assert_eq!(Host::detect(&v), e.host, "{}", what(f));
        assert_eq!(e.name, f.event, "the host's own name is kept: {}", what(f));
    }
}

/// Folds the fixtures of one constructed file into a state.
fn fold_file(file: &str) -> State {
    let mut s = State::new();
    let fx: Vec<Fixture> = constructed()
        .into_iter()
        .filter(|f| f.file == file)
        .collect();
    assert!(!fx.is_empty());
    for (i, f) in fx.iter().enumerate() {
        let (kind, payload) = event(&f.raw);
        s.apply(&sjournal::fold::RecordView {
            seq: i as u64 + 1,
            ts_unix_ns: (i as i64 + 1) * 1_000_000_000,
            kind: &kind,
            payload: &payload,
        });
    }
    s
}

#[test]
fn host_specific_facts_fold() {
    let codex = fold_file("codex.jsonl");
    assert_eq!(codex.identity.host.as_deref(), Some("codex"));
    assert_eq!(codex.identity.model.as_deref(), Some("gpt-5.5-codex"));
    assert!(
        codex.files.by_path["src/status.rs"].edits == 1,
        "apply_patch edits"
    );
    assert_eq!((codex.turns.count, codex.turns.stops), (1, 1));
    assert_eq!(
        codex.compactions.count, 1,
        "Pre, Post and SessionStart(compact) are one"
    );
    assert!(codex.tools.open.is_empty());

    let gemini = fold_file("gemini.jsonl");
    assert_eq!(gemini.tools.failures, 1, "AfterTool with an error");
    assert_eq!(gemini.files.by_path["/home/dev/app/Makefile"].writes, 1);
    assert_eq!(
        gemini.prompts.back().unwrap().text,
        "why does the build fail?"
    );
    assert_eq!(
        gemini.ended.as_ref().unwrap().reason.as_deref(),
        Some("exit")
    );
    assert_eq!(gemini.counts.other_names["BeforeModel"], 1);

    let cursor = fold_file("cursor.jsonl");
    assert_eq!(cursor.files.by_path["/home/dev/app/src/bar.ts"].edits, 1);
    assert_eq!(cursor.files.by_path["/home/dev/app/src/bar.ts"].reads, 1);
    assert_eq!(cursor.tools.by_tool["Shell"].calls, 1);
    assert_eq!(cursor.tools.failures, 1);
    assert_eq!(cursor.identity.cwd.as_deref(), Some("/home/dev/app"));

    let cline = fold_file("cline.jsonl");
    assert_eq!(cline.tools.by_tool["execute_command"].failures, 1);
    assert_eq!(cline.tools.by_tool["execute_command"].max_ms, 4100);
    assert_eq!(cline.files.by_path["src/login.ts"].edits, 1);
    assert_eq!(
        cline.ended.as_ref().unwrap().reason.as_deref(),
        Some("complete")
    );
    assert_eq!(cline.identity.starts, 2);

    let oc = fold_file("openclaw.jsonl");
    assert_eq!((oc.turns.count, oc.turns.stops), (1, 1));
    assert_eq!(oc.tools.by_tool["email_read"].calls, 1);
    assert_eq!(oc.identity.session_kind.as_deref(), Some("spawn"));
    assert_eq!(
        oc.identity.links[0].session.as_deref(),
        Some("agent:main:main")
    );
    let c = oc.compactions.last.as_ref().unwrap();
    assert_eq!(
        (c.context_usage_percent, c.message_count),
        (Some(87.5), Some(212))
    );
    assert_eq!(
        oc.ended.as_ref().unwrap().reason.as_deref(),
        Some("shutdown")
    );

    let cc = fold_file("claude-code.jsonl");
    assert_eq!(cc.tools.denied, 1);
    assert_eq!(cc.files.by_path["/home/dev/app/src/lib.rs"].edits, 1);
    assert_eq!(cc.counts.by_kind["other"], 1);
    assert_eq!(cc.counts.other_names["FutureHookEvent"], 1);
}

#[test]
fn corpus_round_trips_through_a_journal_byte_for_byte() {
    let all: Vec<Fixture> = real_claude().into_iter().chain(constructed()).collect();
    let (_dir, root) = temp_root();
    let records: Vec<_> = all.iter().map(|f| event(&f.raw)).collect();
    write_journal(&root, "corpus", &records, 1_700_000_000_000_000_000);

    let reader = JournalReader::open(&root.session("corpus").unwrap().journal, None).unwrap();
    let mut n = 0;
    for (rec, f) in reader.records().unwrap().zip(&all) {
        let rec = rec.unwrap();
        assert_eq!(
            decode_event(rec.seq, rec.payload).unwrap().as_bytes(),
            f.raw.as_bytes()
        );
        n += 1;
    }
    assert_eq!(n, all.len());

    let s = replay(&root, "corpus");
    assert_eq!(s.counts.events, all.len() as u64);
    assert_eq!(s.journal.undecodable, 0);
    assert_eq!(s.counts.by_kind.values().sum::<u64>(), all.len() as u64);
    assert_eq!(s.seq, all.len() as u64);
}

#[test]
fn garbage_never_stops_the_fold() {
    let mut s = State::new();
    let cases: &[&str] = &[
        "",
        "null",
        "[1,2,3]",
        "\"text\"",
        "{\"hook_event_name\": 5}",
        "{\"hook_event_name\":\"PostToolUse\",\"tool_name\":{\"x\":1},\"duration_ms\":\"slow\"}",
        "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_use_id\":[],\"tool_input\":7}",
        "{\"hookName\":\"PostToolUse\",\"postToolUse\":\"not an object\"}",
        "{not json",
    ];
    for (i, raw) in cases.iter().enumerate() {
        let payload = sjournal::format::payload::encode_event_json(raw);
        s.apply(&sjournal::fold::RecordView {
            seq: i as u64 + 1,
            ts_unix_ns: 0,
            kind: "event",
            payload: &payload,
        });
    }
    s.apply(&sjournal::fold::RecordView {
        seq: 100,
        ts_unix_ns: 0,
        kind: "event",
        payload: b"\xc1 not msgpack",
    });
    assert_eq!(s.counts.events, cases.len() as u64);
    assert_eq!(s.journal.undecodable, 1);
    assert_eq!(s.seq, 100);
}

/// The Cline CLI 3.0.65's captured payloads, one JSON object a line.
fn cline_cli_payloads() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cline/payloads-3.0.65.jsonl"),
    )
    .unwrap()
}

/// The Cline CLI 3.0.65's real payloads (tests/fixtures/cline/payloads-3.0.65.jsonl, captured
/// by tests/real_hosts/cline.rs): the SDK's event names, the session in `sessionContext`, and
/// a command that exits non-zero (or a file that is missing) as a failed call although
/// `postToolUse.success` is true; a subagent's run (an agent with a parent) as
/// SubagentStart/SubagentStop.
#[test]
fn real_cline_cli_payloads_parse_and_fold() {
    let text = cline_cli_payloads();
    let lines: Vec<(String, String, String)> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["event"].as_str().unwrap().to_owned(),
                v["variant"].as_str().unwrap_or("").to_owned(),
                v["payload"].to_string(),
            )
        })
        .collect();
    assert_eq!(lines.len(), 13);
    let mut s = State::new();
    for (i, (event, variant, raw)) in lines.iter().enumerate() {
        let e = Event::parse(event, raw);
        assert_eq!(
            Host::detect(&serde_json::from_str(raw).unwrap()),
            Host::Cline,
            "{event}"
        );
        assert_eq!(e.host, Host::Cline);
        let session = serde_json::from_str::<serde_json::Value>(raw).unwrap()["sessionContext"]
            ["rootSessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(e.session_id.as_deref(), Some(session.as_str()), "{event}");
        let sub = variant == "in-subagent";
        let kind = match (event.as_str(), sub) {
            ("agent_start", false) => EventKind::SessionStart,
            ("agent_start", true) => EventKind::SubagentStart,
            ("tool_call", _) => EventKind::PreToolUse,
            ("tool_result", _) => EventKind::PostToolUse,
            ("agent_end", false) => EventKind::SessionEnd,
            ("agent_end", true) => EventKind::SubagentStop,
            (other, _) => panic!("unexpected {other}"),
        };
        assert_eq!(e.kind, kind, "{event} {variant}");
        assert_eq!(e.agent_id.is_some(), sub, "{event} {variant}");
        if let Some(t) = &e.tool {
            assert_eq!(t.failed, variant.ends_with("/failed"), "{event} {variant}");
            assert!(t.use_id.is_some() && t.input.is_some(), "{event} {variant}");
        }
        if variant == "run_commands/failed" {
            assert_eq!(e.tool.as_ref().unwrap().exit_code, Some(3));
        }
        s.apply(&sjournal::fold::RecordView {
            seq: i as u64 + 1,
            ts_unix_ns: (i as i64 + 1) * 1_000_000_000,
            kind: event,
            payload: &support::event(raw).1,
        });
    }
    assert_eq!(s.tools.failures, 2);
    assert_eq!((s.subagents.started, s.subagents.stopped), (1, 1));
    assert_eq!(s.tools.by_tool["run_commands"].failures, 1);
    let notes = &s.files.by_path["/home/dev/run/project/notes.txt"];
    assert_eq!((notes.writes, notes.created), (1, true));
    assert_eq!(
        s.ended.as_ref().unwrap().reason.as_deref(),
        Some("complete")
    );
    assert_eq!(s.identity.cwd.as_deref(), Some("/home/dev/run/project"));
}

/// The real Cline CLI payloads, with the failed `run_commands` repeated for another command:
/// each failed call keeps its command or path, its error and its exit code, two different
/// failing commands are two failures, and the recovery block names them.
#[test]
fn real_cline_cli_failures_keep_their_call_and_error() {
    use sjournal::context::{inject, Extras, InjectionPoint, Policy};
    let text = cline_cli_payloads();
    let mut lines: Vec<(String, String)> = Vec::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let event = v["event"].as_str().unwrap().to_owned();
        let payload = v["payload"].to_string();
        if v["variant"] == "run_commands/failed" {
            // The same call failing for another command (the SDK's shape, its text changed).
            let other = payload
                .replace("exit 3", "make chk")
                .replace("code 3", "code 2")
                .replace("call_50aec0d7ec0c2309", "call_50aec0d7ec0c2310");
            lines.push((event.clone(), payload));
            lines.push((event, other));
        } else {
            lines.push((event, payload));
        }
    }
    let mut s = State::new();
    for (i, (event, raw)) in lines.iter().enumerate() {
        let e = Event::parse(event, raw);
        if e.tool.as_ref().is_some_and(|t| t.failed) {
            assert!(e.error.is_some(), "a failed call keeps its error: {raw}");
        }
        s.apply(&sjournal::fold::RecordView {
            seq: i as u64 + 1,
            ts_unix_ns: (i as i64 + 1) * 1_000_000_000,
            kind: event,
            payload: &support::event(raw).1,
        });
    }
    let items: Vec<_> = s.failures.items.iter().collect();
    let got: Vec<(&str, &str, Option<i64>, &[String])> = items
        .iter()
        .map(|f| {
            (
                f.tool.as_str(),
                f.detail.as_str(),
                f.exit_code,
                f.error_tail.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "run_commands",
                "exit 3",
                Some(3),
                &["Command exited with code 3".to_owned()][..]
            ),
            (
                "run_commands",
                "make chk",
                Some(2),
                &["Command exited with code 2".to_owned()][..]
            ),
            (
                "read_files",
                "/home/dev/run/project/missing.txt",
                None,
                &[
                    "Error reading file: ENOENT: no such file or directory, statx \
                   '/home/dev/run/project/missing.txt'"
                        .to_owned()
                ][..]
            ),
        ]
    );
    assert_ne!(items[0].key, items[1].key, "two commands, two failures");
    assert_eq!(s.tools.by_tool["run_commands"].failures, 2);

    let at = InjectionPoint {
        event_seq: s.seq + 1,
        kind: EventKind::SessionStart,
        source: Some("compact".into()),
        host: Host::Cline,
    };
    let block = inject(&s, &at, &Policy::default(), &Extras::default()).text;
    for named in [
        "exit 3",
        "make chk",
        "missing.txt",
        "Command exited with code 2",
    ] {
        assert!(block.contains(named), "{named} missing from:\n{block}");
    }
    assert!(!block.contains("``"), "an empty detail in:\n{block}");
}
