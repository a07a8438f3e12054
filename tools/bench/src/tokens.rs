//! Token cost of what the hook injects (BENCHMARKS.md, "Context injected"): a scripted session of
//! 20 prompts with one automatic compaction after the 12th, played through `sjournal hook`
//! (the binary, spawned per event as a host runs it), with real Claude Code payload shapes.
//! Injected text stays in the host's transcript and is re-sent with every request until the
//! next compaction, so two figures per binary: the characters injected in all, and the
//! characters carried, summed over the session's model requests (one per prompt: the text
//! injected since the last compaction, at the time of each prompt).
//!
//! `sjournal-bench tokens --sjournal BIN [--baseline BIN]`: with `--baseline` (a build of the
//! code before the injection policy) the same session runs through it too; without, the
//! baseline is a model of the code before: the same-sized block on every SessionStart and
//! UserPromptSubmit.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const FIXTURE: &str = include_str!("../../../tests/fixtures/claude-code/payloads-2.1.332.jsonl");
const SESSION: &str = "b3f0c2d1-7a4e-4c55-9e21-00000000tok";
pub const PROMPTS: usize = 20;
const COMPACT_AFTER: usize = 12;

fn template(event: &str, variant: Option<&str>) -> Value {
    let line = FIXTURE
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["event"] == event && v["variant"].as_str() == variant)
        .unwrap();
    let text = line["payload"].to_string().replace("<OUTDIR>", "/home/dev");
    let mut p: Value = serde_json::from_str(&text).unwrap();
    p["session_id"] = SESSION.into();
    p
}

fn with(event: &str, variant: Option<&str>, fields: Value) -> Value {
    let mut p = template(event, variant);
    for (k, v) in fields.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

/// The session's events, in order.
pub fn script() -> Vec<Value> {
    let mut ev = vec![template("SessionStart", Some("startup"))];
    let mut n = 0;
    let mut call = |ev: &mut Vec<Value>, name: &str, input: Value, fail: Option<&str>| {
        n += 1;
        let id = format!("toolu_tok_{n:04}");
        ev.push(with(
            "PreToolUse",
            None,
            json!({"tool_name": name, "tool_input": input, "tool_use_id": id}),
        ));
        ev.push(match fail {
            Some(e) => with(
                "PostToolUseFailure",
                None,
                json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "error": e}),
            ),
            None => with(
                "PostToolUse",
                None,
                json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "tool_response": {}}),
            ),
        });
    };
    for turn in 0..PROMPTS {
        let prompt = if turn == 0 {
            "Port the parser to the new AST. Never change the public API, and always run `cargo test` before finishing.".to_owned()
        } else {
            format!("Continue with step {turn} of the port.")
        };
        ev.push(with("UserPromptSubmit", None, json!({"prompt": prompt})));
        if turn == 0 {
            call(
                &mut ev,
                "TodoWrite",
                json!({"todos": [
                    {"content": "Port the expressions", "status": "in_progress", "activeForm": "Porting"},
                    {"content": "Port the statements", "status": "pending", "activeForm": "Porting"},
                    {"content": "Update the docs", "status": "pending", "activeForm": "Updating"}]}),
                None,
            );
        }
        let file = format!("/home/dev/project/src/parser/part{}.rs", turn % 6);
        call(&mut ev, "Read", json!({"file_path": file}), None);
        call(
            &mut ev,
            "Edit",
            json!({"file_path": file, "old_string": "old_ast::Node", "new_string": "ast::Node"}),
            None,
        );
        let failing = turn % 5 == 2;
        call(
            &mut ev,
            "Bash",
            json!({"command": "cargo test", "description": "Run the tests"}),
            failing.then_some("Exit code 101\ntest parser::expr ... FAILED\nerror: test failed"),
        );
        ev.push(with(
            "Stop",
            None,
            json!({"last_assistant_message": format!("Step {turn} is done; the next step ports part {}.", (turn + 1) % 6)}),
        ));
        if turn + 1 == COMPACT_AFTER {
            ev.push(template("PreCompact", Some("auto")));
            ev.push(template("SubagentStop", Some("compaction")));
            ev.push(template("SessionStart", Some("compact")));
            ev.push(template("PostCompact", Some("auto")));
        }
    }
    ev
}

/// What one binary injected over the script.
#[derive(Debug, Default, Clone)]
pub struct Cost {
    /// Characters injected in all.
    pub injected: usize,
    /// Characters carried: per prompt, what was injected since the last compaction.
    pub carried: usize,
    /// Injections made, and the largest.
    pub injections: usize,
    pub largest: usize,
    /// The injection after the compaction.
    pub compact_block: usize,
}

/// Plays the script through `bin hook` in a fresh root.
pub fn measure(bin: &Path) -> Cost {
    let dir = tempfile::tempdir().unwrap();
    let mut cost = Cost::default();
    let mut resident = 0;
    for p in script() {
        let mut child = Command::new(bin)
            .arg("--root")
            .arg(dir.path())
            .args(["hook", "--deadline-ms", "10000"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(p.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let event = p["hook_event_name"].as_str().unwrap();
        let chars = serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| {
                v["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .map(|t| t.chars().count())
            })
            .unwrap_or(0);
        if event == "PreCompact" {
            resident = 0;
        }
        if chars > 0 {
            cost.injections += 1;
            cost.injected += chars;
            cost.largest = cost.largest.max(chars);
            resident += chars;
            if p["source"] == "compact" {
                cost.compact_block = chars;
            }
        }
        if event == "UserPromptSubmit" {
            cost.carried += resident;
        }
    }
    cost
}

/// The table rows: this build against the baseline binary, or against the model of the code
/// before.
pub fn rows(bin: &Path, baseline: Option<&Path>) -> Vec<String> {
    let now = measure(bin);
    let (label, before) = match baseline {
        Some(b) => ("the code before the policy".to_owned(), measure(b)),
        None => {
            // The model of the code before: a block like the compact one at each of
            // the 20 prompts and 2 SessionStarts.
            let n = PROMPTS + 2;
            let block = now.compact_block;
            let mut resident = 0;
            let mut carried = 0;
            for turn in 0..PROMPTS {
                if turn == COMPACT_AFTER {
                    resident = block;
                }
                resident += block;
                carried += resident;
            }
            (
                format!("a {block}-char block on every prompt (model)"),
                Cost {
                    injected: n * block,
                    carried,
                    injections: n,
                    largest: block,
                    compact_block: block,
                },
            )
        }
    };
    let r = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    vec![
        format!(
            "| context injected over a 20-prompt session with one compaction (chars; ~tokens = chars/4) | {} ({} injections, largest {}) | {label}: {} ({} injections) | {:.2}x | <= compact + startup block + 200 |",
            now.injected, now.injections, now.largest, before.injected, before.injections,
            r(now.injected, before.injected)
        ),
        format!(
            "| context carried in the window, summed over the 20 prompts' requests (chars) | {} | {label}: {} | {:.2}x | |",
            now.carried,
            before.carried,
            r(now.carried, before.carried)
        ),
    ]
}
