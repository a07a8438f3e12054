//! The Cline CLI 3.0.65 (npm `cline`: a Bun-compiled binary over the Cline SDK), its hooks
//! installed by `sjournal install cline` (one executable per hook in `~/Documents/Cline/Hooks/`),
//! talking to the mock as an OpenAI-compatible provider (`cline auth -p openai-compatible -b`).
//! Each `cline --json PROMPT` is one headless task, auto-approved, in a session of its own:
//! the CLI resumes a session (`--id`) only in its interactive UI, and runs no hook at
//! compaction (its `PreCompact` file maps to no SDK event), so neither is played here.

use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

/// The hook files `sjournal install cline` writes.
const HOOKS: [&str; 10] = [
    "TaskStart",
    "TaskResume",
    "TaskCancel",
    "TaskComplete",
    "TaskError",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "SessionShutdown",
];

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
                steps: vec![Step::Text("bravo answered")],
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
fn cline_tasks_with_tools_a_failing_command_and_a_file_write() {
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
            0o755
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

    let events = wait_for_events(w, &s1, 10);
    let bravo_events = wait_for_events(w, &s2, 2);
    let sessions = w.sessions();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert!(
        sessions.iter().all(|s| s["host"] == "cline"),
        "{sessions:?}"
    );
    let names: Vec<&str> = bravo_events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["agent_start", "agent_end"]);
    let counts = support::kinds(&events);
    for (kind, n) in [
        ("agent_start", 1),
        ("tool_call", 4),
        ("tool_result", 4),
        ("agent_end", 1),
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
    let st2 = w.state(&s2);
    assert_eq!(st2["tools"]["calls"], 0, "{}", st2["tools"]);
    w.verify();

    // What reached the model. The CLI waits for no hook but PreToolUse and PostToolUse, and
    // sjournal's policy has nothing for a tool event by default: nothing of sjournal's is
    // injected (no `sjournal.injected` record, no `<hook_context>` Cline would have added
    // after a tool's result), while the tools' own results, the failure included, are there.
    for s in [&s1, &s2] {
        let all = injections::of(w, s);
        assert!(all.is_empty(), "{}", injections::show(&all));
    }
    let reqs = cl.mock.model_requests();
    assert_eq!(
        reqs.len(),
        6,
        "four tool steps and `done`, and BRAVO2's answer"
    );
    for r in &reqs {
        assert!(
            !r.body.contains("<hook_context"),
            "{}: {}",
            r.answer,
            r.body
        );
        assert!(!r.body.contains("sjournal: "), "{}: {}", r.answer, r.body);
    }
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
