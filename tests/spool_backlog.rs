//! Context keeps arriving while events are spooled. With the session's lock held by another
//! writer, a prompt is spooled, and its context (the session's note, which it has not seen)
//! is still rendered, from what the journal holds plus the prompt itself; merged, it
//! re-derives byte for byte in a replay, and the next prompt is not told again. After a long
//! backlog (2000 spooled events), each prompt's hook merges only a bounded number of spool
//! files (`HOOK_SPOOL_MERGE_MAX_FILES`), spools its own event behind what is left (never
//! overtaking it), and injects context: every prompt gets its context, from the journal and
//! the spooled events still waiting before it (a note spooled just before each prompt is
//! injected with it, and no note twice). `sjournal flush` then merges the rest, the journal
//! holds every event exactly once, in spool order, and every injection re-derives.

use crate::support;

use std::time::Duration;

use sjournal::context::{Channel, Policy};
use sjournal::format::payload::{
    encode_event_json, encode_system, ContextSet, SpoolMerge, KIND_CONTEXT_SET, KIND_SPOOL_MERGE,
};
use sjournal::journal::{spool, JournalReader, Root, Writer, WriterOptions};
use sjournal::limits::HOOK_SPOOL_MERGE_MAX_FILES;
use sjournal::replay::{replay, session::SessionFold, CheckStatus};
use sjournal::session::{keep_elsewhere, Landed};
use support::Stall;

const BACKLOG: usize = 2000;

fn prompt(n: usize) -> Vec<u8> {
    format!(
        r#"{{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"prompt number {n}"}}"#
    )
    .into_bytes()
}

const NOTE: &str = "Decision: journals are append-only; never rewrite a record.";

/// The session's persistent note: what the policy injects with the next prompt.
fn note(root: &Root) {
    let opts = WriterOptions::default();
    sjournal::primitives::context_set(root, "s", Channel::Persistent, "decision", NOTE, &opts)
        .unwrap();
}

/// The replay's check of every journaled injection (event seq, status).
fn replay_checks(root: &Root) -> Vec<(u64, CheckStatus)> {
    let paths = root.session("s").unwrap();
    let reader = JournalReader::open(&paths.journal, None).unwrap();
    let mut fold = SessionFold::new(Policy::default());
    let mut checks = Vec::new();
    replay(&reader, &mut fold, Default::default(), |s| {
        checks.extend(s.injection.filter(|c| c.journaled.is_some()));
        Ok(())
    })
    .unwrap();
    checks.iter().map(|c| (c.event_seq, c.status)).collect()
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
    let out = support::run_hook(
        support::hook_opts(&root, Duration::from_secs(60)),
        std::io::Cursor::new(prompt(0)),
    );
    assert!(out.landed.is_some(), "{out:?}");
    note(&root);
    let holder = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    // The watchdog waits for the worker to claim the event: no race with the deadline.
    let stall = Stall::new(|s| s.deadline_waits_for_claim = true);
    let opts = support::stalled(support::hook_opts(&root, Duration::from_secs(2)), &stall);
    let out = support::run_hook(opts, std::io::Cursor::new(prompt(1)));
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{out:?}"
    );
    let ctx = context(&out);
    assert!(ctx.contains(NOTE), "the journal's state: {out:?}");
    // A second prompt while the lock is still held, spooled behind the first: the note went
    // with the first (in the spool), so it is not said again.
    let stall = Stall::new(|s| s.deadline_waits_for_claim = true);
    let opts = support::stalled(support::hook_opts(&root, Duration::from_secs(2)), &stall);
    let out = support::run_hook(opts, std::io::Cursor::new(prompt(3)));
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{out:?}"
    );
    assert_eq!(out.stdout, None, "said once");
    drop(holder);
    // The context went with the event into the spool, and into the journal with it.
    support::run(dir.path(), &["flush", "--session", "s"], b"");
    let kinds: Vec<String> = support::records(dir.path(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        &kinds[kinds.len() - 4..],
        [
            KIND_SPOOL_MERGE,
            "UserPromptSubmit",
            "sjournal.injected",
            "UserPromptSubmit"
        ]
    );
    assert_eq!(
        replay_checks(&root),
        [(kinds.len() as u64 - 2, CheckStatus::Match)]
    );
    // The note was said once: the next prompt, journaled directly, gets nothing.
    let out = support::run_hook(
        support::hook_opts(&root, Duration::from_secs(60)),
        std::io::Cursor::new(prompt(2)),
    );
    assert!(
        matches!(out.landed, Some(Landed::Journal { .. })),
        "{out:?}"
    );
    assert_eq!(out.stdout, None);
    support::verify_all(dir.path());
}

#[test]
fn every_prompt_gets_context_while_a_long_backlog_drains() {
    let dir = support::scratch();
    let root = Root::new(dir.path());
    let opts = WriterOptions::default();
    for i in 0..BACKLOG {
        let e = encode_event_json(&format!(
            r#"{{"session_id":"s","hook_event_name":"PostToolUse","n":{i}}}"#
        ));
        keep_elsewhere(
            &root,
            "s",
            &[("PostToolUse", &e)],
            &[],
            "lock held",
            None,
            &opts,
        )
        .unwrap();
    }
    let prompts = 5;
    for p in 0..prompts {
        // A note spooled right before the prompt (behind the backlog), as a writer that found
        // the lock held would.
        let n = encode_system(&ContextSet {
            channel: "persistent".into(),
            key: format!("n{p}"),
            text: format!("spooled note {p}"),
        });
        keep_elsewhere(
            &root,
            "s",
            &[(KIND_CONTEXT_SET, &n)],
            &[],
            "lock held",
            None,
            &opts,
        )
        .unwrap();
        let out = support::run_hook(
            support::hook_opts(&root, Duration::from_secs(60)),
            std::io::Cursor::new(prompt(p)),
        );
        let ctx = context(&out);
        assert!(ctx.contains(&format!("spooled note {p}")), "{out:?}");
        assert_eq!(ctx.matches("spooled note").count(), 1, "said once: {ctx}");
        assert!(
            matches!(out.landed, Some(Landed::Spooled { .. })),
            "spooled behind the backlog: {out:?}"
        );
    }
    let left = spool::pending(&root, "s").unwrap().len();
    assert_eq!(
        left,
        BACKLOG + 2 * prompts - prompts * HOOK_SPOOL_MERGE_MAX_FILES
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
    let checks = replay_checks(&root);
    assert_eq!(checks.len(), prompts, "{checks:?}");
    assert!(
        checks.iter().all(|c| c.1 == CheckStatus::Match),
        "{checks:?}"
    );
    support::verify_all(dir.path());
}
