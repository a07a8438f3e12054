//! Gemini CLI (hook-protocols §3.2): Claude-style fields under other event names.
//! BeforeAgent ≈ UserPromptSubmit, AfterAgent ≈ Stop, BeforeTool/AfterTool ≈ Pre/PostToolUse,
//! PreCompress ≈ PreCompact. BeforeModel, AfterModel and BeforeToolSelection have no
//! counterpart and stay `Other` under their own names.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::wire::Wire;
use super::{claude, Event, EventKind, Host};

/// Event names only Gemini CLI uses (it shares SessionStart, SessionEnd, Notification).
pub(crate) const ONLY_NAMES: &[&str] = &[
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
];

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

/// Gemini reports a failed tool inside its response: `{"error": ...}` (not null).
#[derive(Deserialize, Default)]
#[serde(default)]
struct ResponseError<'a> {
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

pub(super) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    let name = claude::name(w, record_kind);
    let mut e = Event::bare(Host::Gemini, kind(&name), name);
    let response = w.prompt_response.take();
    claude::common(&mut e, w);
    if e.kind == EventKind::Stop {
        e.message = e.message.or(response);
    }
    if let Some(t) = e.tool.as_mut() {
        t.failed = t.response.is_some_and(|r| {
            super::is_object(r.get())
                && serde_json::from_str::<ResponseError>(r.get()).is_ok_and(|x| x.error.is_some())
        });
    }
    e
}
