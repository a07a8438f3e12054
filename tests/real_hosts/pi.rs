//! Pi 1.6.0 (`@earendil-works/pi-coding-agent`, on the Node 22 pinned beside it), bridged by the
//! extension `sjournal install pi` puts in `~/.pi/agent/extensions/`.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step, Tune};
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
        Pi::start_with(script, 200_000, Tune::default())
    }

    /// With the model's context window (Pi compacts by itself once the reported usage is
    /// above the window less its reserve, 16,384 tokens by default) and the mock's tuning.
    pub fn start_with(
        script: impl FnOnce(&str) -> Script,
        context_window: u64,
        tune: Tune,
    ) -> Option<Pi> {
        let dir = support::installed("pi")?;
        let mut world = World::new(dir);
        let mock = Mock::start_with(script(&world.project.display().to_string()), tune);
        let agent = world.home.join(".pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(
            agent.join("models.json"),
            json!({"providers": {"mock": {"baseUrl": format!("{}/v1", mock.base()), "api": "openai-completions",
                   "apiKey": "mock-key", "models": [{"id": "mock-model", "name": "Mock Model",
                   "contextWindow": context_window, "maxTokens": 8192}]}}})
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
        support::assert_runs_the_hook_binary(&world.home.join(".pi/agent/extensions/sjournal.ts"));
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
    pub fn prompt(&self, prompt: &str) {
        if let Err(why) = self.prompt_within(prompt, Duration::from_secs(180)) {
            panic!("pi {prompt:?}: {why}");
        }
    }

    /// One `pi --mode json PROMPT`, killed if it has not exited within `limit` (a Pi that
    /// keeps working by itself); Err says why it did not end well.
    pub fn prompt_within(&self, prompt: &str, limit: Duration) -> Result<(), String> {
        let mut c = self.base();
        c.args(["--mode", "json", prompt]);
        c.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = c.spawn().map_err(|e| e.to_string())?;
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
            s
        });
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let stderr = stderr.join().unwrap();
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(format!("exited with {s}: {stderr}")),
            None => Err(format!("still running after {limit:?}, killed: {stderr}")),
        }
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

    // What reached the model: nothing of sjournal's before the compaction; after it (in the
    // next process, the RPC one having exited), the block as a message of the conversation
    // right after Pi's summary, once, and not in the system prompt.
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

/// A long answer: enough tokens for Pi to have something to compact, however few it keeps.
const LONG: &str = "full answered: the context is now full. Pi keeps the most recent part of \
the conversation verbatim and summarises the rest; this answer is long enough to be that most \
recent part on its own, so that everything before it is summarised.";

/// Pi's compaction request, by its system prompt (any request whose last message merely
/// mentions a summary is a turn of the session).
const SUMMARIZER: &str = "context summarization assistant";

fn threshold_script(_project: &str) -> Script {
    Script {
        rules: vec![
            Rule {
                key: "FULL1",
                steps: vec![Step::Text(LONG)],
            },
            Rule {
                key: "CONT2",
                steps: vec![Step::Text("cont answered")],
            },
            Rule {
                key: "MID3",
                steps: vec![
                    Step::Tool("bash", json!({"command": "echo mid"})),
                    Step::Text("mid answered"),
                ],
            },
        ],
        special: vec![(SUMMARIZER, SUMMARY)],
        input_tokens: 100,
        big_after: None,
        special_delay_ms: 0,
    }
}

/// The compaction entries in Pi's own session file.
fn pi_compactions(w: &World) -> usize {
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    files(&w.home.join(".pi/agent/sessions"), &mut all);
    all.iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter(|t| t.contains(SESSION))
        .flat_map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .collect::<Vec<_>>()
        })
        .filter(|e| e["type"] == "compaction")
        .count()
}

/// Pi compacting by itself because the context is full (the threshold: the usage the model
/// reports is above the window less Pi's reserve). The recovery block must reach the session's
/// next model request, whenever that comes, without Pi being made to work for it: after a
/// compaction at the end of a run (the process then exits; the next prompt is another
/// process), and after one in the middle of a run (before the run's next request).
#[test]
fn pi_threshold_compaction_once_with_the_block_at_the_next_request() {
    // A 20,000-token window: a reported 19,000 is past the threshold (20,000 - 16,384).
    let tune = Tune {
        big_answers: vec![("FULL1:0", 19_000), ("MID3:0", 19_000)],
    };
    let Some(pi) = Pi::start_with(threshold_script, 20_000, tune) else {
        return;
    };
    let w = &pi.world;
    let answers = |pi: &Pi| -> Vec<String> {
        pi.mock
            .model_requests()
            .into_iter()
            .map(|r| r.answer)
            .collect()
    };

    // The run's answer fills the context: Pi compacts after it, once, and is done. (A bridge
    // that makes Pi work after the compaction makes it fill the context again, and compact
    // again, without end: killed here after two minutes.)
    let full = pi.prompt_within("FULL1 fill the context", Duration::from_secs(120));
    let compactions = support::kinds(&w.events(SESSION))
        .get("PreCompact")
        .copied()
        .unwrap_or(0);
    let seen = answers(&pi);
    assert!(
        full.is_ok() && compactions == 1 && pi_compactions(w) == 1,
        "one compaction and done: {full:?}; {compactions} compactions (Pi's session file: {}), \
         {} model requests: {:?}",
        pi_compactions(w),
        seen.len(),
        &seen[..seen.len().min(12)]
    );
    assert_eq!(
        seen,
        ["FULL1:0", "special:context summarization assistant"],
        "no request after it"
    );

    // The session continued by a new process: its first request carries the block, once.
    pi.prompt("CONT2 continue the session");
    let all = injections::of(w, SESSION);
    let shown = injections::show(&all);
    let recovery: Vec<_> = all.iter().filter(|i| i.mode == "recovery").collect();
    assert_eq!(recovery.len(), 1, "{shown}");
    let block1 = recovery[0].text.clone();
    assert_has(
        &block1,
        "recovered after compaction #1 (auto)",
        "the compaction",
    );
    let reqs = pi.mock.model_requests();
    let cont = reqs.iter().find(|r| r.answer == "CONT2:0").unwrap();
    assert_eq!(
        cont.body.matches(&json_text(&block1)).count(),
        1,
        "the block once, in the next process's first request: {}",
        cont.body
    );
    assert!(!reqs[0].body.contains("sjournal: "), "{}", reqs[0].body);
    assert_eq!(
        answers(&pi),
        [
            "FULL1:0",
            "special:context summarization assistant",
            "CONT2:0"
        ]
    );

    // A compaction in the middle of a run (the tool call's answer filled the context): the
    // run's next request carries the new block, once, and not the old one.
    pi.prompt("MID3 run echo mid");
    assert_eq!(
        answers(&pi),
        [
            "FULL1:0",
            "special:context summarization assistant",
            "CONT2:0",
            "MID3:0",
            "special:context summarization assistant",
            "MID3:1"
        ]
    );
    let all = injections::of(w, SESSION);
    let shown = injections::show(&all);
    let recovery: Vec<_> = all.iter().filter(|i| i.mode == "recovery").collect();
    assert_eq!(recovery.len(), 2, "{shown}");
    let block2 = &recovery[1].text;
    assert_has(
        block2,
        "recovered after compaction #2 (auto)",
        "the compaction",
    );
    let reqs = pi.mock.model_requests();
    let mid = reqs.iter().find(|r| r.answer == "MID3:1").unwrap();
    assert_eq!(
        mid.body.matches(&json_text(block2)).count(),
        1,
        "the new block once, in the run's next request: {}",
        mid.body
    );
    assert!(
        !mid.body.contains("recovered after compaction #1"),
        "{}",
        mid.body
    );
    let st = w.state(SESSION);
    assert_eq!(st["compactions"]["count"], 2, "{}", st["compactions"]);
    assert_eq!(pi_compactions(w), 2);
    let triggers: Vec<Value> = w
        .events(SESSION)
        .into_iter()
        .filter(|(k, _)| k == "PreCompact")
        .map(|(_, p)| json!([p["trigger"], p["pi_reason"]]))
        .collect();
    assert_eq!(
        triggers,
        [json!(["auto", "threshold"]), json!(["auto", "threshold"])]
    );
    w.verify();
}
