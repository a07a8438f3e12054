//! Codex CLI: a subset of Claude Code's protocol (Codex's `codex-rs/hooks` schemas), plus
//! `turn_id` and `model` on turn events, as the real 0.171.0 sends it (`tests/fixtures/codex/`):
//! - a subagent's own task arrives as a UserPromptSubmit carrying the parent's `session_id`
//!   and the subagent's `agent_id`: it is not a turn of the session (kind `Other`, name and
//!   prompt kept), and it must not become the session's task;
//! - the multi-agent tools arrive under their namespaced wire name
//!   (`multi_agent_v1wait_agent`): they are recorded under the tool's own name (`wait_agent`);
//! - shell calls (`Bash`) report their output as a plain string with no exit code, so a
//!   failing command cannot be told from a succeeding one: the call's outcome is unknown.

use std::borrow::Cow;

use crate::event::wire::Wire;
use crate::event::{Event, Host};
use crate::host::claude::normalize as claude;

/// Namespaces Codex prefixes to its tools' names in hook payloads.
const TOOL_NAMESPACES: &[&str] = &["multi_agent_v1"];

/// The tool's own name, without the namespace Codex glued to it.
fn tool_name(name: Cow<'_, str>) -> Cow<'_, str> {
    for ns in TOOL_NAMESPACES {
        if let Some(rest) = name.strip_prefix(ns).filter(|r| !r.is_empty()) {
            return Cow::Owned(rest.trim_start_matches(['.', '/', '_']).to_owned());
        }
    }
    name
}

pub(in crate::host) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    // A subagent's task (a UserPromptSubmit with `agent_id`) is no turn of the session:
    // `Event::parse_as` makes it `Other` (`Host::prompt_author`).
    let mut e = claude::normalize(Host::Codex, w, record_kind);
    if let Some(t) = e.tool.as_mut() {
        t.name = tool_name(std::mem::take(&mut t.name));
        let plain_string = t.response.is_some_and(|r| r.get().starts_with('"'));
        if t.name == "Bash" && plain_string && !t.failed {
            t.outcome_unknown = true;
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;

    /// Real Codex 0.171.0 payloads (tests/fixtures/codex).
    fn fixture(event: &str, variant: &str) -> String {
        let text = include_str!("../../../tests/fixtures/codex/payloads-0.171.0.jsonl");
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["event"] == event && v["variant"].as_str().unwrap_or("") == variant)
            .map(|v| v["payload"].to_string())
            .unwrap_or_else(|| panic!("no fixture {event}/{variant}"))
    }

    #[test]
    fn session_start_and_end_are_codex_without_a_turn_id() {
        for (event, variant) in [("SessionStart", "startup"), ("SessionEnd", "other")] {
            let raw = fixture(event, variant);
            assert_eq!(Event::parse(event, &raw).host, Host::Codex, "{event}");
            let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
            assert_eq!(Host::detect(&v), Host::Codex, "the hook agrees: {event}");
        }
    }

    #[test]
    fn a_subagents_prompt_is_not_a_turn() {
        let raw = fixture("UserPromptSubmit", "in-subagent");
        let e = Event::parse("UserPromptSubmit", &raw);
        assert_eq!((e.host, e.kind), (Host::Codex, EventKind::Other));
        assert_eq!(e.name, "UserPromptSubmit");
        let main = fixture("UserPromptSubmit", "");
        assert_eq!(
            Event::parse("UserPromptSubmit", &main).kind,
            EventKind::UserPromptSubmit
        );
    }

    #[test]
    fn namespaced_tools_get_their_own_name() {
        let raw = fixture("PreToolUse", "multi_agent_v1wait_agent");
        let e = Event::parse("PreToolUse", &raw);
        assert_eq!(e.tool.unwrap().name, "wait_agent");
        let raw = fixture("PreToolUse", "spawn_agent");
        assert_eq!(
            Event::parse("PreToolUse", &raw).tool.unwrap().name,
            "spawn_agent"
        );
    }

    #[test]
    fn a_shells_outcome_is_unknown() {
        let raw = fixture("PostToolUse", "Bash");
        let t = Event::parse("PostToolUse", &raw).tool.unwrap();
        assert!(!t.failed && t.outcome_unknown);
        let raw = fixture("PostToolUse", "spawn_agent");
        assert!(
            !Event::parse("PostToolUse", &raw)
                .tool
                .unwrap()
                .outcome_unknown
        );
    }
}
