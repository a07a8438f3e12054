//! What the hook pays to decide what to inject, on a session of 10,000 events (prompts with
//! standing rules, todo lists, edits and writes over 300 files, failing and passing test
//! runs, subagents, two compactions): the state loaded from a snapshot one record before the
//! end (the baseline: what every hook invocation pays already), then the injection policy.
//!
//! - `load_snapshot_tail_1`: `load_state` from the snapshot (baseline);
//! - `inject_recovery`: the full recovery block (SessionStart compact) at the default budget;
//! - `inject_recovery_budget_1000`: the same, forced through the truncation order;
//! - `inject_prompt`: the UserPromptSubmit delta (what runs on every prompt);
//! - `load_and_inject_recovery`: both, the hook's whole render path.
//!
//! The target is the recovery block in well under the hook's budget: at most 1 ms. Run with
//! `cargo bench --bench context` (under `cargo test` each runs once, as a check).

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use sjournal::context::{inject, Extras, InjectionPoint, Policy};
use sjournal::event::{EventKind, Host};
use sjournal::fold::digest::encode_event;
use sjournal::format::payload::{encode_system, ContextSet, KIND_CONTEXT_SET, KIND_INJECTED};
use sjournal::journal::{Root, Writer, WriterOptions};
use sjournal::snapshot::{self, load_state, LoadOptions, SnapshotUse};

const SESSION: &str = "bench-ctx-6b1f2e9a-0c3d-4e5f-8a7b-9c0d1e2f3a4b";
const EVENTS: u64 = 10_000;

fn event(name: &str, fields: serde_json::Value) -> (String, Vec<u8>) {
    let mut v = json!({
        "session_id": SESSION,
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-app/{SESSION}.jsonl"),
        "cwd": "/home/dev/app",
        "permission_mode": "default",
        "hook_event_name": name,
    });
    for (k, x) in fields.as_object().unwrap() {
        v[k] = x.clone();
    }
    (name.to_owned(), encode_event(name, &v.to_string()))
}

/// The session's records, about `EVENTS` of them.
fn records() -> Vec<(String, Vec<u8>)> {
    let mut r = vec![event(
        "SessionStart",
        json!({"source": "startup", "model": "opus"}),
    )];
    r.push((
        KIND_CONTEXT_SET.to_owned(),
        encode_system(&ContextSet {
            channel: "persistent".into(),
            key: "conventions".into(),
            text: "Errors are typed; the library never prints.".into(),
        }),
    ));
    let mut turn = 0u64;
    while (r.len() as u64) < EVENTS - 40 {
        turn += 1;
        r.push(event(
            "UserPromptSubmit",
            json!({"prompt": format!("Step {turn}: port module {}. Never change its public API; always run the tests first.", turn % 40)}),
        ));
        if turn % 10 == 1 {
            let todos: Vec<_> = (0..12)
                .map(|i| json!({"content": format!("module {}", turn + i), "status": if i < 4 { "completed" } else if i == 4 { "in_progress" } else { "pending" }}))
                .collect();
            let input = json!({"todos": todos});
            r.push(event("PreToolUse", json!({"tool_name": "TodoWrite", "tool_input": input, "tool_use_id": format!("td{turn}")})));
            r.push(event("PostToolUse", json!({"tool_name": "TodoWrite", "tool_input": input, "tool_response": {}, "tool_use_id": format!("td{turn}")})));
        }
        for call in 0..10u64 {
            let id = format!("t{turn}_{call}");
            let file = format!(
                "/home/dev/app/src/m{}/f{}.rs",
                turn % 30,
                (turn * 7 + call) % 10
            );
            let (tool, input, fail) = match call % 5 {
                0 => ("Read", json!({"file_path": file}), None),
                1 => (
                    "Edit",
                    json!({"file_path": file, "old_string": "let a = 1;\nlet b = 2;", "new_string": "let a = 3;"}),
                    None,
                ),
                2 => (
                    "Write",
                    json!({"file_path": file, "content": "fn main() {}\n// x\n"}),
                    None,
                ),
                3 => (
                    "Bash",
                    json!({"command": format!("cargo test -p m{}", turn % 30)}),
                    turn.is_multiple_of(3)
                        .then_some("Exit code 101\ntest x ... FAILED\nerror: test failed"),
                ),
                _ => (
                    "Grep",
                    json!({"pattern": "fn apply", "path": "/home/dev/app/src"}),
                    None,
                ),
            };
            r.push(event(
                "PreToolUse",
                json!({"tool_name": tool, "tool_input": input, "tool_use_id": id}),
            ));
            r.push(match fail {
                Some(e) => event("PostToolUseFailure", json!({"tool_name": tool, "tool_input": input, "tool_use_id": id, "error": e})),
                None => event("PostToolUse", json!({"tool_name": tool, "tool_input": input, "tool_response": {}, "tool_use_id": id})),
            });
        }
        if turn.is_multiple_of(25) {
            let id = format!("agent{turn:06}");
            r.push(event("PreToolUse", json!({"tool_name": "Agent", "tool_input": {"subagent_type": "Explore", "description": format!("survey module {turn}")}, "tool_use_id": format!("ag{turn}")})));
            r.push(event(
                "SubagentStart",
                json!({"agent_id": id, "agent_type": "Explore"}),
            ));
        }
        r.push(event("Stop", json!({"last_assistant_message": format!("Module {} is ported; next is {}.", turn % 40, (turn + 1) % 40)})));
        if turn.is_multiple_of(180) {
            r.push(event("PreCompact", json!({"trigger": "auto"})));
            r.push(event("SubagentStop", json!({"agent_id": "c", "agent_type": "", "last_assistant_message": "<summary>Porting modules.</summary>"})));
            r.push(event("SessionStart", json!({"source": "compact"})));
            // The hook answered it with a recovery block: no fallback pending after it.
            let answer = sjournal::format::payload::Injected {
                event_seq: r.len() as u64,
                event_kind: "SessionStart".into(),
                mode: Some("recovery".into()),
                render_version: sjournal::context::RENDER_VERSION,
                ..Default::default()
            };
            r.push((KIND_INJECTED.to_owned(), encode_system(&answer)));
        }
    }
    r
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let recs = records();
    let mut w = Writer::open(&root, SESSION, &WriterOptions::default()).unwrap();
    let items: Vec<(&str, &[u8])> = recs
        .iter()
        .map(|(k, p)| (k.as_str(), p.as_slice()))
        .collect();
    w.append_batch(&items).unwrap();
    drop(w);
    let n = recs.len() as u64;
    let before_end = LoadOptions {
        at: Some(n - 1),
        use_snapshot: false,
        deadline: None,
    };
    let (s, info) = load_state(&root, SESSION, &before_end).unwrap();
    snapshot::write(&root.session(SESSION).unwrap(), &s, &info.head.unwrap()).unwrap();
    let (state, info) = load_state(&root, SESSION, &LoadOptions::latest()).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::Used { seq: n - 1 });

    let compact = InjectionPoint {
        event_seq: n + 1,
        kind: EventKind::SessionStart,
        source: Some("compact".into()),
        host: Host::Claude,
    };
    let prompt = InjectionPoint {
        kind: EventKind::UserPromptSubmit,
        source: None,
        ..compact.clone()
    };
    let policy = Policy::default();
    let small = Policy {
        budget_chars: 1000,
        ..Policy::default()
    };
    let block = inject(&state, &compact, &policy, &Extras::default());
    eprintln!(
        "{n} records; state {} bytes encoded; recovery block {} chars, {} items, {} left out",
        state.encode().len(),
        block.chars,
        block.items.len(),
        block.dropped.len()
    );

    let mut g = c.benchmark_group("context_10k");
    g.bench_function("load_snapshot_tail_1", |b| {
        b.iter(|| load_state(&root, SESSION, &LoadOptions::latest()).unwrap())
    });
    g.bench_function("inject_recovery", |b| {
        b.iter(|| inject(&state, &compact, &policy, &Extras::default()))
    });
    g.bench_function("inject_recovery_budget_1000", |b| {
        b.iter(|| inject(&state, &compact, &small, &Extras::default()))
    });
    g.bench_function("inject_prompt", |b| {
        b.iter(|| inject(&state, &prompt, &policy, &Extras::default()))
    });
    g.bench_function("load_and_inject_recovery", |b| {
        b.iter(|| {
            let (s, _) = load_state(&root, SESSION, &LoadOptions::latest()).unwrap();
            inject(&s, &compact, &policy, &Extras::default())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
