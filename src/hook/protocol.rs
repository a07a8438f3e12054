//! The wire protocol of each host: where its payload keeps the session id and the event name,
//! which events can carry injected context, and the exact stdout it expects back.
//! Sources: `hook-protocols.md` (the research notes), sections 1 (Claude Code), 3.1 (Codex),
//! 3.2 (Gemini CLI), 3.3 (Cursor), 3.4 (Cline).
//!
//! Replies are built with serde_json, so the context text is always escaped correctly, and
//! are one line with no trailing text: hosts parse stdout as one JSON object.

use serde_json::{json, Value};

/// A host's hook protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Claude,
    Codex,
    Gemini,
    Cursor,
    Cline,
}

/// `--host`: a protocol, or `auto` (detect from the payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFlag {
    Auto,
    Fixed(Protocol),
}

impl std::str::FromStr for HostFlag {
    type Err = String;
    fn from_str(s: &str) -> Result<HostFlag, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "auto" => HostFlag::Auto,
            "claude" | "claude-code" => HostFlag::Fixed(Protocol::Claude),
            "codex" => HostFlag::Fixed(Protocol::Codex),
            "gemini" => HostFlag::Fixed(Protocol::Gemini),
            "cursor" => HostFlag::Fixed(Protocol::Cursor),
            "cline" => HostFlag::Fixed(Protocol::Cline),
            other => {
                return Err(format!(
                    "unknown host {other:?} (expected auto, claude, codex, gemini, cursor or cline)"
                ))
            }
        })
    }
}

/// Gemini CLI event names that no other host uses.
const GEMINI_ONLY: &[&str] = &[
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
];

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Claude => "claude",
            Protocol::Codex => "codex",
            Protocol::Gemini => "gemini",
            Protocol::Cursor => "cursor",
            Protocol::Cline => "cline",
        }
    }

    /// Which host sent this payload. Cline and Cursor have their own field names; Gemini its
    /// own event names and a `timestamp`; Codex adds `turn_id` (Claude sends it only on
    /// MessageDisplay). Anything else is read as Claude Code, whose shape Codex shares.
    pub fn detect(v: &Value) -> Protocol {
        let has = |k: &str| v.get(k).is_some();
        if has("hookName") && (has("taskId") || has("clineVersion")) {
            return Protocol::Cline;
        }
        if has("conversation_id") || has("cursor_version") || has("generation_id") {
            return Protocol::Cursor;
        }
        let event = v.get("hook_event_name").and_then(Value::as_str);
        if event.is_some_and(|e| GEMINI_ONLY.contains(&e)) || has("timestamp") {
            return Protocol::Gemini;
        }
        if has("turn_id") && event != Some("MessageDisplay") {
            return Protocol::Codex;
        }
        Protocol::Claude
    }

    /// The session the event belongs to.
    pub fn session_id(self, v: &Value) -> Option<&str> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        match self {
            Protocol::Claude | Protocol::Codex | Protocol::Gemini => s("session_id"),
            Protocol::Cursor => s("conversation_id").or_else(|| s("session_id")),
            Protocol::Cline => s("taskId"),
        }
    }

    pub fn event_name(self, v: &Value) -> Option<&str> {
        let key = match self {
            Protocol::Cline => "hookName",
            _ => "hook_event_name",
        };
        v.get(key).and_then(Value::as_str)
    }

    /// Events that get the session's context by default.
    pub fn default_context_event(self, event: &str) -> bool {
        match self {
            Protocol::Claude | Protocol::Codex => {
                matches!(event, "SessionStart" | "UserPromptSubmit")
            }
            Protocol::Gemini => matches!(event, "SessionStart" | "BeforeAgent"),
            Protocol::Cursor => event == "sessionStart",
            Protocol::Cline => matches!(event, "TaskStart" | "TaskResume" | "UserPromptSubmit"),
        }
    }

    /// Events whose reply can carry context at all (configuration may add these).
    pub fn accepts_context(self, event: &str) -> bool {
        match self {
            Protocol::Claude => matches!(
                event,
                "SessionStart"
                    | "Setup"
                    | "SubagentStart"
                    | "UserPromptSubmit"
                    | "UserPromptExpansion"
                    | "PreToolUse"
                    | "PostToolUse"
                    | "PostToolUseFailure"
                    | "PostToolBatch"
                    | "Stop"
                    | "SubagentStop"
            ),
            Protocol::Codex => matches!(
                event,
                "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "PostToolUse"
            ),
            Protocol::Gemini => matches!(event, "SessionStart" | "BeforeAgent" | "AfterTool"),
            Protocol::Cursor => event == "sessionStart",
            Protocol::Cline => true,
        }
    }

    /// The stdout for an event: `Some(json)` to print, `None` to print nothing.
    pub fn reply(self, event: &str, context: Option<&str>) -> Option<String> {
        let context = context.filter(|c| !c.is_empty() && self.accepts_context(event));
        let v = match (self, context) {
            (Protocol::Cline, Some(c)) => json!({"cancel": false, "contextModification": c}),
            (Protocol::Cline, None) => return self.fail_open_reply(),
            (Protocol::Cursor, Some(c)) => json!({"additional_context": c}),
            (_, Some(c)) => json!({
                "hookSpecificOutput": {"hookEventName": event, "additionalContext": c}
            }),
            (_, None) => return None,
        };
        Some(v.to_string())
    }

    /// The stdout for an event (None: the hook failed before it knew one, or the reply is
    /// no longer timely) carrying `notice` for the **user**, through the host's visible
    /// channel: `systemMessage` (Claude Code, Codex, Gemini CLI: a warning shown to the
    /// user), `user_message` (Cursor), `errorMessage` (Cline, with `cancel: false`). Used when
    /// an event could not be stored durably in the journal's root. Without a notice this is
    /// [`Protocol::reply`] (or [`Protocol::fail_open_reply`] without an event).
    pub fn reply_with_notice(
        self,
        event: Option<&str>,
        context: Option<&str>,
        notice: Option<&str>,
    ) -> Option<String> {
        let base = match event {
            Some(ev) => self.reply(ev, context),
            None => self.fail_open_reply(),
        };
        let Some(notice) = notice else {
            return base;
        };
        let mut v: Value = base
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or_else(|| json!({}));
        match self {
            Protocol::Claude | Protocol::Codex | Protocol::Gemini => {
                v["systemMessage"] = notice.into()
            }
            Protocol::Cursor => v["user_message"] = notice.into(),
            Protocol::Cline => {
                v["cancel"] = false.into();
                v["errorMessage"] = notice.into();
            }
        }
        Some(v.to_string())
    }

    /// What to print when the hook has nothing to say or failed: nothing, except for Cline,
    /// whose hooks answer every event with a JSON object (`cancel: false` lets it proceed).
    pub fn fail_open_reply(self) -> Option<String> {
        match self {
            Protocol::Cline => Some(json!({"cancel": false}).to_string()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_host() {
        let d = |s: &str| Protocol::detect(&serde_json::from_str(s).unwrap());
        assert_eq!(
            d(r#"{"session_id":"a","hook_event_name":"Stop"}"#),
            Protocol::Claude
        );
        assert_eq!(
            d(r#"{"session_id":"a","hook_event_name":"MessageDisplay","turn_id":"t"}"#),
            Protocol::Claude
        );
        assert_eq!(
            d(r#"{"session_id":"a","hook_event_name":"Stop","turn_id":"t","model":"m"}"#),
            Protocol::Codex
        );
        assert_eq!(
            d(r#"{"session_id":"a","hook_event_name":"BeforeAgent"}"#),
            Protocol::Gemini
        );
        assert_eq!(
            d(
                r#"{"session_id":"a","hook_event_name":"SessionStart","timestamp":"2026-01-01T00:00:00Z"}"#
            ),
            Protocol::Gemini
        );
        assert_eq!(
            d(r#"{"conversation_id":"c","hook_event_name":"stop"}"#),
            Protocol::Cursor
        );
        assert_eq!(
            d(r#"{"hookName":"TaskStart","taskId":"t"}"#),
            Protocol::Cline
        );
    }

    #[test]
    fn replies_are_exact_json() {
        assert_eq!(
            Protocol::Claude
                .reply("SessionStart", Some("a \"q\"\n"))
                .unwrap(),
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"a \"q\"\n"}}"#
        );
        assert_eq!(Protocol::Claude.reply("PreCompact", Some("x")), None);
        assert_eq!(Protocol::Claude.reply("SessionStart", None), None);
        assert_eq!(Protocol::Claude.reply("SessionStart", Some("")), None);
        assert_eq!(
            Protocol::Cursor.reply("sessionStart", Some("x")).unwrap(),
            r#"{"additional_context":"x"}"#
        );
        assert_eq!(
            Protocol::Cline.reply("TaskStart", Some("x")).unwrap(),
            r#"{"cancel":false,"contextModification":"x"}"#
        );
        assert_eq!(
            Protocol::Cline.reply("TaskCancel", None).unwrap(),
            r#"{"cancel":false}"#
        );
    }

    #[test]
    fn notices_reach_the_user_channel() {
        let n = Some("kept outside the root");
        assert_eq!(
            Protocol::Claude
                .reply_with_notice(Some("SessionStart"), Some("ctx"), n)
                .unwrap(),
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"},"systemMessage":"kept outside the root"}"#
        );
        assert_eq!(
            Protocol::Gemini
                .reply_with_notice(Some("AfterTool"), None, n)
                .unwrap(),
            r#"{"systemMessage":"kept outside the root"}"#
        );
        assert_eq!(
            Protocol::Cursor.reply_with_notice(None, None, n).unwrap(),
            r#"{"user_message":"kept outside the root"}"#
        );
        assert_eq!(
            Protocol::Cline
                .reply_with_notice(Some("PostToolUse"), None, n)
                .unwrap(),
            r#"{"cancel":false,"errorMessage":"kept outside the root"}"#
        );
        assert_eq!(
            Protocol::Codex.reply_with_notice(Some("Stop"), None, None),
            None
        );
    }
}
