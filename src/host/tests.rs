//! One detector for the hook and the fold: every real and constructed payload is told the
//! same host by both, and the hosts' replies are exact.

use super::*;
use crate::event::Event;

fn detect(json: &str) -> Host {
    Host::detect(&serde_json::from_str(json).unwrap())
}

/// Every payload of the fixture corpora (real hosts' and constructed).
fn corpus() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for sub in [
        "claude-code",
        "claude-code/run",
        "codex",
        "gemini",
        "cursor",
        "cline",
        "openclaw",
        "opencode",
        "pi",
        "constructed",
    ] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for f in rd
            .flatten()
            .filter(|f| f.path().extension().is_some_and(|e| e == "jsonl"))
        {
            for line in std::fs::read_to_string(f.path()).unwrap().lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                // The OpenClaw capture holds what OpenClaw passed to a plugin, not hook payloads.
                if v["payload"].is_null() {
                    continue;
                }
                out.push((f.path().display().to_string(), v["payload"].to_string()));
            }
        }
    }
    out
}

#[test]
fn the_hook_and_the_fold_agree_on_every_payload() {
    let all = corpus();
    assert!(all.len() > 100, "{}", all.len());
    for (file, raw) in &all {
        let v: Value = serde_json::from_str(raw).unwrap();
        let hook = Host::detect(&v);
        let fold = Event::parse("event", raw).host;
        assert_eq!(hook, fold, "{file}: {raw}");
        assert_ne!(hook, Host::Unknown, "{file}: {raw}");
    }
}

#[test]
fn real_codex_session_start_and_end_are_codex() {
    let p = r#"{"session_id":"s","transcript_path":"/h/.codex/sessions/2026/12/01/rollout-2026-12-01T06-35-39-01a2.jsonl","cwd":"/p","hook_event_name":"SessionEnd","reason":"other"}"#;
    assert_eq!(detect(p), Host::Codex);
    let claude = r#"{"session_id":"s","transcript_path":"/h/.claude/projects/-p/0c1d.jsonl","cwd":"/p","hook_event_name":"SessionEnd","reason":"other"}"#;
    assert_eq!(detect(claude), Host::Claude);
}

#[test]
fn an_openclaw_payload_is_openclaw_not_gemini() {
    // It carries a timestamp-like field and no Claude event name: the old hook detector
    // answered it as Gemini and filed it under an unattributed session.
    let p = r#"{"sjournal_bridge":"openclaw","hook_event_name":"session_start","session_id":"19382ab0","sessionKey":"agent:main:sj-gw-1","timestamp":"2026-12-01T07:11:00.899Z"}"#;
    let v: Value = serde_json::from_str(p).unwrap();
    assert_eq!(Host::detect(&v), Host::OpenClaw);
    assert_eq!(Host::OpenClaw.session_id(&v), Some("19382ab0"));
    assert_eq!(Host::OpenClaw.event_name(&v), Some("session_start"));
    assert_eq!(Event::parse("session_start", p).host, Host::OpenClaw);
}

#[test]
fn hosts_by_their_keys() {
    assert_eq!(
        detect(r#"{"hook_event_name":"Stop","session_id":"s"}"#),
        Host::Claude
    );
    assert_eq!(
        detect(r#"{"hook_event_name":"MessageDisplay","turn_id":"t"}"#),
        Host::Claude,
        "Claude's MessageDisplay carries a turn_id too"
    );
    assert_eq!(
        detect(r#"{"hook_event_name":"Stop","turn_id":"t"}"#),
        Host::Codex
    );
    assert_eq!(detect(r#"{"hook_event_name":"BeforeTool"}"#), Host::Gemini);
    assert_eq!(
        detect(r#"{"hook_event_name":"SessionStart","timestamp":"2026-01-01T00:00:00Z"}"#),
        Host::Gemini
    );
    assert_eq!(
        detect(r#"{"hook_event_name":"stop","conversation_id":"c"}"#),
        Host::Cursor
    );
    assert_eq!(
        detect(r#"{"hookName":"TaskStart","taskId":"1"}"#),
        Host::Cline
    );
    assert_eq!(detect(r#"{"anything":1}"#), Host::Unknown);
    assert_eq!(detect("[1]"), Host::Unknown);
    for h in Host::ALL {
        assert_eq!(Host::from_name(h.as_str()), Some(h));
    }
    assert_eq!(
        "openclaw".parse::<HostFlag>(),
        Ok(HostFlag::Fixed(Host::OpenClaw))
    );
    assert_eq!(
        "claude-code".parse::<HostFlag>(),
        Ok(HostFlag::Fixed(Host::Claude))
    );
    assert!("unknown"
        .parse::<HostFlag>()
        .unwrap_err()
        .contains("openclaw"));
}

#[test]
fn replies_are_exact_json() {
    assert_eq!(
        Host::Claude
            .reply("SessionStart", Some("a \"q\"\n"))
            .unwrap(),
        r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"a \"q\"\n"}}"#
    );
    assert_eq!(Host::Claude.reply("PreCompact", Some("x")), None);
    assert_eq!(Host::Claude.reply("SessionStart", None), None);
    assert_eq!(Host::Claude.reply("SessionStart", Some("")), None);
    assert_eq!(
        Host::Cursor.reply("sessionStart", Some("x")).unwrap(),
        r#"{"additional_context":"x"}"#
    );
    assert_eq!(
        Host::Cline.reply("TaskStart", Some("x")).unwrap(),
        r#"{"cancel":false,"contextModification":"x"}"#
    );
    assert_eq!(
        Host::Cline.reply("TaskCancel", None).unwrap(),
        r#"{"cancel":false}"#
    );
    assert_eq!(
        Host::OpenClaw
            .reply("before_prompt_build", Some("x"))
            .unwrap(),
        r#"{"hookSpecificOutput":{"hookEventName":"before_prompt_build","additionalContext":"x"}}"#
    );
    assert_eq!(Host::OpenClaw.reply("agent_end", Some("x")), None);
}

#[test]
fn gemini_context_rides_on_beforeagent_only() {
    // SessionStart context is prepended to the prompt text, which turns `-p "/compress"` into
    // a plain prompt and nests into BeforeAgent's prompt: it is not injected by default.
    assert!(!Host::Gemini.default_context_event("SessionStart"));
    assert!(Host::Gemini.default_context_event("BeforeAgent"));
}

#[test]
fn notices_reach_the_user_channel() {
    let n = Some("kept outside the root");
    assert_eq!(
        Host::Claude
            .reply_with_notice(Some("SessionStart"), Some("ctx"), n)
            .unwrap(),
        r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"},"systemMessage":"kept outside the root"}"#
    );
    assert_eq!(
        Host::Gemini
            .reply_with_notice(Some("AfterTool"), None, n)
            .unwrap(),
        r#"{"systemMessage":"kept outside the root"}"#
    );
    assert_eq!(
        Host::Cursor.reply_with_notice(None, None, n).unwrap(),
        r#"{"user_message":"kept outside the root"}"#
    );
    assert_eq!(
        Host::Cline
            .reply_with_notice(Some("PostToolUse"), None, n)
            .unwrap(),
        r#"{"cancel":false,"errorMessage":"kept outside the root"}"#
    );
    assert_eq!(
        Host::Codex.reply_with_notice(Some("Stop"), None, None),
        None
    );
    // The bridges (tools/bridge-common) read the notice from `systemMessage`, alongside the
    // context they inject.
    for h in [Host::OpenCode, Host::Pi] {
        assert_eq!(
            h.reply_with_notice(Some("SessionStart"), Some("ctx"), n)
                .unwrap(),
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"},"systemMessage":"kept outside the root"}"#,
            "{h}"
        );
    }
    assert_eq!(
        Host::OpenClaw
            .reply_with_notice(Some("agent_end"), None, n)
            .unwrap(),
        r#"{"systemMessage":"kept outside the root"}"#
    );
}

#[test]
fn the_cline_sdk_session_and_where_its_replies_are_read() {
    let v: Value = serde_json::from_str(
        r#"{"clineVersion":"","hookName":"tool_result","taskId":"conv_2",
            "sessionContext":{"rootSessionId":"1796_abc"}}"#,
    )
    .unwrap();
    assert_eq!(Host::Cline.session_id(&v), Some("1796_abc"));
    let v: Value = serde_json::from_str(r#"{"hookName":"TaskStart","taskId":"17462"}"#).unwrap();
    assert_eq!(Host::Cline.session_id(&v), Some("17462"));
    // The CLI runs its run-start, prompt and end hooks detached and ignores their output.
    for detached in ["agent_start", "agent_resume", "prompt_submit", "agent_end"] {
        assert!(!Host::Cline.accepts_context(detached), "{detached}");
        assert!(!Host::Cline.default_context_event(detached), "{detached}");
        assert_eq!(
            Host::Cline.reply(detached, Some("x")).unwrap(),
            r#"{"cancel":false}"#
        );
    }
    for blocking in ["tool_call", "tool_result", "TaskStart", "PostToolUse"] {
        assert!(Host::Cline.accepts_context(blocking), "{blocking}");
    }
}

/// Who wrote a prompt, per host, from what its payload carries.
#[test]
fn prompt_authors() {
    use crate::event::Event;
    use crate::host::Author;
    let author = |raw: &str| {
        let e = Event::parse("Ev", raw);
        e.host.prompt_author(&e)
    };
    let cases: &[(&str, Option<Author>)] = &[
        (
            r#"{"hook_event_name":"UserPromptSubmit","prompt":"hi"}"#,
            Some(Author::User),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","agent_id":"a","prompt":"hi"}"#,
            Some(Author::Agent),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","agent_type":"reviewer","prompt":"hi"}"#,
            Some(Author::User),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","prompt":"<task-notification>\n<status>completed</status></task-notification>"}"#,
            Some(Author::Host),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","prompt":"<channel source=\"telegram\">hi</channel>"}"#,
            Some(Author::Other),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","turn_id":"t","prompt":"<turn_aborted>x</turn_aborted>"}"#,
            Some(Author::Host),
        ),
        (r#"{"hook_event_name":"Stop","prompt":"hi"}"#, None),
        (
            r#"{"hook_event_name":"AfterAgent","timestamp":"t","prompt":"hi"}"#,
            None,
        ),
        (
            r#"{"hookName":"prompt_submit","taskId":"t","agent_id":"a","userPromptSubmit":{"prompt":"hi"}}"#,
            Some(Author::User),
        ),
        (
            r#"{"hookName":"prompt_submit","taskId":"t","agent_id":"a","parent_agent_id":"p","userPromptSubmit":{"prompt":"hi"}}"#,
            Some(Author::Agent),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","sjournal_bridge":"pi","prompt":"hi","prompt_source":"interactive"}"#,
            Some(Author::User),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","sjournal_bridge":"pi","prompt":"hi","prompt_source":"template"}"#,
            Some(Author::Host),
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","sjournal_bridge":"opencode","prompt":"hi"}"#,
            Some(Author::Unknown),
        ),
        (
            r#"{"hook_event_name":"before_prompt_build","sjournal_bridge":"openclaw","sessionKey":"agent:main:x","ctx":{"trigger":"user"},"prompt":"hi"}"#,
            Some(Author::User),
        ),
        (
            r#"{"hook_event_name":"before_prompt_build","sjournal_bridge":"openclaw","sessionKey":"agent:main:x","ctx":{"trigger":"user","sessionKey":"agent:main:cron:j"},"prompt":"hi"}"#,
            Some(Author::Schedule),
        ),
        (
            r#"{"hook_event_name":"before_prompt_build","sjournal_bridge":"openclaw","sessionKey":"agent:main:x","ctx":{"trigger":"user","senderId":"u","senderIsOwner":true},"prompt":"hi"}"#,
            Some(Author::User),
        ),
    ];
    for (raw, want) in cases {
        assert_eq!(author(raw), *want, "{raw}");
    }
}
