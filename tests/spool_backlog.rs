//! Context keeps arriving while events are spooled. With the session's lock held by another
//! writer, a prompt is spooled, and its context is still rendered, from what the journal
//! holds plus the prompt itself. After a long backlog (2000 spooled events), each prompt's
//! hook merges only a bounded number of spool files (`HOOK_SPOOL_MERGE_MAX_FILES`), spools its
//! own event behind what is left (never overtaking it), and injects context: every prompt
//! gets its context. `sjournal flush` then merges the rest, and the journal holds every event
//! exactly once, in spool order.

use crate::support;

use std::time::Duration;

use sjournal::format::payload::{encode_event, SpoolMerge, KIND_SPOOL_MERGE};
use sjournal::hook;
use sjournal::journal::{keep_elsewhere, spool, Landed, Root, Writer, WriterOptions};
use sjournal::limits::HOOK_SPOOL_MERGE_MAX_FILES;
use support::Stall;

const BACKLOG: usize = 2000;

fn prompt(n: usize) -> Vec<u8> {
    format!(
        r#"{{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"prompt number {n}"}}"#
    )
    .into_bytes()
}

fn context(out: &sjournal::hook::HookOutcome) -> String {
    let v: serde_json::Value =
        serde_json::from_str(out.stdout.as_deref().unwrap_or("null")).unwrap();
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn context_is_rendered_while_the_lock_is_held() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let out = hook::run(
        support::hook_opts(&root, Duration::from_secs(60)),
        std::io::Cursor::new(prompt(0)),
    );
    assert!(context(&out).contains("prompt number 0"));
    let holder = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    // The watchdog waits for the worker to claim the event: no race with the deadline.
    let stall = Stall::new(|s| s.deadline_waits_for_claim = true);
    let opts = support::stalled(support::hook_opts(&root, Duration::from_secs(2)), &stall);
    let out = hook::run(opts, std::io::Cursor::new(prompt(1)));
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{out:?}"
    );
    let ctx = context(&out);
    assert!(ctx.contains("prompt number 1"), "{out:?}");
    assert!(ctx.contains("turns: 2"), "the journal's state too: {ctx}");
    drop(holder);
    // The context went with the event into the spool, and into the journal with it.
    support::run(dir.path(), &["flush", "--session", "s"], b"");
    let kinds: Vec<String> = support::records(dir.path(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        &kinds[kinds.len() - 3..],
        [KIND_SPOOL_MERGE, "UserPromptSubmit", "sjournal.injected"]
    );
    support::verify_all(dir.path());
}

#[test]
fn every_prompt_gets_context_while_a_long_backlog_drains() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let opts = WriterOptions::default();
    for i in 0..BACKLOG {
        let e = encode_event(&format!(
            r#"{{"session_id":"s","hook_event_name":"PostToolUse","n":{i}}}"#
        ));
        keep_elsewhere(&root, "s", &[("PostToolUse", &e)], "lock held", None, &opts).unwrap();
    }
    let prompts = 5;
    for p in 0..prompts {
        let out = hook::run(
            support::hook_opts(&root, Duration::from_secs(60)),
            std::io::Cursor::new(prompt(p)),
        );
        let ctx = context(&out);
        assert!(ctx.contains(&format!("prompt number {p}")), "{out:?}");
        assert!(
            matches!(out.landed, Some(Landed::Spooled { .. })),
            "spooled behind the backlog: {out:?}"
        );
    }
    let left = spool::pending(&root, "s").unwrap().len();
    assert_eq!(
        left,
        BACKLOG - prompts * HOOK_SPOOL_MERGE_MAX_FILES + prompts
    );
    let merges = || -> Vec<SpoolMerge> {
        support::records(dir.path(), "s")
            .into_iter()
            .filter(|r| r.1 == KIND_SPOOL_MERGE)
            .map(|r| serde_json::from_str(&r.2).unwrap())
            .collect()
    };
    assert_eq!(merges().len(), prompts);
    assert!(merges()
        .iter()
        .all(|m| m.entries.len() == HOOK_SPOOL_MERGE_MAX_FILES));

    let out = support::run(dir.path(), &["flush", "--session", "s"], b"");
    assert!(out.status.success(), "{out:?}");
    assert!(spool::pending(&root, "s").unwrap().is_empty());
    // Every event once, in spool order: the backlog, then the prompts.
    let order: Vec<String> = support::records(dir.path(), "s")
        .into_iter()
        .filter(|r| r.1 == "PostToolUse" || r.1 == "UserPromptSubmit")
        .map(|r| {
            let v: serde_json::Value = serde_json::from_str(&r.2).unwrap();
            match v.get("n") {
                Some(n) => format!("n{n}"),
                None => v["prompt"].as_str().unwrap().to_owned(),
            }
        })
        .collect();
    let mut expected: Vec<String> = (0..BACKLOG).map(|i| format!("n{i}")).collect();
    expected.extend((0..prompts).map(|p| format!("prompt number {p}")));
    assert_eq!(order, expected);
    support::verify_all(dir.path());
}
