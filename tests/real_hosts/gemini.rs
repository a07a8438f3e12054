//! Gemini CLI 0.61.0 (`gemini --yolo -p`), hooks installed by `sjournal install gemini`.

use std::time::Duration;

use serde_json::json;

use crate::mock::{Mock, Rule, Script, Step};
use crate::support::{self, assert_has, World};

pub const COMPRESS_MARKER: &str = "state_snapshot";
pub const SUMMARY: &str = "<state_snapshot>MOCK-SUMMARY: gemini compressed.</state_snapshot>";

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
            Rule {
                key: "CHARLIE3",
                steps: vec![Step::Text("charlie answered")],
            },
            Rule {
                key: "DELTA4",
                steps: vec![Step::Text("delta answered")],
            },
        ],
        special: vec![(COMPRESS_MARKER, SUMMARY)],
        input_tokens: 100,
        big_after: None,
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
    g.prompt("CHARLIE3 carry on");
    g.prompt("/compress");
    g.prompt("DELTA4 after the compression");
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
    // Four prompts and /compress (which fires BeforeAgent too).
    assert_eq!(counts.get("BeforeAgent"), Some(&5), "{counts:?}");
    assert!(
        counts.get("BeforeModel").copied().unwrap_or(0) >= 6,
        "{counts:?}"
    );
    // PreCompress(auto) fires before every model request; only the manual /compress is one.
    let auto = events
        .iter()
        .filter(|(k, p)| k == "PreCompress" && p["trigger"] == "auto")
        .count();
    assert!(auto >= 4, "PreCompress(auto) before each request: {auto}");
    assert_eq!(st["compactions"]["count"], 1, "{}", st["compactions"]);
    assert_eq!(st["turns"]["count"], 4, "{}", st["turns"]);
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
            "CHARLIE3 carry on",
            "DELTA4 after the compression"
        ]
    );
    let injected = w.injected(&sid);
    assert!(!injected.is_empty());
    for (_, text) in &injected {
        assert!(!text.contains("hook_context"), "nested: {text}");
    }
    // The failing shell command is only visible as "Exit Code: 2" in the tool output.
    assert_eq!(st["tools"]["calls"], 3, "{}", st["tools"]);
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

    // BeforeAgent's context reached the model with the prompt; /compress compressed (the
    // summary request happened, and the next prompt's request carries the summary).
    let reqs = g.mock.model_requests();
    let alpha = reqs.iter().find(|r| r.answer == "ALPHA1:0").unwrap();
    let first = &injected
        .iter()
        .find(|(e, _)| e["hook_event_name"] == "BeforeAgent")
        .unwrap()
        .1;
    let escaped = first.replace('<', "&lt;").replace('>', "&gt;");
    let json_text = |t: &str| {
        serde_json::to_string(t)
            .unwrap()
            .trim_matches('"')
            .to_owned()
    };
    assert!(
        alpha.body.contains(&json_text(first)) || alpha.body.contains(&json_text(&escaped)),
        "BeforeAgent's context in the first request: {}",
        alpha.body
    );
    assert!(
        reqs.iter().any(|r| r.answer.starts_with("special:")),
        "a compression request"
    );
    let delta = reqs.iter().find(|r| r.answer == "DELTA4:0").unwrap();
    assert_has(&delta.body, "MOCK-SUMMARY", "the summary after /compress");

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
