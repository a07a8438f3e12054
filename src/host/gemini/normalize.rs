//! Gemini CLI (its `settings.json` hooks): Claude-style fields under other event names.
//! BeforeAgent ≈ UserPromptSubmit, AfterAgent ≈ Stop, BeforeTool/AfterTool ≈ Pre/PostToolUse,
//! PreCompress(manual) ≈ PreCompact. What the real 0.61.0 sends (`tests/fixtures/gemini/`)
//! adds:
//! - BeforeAgent's (and AfterAgent's) `prompt` begins with the `<hook_context>` block a
//!   SessionStart hook injected: the prompt is kept as sent, and the fold takes off exactly
//!   the block sjournal journaled as injected (`fold::model_view::user_prompt`), never what
//!   a closing tag inside it would make of it;
//! - PreCompress(auto) fires before every model request, whether or not anything is
//!   compressed: it is not a compaction (kind `Other`); a manual `/compress` is;
//! - there is no `model` in the common payload: BeforeModel/AfterModel carry it in
//!   `llm_request.model`; of the rest of the request only BeforeModel's `messages` are kept,
//!   raw, one slice per message, for the fold to see the history being rewritten (an
//!   automatic compression has no event of its own: PreCompress(auto) fires before every
//!   request, compressed or not);
//! - a slash command run with `-p` (`/compress`) fires BeforeAgent/AfterAgent: no turn;
//! - a failing shell command is a plain AfterTool whose `llmContent` says `Exit Code: N`
//!   (N ≠ 0); a failed tool may also carry an `error` in its response.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::event::lenient::Str;
use crate::event::wire::Wire;
use crate::event::RawJson;
use crate::event::{Event, EventKind, Host};
use crate::host::claude::normalize as claude;

fn kind(name: &str) -> EventKind {
    match name {
        "BeforeAgent" => EventKind::UserPromptSubmit,
        "AfterAgent" => EventKind::Stop,
        "BeforeTool" => EventKind::PreToolUse,
        "AfterTool" => EventKind::PostToolUse,
        "PreCompress" => EventKind::PreCompact,
        "SessionStart" => EventKind::SessionStart,
        "SessionEnd" => EventKind::SessionEnd,
        "Notification" => EventKind::Notification,
        _ => EventKind::Other,
    }
}

/// The parts of a tool response that tell a failure.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow, rename = "llmContent")]
    llm_content: Str<'a>,
}

/// A shell command's exit code as Gemini CLI reports it in the tool output (`Exit Code: N`).
fn exit_code(llm_content: &str) -> Option<i64> {
    let at = llm_content.find("Exit Code: ")?;
    let digits: String = llm_content[at + 11..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

pub(in crate::host) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    let name = claude::name(w, record_kind);
    let mut kind = kind(&name);
    let response = w.prompt_response.take();
    let llm_request = w.llm_request.0.take();
    let mut e = Event::bare(Host::Gemini, kind, name);
    claude::common(&mut e, w);
    if kind == EventKind::PreCompact && e.trigger.as_deref() != Some("manual") {
        kind = EventKind::Other;
        e.kind = kind;
    }
    // `gemini -p "/compress"` runs the command, not a turn, yet fires BeforeAgent/AfterAgent
    // with the command as the prompt: it must not become the session's task.
    let command = e.prompt.as_deref().is_some_and(|p| {
        p.strip_prefix('/')
            .is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_alphabetic()) && !c.contains(' '))
    });
    if command && matches!(kind, EventKind::UserPromptSubmit | EventKind::Stop) {
        kind = EventKind::Other;
        e.kind = kind;
    }
    if kind == EventKind::Stop {
        e.message = e.message.or(response);
    }
    if let Some(req) = llm_request {
        e.model = req.model.0;
        if e.name == "BeforeModel" {
            e.model_messages = req
                .messages
                .and_then(|m| serde_json::from_str::<Vec<&RawValue>>(m.get()).ok())
                .map(|m| m.into_iter().map(RawJson::from).collect());
        }
    }
    if let Some(t) = e.tool.as_mut() {
        let r = t
            .response
            .filter(|r| crate::event::is_object(r.get()))
            .and_then(|r| serde_json::from_str::<Response>(r.get()).ok())
            .unwrap_or_default();
        let code = r.llm_content.as_deref().and_then(exit_code);
        t.failed = r.error.is_some() || code.is_some_and(|c| c != 0);
        if t.failed && e.error.is_none() {
            e.error = code.map(|c| Cow::Owned(format!("Exit Code: {c}")));
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real Gemini CLI 0.61.0 payloads (tests/fixtures/gemini).
    fn fixture(event: &str, variant: &str) -> String {
        let text = include_str!("../../../tests/fixtures/gemini/payloads-0.61.0.jsonl");
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["event"] == event && v["variant"].as_str().unwrap_or("") == variant)
            .map(|v| v["payload"].to_string())
            .unwrap_or_else(|| panic!("no fixture {event}/{variant}"))
    }

    #[test]
    fn the_prompt_is_kept_as_sent() {
        let raw = r#"{"session_id":"s","hook_event_name":"BeforeAgent","timestamp":"t",
            "prompt":"<hook_context>## Current task\nold</hook_context>\n\nrun echo hello"}"#;
        let e = Event::parse("BeforeAgent", raw);
        assert_eq!(e.kind, EventKind::UserPromptSubmit);
        assert_eq!(
            e.prompt.as_deref(),
            Some("<hook_context>## Current task\nold</hook_context>\n\nrun echo hello")
        );
    }

    #[test]
    fn only_a_manual_precompress_is_a_compaction() {
        let (a, m) = (
            fixture("PreCompress", "auto"),
            fixture("PreCompress", "manual"),
        );
        let auto = Event::parse("PreCompress", &a);
        assert_eq!(
            (auto.kind, auto.name.as_ref()),
            (EventKind::Other, "PreCompress")
        );
        let manual = Event::parse("PreCompress", &m);
        assert_eq!(manual.kind, EventKind::PreCompact);
    }

    #[test]
    fn the_model_comes_from_beforemodel() {
        let raw = fixture("BeforeModel", "");
        let e = Event::parse("BeforeModel", &raw);
        assert_eq!(e.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(e.kind, EventKind::Other);
    }

    #[test]
    fn a_failing_shell_is_told_by_its_exit_code() {
        let raw = fixture("AfterTool", "run_shell_command");
        let ok = Event::parse("AfterTool", &raw);
        assert!(!ok.tool.unwrap().failed);
        let raw = r#"{"session_id":"s","hook_event_name":"AfterTool","timestamp":"t",
            "tool_name":"run_shell_command","tool_input":{"command":"ls /nope"},
            "tool_response":{"llmContent":"Output: ls: cannot access '/nope'\nExit Code: 2\n","returnDisplay":"x"}}"#;
        let e = Event::parse("AfterTool", raw);
        assert!(e.tool.unwrap().failed);
        assert_eq!(e.error.as_deref(), Some("Exit Code: 2"));
    }

    #[test]
    fn a_slash_command_is_no_turn() {
        let raw = r#"{"session_id":"s","hook_event_name":"BeforeAgent","timestamp":"t","prompt":"/compress"}"#;
        assert_eq!(Event::parse("BeforeAgent", raw).kind, EventKind::Other);
    }
}
