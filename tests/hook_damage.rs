//! One damaged old record does not cost the session its context. A bit flips in a record in
//! the middle of a session's journal (valid records follow it, so recovery may never cut it).
//! Either the writer finds its tail through the tail hint, which names a record after the
//! damage, and keeps appending there (case-table row 17); or, without the hint, it scans,
//! finds the damage and refuses, and new writes go to the session's rescue journal. Both
//! ways the hook's state is every readable record — the prefix before the damage, the
//! records after it, and the rescue journal folded on top — so a context note set before the
//! damage and one set after it are both still injected with the next prompt, and, that
//! injection being folded back too, not again with the prompt after it. A damaged journal the
//! writer refuses is left byte for byte as it was.

use crate::support;

use sjournal::journal::{verify_file, Root};

fn hook(root: &std::path::Path, payload: &str) -> std::process::Output {
    support::run(
        root,
        &["hook", "--deadline-ms", support::PATIENT_MS],
        payload.as_bytes(),
    )
}

/// Builds a session and flips a bit in its first PostToolUse; returns the damaged bytes.
fn damaged_session(r: &std::path::Path) -> Vec<u8> {
    hook(
        r,
        r#"{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}"#,
    );
    let out = support::run(
        r,
        &[
            "context",
            "set",
            "--session",
            "s",
            "--key",
            "a",
            "note from before the damage",
        ],
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    for i in 0..3 {
        hook(
            r,
            &format!(
                r#"{{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t{i}"}}"#
            ),
        );
    }
    // Flip one bit inside the first PostToolUse: damage with valid records after it.
    let journal = Root::new(r).session("s").unwrap().journal;
    let mut bytes = support::read(&journal);
    let rec = support::parse(&bytes)
        .records
        .into_iter()
        .find(|rec| rec.kind == "PostToolUse")
        .unwrap();
    bytes[(rec.offset + rec.end) as usize / 2] ^= 0x10;
    support::overwrite(&journal, &bytes);
    assert!(!verify_file(&journal, None).unwrap().ok);
    bytes
}

fn injected_context(r: &std::path::Path) -> String {
    let out = hook(
        r,
        r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"the third prompt"}"#,
    );
    assert_eq!(out.status.code(), Some(0));
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("context is still injected: {out:?}"));
    reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The notes were injected once; the prompt after gets nothing (the injected record, past the
/// damage or in the rescue journal, is in the hook's state too).
fn nothing_said_twice(r: &std::path::Path) {
    let out = hook(
        r,
        r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"the fourth prompt"}"#,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "{out:?}");
}

fn note_b(r: &std::path::Path) -> std::process::Output {
    support::run(
        r,
        &[
            "context",
            "set",
            "--session",
            "s",
            "--key",
            "b",
            "note from after the damage",
        ],
        b"",
    )
}

/// The tail hint is intact: the writer appends after the damage, unaware of it.
#[test]
fn context_survives_a_damaged_old_record_the_writer_appends_past() {
    let dir = support::scratch();
    let r = dir.path();
    damaged_session(r);
    let out = note_b(r);
    assert!(out.status.success(), "{out:?}");
    let ctx = injected_context(r);
    assert!(ctx.contains("note from before the damage"), "{ctx}");
    assert!(ctx.contains("note from after the damage"), "{ctx}");
    nothing_said_twice(r);
}

/// Without the hint the writer finds the damage and refuses: the rescue journal takes over.
#[test]
fn context_survives_a_damaged_old_record_in_rescue() {
    let dir = support::scratch();
    let r = dir.path();
    let bytes = damaged_session(r);
    let paths = Root::new(r).session("s").unwrap();
    std::fs::remove_file(&paths.lock).unwrap();
    let journal = paths.journal.clone();
    let out = note_b(r);
    assert_eq!(
        out.status.code(),
        Some(1),
        "kept in the rescue journal: {out:?}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rescued"], true);

    let ctx = injected_context(r);
    assert!(ctx.contains("note from before the damage"), "{ctx}");
    assert!(ctx.contains("note from after the damage"), "{ctx}");
    // The event and its injected context are in the rescue journal; the journal is as found.
    assert_eq!(support::read(&journal), bytes);
    let rescue = Root::new(r).session("s").unwrap().rescue;
    let kinds: Vec<String> = support::parse(&support::read(&rescue))
        .records
        .into_iter()
        .map(|r| r.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "sjournal.context.set",
            "UserPromptSubmit",
            "sjournal.injected"
        ]
    );
    assert!(verify_file(&rescue, None).unwrap().ok);
    nothing_said_twice(r);
}
