//! Codex CLI 0.171.0 (`codex exec`), hooks installed by `sjournal install codex`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

pub const COMPACT_MARKER: &str = "CHECKPOINT";
pub const SUMMARY: &str = "MOCK-SUMMARY: codex compacted.";

pub struct Codex {
    pub world: World,
    pub mock: Mock,
    pub session: Option<String>,
}

impl Codex {
    pub fn start(script: impl FnOnce(&str) -> Script) -> Option<Codex> {
        let dir = support::installed("codex")?;
        let mut world = World::new(dir);
        let mock = Mock::start(script(&world.project.display().to_string()));
        let codex_home = world.home.join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                r#"model = "gpt-mock"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
model_auto_compact_token_limit = 50000
[model_providers.mock]
name = "mock"
base_url = "{}/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0
[projects."{}"]
trust_level = "trusted"
"#,
                mock.base(),
                world.project.display()
            ),
        )
        .unwrap();
        world.env.insert("OPENAI_API_KEY".into(), "sk-mock".into());
        world
            .env
            .insert("CODEX_HOME".into(), codex_home.display().to_string());
        world.patient_hook();
        let said = world.sj(&["install", "codex"]);
        assert_has(&said, "installed", "install codex");
        assert_has(&said, "/hooks", "install codex says how hooks get trusted");
        Some(Codex {
            world,
            mock,
            session: None,
        })
    }

    /// One `codex exec` (resuming the session after the first), running the hooks whether
    /// trusted or not; returns the JSON events.
    pub fn prompt(&mut self, prompt: &str) -> Vec<Value> {
        self.prompt_trusting(prompt, true)
    }

    /// One `codex exec`; with `bypass` false, Codex runs only the hooks the user trusted.
    pub fn prompt_trusting(&mut self, prompt: &str, bypass: bool) -> Vec<Value> {
        let mut c = self.world.cmd("codex");
        c.arg("exec");
        if let Some(s) = &self.session {
            c.args(["resume", s]);
        }
        c.arg("--skip-git-repo-check");
        if bypass {
            c.arg("--dangerously-bypass-hook-trust");
        }
        c.args(["--json", prompt]);
        let o = self.world.run(c, Duration::from_secs(180));
        let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert!(
            o.status.success(),
            "codex exec {prompt:?}: {}",
            support::out_text(&o)
        );
        if let Some(id) = events.iter().find_map(|e| e["thread_id"].as_str()) {
            self.session.get_or_insert_with(|| id.to_owned());
        }
        events
    }
}

/// Trusts every hook Codex lists as its `/hooks` screen does: Codex's app server lists the
/// hooks with their current hashes (`hooks/list`), and each is recorded as trusted in the
/// user's config.toml (`config/batchWrite` of `hooks.state`). Returns how many it trusted.
fn trust_hooks(cx: &Codex) -> usize {
    use std::io::{BufRead, BufReader, Write};
    let mut c = cx.world.cmd("codex");
    c.arg("app-server")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = tx.send(v);
            }
        }
    });
    let call = |stdin: &mut std::process::ChildStdin, id: u64, method: &str, params: Value| {
        let msg = json!({"id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        loop {
            let v = rx
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("codex app-server, {method}: {e}"));
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    };
    call(
        &mut stdin,
        1,
        "initialize",
        json!({"clientInfo": {"name": "sjournal-test", "version": "1"}}),
    );
    writeln!(stdin, "{}", json!({"method": "initialized"})).unwrap();
    let listed = call(
        &mut stdin,
        2,
        "hooks/list",
        json!({"cwds": [cx.world.project.display().to_string()]}),
    );
    let hooks = listed["data"][0]["hooks"].as_array().unwrap().clone();
    let mut state = serde_json::Map::new();
    for h in &hooks {
        state.insert(
            h["key"].as_str().unwrap().to_owned(),
            json!({"trusted_hash": h["currentHash"]}),
        );
    }
    call(
        &mut stdin,
        3,
        "config/batchWrite",
        json!({"edits": [{"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}]}),
    );
    let listed = call(
        &mut stdin,
        4,
        "hooks/list",
        json!({"cwds": [cx.world.project.display().to_string()]}),
    );
    for h in listed["data"][0]["hooks"].as_array().unwrap() {
        assert_eq!(h["trustStatus"], "trusted", "{h}");
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    hooks.len()
}

/// `sjournal doctor --json` in the test's world: (exit code, report).
fn doctor(w: &World) -> (i32, Value) {
    let mut c = w.cmd(support::bin());
    c.args(["doctor", "--json"]);
    let o = w.run(c, Duration::from_secs(120));
    let report = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {}", support::out_text(&o)));
    (o.status.code().unwrap_or(-1), report)
}

/// The check of `doctor`'s report named so for Codex.
fn codex_check(report: &Value, check: &str) -> Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == check && c["host"] == "codex")
        .unwrap_or_else(|| panic!("no {check} check for codex: {report}"))
        .clone()
}

/// Codex skips hooks nobody trusted, without a word: `sjournal doctor` says so (and that
/// Codex has delivered nothing), and with what to do; once the hooks are trusted as Codex's
/// `/hooks` screen trusts them, Codex runs them (no bypass flag), and doctor finds nothing.
#[test]
fn codex_doctor_before_and_after_trusting_the_hooks() {
    let Some(mut cx) = Codex::start(script) else {
        return;
    };
    // Untrusted: the session runs, the hooks do not.
    cx.prompt_trusting("CHARLIE3 before trusting", false);
    assert!(cx.world.sessions().is_empty(), "no hook ran");
    let (code, report) = doctor(&cx.world);
    assert_eq!(code, 1, "{report}");
    let trust = codex_check(&report, "trust");
    assert_eq!(trust["status"], "fail", "{trust}");
    assert_has(
        trust["message"].as_str().unwrap(),
        "10 not trusted: Codex skips them",
        "the finding",
    );
    assert_has(trust["fix"].as_str().unwrap(), "open /hooks", "the fix");
    assert_eq!(codex_check(&report, "activity")["status"], "warn");

    // Trusted as the user would: the finding goes, and Codex runs the hooks by itself.
    assert_eq!(trust_hooks(&cx), 10);
    let (_, report) = doctor(&cx.world);
    let trust = codex_check(&report, "trust");
    assert_eq!(trust["status"], "ok", "{trust}");
    cx.session = None;
    cx.prompt_trusting("DELTA4 after trusting", false);
    let sessions = cx.world.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["host"], "codex");
    let (code, report) = doctor(&cx.world);
    assert_eq!(code, 0, "all is well: {report}");
    assert_eq!(report["ok"], true);
    assert_eq!(codex_check(&report, "activity")["status"], "ok");
}

/// The agent id in a spawn_agent result (`"agent_id":"…"`, JSON-escaped in the request).
fn spawned_agent(body: &str) -> Value {
    let key = "agent_id\\\":\\\"";
    let id = body
        .split(key)
        .nth(1)
        .and_then(|rest| rest.split('\\').next())
        .unwrap_or("");
    json!({"targets": [id], "timeout_ms": 20000})
}

fn script(_project: &str) -> Script {
    let sh = |cmd: &str| Step::Tool("exec_command", json!({"cmd": cmd}));
    Script {
        rules: vec![
            Rule {
                key: "ALPHA1",
                steps: vec![
                    sh("echo hello"),
                    sh("ls /nonexistent-sjournal-dir"),
                    sh("printf 'hello\\n' > notes.txt"),
                ],
            },
            Rule {
                key: "BRAVO2",
                steps: vec![
                    Step::Tool(
                        "multi_agent_v1/spawn_agent",
                        json!({"message": "SUBTASK9 echo from the subagent"}),
                    ),
                    Step::Dynamic("multi_agent_v1/wait_agent", spawned_agent),
                ],
            },
            Rule {
                key: "SUBTASK9",
                steps: vec![sh("echo sub"), Step::Text("sub done")],
            },
            Rule {
                key: "CHARLIE3",
                steps: vec![Step::Text("charlie answered")],
            },
            Rule {
                key: "DELTA4",
                steps: vec![Step::Text("delta answered")],
            },
        ],
        special: vec![(COMPACT_MARKER, SUMMARY)],
        input_tokens: 100,
        big_after: Some(("CHARLIE3", 60_000)),
        special_delay_ms: 0,
    }
}

#[test]
fn codex_session_with_resume_compaction_and_subagent() {
    let Some(mut cx) = Codex::start(script) else {
        return;
    };
    cx.prompt("ALPHA1 run echo hello, list a missing dir, write notes.txt");
    cx.prompt("BRAVO2 spawn a subagent");
    cx.prompt("CHARLIE3 a big answer");
    cx.prompt("DELTA4 after the compaction");
    let sid = cx.session.clone().unwrap();
    let w = &cx.world;

    // One session (the subagent's hooks carry the parent's session id), Codex's throughout:
    // SessionStart and SessionEnd have no turn_id and used to be filed as Claude Code's.
    let sessions = w.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["host"], "codex");
    let st = w.state(&sid);
    let by_host = &st["counts"]["by_host"];
    assert_eq!(
        by_host.as_object().unwrap().len(),
        1,
        "only codex: {by_host}"
    );
    assert!(by_host["codex"].as_u64().unwrap() > 20, "{by_host}");
    let counts = support::kinds(&w.events(&sid));
    for (kind, n) in [
        ("SessionStart", 5),     // startup, resume ×3, compact
        ("UserPromptSubmit", 5), // four prompts and the subagent's task
        ("Stop", 4),
        ("SubagentStart", 1),
        ("SubagentStop", 1),
        ("PreCompact", 1),
        ("PostCompact", 1),
        ("SessionEnd", 4), // one per `codex exec`
    ] {
        assert_eq!(
            counts.get(kind).copied().unwrap_or(0),
            n,
            "{kind}: {counts:?}"
        );
    }
    // The subagent's prompt is not a turn of the main session, nor its task.
    assert_eq!(st["turns"]["count"], 4, "{}", st["turns"]);
    let prompts = st["prompts"].to_string();
    assert!(!prompts.contains("SUBTASK9"), "{prompts}");
    assert_eq!(st["subagents"]["started"], 1, "{}", st["subagents"]);
    // wait_agent under its own name, not the namespaced wire name.
    let tools = &st["tools"]["by_tool"];
    assert!(tools.get("wait_agent").is_some(), "{tools}");
    assert!(tools.get("multi_agent_v1wait_agent").is_none(), "{tools}");
    assert_eq!(
        st["tools"]["calls"], 6,
        "3 shells, spawn, wait, the subagent's shell: {}",
        st["tools"]
    );
    assert_eq!(st["compactions"]["count"], 1, "{}", st["compactions"]);
    w.verify();

    // What sjournal injected. Codex compacts at the start of the next `codex exec`:
    // PreCompact, PostCompact, then SessionStart(resume), which takes the fallback (the
    // recovery block, once), then SessionStart(compact), which repeats nothing. Nothing at the
    // prompts, the subagent's included.
    let all = injections::of(w, &sid);
    let shown = injections::show(&all);
    let at = injections::points(&all);
    assert_eq!(at, [("SessionStart", "resume", "recovery")], "{shown}");
    injections::assert_policy(&all, 1, injections::prompt);
    let block = &all[0].text;
    for (needle, what) in [
        (
            "Original request: ALPHA1 run echo hello",
            "the first request",
        ),
        (
            "Latest request: CHARLIE3 a big answer",
            "the latest request",
        ),
        ("\"charlie answered\"", "where the last turn left off"),
        ("sjournal show --session", "the pointer"),
    ] {
        assert_has(block, needle, what);
    }
    assert!(!block.contains("SUBTASK9"), "the subagent's task: {block}");
    let events = w.events(&sid);
    let order: Vec<String> = events
        .iter()
        .skip_while(|(k, _)| k != "PreCompact")
        .take(5)
        .map(|(k, p)| {
            format!(
                "{k}{}",
                p["source"]
                    .as_str()
                    .map(|s| format!("({s})"))
                    .unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            "PreCompact",
            "PostCompact",
            "SessionStart(resume)",
            "SessionStart(compact)",
            "UserPromptSubmit"
        ]
    );

    // What reached the model, as developer messages: the block in the first request after
    // the compaction request (DELTA4's), once; nothing of sjournal's before.
    let reqs = cx.mock.model_requests();
    let ci = injections::quiet_until_compaction(&reqs);
    let after = &reqs[ci + 1];
    assert_eq!(after.answer, "DELTA4:0");
    assert_eq!(
        after.body.matches(&json_text(block)).count(),
        1,
        "the block once after the compaction: {}",
        after.body
    );

    w.refresh_fixtures("codex", "payloads-0.171.0.jsonl", &[&sid]);
}

/// Codex's name for the sjournal server's `search` tool, as the first model request offers it:
/// `search` in the Responses namespace `mcp__sjournal`.
#[cfg(feature = "search")]
const CODEX_MCP_SEARCH: &str = "mcp__sjournal/search";

#[cfg(feature = "search")]
fn mcp_script(_project: &str) -> Script {
    use crate::mcp_search::MARKER;
    Script {
        rules: vec![
            Rule {
                key: "MCPA1",
                steps: vec![
                    Step::Tool("exec_command", json!({"cmd": format!("echo {MARKER}")})),
                    Step::Text("echoed"),
                ],
            },
            Rule {
                key: "MCPB2",
                steps: vec![
                    Step::Tool(CODEX_MCP_SEARCH, json!({"query": MARKER})),
                    Step::Text("found it"),
                ],
            },
        ],
        special: vec![(COMPACT_MARKER, SUMMARY)],
        input_tokens: 100,
        big_after: None,
        special_delay_ms: 0,
    }
}

/// The agent asks the journal over MCP: `sjournal install codex` registers `sjournal mcp` in
/// Codex's config.toml; session A runs a command; a new session B of the same project has the
/// model call the search tool for it. The tool's output in B's next model request cites A's
/// record by session, seq and hash, and leaves out another project's session with the word.
#[cfg(feature = "search")]
#[test]
fn codex_searches_an_earlier_session_over_mcp() {
    use crate::mcp_search;
    let Some(mut cx) = Codex::start(mcp_script) else {
        return;
    };
    let config =
        std::fs::read_to_string(cx.world.home.join(".codex/config.toml")).unwrap_or_default();
    assert_has(
        &config,
        "[mcp_servers.sjournal]",
        "install codex registers the server",
    );
    mcp_search::other_project_session(&cx.world);

    cx.prompt("MCPA1 run the echo");
    let a = cx.session.clone().unwrap();
    let offered = mcp_search::offered_tools(&cx.mock.model_requests()[0].json);
    assert!(
        offered.iter().any(|t| t == CODEX_MCP_SEARCH),
        "the search tool as Codex offers it: {offered:?}"
    );
    let (seq, hash) = mcp_search::marker_record(&cx.world, &a, "PostToolUse");

    cx.session = None;
    cx.prompt("MCPB2 what did we echo in the earlier session?");
    assert_ne!(cx.session.as_deref(), Some(a.as_str()), "a new session");
    let reqs = cx.mock.model_requests();
    let after = reqs
        .iter()
        .find(|q| q.answer == "MCPB2:1")
        .unwrap_or_else(|| {
            let answers: Vec<&str> = reqs.iter().map(|q| q.answer.as_str()).collect();
            panic!("no model request after the MCP call: {answers:?}")
        });
    mcp_search::assert_cited(&after.body, &a, seq, &hash);
}
