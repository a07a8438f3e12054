//! Context channels: persistent entries survive turns and compaction, ephemeral ones end with
//! the turn, at-stop ones replace the persistent entry of their key when the turn ends; clear
//! removes a key, a channel or everything. The recovery block shows the channels as they
//! stand (budgets and truncation: `tests/context_budget.rs`).

use sjournal::context::{inject, Channel, Extras, InjectionPoint, Policy};
use sjournal::event::{EventKind, Host};
use sjournal::fold::{RecordView, State};
use sjournal::format::payload::{self as p, encode_event_json, encode_system};

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
        self.rec(&kind, encode_event_json(json))
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

    /// The recovery block, as if the host compacted now.
    fn text(&self) -> String {
        render(&self.state).text
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
fn empty_session_renders_only_the_frame() {
    let r = render(&State::new());
    assert!(!r.truncated);
    assert!(
        r.text.starts_with("sjournal: recovered after compaction"),
        "{}",
        r.text
    );
    assert!(
        !r.text.contains("##"),
        "no section without content: {}",
        r.text
    );
    let prompt = InjectionPoint {
        event_seq: 1,
        kind: EventKind::UserPromptSubmit,
        source: None,
        host: Host::Claude,
    };
    let r = inject(
        &State::new(),
        &prompt,
        &Policy::default(),
        &Extras::default(),
    );
    assert_eq!((r.text.as_str(), r.truncated, r.chars), ("", false, 0));
}

fn render(state: &State) -> sjournal::context::Injection {
    let at = InjectionPoint {
        event_seq: state.seq + 1,
        kind: EventKind::SessionStart,
        source: Some("compact".into()),
        host: Host::Claude,
    };
    inject(state, &at, &Policy::default(), &Extras::default())
}
