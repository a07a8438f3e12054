//! Budgets: the recovery block never exceeds its budget (nor the hard
//! cap under the host's spill limit, whatever the configuration says), gives up parts in the
//! truncation order (resolved failures first, then mode lines, finished subagents, files
//! oldest first, done todos, ...; header and pointer never), keeps persistent notes under 40%
//! of the budget, closes with a marker naming what was left out and the command that prints
//! it, and is the same for the same state at every budget.

use crate::support::context::*;
use serde_json::json;
use sjournal::context::{inject, Channel, Extras, InjectionPoint, Policy};
use sjournal::event::{EventKind, Host};
use sjournal::fold::State;
use sjournal::limits::CONTEXT_BUDGET_MAX_CHARS;

/// A session with every section of the block filled.
fn busy() -> Sim {
    let mut sim = Sim::new("busy-1c2d3e4f");
    sim.start("startup");
    sim.note(
        Channel::Persistent,
        "style",
        "Keep functions short; document every public item.",
    );
    for i in 0..9 {
        sim.prompt(&format!(
            "Step {i}: port module {i}. Never change the public API of module {i}."
        ));
        sim.write(&format!("src/mod_{i:02}.rs"), "a\nb\n");
        sim.edit(&format!("src/mod_{i:02}.rs"), "a", "c");
        if i % 3 == 0 {
            sim.bash_fails(&format!("cargo test -p m{i}"), 101, "error: test failed");
        }
        if i % 6 == 0 {
            sim.bash(&format!("cargo test -p m{i} --release"));
        }
        sim.stop(&format!("Ported module {i}; next is module {}.", i + 1));
    }
    sim.tool(
        "TodoWrite",
        json!({"todos": (0..14).map(|i| json!({"content": format!("port module {i}"),
            "status": if i < 8 { "completed" } else if i == 8 { "in_progress" } else { "pending" }}))
            .collect::<Vec<_>>()}),
        json!({}),
    );
    sim.ev(
        "PreToolUse",
        json!({"tool_name": "Agent", "tool_input": {"subagent_type": "Explore", "description": "Map the callers"}, "tool_use_id": "ag1"}),
    );
    sim.ev(
        "SubagentStart",
        json!({"agent_id": "e1e2e3e4e5", "agent_type": "Explore"}),
    );
    sim.ev(
        "SubagentStart",
        json!({"agent_id": "f1f2f3f4f5", "agent_type": "Explore"}),
    );
    sim.ev(
        "SubagentStop",
        json!({"agent_id": "f1f2f3f4f5", "agent_type": "Explore", "last_assistant_message": "Found 12 callers."}),
    );
    sim.permission_mode = "acceptEdits".into();
    sim.prompt("keep going");
    sim
}

fn compact(state: &State, budget: usize) -> sjournal::context::Injection {
    let at = InjectionPoint {
        event_seq: state.seq + 1,
        kind: EventKind::SessionStart,
        source: Some("compact".into()),
        host: Host::Claude,
    };
    let policy = Policy {
        budget_chars: budget,
        ..Policy::default()
    };
    inject(state, &at, &policy, &Extras::default())
}

#[test]
fn every_budget_is_respected() {
    let sim = busy();
    let full = compact(&sim.state, CONTEXT_BUDGET_MAX_CHARS);
    assert!(!full.truncated, "{}", full.text);
    for section in [
        "## Session notes",
        "## Instructions from the user",
        "## Plan and todos",
        "## Where it left off",
        "## Unresolved failures",
        "## Files changed",
        "## Subagents and background work",
        "## Mode",
        "Full record: sjournal show",
    ] {
        assert!(full.text.contains(section), "{section} in:\n{}", full.text);
    }
    let n = full.chars;
    for budget in (400..=n + 10).rev().step_by(37) {
        let r = compact(&sim.state, budget);
        assert!(
            r.chars <= budget,
            "budget {budget}: {} chars\n{}",
            r.chars,
            r.text
        );
        assert_eq!(r.chars, r.text.chars().count());
        assert_eq!(r.truncated, budget < n, "budget {budget}");
        assert_eq!(r.truncated, !r.dropped.is_empty());
        assert!(r.text.starts_with("sjournal: recovered after compaction"));
        assert!(
            r.text
                .contains("Full record: sjournal show --session busy-1c2d3e4f"),
            "the pointer stays at {budget}:\n{}",
            r.text
        );
        if r.truncated {
            let last = r.text.lines().last().unwrap();
            assert!(
                last.starts_with(&format!("[left out to fit {budget} chars: ")),
                "the marker closes a shortened block: {last}"
            );
        }
        assert_eq!(r, compact(&sim.state, budget), "deterministic");
    }
}

#[test]
fn truncation_order() {
    let sim = busy();
    let n = compact(&sim.state, CONTEXT_BUDGET_MAX_CHARS).chars;
    // Just under the full size, only the first steps act: resolved failures first.
    let r = compact(&sim.state, n - 20);
    assert!(
        r.dropped[0].starts_with("failures: fixed"),
        "{:?}",
        r.dropped
    );
    assert!(!r.text.contains("- fixed:") || r.text.matches("- fixed:").count() < 2);
    // At the default budget's order: fixed lines, mode, finished subagents, then files,
    // oldest first, before any instruction or unresolved failure.
    let r = compact(&sim.state, 1800);
    let kinds: Vec<&str> = r
        .dropped
        .iter()
        .map(|d| d.split(':').next().unwrap())
        .collect();
    let first = |k: &str| kinds.iter().position(|x| *x == k);
    assert!(
        first("failures").unwrap() < first("mode").unwrap(),
        "{kinds:?}"
    );
    assert!(
        first("mode").unwrap() < first("files").unwrap(),
        "{kinds:?}"
    );
    assert!(
        r.dropped.contains(&"files: src/mod_00.rs".to_owned()),
        "{:?}",
        r.dropped
    );
    assert!(
        !r.text.contains("`src/mod_00.rs`"),
        "oldest file first:\n{}",
        r.text
    );
    assert!(
        r.text.contains("- and "),
        "files replaced by a count:\n{}",
        r.text
    );
    // Tight: done todos collapse to a count; the newest instructions and the notes stay.
    let r = compact(&sim.state, 1100);
    assert!(r.text.contains("- [x] 8 done"), "{}", r.text);
    assert!(r.text.contains("module 8."), "{}", r.text);
    assert!(r.text.contains("[style]"), "{}", r.text);
    assert!(r.text.contains("done todos"), "{}", r.text);
}

#[test]
fn persistent_notes_are_capped_at_40_percent() {
    let mut sim = busy();
    sim.note(Channel::Persistent, "huge", &"word ".repeat(3000));
    let r = compact(&sim.state, 4000);
    assert!(r.chars <= 4000);
    let notes = r
        .text
        .split("\n\n")
        .find(|s| s.starts_with("## Session notes"))
        .unwrap();
    assert!(
        notes.chars().count() <= 1600,
        "{} chars",
        notes.chars().count()
    );
    assert!(r.text.contains("## Instructions from the user"));
    assert!(
        r.dropped.iter().any(|d| d == "notes: huge (cut)"),
        "{:?}",
        r.dropped
    );
}

#[test]
fn the_hard_cap_holds_whatever_the_configuration() {
    let mut sim = busy();
    for i in 0..200 {
        sim.note(
            Channel::Persistent,
            &format!("n{i:03}"),
            &"long note text ".repeat(10),
        );
    }
    let r = compact(&sim.state, 1_000_000);
    assert_eq!(r.budget_chars, CONTEXT_BUDGET_MAX_CHARS);
    assert!(r.chars <= CONTEXT_BUDGET_MAX_CHARS);
    // Other events keep their own, smaller budgets, and never more than the configured one.
    let p = Policy {
        budget_chars: 300,
        ..Policy::default()
    };
    assert_eq!(p.budget(sjournal::context::Mode::Resume), 300);
    assert_eq!(
        Policy::default().budget(sjournal::context::Mode::Clear),
        400
    );
}

/// Whether `line` of a fitted block is whole: a line of the block as rendered in full, a line
/// the fitting made (a count in place of what it left out, the closing line), or a line the
/// truncation order shortened on purpose, ending in `…` where it was cut.
fn whole(line: &str, full: &[&str]) -> bool {
    if full.contains(&line) {
        return true;
    }
    if line.starts_with("- and ") || line.starts_with("- [x] ") {
        return true;
    }
    let marker = ["[sjournal: left out to fit ", "[left out to fit "];
    if marker.iter().any(|m| line.starts_with(m)) && line.ends_with(']') {
        return true;
    }
    if let Some(head) = line.strip_suffix('…') {
        return full.iter().any(|f| f.starts_with(head));
    }
    false
}

/// The recovery block under budgets too small for its header and pointer: whole lines only,
/// never a word cut at the budget ("Full reco"), and the closing line that says what was
/// left out and how to see it, or nothing at all when even that does not fit.
#[test]
fn a_budget_too_small_drops_whole_lines_and_keeps_the_closing_line() {
    let sim = busy();
    let full = compact(&sim.state, CONTEXT_BUDGET_MAX_CHARS);
    let lines: Vec<&str> = full.text.lines().collect();
    let r = compact(&sim.state, 160);
    assert!(r.chars <= 160, "{}", r.text);
    assert!(!r.text.contains("Full reco\n") && !r.text.ends_with("Full reco"));
    let last = r.text.lines().last().unwrap();
    assert!(
        last.starts_with("[sjournal: left out to fit 160 chars")
            && last.contains("sjournal show --session busy-1c2d3e4f"),
        "the closing line: {last}\n{}",
        r.text
    );
    for l in r.text.lines() {
        assert!(whole(l, &lines), "a cut line at 160: {l:?}\n{}", r.text);
    }
    // Too small even for the closing line: nothing, said in `dropped`.
    let r = compact(&sim.state, 20);
    assert_eq!((r.text.as_str(), r.chars, r.truncated), ("", 0, true));
    assert!(
        r.dropped.last().unwrap().starts_with("all: "),
        "{:?}",
        r.dropped
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// Any budget: the block fits it; every line is whole (or shortened on purpose, with its
    /// `…`); a shortened block ends with the closing line naming what went and the command
    /// that prints it; the same budget gives the same bytes. A budget of 0 is no block at all.
    #[test]
    fn every_budget_gives_whole_lines_and_the_closing_line(budget in 0usize..=6000) {
        let sim = busy();
        let full = compact(&sim.state, CONTEXT_BUDGET_MAX_CHARS);
        let lines: Vec<&str> = full.text.lines().collect();
        let r = compact(&sim.state, budget);
        proptest::prop_assert!(r.chars <= budget.min(CONTEXT_BUDGET_MAX_CHARS));
        proptest::prop_assert_eq!(r.chars, r.text.chars().count());
        for l in r.text.lines() {
            proptest::prop_assert!(whole(l, &lines), "budget {}: {:?}", budget, l);
        }
        if r.truncated && !r.text.is_empty() {
            let last = r.text.lines().last().unwrap();
            proptest::prop_assert!(
                last.contains(&format!("left out to fit {budget} chars")),
                "budget {}: {}", budget, last
            );
            proptest::prop_assert!(
                r.text.contains("sjournal show --session busy-1c2d3e4f"),
                "budget {}: how to see it\n{}", budget, r.text
            );
        }
        if budget == 0 {
            // A budget of 0 turns the block off (`inject` returns before building it).
            proptest::prop_assert!(r.text.is_empty(), "budget 0: {}", r.text);
        } else if r.text.is_empty() {
            proptest::prop_assert!(r.truncated && budget < 90, "budget {}", budget);
        }
        proptest::prop_assert_eq!(r, compact(&sim.state, budget));
    }
}
