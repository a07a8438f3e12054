//! Claude Code 2.1.332 (`claude -p`), hooks installed by `sjournal install claude-code`.
//! The harness ([`Claude`]) is reusable: a scenario is a list of prompts (and `/compact`)
//! played in one session, each a `claude -p` or `claude --resume ID -p` invocation
//! (`claude_recovery.rs` plays the context-recovery scenario with it).

use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

/// The marker of Claude Code's compaction request (its summary prompt).
pub const COMPACT_MARKER: &str = "summary of the conversation";
pub const SUMMARY: &str = "MOCK-SUMMARY: the user asked for a few shell commands and a file.";
/// How SessionStart's additionalContext reaches the model (a system reminder in the
/// conversation).
pub const SESSION_START_PREFIX: &str = "SessionStart hook additional context: ";
pub const PROMPT_PREFIX: &str = "UserPromptSubmit hook additional context: ";

/// How a scenario runs Claude Code.
#[derive(Debug, Clone)]
pub struct Options {
    /// The compaction summary the mock writes.
    pub summary: &'static str,
    /// Offer the TodoWrite tool: `-p` offers it only with the task tools turned off
    /// (`CLAUDE_CODE_ENABLE_TASKS=0`), the todo tools on (`CLAUDE_CODE_ENABLE_TODO_TOOLS=1`) and
    /// named in `--tools` (found in 2.1.332's bundle: TodoWrite is enabled when the task
    /// tools are not).
    pub todo_write: bool,
    /// An exec handler on SessionStart whose output (the payload's `"source":"…"`) is an
    /// ephemeral note: tells SessionStart's contexts apart by their source.
    pub source_note: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            summary: SUMMARY,
            todo_write: false,
            source_note: true,
        }
    }
}

/// A Claude Code session driven headless against the mock.
pub struct Claude {
    pub world: World,
    pub mock: Mock,
    pub session: Option<String>,
    tools: &'static str,
}

impl Claude {
    /// [`Claude::with`] the default options.
    pub fn start(script: impl FnOnce(&str) -> Vec<Rule>) -> Option<Claude> {
        Claude::with(Options::default(), script)
    }

    /// Installs Claude Code (or None: skip) and sjournal's hooks (`sjournal install
    /// claude-code` into the temporary HOME); starts the mock with the rules `script` makes
    /// for the project directory.
    pub fn with(opts: Options, script: impl FnOnce(&str) -> Vec<Rule>) -> Option<Claude> {
        let dir = support::installed("claude-code")?;
        let mut world = World::new(dir);
        let mock = Mock::start(Script {
            rules: script(&world.project.display().to_string()),
            special: vec![(COMPACT_MARKER, opts.summary)],
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
        let mut tools = "Bash,Write,Read,Edit";
        if opts.todo_write {
            world
                .env
                .insert("CLAUDE_CODE_ENABLE_TASKS".into(), "0".into());
            world
                .env
                .insert("CLAUDE_CODE_ENABLE_TODO_TOOLS".into(), "1".into());
            tools = "Bash,Write,Read,Edit,TodoWrite";
        }
        world.patient_hook();
        if opts.source_note {
            let config = world.root().join("config.toml");
            let mut text = std::fs::read_to_string(&config).unwrap();
            text.push_str(
                "\n[[exec]]\nname = \"source\"\nevents = [\"SessionStart\"]\n\
                 command = [\"grep\", \"-o\", \"\\\"source\\\":\\\"[a-z]*\\\"\"]\n\
                 timeout_ms = 3000\ncontext = \"ephemeral\"\n",
            );
            std::fs::write(&config, text).unwrap();
        }
        let said = world.sj(&["install", "claude-code"]);
        assert_has(&said, "installed", "install claude-code");
        support::assert_runs_the_hook_binary(&world.home.join(".claude/settings.json"));
        Some(Claude {
            world,
            mock,
            session: None,
            tools,
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
        if self.tools.contains("TodoWrite") {
            c.args(["--tools", self.tools]);
        }
        c.args(["--allowedTools", self.tools]);
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

    // What sjournal injected: at startup and each resume only the exec handler's note for
    // that start; the recovery block once, at SessionStart(compact); at the prompts nothing
    // (the transcript has everything, the prompt is the model's to read).
    let all = injections::of(w, &sid);
    let shown = injections::show(&all);
    let at = injections::points(&all);
    assert_eq!(
        at,
        [
            ("SessionStart", "startup", "startup"),
            ("SessionStart", "resume", "resume"),
            ("SessionStart", "compact", "recovery"),
            ("SessionStart", "resume", "resume"),
        ],
        "{shown}"
    );
    injections::assert_policy(&all, 1, injections::prompt);
    for i in all.iter().filter(|i| i.mode != "recovery") {
        assert_eq!(
            i.text
                .lines()
                .filter(|l| l.starts_with("- ") || l.starts_with('['))
                .count(),
            1,
            "only the exec handler's note: {shown}"
        );
        assert_has(
            &i.text,
            &format!("\"source\":\"{}\"", i.source()),
            "the note",
        );
    }
    let block = &all[2].text;
    for (needle, what) in [
        (
            "\"source\":\"compact\"",
            "the exec handler's note for this start",
        ),
        (
            "Original request: ALPHA1 run echo hello",
            "the first request",
        ),
        ("Latest request: BRAVO2 say something", "the latest request"),
        ("\"bravo answered\"", "where the last turn left off"),
        (
            "`ls /nonexistent-sjournal-dir` → exit 2",
            "the unresolved failure",
        ),
        ("No such file or directory", "its error"),
        (
            "`notes.txt` (created, 1 write",
            "the file written, relative",
        ),
        ("sjournal show --session", "the pointer"),
    ] {
        assert_has(block, needle, what);
    }
    assert!(!block.contains(&project), "paths relative: {block}");

    // What reached the model. Nothing of sjournal's before the compaction but the notes, no
    // UserPromptSubmit context ever; SessionStart(compact)'s block in the first main request
    // after the compaction request (A2), not in it (it did not exist yet), and once in each
    // request after it (it stays in the transcript; nothing re-sends it).
    let reqs = cc.mock.model_requests();
    assert!(
        reqs.iter().all(|r| !r.body.contains(PROMPT_PREFIX)),
        "UserPromptSubmit context reached the model"
    );
    let (ci, next) = cc.around_compaction();
    for r in &reqs[..ci] {
        assert!(
            !r.body.contains("recovered after compaction"),
            "{}",
            r.answer
        );
    }
    let ctx_json = json_text(&format!("{SESSION_START_PREFIX}{block}"));
    assert!(!reqs[ci].body.contains(&ctx_json), "compaction request");
    assert_has(
        &reqs[next].body,
        &ctx_json,
        "A2: the first request after /compact",
    );
    assert_has(&reqs[next].body, SUMMARY, "the summary after /compact");
    for r in &reqs[next..] {
        assert_eq!(
            r.body.matches(&json_text(block)).count(),
            1,
            "the block once in {}",
            r.answer
        );
    }
    assert_eq!(reqs[next].answer, "CHARLIE3:0");

    // Beside the curated capture (which the demo and the benches replay line by line).
    w.refresh_fixtures("claude-code/run", "payloads-2.1.332.jsonl", &[&sid]);
}

/// A background command's completion reaches Claude Code as a prompt it writes itself, a
/// `<task-notification>` element, with a UserPromptSubmit: not a turn of the user's, not the
/// original or latest request, no instruction (2.1.332).
#[test]
fn claude_code_task_notification_is_not_a_user_turn() {
    let Some(mut cc) = Claude::start(|_| {
        vec![
            Rule {
                key: "GOLF7",
                steps: vec![
                    Step::Tool(
                        "Bash",
                        json!({"command": "sleep 2; echo bg-done", "description": "Slow job",
                               "run_in_background": true}),
                    ),
                    Step::Text("started it in the background"),
                ],
            },
            Rule {
                key: "HOTEL8",
                steps: vec![Step::Text("hotel answered")],
            },
        ]
    }) else {
        return;
    };
    cc.prompt("GOLF7 start the slow job in the background");
    std::thread::sleep(Duration::from_secs(3));
    cc.prompt("HOTEL8 anything else?");
    let sid = cc.session().to_owned();
    let w = &cc.world;
    let events = w.events(&sid);
    let note = events
        .iter()
        .find(|(k, p)| {
            k == "UserPromptSubmit"
                && p["prompt"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("<task-notification>"))
        })
        .expect("the background job's notification, as a prompt");
    eprintln!("claude: the host's prompt: {}", note.1["prompt"]);
    let st = w.state(&sid);
    assert_eq!(st["turns"]["count"], 2, "{}", st["turns"]);
    let prompts: Vec<&str> = st["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts,
        [
            "GOLF7 start the slow job in the background",
            "HOTEL8 anything else?"
        ]
    );
    let listed: Value =
        serde_json::from_str(&w.sj(&["show", "--session", &sid, "prompts", "--json"])).unwrap();
    assert_eq!(listed["prompts"].as_array().unwrap().len(), 2, "{listed}");
    assert!(
        !st["requests"].to_string().contains("task-notification"),
        "{}",
        st["requests"]
    );
    // The block a compaction would bring: the user's requests only.
    let block = w.sj(&["context", "show", "--session", &sid]);
    assert_has(
        &block,
        "Latest request: HOTEL8 anything else?",
        "the latest request",
    );
    assert!(!block.contains("task-notification"), "{block}");
    w.verify();
}

/// The marker only session A's Bash command holds (and another project's prompt).
const MCP_MARKER: &str = "zebra7431";

fn mcp_script(_project: &str) -> Vec<Rule> {
    vec![
        Rule {
            key: "MCPA1",
            steps: vec![
                Step::Tool(
                    "Bash",
                    json!({"command": format!("echo {MCP_MARKER}"), "description": "Echo"}),
                ),
                Step::Text("echoed"),
            ],
        },
        Rule {
            key: "MCPB2",
            // Claude Code 2.1.332 defers MCP tools: their schemas are loaded with ToolSearch
            // before the first call.
            steps: vec![
                Step::Tool(
                    "ToolSearch",
                    json!({"query": "select:mcp__sjournal__search", "max_results": 1}),
                ),
                Step::Tool("mcp__sjournal__search", json!({"query": MCP_MARKER})),
                Step::Text("found it"),
            ],
        },
    ]
}

/// The agent asks the journal (`sjournal install claude-code` registers `sjournal mcp` by
/// default): session A runs a command; a new session B of the same project has the model call
/// `mcp__sjournal__search` for it (after loading its schema with ToolSearch). The tool result that reaches B's next model request cites
/// A's record by session, seq and hash (the journal's own), and leaves out another project's
/// session that holds the same word.
#[cfg(feature = "search")]
#[test]
fn claude_code_searches_an_earlier_session_over_mcp() {
    let opts = Options {
        source_note: false,
        ..Default::default()
    };
    let Some(mut cc) = Claude::with(opts, mcp_script) else {
        return;
    };
    cc.tools = "Bash,Write,Read,Edit,ToolSearch,mcp__sjournal__search";
    let registered: Value =
        serde_json::from_str(&std::fs::read_to_string(cc.world.home.join(".claude.json")).unwrap())
            .unwrap();
    assert!(
        registered["mcpServers"]["sjournal"].is_object(),
        "{registered}"
    );

    // Another project's session holding the same word.
    {
        use sjournal::journal::{Root, Writer, WriterOptions};
        let root = Root::new(cc.world.root());
        let mut w =
            Writer::open(&root, "other-project-session", &WriterOptions::default()).unwrap();
        let raw = json!({"hook_event_name": "UserPromptSubmit", "session_id": "other-project-session",
            "cwd": "/elsewhere/other-project", "prompt": format!("echo {MCP_MARKER} over there")});
        w.append(
            "UserPromptSubmit",
            &sjournal::fold::digest::encode_event("UserPromptSubmit", &raw.to_string()),
        )
        .unwrap();
    }

    let r = cc.prompt("MCPA1 run the echo");
    assert_eq!(r["is_error"], false, "{r}");
    let a = cc.session().to_owned();
    let line = cc
        .world
        .sj(&["log", "--json", "--session", &a])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| {
            v["kind"] == "PostToolUse"
                && v["payload"]["tool_input"]["command"]
                    .as_str()
                    .is_some_and(|c| c.contains(MCP_MARKER))
        })
        .expect("session A's Bash call");
    let (seq, hash) = (
        line["seq"].as_u64().unwrap(),
        line["hash"].as_str().unwrap(),
    );

    // Session B: a new session of the same project.
    cc.session = None;
    let r = cc.prompt("MCPB2 what did we echo in the earlier session?");
    assert_eq!(r["is_error"], false, "{r}");
    assert_ne!(cc.session(), a, "a new session");
    let reqs = cc.mock.model_requests();
    let after = reqs
        .iter()
        .find(|q| q.answer == "MCPB2:2")
        .unwrap_or_else(|| {
            let answers: Vec<&str> = reqs.iter().map(|q| q.answer.as_str()).collect();
            panic!("no model request after the MCP call: {answers:?}")
        });
    // Claude Code hands the model the tool's structured result (JSON, in the tool_result's
    // text): the hit with its citation.
    let cited = format!(r#""session":"{a}","seq":{seq},"hash":"{hash}""#);
    assert_has(&after.body, &json_text(&cited), "the search hit's citation");
    assert!(
        !after.body.contains("other-project-session"),
        "another project's session reached the model: {}",
        after.body
    );
}
