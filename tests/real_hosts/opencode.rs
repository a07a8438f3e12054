//! OpenCode 1.18.33 (`opencode run`), bridged by the plugin `sjournal install opencode` puts in
//! `~/.config/opencode/plugins/`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

pub const TITLE_MARKER: &str = "title generator";
pub const COMPACT_MARKER: &str = "summarization";
pub const SUMMARY: &str = "MOCK-SUMMARY: opencode compacted.";

pub struct OpenCode {
    pub world: World,
    pub mock: Mock,
    pub session: Option<String>,
}

impl OpenCode {
    pub fn start(script: impl FnOnce(&str) -> Script) -> Option<OpenCode> {
        let dir = support::installed("opencode")?;
        let mut world = World::new(dir);
        let mock = Mock::start(script(&world.project.display().to_string()));
        std::fs::write(
            world.project.join("opencode.json"),
            json!({"provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                     "options": {"baseURL": format!("{}/v1", mock.base()), "apiKey": "mock-key"},
                     "models": {"mock-model": {"name": "Mock Model", "tool_call": true,
                                               "limit": {"context": 20000, "output": 8192}}}}},
                   "model": "mock/mock-model", "small_model": "mock/mock-model",
                   "autoupdate": false, "share": "disabled", "permission": {"*": "allow"}})
            .to_string(),
        )
        .unwrap();
        for (k, v) in [
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ("OPENCODE_DISABLE_SHARE", "1"),
        ] {
            world.env.insert(k.into(), v.into());
        }
        world.patient_hook();
        let said = world.sj(&["install", "opencode"]);
        assert_has(&said, "installed", "install opencode");
        Some(OpenCode {
            world,
            mock,
            session: None,
        })
    }

    /// One `opencode run` (continuing the session after the first); returns the JSON events.
    pub fn prompt(&mut self, prompt: &str) -> Vec<Value> {
        let bin = self
            .world
            .host_dir
            .join("node_modules/opencode-linux-x64/bin/opencode");
        let mut c = self.world.cmd(bin);
        c.args(["run", "--format", "json"]);
        if let Some(s) = &self.session {
            c.args(["--session", s]);
        }
        c.arg(prompt);
        let o = self.world.run(c, Duration::from_secs(240));
        assert!(
            o.status.success(),
            "opencode run {prompt:?}: {}",
            support::out_text(&o)
        );
        let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if let Some(id) = events.iter().find_map(|e| e["sessionID"].as_str()) {
            self.session.get_or_insert_with(|| id.to_owned());
        }
        events
    }
}

/// A stand-in for sjournal that runs it, then, for a SessionStart, waits 3 s before it ends.
fn slow_session_start(w: &World) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = w.home.join("slow-session-start");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ninput=$(cat)\nprintf '%s' \"$input\" | '{}' \"$@\"\nstatus=$?\n\
             case \"$input\" in *'\"hook_event_name\":\"SessionStart\"'*) sleep 3 ;; esac\n\
             exit $status\n",
            support::bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn script(project: &str) -> Script {
    Script {
        rules: vec![
            Rule {
                key: "ALPHA1",
                steps: vec![
                    Step::Tool(
                        "bash",
                        json!({"command": "echo hello", "description": "Say hello"}),
                    ),
                    // Exits 2.
                    Step::Tool(
                        "bash",
                        json!({"command": "ls /nonexistent-sjournal-dir", "description": "List a missing dir"}),
                    ),
                    Step::Tool(
                        "read",
                        json!({"filePath": format!("{project}/missing.txt")}),
                    ),
                    Step::Tool(
                        "write",
                        json!({"filePath": format!("{project}/notes.txt"), "content": "hello\n"}),
                    ),
                ],
            },
            Rule {
                key: "BRAVO2",
                steps: vec![Step::Text("bravo answered")],
            },
            Rule {
                key: "CHARLIE3",
                steps: vec![Step::Text("charlie answered")],
            },
            Rule {
                key: "DELTA4",
                steps: vec![Step::Text("delta answered")],
            },
            Rule {
                key: "ECHO5",
                steps: vec![Step::Text("echo answered")],
            },
        ],
        special: vec![(TITLE_MARKER, "Mock title"), (COMPACT_MARKER, SUMMARY)],
        input_tokens: 100,
        big_after: Some(("CHARLIE3", 19_500)),
        special_delay_ms: 0,
    }
}

#[test]
fn opencode_session_with_continuation_failed_tool_and_compaction() {
    let Some(mut oc) = OpenCode::start(script) else {
        return;
    };
    let plugin = oc.world.home.join(".config/opencode/plugins/sjournal.ts");
    assert!(std::fs::read_to_string(&plugin)
        .unwrap()
        .starts_with("// sjournal bridge"));
    oc.prompt("ALPHA1 run echo hello, list a missing dir, read missing.txt, write notes.txt");
    oc.prompt("BRAVO2 say something");
    oc.prompt("CHARLIE3 a big answer");
    oc.prompt("DELTA4 after the compaction");
    let sid = oc.session.clone().unwrap();
    // The first session's model requests; then a new session in the same project (below).
    let first = oc.mock.model_requests().len();
    // The new session's SessionStart call ends 3 s after its reply, as one whose work after
    // the reply is slow on a loaded machine: OpenCode hands the session's first message to the
    // plugin without waiting for that call, and its handoff must still go with the message.
    let slow = slow_session_start(&oc.world);
    oc.world
        .env
        .insert("SJOURNAL_BIN".into(), slow.display().to_string());
    oc.session = None;
    oc.prompt("ECHO5 a new session");
    let sid2 = oc.session.clone().unwrap();
    assert_ne!(sid, sid2);
    let w = &oc.world;

    let sessions = w.sessions();
    assert_eq!(sessions.len(), 2, "nothing unattributed: {sessions:?}");
    assert!(sessions.iter().all(|s| s["host"] == "opencode"));
    let events = w.events(&sid);
    let counts = support::kinds(&events);
    for (kind, n) in [
        // created, and a continuation per later run (no session.created for those)
        ("SessionStart", 4),
        ("UserPromptSubmit", 4),
        ("PreToolUse", 4),
        ("PostToolUse", 2),
        // the shell command that exits 2 (OpenCode calls tool.execute.after, a completed call
        // with `metadata.exit`), and the read of a missing file (it never calls it)
        ("PostToolUseFailure", 2),
        ("Stop", 4),
        ("PreCompact", 1),
        // `session.compacted`: OpenCode has no message then to carry the recovery block
        ("PostCompact", 1),
        // `opencode run` never deletes its session: the bridge ends it as the process exits
        ("SessionEnd", 4),
    ] {
        assert_eq!(
            counts.get(kind).copied().unwrap_or(0),
            n,
            "{kind}: {counts:?}"
        );
    }
    let sources: Vec<&str> = events
        .iter()
        .filter(|(k, _)| k == "SessionStart")
        .map(|(_, p)| p["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["startup", "resume", "resume", "resume"]);
    let pre = events.iter().find(|(k, _)| k == "PreCompact").unwrap();
    assert_eq!(pre.1["trigger"], "auto", "the compaction part's own flag");
    let post = events.iter().find(|(k, _)| k == "PostCompact").unwrap();
    assert_eq!(post.1["trigger"], "auto");
    let st = w.state(&sid);
    assert_eq!(st["tools"]["calls"], 4, "{}", st["tools"]);
    assert_eq!(st["tools"]["failures"], 2, "{}", st["tools"]);
    let ls = st["failures"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["detail"]
                .as_str()
                .unwrap_or("")
                .contains("nonexistent-sjournal-dir")
        })
        .unwrap_or_else(|| panic!("the failing shell command: {}", st["failures"]));
    assert_eq!(ls["exit_code"], 2, "{ls}");
    assert_eq!(
        st["tools"]["open"],
        json!({}),
        "every call closed: {}",
        st["tools"]
    );
    assert_eq!(st["compactions"]["count"], 1);
    assert_eq!(st["turns"]["count"], 4);
    w.verify();

    // What sjournal injected: nothing before the compaction (nothing new to say); after it,
    // the recovery block at the next run's SessionStart(resume) (the fallback: there is no
    // SessionStart(compact)), once; the plugin adds it to that run's prompt.
    let all = injections::of(w, &sid);
    let shown = injections::show(&all);
    let at = injections::points(&all);
    assert_eq!(at, [("SessionStart", "resume", "recovery")], "{shown}");
    injections::assert_policy(&all, 1, injections::prompt);
    let block = &all[0].text;
    for (needle, what) in [
        ("recovered after compaction #1 (auto)", "the compaction"),
        // `opencode run` quotes the message it was given.
        (
            "Original request: \"ALPHA1 run echo hello",
            "the first request",
        ),
        (
            "Latest request: \"CHARLIE3 a big answer\"",
            "the latest request",
        ),
        ("read `missing.txt` → failed", "the unresolved failure"),
        (
            "`ls /nonexistent-sjournal-dir` → exit 2",
            "the failing shell command",
        ),
        ("- `notes.txt` (", "the file written, relative"),
    ] {
        assert_has(block, needle, what);
    }

    // What reached the model: nothing of sjournal's before the compaction, nor in the title
    // generator's or the compaction's request. Between the compaction and the next prompt
    // (OpenCode continues the turn) the block rides on the system prompt; from the next
    // prompt on it is a part of that user message, stored, once, and off the system prompt.
    let all_reqs = oc.mock.model_requests();
    let reqs = &all_reqs[..first];
    let ci = reqs
        .iter()
        .position(|r| r.answer.contains(COMPACT_MARKER))
        .expect("a compaction");
    for r in &reqs[..=ci] {
        assert!(!r.body.contains("sjournal: "), "{}: {}", r.answer, r.body);
    }
    let di = reqs.iter().position(|r| r.answer == "DELTA4:0").unwrap();
    // OpenCode sends what a plugin adds to the system prompt as system messages of its own.
    let system = |r: &crate::mock::Logged| -> String {
        r.json["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "system")
            .map(Value::to_string)
            .collect()
    };
    assert!(di > ci + 1, "OpenCode continues the turn after compacting");
    for r in &reqs[ci + 1..di] {
        assert_eq!(
            system(r)
                .matches("recovered after compaction #1 (auto)")
                .count(),
            1,
            "the block on the system prompt until the next prompt: {}",
            r.body
        );
    }
    for r in &reqs[di..] {
        assert_eq!(
            r.body.matches(&json_text(block)).count(),
            1,
            "the block once, with the prompt: {}",
            r.body
        );
        assert!(!system(r).contains("sjournal: "), "{}", r.body);
    }

    // The new session: the first one left failures unresolved, so its SessionStart brings a
    // handoff, which goes with the session's first message to its own first request, once —
    // and not to the title generator, which OpenCode also gives that first message. No title
    // request of either session carries anything of sjournal's.
    let all2 = injections::of(w, &sid2);
    let shown2 = injections::show(&all2);
    let start = all2
        .iter()
        .find(|i| i.kind == "SessionStart" && i.source() == "startup")
        .unwrap_or_else(|| panic!("a handoff at the new session's start: {shown2}"));
    assert_has(&start.text, "missing.txt", "the handoff");
    let reqs2 = &all_reqs[first..];
    let echo = reqs2.iter().find(|r| r.answer == "ECHO5:0").unwrap();
    assert_eq!(
        echo.body.matches(&json_text(&start.text)).count(),
        1,
        "the handoff once, in the session's own request: {}",
        echo.body
    );
    let titles: Vec<_> = all_reqs
        .iter()
        .filter(|r| r.answer.contains(TITLE_MARKER))
        .collect();
    assert!(
        reqs2.iter().any(|r| r.answer.contains(TITLE_MARKER)),
        "the new session's title request"
    );
    for r in titles {
        assert!(
            !r.body.contains("sjournal") && !r.body.contains(&json_text(&start.text)),
            "title: {}",
            r.body
        );
    }

    // Uninstall removes exactly the bridge.
    let said = w.sj(&["uninstall", "opencode"]);
    assert_has(&said, "removed", "uninstall opencode");
    assert!(!plugin.exists());
    assert!(
        plugin.parent().unwrap().exists(),
        "the plugins directory stays"
    );
    w.refresh_fixtures("opencode", "payloads-1.18.33.jsonl", &[&sid]);
}

/// OpenCode's name for the sjournal server's `search` tool, as the first model request offers
/// it (`<server>_<tool>`).
#[cfg(feature = "search")]
const OPENCODE_MCP_SEARCH: &str = "sjournal_search";

#[cfg(feature = "search")]
fn mcp_script(_project: &str) -> Script {
    use crate::mcp_search::MARKER;
    Script {
        rules: vec![
            Rule {
                key: "MCPA1",
                steps: vec![
                    Step::Tool(
                        "bash",
                        json!({"command": format!("echo {MARKER}"), "description": "Echo"}),
                    ),
                    Step::Text("echoed"),
                ],
            },
            Rule {
                key: "MCPB2",
                steps: vec![
                    Step::Tool(OPENCODE_MCP_SEARCH, json!({"query": MARKER})),
                    Step::Text("found it"),
                ],
            },
        ],
        special: vec![(TITLE_MARKER, "Mock title"), (COMPACT_MARKER, SUMMARY)],
        input_tokens: 100,
        big_after: None,
        special_delay_ms: 0,
    }
}

/// The agent asks the journal over MCP: `sjournal install opencode` registers `sjournal mcp`
/// in OpenCode's opencode.json (`mcp`); session A runs a command; a new session B of the same
/// project has the model call the search tool for it. The tool message in B's next model
/// request cites A's record by session, seq and hash, and leaves out another project's session
/// with the word.
#[cfg(feature = "search")]
#[test]
fn opencode_searches_an_earlier_session_over_mcp() {
    use crate::mcp_search;
    let Some(mut oc) = OpenCode::start(mcp_script) else {
        return;
    };
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(oc.world.home.join(".config/opencode/opencode.json")).unwrap(),
    )
    .unwrap();
    assert!(
        config["mcp"]["sjournal"].is_object(),
        "install opencode registers the server: {config}"
    );
    mcp_search::other_project_session(&oc.world);

    oc.prompt("MCPA1 run the echo");
    let a = oc.session.clone().unwrap();
    let first = oc
        .mock
        .model_requests()
        .into_iter()
        .find(|q| q.answer == "MCPA1:0")
        .expect("session A's first model request");
    let offered = mcp_search::offered_tools(&first.json);
    assert!(
        offered.iter().any(|t| t == OPENCODE_MCP_SEARCH),
        "the search tool as OpenCode offers it: {offered:?}"
    );
    let (seq, hash) = mcp_search::marker_record(&oc.world, &a, "PostToolUse");

    oc.session = None;
    oc.prompt("MCPB2 what did we echo in the earlier session?");
    let b = oc.session.clone().unwrap();
    assert_ne!(a, b, "a new session");
    let reqs = oc.mock.model_requests();
    let after = reqs
        .iter()
        .find(|q| q.answer == "MCPB2:1")
        .unwrap_or_else(|| {
            let answers: Vec<&str> = reqs.iter().map(|q| q.answer.as_str()).collect();
            panic!("no model request after the MCP call: {answers:?}")
        });
    mcp_search::assert_cited(&after.body, &a, seq, &hash);
}
