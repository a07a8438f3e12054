//! Gemini CLI 0.61.0 (`gemini --yolo -p`), hooks installed by `sjournal install gemini`.
//!
//! Gemini CLI has no SessionStart after compressing, and says nothing when it compresses on
//! its own (PreCompress(auto) fires before every request): the fold sees the automatic
//! compression in the rewritten history of the next request (BeforeModel), and the recovery
//! block arrives by the fallback, with the next prompt (BeforeAgent), once.

use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

pub const COMPRESS_MARKER: &str = "state_snapshot";
/// The mock's compression summary, about as long as a real one: Gemini CLI keeps, as they
/// were, the turns after the first 70% of the history's characters, so with a summary much
/// longer than a turn it keeps the last turn (and the recovery block it carried) through the
/// next compression, as runs of the real Gemini CLI showed; with a one-line summary it would
/// keep none.
pub fn summary() -> &'static str {
    static S: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        format!(
            "<state_snapshot>MOCK-SUMMARY: gemini compressed. {}</state_snapshot>",
            "The session ran the scripted shell steps and answered each prompt. ".repeat(80)
        )
    })
}

pub struct Gemini {
    pub world: World,
    pub mock: Mock,
    pub session: String,
    started: bool,
}

impl Gemini {
    pub fn start(script: impl FnOnce(&str) -> Script) -> Option<Gemini> {
        let dir = support::installed("gemini")?;
        let mut world = World::new(dir);
        let mock = Mock::start(script(&world.project.display().to_string()));
        let gdir = world.home.join(".gemini");
        std::fs::create_dir_all(&gdir).unwrap();
        std::fs::write(
            gdir.join("settings.json"),
            json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "model": {"name": "gemini-2.5-flash"},
                "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false}
            })
            .to_string(),
        )
        .unwrap();
        std::fs::write(
            gdir.join("trustedFolders.json"),
            json!({ world.project.display().to_string(): "TRUST_FOLDER" }).to_string(),
        )
        .unwrap();
        for (k, v) in [
            ("GOOGLE_GEMINI_BASE_URL", mock.base()),
            ("GEMINI_API_KEY", "mock-key".into()),
            ("GEMINI_CLI_NO_RELAUNCH", "true".into()),
        ] {
            world.env.insert(k.into(), v);
        }
        world.patient_hook();
        let said = world.sj(&["install", "gemini"]);
        assert_has(&said, "installed", "install gemini");
        support::assert_runs_the_hook_binary(&world.home.join(".gemini/settings.json"));
        assert_has(
            &said,
            "trusted folder",
            "install gemini says the folder must be trusted",
        );
        Some(Gemini {
            world,
            mock,
            session: "0b7b7a52-7e1c-4b55-9a3f-2f7d3c1e5a01".into(),
            started: false,
        })
    }

    /// One `gemini --yolo -p PROMPT` in the session (`--session-id` first, then `--resume`).
    pub fn prompt(&mut self, prompt: &str) -> String {
        let mut c = self.world.cmd("gemini");
        c.args(["--yolo", "-p", prompt]);
        let flag = if self.started {
            "--resume"
        } else {
            "--session-id"
        };
        c.args([flag, &self.session]);
        self.started = true;
        let o = self.world.run(c, Duration::from_secs(180));
        assert!(
            o.status.success(),
            "gemini -p {prompt:?}: {}",
            support::out_text(&o)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

fn script(project: &str) -> Script {
    let _ = project;
    Script {
        rules: vec![
            Rule {
                key: "ALPHA1",
                steps: vec![
                    Step::Tool(
                        "run_shell_command",
                        json!({"command": "echo hello", "description": "hello"}),
                    ),
                    Step::Tool(
                        "run_shell_command",
                        json!({"command": "ls /nonexistent-sjournal-dir", "description": "fail"}),
                    ),
                    Step::Tool(
                        "write_file",
                        json!({"file_path": format!("{project}/notes.txt"), "content": "hello\n"}),
                    ),
                ],
            },
            Rule {
                key: "BRAVO2",
                steps: vec![Step::Text("bravo answered")],
            },
            // Reports a context past Gemini CLI's compression threshold (half of the model's
            // 1M tokens): the request after its tool call compresses the history first.
            Rule {
                key: "ECHO5",
                steps: vec![Step::Tool(
                    "run_shell_command",
                    json!({"command": "echo big", "description": "big"}),
                )],
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
                key: "FOXTROT6",
                steps: vec![Step::Text("foxtrot answered")],
            },
        ],
        special: vec![(COMPRESS_MARKER, summary())],
        input_tokens: 100,
        big_after: Some(("ECHO5", 700_000)),
        special_delay_ms: 0,
    }
}

#[test]
fn gemini_cli_session_with_resume_and_compression() {
    let Some(mut g) = Gemini::start(script) else {
        return;
    };
    g.prompt("ALPHA1 run echo hello, list a missing dir, write notes.txt");
    g.prompt("BRAVO2 say something");
    g.prompt("ECHO5 a big one");
    g.prompt("CHARLIE3 carry on");
    g.prompt("/compress");
    g.prompt("DELTA4 after the compression");
    g.prompt("FOXTROT6 and after that");
    let sid = g.session.clone();
    let w = &g.world;

    let sessions = w.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["host"], "gemini");
    let st = w.state(&sid);
    // The model is only in BeforeModel's request; it used to be recorded as null.
    assert_eq!(
        st["identity"]["model"], "gemini-2.5-flash",
        "{}",
        st["identity"]
    );
    let events = w.events(&sid);
    let counts = support::kinds(&events);
    // Six prompts and /compress (which fires BeforeAgent too).
    assert_eq!(counts.get("BeforeAgent"), Some(&7), "{counts:?}");
    assert!(
        counts.get("BeforeModel").copied().unwrap_or(0) >= 8,
        "{counts:?}"
    );
    // PreCompress(auto) fires before every model request; the compactions are the automatic
    // one (seen in the history the next request carried) and the manual /compress.
    let auto = events
        .iter()
        .filter(|(k, p)| k == "PreCompress" && p["trigger"] == "auto")
        .count();
    assert!(auto >= 8, "PreCompress(auto) before each request: {auto}");
    assert_eq!(st["compactions"]["count"], 2, "{}", st["compactions"]);
    assert_eq!(st["compactions"]["last"]["trigger"], "manual");
    assert_eq!(st["turns"]["count"], 6, "{}", st["turns"]);
    // The prompts are the user's own, never sjournal's <hook_context> quoted back.
    let prompts: Vec<&str> = st["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts,
        [
            "ALPHA1 run echo hello, list a missing dir, write notes.txt",
            "BRAVO2 say something",
            "ECHO5 a big one",
            "CHARLIE3 carry on",
            "DELTA4 after the compression",
            "FOXTROT6 and after that"
        ]
    );
    // `sjournal show` lists each prompt once, by the turn the state counts (AfterAgent
    // carries the prompt again; it used to be listed twice, with turn numbers past the count).
    let listed: Value =
        serde_json::from_str(&w.sj(&["show", "--session", &sid, "prompts", "--json"])).unwrap();
    let listed: Vec<(u64, &str)> = listed["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["turn"].as_u64().unwrap(), p["text"].as_str().unwrap()))
        .collect();
    let numbered: Vec<(u64, &str)> = (1..).zip(prompts.iter().copied()).collect();
    assert_eq!(listed, numbered);
    // The failing shell command is only visible as "Exit Code: 2" in the tool output.
    assert_eq!(st["tools"]["calls"], 4, "{}", st["tools"]);
    assert_eq!(st["tools"]["failures"], 1, "{}", st["tools"]);
    let project = w.project.display().to_string();
    assert!(
        st["files"]["by_path"]
            .get(format!("{project}/notes.txt"))
            .is_some(),
        "{}",
        st["files"]
    );
    w.verify();

    // What sjournal injected: nothing until a compaction; then the recovery block with the
    // next prompt (the fallback), once per compaction, once the host has shown the history it
    // kept (`gemini -p /compress` sends a request after compressing); never its own
    // <hook_context> nested.
    let all = injections::of(w, &sid);
    let shown = injections::show(&all);
    let at: Vec<(&str, &str, u64)> = all
        .iter()
        .map(|i| (i.kind.as_str(), i.mode.as_str(), i.compactions))
        .collect();
    assert_eq!(
        at,
        [
            ("BeforeAgent", "recovery", 1),
            ("BeforeAgent", "recovery", 2)
        ],
        "{shown}"
    );
    injections::assert_policy(&all, 2, injections::prompt);
    let prompt_of = |i: &injections::Injection| injections::prompt(i).unwrap_or_default();
    assert_eq!(prompt_of(&all[0]), "CHARLIE3 carry on");
    assert_eq!(prompt_of(&all[1]), "DELTA4 after the compression");
    for i in &all {
        assert!(!i.text.contains("hook_context"), "nested: {shown}");
    }
    let (auto_block, manual_block) = (&all[0].text, &all[1].text);
    for (needle, what) in [
        (
            "recovered after compaction #1 (auto)",
            "the automatic compression",
        ),
        (
            "Original request: ALPHA1 run echo hello",
            "the first request",
        ),
        (
            "Turn 3 ended with: \"done\"",
            "where the last turn left off",
        ),
        (
            "`ls /nonexistent-sjournal-dir` → exit 2",
            "the unresolved failure",
        ),
        ("`notes.txt` (created", "the file written, relative"),
    ] {
        assert_has(auto_block, needle, what);
    }
    assert_has(
        manual_block,
        "recovered after compaction #2 (manual)",
        "the manual /compress",
    );
    assert_has(
        manual_block,
        "Turn 4 ended with: \"charlie answered\"",
        "where the last turn left off",
    );

    // What reached the model: nothing of sjournal's before the automatic compression; the
    // block with the prompt after it (a part of the user turn, `<`/`>` escaped), once.
    let reqs = g.mock.model_requests();
    let compress = reqs
        .iter()
        .position(|r| r.answer.starts_with("special:"))
        .expect("a compression request");
    for r in &reqs[..compress] {
        assert!(!r.body.contains("sjournal: "), "{}", r.answer);
    }
    let in_body = |body: &str, t: &str| {
        let escaped = t.replace('<', "&lt;").replace('>', "&gt;");
        let plain = body.matches(&json_text(t)).count();
        // A block without `<`/`>` reads the same either way: counted once.
        plain
            + if escaped == t {
                0
            } else {
                body.matches(&json_text(&escaped)).count()
            }
    };
    let charlie = reqs.iter().find(|r| r.answer == "CHARLIE3:0").unwrap();
    assert_eq!(in_body(&charlie.body, auto_block), 1, "{}", charlie.body);
    assert_has(
        &charlie.body,
        "MOCK-SUMMARY",
        "the summary of the automatic compression",
    );
    let delta = reqs.iter().find(|r| r.answer == "DELTA4:0").unwrap();
    assert_eq!(in_body(&delta.body, manual_block), 1, "{}", delta.body);
    assert_has(&delta.body, "MOCK-SUMMARY", "the summary after /compress");
    let foxtrot = reqs.iter().find(|r| r.answer == "FOXTROT6:0").unwrap();
    assert_eq!(in_body(&foxtrot.body, manual_block), 1, "{}", foxtrot.body);
    // The history Gemini CLI kept through `/compress` still holds the first block: the
    // second leaves out what it holds, so no line of the first reaches a request twice.
    assert_eq!(
        in_body(&delta.body, auto_block),
        1,
        "the history kept through /compress holds the first block:\n{}",
        delta.body
    );
    for r in [delta, foxtrot] {
        for line in auto_block.lines().filter(|l| l.starts_with("- ")) {
            assert!(
                in_body(&r.body, line) <= 1,
                "{line:?} twice in the request answered {}:\n{manual_block}",
                r.answer
            );
        }
    }

    // BeforeModel carries the whole request: kept byte for byte.
    let biggest = events
        .iter()
        .filter(|(k, _)| k == "BeforeModel")
        .map(|(_, p)| p.to_string().len())
        .max()
        .unwrap();
    eprintln!("gemini: largest BeforeModel payload {biggest} bytes");
    w.refresh_fixtures("gemini", "payloads-0.61.0.jsonl", &[&sid]);
}

/// Gemini CLI's name for the sjournal server's `search` tool, as the first model request
/// offers it (`mcp_<server>_<tool>` among the `functionDeclarations`).
#[cfg(feature = "search")]
const GEMINI_MCP_SEARCH: &str = "mcp_sjournal_search";

#[cfg(feature = "search")]
fn mcp_script(_project: &str) -> Script {
    use crate::mcp_search::MARKER;
    Script {
        rules: vec![
            Rule {
                key: "MCPA1",
                steps: vec![
                    Step::Tool(
                        "run_shell_command",
                        json!({"command": format!("echo {MARKER}"), "description": "echo"}),
                    ),
                    Step::Text("echoed"),
                ],
            },
            Rule {
                key: "MCPB2",
                steps: vec![
                    Step::Tool(GEMINI_MCP_SEARCH, json!({"query": MARKER})),
                    Step::Text("found it"),
                ],
            },
        ],
        special: vec![(COMPRESS_MARKER, summary())],
        input_tokens: 100,
        big_after: None,
        special_delay_ms: 0,
    }
}

/// The agent asks the journal over MCP: `sjournal install gemini` registers `sjournal mcp` in
/// Gemini CLI's settings.json; session A runs a command; a new session B of the same project
/// has the model call the search tool for it. The function response in B's next model request
/// cites A's record by session, seq and hash, and leaves out another project's session with
/// the word.
#[cfg(feature = "search")]
#[test]
fn gemini_cli_searches_an_earlier_session_over_mcp() {
    use crate::mcp_search;
    let Some(mut g) = Gemini::start(mcp_script) else {
        return;
    };
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(g.world.home.join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    assert!(
        settings["mcpServers"]["sjournal"].is_object(),
        "install gemini registers the server: {settings}"
    );
    mcp_search::other_project_session(&g.world);

    g.prompt("MCPA1 run the echo");
    let a = g.session.clone();
    let first = g
        .mock
        .model_requests()
        .into_iter()
        .find(|q| q.answer == "MCPA1:0")
        .expect("session A's first model request");
    let offered = mcp_search::offered_tools(&first.json);
    assert!(
        offered.iter().any(|t| t == GEMINI_MCP_SEARCH),
        "the search tool as Gemini CLI offers it: {offered:?}"
    );
    let (seq, hash) = mcp_search::marker_record(&g.world, &a, "AfterTool");

    // Session B: a new session id.
    g.session = "5d0c2a9e-3b7f-4e61-8c4a-7a1f0e9b2c02".into();
    g.started = false;
    g.prompt("MCPB2 what did we echo in the earlier session?");
    let reqs = g.mock.model_requests();
    let after = reqs
        .iter()
        .find(|q| q.answer == "MCPB2:1")
        .unwrap_or_else(|| {
            let answers: Vec<&str> = reqs.iter().map(|q| q.answer.as_str()).collect();
            panic!("no model request after the MCP call: {answers:?}")
        });
    mcp_search::assert_cited(&after.body, &a, seq, &hash);
}
