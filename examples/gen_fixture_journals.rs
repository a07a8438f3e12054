//! Writes the checked-in fixture journals of `tests/fixtures/journals/`, whose folded states
//! are pinned by golden hashes in `tests/golden.rs`.
//!
//! Run only together with a `FOLD_VERSION` bump (or when adding a journal):
//! `cargo run --example gen_fixture_journals -- tests/fixtures/journals`. Every record gets a
//! fixed timestamp (`Writer::append_batch_at`), so the states they fold to do not depend on
//! when this ran (the journal headers carry the creation time, which no state depends on).

use std::path::{Path, PathBuf};

use serde_json::{json, value::RawValue};
// Events are written as the format wrote them before digests (JSON alone): these journals are
// the compatibility fixtures of `tests/digests.rs` (journals of that format still verify, fold
// and replay to their golden states).
use sjournal::format::payload::{self as p, encode_event_json as encode_event, encode_system};
use sjournal::journal::{Root, Writer, WriterOptions};

/// A record: kind and payload.
type Rec = (String, Vec<u8>);

/// 2026-01-01T00:00:00Z.
const BASE_NS: i64 = 1_767_225_600_000_000_000;

fn payloads(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            #[derive(serde::Deserialize)]
            struct L<'a> {
                event: String,
                #[serde(borrow)]
                payload: &'a RawValue,
            }
            let l: L = serde_json::from_str(line).unwrap();
            out.push((l.event, l.payload.get().to_owned()));
        }
    }
    out
}

fn write(root: &Root, session: &str, records: &[(String, Vec<u8>)]) {
    // Format 1, as these journals were first written: the compatibility fixtures of the
    // version-1 chain (a writer appends in its journal's header's version).
    let path = root.session(session).unwrap().journal;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let header = sjournal::format::header::Header::with_version(session, BASE_NS, 1);
    std::fs::write(&path, header.encode()).unwrap();
    let mut w = Writer::open(root, session, &WriterOptions::default()).unwrap();
    for (i, (kind, payload)) in records.iter().enumerate() {
        w.append_batch_at(BASE_NS + i as i64 * 1_500_000_000, &[(kind, payload)])
            .unwrap();
    }
}

fn ev(v: serde_json::Value) -> (String, Vec<u8>) {
    let kind = v["hook_event_name"].as_str().unwrap().to_owned();
    (kind, encode_event(&v.to_string()))
}

fn sys<T: serde::Serialize>(kind: &str, v: &T) -> (String, Vec<u8>) {
    (kind.to_owned(), encode_system(v))
}

/// A made-up but plausible session: context set early, turns of tool calls, a compaction,
/// primitives, an unknown event, a session end.
fn session() -> Vec<(String, Vec<u8>)> {
    let s = "golden-session";
    let base =
        |name: &str| json!({"session_id": s, "cwd": "/home/dev/app", "hook_event_name": name});
    let mut r = vec![ev({
        let mut v = base("SessionStart");
        v["source"] = "startup".into();
        v["model"] = "claude-opus-5-5".into();
        v
    })];
    r.push(sys(
        p::KIND_CONTEXT_SET,
        &p::ContextSet {
            channel: "persistent".into(),
            key: "rules".into(),
            text: "Run `cargo test` before every commit.".into(),
        },
    ));
    for turn in 0..6 {
        let mut v = base("UserPromptSubmit");
        v["prompt"] = format!("step {turn}: refactor module {turn}").into();
        r.push(ev(v));
        for call in 0..8 {
            let id = format!("toolu_{turn}_{call}");
            let (tool, input) = match call % 4 {
                0 => (
                    "Read",
                    json!({"file_path": format!("/home/dev/app/src/m{call}.rs")}),
                ),
                1 => (
                    "Edit",
                    json!({"file_path": format!("/home/dev/app/src/m{turn}.rs"), "old_string": "a", "new_string": "b"}),
                ),
                2 => (
                    "Bash",
                    json!({"command": "cargo test", "description": "Run tests"}),
                ),
                _ => (
                    "Write",
                    json!({"file_path": format!("/home/dev/app/notes/{turn}.md"), "content": "x"}),
                ),
            };
            let mut pre = base("PreToolUse");
            pre["tool_name"] = tool.into();
            pre["tool_input"] = input.clone();
            pre["tool_use_id"] = id.clone().into();
            r.push(ev(pre));
            let failed = turn == 3 && call == 2;
            let mut post = base(if failed {
                "PostToolUseFailure"
            } else {
                "PostToolUse"
            });
            post["tool_name"] = tool.into();
            post["tool_input"] = input;
            post["tool_use_id"] = id.into();
            post["duration_ms"] = (10 + call * 7).into();
            r.push(ev(post));
        }
        if turn == 2 {
            r.push(sys(
                p::KIND_FIRE,
                &p::Fire {
                    name: "lint".into(),
                    max: Some(2),
                },
            ));
            r.push(sys(
                p::KIND_ONCE,
                &p::Once {
                    keys: vec!["intro".into()],
                },
            ));
            r.push(sys(
                p::KIND_SLOT_SET,
                &p::SlotSet {
                    name: "plan".into(),
                    value: r#"{"step":2}"#.into(),
                    expect_seq: Some(0),
                },
            ));
            r.push(sys(
                p::KIND_LIST_PUSH,
                &p::ListPush {
                    name: "decisions".into(),
                    value: r#""keep the API""#.into(),
                    max: Some(3),
                },
            ));
            r.push(sys(
                p::KIND_CONTEXT_SET,
                &p::ContextSet {
                    channel: "at-stop".into(),
                    key: "progress".into(),
                    text: "modules 0-2 done".into(),
                },
            ));
        }
        if turn == 4 {
            let mut pre = base("PreCompact");
            pre["trigger"] = "auto".into();
            r.push(ev(pre));
            let mut start = base("SessionStart");
            start["source"] = "compact".into();
            r.push(ev(start));
            let mut post = base("PostCompact");
            post["trigger"] = "auto".into();
            post["compact_summary"] = "Refactoring modules; 0-3 done.".into();
            r.push(ev(post));
        }
        let mut stop = base("Stop");
        stop["last_assistant_message"] = format!("done with step {turn}").into();
        r.push(ev(stop));
    }
    let mut open = base("PreToolUse");
    open["tool_name"] = "Bash".into();
    open["tool_input"] = json!({"command": "cargo build --release"});
    open["tool_use_id"] = "toolu_open".into();
    r.push(ev(open));
    r.push(ev(
        json!({"session_id": s, "hook_event_name": "SomethingNew", "x": 1}),
    ));
    let mut end = base("SessionEnd");
    end["reason"] = "prompt_input_exit".into();
    r.push(ev(end));
    r
}

/// The recovery scenario (`tests/fixtures/scenarios/recovery.jsonl`) as the hook journals it:
/// each event, then, at the events the hook asks context for, the `sjournal.injected` record
/// of what the injection policy gives the state after the event. `tests/golden.rs` checks a
/// replay re-derives every one of them byte for byte: a renderer change that forgets to bump
/// `context::RENDER_VERSION` fails there.
fn recovery(fixtures: &Path) -> Vec<Rec> {
    use sjournal::context::{inject, Extras, InjectionPoint, Policy};
    use sjournal::fold::{RecordView, State};
    use sjournal::host::Host;
    let text = std::fs::read_to_string(fixtures.join("scenarios/recovery.jsonl")).unwrap();
    let policy = Policy::default();
    let mut state = State::new();
    let mut out: Vec<Rec> = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let payload = &v["payload"];
        let (kind, raw) = ev(payload.clone());
        let json = payload.to_string();
        let seq = out.len() as u64 + 1;
        state.apply(&RecordView {
            seq,
            ts_unix_ns: 0,
            kind: &kind,
            payload: &raw,
        });
        out.push((kind.clone(), raw));
        let protocol = Host::detect(payload);
        if !policy.wants(protocol, &kind) {
            continue;
        }
        let at = InjectionPoint::of_record(&kind, &json, seq);
        let inj = inject(&state, &at, &policy, &Extras::default());
        if inj.is_empty() {
            continue;
        }
        let rec = sys(p::KIND_INJECTED, &inj.record(seq, &kind));
        state.apply(&RecordView {
            seq: seq + 1,
            ts_unix_ns: 0,
            kind: &rec.0,
            payload: &rec.1,
        });
        out.push(rec);
    }
    out
}

fn main() {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: gen_fixture_journals OUT_DIR"),
    );
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let tmp = tempfile::tempdir().unwrap();
    let root = Root::new(tmp.path());
    let sets: Vec<(&str, Vec<Rec>)> = vec![
        (
            "claude-real",
            payloads(&fixtures.join("claude-code"))
                .into_iter()
                .map(|(k, raw)| (k, encode_event(&raw)))
                .collect(),
        ),
        (
            "hosts",
            payloads(&fixtures.join("constructed"))
                .into_iter()
                .map(|(k, raw)| (k, encode_event(&raw)))
                .collect(),
        ),
        // The same events with digests, as this build writes them: `tests/digests.rs` folds
        // it against the same records with the digests cut off (regenerate it with every
        // FOLD_VERSION or DIGEST_VERSION bump, or its digests are ignored as another build's).
        (
            "claude-real-digests-v3",
            payloads(&fixtures.join("claude-code"))
                .into_iter()
                .map(|(k, raw)| {
                    let payload = sjournal::fold::digest::encode_event(&k, &raw);
                    (k, payload)
                })
                .collect(),
        ),
        ("session", session()),
        ("recovery", recovery(&fixtures)),
    ];
    std::fs::create_dir_all(&out).unwrap();
    for (name, records) in sets {
        write(&root, name, &records);
        let from = root.session(name).unwrap().journal;
        let to = out.join(format!("{name}.sjl"));
        std::fs::copy(&from, &to).unwrap();
        println!("{} ({} records)", to.display(), records.len());
    }
}
