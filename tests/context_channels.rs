//! Context channels and the renderer: persistent entries survive turns and compaction,
//! ephemeral ones end with the turn, at-stop ones replace the persistent entry of their key
//! when the turn ends; clear removes a key, a channel or everything. The rendered text never
//! exceeds its budget, says when it was shortened, drops the least important parts first, and
//! is the same for the same state.

use sjournal::context::{render, Channel, RenderOptions};
use sjournal::fold::{RecordView, State};
use sjournal::format::payload::{self as p, encode_event, encode_system};

struct Session {
    state: State,
    seq: u64,
}

impl Session {
    fn new() -> Session {
        Session {
            state: State::new(),
            seq: 0,
        }
    }

    fn rec(&mut self, kind: &str, payload: Vec<u8>) -> &mut Self {
        self.seq += 1;
        self.state.apply(&RecordView {
            seq: self.seq,
            ts_unix_ns: self.seq as i64 * 1_000_000_000,
            kind,
            payload: &payload,
        });
        self
    }

    fn ev(&mut self, json: &str) -> &mut Self {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let kind = v["hook_event_name"].as_str().unwrap().to_owned();
        self.rec(&kind, encode_event(json))
    }

    fn set(&mut self, ch: Channel, key: &str, text: &str) -> &mut Self {
        let c = p::ContextSet {
            channel: ch.as_str().into(),
            key: key.into(),
            text: text.into(),
        };
        self.rec(p::KIND_CONTEXT_SET, encode_system(&c))
    }

    fn clear(&mut self, ch: Option<Channel>, key: Option<&str>) -> &mut Self {
        let c = p::ContextClear {
            channel: ch.map(|c| c.as_str().into()),
            key: key.map(Into::into),
        };
        self.rec(p::KIND_CONTEXT_CLEAR, encode_system(&c))
    }

    fn prompt(&mut self, text: &str) -> &mut Self {
        self.ev(&format!(
            r#"{{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"{text}"}}"#
        ))
    }

    fn stop(&mut self) -> &mut Self {
        self.ev(r#"{"hook_event_name":"Stop","session_id":"s"}"#)
    }

    fn text(&self) -> String {
        render(&self.state, &RenderOptions::default()).text
    }
}

#[test]
fn channels_follow_the_turn() {
    let mut s = Session::new();
    s.set(Channel::Persistent, "rules", "be terse")
        .prompt("task one");
    s.set(Channel::Ephemeral, "hint", "look at main.rs");
    s.set(Channel::AtStop, "rules", "be terse and exact");
    let t = s.text();
    assert!(
        t.contains("[rules] be terse\n") || t.ends_with("[rules] be terse"),
        "{t}"
    );
    assert!(t.contains("[hint] look at main.rs"), "{t}");
    assert!(
        !t.contains("exact"),
        "at-stop entries wait for the turn's end: {t}"
    );

    s.stop();
    let t = s.text();
    assert!(t.contains("[rules] be terse and exact"), "{t}");
    assert!(
        !t.contains("hint"),
        "ephemeral entries end with the turn: {t}"
    );
    assert!(s.state.context.at_stop.is_empty());

    // Compaction does not touch the channels.
    s.ev(r#"{"hook_event_name":"PreCompact","session_id":"s","trigger":"auto"}"#);
    s.ev(r#"{"hook_event_name":"SessionStart","session_id":"s","source":"compact"}"#);
    assert!(s.text().contains("[rules] be terse and exact"));

    s.set(Channel::Persistent, "other", "x")
        .set(Channel::Ephemeral, "e", "y");
    s.clear(Some(Channel::Persistent), Some("rules"));
    assert!(!s.text().contains("[rules]") && s.text().contains("[other] x"));
    s.clear(None, Some("e"));
    assert!(s.state.context.ephemeral.is_empty());
    s.clear(None, None);
    assert!(s.state.context.persistent.is_empty());
    assert_eq!(s.state.context.rejected, 0);

    s.rec(
        p::KIND_CONTEXT_SET,
        encode_system(&p::ContextSet {
            channel: "nope".into(),
            key: "k".into(),
            text: "t".into(),
        }),
    );
    s.rec(
        p::KIND_CONTEXT_SET,
        encode_system(&p::ContextSet {
            channel: "persistent".into(),
            key: "".into(),
            text: "t".into(),
        }),
    );
    assert_eq!(s.state.context.rejected, 2);
    assert!(s.state.context.persistent.is_empty());
}

#[test]
fn empty_session_renders_nothing() {
    let r = render(&State::new(), &RenderOptions::default());
    assert_eq!((r.text.as_str(), r.truncated, r.chars), ("", false, 0));
}

/// A state with every section filled.
fn busy() -> Session {
    let mut s = Session::new();
    s.set(
        Channel::Persistent,
        "a-rules",
        &"Keep every public function documented. ".repeat(3),
    );
    s.set(Channel::Persistent, "b-goal", "Finish the snapshot loader.");
    s.prompt("Please refactor the fold so that apply allocates less, and measure it");
    s.set(
        Channel::Ephemeral,
        "now",
        "The bench is in benches/fold.rs.",
    );
    for i in 0..30 {
        s.ev(&format!(
            r#"{{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Edit","tool_use_id":"e{i}","tool_input":{{"file_path":"/src/file_{i:02}.rs"}}}}"#
        ));
    }
    for i in 0..5 {
        s.ev(&format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_use_id":"b{i}","tool_input":{{"command":"sleep {i}"}}}}"#
        ));
    }
    s
}

#[test]
fn every_budget_is_respected_and_least_important_goes_first() {
    let s = busy();
    let full = render(
        &s.state,
        &RenderOptions {
            budget_chars: 100_000,
        },
    );
    assert!(!full.truncated);
    let n = full.chars;
    for section in [
        "## Session notes",
        "## This turn",
        "## Current task",
        "## Files changed",
        "## Tool calls in progress",
        "## Session\n",
    ] {
        assert!(full.text.contains(section), "{section} in:\n{}", full.text);
    }
    let mut last_dropped = 0;
    for budget in (0..=n + 5).rev().step_by(7) {
        let r = render(
            &s.state,
            &RenderOptions {
                budget_chars: budget,
            },
        );
        assert!(r.chars <= budget, "budget {budget}: {} chars", r.chars);
        assert_eq!(r.chars, r.text.chars().count());
        assert_eq!(r.truncated, budget < n, "budget {budget}");
        assert_eq!(r.truncated, !r.dropped.is_empty());
        if r.truncated && budget > 80 {
            assert!(
                r.text.ends_with("characters]"),
                "the marker closes a shortened text"
            );
        }
        // Shrinking the budget only ever drops more.
        assert!(
            r.dropped.len() >= last_dropped || budget < 80,
            "budget {budget}"
        );
        last_dropped = r.dropped.len();
        assert_eq!(
            r,
            render(
                &s.state,
                &RenderOptions {
                    budget_chars: budget
                }
            ),
            "deterministic"
        );
    }

    // Order: open tool calls, then the counts, then files, before the task and the entries.
    let r = render(
        &s.state,
        &RenderOptions {
            budget_chars: n - 10,
        },
    );
    assert!(
        r.dropped[0].starts_with("open-tool-calls:"),
        "{:?}",
        r.dropped
    );
    let r = render(&s.state, &RenderOptions { budget_chars: 600 });
    assert!(
        !r.text.contains("## Tool calls") && !r.text.contains("## Session\n"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("[a-rules]")
            && r.text.contains("[b-goal]")
            && r.text.contains("## Current task")
    );
    let kinds: Vec<&str> = r
        .dropped
        .iter()
        .map(|d| d.split(':').next().unwrap())
        .collect();
    let first_file = kinds.iter().position(|k| *k == "files").unwrap();
    assert!(kinds[..first_file]
        .iter()
        .all(|k| *k == "open-tool-calls" || *k == "counts"));
    // Files go least recently changed first.
    assert!(
        r.dropped.iter().any(|d| d == "files: /src/file_00.rs"),
        "{:?}",
        r.dropped
    );
    if r.text.contains("file_00") {
        panic!("the oldest file should go first: {}", r.text);
    }
    // With room for little more than the notes, the task and this turn's entry go (the task
    // first), the notes stay; with less, the last note goes and the first is cut.
    let r = render(&s.state, &RenderOptions { budget_chars: 300 });
    assert!(
        r.text.contains("[a-rules]") && r.text.contains("[b-goal]"),
        "{}",
        r.text
    );
    assert!(r.dropped.contains(&"task".to_owned()), "{:?}", r.dropped);
    let r = render(&s.state, &RenderOptions { budget_chars: 120 });
    assert_eq!(
        r.dropped[r.dropped.len() - 4..],
        [
            "task",
            "ephemeral: now",
            "persistent: b-goal",
            "persistent: a-rules (cut)"
        ]
    );
    assert!(
        r.text.contains("[a-rules] Keep every") && r.text.contains('…'),
        "{}",
        r.text
    );
}
