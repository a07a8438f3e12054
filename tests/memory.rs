//! Memory across sessions, through the `sjournal hook` binary
//! with the real Claude Code payloads: a session that ends with open todos hands them to the
//! next `startup` of the same project and to no other project; a standing instruction becomes
//! a proposal with its provenance that never reaches the model until a person accepts it;
//! rejected text is never proposed again; the project journal is an ordinary journal that
//! verifies and folds the same every time; and sixteen processes proposing at once lose
//! nothing.

use std::path::Path;

use serde_json::{json, Value};
use sjournal::fold::{fold, RecordView};
use sjournal::journal::{JournalReader, Root};
use sjournal::memory::Scope;

use crate::support::{self, cmd};

const P1: &str =
    "Add a greeting module. Never touch vendor/ and always run `make check` before finishing.";
const RULE: &str = "Never touch vendor/ and always run `make check` before finishing.";

pub(crate) struct Env {
    _tmp: tempfile::TempDir,
    pub(crate) root: std::path::PathBuf,
    projects: std::path::PathBuf,
}

pub(crate) fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let projects = tmp.path().join("projects");
    std::fs::create_dir_all(projects.join("one/.git")).unwrap();
    std::fs::create_dir_all(projects.join("one/sub")).unwrap();
    std::fs::create_dir_all(projects.join("two")).unwrap();
    Env {
        _tmp: tmp,
        root,
        projects,
    }
}

impl Env {
    pub(crate) fn project(&self, name: &str) -> String {
        std::fs::canonicalize(self.projects.join(name))
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// Runs the hook on the real payload of `event` (`variant`), in `session`, with `cwd`
    /// and the `extra` fields; returns its stdout as JSON (Null when it printed nothing).
    pub(crate) fn hook(
        &self,
        event: &str,
        variant: Option<&str>,
        session: &str,
        cwd: &str,
        extra: Value,
    ) -> Value {
        let mut p = support::context::real(event, variant, session);
        p["cwd"] = cwd.into();
        for (k, v) in extra.as_object().unwrap() {
            p[k.as_str()] = v.clone();
        }
        let out = cmd::run(&self.root, &["hook"], p.to_string().as_bytes());
        assert!(out.status.success());
        let s = String::from_utf8(out.stdout).unwrap();
        if s.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(s.trim()).unwrap()
        }
    }

    pub(crate) fn start(&self, session: &str, source: &str, cwd: &str) -> (String, String) {
        let v = self.hook("SessionStart", Some(source), session, cwd, json!({}));
        let ctx = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let msg = v["systemMessage"].as_str().unwrap_or("").to_owned();
        (ctx, msg)
    }

    pub(crate) fn prompt(&self, session: &str, cwd: &str, text: &str) {
        self.hook(
            "UserPromptSubmit",
            None,
            session,
            cwd,
            json!({"prompt": text}),
        );
    }

    pub(crate) fn stop(&self, session: &str, cwd: &str) {
        self.hook(
            "Stop",
            None,
            session,
            cwd,
            json!({"last_assistant_message": "Done for now.", "background_tasks": [], "session_crons": []}),
        );
    }

    pub(crate) fn todos(&self, session: &str, cwd: &str, todos: Value) {
        let input = json!({"todos": todos});
        for ev in ["PreToolUse", "PostToolUse"] {
            self.hook(
                ev,
                None,
                session,
                cwd,
                json!({"tool_name": "TodoWrite", "tool_input": input, "tool_use_id": "toolu_todo1", "tool_response": {}}),
            );
        }
    }

    pub(crate) fn memory(&self, project: &str, args: &[&str]) -> std::process::Output {
        let mut all = vec!["memory", "--project", project];
        all.extend_from_slice(args);
        cmd::run(&self.root, &all, b"")
    }

    pub(crate) fn items(&self, project: &str) -> Vec<Value> {
        let out = self.memory(project, &["list", "--all", "--json"]);
        assert!(out.status.success(), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["items"].as_array().unwrap().clone()
    }

    pub(crate) fn sjl(&self) -> Root {
        Root::new(&self.root)
    }
}

/// Every text any session's `sjournal.injected` records carry (all the model was shown).
pub(crate) fn all_injected(root: &Root) -> String {
    let mut text = String::new();
    for path in root.journals().unwrap() {
        let r = JournalReader::open(&path, None).unwrap();
        for rec in r.records().unwrap() {
            let rec = rec.unwrap();
            if rec.kind == sjournal::format::payload::KIND_INJECTED {
                let i: sjournal::format::payload::Injected =
                    sjournal::format::payload::decode_system(rec.seq, rec.payload).unwrap();
                text.push_str(&i.text);
                text.push('\n');
            }
        }
    }
    text
}

#[test]
fn m1_open_todos_hand_off_to_the_next_startup_of_the_same_project_only() {
    let e = env();
    let (one, two) = (e.project("one"), e.project("two"));
    // Started in a subdirectory: the project is the git root above it.
    let sub = format!("{one}/sub");
    e.start("m1-a", "startup", &sub);
    e.prompt("m1-a", &sub, "Write the greeting and the farewell.");
    e.todos(
        "m1-a",
        &sub,
        json!([
            {"content": "Write the greeting", "status": "completed", "activeForm": "Writing"},
            {"content": "Write the farewell test", "status": "in_progress", "activeForm": "Writing"},
            {"content": "Update the README", "status": "pending", "activeForm": "Updating"}
        ]),
    );
    e.stop("m1-a", &sub);

    let (ctx, _) = e.start("m1-b", "startup", &one);
    assert!(ctx.contains("Write the farewell test"), "{ctx}");
    assert!(ctx.contains("Update the README"), "{ctx}");
    assert!(
        !ctx.contains("Write the greeting\n"),
        "done todos are not handed off: {ctx}"
    );
    assert!(ctx.contains("m1-a"), "the handoff names its session: {ctx}");
    assert!(
        ctx.chars().count() <= 1500,
        "{} chars: {ctx}",
        ctx.chars().count()
    );

    // Another project sees nothing of it.
    let (other, _) = e.start("m1-c", "startup", &two);
    assert!(!other.contains("farewell"), "{other}");
    assert!(!other.contains("README"), "{other}");

    // Not on clear: the previous session of the project is m1-b, which left nothing open;
    // and a clear never hands off.
    let (cleared, _) = e.start("m1-d", "clear", &one);
    assert!(!cleared.contains("farewell"), "{cleared}");
}

#[test]
fn m2_a_standing_instruction_is_proposed_with_provenance_and_shown_only_once_accepted() {
    let e = env();
    let one = e.project("one");
    e.start("m2-a", "startup", &one);
    e.prompt("m2-a", &one, P1);
    e.stop("m2-a", &one);

    let items = e.items(&one);
    assert_eq!(items.len(), 1, "{items:?}");
    let item = &items[0];
    assert_eq!(item["status"], "proposed");
    assert_eq!(item["text"], RULE);
    let prov = &item["provenance"][0];
    assert_eq!(prov["session"], "m2-a");
    assert_eq!(prov["quote"], RULE);
    // The seq is the prompt's record in the session.
    let st = cmd::run(&e.root, &["state", "--session", "m2-a", "--json"], b"");
    let st: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(
        prov["seq"],
        st["state"]["requests"]["instructions"][0]["seq"]
    );
    assert!(prov["seq"].as_u64().unwrap() > 0);

    // Pending: never in anything the model is shown; the user is told.
    let (ctx, msg) = e.start("m2-b", "startup", &one);
    assert!(!ctx.contains("Never touch vendor/"), "{ctx}");
    assert_eq!(
        msg,
        "sjournal: 1 memory proposal awaits review (sjournal memory review)"
    );
    e.hook("SessionStart", Some("compact"), "m2-b", &one, json!({}));
    e.start("m2-b2", "clear", &one);
    assert!(
        !all_injected(&e.sjl()).contains("Never touch vendor/"),
        "a pending proposal reached an injection"
    );

    let id = item["id"].as_str().unwrap();
    let out = e.memory(&one, &["accept", &id[..6]]);
    assert!(out.status.success(), "{out:?}");
    let (ctx, msg) = e.start("m2-c", "startup", &one);
    assert!(ctx.contains("## Project memory (reviewed)"), "{ctx}");
    assert!(ctx.contains(RULE), "{ctx}");
    assert_eq!(msg, "", "nothing awaits review any more");
}

#[test]
fn m3_rejected_text_is_never_proposed_again_and_different_text_is() {
    let e = env();
    let one = e.project("one");
    e.start("m3-a", "startup", &one);
    e.prompt("m3-a", &one, P1);
    e.stop("m3-a", &one);
    let id = e.items(&one)[0]["id"].as_str().unwrap().to_owned();
    assert!(e.memory(&one, &["reject", &id]).status.success());

    // The same instruction in a new session: no new proposal.
    e.start("m3-b", "startup", &one);
    e.prompt("m3-b", &one, P1);
    e.stop("m3-b", &one);
    e.hook("SessionEnd", Some("other"), "m3-b", &one, json!({}));
    let items = e.items(&one);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["status"], "rejected");
    // Nor by hand, nor re-cased or re-wrapped.
    let again = e.memory(
        &one,
        &[
            "propose",
            "never touch   VENDOR/ and always run `make check` before finishing.",
        ],
    );
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    let (_, msg) = e.start("m3-c", "startup", &one);
    assert_eq!(msg, "", "nothing awaits review");

    // Different text raises a new proposal.
    e.prompt(
        "m3-c",
        &one,
        "Never touch vendor/ except vendor/patches, which you must keep.",
    );
    e.stop("m3-c", &one);
    let items = e.items(&one);
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items
        .iter()
        .any(|i| i["status"] == "proposed" && i["provenance"][0]["session"] == "m3-c"));
}

#[test]
fn m4_the_memory_journal_verifies_and_folds_deterministically() {
    let e = env();
    let one = e.project("one");
    e.start("m4-a", "startup", &one);
    e.prompt("m4-a", &one, P1);
    e.prompt("m4-a", &one, "remember: use pnpm, not npm");
    e.stop("m4-a", &one);
    let items = e.items(&one);
    let id = items.iter().find(|i| i["source"] == "rule").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(e
        .memory(&one, &["edit", &id, "Never touch vendor/."])
        .status
        .success());
    assert!(e
        .memory(
            &one,
            &["propose", "--scope", "global", "Prefer rg over grep."]
        )
        .status
        .success());
    let (ctx, _) = e.start("m4-b", "startup", &one);
    // "remember:" was accepted as said; the edit accepted the rule; global proposals wait.
    assert!(ctx.contains("- use pnpm, not npm"), "{ctx}");
    assert!(ctx.contains("- Never touch vendor/."), "{ctx}");
    assert!(!ctx.contains("rg over grep"), "{ctx}");

    // The scope journals are ordinary journals: verify covers them.
    let root = e.sjl();
    let id = Scope::Project(one.clone()).journal_id();
    for s in [id.as_str(), "scope:global"] {
        let out = cmd::run(&e.root, &["verify", "--session", s], b"");
        assert!(out.status.success(), "{s}: {out:?}");
    }
    cmd::verify_all(&e.root);
    // `sessions` lists host sessions; the scope journals only when asked.
    let listed = cmd::run(&e.root, &["sessions", "--json"], b"");
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(!listed.contains("scope:"), "{listed}");
    let all = cmd::run(&e.root, &["sessions", "--json", "--scopes"], b"");
    assert_eq!(String::from_utf8(all.stdout).unwrap().lines().count(), 4);
    // The header keeps the project's path.
    let paths = root.session(&id).unwrap();
    let r = JournalReader::open(&paths.journal, None).unwrap();
    assert_eq!(r.header().unwrap().0.session_id, id);
    // Folding twice, from scratch, gives the same state; the snapshot path agrees.
    let recs: Vec<_> = r.records().unwrap().map(|r| r.unwrap()).collect();
    let a = fold(recs.iter().map(RecordView::from));
    let b = fold(recs.iter().map(RecordView::from));
    assert_eq!(a.state_hash(), b.state_hash());
    assert_eq!(a.memory.items.len(), 2);
    let out = cmd::run(&e.root, &["state", "--session", &id, "--json"], b"");
    let snap = cmd::run(
        &e.root,
        &["state", "--session", &id, "--json", "--no-snapshot"],
        b"",
    );
    let (out, snap): (Value, Value) = (
        serde_json::from_slice(&out.stdout).unwrap(),
        serde_json::from_slice(&snap.stdout).unwrap(),
    );
    assert_eq!(out["state_hash"], snap["state_hash"]);
    assert_eq!(out["state_hash"].as_str().unwrap(), a.state_hash().to_hex());
    // A replay of the session that was shown memory re-derives its injection byte for byte.
    let replay = cmd::run(&e.root, &["replay", "--session", "m4-b"], b"");
    assert!(replay.status.success(), "{replay:?}");
}

#[test]
fn sixteen_processes_proposing_at_once_lose_nothing() {
    let e = env();
    let one = e.project("one");
    std::fs::create_dir_all(&e.root).unwrap();
    let children: Vec<_> = (0..16)
        .map(|i| {
            cmd::spawnable(&e.root)
                .args(["memory", "--project", &one, "propose"])
                .arg(format!("Rule number {i}: always say {i}."))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let items = e.items(&one);
    assert_eq!(items.len(), 16);
    let paths = e.sjl().session(&Scope::Project(one).journal_id()).unwrap();
    let r = JournalReader::open(&paths.journal, None).unwrap();
    let seqs: Vec<u64> = r.records().unwrap().map(|r| r.unwrap().seq).collect();
    assert_eq!(seqs, (1..=16).collect::<Vec<_>>());
}

#[test]
fn the_project_is_the_host_dir_else_the_git_root_else_the_cwd() {
    let e = env();
    let one = e.project("one");
    let sub = Path::new(&one).join("sub");
    assert_eq!(
        sjournal::memory::project_dir(None, Some(&sub)).unwrap(),
        Path::new(&one)
    );
    let two = e.project("two");
    assert_eq!(
        sjournal::memory::project_dir(None, Some(Path::new(&two))).unwrap(),
        Path::new(&two)
    );
    assert_eq!(
        sjournal::memory::project_dir(Some(Path::new(&two)), Some(&sub)).unwrap(),
        Path::new(&two)
    );
}

#[test]
fn an_accepted_command_that_later_fails_goes_back_to_review() {
    let e = env();
    let one = e.project("one");
    let out = e.memory(
        &one,
        &["propose", "Verify with `make check -j1` before finishing."],
    );
    assert!(out.status.success(), "{out:?}");
    let id = e.items(&one)[0]["id"].as_str().unwrap().to_owned();
    assert!(e.memory(&one, &["accept", &id]).status.success());
    let (ctx, _) = e.start("st-a", "startup", &one);
    assert!(ctx.contains("make check -j1"), "{ctx}");

    e.prompt("st-a", &one, "Check the build.");
    e.hook(
        "PostToolUseFailure",
        None,
        "st-a",
        &one,
        json!({"tool_name": "Bash", "tool_input": {"command": "make check -j1"}, "tool_use_id": "toolu_f1",
               "error": "Exit code 2\nerror: missing target"}),
    );
    e.stop("st-a", &one);
    let items = e.items(&one);
    assert_eq!(items[0]["status"], "stale", "{items:?}");
    assert!(items[0]["reason"]
        .as_str()
        .unwrap()
        .contains("`make check -j1` failed"));

    // No longer injected; the user is asked to review it again.
    let (ctx, msg) = e.start("st-b", "startup", &one);
    assert!(!ctx.contains("## Project memory"), "{ctx}");
    assert!(msg.contains("1 memory proposal awaits review"), "{msg}");
    assert!(e.memory(&one, &["accept", &id]).status.success());
    let (ctx, _) = e.start("st-c", "startup", &one);
    assert!(ctx.contains("make check -j1"), "{ctx}");
}

#[test]
fn sixteen_processes_increment_one_project_slot_by_compare_and_set_and_lose_no_update() {
    let e = env();
    let one = e.project("one");
    std::fs::create_dir_all(&e.root).unwrap();
    let base = ["--scope", "project", "--project", one.as_str()];
    let out = cmd::run(
        &e.root,
        &[&["slot", "set"][..], &base, &["n", "0"]].concat(),
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(16));
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let (root, one, barrier) = (e.root.clone(), one.clone(), barrier.clone());
            std::thread::spawn(move || {
                let base = ["--scope", "project", "--project", one.as_str()];
                barrier.wait();
                // Read, then write n+1 only if nobody wrote since; on a conflict, again.
                loop {
                    let get = cmd::run(&root, &[&["slot", "get"][..], &base, &["n"]].concat(), b"");
                    let v: Value = serde_json::from_slice(&get.stdout).unwrap();
                    let (n, seq) = (v["value"].as_u64().unwrap(), v["seq"].as_u64().unwrap());
                    let next = (n + 1).to_string();
                    let seq = seq.to_string();
                    let set = cmd::run(
                        &root,
                        &[
                            &["slot", "set"][..],
                            &base,
                            &["n", &next, "--expect-seq", &seq],
                        ]
                        .concat(),
                        b"",
                    );
                    match set.status.code() {
                        Some(0) => return,
                        Some(1) => continue,
                        _ => panic!("{set:?}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let get = cmd::run(
        &e.root,
        &[&["slot", "get"][..], &base, &["n"]].concat(),
        b"",
    );
    let v: Value = serde_json::from_slice(&get.stdout).unwrap();
    assert_eq!(v["value"], 16, "every increment counted once");
    let id = Scope::Project(one).journal_id();
    assert!(cmd::run(&e.root, &["verify", "--session", &id], b"")
        .status
        .success());
}

/// Proposes `text` by hand in `project`; returns its id.
fn propose(e: &Env, project: &str, text: &str) -> String {
    let out = e.memory(project, &["propose", text, "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["id"].as_str().unwrap().to_owned()
}

/// An empty selector is bad input, even when it would match the only item: nothing is
/// accepted on a guess, and the error says what to pass.
#[test]
fn an_empty_selector_is_bad_input_and_accepts_nothing() {
    let e = env();
    let one = e.project("one");
    let id = propose(&e, &one, "Run the linter before every commit.");
    for args in [
        vec!["accept", ""],
        vec!["accept", "  "],
        vec!["reject", ""],
        vec!["forget", ""],
        vec!["show", ""],
        vec!["edit", "", "new text"],
    ] {
        let out = e.memory(&one, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("an empty id selects nothing") && err.contains("memory list"),
            "{args:?}: {err}"
        );
    }
    let items = e.items(&one);
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], id.as_str());
    assert_eq!(items[0]["status"], "proposed", "{items:?}");
}

/// A prefix that names several items is bad input (exit 2), listing them; nothing changes.
#[test]
fn an_ambiguous_selector_is_bad_input() {
    let e = env();
    let one = e.project("one");
    // Ids are hex: among 40 items, two share their first character.
    let ids: Vec<String> = (0..40)
        .map(|i| propose(&e, &one, &format!("Rule number {i} of the house.")))
        .collect();
    let shared = ids
        .iter()
        .find_map(|a| {
            let p = &a[..1];
            (ids.iter().filter(|b| b.starts_with(p)).count() > 1).then(|| p.to_owned())
        })
        .expect("two of 40 hex ids share a first digit");
    let out = e.memory(&one, &["accept", &shared]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("names") && err.contains("give more of the id"),
        "{err}"
    );
    assert!(e.items(&one).iter().all(|i| i["status"] == "proposed"));
}

/// Every memory subcommand's bad input exits 2 (an error; nothing was changed), not 1 (which
/// is for refusals by an item's state and findings).
#[test]
fn every_memory_subcommand_exits_2_on_bad_input() {
    let e = env();
    let one = e.project("one");
    let id = propose(&e, &one, "Keep the changelog in order.");
    let long = "x".repeat(sjournal::limits::MEMORY_TEXT_MAX_BYTES + 1);
    for args in [
        vec!["accept", "ffffffffffff-no-such-item"],
        vec!["reject", "ffffffffffff-no-such-item"],
        vec!["forget", "ffffffffffff-no-such-item"],
        vec!["show", "ffffffffffff-no-such-item"],
        vec!["edit", "ffffffffffff-no-such-item", "text"],
        vec!["edit", &id, ""],
        vec!["edit", &id, "   "],
        vec!["edit", &id, &long],
        vec!["propose", ""],
        vec!["propose", " \n "],
        vec!["propose", &long],
        vec!["propose", "text", "--session", ""],
        vec!["propose", "text", "--seq", "3"],
        vec!["list", "--status", "acepted"],
        vec!["list", "--scope", "everywhere"],
        vec!["accept"],
    ] {
        let out = e.memory(&one, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            !out.stderr.is_empty(),
            "{args:?}: bad input must say what is wrong"
        );
    }
    let items = e.items(&one);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["status"], "proposed");
    assert_eq!(items[0]["text"], "Keep the changelog in order.");

    // A refusal by the item's state stays exit 1: a rejected item cannot be accepted.
    assert!(e.memory(&one, &["reject", &id]).status.success());
    let out = e.memory(&one, &["accept", &id]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be accepted"),
        "{out:?}"
    );
}

/// `context show --at startup` prints what the next SessionStart injects, sections from
/// outside the session included (reviewed memory, the handoff): "remember" in session a,
/// then `context show` for a session c that has not started equals the hook's injection at
/// c's startup; and for a session that has, its next startup's.
#[test]
fn context_show_at_startup_equals_the_next_startups_injection() {
    let e = env();
    let one = e.project("one");
    e.start("cs-a", "startup", &one);
    e.prompt("cs-a", &one, "remember: use pnpm, not npm");
    e.prompt("cs-a", &one, "Write the greeting and the farewell.");
    e.todos(
        "cs-a",
        &one,
        json!([
            {"content": "Write the farewell test", "status": "in_progress", "activeForm": "Writing"}
        ]),
    );
    e.stop("cs-a", &one);
    // The project as the host names it (`--project DIR` says the same, below).
    let show = |session: &str| {
        let out = cmd::run_env(
            &e.root,
            &["context", "show", "--session", session, "--at", "startup"],
            b"",
            &[("CLAUDE_PROJECT_DIR", &one)],
        );
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let shown = show("cs-c");
    let (ctx, _) = e.start("cs-c", "startup", &one);
    assert!(ctx.contains("use pnpm, not npm"), "reviewed memory: {ctx}");
    assert!(
        ctx.contains("Write the farewell test"),
        "the handoff: {ctx}"
    );
    assert_eq!(shown, ctx);
    // A session with a past: its own next startup.
    let shown = show("cs-c");
    let (ctx, _) = e.start("cs-c", "startup", &one);
    assert_eq!(shown, ctx);
    let out = cmd::run(
        &e.root,
        &[
            "context",
            "show",
            "--session",
            "cs-d",
            "--at",
            "startup",
            "--project",
            &one,
        ],
        b"",
    );
    let (ctx, _) = e.start("cs-d", "startup", &one);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), ctx);
}

/// Erasing the prompt a "remember:" item was made from does not reach the item (its text is in
/// the scope's journal): erase says so, naming the item and the `memory forget` that stops its
/// injection, which works as given.
#[test]
fn erasing_the_prompt_of_a_remembered_item_names_the_item() {
    let e = env();
    let one = e.project("one");
    e.start("m9-a", "startup", &one);
    e.prompt("m9-a", &one, "remember: the staging phone is 555-0199");
    let items = e.items(&one);
    let item = items
        .iter()
        .find(|i| i["text"].as_str().unwrap_or("").contains("555-0199"))
        .unwrap();
    let id = item["id"].as_str().unwrap().to_owned();
    // The prompt's record (the item's provenance names the session and the quote).
    let log = cmd::run(&e.root, &["log", "--session", "m9-a", "--json"], b"");
    let seq = String::from_utf8_lossy(&log.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["kind"] == "UserPromptSubmit")
        .and_then(|v| v["seq"].as_u64())
        .unwrap();
    assert_eq!(item["status"], "accepted");
    let out = cmd::run(
        &e.root,
        &[
            "erase",
            "--session",
            "m9-a",
            "--seq",
            &seq.to_string(),
            "--reason",
            "pii",
        ],
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "memory item {id} (project scope, accepted) was made from this record"
        )),
        "{err}"
    );
    let forget = err
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("{err}"))
        .to_owned();
    assert!(forget.starts_with(&format!(
        "sjournal memory forget {id} --scope project --project "
    )));
    let args: Vec<String> = shlex::split(&forget["sjournal ".len()..]).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cmd::run(&e.root, &args, b"");
    assert!(out.status.success(), "{out:?}");
    let items = e.items(&one);
    let item = items.iter().find(|i| i["id"] == id.as_str()).unwrap();
    assert_eq!(item["status"], "forgotten");
    let (ctx, _) = e.start("m9-b", "startup", &one);
    assert!(!ctx.contains("555-0199"), "{ctx}");
}
