//! The command line over the fold: `state --json` reports the seq and the state hash the
//! library computes; `context show` prints exactly what the injection policy gives (under the
//! root's config.toml, which it honours); the primitives' exit
//! codes say yes (0) or no (1); a compare-and-set conflict exits 1 with the current seq;
//! `snapshot` and `snapshot rebuild --all` write snapshots that `state` then uses.

use crate::support;

use assert_cmd::Command;
use sjournal::context::{inject, Extras, InjectionPoint, Policy};
use sjournal::event::{EventKind, Host};
use sjournal::snapshot::{load_state, LoadOptions};
use support::{event, real_claude, temp_root, write_journal};

const S: &str = "50834a7c-d1b4-423d-a384-ec7fa97d6241";

fn cmd(root: &sjournal::journal::Root) -> Command {
    let mut c = Command::cargo_bin("sjournal").unwrap();
    c.arg("--root").arg(root.dir());
    c
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap()
}

fn setup() -> (tempfile::TempDir, sjournal::journal::Root) {
    let (d, root) = temp_root();
    let recs: Vec<_> = real_claude()
        .iter()
        .filter(|f| f.raw.contains(S))
        .map(|f| event(&f.raw))
        .collect();
    write_journal(&root, S, &recs, 1_700_000_000_000_000_000);
    (d, root)
}

#[test]
fn state_json_reports_seq_and_hash() {
    let (_d, root) = setup();
    let (state, _) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    let out = cmd(&root)
        .args(["state", "--session", S, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = json(&out.stdout);
    assert_eq!(v["seq"], state.seq);
    assert_eq!(v["state_hash"], state.state_hash().to_hex());
    assert_eq!(v["state"]["identity"]["session_id"], S);
    let at = cmd(&root)
        .args(["state", "--session", S, "--json", "--at", "3"])
        .output()
        .unwrap();
    assert_eq!(json(&at.stdout)["seq"], 3);
    let human = cmd(&root).args(["state", "--session", S]).output().unwrap();
    assert!(String::from_utf8(human.stdout)
        .unwrap()
        .contains(&state.state_hash().to_hex()));
    cmd(&root)
        .args(["state", "--session", "nope"])
        .assert()
        .code(2);
}

#[test]
fn context_show_prints_exactly_the_rendered_text() {
    let (_d, root) = setup();
    cmd(&root)
        .args([
            "context",
            "set",
            "--session",
            S,
            "--key",
            "rules",
            "Run the tests.",
        ])
        .assert()
        .success();
    cmd(&root)
        .args([
            "context",
            "set",
            "--session",
            S,
            "--key",
            "now",
            "--channel",
            "ephemeral",
        ])
        .write_stdin("from stdin\n")
        .assert()
        .success();
    let (state, _) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    let compact = InjectionPoint {
        event_seq: state.seq + 1,
        kind: EventKind::SessionStart,
        source: Some("compact".into()),
        host: Host::Claude,
    };
    let render = |budget: usize| {
        let policy = Policy {
            budget_chars: budget,
            ..Policy::default()
        };
        inject(&state, &compact, &policy, &Extras::default()).text
    };
    for budget in [4000, 500] {
        let expected = render(budget);
        let out = cmd(&root)
            .args([
                "context",
                "show",
                "--session",
                S,
                "--budget",
                &budget.to_string(),
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
    }
    // The configuration's budget is the default (it was ignored before).
    std::fs::write(
        root.dir().join("config.toml"),
        "[hook]\ncontext_budget_chars = 500\n",
    )
    .unwrap();
    let out = cmd(&root)
        .args(["context", "show", "--session", S])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), render(500));
    assert_ne!(render(500), render(4000));
    let out = cmd(&root)
        .args([
            "context",
            "show",
            "--session",
            S,
            "--json",
            "--budget",
            "4000",
        ])
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert!(v["text"].as_str().unwrap().contains("[now] from stdin"));
    assert_eq!(v["mode"], "recovery");
    assert_eq!(v["budget_chars"], 4000);
    // The next prompt would get only what the model has not seen: here, both entries.
    let out = cmd(&root)
        .args(["context", "show", "--session", S, "--at", "prompt"])
        .output()
        .unwrap();
    let prompt = String::from_utf8(out.stdout).unwrap();
    assert!(
        prompt.contains("[rules] Run the tests.") && prompt.contains("[now] from stdin"),
        "{prompt}"
    );
    cmd(&root)
        .args(["context", "clear", "--session", S])
        .assert()
        .success();
    let (state, _) = load_state(&root, S, &LoadOptions::latest()).unwrap();
    assert!(state.context.persistent.is_empty() && state.context.ephemeral.is_empty());
    cmd(&root)
        .args([
            "context",
            "set",
            "--session",
            S,
            "--key",
            "k",
            "--channel",
            "bogus",
            "x",
        ])
        .assert()
        .code(2);
}

#[test]
fn primitives_answer_with_exit_codes() {
    let (_d, root) = temp_root();
    for expected in [0, 0, 1] {
        cmd(&root)
            .args(["fire", "--session", "p", "hook", "--max", "2"])
            .assert()
            .code(expected);
    }
    cmd(&root)
        .args(["once", "--session", "p", "a"])
        .assert()
        .code(0)
        .stdout("a\n");
    cmd(&root)
        .args(["once", "--session", "p", "a"])
        .assert()
        .code(1)
        .stdout("");
    cmd(&root)
        .args(["unseen", "--session", "p", "a", "b"])
        .assert()
        .code(0)
        .stdout("b\n");

    let out = cmd(&root)
        .args([
            "slot",
            "set",
            "--session",
            "p",
            "plan",
            r#"{"step":1}"#,
            "--expect-seq",
            "0",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let seq = json(&out.stdout)["seq"].as_u64().unwrap();
    let conflict = cmd(&root)
        .args([
            "slot",
            "set",
            "--session",
            "p",
            "plan",
            "2",
            "--expect-seq",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(conflict.status.code(), Some(1));
    let err = String::from_utf8(conflict.stderr).unwrap();
    assert!(err.contains(&format!("--expect-seq {seq}")), "{err}");
    let got = cmd(&root)
        .args(["slot", "get", "--session", "p", "plan"])
        .output()
        .unwrap();
    assert_eq!(json(&got.stdout)["value"]["step"], 1);
    cmd(&root)
        .args(["slot", "get", "--session", "p", "none"])
        .assert()
        .code(1);
    cmd(&root)
        .args(["slot", "set", "--session", "p", "bad", "{oops"])
        .assert()
        .code(2);

    for i in 0..4 {
        cmd(&root)
            .args([
                "list",
                "push",
                "--session",
                "p",
                "l",
                &i.to_string(),
                "--max",
                "2",
            ])
            .assert()
            .success();
    }
    cmd(&root)
        .args(["list", "show", "--session", "p", "l"])
        .assert()
        .success()
        .stdout("2\n3\n");
}

#[test]
fn snapshots_from_the_command_line_are_used() {
    let (_d, root) = setup();
    let out = cmd(&root)
        .args(["snapshot", "--session", S])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = json(&out.stdout);
    let st = cmd(&root)
        .args(["state", "--session", S, "--json"])
        .output()
        .unwrap();
    let v = json(&st.stdout);
    assert_eq!(v["snapshot"]["use"], "used");
    assert_eq!(v["state_hash"], written["state_hash"]);

    write_journal(
        &root,
        "second",
        &[event(r#"{"hook_event_name":"Stop","session_id":"second"}"#)],
        0,
    );
    let all = cmd(&root)
        .args(["snapshot", "rebuild", "--all"])
        .output()
        .unwrap();
    assert!(all.status.success());
    assert_eq!(String::from_utf8(all.stdout).unwrap().lines().count(), 2);
    cmd(&root).args(["snapshot"]).assert().code(2);
}
