//! The watchdog never gives up on an event it could still keep. A loaded machine (a slow
//! disk, starved threads) once made hooks exit while their worker had claimed the event and
//! was writing it: the write or the spool file's link never happened and the event was lost.
//! Here the worker is stalled on purpose, through the hook's test seam ([`Checkpoints`]),
//! exactly where that happened: right after it claimed the event for the journal, right after
//! it claimed it for the spool (the session's lock held by someone else), and before it read a
//! stdin that was ready. Each time the watchdog must outwait its grace and the event must be
//! kept exactly once. The stalls are released by the watchdog's own checkpoints, not by
//! clocks, so the interleaving is the same on every machine. And when stdin holds nothing and
//! stays open (a host that has not written), the hook still gives up and fails open.

use crate::support;

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use sjournal::hook::{read as input, HookOptions, InputReady};
use sjournal::journal::{spool, Root, Writer, WriterOptions};
use sjournal::session::{Landed, Session};
use support::{said, Stall};

const EVENT: &str = r#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1"}"#;

/// Input whose first read waits until the watchdog has reported stdin overdue: a worker
/// thread that was not scheduled in time.
struct Starved<R> {
    inner: R,
    stall: Arc<Stall>,
}

impl<R: Read> Read for Starved<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stall.wait_for("input_overdue");
        self.inner.read(buf)
    }
}

fn opts(
    root: &Root,
    deadline_ms: u64,
    stall: &Arc<Stall>,
    input_ready: Option<InputReady>,
) -> HookOptions {
    let mut o = support::hook_opts(root, Duration::from_millis(deadline_ms));
    o.input_ready = input_ready;
    support::stalled(o, stall)
}

fn kinds(root: &Root) -> Vec<String> {
    support::records(root.dir(), "s")
        .into_iter()
        .map(|r| r.1)
        .collect()
}

/// The worker claimed the event for its journal write, then stalled past the deadline and
/// the grace (a slow write or sync): the watchdog waits, and the event is in the journal
/// when the hook returns, once.
#[test]
fn a_claimed_journal_write_outliving_the_grace_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let stall = Stall::new(|s| {
        s.deadline_waits_for_claim = true;
        s.claim_waits_for_overdue = true;
    });
    let out = support::run_hook(opts(&root, 50, &stall, None), std::io::Cursor::new(EVENT));
    assert!(stall.saw("deadline_passed") && stall.saw("write_overdue"));
    assert!(out.timed_out);
    assert!(
        matches!(out.landed, Some(Landed::Journal { .. })),
        "{out:?}"
    );
    assert_eq!(out.landed.as_ref().and_then(Landed::first_seq), Some(1));
    // The watchdog waited past its grace (`write_overdue`) instead of settling the hook; the
    // worker, its write done, settles it and says it was late.
    assert!(said(&out, "finished after its deadline"), "{out:?}");
    // The outcome is delivered: in the CLI the process would exit now. The event is already
    // there.
    assert_eq!(kinds(&root), ["PostToolUse"]);
    assert!(spool::pending(&root, "s").unwrap().is_empty());
    support::verify_all(dir.path());
}

/// The session's lock is held by another writer: the worker gives up on it, claims the event
/// to spool it, and stalls past the grace (a slow fsync of the spool file). The watchdog
/// waits; the spool file is complete when the hook returns, and merged once.
#[test]
fn a_claimed_spool_write_outliving_the_grace_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let holder = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
    let stall = Stall::new(|s| {
        s.deadline_waits_for_claim = true;
        s.claim_waits_for_overdue = true;
    });
    let out = support::run_hook(opts(&root, 100, &stall, None), std::io::Cursor::new(EVENT));
    assert!(stall.saw("write_overdue"));
    let Some(Landed::Spooled { files, .. }) = &out.landed else {
        panic!("expected the worker's spool: {out:?}");
    };
    assert_eq!(&spool::pending(&root, "s").unwrap(), files);
    drop(holder);
    let w = Session::open(&root, "s", &WriterOptions::default()).unwrap();
    assert_eq!(w.merge_report().merged.len(), 1);
    drop(w);
    assert_eq!(kinds(&root), ["sjournal.spool-merge", "PostToolUse"]);
    assert!(spool::pending(&root, "s").unwrap().is_empty());
}

/// The whole event waits in the pipe (the host wrote it and closed it) but the worker has
/// not read it by the deadline plus the stdin grace. Stdin is ready, so the watchdog keeps
/// waiting; the worker reads it (the deadline long gone) and opens the session, where it is
/// held until the watchdog, having given it the grace to claim the event, takes the event
/// over and spools it. The worker, released afterwards, writes nothing.
#[test]
fn ready_stdin_unread_past_its_grace_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let (r, mut w) = std::io::pipe().unwrap();
    w.write_all(br#"{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}"#)
        .unwrap();
    drop(w);
    let probe = r.try_clone().unwrap();
    let ready = InputReady(Arc::new(move || input::fd_ready(probe.as_fd())));
    let stall = Stall::new(|s| s.locked_waits_for_takeover = true);
    let out = support::run_hook(
        opts(&root, 50, &stall, Some(ready)),
        Starved {
            inner: r,
            stall: stall.clone(),
        },
    );
    assert!(stall.saw("input_overdue"));
    assert!(
        matches!(out.landed, Some(Landed::Spooled { .. })),
        "{out:?}"
    );
    // Waits for the worker to let the lock go, then merges the spool.
    drop(Session::open(&root, "s", &WriterOptions::default()).unwrap());
    assert_eq!(kinds(&root), ["sjournal.spool-merge", "SessionStart"]);
}

/// Stdin open and empty (a host that has not written): nothing is waiting to be read, so
/// after the grace the hook gives up and fails open instead of hanging.
#[test]
fn empty_open_stdin_is_given_up_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let (r, w) = std::io::pipe().unwrap();
    let probe = r.try_clone().unwrap();
    let ready = InputReady(Arc::new(move || input::fd_ready(probe.as_fd())));
    let stall = Stall::new(|_| {});
    let out = support::run_hook(opts(&root, 20, &stall, Some(ready)), r);
    assert!(out.landed.is_none(), "{out:?}");
    assert!(out.timed_out);
    assert!(said(&out, "nothing was recorded"), "{out:?}");
    assert!(!stall.saw("input_overdue"));
    // The worker stays parked on its read, as it would until the process exits; closing the
    // pipe would wake it to record an empty input into a directory about to be deleted.
    std::mem::forget(w);
}

/// The same through the binary: its stdin is polled, so a host holding stdin open without
/// writing gets exit 0 and nothing on stdout, not a hang.
#[test]
fn the_binary_gives_up_on_an_empty_open_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = support::spawnable(dir.path())
        .args(["hook", "--deadline-ms", "20"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let held = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    drop(held);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was recorded"));
}
