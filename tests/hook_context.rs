//! The injected context is journaled with its event: through the library's hook path, a
//! SessionStart gets the exact `hookSpecificOutput` JSON on stdout, and the journal holds the
//! event at seq S and a `sjournal.injected` record for event S with the same text, its blake3
//! and length, written in the same batch (same timestamp, consecutive seqs). The text is the
//! injection policy's output for the journal's state at the event (replayed from the journal
//! alone), and the record carries what the policy says it is made of.
//! Events that take no context get neither; configuration can add events; a worker that
//! panics while it holds the session's lock never loses the event and prints nothing. (The
//! sessions hold a persistent note, so the policy has something to inject.)

use crate::support;

use std::time::Duration;

use sjournal::config::Config;
use sjournal::context::{self, Channel, Extras, InjectionPoint, Policy};
use sjournal::format::hash::content_hash;
use sjournal::format::payload::{self, Injected, KIND_CONTEXT_SET, KIND_INJECTED};
use sjournal::hook::HookOptions;
use sjournal::journal::{spool, Root, WriterOptions};
use sjournal::session::{Landed, Session};
use support::Stall;

fn opts(root: &Root, config: Config) -> HookOptions {
    HookOptions {
        config,
        ..support::hook_opts(root, Duration::from_secs(10))
    }
}

/// A persistent note in the session: what the injection policy has to say at its events.
fn note(root: &Root, session: &str) {
    let text = "Decision: journals are append-only; never rewrite a record, append a correction.";
    sjournal::primitives::context_set(
        root,
        session,
        Channel::Persistent,
        "decision",
        text,
        &WriterOptions::default(),
    )
    .unwrap();
}

fn ev(session: &str, event: &str) -> Vec<u8> {
    format!(r#"{{"session_id":"{session}","hook_event_name":"{event}","source":"startup"}}"#)
        .into_bytes()
}

#[test]
fn context_and_injected_record_share_the_event_batch() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    // A small budget, so the renderer has to cut.
    let mut config = Config::default();
    config.hook.context_budget_chars = 100;
    // Two events first (nothing to inject yet), so the SessionStart is not seq 1; then a
    // persistent note, which the SessionStart's context carries.
    for e in ["UserPromptSubmit", "PostToolUse"] {
        let raw = format!(
            r#"{{"session_id":"s","hook_event_name":"{e}","prompt":"refactor the parser so that it keeps every byte"}}"#
        );
        let out = support::run_hook(opts(&root, config.clone()), std::io::Cursor::new(raw));
        assert!(out.landed.is_some(), "{out:?}");
        assert_eq!(out.stdout, None);
    }
    note(&root, "s");
    let out = support::run_hook(
        opts(&root, config.clone()),
        std::io::Cursor::new(ev("s", "SessionStart")),
    );
    assert_eq!(out.landed.as_ref().and_then(Landed::first_seq), Some(4));
    let inj = support::payloads(dir.path(), "s", KIND_INJECTED);
    let (seq, ts, p) = inj.last().unwrap();
    let i: Injected = payload::decode_system(*seq, p).unwrap();
    let expected = serde_json::json!({
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": i.text}
    })
    .to_string();
    assert_eq!(out.stdout.as_deref(), Some(expected.as_str()));
    // The text is what the renderer makes of the journal's state at the event.
    let (state, _) = sjournal::snapshot::load_state(
        &root,
        "s",
        &sjournal::snapshot::LoadOptions {
            at: Some(4),
            ..sjournal::snapshot::LoadOptions::latest()
        },
    )
    .unwrap();
    let raw = String::from_utf8(ev("s", "SessionStart")).unwrap();
    let at = InjectionPoint::of_record("SessionStart", &raw, 4);
    let r = context::inject(
        &state,
        &at,
        &Policy::from_config(&config),
        &Extras::default(),
    );
    assert_eq!(i.text, r.text);
    assert_eq!(i, r.record(4, "SessionStart"));
    assert!(!i.text.is_empty());
    assert_eq!(i.event_seq, 4);
    assert_eq!(*seq, 5);
    assert_eq!(i.event_kind, "SessionStart");
    assert_eq!(i.len, i.text.chars().count() as u64);
    assert!(i.truncated, "the budget made the renderer cut");
    assert_eq!(i.text_blake3, content_hash(i.text.as_bytes()).to_hex());
    let event_ts = support::payloads(dir.path(), "s", "SessionStart")[0].1;
    assert_eq!(*ts, event_ts, "one batch: one timestamp, one fsync");
    support::verify_all(dir.path());
}

#[test]
fn configuration_adds_context_events_the_host_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let mut config = Config::default();
    config.hook.context_events = vec!["PostToolUse".into(), "PreCompact".into()];
    note(&root, "s");
    let out = support::run_hook(
        opts(&root, config.clone()),
        std::io::Cursor::new(ev("s", "PostToolUse")),
    );
    assert!(out
        .stdout
        .unwrap()
        .contains(r#""hookEventName":"PostToolUse""#));
    // PreCompact cannot carry context in Claude Code: nothing rendered, nothing printed.
    let out = support::run_hook(
        opts(&root, config),
        std::io::Cursor::new(ev("s", "PreCompact")),
    );
    assert_eq!(out.stdout, None);
    let kinds: Vec<String> = support::records(dir.path(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        kinds,
        [KIND_CONTEXT_SET, "PostToolUse", KIND_INJECTED, "PreCompact"]
    );
}

/// A worker that panics while it holds the session's lock (a bug in the write path) leaves
/// the event unclaimed: the watchdog spools it, nothing is printed, and the next writer
/// merges it in order.
#[test]
fn a_panicking_worker_keeps_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    note(&root, "s");
    let out = support::run_hook(
        opts(&root, Config::default()),
        std::io::Cursor::new(ev("s", "SessionStart")),
    );
    assert_eq!(out.landed.as_ref().and_then(Landed::first_seq), Some(2));

    let stall = Stall::new(|s| s.locked_panics = true);
    let out = support::run_hook(
        support::stalled(opts(&root, Config::default()), &stall),
        std::io::Cursor::new(ev("s", "UserPromptSubmit")),
    );
    assert_eq!(out.stdout, None);
    assert!(support::said(&out, "panic"), "{:?}", out.diagnostics);
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{:?}",
        out.landed
    );
    assert_eq!(spool::pending(&root, "s").unwrap().len(), 1);
    // The next writer merges it: both events are in the journal, in order.
    drop(Session::open(&root, "s", &WriterOptions::default()).unwrap());
    let kinds: Vec<String> = support::records(dir.path(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        kinds,
        [
            KIND_CONTEXT_SET,
            "SessionStart",
            KIND_INJECTED,
            "sjournal.spool-merge",
            "UserPromptSubmit"
        ]
    );
    assert!(spool::pending(&root, "s").unwrap().is_empty());
}
