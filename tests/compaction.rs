//! Compaction: context set early must survive it. A session (real Claude Code payloads as
//! templates) sets persistent context, runs 100 tool events, compacts (PreCompact, the
//! compactor's SubagentStop, SessionStart with source "compact", PostCompact), exactly as the
//! hook would see it: after every event it loads the state from snapshot + tail, renders, and
//! snapshots every 16 records. The context rendered after the compaction holds every
//! persistent entry, and equals what a rebuild from scratch (full replay, no snapshot) renders.

use crate::support;

use sjournal::context::{render, Channel, RenderOptions};
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

/// Appends one event and does what the hook does after it; returns the rendered context.
fn hook(root: &sjournal::journal::Root, v: &serde_json::Value) -> String {
    let kind = v["hook_event_name"].as_str().unwrap();
    let mut w = Writer::open(root, S, &WriterOptions::default()).unwrap();
    w.append_event(kind, &v.to_string()).unwrap();
    drop(w);
    let (state, info) = load_state(root, S, &LoadOptions::latest()).unwrap();
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
    maybe_snapshot(&root.session(S).unwrap(), &state, &info, 16).unwrap();
    render(&state, &RenderOptions::default()).text
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

    for (k, t) in notes {
        for text in [&before, &after, &last] {
            assert!(
                text.contains(&format!("[{k}] {t}")),
                "{k} missing from:\n{text}"
            );
        }
    }
    assert!(after.contains("compactions: 1 (last manual)"), "{after}");
    assert!(after.contains("src/m6.rs (4 edits)"), "{after}");

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
    assert_eq!(render(&rebuilt, &RenderOptions::default()).text, last);
    let c = rebuilt.compactions.last.as_ref().unwrap();
    assert!(c.pre_seq.is_some() && c.resumed_seq.is_some() && c.post_seq.is_some());
    assert_eq!(rebuilt.compactions.count, 1);
    assert_eq!(rebuilt.tools.calls, 50);

    // Under a tight budget the persistent entries are the last thing to go.
    let tight = render(&rebuilt, &RenderOptions { budget_chars: 400 });
    assert!(tight.truncated && tight.text.chars().count() <= 400);
    for (k, _) in notes {
        assert!(tight.text.contains(&format!("[{k}]")), "{}", tight.text);
    }
    assert!(
        tight.dropped.iter().any(|d| d.starts_with("files:")),
        "{:?}",
        tight.dropped
    );
}
