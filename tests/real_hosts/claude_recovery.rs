//! The context-recovery scenario, played through the real Claude Code 2.1.332
//! (the same steps as the library-level `tests/fixtures/scenarios/recovery.jsonl`): P1 states
//! two standing rules, the model writes a TodoWrite of three items (done, in progress,
//! pending), writes `src/greet.txt`, reads and edits `README.md`, runs `make check` (the
//! project's Makefile fails it: exit 2, `error: missing target`); P2 "go on"; P3 "also add a
//! farewell", answered "Next I will add the farewell test."; `/compact`, whose mock summary
//! mentions P3 but neither the rules nor the failure; P4 "status?".
//!
//! - A1: SessionStart(compact)'s additionalContext holds the rules verbatim, the todos in list
//!   order, the failure, both files (relative) and where the last turn left off;
//! - A2: the first main request after the compaction request carries it, as
//!   `SessionStart hook additional context: …`;
//! - A3 (the part the real host shows): P3, which the summary has, is left out and named in
//!   `deduped`;
//! - A5: P4 gets nothing, and no injection carries the prompt it answers;
//! - A10: the compactor's SubagentStop (`agent_type ""`) is no subagent: no Subagents section;
//! - A9 (second test): with the installed SessionStart hook's matcher cut to `startup` (no
//!   `compact`, and no `resume`: with `-p` every prompt after the compaction starts with a
//!   resume, which would take the fallback itself), P4's UserPromptSubmit carries the full
//!   block, once, and P5's nothing.
//! - Under stress (third test): the same session with every core kept busy by other processes
//!   and the hook's default deadline (250 ms, counted from when its input is complete): the
//!   block still reaches the first model request after the compaction.

use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::claude::{Claude, Options, PROMPT_PREFIX, SESSION_START_PREFIX};
use crate::injections::{self, json_text, Injection};
use crate::mock::{Rule, Step};
use crate::support::assert_has;

const P1: &str =
    "Add a greeting module. Never touch vendor/ and always run `make check` before finishing.";
const P2: &str = "go on";
const P3: &str = "also add a farewell";
const P4: &str = "status?";
const P5: &str = "thanks, carry on";
const LEFT_OFF: &str = "Next I will add the farewell test.";
/// Mentions P3, not the rules nor the failure.
const SUMMARY: &str =
    "MOCK-SUMMARY: The user wants a greeting module. Their latest request: also add a farewell.";

/// A1's substrings, each with what it stands for.
const MUST_SURVIVE: &[(&str, &str)] = &[
    ("Never touch vendor/", "standing rule, verbatim"),
    ("always run `make check`", "standing rule, verbatim"),
    ("- [x] Read the existing modules", "done todo"),
    (
        "- [>] Write src/greet.txt (in progress)",
        "todo in progress",
    ),
    ("- [ ] Add the farewell test", "pending todo"),
    (
        "`make check` → exit 2",
        "the failing command and its status",
    ),
    ("error: missing target", "its error"),
    ("`src/greet.txt` (created", "the created file, relative"),
    ("`README.md` (modified", "the edited file, relative"),
    (
        "Next I will add the farewell test",
        "where the last turn left off",
    ),
];

fn todos() -> Value {
    json!({"todos": [
        {"content": "Read the existing modules", "status": "completed", "activeForm": "Reading the existing modules"},
        {"content": "Write src/greet.txt", "status": "in_progress", "activeForm": "Writing src/greet.txt"},
        {"content": "Add the farewell test", "status": "pending", "activeForm": "Adding the farewell test"}
    ]})
}

fn script(project: &str) -> Vec<Rule> {
    vec![
        Rule {
            key: "Add a greeting module",
            steps: vec![
                Step::Tool("TodoWrite", todos()),
                Step::Tool(
                    "Write",
                    json!({"file_path": format!("{project}/src/greet.txt"), "content": "hello\n"}),
                ),
                Step::Tool("Read", json!({"file_path": format!("{project}/README.md")})),
                Step::Tool(
                    "Edit",
                    json!({"file_path": format!("{project}/README.md"),
                           "old_string": "# Project", "new_string": "# Project\n\nGreets you."}),
                ),
                Step::Tool(
                    "Bash",
                    json!({"command": "make check", "description": "Run the checks"}),
                ),
            ],
        },
        Rule {
            key: P2,
            steps: vec![Step::Text("Going on with the greeting.")],
        },
        Rule {
            key: P3,
            steps: vec![Step::Text(LEFT_OFF)],
        },
        Rule {
            key: P4,
            steps: vec![Step::Text("The greeting is written; the farewell is next.")],
        },
        Rule {
            key: P5,
            steps: vec![Step::Text("Carrying on.")],
        },
    ]
}

/// Claude Code with TodoWrite offered, the project holding a README and a Makefile whose
/// `check` fails; P1 to P3 played and `/compact`ed (after `between`, which may edit the
/// installed hooks).
fn played(between: impl FnOnce(&Claude)) -> Option<Claude> {
    let opts = Options {
        summary: SUMMARY,
        todo_write: true,
        source_note: false,
    };
    let mut cc = Claude::with(opts, script)?;
    let p = &cc.world.project;
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("README.md"), "# Project\n").unwrap();
    std::fs::write(
        p.join("Makefile"),
        "check:\n\t@echo 'error: missing target' >&2; exit 2\n",
    )
    .unwrap();
    between(&cc);
    let r1 = cc.prompt(P1);
    assert_eq!(r1["is_error"], false, "{r1}");
    cc.prompt(P2);
    cc.prompt(P3);
    cc.prompt("/compact");
    Some(cc)
}

/// The journal holds what the scenario did: the TodoWrite list, both files, the failure, the
/// compaction with the compactor's summary.
fn assert_journal(cc: &Claude) {
    let w = &cc.world;
    let sid = cc.session();
    let sessions = w.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let st = w.state(sid);
    let todos: Vec<(&str, &str)> = st["todos"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["text"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        todos,
        [
            ("Read the existing modules", "completed"),
            ("Write src/greet.txt", "in_progress"),
            ("Add the farewell test", "pending")
        ],
        "{}",
        st["todos"]
    );
    assert_eq!(st["tools"]["failures"], 1, "{}", st["tools"]);
    assert_eq!(st["compactions"]["count"], 1, "{}", st["compactions"]);
    let events = w.events(sid);
    assert!(
        events
            .iter()
            .any(|(k, p)| k == "PostToolUse" && p["tool_name"] == "TodoWrite"),
        "TodoWrite reached the hooks"
    );
    let failure = events
        .iter()
        .find(|(k, _)| k == "PostToolUseFailure")
        .expect("make check's failure");
    assert_eq!(failure.1["tool_input"]["command"], "make check");
    assert_has(
        &failure.1.to_string(),
        "error: missing target",
        "make's stderr",
    );
    assert!(events
        .iter()
        .any(|(k, p)| k == "SubagentStop" && p["agent_type"] == ""));
    w.verify();
}

/// A1 (and A3's left-out P3, A10's missing Subagents section) on a recovery block. At the
/// fallback P3 is no longer the latest request (P4, being answered, is; never echoed).
fn assert_block(i: &Injection, project: &str) {
    let block = &i.text;
    for (s, what) in MUST_SURVIVE {
        assert!(
            block.contains(s),
            "A1: {what} ({s:?}) missing from:\n{block}"
        );
    }
    let at = |s: &str| block.find(s).unwrap();
    assert!(
        at("- [x] Read") < at("- [>] Write") && at("- [>] Write") < at("- [ ] Add"),
        "A1: todos in list order:\n{block}"
    );
    assert!(!block.contains(project), "A1: relative paths:\n{block}");
    assert!(!block.contains(P3), "A3: the summary has P3:\n{block}");
    if i.kind == "SessionStart" {
        assert!(
            i.deduped.iter().any(|d| d.contains("latest request")),
            "A3: P3 named as deduped: {:?}",
            i.deduped
        );
    }
    assert!(!block.contains("## Subagents"), "A10:\n{block}");
    assert!(block.chars().count() <= 4000, "A4: {}", block.len());
}

#[test]
fn claude_code_recovery_block_after_compact_a1_a2_a5_a10() {
    let Some(mut cc) = played(|_| {}) else {
        return;
    };
    cc.prompt(P4);
    assert_journal(&cc);
    let w = &cc.world;
    let sid = cc.session().to_owned();
    let project = w.project.display().to_string();

    let all = injections::of(w, &sid);
    let shown = injections::show(&all);
    let compact: Vec<&Injection> = all
        .iter()
        .filter(|i| i.kind == "SessionStart" && i.source() == "compact")
        .collect();
    assert_eq!(compact.len(), 1, "{shown}");
    let block = compact[0];
    assert_eq!(block.mode, "recovery");
    assert_block(block, &project);
    // A5: nothing twice, the prompt never echoed; P4 (and every other prompt) gets nothing.
    injections::assert_policy(&all, 1, injections::prompt);
    assert!(
        all.iter().all(|i| i.kind != "UserPromptSubmit"),
        "A5: a prompt got context: {shown}"
    );

    // A2: the first main request after the compaction request carries the block, prefixed as
    // Claude Code puts SessionStart context; P4's request has it once, and no prompt context.
    let reqs = cc.mock.model_requests();
    let (ci, next) = cc.around_compaction();
    let ctx = json_text(&format!("{SESSION_START_PREFIX}{}", block.text));
    assert!(
        !reqs[ci].body.contains(&ctx),
        "not in the compaction request"
    );
    assert_has(
        &reqs[next].body,
        &ctx,
        "A2: the first request after /compact",
    );
    assert_eq!(reqs[next].answer, format!("{P4}:0"));
    assert_eq!(reqs[next].body.matches(&json_text(&block.text)).count(), 1);
    assert!(reqs.iter().all(|r| !r.body.contains(PROMPT_PREFIX)));
    w.refresh_fixtures("claude-code/run", "recovery-2.1.332.jsonl", &[&sid]);
}

#[test]
fn claude_code_fallback_without_a_compact_sessionstart_a9() {
    // The installed SessionStart group, limited to `startup`: no SessionStart(compact) or
    // (resume) context; sjournal's installer is still how the hooks got there.
    let Some(mut cc) = played(|cc| {
        let path = cc.world.home.join(".claude/settings.json");
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let groups = v["hooks"]["SessionStart"].as_array_mut().unwrap();
        let ours = groups
            .iter_mut()
            .find(|g| g.to_string().contains("sjournal"))
            .expect("sjournal's SessionStart hook");
        ours["matcher"] = json!("startup");
        std::fs::write(&path, v.to_string()).unwrap();
    }) else {
        return;
    };
    cc.prompt(P4);
    cc.prompt(P5);
    assert_journal(&cc);
    let w = &cc.world;
    let sid = cc.session().to_owned();
    let project = w.project.display().to_string();
    let events = w.events(&sid);
    let starts: Vec<&str> = events
        .iter()
        .filter(|(k, _)| k == "SessionStart")
        .map(|(_, p)| p["source"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(starts, ["startup"], "the matcher holds");

    let all = injections::of(w, &sid);
    let shown = injections::show(&all);
    assert_eq!(all.len(), 1, "only the fallback: {shown}");
    let fallback = &all[0];
    assert_eq!(
        (fallback.kind.as_str(), fallback.mode.as_str()),
        ("UserPromptSubmit", "recovery"),
        "{shown}"
    );
    assert_eq!(
        fallback.event["prompt"], P4,
        "the first prompt after /compact"
    );
    assert_block(fallback, &project);
    injections::assert_policy(&all, 1, injections::prompt);

    // It reached the model with P4, as UserPromptSubmit context; P5's request has it once
    // (from the transcript) and nothing new.
    let reqs = cc.mock.model_requests();
    let ctx = json_text(&format!("{PROMPT_PREFIX}{}", fallback.text));
    let p4 = reqs.iter().find(|r| r.answer == format!("{P4}:0")).unwrap();
    assert_has(&p4.body, &ctx, "A9: the fallback in P4's request");
    let p5 = reqs.iter().find(|r| r.answer == format!("{P5}:0")).unwrap();
    assert_eq!(p5.body.matches(&json_text(&fallback.text)).count(), 1);
    assert_eq!(p5.body.matches(PROMPT_PREFIX).count(), 1, "P5 got nothing");
}

/// Processes that keep every core busy (a shell spinning), until dropped.
struct Busy(Vec<Child>);

impl Busy {
    fn every_core() -> Busy {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        Busy(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .expect("sh")
                })
                .collect(),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn claude_code_recovery_block_reaches_the_model_with_every_core_busy() {
    let busy = Busy::every_core();
    // The hooks as installed, with the default deadline: no patient configuration.
    let Some(mut cc) = played(|cc| {
        std::fs::remove_file(cc.world.root().join("config.toml")).unwrap();
    }) else {
        return;
    };
    cc.prompt(P4);
    drop(busy);
    assert_journal(&cc);
    let w = &cc.world;
    let sid = cc.session().to_owned();
    let project = w.project.display().to_string();
    let all = injections::of(w, &sid);
    let shown = injections::show(&all);
    let block = all
        .iter()
        .find(|i| i.kind == "SessionStart" && i.source() == "compact")
        .unwrap_or_else(|| panic!("no recovery block was injected after /compact: {shown}"));
    assert_eq!(block.mode, "recovery");
    assert_block(block, &project);
    let reqs = cc.mock.model_requests();
    let (_, next) = cc.around_compaction();
    let ctx = json_text(&format!("{SESSION_START_PREFIX}{}", block.text));
    assert_has(
        &reqs[next].body,
        &ctx,
        "the first request after /compact, every core busy",
    );
}
