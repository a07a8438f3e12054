//! Replay: the driver runs a journal through a fold record by record, showing what each
//! record changed in the state and the context injected after it. Here it runs with a small
//! fold of the test's own (turns, tools with failures, open tool calls, compactions, a
//! rendered context at SessionStart and UserPromptSubmit) over the checked-in clean fixture
//! journal, and its steps must match the checked-in expected output
//! (`tests/fixtures/replay/`; rewrite with `SJOURNAL_WRITE_FIXTURES=1` after a deliberate
//! change). The final state hash must equal folding the journal in one go, for the whole
//! journal and for every `--to`; a replay from the middle must show the same changes as the
//! full replay for the same records. The CLI's output over the same journal is pinned too.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sjournal::format::hash::content_hash;
use sjournal::format::payload::{decode_event, is_system_kind};
use sjournal::format::Hash;
use sjournal::journal::{JournalReader, Record};
use sjournal::replay::{replay, CheckStatus, Fold, Range, Step};
use support::*;

#[derive(Debug, Default, Serialize)]
struct MiniState {
    turns: u64,
    prompt: Option<String>,
    tools: BTreeMap<String, ToolStats>,
    open: BTreeMap<String, String>,
    compactions: u64,
    ended: Option<String>,
}

#[derive(Debug, Default, Serialize)]
struct ToolStats {
    calls: u64,
    failures: u64,
}

#[derive(Default)]
struct Mini(MiniState);

impl Fold for Mini {
    type State = MiniState;

    fn apply(&mut self, rec: &Record<'_>) -> sjournal::Result<()> {
        if is_system_kind(rec.kind) {
            return Ok(());
        }
        let v: serde_json::Value =
            serde_json::from_str(decode_event(rec.seq, rec.payload)?).unwrap_or_default();
        let s = |k: &str| v[k].as_str().unwrap_or("").to_owned();
        let st = &mut self.0;
        match rec.kind {
            "UserPromptSubmit" => {
                st.turns += 1;
                st.prompt = Some(s("prompt"));
            }
            "PreToolUse" => {
                st.open.insert(s("tool_use_id"), s("tool_name"));
            }
            "PostToolUse" | "PostToolUseFailure" => {
                st.open.remove(&s("tool_use_id"));
                let t = st.tools.entry(s("tool_name")).or_default();
                t.calls += 1;
                t.failures += u64::from(rec.kind == "PostToolUseFailure");
            }
            "PreCompact" => st.compactions += 1,
            "SessionEnd" => st.ended = Some(s("reason")),
            _ => {}
        }
        Ok(())
    }

    fn state(&self) -> &MiniState {
        &self.0
    }

    fn state_hash(&self) -> Hash {
        content_hash(&rmp_serde::to_vec(&self.0).unwrap())
    }

    fn context(&self, rec: &Record<'_>) -> Option<String> {
        matches!(rec.kind, "SessionStart" | "UserPromptSubmit").then(|| {
            format!(
                "turns: {}\ntask: {}\nopen tool calls: {}",
                self.0.turns,
                self.0.prompt.as_deref().unwrap_or("-"),
                self.0.open.len()
            )
        })
    }
}

fn clean_fixture() -> PathBuf {
    fixtures_dir().join("corrupt/clean.sjl")
}

fn steps(path: &Path, range: Range) -> (Vec<Step>, sjournal::replay::End) {
    let reader = JournalReader::open(path, None).unwrap();
    let mut fold = Mini::default();
    let mut out = Vec::new();
    let end = replay(&reader, &mut fold, range, |s| {
        out.push(s);
        Ok(())
    })
    .unwrap();
    (out, end)
}

/// The state hash of folding records 1..=to in one go, without the replay driver.
fn one_shot(path: &Path, to: u64) -> String {
    let reader = JournalReader::open(path, None).unwrap();
    let mut fold = Mini::default();
    for rec in reader.records().unwrap() {
        let rec = rec.unwrap();
        if rec.seq > to {
            break;
        }
        fold.apply(&rec).unwrap();
    }
    fold.state_hash().to_hex()
}

/// Compares `actual` with a checked-in file (or writes it, when asked to).
fn golden(name: &str, actual: &str) {
    let path = fixtures_dir().join("replay").join(name);
    if std::env::var_os("SJOURNAL_WRITE_FIXTURES").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (write it with SJOURNAL_WRITE_FIXTURES=1)",
            path.display()
        )
    });
    assert_eq!(
        actual, expected,
        "{name} differs from the checked-in output"
    );
}

#[test]
fn replay_of_the_fixture_matches_expected_output() {
    let (steps, end) = steps(&clean_fixture(), Range::default());
    assert_eq!(steps.len(), 8);
    assert_eq!(end.last_seq, 8);
    let mut text = String::new();
    for s in &steps {
        text.push_str(&serde_json::to_string(s).unwrap());
        text.push('\n');
    }
    golden("mini-fold.expected.jsonl", &text);

    // What the steps must show, independently of the golden file.
    let prompt = &steps[1];
    assert_eq!(prompt.kind, "UserPromptSubmit");
    assert!(prompt.changes.iter().any(|c| c.path == "/turns"));
    // The fixture journal has no `sjournal.injected` records: the re-derived text is shown
    // as not journaled.
    let check = prompt.injection.as_ref().unwrap();
    assert_eq!(check.status, CheckStatus::NotJournaled);
    assert!(check.journaled.is_none());
    assert!(check
        .derived
        .as_deref()
        .unwrap()
        .contains("task: run echo hello"));
    assert!(steps[2]
        .changes
        .iter()
        .any(|c| c.path.starts_with("/open/")));
    assert!(steps[3].changes.iter().any(|c| c.path == "/tools/Bash"));
    assert!(steps[4]
        .changes
        .iter()
        .any(|c| c.path == "/tools/Bash/failures"));
    assert!(steps[5].changes.is_empty(), "Stop changes nothing here");
    assert!(steps.iter().filter(|s| s.injection.is_some()).count() == 2);
}

#[test]
fn final_hash_equals_folding_in_one_go() {
    let path = clean_fixture();
    let (all, end) = steps(&path, Range::default());
    assert_eq!(end.state_hash, one_shot(&path, 8));
    assert_eq!(all.last().unwrap().state_hash, end.state_hash);
    for to in 1..=8 {
        let (_, end) = steps(
            &path,
            Range {
                from: 1,
                to: Some(to),
            },
        );
        assert_eq!(end.last_seq, to);
        assert_eq!(end.state_hash, one_shot(&path, to), "--to {to}");
        assert_eq!(end.state_hash, all[to as usize - 1].state_hash);
    }
}

#[test]
fn replay_from_the_middle_shows_the_same_changes() {
    let path = clean_fixture();
    let (all, _) = steps(&path, Range::default());
    let (part, end) = steps(
        &path,
        Range {
            from: 4,
            to: Some(6),
        },
    );
    assert_eq!(part.iter().map(|s| s.seq).collect::<Vec<_>>(), [4, 5, 6]);
    assert_eq!(end.steps, 3);
    for s in &part {
        let full = &all[s.seq as usize - 1];
        assert_eq!(s.changes, full.changes, "seq {}", s.seq);
        assert_eq!(s.state_hash, full.state_hash);
    }
}

#[test]
fn replay_stops_at_damage() {
    let path = fixtures_dir().join("corrupt/flipped-bit.sjl");
    let (steps, end) = steps(&path, Range::default());
    assert_eq!(steps.len(), 3);
    assert!(end.stop.is_some());
}

/// The CLI over the same journal (with the fold it has today), pinned, and its exit codes.
#[test]
fn cli_replay_output_is_pinned() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    std::fs::create_dir_all(r.join("sessions")).unwrap();
    std::fs::copy(clean_fixture(), r.join("sessions/fixture-session.sjl")).unwrap();
    let out = sjournal(r)
        .args(["replay", "--json", "--session", "fixture-session"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    golden("replay-cli.expected.jsonl", &text);
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["final"], true);
    assert_eq!(last["last_seq"], 8);

    let ranged = sjournal(r)
        .args([
            "replay",
            "--session",
            "fixture-session",
            "--from",
            "3",
            "--to",
            "4",
        ])
        .output()
        .unwrap();
    let ranged = String::from_utf8(ranged.stdout).unwrap();
    assert!(ranged.starts_with("seq 3 "), "{ranged}");
    assert!(ranged.contains("final state after seq 4"), "{ranged}");

    std::fs::copy(
        fixtures_dir().join("corrupt/flipped-bit.sjl"),
        r.join("sessions/fixture-session.sjl"),
    )
    .unwrap();
    sjournal(r)
        .args(["replay", "--session", "fixture-session"])
        .assert()
        .code(1);
    sjournal(r)
        .args([
            "replay",
            "--session",
            "fixture-session",
            "--from",
            "5",
            "--to",
            "2",
        ])
        .assert()
        .code(2);
}

/// The CLI's final state hash is `sjournal state`'s, for the whole journal and for `--to`.
#[test]
fn final_hash_equals_sjournal_state() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    std::fs::create_dir_all(r.join("sessions")).unwrap();
    std::fs::copy(clean_fixture(), r.join("sessions/fixture-session.sjl")).unwrap();
    let last = |args: &[&str]| -> serde_json::Value {
        let out = sjournal(r).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        serde_json::from_str(text.lines().last().unwrap()).unwrap()
    };
    let s = ["--session", "fixture-session"];
    for to in [None, Some("3"), Some("8")] {
        let mut replay_args = vec!["replay", "--json", s[0], s[1]];
        let mut state_args = vec!["state", "--json", "--no-snapshot", s[0], s[1]];
        if let Some(n) = to {
            replay_args.extend(["--to", n]);
            state_args.extend(["--at", n]);
        }
        let replayed = last(&replay_args);
        let state = last(&state_args);
        assert_eq!(replayed["state_hash"], state["state_hash"], "--to {to:?}");
        assert_eq!(replayed["last_seq"], state["seq"]);
    }
}
