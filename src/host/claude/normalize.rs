//! Claude Code: the canonical shape. Every event of Claude Code's hooks reference and the newer
//! ones seen in real 2.1.332 payloads map one to one onto `EventKind`.

use std::borrow::Cow;

use crate::event::wire::Wire;
use crate::event::RawJson;
use crate::event::{Event, EventKind, Host, Tool};

/// The event's name: the payload's `hook_event_name`, else the record kind.
pub(in crate::host) fn name<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Cow<'a, str> {
    w.hook_event_name
        .take()
        .unwrap_or(Cow::Borrowed(record_kind))
}

/// Fills the fields Claude-shaped hosts (Claude Code, Codex, Gemini, Cursor) share.
pub(in crate::host) fn common<'a>(e: &mut Event<'a>, w: &mut Wire<'a>) {
    e.session_id = w.session_id.take();
    e.cwd = w.cwd.take();
    e.model = w.model.take();
    e.permission_mode = w.permission_mode.take();
    e.prompt_id = w.prompt_id.take();
    e.turn_id = w.turn_id.take();
    e.agent_id = w.agent_id.take();
    e.agent_type = w.agent_type.take();
    e.prompt = w.prompt.take();
    e.source = w.source.take();
    e.trigger = w.trigger.take();
    e.reason = w.reason.take();
    e.error = w.error.take();
    e.message = w.last_assistant_message.take().or_else(|| w.message.take());
    e.file_path = w.file_path.take();
    e.new_cwd = w.new_cwd.take();
    e.summary = w.compact_summary.take();
    e.custom_instructions = w.custom_instructions.take();
    e.parent_session = w.parent_session_id.take();
    e.background_tasks = w.background_tasks.take().map(RawJson::from);
    e.task_id = w.task_id_snake.take();
    e.task_subject = w.task_subject.take();
    if let Some(name) = w.tool_name.take() {
        e.tool = Some(Tool {
            name,
            use_id: w.tool_use_id.take(),
            input: w.tool_input.map(RawJson::from),
            response: w.tool_response.map(RawJson::from),
            failed: false,
            outcome_unknown: false,
            duration_ms: w.duration_ms.as_u64(),
            detail: None,
            exit_code: None,
            interrupted: w.is_interrupt.0 == Some(true),
        });
    }
}

pub(in crate::host) fn normalize<'a>(
    host: Host,
    w: &mut Wire<'a>,
    record_kind: &'a str,
) -> Event<'a> {
    let name = name(w, record_kind);
    let kind = EventKind::from_claude(&name);
    let mut e = Event::bare(host, kind, name);
    common(&mut e, w);
    match kind {
        EventKind::PostToolUseFailure => {
            let code = e
                .error
                .as_deref()
                .and_then(crate::event::tool_effects::exit_code_in);
            if let Some(t) = e.tool.as_mut() {
                t.failed = true;
                t.exit_code = code;
            }
        }
        // The switch is done only at PostModelSwitch; PreModelSwitch may still be refused.
        EventKind::PostModelSwitch => e.model = e.model.take().or_else(|| w.to_model.take()),
        _ => {}
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_failure() {
        let raw = r#"{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash",
            "tool_input":{"command":"false"},"tool_use_id":"t1","error":"Exit code 1","duration_ms":21}"#;
        let e = Event::parse("PostToolUseFailure", raw);
        assert_eq!(
            (e.host, e.kind),
            (Host::Claude, EventKind::PostToolUseFailure)
        );
        let t = e.tool.unwrap();
        assert!(t.failed);
        assert_eq!((t.use_id.as_deref(), t.duration_ms), (Some("t1"), Some(21)));
        assert_eq!(e.error.as_deref(), Some("Exit code 1"));
    }

    #[test]
    fn model_changes_after_the_switch() {
        let pre = r#"{"hook_event_name":"PreModelSwitch","from_model":"a","to_model":"b"}"#;
        assert_eq!(Event::parse("PreModelSwitch", pre).model, None);
        let post = r#"{"hook_event_name":"PostModelSwitch","from_model":"a","to_model":"b"}"#;
        assert_eq!(
            Event::parse("PostModelSwitch", post).model.as_deref(),
            Some("b")
        );
    }

    #[test]
    fn unknown_event_keeps_its_name() {
        let e = Event::parse(
            "Brand-New",
            r#"{"hook_event_name":"BrandNew","session_id":"s"}"#,
        );
        assert_eq!((e.kind, e.name.as_ref()), (EventKind::Other, "BrandNew"));
        let e = Event::parse("event", "[1,2]");
        assert_eq!(
            (e.kind, e.name.as_ref(), e.parsed),
            (EventKind::Other, "event", false)
        );
    }
}
