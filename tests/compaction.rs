//! Compaction: context set early must survive it. A session (real Claude Code payloads as
//! templates) sets persistent context, runs 100 tool events, compacts (PreCompact, the
//! compactor's SubagentStop, SessionStart with source "compact", PostCompact), exactly as the
//! hook would see it: after every event it loads the state from snapshot + tail, asks the
//! injection policy, and snapshots every 16 records. The recovery block injected after the
//! compaction holds every persistent entry, and equals what a rebuild from scratch (full
//! replay, no snapshot) gives for the same event; the events around the compaction inject
//! nothing.

use crate::support;

use sjournal::context::{inject, Channel, Extras, Injection, InjectionPoint, Mode, Policy};
use sjournal::journal::{Writer, WriterOptions};
use sjournal::primitives;
use sjournal::snapshot::{load_state, maybe_snapshot, LoadOptions, SnapshotUse};
use support::{real_claude, temp_root};

const S: &str = "50834a7c-d1b4-423d-a384-ec7fa97d6241";

fn template(event: &str, variant: Option<&str>) -> serde_json::Value {
    let f = real_claude()
        .into_iter()
        .find(|f| f.event == event && f.variant.as_deref() == variant)
        .unwrap_or_else(|| panic!("no fixture {event} {variant:?}"));
    serde_json::from_str(&f.raw).unwrap()
}

/// Appends one event and does what the hook does after it; returns what the policy injects.
fn hook(root: &sjournal::journal::Root, v: &serde_json::Value) -> Injection {
    let kind = v["hook_event_name"].as_str().unwrap();
    let mut w = Writer::open(root, S, &WriterOptions::default()).unwrap();
    let seq = w
        .append(
            kind,
            &sjournal::fold::digest::encode_event(kind, &v.to_string()),
        )
        .unwrap()
        .seq;
    drop(w);
    let (state, info) = load_state(root, S, &LoadOptions::latest()).unwrap();
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
    maybe_snapshot(&root.session(S).unwrap(), &state, &info, 16).unwrap();
    let at = InjectionPoint::of_record(kind, &v.to_string(), seq);
    inject(&state, &at, &Policy::default(), &Extras::default())
}

#[test]
fn persistent_context_survives_compaction_and_matches_a_rebuild() {
    let (_dir, root) = temp_root();
    let opts = WriterOptions::default();
    hook(&root, &template("SessionStart", Some("startup")));
    let notes = [
        (
            "conventions",
            "Use thiserror for library errors; never print from the library.",
        ),
        ("goal", "Ship the fold with snapshots and a bench."),
        (
            "warning",
            "Do not touch src/journal/writer.rs without review.",
        ),
    ];
    for (k, t) in notes {
        primitives::context_set(&root, S, Channel::Persistent, k, t, &opts).unwrap();
    }
    hook(&root, &template("UserPromptSubmit", None));

    let pre = template("PreToolUse", None);
    let post = template("PostToolUse", None);
    for i in 0..50 {
        let id = format!("toolu_{i:03}");
        let file = format!("<OUTDIR>/project/src/m{}.rs", i % 7);
        let (tool, input) = if i % 2 == 0 {
            (
                "Edit",
                serde_json::json!({"file_path": file, "old_string": "a", "new_string": "b"}),
            )
        } else {
            (
                "Bash",
                serde_json::json!({"command": format!("cargo test m{i}")}),
            )
        };
        for mut v in [pre.clone(), post.clone()] {
            v["tool_name"] = tool.into();
            v["tool_input"] = input.clone();
            v["tool_use_id"] = id.clone().into();
            hook(&root, &v);
        }
    }
    let before = hook(&root, &template("PreCompact", Some("manual")));
    hook(&root, &template("SubagentStop", Some("compaction")));
    let after = hook(&root, &template("SessionStart", Some("compact")));
    let last = hook(&root, &template("PostCompact", Some("manual")));

    // PreCompact and PostCompact take no context; the recovery block comes with the
    // SessionStart in between.
    assert_eq!((before.mode, before.text.as_str()), (Mode::Nothing, ""));
    assert_eq!((last.mode, last.text.as_str()), (Mode::Nothing, ""));
    assert_eq!(after.mode, Mode::Recovery);
    let after = after.text;
    for (k, t) in notes {
        assert!(
            after.contains(&format!("[{k}] {t}")),
            "{k} missing from:\n{after}"
        );
    }
    assert!(
        after.starts_with("sjournal: recovered after compaction #1 (manual)"),
        "{after}"
    );
    assert!(
        after.contains("- `src/m6.rs` (modified, 4 edits, +4 -4)"),
        "{after}"
    );

    let (hooked, info) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert!(
        matches!(info.snapshot, SnapshotUse::Used { .. }),
        "{:?}",
        info.snapshot
    );
    let scratch = LoadOptions {
        use_snapshot: false,
        ..LoadOptions::latest()
    };
    let (rebuilt, info) = load_state(&root, S, &scratch).unwrap();
    assert_eq!(info.snapshot, SnapshotUse::None);
    assert_eq!(rebuilt.seq, 2 + 3 + 100 + 4);
    assert_eq!(hooked.encode(), rebuilt.encode());
    let compact_seq = rebuilt
        .compactions
        .last
        .as_ref()
        .unwrap()
        .resumed_seq
        .unwrap();
    let at_compact = LoadOptions {
        at: Some(compact_seq),
        ..scratch
    };
    let (then, _) = load_state(&root, S, &at_compact).unwrap();
    let point = InjectionPoint::of_record(
        "SessionStart",
        &template("SessionStart", Some("compact")).to_string(),
        compact_seq,
    );
    let again = inject(&then, &point, &Policy::default(), &Extras::default());
    assert_eq!(again.text, after);
    let c = rebuilt.compactions.last.as_ref().unwrap();
    assert!(c.pre_seq.is_some() && c.resumed_seq.is_some() && c.post_seq.is_some());
    assert_eq!(rebuilt.compactions.count, 1);
    assert_eq!(rebuilt.tools.calls, 50);

    // Under a tight budget the persistent entries are the last thing to go.
    let policy = Policy {
        budget_chars: 600,
        ..Policy::default()
    };
    let tight = inject(&then, &point, &policy, &Extras::default());
    assert!(tight.truncated && tight.chars <= 600, "{}", tight.text);
    for (k, _) in notes {
        assert!(tight.text.contains(&format!("[{k}]")), "{}", tight.text);
    }
    assert!(
        tight.dropped.iter().any(|d| d.starts_with("files:")),
        "{:?}",
        tight.dropped
    );
}
