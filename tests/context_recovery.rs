//! The context-recovery acceptance checks (A1–A12, one test each) at library level, over the
//! scenario `tests/fixtures/scenarios/recovery.jsonl` (real Claude Code 2.1.332 payload shapes: a
//! request with two standing rules, a TodoWrite of three items, a Write and an Edit, a failing
//! `make check`, three more prompts, a manual /compact whose summary mentions the latest
//! request but neither the rules nor the failure, and a prompt after it), played through the
//! library's hook path (the real commit, fold and policy) or through the built `sjournal hook`.
//! The real-host versions of A1, A2 and A9 replay the same payload sequence through Claude Code
//! itself (the real-hosts harness).

use crate::support;
use crate::support::context::*;
use serde_json::json;
use sjournal::config::Config;
use sjournal::context::{Channel, ExtraSection, Mode};
use sjournal::event::EventKind;
use sjournal::journal::Root;
use sjournal::replay::{replay, session::SessionFold, CheckStatus};

const P1: &str =
    "Add a greeting module. Never touch vendor/ and always run `make check` before finishing.";

/// Plays the scenario (optionally without some steps) through the library's hook; returns the
/// steps and what each injected.
fn played(skip: impl Fn(&Step) -> bool) -> (tempfile::TempDir, Root, Vec<(Step, Option<String>)>) {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let steps: Vec<Step> = scenario("recovery")
        .into_iter()
        .filter(|s| !skip(s))
        .collect();
    let out = play(&root, &Config::default(), &steps);
    (dir, root, steps.into_iter().zip(out).collect())
}

fn at<'a>(
    run: &'a [(Step, Option<String>)],
    event: &str,
    variant: Option<&str>,
) -> Vec<&'a Option<String>> {
    run.iter()
        .filter(|(s, _)| s.event == event && s.variant.as_deref() == variant)
        .map(|(_, o)| o)
        .collect()
}

/// The A1 substrings, each with what it stands for.
const MUST_SURVIVE: &[(&str, &str)] = &[
    ("Never touch vendor/", "standing rule, verbatim"),
    ("always run `make check`", "standing rule, verbatim"),
    ("- [x] Read the existing modules", "done todo"),
    (
        "- [>] Write src/greet.txt (in progress)",
        "todo in progress",
    ),
    ("- [ ] Add the farewell test", "pending todo"),
    ("make check", "the failing command"),
    ("exit 2", "its exit status"),
    ("error: missing target", "its error"),
    ("src/greet.txt", "created file, relative"),
    ("README.md", "edited file"),
    (
        "Next I will add the farewell test",
        "where the last turn left off",
    ),
];

fn assert_a1(block: &str) {
    for (s, what) in MUST_SURVIVE {
        assert!(block.contains(s), "{what} ({s:?}) missing from:\n{block}");
    }
    let todo = |s: &str| block.find(s).unwrap();
    assert!(
        todo("- [x] Read") < todo("- [>] Write") && todo("- [>] Write") < todo("- [ ] Add"),
        "todos in list order:\n{block}"
    );
    assert!(
        !block.contains(PROJECT),
        "paths relative to the project:\n{block}"
    );
}

#[test]
fn a1_compact_block_carries_what_the_summary_lost() {
    let (_d, _root, run) = played(|_| false);
    let block = at(&run, "SessionStart", Some("compact"))[0]
        .as_deref()
        .expect("a recovery block at SessionStart(compact)");
    assert_a1(block);
    assert!(block.starts_with("sjournal: recovered after compaction #1 (manual)"));
    assert!(block.contains("Full record: sjournal show --session 7d0c5a1e-"));
}

/// A1 through the built binary, as the host runs it: the exact reply JSON.
#[test]
fn a1_through_the_sjournal_hook_binary() {
    let dir = tempfile::tempdir().unwrap();
    let mut compact_reply = None;
    for s in scenario("recovery") {
        let out = support::run(
            dir.path(),
            &["hook", "--deadline-ms", support::PATIENT_MS],
            s.json().as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0));
        if s.event == "SessionStart" && s.variant.as_deref() == Some("compact") {
            compact_reply = Some(String::from_utf8(out.stdout).unwrap());
        }
    }
    let v: serde_json::Value = serde_json::from_str(&compact_reply.unwrap()).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert_a1(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap(),
    );
}

#[test]
fn a3_gap_aware_against_the_summary() {
    let (_d, root, run) = played(|_| false);
    let block = at(&run, "SessionStart", Some("compact"))[0]
        .clone()
        .unwrap();
    assert!(
        !block.contains("also add a farewell"),
        "the summary has P3:\n{block}"
    );
    let rec = injected(&root, &run[0].0.session())
        .into_iter()
        .find(|i| i.mode.as_deref() == Some("recovery"))
        .unwrap();
    assert!(
        rec.deduped.iter().any(|d| d.contains("latest request")),
        "{:?}",
        rec.deduped
    );
    assert!(block.contains("error: missing target"));

    // With a summary that quotes the error line, the failure leaves the block.
    let mut sim = Sim::new("a3");
    sim.start("startup");
    sim.prompt(P1);
    sim.bash_fails("make check", 2, "error: missing target");
    sim.stop("make check failed.");
    let b = sim.compact(
        "manual",
        "We ran make check: `error: missing target`.",
        true,
    );
    assert!(!b.text.contains("missing target"), "{}", b.text);
    assert!(
        b.deduped.iter().any(|d| d.starts_with("failures:")),
        "{:?}",
        b.deduped
    );
    assert!(
        b.text.contains("Never touch vendor/"),
        "the rules stay: {}",
        b.text
    );
}

#[test]
fn a4_budget_holds_with_200_files_and_60_prompts() {
    let (_d, _root, run) = played(|_| false);
    let block = at(&run, "SessionStart", Some("compact"))[0]
        .clone()
        .unwrap();
    assert!(block.chars().count() <= 4000);

    let mut sim = Sim::new("a4-5e9f0c1a");
    sim.start("startup");
    for i in 0..60 {
        sim.prompt(&format!(
            "Step {i}: refactor part {i}. Always keep rule {i} about module {i} in mind."
        ));
        if i == 0 {
            for f in 0..200 {
                sim.write(&format!("src/gen/file_{f:03}.rs"), "fn x() {}\n");
            }
        }
        sim.stop(&format!("Done with step {i}."));
    }
    let b = sim.compact("auto", "Refactoring.", true);
    assert!(b.chars <= 4000, "{} chars", b.chars);
    assert!(b
        .text
        .starts_with("sjournal: recovered after compaction #1 (auto)"));
    assert!(b
        .text
        .contains("Full record: sjournal show --session a4-5e9f0c1a"));
    for i in 57..60 {
        assert!(
            b.text.contains(&format!("Always keep rule {i} about")),
            "instruction {i} (one of the 3 newest):\n{}",
            b.text
        );
    }
    let last = b.text.lines().last().unwrap();
    assert!(
        last.starts_with("[left out to fit 4000 chars:") && last.contains("files"),
        "{last}"
    );
    assert!(
        b.text.contains("sjournal show --session a4-5e9f0c1a files"),
        "the command that prints the files:\n{}",
        b.text
    );
    assert!(b.truncated && !b.dropped.is_empty());
}

/// No item key is injected twice with the same hash between two compactions; the prompt after
/// the compaction gets nothing, and no injection echoes the prompt it answers.
#[test]
fn a5_nothing_injected_twice_between_compactions() {
    let (_d, root, run) = played(|_| false);
    let p4 = at(&run, "UserPromptSubmit", None)[3];
    assert_eq!(p4, &None, "P4 gets nothing");
    for (s, out) in &run {
        if let (Some(prompt), Some(text)) = (s.payload["prompt"].as_str(), out) {
            assert!(!text.contains(prompt), "{prompt:?} echoed in:\n{text}");
        }
    }
    assert_no_repeats(&injected(&root, &run[0].0.session()));

    // Notes: a persistent entry is injected once after it is set, again only when it changes,
    // and once more after the next compaction (the model's view was reset).
    let mut sim = Sim::new("a5");
    sim.start("startup");
    sim.note(Channel::Persistent, "rules", "Use tabs.");
    let first = sim.prompt("one");
    assert!(first.text.contains("[rules] Use tabs."), "{}", first.text);
    assert_eq!(first.mode, Mode::Prompt);
    assert!(sim.prompt("two").text.is_empty());
    sim.note(Channel::Persistent, "rules", "Use spaces.");
    assert!(sim.prompt("three").text.contains("[rules] Use spaces."));
    assert!(sim.prompt("four").text.is_empty());
    sim.stop("ok");
    let b = sim.compact("auto", "stuff", true);
    assert!(b.text.contains("[rules] Use spaces."), "{}", b.text);
    assert!(sim.prompt("five").text.is_empty());
    let recs: Vec<_> = sim
        .injections
        .iter()
        .map(|(s, n, i)| i.record(*s, n))
        .collect();
    assert_no_repeats(&recs);
}

/// Between two compactions (a recovery injection starts a new window), no key+hash twice.
fn assert_no_repeats(recs: &[sjournal::format::payload::Injected]) {
    let mut window = std::collections::BTreeSet::new();
    for r in recs {
        if r.mode.as_deref() == Some("recovery") {
            window.clear();
        }
        for item in &r.items {
            assert!(
                window.insert((item.key.clone(), item.hash.clone())),
                "{} injected twice unchanged (event seq {})",
                item.key,
                r.event_seq
            );
        }
    }
}

#[test]
fn a6_token_cost() {
    let (_d, _root, run) = played(|_| false);
    let chars = |o: &Option<String>| o.as_deref().map_or(0, |t| t.chars().count());
    let total: usize = run.iter().map(|(_, o)| chars(o)).sum();
    let compact = chars(at(&run, "SessionStart", Some("compact"))[0]);
    let startup = chars(at(&run, "SessionStart", Some("startup"))[0]);
    assert!(
        total <= compact + startup + 200,
        "{total} > {compact} + {startup} + 200"
    );

    // 20 prompts, no compaction, no ephemeral entries: nothing at all on UserPromptSubmit.
    let mut sim = Sim::new("a6");
    sim.start("startup");
    for i in 0..20 {
        sim.prompt(&format!("prompt {i}: keep going"));
        sim.bash("cargo test");
        sim.edit("src/lib.rs", "a", "b");
        sim.stop("done");
    }
    let on_prompts: usize = sim
        .injections
        .iter()
        .filter(|(_, n, _)| n == "UserPromptSubmit")
        .map(|(_, _, i)| i.chars)
        .sum();
    assert_eq!(on_prompts, 0);
}

#[test]
fn a7_resume_is_a_delta() {
    let mut sim = Sim::new("a7");
    sim.start("startup");
    sim.prompt(P1);
    sim.tool(
        "TodoWrite",
        json!({"todos": [{"content": "x", "status": "pending"}]}),
        json!({}),
    );
    sim.write("src/a.rs", "a\n");
    sim.stop("done");
    sim.ev("SessionEnd", json!({"reason": "other"}));
    let r = sim.start("resume");
    assert!(r.chars <= 600);
    assert!(
        r.text.is_empty(),
        "a clean stop leaves nothing to say: {}",
        r.text
    );

    // kill -9 between PreToolUse and PostToolUse: no Post, no Stop, no SessionEnd.
    sim.prompt("run the migration");
    sim.ev(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "make migrate"}, "tool_use_id": "toolu_k9"}),
    );
    let r = sim.start("resume");
    assert_eq!(r.mode, Mode::Resume);
    assert!(r.chars <= 600, "{}", r.text);
    assert!(
        r.text.contains("interrupted") && r.text.contains("`make migrate`"),
        "{}",
        r.text
    );
    assert!(
        !r.text.contains("## Files") && !r.text.contains("## Plan"),
        "{}",
        r.text
    );
    // Said once: the next resume does not repeat it.
    assert!(sim.start("resume").text.is_empty());
}

#[test]
fn a8_clear_gets_almost_nothing() {
    // A host that keeps the session id across /clear (Claude Code starts a new one, whose
    // journal has nothing of the old task anyway).
    let mut sim = Sim::new("a8");
    sim.start("startup");
    for p in [P1, "go on", "also add a farewell", "status?"] {
        sim.prompt(p);
        sim.stop("ok");
    }
    sim.note(Channel::Persistent, "style", "Prefer small commits.");
    let previous = "Previous session 7d0c5a1e (cleared) had 2 open todos: `sjournal show --session 7d0c5a1e-3f42-4b8e-9a61-2c5d8e0f4b17 todos`";
    sim.extras.handoff.push(ExtraSection {
        key: "handoff:7d0c5a1e".into(),
        title: "## Previous session".into(),
        lines: vec![format!("- {previous}")],
    });
    let c = sim.start("clear");
    assert_eq!(c.mode, Mode::Clear);
    assert!(c.chars <= 400, "{}", c.text);
    for p in [P1, "go on", "also add a farewell", "status?"] {
        assert!(!c.text.contains(p), "{p} in:\n{}", c.text);
    }
    assert!(c.text.contains("[style] Prefer small commits."));
    assert!(
        c.text.contains(previous),
        "the caller's pointer: {}",
        c.text
    );
}

#[test]
fn a9_fallback_when_no_sessionstart_follows_the_compaction() {
    let (_d, _root, run) =
        played(|s| s.event == "SessionStart" && s.variant.as_deref() == Some("compact"));
    let prompts = at(&run, "UserPromptSubmit", None);
    let first_after = prompts[3].as_deref().expect("the full block, once");
    assert_a1(first_after);
    assert!(
        !first_after.contains("status?"),
        "never the prompt it answers"
    );

    // Gemini CLI: PreCompress, then BeforeAgent; no SessionStart after compressing.
    let mut sim = Sim::new("a9-gemini");
    let g = |name: &str, extra: serde_json::Value| {
        let mut v = json!({"session_id": "a9-gemini", "cwd": PROJECT, "hook_event_name": name,
            "timestamp": "2026-12-01T06:35:42.379Z"});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    sim.raw(&g("SessionStart", json!({"source": "startup"})));
    sim.raw(&g("BeforeAgent", json!({"prompt": P1})));
    sim.raw(&g(
        "AfterAgent",
        json!({"prompt_response": "Next I will write the module."}),
    ));
    sim.raw(&g("PreCompress", json!({"trigger": "manual"})));
    let first = sim.raw(&g("BeforeAgent", json!({"prompt": "go on"})));
    assert_eq!(first.mode, Mode::Recovery);
    assert!(first.text.contains("Never touch vendor/"), "{}", first.text);
    assert!(
        first.text.contains("Next I will write the module."),
        "{}",
        first.text
    );
    let second = sim.raw(&g("BeforeAgent", json!({"prompt": "and now?"})));
    assert!(second.text.is_empty(), "{}", second.text);
    // The second prompt after it carries nothing: the real scenario has only one.
    assert!(prompts.len() == 4);
}

/// Gemini CLI keeps the latest turns as they were when it compresses: after a second
/// compression the history it sends still holds the first recovery block. The second block
/// waits for that history (the first request after the compaction, after the prompt's
/// BeforeAgent), and leaves out what it holds: each line of the first block once in the
/// conversation, not twice.
#[test]
fn a9_gemini_a_second_block_leaves_out_what_the_kept_history_holds() {
    const CTX: &str = "<session_context>\nThis is the Gemini CLI.\n</session_context>";
    let mut sim = Sim::new("a9-gem2");
    let g = |name: &str, extra: serde_json::Value| {
        let mut v = json!({"session_id": "a9-gem2", "cwd": PROJECT, "hook_event_name": name,
            "timestamp": "2026-12-01T06:35:42.379Z"});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    // The model's requests, as Gemini CLI's BeforeModel carries them.
    let request = |sim: &mut Sim, msgs: &[(&str, String)]| {
        sim.raw(&g("PreCompress", json!({"trigger": "auto"})));
        let messages: Vec<serde_json::Value> = msgs
            .iter()
            .map(|(r, c)| json!({"role": r, "content": c}))
            .collect();
        sim.raw(&g(
            "BeforeModel",
            json!({"llm_request": {"model": "gemini-2.5-flash", "messages": messages}}),
        ));
    };
    let esc = |t: &str| t.replace('<', "&lt;").replace('>', "&gt;");
    sim.raw(&g("SessionStart", json!({"source": "startup"})));
    sim.raw(&g("BeforeAgent", json!({"prompt": P1})));
    let p1 = format!("{CTX}{P1}");
    request(&mut sim, &[("user", p1.clone())]);
    sim.raw(&g(
        "AfterAgent",
        json!({"prompt": P1, "prompt_response": "Next I will write the module."}),
    ));
    // Compressed on its own: the request's history was rewritten.
    sim.raw(&g("BeforeAgent", json!({"prompt": "go on"})));
    let summary = format!("{CTX}<state_snapshot>S1</state_snapshot>");
    let ack = "Got it. Thanks for the additional context!".to_owned();
    request(
        &mut sim,
        &[
            ("user", summary.clone()),
            ("model", ack.clone()),
            ("user", "go on".into()),
        ],
    );
    sim.raw(&g(
        "AfterAgent",
        json!({"prompt": "go on", "prompt_response": "gone on"}),
    ));
    let first = sim.raw(&g("BeforeAgent", json!({"prompt": "carry on"})));
    assert_eq!(first.mode, Mode::Recovery);
    let turn = format!("carry on<hook_context>{}</hook_context>", esc(&first.text));
    request(
        &mut sim,
        &[
            ("user", summary.clone()),
            ("model", ack.clone()),
            ("user", "go on".into()),
            ("model", "gone on".into()),
            ("user", turn.clone()),
        ],
    );
    sim.raw(&g(
        "AfterAgent",
        json!({"prompt": "carry on", "prompt_response": "went on"}),
    ));
    // `/compress`, then another process: SessionStart(resume), the prompt, its request.
    sim.raw(&g("PreCompress", json!({"trigger": "manual"})));
    sim.raw(&g("SessionEnd", json!({"reason": "exit"})));
    sim.raw(&g("SessionStart", json!({"source": "resume"})));
    let early = sim.raw(&g("BeforeAgent", json!({"prompt": "and now?"})));
    assert_ne!(
        early.mode,
        Mode::Recovery,
        "before the host shows its history:\n{}",
        early.text
    );
    let summary2 = format!("{CTX}<state_snapshot>S2</state_snapshot>");
    request(
        &mut sim,
        &[
            ("user", summary2.clone()),
            ("model", ack.clone()),
            ("user", turn.clone()),
            ("model", "went on".into()),
            ("user", "and now?".into()),
        ],
    );
    sim.raw(&g(
        "AfterAgent",
        json!({"prompt": "and now?", "prompt_response": "this and that"}),
    ));
    let second = sim.raw(&g("BeforeAgent", json!({"prompt": "what is left?"})));
    assert_eq!(second.mode, Mode::Recovery, "{}", second.text);
    assert!(second.text.contains("compaction #2"), "{}", second.text);
    assert!(
        second.text.contains("this and that"),
        "what is new: {}",
        second.text
    );
    // Every line of the first block the kept history holds is not repeated.
    for line in first.text.lines().filter(|l| l.starts_with("- ")) {
        assert!(
            !second.text.lines().any(|l| l == line),
            "repeated: {line}\nfirst:\n{}\nsecond:\n{}",
            first.text,
            second.text
        );
    }
    assert!(first.text.contains("Original request:"), "{}", first.text);
}

/// Codex compacts at the start of the next `codex exec`: PreCompact, PostCompact, then
/// SessionStart(resume), which takes the fallback, then SessionStart(compact) (measured with
/// Codex 0.171.0, tests/real_hosts/codex.rs). Both reach the same request: the second adds only
/// what is new, here nothing.
#[test]
fn a9_a_late_sessionstart_compact_repeats_nothing() {
    let resumed = |note: bool| {
        let mut sim = Sim::new("a9-codex");
        sim.start("startup");
        sim.prompt(P1);
        sim.bash_fails("make check", 2, "error: missing target");
        sim.stop("Next I will add the farewell test.");
        sim.ev(
            "PreCompact",
            json!({"trigger": "auto", "custom_instructions": null}),
        );
        sim.ev(
            "PostCompact",
            json!({"trigger": "auto", "compact_summary": "stuff"}),
        );
        let resume = sim.start("resume");
        assert_eq!(resume.mode, Mode::Recovery);
        assert!(
            resume.text.contains("error: missing target"),
            "{}",
            resume.text
        );
        if note {
            sim.note(Channel::Persistent, "rules", "Use tabs.");
        }
        let late = sim.start("compact");
        assert!(sim.prompt("status?").text.is_empty());
        late
    };
    let late = resumed(false);
    assert!(late.text.is_empty(), "repeated:\n{}", late.text);
    // Something new by then is all it carries.
    let late = resumed(true);
    assert_eq!(late.mode, Mode::Recovery);
    assert!(late.text.contains("[rules] Use tabs."), "{}", late.text);
    assert!(!late.text.contains("make check"), "{}", late.text);
}

#[test]
fn a10_the_compactor_is_not_a_subagent() {
    let (_d, root, run) = played(|_| false);
    let block = at(&run, "SessionStart", Some("compact"))[0]
        .clone()
        .unwrap();
    assert!(!block.contains("## Subagents"), "{block}");
    let (state, _) = sjournal::snapshot::load_state(
        &root,
        &run[0].0.session(),
        &sjournal::snapshot::LoadOptions::latest(),
    )
    .unwrap();
    assert!(state.subagents.by_id.is_empty());
    assert_eq!(state.subagents.internal_stops, 1);
    let c = state.compactions.last.unwrap();
    assert!(c.summary.unwrap().contains("also add a farewell"));

    // A real subagent still running does show.
    let mut sim = Sim::new("a10");
    sim.start("startup");
    sim.prompt("delegate");
    sim.ev(
        "PreToolUse",
        json!({"tool_name": "Agent", "tool_input": {"subagent_type": "general-purpose", "description": "Echo from subagent", "prompt": "echo sub"}, "tool_use_id": "toolu_ag"}),
    );
    sim.ev(
        "SubagentStart",
        json!({"agent_id": "a021a7d8d00b0d07d", "agent_type": "general-purpose"}),
    );
    let b = sim.compact("auto", "delegated", true);
    assert!(
        b.text
            .contains("- running: general-purpose a021a7d8: \"Echo from subagent\""),
        "{}",
        b.text
    );
}

/// Re-folding the journal from scratch and re-rendering every recorded injection reproduces
/// each `sjournal.injected` blake3; the same in-process, and through `sjournal replay` run
/// twice under other time zones and locales.
#[test]
fn a11_every_injection_is_re_derived_byte_for_byte() {
    let (dir, root, run) = played(|_| false);
    let session = run[0].0.session();
    let reader =
        sjournal::journal::JournalReader::open(&root.session(&session).unwrap().journal, None)
            .unwrap();
    let mut fold = SessionFold::default();
    let mut checks = Vec::new();
    let end = replay(&reader, &mut fold, Default::default(), |s| {
        checks.extend(s.injection);
        Ok(())
    })
    .unwrap();
    drop(reader);
    let journaled = checks.iter().filter(|c| c.journaled.is_some()).count();
    assert_eq!(journaled, injected(&root, &session).len());
    assert!(journaled >= 1);
    for c in &checks {
        assert_eq!(c.status, CheckStatus::Match, "{c:?}");
    }
    assert!(end.differing.is_empty());

    let out = |env: &[(&str, &str)]| {
        let o = support::run_env(
            dir.path(),
            &["replay", "--json", "--session", &session],
            b"",
            env,
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let a = out(&[("TZ", "UTC"), ("LC_ALL", "C")]);
    let b = out(&[
        ("TZ", "Asia/Kathmandu"),
        ("LC_ALL", "tr_TR.UTF-8"),
        ("LANG", "de_DE.UTF-8"),
    ]);
    assert_eq!(a, b);
    assert!(a.contains("\"status\":\"match\""));
    assert!(!a.contains("\"status\":\"differs\""));
}

/// A changed journaled text is caught: replay flags it and exits 1.
#[test]
fn a11_replay_flags_a_journaled_text_that_differs() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let steps = scenario("recovery");
    // Journal the scenario with a smaller budget than the replay will use: the texts differ.
    let small = Config::parse(
        "[hook]\ncontext_budget_chars = 700\n",
        std::path::Path::new("x"),
    )
    .unwrap();
    play(&root, &small, &steps);
    let o = support::run(
        dir.path(),
        &["replay", "--json", "--session", &steps[0].session()],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"status\":\"differs\""));
    // With the configuration the hook ran with, everything matches again.
    std::fs::write(
        dir.path().join("config.toml"),
        "[hook]\ncontext_budget_chars = 700\n",
    )
    .unwrap();
    let o = support::run(
        dir.path(),
        &["replay", "--json", "--session", &steps[0].session()],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A12: every must-survive fact is, in what the model gets after the compaction, either in
/// the host's summary (retained) or in sjournal's block (restored); none is missing.
#[test]
fn a12_retention_probe() {
    let (_d, _root, run) = played(|_| false);
    let summary = run
        .iter()
        .find(|(s, _)| s.event == "SubagentStop")
        .map(|(s, _)| {
            s.payload["last_assistant_message"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .unwrap();
    let block = at(&run, "SessionStart", Some("compact"))[0]
        .clone()
        .unwrap();
    let mut facts: Vec<(&str, &str)> = MUST_SURVIVE.iter().map(|(s, _)| (*s, "")).collect();
    facts.push(("also add a farewell", "the latest request"));
    let mut missing = Vec::new();
    let mut table = Vec::new();
    for (fact, _) in &facts {
        let class = if summary.contains(fact) {
            "retained"
        } else if block.contains(fact) {
            "restored"
        } else {
            missing.push(*fact);
            "missing"
        };
        table.push(format!("{class:9} {fact}"));
    }
    println!("{}", table.join("\n"));
    assert!(missing.is_empty(), "missing after compaction: {missing:?}");
    assert!(table.iter().any(|t| t.starts_with("retained")));
    assert!(table.iter().any(|t| t.starts_with("restored")));
}

/// The prompt never comes back: not at the fallback, not as the latest request.
#[test]
fn the_prompt_being_answered_is_never_echoed() {
    let mut sim = Sim::new("echo");
    sim.start("startup");
    sim.prompt("first: never delete the fixtures");
    sim.stop("ok");
    sim.compact("auto", "x", false);
    let r = sim.prompt("second: from now on, always answer in French");
    assert_eq!(r.mode, Mode::Recovery);
    assert!(!r.text.contains("second:"), "{}", r.text);
    assert!(r.text.contains("never delete the fixtures"));
    let peek = sim.peek(EventKind::SessionStart, Some("compact"));
    assert!(
        peek.text.contains("Latest request: second:"),
        "{}",
        peek.text
    );
}

/// `sjournal show` prints the full lists the block points to, as text and as JSON.
#[test]
fn show_prints_the_full_lists() {
    let dir = tempfile::tempdir().unwrap();
    let steps = scenario("recovery");
    for s in &steps {
        support::run(
            dir.path(),
            &["hook", "--deadline-ms", support::PATIENT_MS],
            s.json().as_bytes(),
        );
    }
    let session = steps[0].session();
    let o = support::run(dir.path(), &["show", "--session", &session, "--json"], b"");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let prompts = v["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 4);
    assert_eq!(prompts[0]["text"], P1);
    assert_eq!(prompts[0]["turn"], 1);
    assert_eq!(
        prompts[0]["instructions"][0],
        "Never touch vendor/ and always run `make check` before finishing."
    );
    assert_eq!(v["todos"]["todos"]["items"].as_array().unwrap().len(), 3);
    let f = &v["failures"][0];
    assert_eq!(
        (f["detail"].as_str(), f["exit_code"].as_i64()),
        (Some("make check"), Some(2))
    );
    let files: Vec<&str> = v["files"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["README.md", "src/greet.txt"]);
    assert!(v["agents"]["subagents"].as_array().unwrap().is_empty());

    let o = support::run(
        dir.path(),
        &["show", "--session", &session, "failures", "files"],
        b"",
    );
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with("Failures (1 unresolved, 0 fixed)"),
        "{text}"
    );
    assert!(text.contains("      error: missing target"), "{text}");
    assert!(text.contains("  src/greet.txt  created"), "{text}");
    assert!(
        !text.contains("Prompts"),
        "only the lists asked for: {text}"
    );
    let o = support::run(dir.path(), &["show", "--session", "nope"], b"");
    assert_eq!(o.status.code(), Some(2));
}
