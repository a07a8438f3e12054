//! The facts the index keeps of each record, read with the same event adapters the fold uses
//! (`crate::event`): files touched (by a tool call that succeeded, or reported by the host),
//! shell commands with their exit status, and prompts. Pure: a function of the record alone.
//!
//! Exit status: the tool response's `exit_code` / `exitCode` / `returncode` when the host
//! gives one; else the `Exit code N` that Claude Code puts at the start of a failed command's
//! error; else 0 for a Claude Code command that succeeded (it reports a non-zero exit as a
//! failure); else unknown (NULL), with `failed` saying what the host said.

use serde::Deserialize;

use crate::event::{Event, EventKind, Host};
use crate::format::payload::{decode_event, is_system_kind};

/// Tools that run a shell command, by their name on any host.
pub fn is_shell_tool(name: &str) -> bool {
    matches!(
        name,
        "Bash"
            | "run_shell_command"
            | "execute_command"
            | "shell"
            | "exec_command"
            | "local_shell"
            | "run_terminal_cmd"
            | "bash"
            | "terminal"
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    pub files: Vec<(String, &'static str)>,
    pub command: Option<Command>,
    pub prompt: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub tool: String,
    pub command: String,
    pub exit_code: Option<i32>,
    pub failed: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CommandInput {
    command: Option<serde_json::Value>,
    cmd: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Response {
    exit_code: Option<i64>,
    #[serde(rename = "exitCode")]
    exit_code_cc: Option<i64>,
    returncode: Option<i64>,
}

fn command_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        // argv form (Codex `["bash","-lc","ls"]`): joined with spaces.
        serde_json::Value::Array(a) => Some(
            a.iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| x.to_string())
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// Facts of one record (none for system records and undecodable payloads).
pub fn extract(kind: &str, seq: u64, payload: &[u8]) -> Facts {
    let mut f = Facts::default();
    if is_system_kind(kind) {
        return f;
    }
    let Ok(raw) = decode_event(seq, payload) else {
        return f;
    };
    let raw = crate::event::lenient::text(raw);
    let e = Event::parse(kind, &raw);
    if let Some(p) = &e.prompt {
        if e.kind == EventKind::UserPromptSubmit || e.kind == EventKind::Stop {
            f.prompt = Some(p.to_string());
        }
    }
    if let Some((op, path)) = &e.file_touch {
        f.files.push((path.to_string(), op.as_str()));
    }
    let post = matches!(
        e.kind,
        EventKind::PostToolUse | EventKind::PostToolUseFailure
    );
    if let (true, Some(t)) = (post, &e.tool) {
        if !t.failed {
            for (op, path) in e.tool_input().touched(&t.name) {
                f.files.push((path.to_owned(), op.as_str()));
            }
        }
        if is_shell_tool(&t.name) {
            let input: CommandInput = t
                .input
                .and_then(|i| serde_json::from_str(i.get()).ok())
                .unwrap_or_default();
            let text = input
                .command
                .as_ref()
                .or(input.cmd.as_ref())
                .and_then(command_text)
                .or_else(|| t.detail.as_deref().map(str::to_owned));
            if let Some(command) = text {
                let resp: Response = t
                    .response
                    .and_then(|r| serde_json::from_str(r.get()).ok())
                    .unwrap_or_default();
                let explicit = resp.exit_code.or(resp.exit_code_cc).or(resp.returncode);
                let from_error = e
                    .error
                    .as_deref()
                    .and_then(|m| m.strip_prefix("Exit code "))
                    .and_then(|m| m.split(|c: char| !c.is_ascii_digit() && c != '-').next())
                    .and_then(|n| n.parse::<i64>().ok());
                let implied = (e.host == Host::Claude && !t.failed).then_some(0);
                let exit_code = explicit
                    .or(from_error)
                    .or(implied)
                    .and_then(|c| i32::try_from(c).ok());
                f.command = Some(Command {
                    tool: t.name.to_string(),
                    command,
                    exit_code,
                    failed: t.failed || exit_code.is_some_and(|c| c != 0),
                });
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> Vec<u8> {
        crate::fold::digest::encode_event("event", json)
    }

    #[test]
    fn real_claude_failure_and_success() {
        let fail = r#"{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"ls /nope"},"tool_use_id":"t","error":"Exit code 2\nls: cannot access","is_interrupt":false}"#;
        let f = extract("PostToolUseFailure", 1, &event(fail));
        let c = f.command.unwrap();
        assert_eq!(
            (c.command.as_str(), c.exit_code, c.failed),
            ("ls /nope", Some(2), true)
        );
        let ok = r#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo hi"},"tool_response":{"stdout":"hi"},"tool_use_id":"t"}"#;
        let c = extract("PostToolUse", 2, &event(ok)).command.unwrap();
        assert_eq!((c.exit_code, c.failed), (Some(0), false));
        let w = r#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"src/main.rs","content":"x"},"tool_use_id":"t"}"#;
        assert_eq!(
            extract("PostToolUse", 3, &event(w)).files,
            vec![("src/main.rs".into(), "write")]
        );
        let p = r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"deploy production"}"#;
        assert_eq!(
            extract("UserPromptSubmit", 4, &event(p)).prompt.as_deref(),
            Some("deploy production")
        );
    }
}
