//! Claude Code 2.1.332 (`claude -p`), hooks installed by `sjournal install claude-code`.
//! The harness ([`Claude`]) is reusable: a scenario is a list of prompts (and `/compact`)
//! played in one session, each a `claude -p` or `claude --resume ID -p` invocation.

use std::time::Duration;

use serde_json::{json, Value};

use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

/// The marker of Claude Code's compaction request (its summary prompt).
pub const COMPACT_MARKER: &str = "summary of the conversation";
pub const SUMMARY: &str = "MOCK-SUMMARY: the user asked for a few shell commands and a file.";

/// A Claude Code session driven headless against the mock.
pub struct Claude {
    pub world: World,
    pub mock: Mock,
    pub session: Option<String>,
}

impl Claude {
    /// Installs Claude Code (or None: skip) and sjournal's hooks (`sjournal install
    /// claude-code` into the temporary HOME); starts the mock with the rules `script` makes
    /// for the project directory.
    pub fn start(script: impl FnOnce(&str) -> Vec<Rule>) -> Option<Claude> {
        let dir = support::installed("claude-code")?;
        let mut world = World::new(dir);
        let mock = Mock::start(Script {
            rules: script(&world.project.display().to_string()),
            special: vec![(COMPACT_MARKER, SUMMARY)],
            input_tokens: 100,
            big_after: None,
            special_delay_ms: 0,
        });
        for (k, v) in [
            ("ANTHROPIC_BASE_URL", mock.base()),
            ("ANTHROPIC_API_KEY", "sk-ant-mock".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
        ] {
            world.env.insert(k.into(), v);
        }
        world.patient_hook();
        // Tells SessionStart's contexts apart by their source: an exec handler whose output
        // (the payload's `"source":"…"`) is offered with that event's context only.
        let config = world.root().join("config.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(
            "\n[[exec]]\nname = \"source\"\nevents = [\"SessionStart\"]\n\
             command = [\"grep\", \"-o\", \"\\\"source\\\":\\\"[a-z]*\\\"\"]\n\
             timeout_ms = 3000\ncontext = \"ephemeral\"\n",
        );
        std::fs::write(&config, text).unwrap();
        let said = world.sj(&["install", "claude-code"]);
        assert_has(&said, "installed", "install claude-code");
        Some(Claude {
            world,
            mock,
            session: None,
        })
    }

    /// One `claude -p PROMPT` (`--resume`-ing the session after the first; `/compact`
    /// compacts); returns its JSON result.
    pub fn prompt(&mut self, prompt: &str) -> Value {
        let mut c = self.world.cmd("claude");
        if let Some(s) = &self.session {
            c.args(["--resume", s]);
        }
        c.args(["-p", prompt, "--output-format", "json"]);
        c.args(["--allowedTools", "Bash,Write,Read,Edit"]);
        let o = self.world.run(c, Duration::from_secs(180));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|_| {
            panic!("claude -p {prompt:?}: {}", support::out_text(&o));
        });
        if let Some(s) = v["session_id"].as_str() {
            self.session.get_or_insert_with(|| s.to_owned());
        }
        v
    }

    pub fn session(&self) -> &str {
        self.session.as_deref().expect("a session was started")
    }

    /// Index (in `model_requests`) of the compaction request, and of the first request
    /// answering a scripted prompt after it.
    pub fn around_compaction(&self) -> (usize, usize) {
        let reqs = self.mock.model_requests();
        let compact = reqs
            .iter()
            .position(|r| r.answer.starts_with("special:"))
            .expect("a compaction request");
        let next = (compact..reqs.len())
            .find(|&i| !reqs[i].answer.starts_with("special:") && reqs[i].answer != "none")
            .expect("a model request after the compaction");
        (compact, next)
    }
}

fn script(project: &str) -> Vec<Rule> {
    vec![
        Rule {
            key: "ALPHA1",
            steps: vec![
                Step::Tool(
                    "Bash",
                    json!({"command": "echo hello", "description": "Say hello"}),
                ),
                Step::Tool(
                    "Bash",
                    json!({"command": "ls /nonexistent-sjournal-dir", "description": "Fail"}),
                ),
                Step::Tool(
                    "Write",
                    json!({"file_path": format!("{project}/notes.txt"), "content": "hello\n"}),
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
    ]
}

/// Counts of each event kind the session journaled.
fn expect_counts() -> Vec<(&'static str, usize)> {
    vec![
        // startup, a resume per later invocation (3), and the compaction's.
        ("SessionStart", 5),
        ("UserPromptSubmit", 3),
        ("PreToolUse", 3),
        ("PostToolUse", 2),
        ("PostToolUseFailure", 1),
        ("Stop", 3),
        ("PreCompact", 1),
        ("PostCompact", 1),
        ("SessionEnd", 4),
    ]
}

#[test]
fn claude_code_session_with_resume_and_compaction() {
    let Some(mut cc) = Claude::start(script) else {
        return;
    };
    let r1 = cc.prompt("ALPHA1 run echo hello, then list a missing dir, then write notes.txt");
    assert_eq!(r1["is_error"], false, "{r1}");
    cc.prompt("BRAVO2 say something");
    cc.prompt("/compact");
    cc.prompt("CHARLIE3 carry on");
    let sid = cc.session().to_owned();
    let w = &cc.world;
    let project = w.project.display().to_string();

    // The journal: one session, Claude's, every event in it.
    let sessions = w.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["session_id"], sid.as_str());
    assert_eq!(sessions[0]["host"], "claude");
    let events = w.events(&sid);
    let counts = support::kinds(&events);
    for (kind, n) in expect_counts() {
        assert_eq!(
            counts.get(kind).copied().unwrap_or(0),
            n,
            "{kind}: {counts:?}"
        );
    }
    // The compactor runs as a subagent: its SubagentStop (agent_type "") carries the summary.
    let compactor = events
        .iter()
        .find(|(k, p)| k == "SubagentStop" && p["agent_type"] == "")
        .expect("the compactor's SubagentStop");
    assert_has(
        compactor.1["last_assistant_message"].as_str().unwrap_or(""),
        SUMMARY,
        "the compactor's summary",
    );
    let st = w.state(&sid);
    assert_eq!(st["identity"]["host"], "claude");
    assert_eq!(st["turns"]["count"], 3, "{}", st["turns"]);
    assert_eq!(st["tools"]["calls"], 3, "{}", st["tools"]);
    assert_eq!(st["tools"]["failures"], 1, "{}", st["tools"]);
    assert_eq!(st["compactions"]["count"], 1, "{}", st["compactions"]);
    assert!(
        st["files"]["by_path"]
            .get(format!("{project}/notes.txt"))
            .is_some(),
        "{}",
        st["files"]
    );
    w.verify();

    // What reached the model. UserPromptSubmit's context arrives next to the prompt.
    let reqs = cc.mock.model_requests();
    let injected = w.injected(&sid);
    let first_prompt = injected
        .iter()
        .find(|(e, _)| e["hook_event_name"] == "UserPromptSubmit")
        .expect("context injected for the first prompt");
    let alpha = reqs.iter().find(|r| r.answer == "ALPHA1:0").unwrap();
    let first_prompt_json = serde_json::to_string(&first_prompt.1).unwrap();
    assert_has(
        &alpha.body,
        first_prompt_json.trim_matches('"'),
        "UserPromptSubmit's context in the first request",
    );
    // A2: SessionStart(compact)'s context reaches the first main request after the compaction
    // request, and not the compaction request itself (it did not exist yet).
    let compact_ctx = injected
        .iter()
        .find(|(e, _)| e["hook_event_name"] == "SessionStart" && e["source"] == "compact")
        .expect("context injected at SessionStart(compact)");
    assert_has(
        &compact_ctx.1,
        "compactions: 1",
        "the post-compaction context",
    );
    let (ci, next) = cc.around_compaction();
    let ctx_json = serde_json::to_string(&format!(
        "SessionStart hook additional context: {}",
        compact_ctx.1
    ))
    .unwrap();
    let ctx_json = ctx_json.trim_matches('"');
    assert!(!reqs[ci].body.contains(ctx_json), "compaction request");
    assert_has(
        &compact_ctx.1,
        r#""source":"compact""#,
        "the exec handler's note",
    );
    assert_has(
        &reqs[next].body,
        ctx_json,
        "A2: the first request after /compact",
    );
    assert_has(&reqs[next].body, SUMMARY, "the summary after /compact");

    // Beside the curated capture (which the demo and the benches replay line by line).
    w.refresh_fixtures("claude-code/run", "payloads-2.1.332.jsonl", &[&sid]);
}
