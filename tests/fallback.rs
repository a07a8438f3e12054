//! When the root cannot take an event at all, it goes to the fallback spool, outside the root,
//! and the user is told. The root's disk is full (ENOSPC injected through the storage seam
//! for every operation under the root), the root is on a read-only file system (EROFS), the
//! root's directory is not writable (a real permission: run as another user when the tests
//! run as root), or `sessions/` is a symlink: each time the hook exits 0, the event is in the
//! fallback spool (a private directory named in `config.toml`), the reply carries a
//! `systemMessage` saying where, and once the root works again the next reader, writer or
//! `sjournal flush` merges the event into the journal (its merge record saying it waited in
//! the fallback) and removes it from there. Only if the fallback cannot take it either is the
//! event lost — and then the reply says so.

use crate::support;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sjournal::format::payload::{SpoolMerge, KIND_SPOOL_MERGE};
use sjournal::hook::HookOutcome;
use sjournal::journal::{spool, Root, WriterOptions};
use sjournal::session::{Landed, Session};
use sjournal::testing::FaultyFs;

const EVENT: &[u8] =
    br#"{"session_id":"fb","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1"}"#;

struct Setup {
    _dir: tempfile::TempDir,
    root: Root,
    fallback: PathBuf,
}

/// A root whose `config.toml` names a private fallback spool inside the test's directory.
/// The root has its spool key, as every root a writer ever opened has: fallback files are
/// authenticated with it (a root that never had one: `tests/security/spool.rs`).
fn setup() -> Setup {
    let dir = support::scratch();
    let root_dir = dir.path().join("root");
    std::fs::create_dir(&root_dir).unwrap();
    spool::key::ensure(&sjournal::storage::RealFs, &Root::new(&root_dir)).unwrap();
    let fallback = dir.path().join("fallback");
    std::fs::write(
        root_dir.join("config.toml"),
        format!("[hook]\nfallback_spool_dir = {fallback:?}\n"),
    )
    .unwrap();
    Setup {
        root: Root::new(&root_dir),
        fallback,
        _dir: dir,
    }
}

/// Runs the hook in-process with every operation under the root failing with `errno`.
fn hook_with_broken_root(s: &Setup, errno: i32) -> HookOutcome {
    let fs = FaultyFs::new();
    let under = s.root.dir().to_owned();
    fs.fail(errno, move |op, p| op.mutates() && p.starts_with(&under));
    let mut opts = support::hook_opts(&s.root, Duration::from_secs(60));
    opts.config = sjournal::config::Config::load(&s.root).unwrap();
    opts.fs = std::sync::Arc::new(fs);
    support::run_hook(opts, std::io::Cursor::new(EVENT.to_vec()))
}

/// The `systemMessage` of a Claude Code reply.
fn notice(stdout: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(stdout).unwrap_or_default();
    v["systemMessage"].as_str().unwrap_or_default().to_owned()
}

/// The event is merged back into the journal by a reader, from the fallback spool.
fn merged_back(s: &Setup) {
    let out = support::run(s.root.dir(), &["log", "--session", "fb", "--json"], b"");
    assert!(out.status.success(), "{out:?}");
    let recs = support::records(s.root.dir(), "fb");
    let kinds: Vec<&str> = recs.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(kinds, [KIND_SPOOL_MERGE, "PostToolUse"]);
    let merge: SpoolMerge = serde_json::from_str(&recs[0].2).unwrap();
    assert!(merge.entries[0].fallback, "{merge:?}");
    assert_eq!(recs[1].2, std::str::from_utf8(EVENT).unwrap());
    assert!(spool::pending(&s.root, "fb").unwrap().is_empty());
    assert!(files_under(&s.fallback)
        .iter()
        .all(|f| !f.to_string_lossy().ends_with(".spool")));
    support::verify_all(s.root.dir());
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn in_fallback(s: &Setup, out: &HookOutcome) {
    let Some(Landed::Spooled {
        files,
        fallback: true,
        ..
    }) = &out.landed
    else {
        panic!("expected the fallback spool: {out:?}");
    };
    assert!(files[0].starts_with(&s.fallback), "{files:?}");
    let mode = std::fs::metadata(files[0].parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let n = notice(out.stdout.as_deref().unwrap_or("").as_bytes());
    assert!(n.contains("could not store this event"), "{out:?}");
    assert!(n.contains(&files[0].display().to_string()), "{n}");
}

#[test]
fn a_full_disk_under_the_root_sends_the_event_to_the_fallback() {
    let s = setup();
    let out = hook_with_broken_root(&s, libc::ENOSPC);
    in_fallback(&s, &out);
    assert!(
        support::said(&out, "No space left"),
        "{:?}",
        out.diagnostics
    );
    pending_without_a_journal(&s);
    merged_back(&s);
}

/// The session has no journal yet, only its fallback spool: `verify` (which only looks)
/// reports the pending event and exits 1, rather than "no such session" (exit 2).
fn pending_without_a_journal(s: &Setup) {
    assert!(!s.root.session("fb").unwrap().journal.exists());
    let out = support::run(s.root.dir(), &["verify", "--session", "fb"], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        text.contains("PENDING fb: 1 spooled event file(s)"),
        "{text}"
    );
    assert!(text.contains("FALLBACK spool"), "{text}");
    let out = support::run(s.root.dir(), &["verify", "--session", "fb", "--json"], b"");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["session"], "fb", "{line}");
    assert_eq!(line["pending_spool"].as_array().unwrap().len(), 1, "{line}");
    assert!(
        !s.root.session("fb").unwrap().journal.exists(),
        "verify only looks"
    );
}

#[test]
fn a_read_only_root_sends_the_event_to_the_fallback() {
    let s = setup();
    // A session that already has records: the lock file and journal exist, reads work.
    drop(Session::open(&s.root, "fb", &WriterOptions::default()).unwrap());
    let out = hook_with_broken_root(&s, libc::EROFS);
    in_fallback(&s, &out);
    // A writer of the session merges it once the file system is writable again.
    let s2 = Session::open(
        &s.root,
        "fb",
        &sjournal::config::Config::load(&s.root)
            .map(|c| c.writer_options())
            .unwrap_or_default(),
    )
    .unwrap();
    assert_eq!(s2.merge_report().merged_fallback, 1);
    drop(s2);
    merged_back(&s);
}

/// A real unwritable root directory (mode 0500, its owner's). As root, permissions do not
/// stop the tests' own user, so there the root and the fallback belong to `nobody` (uid
/// 65534) and sjournal runs as `nobody`, the one user of both, as in real use: a copy of the
/// binary it can reach (the build's may be in a private directory), in the test's directory.
#[test]
fn an_unwritable_root_directory_sends_the_event_to_the_fallback() {
    use std::os::unix::process::CommandExt;
    let s = setup();
    let as_root = rustix::process::geteuid().is_root();
    let nobody = 65534;
    std::fs::create_dir(&s.fallback).unwrap();
    std::fs::set_permissions(&s.fallback, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut bin = std::path::PathBuf::from(support::bin());
    if as_root {
        let dir = s.fallback.parent().unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        bin = support::copy_for_another_user(dir);
        let reach = std::process::Command::new(&bin)
            .arg("--version")
            .uid(nobody)
            .gid(nobody)
            .output();
        if !reach.as_ref().is_ok_and(|o| o.status.success()) {
            support::skip::whole(
                &format!(
                    "uid {nobody} cannot run {} ({reach:?}): a directory above it is private",
                    bin.display()
                ),
                "TMPDIR=/tmp tools/test.sh (a temp dir every user can pass through)",
            );
            return;
        }
        for p in [
            s.fallback.clone(),
            s.root.dir().to_owned(),
            s.root.dir().join("config.toml"),
            spool::key::path(&s.root),
        ] {
            std::os::unix::fs::chown(&p, Some(nobody), Some(nobody)).unwrap();
        }
    }
    std::fs::set_permissions(s.root.dir(), std::fs::Permissions::from_mode(0o500)).unwrap();
    let mut c = support::sjournal(s.root.dir());
    c.args([
        "hook",
        "--host",
        "claude",
        "--deadline-ms",
        support::PATIENT_MS,
    ]);
    if as_root {
        let mut std_cmd = support::spawnable_at(&bin, s.root.dir());
        std_cmd
            .args([
                "hook",
                "--host",
                "claude",
                "--deadline-ms",
                support::PATIENT_MS,
            ])
            .uid(nobody)
            .gid(nobody);
        c = assert_cmd::Command::from_std(std_cmd);
    }
    let out = c.write_stdin(EVENT).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let n = notice(&out.stdout);
    assert!(n.contains("could not store this event"), "{out:?}");
    assert_eq!(
        files_under(&s.fallback)
            .iter()
            .filter(|f| f.to_string_lossy().ends_with(".spool"))
            .count(),
        1,
        "{out:?}"
    );
    std::fs::set_permissions(s.root.dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut flush = support::spawnable_at(&bin, s.root.dir());
    flush.args(["flush", "--all"]);
    if as_root {
        flush.uid(nobody).gid(nobody);
    }
    let flushed = flush.output().unwrap();
    assert!(flushed.status.success(), "{flushed:?}");
    if as_root {
        // The checks below run as the tests' own user, who may read only its own fallback.
        fn chown_all(p: &Path) {
            std::os::unix::fs::lchown(p, Some(0), Some(0)).unwrap();
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    chown_all(&e.path());
                }
            }
        }
        chown_all(&s.fallback);
    }
    merged_back(&s);
}

#[test]
fn a_symlinked_sessions_dir_sends_the_event_to_the_fallback() {
    let s = setup();
    let elsewhere = s.fallback.parent().unwrap().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, s.root.sessions_dir()).unwrap();
    let out = support::run(
        s.root.dir(),
        &[
            "hook",
            "--host",
            "claude",
            "--deadline-ms",
            support::PATIENT_MS,
        ],
        EVENT,
    );
    assert_eq!(out.status.code(), Some(0));
    let n = notice(&out.stdout);
    assert!(n.contains("could not store this event"), "{out:?}");
    assert!(n.contains("symlink"), "{n}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // The link is replaced by a real directory: the next reader merges the event.
    std::fs::remove_file(s.root.sessions_dir()).unwrap();
    merged_back(&s);
}

/// The fallback is refused too (its directory is another user's, or group-writable): the
/// event is lost, and the user is told so.
#[test]
fn when_nothing_can_be_written_the_user_is_told_the_event_is_lost() {
    let s = setup();
    std::fs::create_dir(&s.fallback).unwrap();
    std::fs::set_permissions(&s.fallback, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = hook_with_broken_root(&s, libc::ENOSPC);
    assert!(out.landed.is_none(), "{out:?}");
    let n = notice(out.stdout.as_deref().unwrap_or("").as_bytes());
    assert!(n.contains("LOST"), "{out:?}");
    assert!(n.contains("other users have access"), "{n}");
}

/// An import's records keep their own times (`Batch::times`, from the exported lines)
/// through the fallback spool and the merge; the merge record itself is stamped at the merge.
#[test]
fn records_spooled_with_their_own_times_keep_them_through_the_merge() {
    let s = setup();
    let fs = FaultyFs::new();
    let under = s.root.dir().to_owned();
    fs.fail(libc::ENOSPC, move |op, p| {
        op.mutates() && p.starts_with(&under)
    });
    let mut opts = sjournal::config::Config::load(&s.root)
        .unwrap()
        .writer_options();
    opts.fs = std::sync::Arc::new(fs);
    let times = [1_600_000_000_000_000_001i64, 1_600_000_000_000_000_002];
    let mut batch = sjournal::session::Batch::new();
    for n in 0..2 {
        let e = format!(r#"{{"session_id":"fb","hook_event_name":"PostToolUse","n":{n}}}"#);
        batch.push(
            "PostToolUse",
            sjournal::format::payload::encode_event_json(&e),
        );
    }
    batch.times = times.iter().map(|t| Some(*t)).collect();
    let landed = sjournal::session::keep_elsewhere(
        &s.root,
        "fb",
        &batch.items(),
        &batch.times,
        "disk full",
        None,
        &opts,
    )
    .unwrap();
    assert!(
        matches!(landed, Landed::Spooled { fallback: true, .. }),
        "{landed:?}"
    );
    // `log` merges them (the root works again).
    let out = support::run(s.root.dir(), &["log", "--session", "fb", "--json"], b"");
    assert!(out.status.success(), "{out:?}");
    let journal = s.root.session("fb").unwrap().journal;
    let reader = sjournal::journal::JournalReader::open(&journal, None).unwrap();
    let recs: Vec<(String, i64)> = reader
        .records()
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (r.kind.to_owned(), r.ts_unix_ns)
        })
        .collect();
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert_eq!(recs[0].0, KIND_SPOOL_MERGE);
    assert!(recs[0].1 > times[1], "the merge is stamped now: {recs:?}");
    assert_eq!(recs[1], ("PostToolUse".to_owned(), times[0]));
    assert_eq!(recs[2], ("PostToolUse".to_owned(), times[1]));
    support::verify_all(s.root.dir());
}

/// A root (or its `sessions/`) that another user could write is not read: a journal planted
/// or altered there would be folded into what the hook injects. The hook still exits 0 and
/// keeps the event, in the fallback spool, and says why; once the directory is private again
/// the event is merged in.
#[test]
fn a_root_other_users_can_write_is_not_read_and_the_event_is_kept_in_the_fallback() {
    const NOTE: &str = "a standing note kept in the journal";
    let prompt = br#"{"session_id":"fb","hook_event_name":"UserPromptSubmit","prompt":"go on"}"#;
    let s = setup();
    let set = support::run(
        s.root.dir(),
        &["context", "set", "--session", "fb", "--key", "rule", NOTE],
        b"",
    );
    assert!(set.status.success(), "{set:?}");
    let hook = |s: &Setup| {
        support::run(
            s.root.dir(),
            &[
                "hook",
                "--host",
                "claude",
                "--deadline-ms",
                support::PATIENT_MS,
            ],
            prompt,
        )
    };
    // Private: the note is injected (so the assertion below can fail).
    let out = hook(&s);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(NOTE),
        "{out:?}"
    );
    for dir in [s.root.dir().to_owned(), s.root.sessions_dir()] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let out = hook(&s);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            !stdout.contains(NOTE),
            "{dir:?} is writable by others: {stdout}"
        );
        let n = notice(&out.stdout);
        assert!(n.contains("other users can write"), "{n}");
        assert!(n.contains(&dir.display().to_string()), "{n}");
        assert_eq!(
            files_under(&s.fallback)
                .iter()
                .filter(|f| f.to_string_lossy().ends_with(".spool"))
                .count(),
            1,
            "{out:?}"
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let log = support::run(s.root.dir(), &["log", "--session", "fb", "--json"], b"");
        assert!(log.status.success(), "{log:?}");
        assert!(spool::pending(&s.root, "fb").unwrap().is_empty());
    }
    let prompts = support::records(s.root.dir(), "fb")
        .iter()
        .filter(|r| r.1 == "UserPromptSubmit")
        .count();
    assert_eq!(prompts, 3, "every prompt kept");
    support::verify_all(s.root.dir());
}
