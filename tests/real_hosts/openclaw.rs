//! OpenClaw 2026.9.6 (on the Node 24 pinned for it), through a loopback Gateway, with the native
//! plugin `sjournal install openclaw` puts in `~/.openclaw/extensions/sjournal/`.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::injections::{self, json_text};
use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

pub const COMPACT_MARKER: &str = "context summarization assistant";
pub const SUMMARY: &str = "MOCK-SUMMARY: openclaw compacted.";
const TOKEN: &str = "sjournal-test-token";

pub struct OpenClaw {
    pub world: World,
    pub mock: Mock,
    pub gateway: Option<Child>,
    pub port: u16,
}

impl Drop for OpenClaw {
    fn drop(&mut self) {
        if let Some(mut g) = self.gateway.take() {
            let _ = g.kill();
            let _ = g.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl OpenClaw {
    pub fn start(script: impl FnOnce(&str) -> Script) -> Option<OpenClaw> {
        let dir = support::installed("openclaw")?;
        let mut world = World::new(dir);
        let mock = Mock::start(script(&world.project.display().to_string()));
        let state = world.home.join(".openclaw");
        std::fs::create_dir_all(&state).unwrap();
        let port = free_port();
        std::fs::write(
            state.join("openclaw.json"),
            serde_json::to_string_pretty(&json!({
                "gateway": {"mode": "local", "port": port, "bind": "loopback",
                            "auth": {"mode": "token", "token": TOKEN}},
                "models": {"providers": {"mock": {"baseUrl": format!("{}/v1", mock.base()),
                    "api": "openai-completions", "apiKey": "sk-local",
                    "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 8192}]}}},
                // No heartbeat: the Gateway's heartbeat runner plays a real agent turn in the
                // main session (`agent:main:main`) once it is due, whenever that falls in the
                // test; sjournal rightly journals it as a session of its own.
                "agents": {"defaults": {"model": {"primary": "mock/mock-model"},
                                        "workspace": world.project.display().to_string(),
                                        "heartbeat": {"every": "0m"}}}
            }))
            .unwrap(),
        )
        .unwrap();
        for (k, v) in [
            ("OPENCLAW_STATE_DIR", state.display().to_string()),
            (
                "OPENCLAW_CONFIG_PATH",
                state.join("openclaw.json").display().to_string(),
            ),
            ("OPENCLAW_GATEWAY_TOKEN", TOKEN.to_owned()),
            ("OPENCLAW_GATEWAY_PORT", port.to_string()),
        ] {
            world.env.insert(k.into(), v);
        }
        world.patient_hook();
        let said = world.sj(&["install", "openclaw"]);
        assert_has(&said, "installed", "install openclaw");
        Some(OpenClaw {
            world,
            mock,
            gateway: None,
            port,
        })
    }

    pub fn openclaw(&self, args: &[&str], limit: u64) -> std::process::Output {
        let mut c = self.world.cmd("openclaw");
        c.args(args);
        self.world.run(c, Duration::from_secs(limit))
    }

    /// Starts the Gateway and waits until it answers.
    pub fn start_gateway(&mut self) {
        let log = std::fs::File::create(self.world.home.join("gateway.log")).unwrap();
        let mut c = self.world.cmd("openclaw");
        c.args([
            "gateway",
            "run",
            "--port",
            &self.port.to_string(),
            "--bind",
            "loopback",
            "--auth",
            "token",
            "--token",
            TOKEN,
        ]);
        c.stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        self.gateway = Some(c.spawn().unwrap());
        // Until it listens (or exits). Under load its start-up checks alone take minutes:
        // the limit is only there so a hung Gateway fails the test.
        let start = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                break;
            }
            let exited = self.gateway.as_mut().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none() && start.elapsed() < Duration::from_secs(420),
                "the Gateway did not start ({exited:?}): {}",
                self.gateway_log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn gateway_log(&self) -> String {
        std::fs::read_to_string(self.world.home.join("gateway.log")).unwrap_or_default()
    }

    /// Stops the Gateway (SIGTERM) and waits for it to exit.
    pub fn stop_gateway(&mut self) {
        if let Some(mut g) = self.gateway.take() {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(g.id() as i32).unwrap(),
                rustix::process::Signal::TERM,
            );
            let start = Instant::now();
            while g.try_wait().unwrap().is_none() {
                if start.elapsed() > Duration::from_secs(60) {
                    let _ = g.kill();
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = g.wait();
        }
    }

    /// One turn through the Gateway in the session `id`.
    pub fn turn(&self, id: &str, message: &str) -> Value {
        let o = self.openclaw(
            &["agent", "--session-id", id, "--message", message, "--json"],
            240,
        );
        assert!(
            o.status.success(),
            "openclaw agent: {}\n{}",
            support::out_text(&o),
            self.gateway_log()
        );
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null)
    }
}

fn script(_project: &str) -> Script {
    Script {
        rules: vec![
            Rule {
                key: "ALPHA1",
                steps: vec![
                    Step::Tool("exec", json!({"command": "echo hello"})),
                    Step::Tool("exec", json!({"command": "ls /nonexistent-sjournal-dir"})),
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
        input_tokens: 1000,
        big_after: None,
        special_delay_ms: 0,
    }
}

const KEY: &str = "agent:main:explicit:sj-1";

#[test]
fn openclaw_through_a_gateway_with_compaction_reset_and_stop() {
    let Some(mut oc) = OpenClaw::start(script) else {
        return;
    };
    let plugin_dir = oc.world.home.join(".openclaw/extensions/sjournal");
    assert!(plugin_dir.join("index.ts").exists());
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(oc.world.home.join(".openclaw/openclaw.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        config["plugins"]["entries"]["sjournal"]["hooks"]["allowConversationAccess"],
        true
    );
    assert_eq!(
        config["gateway"]["mode"], "local",
        "the rest of the configuration kept"
    );

    oc.start_gateway();
    oc.turn("sj-1", "ALPHA1 run echo hello, then list a missing dir");
    oc.turn("sj-1", "BRAVO2 say something");
    let o = oc.openclaw(&["sessions", "compact", KEY, "--json"], 120);
    assert!(
        o.status.success(),
        "sessions compact: {}",
        support::out_text(&o)
    );
    oc.turn("sj-1", "CHARLIE3 after the compaction");
    let params = json!({"key": KEY}).to_string();
    let o = oc.openclaw(
        &[
            "gateway",
            "call",
            "sessions.reset",
            "--params",
            &params,
            "--json",
        ],
        120,
    );
    assert!(
        o.status.success(),
        "sessions.reset: {}",
        support::out_text(&o)
    );
    oc.turn("sj-1", "DELTA4 after the reset");
    oc.stop_gateway();
    let w = &oc.world;

    // One session, OpenClaw's, nothing unattributed (subagent_ended at the reset names only
    // the session key).
    let sessions = w.sessions();
    let detail: Vec<String> = sessions
        .iter()
        .map(|s| {
            let id = s["session_id"].as_str().unwrap_or("");
            format!("{s}\n  {:?}", w.events(id))
        })
        .collect();
    assert_eq!(sessions.len(), 1, "{detail:#?}\n{}", oc.gateway_log());
    assert_eq!(sessions[0]["session_id"], "sj-1");
    assert_eq!(sessions[0]["host"], "openclaw");
    let events = w.events("sj-1");
    let counts = support::kinds(&events);
    for (kind, n) in [
        ("before_prompt_build", 4),
        ("agent_end", 4),
        ("before_tool_call", 2),
        ("after_tool_call", 2),
        ("before_compaction", 1),
        ("after_compaction", 1),
    ] {
        assert_eq!(
            counts.get(kind).copied().unwrap_or(0),
            n,
            "{kind}: {counts:?}"
        );
    }
    let field = |kind: &str, key: &str| -> Vec<Value> {
        events
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, p)| p[key].clone())
            .collect()
    };
    assert_eq!(
        field("session_start", "source"),
        [json!("startup"), json!("clear")]
    );
    assert_eq!(
        field("session_end", "reason"),
        [json!("reset"), json!("shutdown")]
    );
    assert_eq!(
        field("session_start", "sessionKind"),
        [json!("main"), json!("main")]
    );
    let pre = &events
        .iter()
        .find(|(k, _)| k == "before_compaction")
        .unwrap()
        .1;
    assert_eq!(pre["trigger"], "manual", "`sessions compact` outside a run");
    let usage = pre["contextUsagePercent"]
        .as_f64()
        .expect("usage from tokenCount/budget");
    let tokens = pre["event"]["tokenCount"].as_f64().unwrap();
    assert!(
        (usage - 100.0 * tokens / 128_000.0).abs() < 1e-9,
        "{usage} {tokens}"
    );
    let st = w.state("sj-1");
    assert_eq!(st["identity"]["host"], "openclaw");
    assert_eq!(st["identity"]["session_kind"], "main");
    assert_eq!(st["turns"]["count"], 4, "{}", st["turns"]);
    assert_eq!(st["tools"]["calls"], 2, "{}", st["tools"]);
    assert_eq!(
        st["tools"]["failures"], 1,
        "the failing exec: {}",
        st["tools"]
    );
    assert_eq!(st["compactions"]["count"], 1, "{}", st["compactions"]);
    assert_eq!(st["compactions"]["last"]["trigger"], "manual");
    w.verify();

    // The reset, as it happened: the old conversation is about to go (before_reset), the
    // session ends (reason reset), a fresh one starts (source clear) — in that order. OpenClaw
    // also reports the end of the session's own run at a reset as a `subagent_ended` naming
    // the session itself: the session is no subagent of its own (none was spawned here). And
    // the model every hook's context names is the session's model.
    let mut problems = Vec::new();
    let at = |pred: &dyn Fn(&(String, Value)) -> bool| events.iter().position(pred);
    let before_reset = at(&|(k, _)| k == "before_reset");
    let end_reset = at(&|(k, p)| k == "session_end" && p["reason"] == "reset");
    let start_clear = at(&|(k, p)| k == "session_start" && p["source"] == "clear");
    if !(before_reset < end_reset && end_reset < start_clear && before_reset.is_some()) {
        let order: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
        problems.push(format!(
            "the reset out of order (before_reset {before_reset:?}, session_end {end_reset:?}, \
             session_start {start_clear:?}): {order:?}"
        ));
    }
    if st["subagents"]["by_id"] != json!({}) || st["subagents"]["stopped"] != 0 {
        problems.push(format!("a subagent nobody spawned: {}", st["subagents"]));
    }
    if st["identity"]["model"] != "mock/mock-model" {
        problems.push(format!("the model: {}", st["identity"]));
    }
    assert!(problems.is_empty(), "{problems:#?}");

    // What sjournal injected: nothing before the compaction (nothing new to say); after it,
    // the recovery block at the next prompt (the fallback: OpenClaw takes context only at
    // before_prompt_build), once; after the reset, nothing (the session's record has nothing
    // the fresh conversation lacks but the block's pointer).
    let all = injections::of(w, "sj-1");
    let shown = injections::show(&all);
    let at: Vec<(&str, &str)> = all
        .iter()
        .map(|i| (i.kind.as_str(), i.mode.as_str()))
        .collect();
    assert_eq!(at, [("before_prompt_build", "recovery")], "{shown}");
    injections::assert_policy(&all, 1, injections::prompt);
    assert_eq!(
        injections::prompt(&all[0]).as_deref(),
        Some("CHARLIE3 after the compaction")
    );
    let block = &all[0].text;
    for (needle, what) in [
        ("recovered after compaction #1 (manual)", "the compaction"),
        (
            "Original request: ALPHA1 run echo hello",
            "the first request",
        ),
        ("\"bravo answered\"", "where the last turn left off"),
        (
            "`ls /nonexistent-sjournal-dir` → exit 2",
            "the unresolved failure",
        ),
    ] {
        assert_has(block, needle, what);
    }

    // What reached the model: nothing of sjournal's before the compaction; the block
    // prepended to CHARLIE3's prompt (`prependContext`), once.
    let reqs = oc.mock.model_requests();
    injections::quiet_until_compaction(&reqs);
    let charlie = reqs.iter().find(|r| r.answer == "CHARLIE3:0").unwrap();
    assert_eq!(
        charlie.body.matches(&json_text(block)).count(),
        1,
        "the block once, with the prompt: {}",
        charlie.body
    );

    // Uninstall removes the plugin and its configuration entry, nothing else.
    let said = w.sj(&["uninstall", "openclaw"]);
    assert_has(&said, "removed", "uninstall openclaw");
    assert!(!plugin_dir.exists());
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(w.home.join(".openclaw/openclaw.json")).unwrap(),
    )
    .unwrap();
    assert!(
        config["plugins"]["entries"].get("sjournal").is_none(),
        "{config}"
    );
    assert_eq!(config["gateway"]["mode"], "local");
    w.refresh_fixtures("openclaw", "bridge-payloads-2026.9.6.jsonl", &["sj-1"]);
}
