//! The `--json` outputs are the library's documented types (`sjournal::report` and the types it
//! names): for each command, the line it prints is byte for byte the serialization of the
//! type built in-process from the same session, and the objects keep the field order the
//! scripts that read them were written against.

use std::path::Path;

use sjournal::audit::checkpoint::{origin_for, Checkpoint};
use sjournal::context::{inject, Extras, InjectionPoint, Policy};
use sjournal::event::{EventKind, Host};
use sjournal::journal::{JournalReader, Root};
use sjournal::report::{self, *};
use sjournal::snapshot::{load_state, LoadOptions};

use crate::support::{run, temp_root};

const S: &str = "json-out";

/// Runs `sjournal --root ROOT <args>`; it must succeed. Its stdout, without the last line
/// break.
fn printed(root: &Path, args: &[&str], stdin: &str) -> String {
    let out = run(root, args, stdin.as_bytes());
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    s.strip_suffix('\n').expect("a whole line").to_owned()
}

/// The top-level keys of a JSON object line, in order.
fn keys(line: &str) -> Vec<String> {
    let v: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
    v.keys().cloned().collect()
}

/// A session with a prompt, a tool call and a slot, written through the CLI.
fn session(root: &Root) {
    let r = root.dir();
    printed(
        r,
        &["append", "--session", S],
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"json-out","prompt":"fix the crc"}"#,
    );
    printed(
        r,
        &["append", "--session", S],
        r#"{"hook_event_name":"PostToolUse","session_id":"json-out","tool_name":"Read","tool_use_id":"t1","tool_input":{"file_path":"src/a.rs"},"tool_response":{}}"#,
    );
}

fn head(root: &Root) -> (u64, String) {
    let paths = root.session(S).unwrap();
    let reader = JournalReader::open(&paths.journal, None).unwrap();
    let last = reader.records().unwrap().last().unwrap().unwrap();
    (last.seq, last.hash.to_hex())
}

#[test]
fn append_prints_its_appended_line() {
    let (_d, root) = temp_root();
    let line = printed(root.dir(), &["append", "--session", S], r#"{"a":1}"#);
    let (seq, hash) = head(&root);
    assert_eq!(line, report::line(&AppendedLine { seq, hash }));
    assert_eq!(keys(&line), ["seq", "hash"]);
}

#[test]
fn state_prints_a_state_report() {
    let (_d, root) = temp_root();
    session(&root);
    let line = printed(root.dir(), &["state", "--session", S, "--json"], "");
    let (state, info) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert_eq!(line, report::line(&StateReport::new(S, &state, &info)));
    assert_eq!(
        keys(&line),
        [
            "session",
            "seq",
            "state_hash",
            "fold_version",
            "snapshot",
            "tail_records",
            "pending",
            "warnings",
            "state"
        ]
    );
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["snapshot"], serde_json::json!({"use": "none"}));
}

#[test]
fn context_show_prints_the_injection_and_its_seq() {
    let (_d, root) = temp_root();
    session(&root);
    let line = printed(
        root.dir(),
        &["context", "show", "--session", S, "--json"],
        "",
    );
    let (state, _) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    let point = InjectionPoint {
        event_seq: state.seq + 1,
        // `--at compact`, the default: what a compaction would bring back.
        kind: EventKind::SessionStart,
        source: Some("compact".into()),
        host: state
            .identity
            .host
            .as_deref()
            .and_then(Host::from_name)
            .unwrap_or(Host::Unknown),
    };
    let policy = Policy::from_config(&sjournal::config::Config::default());
    let r = inject(&state, &point, &policy, &Extras::default());
    let show = ContextShow {
        injection: &r,
        seq: state.seq,
    };
    assert_eq!(line, report::line(&show));
    assert_eq!(keys(&line).last().map(String::as_str), Some("seq"));
}

#[test]
fn slot_and_list_print_their_values_and_seq_lines() {
    let (_d, root) = temp_root();
    session(&root);
    let r = root.dir();
    let set = printed(
        r,
        &["slot", "set", "--session", S, "phase", r#"{"n":1.5}"#],
        "",
    );
    assert_eq!(set, report::line(&SeqLine { seq: 3 }));
    let push = printed(r, &["list", "push", "--session", S, "todo", r#""a""#], "");
    assert_eq!(push, report::line(&SeqLine { seq: 4 }));
    let (state, _) = load_state(&root, S, &LoadOptions::latest()).unwrap();

    let got = printed(r, &["slot", "get", "--session", S, "phase"], "");
    assert_eq!(got, report::line(&SlotValue::of(&state, "phase").unwrap()));
    assert_eq!(keys(&got), ["name", "value", "type", "seq"]);

    let shown = printed(r, &["list", "show", "--session", S, "todo", "--json"], "");
    assert_eq!(shown, report::line(&ListShow::of(&state, "todo").unwrap()));
    assert_eq!(keys(&shown), ["name", "max", "pushed", "items"]);
}

#[test]
fn fire_prints_fired() {
    let (_d, root) = temp_root();
    let line = printed(
        root.dir(),
        &["fire", "--session", S, "lint", "--max", "2"],
        "",
    );
    let fired = sjournal::primitives::Fired {
        fired: true,
        count: 1,
        max: Some(2),
    };
    assert_eq!(line, report::line(&fired));
}

#[test]
fn checkpoint_prints_a_checkpoint_line() {
    let (_d, root) = temp_root();
    session(&root);
    let line = printed(root.dir(), &["checkpoint", "--session", S, "--json"], "");
    let (size, hash) = head(&root);
    let cp = Checkpoint {
        origin: origin_for(S),
        size,
        hash: sjournal::format::Hash::from_hex(&hash).unwrap(),
    };
    let note = cp.body();
    let expected = CheckpointLine {
        origin: &cp.origin,
        size,
        hash,
        signed: false,
        note: &note,
    };
    assert_eq!(line, report::line(&expected));
}

#[test]
fn import_prints_an_import_summary() {
    let (d, root) = temp_root();
    session(&root);
    let export = d.path().join("export.jsonl");
    let jsonl = printed(root.dir(), &["export", "--session", S], "");
    std::fs::write(&export, format!("{jsonl}\n")).unwrap();
    let line = printed(
        root.dir(),
        &[
            "import",
            "--session",
            "copy",
            "--json",
            export.to_str().unwrap(),
        ],
        "",
    );
    let paths = root.session("copy").unwrap();
    let reader = JournalReader::open(&paths.journal, None).unwrap();
    let last = reader.records().unwrap().last().unwrap().unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let expected = ImportSummary {
        session: "copy",
        appended: 2,
        events: 2,
        system: 0,
        first_seq: Some(1),
        last_seq: Some(2),
        head: Some(last.hash.to_hex()),
        skipped_system: 0,
        already_present: 0,
        skipped_erased: 0,
        syncs: v["syncs"].as_u64().unwrap() as usize,
    };
    assert_eq!(line, report::line(&expected));
}

#[test]
fn show_prints_the_lists_asked_for_in_order() {
    let (_d, root) = temp_root();
    session(&root);
    let line = printed(
        root.dir(),
        &["show", "--session", S, "files", "todos", "--json"],
        "",
    );
    let (state, _) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    let expected = ShowLists {
        session: S,
        seq: state.seq,
        prompts: None,
        todos: Some(sjournal::context::lists::todos(&state)),
        failures: None,
        files: Some(sjournal::context::lists::files(&state)),
        agents: None,
        redacted: None,
    };
    assert_eq!(line, report::line(&expected));
    assert_eq!(keys(&line), ["session", "seq", "todos", "files"]);
}

#[test]
fn snapshot_and_sessions_print_their_lines() {
    let (_d, root) = temp_root();
    session(&root);
    let line = printed(root.dir(), &["snapshot", "--session", S], "");
    let (state, info) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert_eq!(
        info.snapshot,
        sjournal::snapshot::SnapshotUse::Used { seq: 2 }
    );
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let written = SnapshotLine {
        session: S,
        seq: 2,
        state_hash: state.state_hash().to_hex(),
        bytes: v["bytes"].as_u64().unwrap(),
    };
    assert_eq!(line, report::line(&written));

    let line = printed(root.dir(), &["sessions", "--json"], "");
    let all = sjournal::audit::sessions::list(&root).unwrap();
    assert_eq!(line, report::line(&all[0]));
}

/// Import's reading is the library's (`audit::jsonl::plan`): every line is checked before
/// anything is written, a bad line is an error naming its number, and the records go in
/// batches bounded by `BATCH_MAX_BYTES` (`chunks`).
#[test]
fn import_plans_in_the_library_and_refuses_a_bad_line_by_number() {
    use sjournal::audit::jsonl::{chunks, plan, ImportFormat};
    let input = b"{\"hook_event_name\":\"Stop\"}\n\n{\"a\":1}\n";
    let p = plan("in.jsonl", input, ImportFormat::Auto, None, false).unwrap();
    let kinds: Vec<&str> = p.items.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(kinds, ["Stop", "event"]);
    let refs: Vec<_> = p.items.iter().collect();
    assert_eq!(chunks(&refs).len(), 1);

    let e = plan(
        "in.jsonl",
        b"{\"a\":1}\n{oops\n",
        ImportFormat::Auto,
        None,
        false,
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("in.jsonl, line 2: not valid JSON"), "{msg}");
    let e = plan(
        "in.jsonl",
        b"{}\n",
        ImportFormat::Auto,
        Some("sjournal.x"),
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("sjournal.x"), "{e}");
}

/// `memory review --json` prints its JSON as it is: it used to go through the terminal
/// escaping of human text, which turned a bidi control inside a string into `\u{202e}`, an
/// escape JSON does not have, so the line no longer parsed.
#[test]
fn memory_review_json_is_printed_as_serialized() {
    let (d, root) = temp_root();
    let project = d.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let p = project.to_str().unwrap();
    let text = "Always keep the \u{202e}marker\u{202c} in the changelog.";
    printed(root.dir(), &["memory", "--project", p, "propose", text], "");
    let line = printed(
        root.dir(),
        &["memory", "--project", p, "review", "--json"],
        "",
    );
    let v: serde_json::Value = serde_json::from_str(&line).expect("one JSON object");
    assert_eq!(v["pending"][0]["text"], text);
    assert_eq!(keys(&line), ["scope", "pending"]);
}
