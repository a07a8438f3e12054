//! The Cline CLI 3.0.65 (npm `cline`: a Bun-compiled binary over the Cline SDK), its hooks
//! installed by `sjournal install cline` (one executable per hook in `~/Documents/Cline/Hooks/`),
//! talking to the mock as an OpenAI-compatible provider (`cline auth -p openai-compatible -b`).
//! Each `cline --json PROMPT` is one headless task, auto-approved, in a session of its own
//! (the second spawns a subagent, whose run's hooks land in the same session).
//! The CLI resumes a session (`--id`) only in its interactive UI; headless, its Agent Client
//! Protocol mode (`cline --acp`, JSON-RPC on stdio) loads one (`session/load`) and prompts it.
//! It runs no hook at compaction (its `PreCompact` file maps to no SDK event), and none for a
//! prompt (`UserPromptSubmit` never fired, in either mode), so neither is played here.
//!
//! The pin (tools/hosts/cline/package-lock.json) lists the optional platform binaries other
//! than linux-x64 without integrity: the registry this project reaches serves only that one,
//! and `npm ci` wants an entry for each (it never fetches another platform's).

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

/// A session note, injected once the test opts in.
const NOTE: &str = "NOTE-7: keep notes.txt ASCII";

/// The hook files `sjournal install cline` writes.
use sjournal::install::cline::HOOKS;

pub struct Cline {
    pub world: World,
    pub mock: Mock,
}

impl Cline {
    pub fn start(script: impl FnOnce(&str) -> Script) -> Option<Cline> {
        let dir = support::installed("cline")?;
        let mut world = World::new(dir);
        let mock = Mock::start(script(&world.project.display().to_string()));
        for (k, v) in [
            // In-process sessions: no hub daemon left running after the task.
            ("CLINE_SESSION_BACKEND_MODE", "local"),
            ("CLINE_NO_AUTO_UPDATE", "1"),
        ] {
            world.env.insert(k.into(), v.into());
        }
        let mut auth = world.cmd("cline");
        auth.args([
            "auth",
            "-p",
            "openai-compatible",
            "-k",
            "mock-key",
            "-m",
            "mock-model",
            "-b",
            &format!("{}/v1", mock.base()),
        ]);
        let o = world.run(auth, Duration::from_secs(60));
        assert!(o.status.success(), "cline auth: {}", support::out_text(&o));
        world.patient_hook();
        let said = world.sj(&["install", "cline"]);
        assert_has(&said, "installed", "install cline");
        Some(Cline { world, mock })
    }

    /// One headless task: `cline --json PROMPT`; returns its JSON lines.
    pub fn task(&self, prompt: &str) -> Vec<Value> {
        let mut c = self.world.cmd("cline");
        c.args(["--json", prompt]);
        let o = self.world.run(c, Duration::from_secs(180));
        assert!(
            o.status.success(),
            "cline {prompt:?}: {}",
            support::out_text(&o)
        );
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// `cline --acp`: loads `session` and sends it `prompt`, answering any permission request
/// with its first "allow" option. The provider comes from the environment (ACP knows only
/// Cline's own sign-ins; `CLINE_PROVIDER` picks the one `cline auth` configured).
fn acp_resume(cl: &Cline, session: &str, prompt: &str) {
    let w = &cl.world;
    let mut c = w.cmd("cline");
    c.arg("--acp")
        .env("CLINE_PROVIDER", "openai-compatible")
        .env("CLINE_API_KEY", "mock-key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = mpsc::channel::<Value>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let project = w.project.display().to_string();
    let calls = [
        (
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        ),
        (
            "session/load",
            json!({"sessionId": session, "cwd": project, "mcpServers": []}),
        ),
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}),
        ),
    ];
    for (id, (method, params)) in calls.into_iter().enumerate() {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        loop {
            let Ok(v) = rx.recv_timeout(Duration::from_secs(120)) else {
                let _ = child.kill();
                panic!("cline --acp: no answer to {method}");
            };
            if v["id"] == id && v.get("method").is_none() {
                assert!(v.get("error").is_none(), "{method}: {v}");
                break;
            }
            if v.get("method").is_some() && v.get("id").is_some() {
                let allow = v["params"]["options"]
                    .as_array()
                    .and_then(|o| {
                        o.iter()
                            .find(|o| o["kind"].as_str().is_some_and(|k| k.starts_with("allow")))
                    })
                    .map(|o| o["optionId"].clone())
                    .unwrap_or(Value::Null);
                let reply = json!({"jsonrpc": "2.0", "id": v["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": allow}}});
                writeln!(stdin, "{reply}").unwrap();
                stdin.flush().unwrap();
            }
        }
    }
    drop(stdin);
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("cline --acp did not exit after its stdin closed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn script(project: &str) -> Script {
    Script {
        rules: vec![
            Rule {
                key: "ALPHA1",
                steps: vec![
                    Step::Tool("run_commands", json!({"commands": ["echo hello"]})),
                    Step::Tool("run_commands", json!({"commands": ["exit 3"]})),
                    Step::Tool(
                        "read_files",
                        json!({"files": [{"path": format!("{project}/missing.txt")}]}),
                    ),
                    Step::Tool(
                        "editor",
                        json!({"path": format!("{project}/notes.txt"), "new_text": "hello\n"}),
                    ),
                ],
            },
            Rule {
                key: "BRAVO2",
                steps: vec![Step::Tool(
                    "spawn_agent",
                    json!({"systemPrompt": "You list files.", "task": "DELTA4 list the files"}),
                )],
            },
            Rule {
                key: "DELTA4",
                steps: vec![Step::Text("delta answered")],
            },
            Rule {
                key: "CHARLIE3",
                steps: vec![Step::Tool(
                    "run_commands",
                    json!({"commands": ["echo charlie"]}),
                )],
            },
        ],
        special: Vec::new(),
        input_tokens: 100,
        big_after: None,
        special_delay_ms: 0,
    }
}

/// The session id of a task: the `sessionId` Cline lists in its history for the prompt.
fn session_of(w: &World, prompt: &str) -> String {
    let mut c = w.cmd("cline");
    c.args(["history", "--json"]);
    let o = w.run(c, Duration::from_secs(60));
    assert!(
        o.status.success(),
        "cline history: {}",
        support::out_text(&o)
    );
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["prompt"] == prompt)
        .and_then(|s| s["sessionId"].as_str())
        .unwrap_or_else(|| panic!("no session for {prompt:?} in {list}"))
        .to_owned()
}

/// Waits (at most a minute) until the session has `n` events: Cline runs its run-start and
/// end hooks detached, so the last of them may still be journaling when `cline` exits.
fn wait_for_events(w: &World, session: &str, n: usize) -> Vec<(String, Value)> {
    let start = std::time::Instant::now();
    loop {
        let known = w.sessions().iter().any(|s| s["session_id"] == session);
        let events = if known { w.events(session) } else { Vec::new() };
        if events.len() >= n || start.elapsed() > Duration::from_secs(60) {
            return events;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn cline_tasks_with_a_failing_command_a_file_write_and_an_acp_resume() {
    let Some(cl) = Cline::start(script) else {
        return;
    };
    let w = &cl.world;
    let hooks = w.home.join("Documents/Cline/Hooks");
    for h in HOOKS {
        let p = hooks.join(h);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with("#!/bin/sh\n# sjournal bridge"),
            "{h}: {text}"
        );
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
    let again = w.sj(&["install", "cline"]);
    assert_has(
        &again,
        "already installed",
        "a second install changes nothing",
    );

    let alpha = "ALPHA1 run echo hello and exit 3, read missing.txt, write notes.txt";
    let out = cl.task(alpha);
    assert!(
        out.iter()
            .any(|v| v["type"] == "run_result" && v["finishReason"] == "completed"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(w.project.join("notes.txt")).unwrap(),
        "hello\n"
    );
    let bravo = "BRAVO2 say something";
    cl.task(bravo);
    let (s1, s2) = (session_of(w, alpha), session_of(w, bravo));

    // The first task again, through ACP: the same session, a new conversation (`taskId`).
    // Before it, a session note, and PostToolUse (the SDK's `tool_result`) opted in for
    // context: the one blocking hook whose reply reaches the model after the tool's result.
    w.sj(&["context", "set", "--session", &s1, "--key", "rule", NOTE]);
    let cfg = w.root().join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{text}context_events = [\"tool_result\"]\n")).unwrap();
    acp_resume(&cl, &s1, "CHARLIE3 after the resume");

    let events = wait_for_events(w, &s1, 14);
    let bravo_events = wait_for_events(w, &s2, 6);
    let sessions = w.sessions();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert!(
        sessions.iter().all(|s| s["host"] == "cline"),
        "{sessions:?}"
    );
    // The second task spawned a subagent: its run's start and end (an `agent_id` with a
    // parent) in the same session, after the spawn_agent call and before the task's end. The
    // CLI does not wait for the subagent's hooks nor the spawn's result before going on, so
    // the subagent's start, its end and the spawn's result are hook processes started a
    // moment apart: on a loaded machine the journal has them in any order (seen: the
    // subagent's start after its end), each kept once.
    let names: Vec<(&str, bool)> = bravo_events
        .iter()
        .map(|(k, p)| (k.as_str(), p["parent_agent_id"].is_string()))
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert_eq!(
        (&names[..2], names[5]),
        (
            &[("agent_start", false), ("tool_call", false)][..],
            ("agent_end", false)
        ),
        "{names:?}"
    );
    let mut middle = names[2..5].to_vec();
    middle.sort();
    assert_eq!(
        middle,
        [
            ("agent_end", true),
            ("agent_start", true),
            ("tool_result", false)
        ],
        "{names:?}"
    );
    let st2 = w.state(&s2);
    assert_eq!(st2["identity"]["starts"], 1, "{}", st2["identity"]);
    assert_eq!(
        (&st2["subagents"]["started"], &st2["subagents"]["stopped"]),
        (&json!(1), &json!(1)),
        "{}",
        st2["subagents"]
    );
    assert_eq!(st2["tools"]["by_tool"]["spawn_agent"]["calls"], 1);
    assert_eq!(st2["tools"]["open_dropped"], 0, "{}", st2["tools"]);
    assert_eq!(st2["ended"]["reason"], "complete", "{}", st2["ended"]);
    let counts = support::kinds(&events);
    for (kind, n) in [
        ("agent_start", 2),
        ("tool_call", 5),
        ("tool_result", 5),
        ("agent_end", 2),
    ] {
        assert_eq!(
            counts.get(kind).copied().unwrap_or(0),
            n,
            "{kind}: {counts:?}"
        );
    }
    assert_eq!(counts.len(), 4, "{counts:?}");
    // Every payload names the session by `sessionContext.rootSessionId`, the id Cline lists.
    assert!(events
        .iter()
        .all(|(_, p)| p["sessionContext"]["rootSessionId"] == s1.as_str()));
    // ... while `taskId` is the conversation: the resumed one has another. (ACP's load runs
    // `agent_start`, not `agent_resume`, which only `--id` sets.)
    let task_ids: std::collections::BTreeSet<&str> = events
        .iter()
        .filter_map(|(_, p)| p["taskId"].as_str())
        .collect();
    assert_eq!(task_ids.len(), 2, "{task_ids:?}");
    let st = w.state(&s1);
    // `exit 3` and the missing file: items of `tool_result.output` with `success: false`
    // (Cline's `postToolUse.success` is true for both).
    assert_eq!(st["tools"]["failures"], 2, "{}", st["tools"]);
    assert_eq!(
        st["tools"]["by_tool"]["run_commands"]["failures"], 1,
        "{}",
        st["tools"]
    );
    let notes = format!("{}/notes.txt", w.project.display());
    let f = &st["files"]["by_path"][&notes];
    assert_eq!(
        (&f["writes"], &f["created"]),
        (&json!(1), &json!(true)),
        "{f}"
    );
    assert_eq!(st["ended"]["reason"], "complete", "{}", st["ended"]);
    assert_eq!(st["identity"]["starts"], 2, "{}", st["identity"]);
    w.verify();

    // What reached the model. The CLI waits for no hook but PreToolUse and PostToolUse.
    // By default sjournal injects nothing at them: no `sjournal.injected` record and no
    // `<hook_context>` (which Cline adds after a tool's result for a hook's context) in the
    // two tasks. Opted in, the resumed session's one tool result carried the note, once, as
    // Cline's `<hook_context source="PostToolUse">`, in the next request.
    assert!(injections::of(w, &s2).is_empty());
    let all = injections::of(w, &s1);
    let shown = injections::show(&all);
    assert_eq!(
        injections::points(&all),
        [("tool_result", "", "notes")],
        "{shown}"
    );
    assert_has(&all[0].text, NOTE, "the note");
    let reqs = cl.mock.model_requests();
    let answers: Vec<&str> = reqs.iter().map(|r| r.answer.as_str()).collect();
    assert_eq!(
        answers,
        [
            "ALPHA1:0",
            "ALPHA1:1",
            "ALPHA1:2",
            "ALPHA1:3",
            "ALPHA1:4",
            "BRAVO2:0",
            "DELTA4:0",
            "BRAVO2:1",
            "CHARLIE3:0",
            "CHARLIE3:1"
        ]
    );
    assert_has(
        &reqs[8].body,
        "ALPHA1 run echo hello",
        "the resumed conversation",
    );
    for r in &reqs[..9] {
        assert!(
            !r.body.contains("<hook_context"),
            "{}: {}",
            r.answer,
            r.body
        );
        assert!(!r.body.contains("NOTE-7"), "{}: {}", r.answer, r.body);
    }
    let last = &reqs[9].body;
    assert_eq!(last.matches(&json_text(NOTE)).count(), 1, "{last}");
    assert_eq!(last.matches("<hook_context").count(), 1, "{last}");
    assert_has(
        last,
        &json_text("<hook_context source=\"PostToolUse\""),
        "Cline's frame",
    );
    let after_exit = reqs.iter().find(|r| r.answer == "ALPHA1:2").unwrap();
    assert_has(
        &after_exit.body,
        &json_text("Command exited with code 3"),
        "the failure, as the model saw it",
    );

    let said = w.sj(&["uninstall", "cline"]);
    assert_has(&said, "removed", "uninstall cline");
    assert!(HOOKS.iter().all(|h| !hooks.join(h).exists()));
    w.refresh_fixtures("cline", "payloads-3.0.65.jsonl", &[&s1, &s2]);
}
