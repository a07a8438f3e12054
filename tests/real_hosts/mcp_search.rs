//! The earlier-session search over MCP, as the Codex, Gemini CLI and OpenCode tests play it:
//! session A of the project runs a shell command holding [`MARKER`]; another project's
//! session holds the same word; a new session B of the project has the scripted model call the
//! search tool `sjournal install <host>` registered (`sjournal mcp`) for it. What the tests
//! check: A's record, cited by session, seq and hash as `sjournal log --json` gives them,
//! reached B's next model request, and the other project's session did not.

use serde_json::{json, Value};

use crate::injections::json_text;
use crate::support::World;

/// The word only session A's shell command holds (and the other project's prompt).
pub const MARKER: &str = "zebra7431";
/// The other project's session id.
pub const OTHER: &str = "other-project-session";

/// Journals a session of another project (its cwd elsewhere) whose prompt holds [`MARKER`].
pub fn other_project_session(w: &World) {
    use sjournal::journal::{Root, Writer, WriterOptions};
    let root = Root::new(w.root());
    let mut wr = Writer::open(&root, OTHER, &WriterOptions::default()).unwrap();
    let raw = json!({"hook_event_name": "UserPromptSubmit", "session_id": OTHER,
        "cwd": "/elsewhere/other-project", "prompt": format!("echo {MARKER} over there")});
    wr.append(
        "UserPromptSubmit",
        &sjournal::fold::digest::encode_event("UserPromptSubmit", &raw.to_string()),
    )
    .unwrap();
}

/// The (seq, hash) of the record of `session` that ends its shell call on [`MARKER`] (the
/// host's after-tool event, `kind`), from `sjournal log --json`.
pub fn marker_record(w: &World, session: &str, kind: &str) -> (u64, String) {
    let line = w
        .sj(&["log", "--json", "--session", session])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| {
            v["kind"] == kind
                && v["payload"]["tool_input"]["command"]
                    .as_str()
                    .is_some_and(|c| c.contains(MARKER))
        })
        .unwrap_or_else(|| panic!("no {kind} record of the marker's command in {session}"));
    (
        line["seq"].as_u64().unwrap(),
        line["hash"].as_str().unwrap().to_owned(),
    )
}

/// The tools' names the host offered the model in a request (the Responses and Chat APIs'
/// `tools[].name` or `tools[].function.name`, a namespace's `tools[]` included; Gemini's
/// `tools[].functionDeclarations[].name`).
pub fn offered_tools(req: &Value) -> Vec<String> {
    let mut names = Vec::new();
    fn walk(v: &Value, prefix: &str, names: &mut Vec<String>) {
        let Some(arr) = v.as_array() else { return };
        for t in arr {
            if let Some(decls) = t.get("functionDeclarations") {
                walk(decls, prefix, names);
                continue;
            }
            let name = t
                .get("name")
                .or_else(|| t.pointer("/function/name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(inner) = t.get("tools") {
                walk(inner, &format!("{prefix}{name}/"), names);
            } else if !name.is_empty() {
                names.push(format!("{prefix}{name}"));
            }
        }
    }
    walk(&req["tools"], "", &mut names);
    names
}

/// Asserts the hit on A's record is in `body` (a model request), cited either as the tool's
/// structured content carries it (JSON: Codex 0.171.0 hands the model the structured content,
/// as Claude Code does) or as its text content does (Gemini CLI 0.61.0, in its
/// `functionResponse`; OpenCode 1.18.33, in the `tool` message), and the other project's
/// session is not.
#[track_caller]
pub fn assert_cited(body: &str, session: &str, seq: u64, hash: &str) {
    let structured = format!(r#""session":"{session}","seq":{seq},"hash":"{hash}""#);
    let text = format!("session {session}, seq {seq}, hash {hash}");
    let (structured, text) = (json_text(&structured), json_text(&text));
    assert!(
        body.contains(&structured) || body.contains(&text),
        "the search hit's citation ({structured:?} or {text:?}) not found in {}",
        tail(body)
    );
    assert!(
        !body.contains(OTHER),
        "another project's session reached the model: {body}"
    );
}

/// The end of a request body (where the latest tool result is), cut on a character boundary.
fn tail(body: &str) -> &str {
    let mut at = body.len().saturating_sub(4000);
    while !body.is_char_boundary(at) {
        at += 1;
    }
    &body[at..]
}
