//! The injected context is journaled with its event: through the library's hook path with a
//! stand-in context source, a SessionStart gets the exact
//! `hookSpecificOutput` JSON on stdout, and the journal holds the event at seq S and a
//! `sjournal.injected` record for event S with the same text, its blake3 and length, written
//! in the same batch (same timestamp, consecutive seqs). Events that take no context get
//! neither; configuration can add events; a failing or panicking source never loses the
//! event and prints nothing.

#[path = "hook_support/mod.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sjournal::format::hash::content_hash;
use sjournal::format::payload::{self, Injected, KIND_INJECTED};
use sjournal::hook::commit::Landed;
use sjournal::hook::config::Config;
use sjournal::hook::context_bridge::{Context, ContextSource, PendingEvent};
use sjournal::hook::protocol::HostFlag;
use sjournal::hook::{self, HookOptions, InputReady};
use sjournal::journal::{spool, Root, Writer, WriterOptions};
use sjournal::Error;

/// Renders "<kind>#<seq> after <n> records", and remembers what it was asked.
#[derive(Default)]
struct Stub {
    seen: Mutex<Vec<(u64, String)>>,
    truncated: bool,
}

impl ContextSource for Stub {
    fn render(&self, ev: &PendingEvent<'_>) -> sjournal::Result<Option<Context>> {
        self.seen.lock().unwrap().push((ev.seq, ev.kind.to_owned()));
        Ok(Some(Context {
            text: format!("{}#{} \"quoted\"\nline two", ev.kind, ev.seq),
            truncated: self.truncated,
            ..Default::default()
        }))
    }
}

fn opts(root: &Root, config: Config) -> HookOptions {
    HookOptions {
        root: root.clone(),
        host: HostFlag::Auto,
        deadline: Duration::from_secs(10),
        config,
        env_session_id: None,
        // In-memory input: always ready to be read, however late the worker gets to it.
        input_ready: Some(InputReady(Arc::new(|| true))),
        checkpoints: None,
    }
}

fn ev(session: &str, event: &str) -> Vec<u8> {
    format!(r#"{{"session_id":"{session}","hook_event_name":"{event}","source":"startup"}}"#)
        .into_bytes()
}

#[test]
fn context_and_injected_record_share_the_event_batch() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let stub = Arc::new(Stub {
        truncated: true,
        ..Default::default()
    });
    // Two events first, so the SessionStart is not seq 1.
    for e in ["PreToolUse", "PostToolUse"] {
        let out = hook::run(
            opts(&root, Config::default()),
            std::io::Cursor::new(ev("s", e)),
            stub.clone(),
        );
        assert_eq!(out.stdout, None, "{e} takes no context by default");
    }
    let out = hook::run(
        opts(&root, Config::default()),
        std::io::Cursor::new(ev("s", "SessionStart")),
        stub.clone(),
    );
    let text = "SessionStart#3 \"quoted\"\nline two";
    let expected = serde_json::json!({
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
    })
    .to_string();
    assert_eq!(out.stdout.as_deref(), Some(expected.as_str()));
    assert!(matches!(out.landed, Some(Landed::Journal { seq: 3 })));
    assert_eq!(
        *stub.seen.lock().unwrap(),
        vec![(3, "SessionStart".to_owned())]
    );

    let recs = common::records(dir.path(), "s");
    let kinds: Vec<&str> = recs.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["PreToolUse", "PostToolUse", "SessionStart", KIND_INJECTED]
    );
    let inj = common::payloads(dir.path(), "s", KIND_INJECTED);
    let (seq, ts, p) = &inj[0];
    let i: Injected = payload::decode_system(*seq, p).unwrap();
    assert_eq!(i.event_seq, 3);
    assert_eq!(i.text, text);
    assert_eq!(i.event_kind, "SessionStart");
    assert_eq!(i.len, text.chars().count() as u64);
    assert!(i.truncated);
    assert_eq!(i.text_blake3, content_hash(text.as_bytes()).to_hex());
    let event_ts = common::payloads(dir.path(), "s", "SessionStart")[0].1;
    assert_eq!(*ts, event_ts, "one batch: one timestamp, one fsync");
    common::verify_all(dir.path());
}

#[test]
fn configuration_adds_context_events_the_host_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let mut config = Config::default();
    config.hook.context_events = vec!["PostToolUse".into(), "PreCompact".into()];
    let stub = Arc::new(Stub::default());
    let out = hook::run(
        opts(&root, config.clone()),
        std::io::Cursor::new(ev("s", "PostToolUse")),
        stub.clone(),
    );
    assert!(out
        .stdout
        .unwrap()
        .contains(r#""hookEventName":"PostToolUse""#));
    // PreCompact cannot carry context in Claude Code: nothing rendered, nothing printed.
    let out = hook::run(
        opts(&root, config),
        std::io::Cursor::new(ev("s", "PreCompact")),
        stub.clone(),
    );
    assert_eq!(out.stdout, None);
    let kinds: Vec<String> = common::records(dir.path(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(kinds, ["PostToolUse", KIND_INJECTED, "PreCompact"]);
}

struct Failing;
impl ContextSource for Failing {
    fn render(&self, _: &PendingEvent<'_>) -> sjournal::Result<Option<Context>> {
        Err(Error::NoRoot)
    }
}

struct Panicking;
impl ContextSource for Panicking {
    fn render(&self, _: &PendingEvent<'_>) -> sjournal::Result<Option<Context>> {
        panic!("renderer bug")
    }
}

#[test]
fn failing_or_panicking_source_keeps_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let out = hook::run(
        opts(&root, Config::default()),
        std::io::Cursor::new(ev("s", "SessionStart")),
        Arc::new(Failing),
    );
    assert_eq!(out.stdout, None);
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.contains("rendering the context failed")),
        "{:?}",
        out.diagnostics
    );
    assert!(matches!(out.landed, Some(Landed::Journal { seq: 1 })));

    let out = hook::run(
        opts(&root, Config::default()),
        std::io::Cursor::new(ev("s", "UserPromptSubmit")),
        Arc::new(Panicking),
    );
    assert_eq!(out.stdout, None);
    assert!(
        out.diagnostics.iter().any(|d| d.contains("panic")),
        "{:?}",
        out.diagnostics
    );
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{:?}",
        out.landed
    );
    assert_eq!(spool::pending(&root, "s").unwrap().len(), 1);
    // The next writer merges it: both events are in the journal, in order.
    drop(Writer::open(&root, "s", &WriterOptions::default()).unwrap());
    let kinds: Vec<String> = common::records(dir.path(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        kinds,
        ["SessionStart", "sjournal.spool-merge", "UserPromptSubmit"]
    );
    assert!(spool::pending(&root, "s").unwrap().is_empty());
}
