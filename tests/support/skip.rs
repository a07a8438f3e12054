//! The skip ledger: a test that cannot check something here (no S3 server, no second user, no
//! browser, a host that could not be installed) says so through [`whole`] or [`part`], never
//! with a bare `eprintln!` that the harness swallows for a passing test. Each call prints the
//! reason on stderr and, when `SJOURNAL_TEST_SKIPS` names a file (`tools/test.sh` sets it),
//! appends one line to it:
//!
//! ```text
//! <suite> TAB <test> TAB whole|part TAB <what was skipped> TAB <why> TAB <command that enables it>
//! ```
//!
//! `tools/test.sh` prints that file at the end, grouped by reason, next to the counts cargo
//! gives, so a run that passed having skipped something says what it skipped.
//!
//! Shared by both test binaries: `tests/main.rs` (through `support`) and
//! `tests/real_hosts/main.rs` (`#[path]`).
#![allow(dead_code)]

use std::io::Write;

/// The environment variable naming the ledger file.
pub const LEDGER_ENV: &str = "SJOURNAL_TEST_SKIPS";

/// The whole test checks nothing: call it, then return.
pub fn whole(why: &str, enable: &str) {
    record("whole", "the whole test", why, enable);
}

/// The test goes on without `what` (one backend of several, one case of a table).
pub fn part(what: &str, why: &str, enable: &str) {
    record("part", what, why, enable);
}

/// The name libtest gives the test's thread (`module::test_name`); a test's own threads have
/// other names, so those say which thread it was.
fn test_name() -> String {
    match std::thread::current().name() {
        Some(n) if n != "main" => n.to_owned(),
        Some(_) | None => "(a thread of a test)".to_owned(),
    }
}

fn record(scope: &str, what: &str, why: &str, enable: &str) {
    let test = test_name();
    eprintln!("SKIPPED {test}: {what}: {why} (to run it: {enable})");
    let Some(path) = std::env::var_os(LEDGER_ENV).filter(|p| !p.is_empty()) else {
        return;
    };
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    let line = format!(
        "{}\t{}\t{scope}\t{}\t{}\t{}\n",
        env!("CARGO_CRATE_NAME"),
        clean(&test),
        clean(what),
        clean(why),
        clean(enable)
    );
    // One write of one short line to a file opened for appending: lines from the tests'
    // threads do not interleave.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        panic!(
            "cannot record the skip in {} ({LEDGER_ENV}): {e}",
            std::path::Path::new(&path).display()
        );
    }
}
