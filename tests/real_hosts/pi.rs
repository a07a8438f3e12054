//! Pi 1.6.0 (`@earendil-works/pi-coding-agent`, on the Node 22 pinned beside it), bridged by the
//! extension `sjournal install pi` puts in `~/.pi/agent/extensions/`.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

pub const COMPACT_MARKER: &str = "summar";
pub const SUMMARY: &str = "MOCK-SUMMARY: pi compacted.";
pub const SESSION: &str = "5f0c8a1e-3b2d-4c6e-9a7f-1d2e3f4a5b6c";

pub struct Pi {
    pub world: World,
    pub mock: Mock,
}

impl Pi {
    pub fn start(script: impl FnOnce(&str) -> Script) -> Option<Pi> {
        let dir = support::installed("pi")?;
        let mut world = World::new(dir);
        let mock = Mock::start(script(&world.project.display().to_string()));
        let agent = world.home.join(".pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(
            agent.join("models.json"),
            json!({"providers": {"mock": {"baseUrl": format!("{}/v1", mock.base()), "api": "openai-completions",
                   "apiKey": "mock-key", "models": [{"id": "mock-model", "name": "Mock Model",
                   "contextWindow": 200000, "maxTokens": 8192}]}}})
            .to_string(),
        )
        .unwrap();
        std::fs::write(
            agent.join("settings.json"),
            json!({"compaction": {"keepRecentTokens": 10}}).to_string(),
        )
        .unwrap();
        for (k, v) in [
            ("PI_OFFLINE", "1"),
            ("PI_SKIP_VERSION_CHECK", "1"),
            ("PI_TELEMETRY", "0"),
        ] {
            world.env.insert(k.into(), v.into());
        }
        world.patient_hook();
        let said = world.sj(&["install", "pi"]);
        assert_has(&said, "installed", "install pi");
        Some(Pi { world, mock })
    }

    fn base(&self) -> std::process::Command {
        let mut c = self.world.cmd("pi");
        c.args([
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "--session-id",
            SESSION,
        ]);
        c
    }

    /// One `pi --mode json PROMPT` in the session.
    pub fn prompt(&self, prompt: &str) -> String {
        let mut c = self.base();
        c.args(["--mode", "json", prompt]);
        let o = self.world.run(c, Duration::from_secs(180));
        assert!(
            o.status.success(),
            "pi {prompt:?}: {}",
            support::out_text(&o)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// `/compact` over RPC; stdin is closed once Pi answered (Pi then exits). Returns what
    /// Pi printed.
    pub fn compact(&self) -> Vec<Value> {
        let mut c = self.base();
        c.args(["--mode", "rpc"]);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take();
        let w = stdin.as_mut().unwrap();
        writeln!(w, "{}", json!({"id": "c1", "type": "compact"})).unwrap();
        w.flush().unwrap();
        let mut seen = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let Ok(line) = line else { break };
            let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            let done = v["id"] == "c1";
            seen.push(v);
            if done {
                drop(stdin.take());
            }
        }
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("pi --mode rpc did not exit after its stdin closed: {seen:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        seen
    }
}

fn script(project: &str) -> Script {
    Script {
        rules: vec![
            Rule {
                key: "ALPHA1",
                steps: vec![
                    Step::Tool("bash", json!({"command": "echo hello"})),
                    Step::Tool("read", json!({"path": format!("{project}/missing.txt")})),
                    Step::Tool(
                        "write",
                        json!({"path": format!("{project}/notes.txt"), "content": "hello\n"}),
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
        ],
        special: vec![(COMPACT_MARKER, SUMMARY)],
        input_tokens: 100,
        big_after: None,
        special_delay_ms: 0,
    }
}

#[test]
fn pi_session_with_resume_failed_tool_and_compaction() {
    let Some(pi) = Pi::start(script) else {
        return;
    };
    let ext = pi.world.home.join(".pi/agent/extensions/sjournal.ts");
    assert!(std::fs::read_to_string(&ext)
        .unwrap()
        .starts_with("// sjournal bridge"));
    // Nothing to compact yet: Pi's compaction fails, and must not be counted. (Later, every
    // compaction leaves sjournal's recovery message after it, so there is always something.)
    let failed = pi.compact();
    assert!(
        failed
            .iter()
            .any(|v| v["id"] == "c1" && v["success"] == false),
        "{failed:?}"
    );
    pi.prompt("ALPHA1 run echo hello, read missing.txt, write notes.txt");
    pi.prompt("BRAVO2 say something");
    let ok = pi.compact();
    assert!(
        ok.iter().any(|v| v["id"] == "c1" && v["success"] == true),
        "{ok:?}"
    );
    pi.prompt("CHARLIE3 after the compaction");
    let w = &pi.world;

    let sessions = w.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["host"], "pi");
    let events = w.events(SESSION);
    let counts = support::kinds(&events);
    for (kind, n) in [
        ("UserPromptSubmit", 3),
        ("PreToolUse", 3),
        ("PostToolUse", 2),
        ("PostToolUseFailure", 1),
        ("Stop", 3),
        ("PreCompact", 1),
        ("CompactionFailed", 1),
        ("SessionEnd", 5),
    ] {
        assert_eq!(
            counts.get(kind).copied().unwrap_or(0),
            n,
            "{kind}: {counts:?}"
        );
    }
    let field = |kind: &str, key: &str| -> Vec<String> {
        events
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, p)| p[key].as_str().unwrap_or("").to_owned())
            .collect()
    };
    // Reopened by --session-id once it has messages: a resume, not a startup.
    assert_eq!(
        field("SessionStart", "source"),
        ["startup", "startup", "resume", "resume", "compact", "resume"]
    );
    assert_eq!(
        field("PreCompact", "trigger"),
        ["manual"],
        "Pi's own reason"
    );
    // No user typed anything: no prompt_input_exit.
    assert!(field("SessionEnd", "reason").iter().all(|r| r == "other"));
    let st = w.state(SESSION);
    assert_eq!(st["compactions"]["count"], 1, "{}", st["compactions"]);
    assert_eq!(st["tools"]["failures"], 1, "{}", st["tools"]);
    assert_eq!(st["turns"]["count"], 3);
    w.verify();

    // What sjournal injected: the recovery block at the SessionStart(compact), once; nothing
    // at the prompts (nothing new to say).
    let all = injections::of(w, SESSION);
    let shown = injections::show(&all);
    let at = injections::points(&all);
    assert_eq!(at, [("SessionStart", "compact", "recovery")], "{shown}");
    injections::assert_policy(&all, 1, injections::prompt);
    let block = &all[0].text;
    for (needle, what) in [
        ("recovered after compaction #1 (manual)", "the compaction"),
        (
            "Original request: ALPHA1 run echo hello",
            "the first request",
        ),
        ("read `missing.txt` → failed", "the unresolved failure"),
        ("sjournal show --session", "the pointer"),
    ] {
        assert_has(block, needle, what);
    }

    // What reached the model: nothing of sjournal's before the compaction; after it, the
    // block as a message of the conversation (Pi stored it in the session), once, and not
    // in the system prompt.
    let reqs = pi.mock.model_requests();
    injections::quiet_until_compaction(&reqs);
    let charlie = reqs.iter().find(|r| r.answer == "CHARLIE3:0").unwrap();
    assert_eq!(
        charlie.body.matches(&json_text(block)).count(),
        1,
        "the block once after the compaction: {}",
        charlie.body
    );
    let system = charlie.json["messages"][0].to_string();
    assert!(!system.contains("sjournal: "), "{system}");
    assert_has(&charlie.body, SUMMARY, "Pi's summary");

    let said = w.sj(&["uninstall", "pi"]);
    assert_has(&said, "removed", "uninstall pi");
    assert!(!ext.exists());
    w.refresh_fixtures("pi", "payloads-1.6.0.jsonl", &[SESSION]);
}
