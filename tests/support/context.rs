//! Helpers for the context tests: the scenario fixtures (`tests/fixtures/scenarios/`), playing
//! payloads through the library's hook path (the real commit, fold and injection policy, in
//! process), and reading back what was injected.
#![allow(dead_code)]

use std::time::Duration;

use sjournal::config::Config;
use sjournal::format::payload::{decode_system, Injected, KIND_INJECTED};
use sjournal::hook::HookOptions;
use sjournal::journal::{JournalReader, Root};
use sjournal::session::Landed;

/// One hook invocation of a scenario.
#[derive(Debug, Clone)]
pub struct Step {
    pub event: String,
    pub variant: Option<String>,
    pub note: String,
    pub payload: serde_json::Value,
}

impl Step {
    pub fn json(&self) -> String {
        self.payload.to_string()
    }
    pub fn session(&self) -> String {
        self.payload["session_id"].as_str().unwrap().to_owned()
    }
}

/// The steps of `tests/fixtures/scenarios/<name>.jsonl`.
pub fn scenario(name: &str) -> Vec<Step> {
    let text =
        std::fs::read_to_string(super::fixtures_dir().join(format!("scenarios/{name}.jsonl")))
            .unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Step {
                event: v["event"].as_str().unwrap().to_owned(),
                variant: v["variant"].as_str().map(str::to_owned),
                note: v["note"].as_str().unwrap_or("").to_owned(),
                payload: v["payload"].clone(),
            }
        })
        .collect()
}

/// A payload of the real Claude Code capture, in session `session`, with `<OUTDIR>` made
/// `/home/dev`.
pub fn real(event: &str, variant: Option<&str>, session: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(super::fixtures_dir().join("claude-code/payloads-2.1.332.jsonl"))
            .unwrap();
    let line = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["event"] == event && v["variant"].as_str() == variant)
        .unwrap_or_else(|| panic!("no {event} {variant:?} in the capture"));
    let s = line["payload"].to_string().replace("<OUTDIR>", "/home/dev");
    let mut p: serde_json::Value = serde_json::from_str(&s).unwrap();
    p["session_id"] = session.into();
    p
}

/// Runs the library's hook (the production write path: the session's state with the event's
/// batch folded in, and the injection policy) on one payload; returns the context it printed
/// (`additionalContext`), if any.
pub fn hook(root: &Root, config: &Config, payload: &str) -> Option<String> {
    let opts = HookOptions {
        config: config.clone(),
        ..super::hook_opts(root, Duration::from_secs(60))
    };
    let out = super::run_hook(opts, std::io::Cursor::new(payload.as_bytes().to_vec()));
    assert!(
        matches!(out.landed, Some(Landed::Journal { .. })),
        "the event went to the journal: {:?} {:?}",
        out.landed,
        out.diagnostics
    );
    let v: serde_json::Value = serde_json::from_str(out.stdout.as_deref()?).unwrap();
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .or_else(|| v["additional_context"].as_str())
        .map(str::to_owned)
}

/// Plays `steps` through the hook; returns what each one injected.
pub fn play(root: &Root, config: &Config, steps: &[Step]) -> Vec<Option<String>> {
    steps
        .iter()
        .map(|s| hook(root, config, &s.json()))
        .collect()
}

/// The session's `sjournal.injected` records, in order.
pub fn injected(root: &Root, session: &str) -> Vec<Injected> {
    let paths = root.session(session).unwrap();
    let r = JournalReader::open(&paths.journal, None).unwrap();
    r.records()
        .unwrap()
        .map(|r| r.unwrap())
        .filter(|r| r.kind == KIND_INJECTED)
        .map(|r| decode_system::<Injected>(r.seq, r.payload).unwrap())
        .collect()
}

use serde_json::{json, Value};
use sjournal::context::{inject, Channel, Extras, Injection, InjectionPoint, Policy};
use sjournal::fold::digest::encode_event;
use sjournal::fold::{RecordView, State};
use sjournal::format::payload::{encode_system, ContextSet};
use sjournal::host::Host;

/// The project directory of simulated sessions.
pub const PROJECT: &str = "/home/dev/project";

/// A session simulated at library level: each event is folded as the hook folds it, and at
/// the events the hook asks context for (Claude Code's defaults and the policy's configured
/// events) the policy's injection is computed and, when not empty, journaled (folded) as an
/// `sjournal.injected` record, as the hook does.
pub struct Sim {
    pub state: State,
    pub seq: u64,
    pub session: String,
    pub policy: Policy,
    pub extras: Extras,
    /// (event seq, event name, injection) for every non-empty injection.
    pub injections: Vec<(u64, String, Injection)>,
    /// The `permission_mode` events carry.
    pub permission_mode: String,
}

impl Sim {
    pub fn new(session: &str) -> Sim {
        Sim {
            state: State::new(),
            seq: 0,
            session: session.to_owned(),
            policy: Policy::default(),
            extras: Extras::default(),
            injections: Vec::new(),
            permission_mode: "default".into(),
        }
    }

    fn rec(&mut self, kind: &str, payload: &[u8]) -> u64 {
        self.seq += 1;
        self.state.apply(&RecordView {
            seq: self.seq,
            ts_unix_ns: 1_767_225_600_000_000_000 + self.seq as i64 * 1_000_000_000,
            kind,
            payload,
        });
        self.seq
    }

    /// A Claude Code event: `fields` over the common ones. Returns what was injected.
    pub fn ev(&mut self, name: &str, fields: Value) -> Injection {
        let mut v = json!({
            "session_id": self.session,
            "transcript_path": format!("/home/dev/.claude/projects/-project/{}.jsonl", self.session),
            "cwd": PROJECT,
            "permission_mode": self.permission_mode,
            "hook_event_name": name,
        });
        for (k, x) in fields.as_object().unwrap() {
            v[k] = x.clone();
        }
        self.raw(&v)
    }

    /// Any payload, as the hook receives it.
    pub fn raw(&mut self, v: &Value) -> Injection {
        let text = v.to_string();
        let protocol = Host::detect(v);
        let name = protocol.event_name(v).unwrap_or("event").to_owned();
        let seq = self.rec(&name, &encode_event(&name, &text));
        if !self.policy.wants(protocol, &name) {
            return Injection::default();
        }
        let at = InjectionPoint::of_record(&name, &text, seq);
        let inj = inject(&self.state, &at, &self.policy, &self.extras);
        if !inj.is_empty() {
            let rec = inj.record(seq, &name);
            self.rec(KIND_INJECTED, &encode_system(&rec));
            self.injections.push((seq, name, inj.clone()));
        }
        inj
    }

    pub fn start(&mut self, source: &str) -> Injection {
        self.ev("SessionStart", json!({"source": source}))
    }

    pub fn prompt(&mut self, text: &str) -> Injection {
        self.ev("UserPromptSubmit", json!({"prompt": text}))
    }

    /// A tool call that succeeds: PreToolUse then PostToolUse.
    pub fn tool(&mut self, name: &str, input: Value, response: Value) {
        let id = format!("toolu_{:04}", self.seq + 1);
        self.ev(
            "PreToolUse",
            json!({"tool_name": name, "tool_input": input, "tool_use_id": id}),
        );
        self.ev(
            "PostToolUse",
            json!({"tool_name": name, "tool_input": input, "tool_response": response, "tool_use_id": id}),
        );
    }

    /// A tool call that fails with `error` (Claude Code's PostToolUseFailure).
    pub fn fail(&mut self, name: &str, input: Value, error: &str) {
        let id = format!("toolu_{:04}", self.seq + 1);
        self.ev(
            "PreToolUse",
            json!({"tool_name": name, "tool_input": input, "tool_use_id": id}),
        );
        self.ev(
            "PostToolUseFailure",
            json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "error": error, "is_interrupt": false}),
        );
    }

    pub fn bash(&mut self, command: &str) {
        self.tool(
            "Bash",
            json!({"command": command}),
            json!({"stdout": "", "stderr": "", "interrupted": false}),
        );
    }

    pub fn bash_fails(&mut self, command: &str, code: i32, stderr: &str) {
        self.fail(
            "Bash",
            json!({"command": command}),
            &format!("Exit code {code}\n{stderr}"),
        );
    }

    pub fn write(&mut self, path: &str, content: &str) {
        self.tool(
            "Write",
            json!({"file_path": format!("{PROJECT}/{path}"), "content": content}),
            json!({}),
        );
    }

    pub fn edit(&mut self, path: &str, old: &str, new: &str) {
        self.tool(
            "Edit",
            json!({"file_path": format!("{PROJECT}/{path}"), "old_string": old, "new_string": new}),
            json!({}),
        );
    }

    pub fn stop(&mut self, message: &str) -> Injection {
        self.ev(
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": message, "background_tasks": [], "session_crons": []}),
        )
    }

    /// A Claude Code compaction: PreCompact, the compactor's SubagentStop carrying `summary`,
    /// SessionStart(compact) (unless `with_start` is false: a hook matcher that leaves it
    /// out), PostCompact. Returns the SessionStart's injection.
    pub fn compact(&mut self, trigger: &str, summary: &str, with_start: bool) -> Injection {
        self.ev(
            "PreCompact",
            json!({"trigger": trigger, "custom_instructions": null}),
        );
        self.ev(
            "SubagentStop",
            json!({"agent_id": "a2a3236846df54443", "agent_type": "", "stop_hook_active": false, "last_assistant_message": summary}),
        );
        let inj = if with_start {
            self.start("compact")
        } else {
            Injection::default()
        };
        self.ev(
            "PostCompact",
            json!({"trigger": trigger, "compact_summary": summary}),
        );
        inj
    }

    pub fn note(&mut self, channel: Channel, key: &str, text: &str) {
        let c = ContextSet {
            channel: channel.as_str().into(),
            key: key.into(),
            text: text.into(),
        };
        self.rec(
            sjournal::format::payload::KIND_CONTEXT_SET,
            &encode_system(&c),
        );
    }

    /// What the policy would inject now at `kind` (`source`), without journaling it.
    pub fn peek(&self, kind: sjournal::event::EventKind, source: Option<&str>) -> Injection {
        let at = InjectionPoint {
            event_seq: self.seq + 1,
            kind,
            source: source.map(str::to_owned),
            host: sjournal::event::Host::Claude,
        };
        inject(&self.state, &at, &self.policy, &self.extras)
    }

    /// Total characters injected so far.
    pub fn injected_chars(&self) -> usize {
        self.injections.iter().map(|(_, _, i)| i.chars).sum()
    }
}
