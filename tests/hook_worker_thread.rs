//! The hook starts one thread, which reads `config.toml` and then does the hook's work
//! (`hook::WorkerThread`, `hook::run_on`): a second thread start was a measurable share of a
//! hook. The work must run on that thread when it has delivered the configuration, and on a
//! new thread when it may still be reading it (a read that blocks, on a hung mount, must not
//! hold the event up); either way the event is journaled once.

use crate::support;

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use sjournal::hook::{self, Checkpoints, HookOptions, WorkerThread};
use sjournal::journal::{Landed, Root};

const EVENT: &str = r#"{"session_id":"w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1"}"#;

/// Records which thread held the session's lock (the thread that did the hook's work).
#[derive(Debug, Default)]
struct WhichThread(Mutex<Option<ThreadId>>);

impl Checkpoints for WhichThread {
    fn locked(&self) {
        *self.0.lock().unwrap() = Some(std::thread::current().id());
    }
}

fn run(root: &Root, thread: WorkerThread) -> (hook::HookOutcome, Option<ThreadId>) {
    let which = Arc::new(WhichThread::default());
    let opts = HookOptions {
        checkpoints: Some(which.clone() as Arc<dyn Checkpoints>),
        ..support::hook_opts(root, Duration::from_secs(60))
    };
    let out = hook::run_on(thread, opts, std::io::Cursor::new(EVENT));
    let id = *which.0.lock().unwrap();
    (out, id)
}

#[test]
fn the_thread_that_read_the_configuration_does_the_hooks_work() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    let mut thread = WorkerThread::start(&root);
    let started = thread.id().expect("a thread was started");
    thread
        .config(Duration::from_secs(60))
        .expect("no config.toml: the defaults");
    let (out, worked_on) = run(&root, thread);
    assert!(
        matches!(out.landed, Some(Landed::Journal { .. })),
        "{:?}",
        out.diagnostics
    );
    assert_eq!(worked_on, Some(started));
    assert_eq!(support::records(dir.path(), "w").len(), 1);
}

#[test]
fn a_thread_that_may_still_be_reading_the_configuration_is_not_given_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path());
    // The configuration is never waited for: as far as the hook knows, the thread is still
    // reading it.
    let thread = WorkerThread::start(&root);
    let started = thread.id().expect("a thread was started");
    let (out, worked_on) = run(&root, thread);
    assert!(
        matches!(out.landed, Some(Landed::Journal { .. })),
        "{:?}",
        out.diagnostics
    );
    assert!(worked_on.is_some());
    assert_ne!(worked_on, Some(started), "the work went to a new thread");
    assert_eq!(support::records(dir.path(), "w").len(), 1);
}
