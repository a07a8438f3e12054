//! Where memory proposals come from beyond the standing instructions, and which session hands
//! off, through the `sjournal hook` binary: a command that failed and
//! then passed as a variant in the same session becomes one "how to verify" proposal with the
//! passing call's seq and both commands verbatim, never proposed again once rejected; the
//! same instruction from several sessions is counted and reviewed first, and a session past
//! the provenance bound does not re-write it at every Stop; "remember globally: …" goes to the
//! global scope; and the handoff comes from the newest unfinished session among the project's
//! last N (default 3, `[memory] handoff_sessions`), never from or past a cleared one.

use serde_json::{json, Value};
use sjournal::journal::{JournalReader, Root};

use crate::memory::{env, Env};
use crate::support::cmd;

const PASSING: &str = "`make check -j1` passes where `make check` fails";

fn bash(e: &Env, session: &str, cwd: &str, command: &str, ok: bool, id: &str) {
    let (event, extra) = if ok {
        (
            "PostToolUse",
            json!({"tool_response": {"stdout": "ok", "stderr": "", "interrupted": false}}),
        )
    } else {
        (
            "PostToolUseFailure",
            json!({"error": "Exit code 2\nerror: missing target"}),
        )
    };
    let mut fields =
        json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id});
    for (k, v) in extra.as_object().unwrap() {
        fields[k.as_str()] = v.clone();
    }
    e.hook(event, None, session, cwd, fields);
}

/// Records of every journal whose header id contains `id_part`: (seq, kind, payload as text).
fn records_of(root: &Root, id_part: &str) -> Vec<(u64, String, String)> {
    let mut out = Vec::new();
    for path in root.journals().unwrap() {
        let r = JournalReader::open(&path, None).unwrap();
        if !r.header().unwrap().0.session_id.contains(id_part) {
            continue;
        }
        for rec in r.records().unwrap() {
            let rec = rec.unwrap();
            out.push((
                rec.seq,
                rec.kind.to_string(),
                String::from_utf8_lossy(rec.payload).into_owned(),
            ));
        }
    }
    out
}

fn item<'a>(items: &'a [Value], text: &str) -> &'a Value {
    items
        .iter()
        .find(|i| i["text"] == text)
        .unwrap_or_else(|| panic!("no item {text:?} in {items:?}"))
}

#[test]
fn a_failing_command_then_a_passing_variant_is_proposed_as_how_to_verify() {
    let e = env();
    let one = e.project("one");
    e.start("vf-a", "startup", &one);
    e.prompt("vf-a", &one, "Get the build green.");
    bash(&e, "vf-a", &one, "make check", false, "toolu_v1");
    bash(&e, "vf-a", &one, "make check -j1", true, "toolu_v2");
    e.stop("vf-a", &one);

    let items = e.items(&one);
    let it = item(&items, PASSING);
    assert_eq!(it["status"], "proposed", "{it}");
    assert_eq!(it["source"], "verify", "{it}");
    let prov = &it["provenance"][0];
    assert_eq!(prov["session"], "vf-a");
    let quote = prov["quote"].as_str().unwrap();
    assert!(
        quote.contains("make check (exit 2)") && quote.contains("passed: make check -j1"),
        "both commands verbatim: {quote}"
    );
    // The seq is the passing call's record in the session's journal.
    let seq = prov["seq"].as_u64().unwrap();
    let recs = records_of(&e.sjl(), "vf-a");
    let (_, _, payload) = recs.iter().find(|r| r.0 == seq).unwrap();
    assert!(
        payload.contains("PostToolUse") && !payload.contains("PostToolUseFailure"),
        "{payload}"
    );
    assert!(payload.contains("make check -j1"), "{payload}");

    // Pending: never reaches the model, the user is told.
    let (ctx, msg) = e.start("vf-b", "startup", &one);
    assert!(!ctx.contains("make check -j1"), "{ctx}");
    assert!(msg.contains("await"), "{msg}");

    // Deterministic and deduped: the same story again (another Stop, another session) makes
    // no second item; once rejected it is never proposed again.
    e.stop("vf-a", &one);
    let id = it["id"].as_str().unwrap().to_owned();
    assert!(e.memory(&one, &["reject", &id]).status.success());
    e.prompt("vf-b", &one, "Build again.");
    bash(&e, "vf-b", &one, "make check", false, "toolu_v3");
    bash(&e, "vf-b", &one, "make check -j1", true, "toolu_v4");
    e.stop("vf-b", &one);
    let items = e.items(&one);
    let same: Vec<_> = items.iter().filter(|i| i["source"] == "verify").collect();
    assert_eq!(same.len(), 1, "{items:?}");
    assert_eq!(same[0]["status"], "rejected");

    // A command that passed as it was (no variant) or a failure never fixed proposes nothing.
    let two = e.project("two");
    e.prompt("vf-c", &two, "Test it.");
    bash(&e, "vf-c", &two, "cargo test", false, "toolu_v5");
    bash(&e, "vf-c", &two, "cargo test", true, "toolu_v6");
    bash(&e, "vf-c", &two, "npm run lint", false, "toolu_v7");
    e.stop("vf-c", &two);
    let items = e.items(&two);
    assert!(items.iter().all(|i| i["source"] != "verify"), "{items:?}");
}

#[test]
fn the_same_instruction_in_more_sessions_is_counted_and_reviewed_first() {
    let e = env();
    let one = e.project("one");
    let (once, often) = (
        "Never commit generated files.",
        "Always run the linter before pushing.",
    );
    e.prompt("cf-0", &one, once);
    e.stop("cf-0", &one);
    for k in 1..=6 {
        let s = format!("cf-{k}");
        e.prompt(&s, &one, often);
        e.stop(&s, &one);
        // A second Stop of the same session adds nothing, past the provenance bound too.
        let before = records_of(&e.sjl(), &format!("scope:project:{one}")).len();
        e.stop(&s, &one);
        let after = records_of(&e.sjl(), &format!("scope:project:{one}")).len();
        assert_eq!(before, after, "session {s} wrote again at its second Stop");
    }
    let items = e.items(&one);
    assert_eq!(item(&items, often)["seen_in_sessions"], 6, "{items:?}");
    assert_eq!(item(&items, once)["seen_in_sessions"], 1, "{items:?}");

    let out = e.memory(&one, &["review", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let order: Vec<&str> = v["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .collect();
    assert_eq!(order, [often, once], "the most confident first");

    let out = e.memory(&one, &["review"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("seen in 6 sessions"), "{text}");
    assert!(
        text.find(often).unwrap() < text.find(once).unwrap(),
        "{text}"
    );
    let out = e.memory(&one, &["list"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("seen in 6 sessions"), "{text}");
}

#[test]
fn remember_globally_is_accepted_into_the_global_scope() {
    let e = env();
    let (one, two) = (e.project("one"), e.project("two"));
    e.start("rg-a", "startup", &one);
    e.prompt("rg-a", &one, "Remember globally: Prefer rg over grep.");
    e.prompt("rg-a", &one, "REMEMBER : The API lives in src/api.");
    e.prompt("rg-a", &one, "remembering: this is not a remember.");

    let out = cmd::run(
        &e.root,
        &["memory", "--scope", "global", "list", "--json"],
        b"",
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let global = v["items"].as_array().unwrap();
    assert_eq!(global.len(), 1, "{global:?}");
    assert_eq!(global[0]["text"], "Prefer rg over grep.");
    assert_eq!(global[0]["status"], "accepted");
    assert_eq!(global[0]["provenance"][0]["session"], "rg-a");

    let project = e.items(&one);
    let texts: Vec<&str> = project
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["The API lives in src/api."], "{project:?}");
    assert_eq!(project[0]["status"], "accepted");

    // Global memory reaches every project; the project's only its own.
    let (ctx, _) = e.start("rg-b", "startup", &two);
    assert!(ctx.contains("Prefer rg over grep."), "{ctx}");
    assert!(!ctx.contains("src/api"), "{ctx}");
}

fn unfinished(e: &Env, session: &str, cwd: &str, todo: &str) {
    e.start(session, "startup", cwd);
    e.prompt(session, cwd, "Do the work.");
    e.todos(
        session,
        cwd,
        json!([{"content": todo, "status": "pending", "activeForm": "Doing"}]),
    );
    e.stop(session, cwd);
}

fn finished(e: &Env, session: &str, cwd: &str) {
    e.start(session, "startup", cwd);
    e.prompt(session, cwd, "Say hello.");
    e.stop(session, cwd);
}

#[test]
fn the_handoff_comes_from_the_newest_unfinished_of_the_last_sessions() {
    let e = env();
    let one = e.project("one");
    unfinished(&e, "ho-a", &one, "Port the parser");
    finished(&e, "ho-b", &one);
    // ho-b finished, ho-a did not and is one of the last 3: it hands off.
    let (ctx, _) = e.start("ho-c", "startup", &one);
    assert!(ctx.contains("Port the parser"), "{ctx}");
    assert!(ctx.contains("ho-a"), "{ctx}");
    e.prompt("ho-c", &one, "Say hello.");
    e.stop("ho-c", &one);
    finished(&e, "ho-d", &one);
    // The last 3 before ho-e are ho-d, ho-c, ho-b: ho-a is too old.
    let (ctx, _) = e.start("ho-e", "startup", &one);
    assert!(!ctx.contains("Port the parser"), "{ctx}");

    // `[memory] handoff_sessions = 5` reaches it; 0 turns the handoff off.
    std::fs::write(
        e.root.join("config.toml"),
        "[memory]\nhandoff_sessions = 5\n",
    )
    .unwrap();
    let (ctx, _) = e.start("ho-f", "startup", &one);
    assert!(ctx.contains("Port the parser"), "{ctx}");
    std::fs::write(
        e.root.join("config.toml"),
        "[memory]\nhandoff_sessions = 0\n",
    )
    .unwrap();
    unfinished(&e, "ho-g", &one, "Fix the lexer");
    let (ctx, _) = e.start("ho-h", "startup", &one);
    assert!(!ctx.contains("Fix the lexer"), "{ctx}");
}

#[test]
fn a_cleared_session_hands_nothing_off_and_nothing_before_it() {
    let e = env();
    let one = e.project("one");
    unfinished(&e, "cl-a", &one, "Port the parser");
    unfinished(&e, "cl-b", &one, "Wire the cache");
    e.hook("SessionEnd", Some("clear"), "cl-b", &one, json!({}));
    // The session /clear started, which did nothing yet.
    e.start("cl-c", "clear", &one);
    let (ctx, _) = e.start("cl-d", "startup", &one);
    assert!(!ctx.contains("Wire the cache"), "{ctx}");
    assert!(!ctx.contains("Port the parser"), "{ctx}");
}

#[test]
fn at_compact_memory_that_claude_md_already_says_is_not_injected_and_replays() {
    let e = env();
    let one = e.project("one");
    let claude_md = format!("{one}/CLAUDE.md");
    std::fs::write(
        &claude_md,
        "# Rules\n\n- Keep the public API\n  in src/api stable.\n- Never touch vendor/ in this repo.\n",
    )
    .unwrap();
    for text in [
        "Keep the public API in src/api stable.",
        "Ship small commits.",
    ] {
        assert!(e.memory(&one, &["propose", text]).status.success());
    }
    for i in e.items(&one) {
        let id = i["id"].as_str().unwrap();
        assert!(e.memory(&one, &["accept", id]).status.success());
    }
    e.start("kc-a", "startup", &one);
    e.hook(
        "InstructionsLoaded",
        None,
        "kc-a",
        &one,
        json!({"file_path": claude_md}),
    );
    e.prompt("kc-a", &one, "Add the farewell.");
    e.prompt(
        "kc-a",
        &one,
        "Never touch vendor/ in this repo. Always run the linter first.",
    );
    e.prompt("kc-a", &one, "Go on with the tests.");
    e.hook("PreCompact", Some("manual"), "kc-a", &one, json!({}));
    let (ctx, _) = e.start("kc-a", "compact", &one);
    let section = ctx
        .split("## Project memory (reviewed)")
        .nth(1)
        .unwrap_or_else(|| panic!("no memory section: {ctx}"));
    assert!(section.contains("Ship small commits."), "{ctx}");
    assert!(
        !ctx.contains("Keep the public API in src/api stable."),
        "CLAUDE.md already says it: {ctx}"
    );
    // The same for the standing instructions of the recovery block.
    assert!(ctx.contains("Always run the linter first."), "{ctx}");
    assert!(!ctx.contains("Never touch vendor/"), "{ctx}");

    // What was read is journaled with the injection; the replay re-derives the same bytes
    // without the file (gone now).
    let recs = records_of(&e.sjl(), "kc-a");
    let extras = recs
        .iter()
        .rfind(|r| r.1 == sjournal::format::payload::KIND_EXTRAS)
        .unwrap();
    assert!(extras.2.contains("CLAUDE.md"), "{}", extras.2);
    assert!(extras.2.contains("Keep the public API"), "{}", extras.2);
    std::fs::remove_file(&claude_md).unwrap();
    let out = cmd::run(&e.root, &["replay", "--session", "kc-a", "--json"], b"");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let checks: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| !v["injection"].is_null())
        .map(|v| v["injection"].clone())
        .collect();
    let compact = checks
        .iter()
        .find(|c| {
            c["journaled"]
                .as_str()
                .is_some_and(|t| t.contains("Ship small commits."))
        })
        .unwrap_or_else(|| panic!("no checked injection with the memory: {checks:?}"));
    assert_eq!(compact["status"], "match", "{compact}");
    assert_eq!(compact["derived"], compact["journaled"], "{compact}");

    // A symlinked instruction file (CLAUDE.md -> AGENTS.md, say) is the user's own: it is
    // followed, and what it says is left out as well.
    let real = format!("{}/elsewhere.md", e.project("two"));
    std::fs::write(&real, "Ship small commits.\n").unwrap();
    let link = format!("{one}/CLAUDE.local.md");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    e.start("kc-b", "startup", &one);
    e.hook(
        "InstructionsLoaded",
        None,
        "kc-b",
        &one,
        json!({"file_path": link}),
    );
    e.hook("PreCompact", Some("manual"), "kc-b", &one, json!({}));
    let (ctx, _) = e.start("kc-b", "compact", &one);
    assert!(!ctx.contains("Ship small commits."), "{ctx}");
}

/// Where the hook's worker did not plan memory (the watchdog took the event over), the CLI
/// tests the event's name before parsing it: every host event that parses as an event memory
/// acts on must pass that test (the Cline CLI's `session_shutdown`, `agent_abort` and the
/// extension's `TaskCancel` did not).
#[test]
fn every_event_memory_acts_on_passes_the_name_test() {
    use sjournal::event::{Event, EventKind};
    use sjournal::memory::hook::may_concern;
    let mut seen = 0;
    for p in crate::support::all_payloads() {
        let kind = p.event.clone().unwrap_or_else(|| "event".into());
        let raw = sjournal::event::lenient::text(&p.json);
        let e = Event::parse(&kind, &raw);
        let concerns = matches!(
            e.kind,
            EventKind::SessionStart
                | EventKind::UserPromptSubmit
                | EventKind::Stop
                | EventKind::SessionEnd
        );
        if concerns {
            seen += 1;
            assert!(
                may_concern(Some(&e.name)),
                "{}: {} ({:?}) is skipped by may_concern",
                p.file.display(),
                e.name,
                e.kind
            );
        }
    }
    assert!(seen > 20, "{seen}");
}
