//! `sjournal migrate` rewrites a format-1 journal as format 3: the checked-in fixture journal
//! folds to the same state before and after, verifies, and its signed statement checks with
//! `verify --migration` (and `--checkpoint`); the old file is kept byte for byte and a second
//! run leaves the journal alone. A statement edited (signed or not), or a journal re-chained
//! with one payload changed, fails `verify --migration` naming what and where. An erasure
//! works after the migration and the migration still checks. A failed rename leaves the journal
//! and its mark as they were; a rescue journal is refused; `--dry-run` changes nothing. With
//! the search index: an erased field's words are no longer found, the rest of the record is,
//! and after a migration every hit cites the journal's new hash. `--all` takes scope journals too;
//! a shipped journal is refused.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use sjournal::audit::migrate::{migrate, MigrateError, Options, Statement};
use sjournal::format::hash::genesis_hash;
use sjournal::format::header::{Header, FORMAT_VERSION};
use sjournal::format::record::{self, Salts};
use sjournal::journal::scan;
use sjournal::journal::Root;
use sjournal::testing::{FaultyFs, Op};
use support::{read, sjournal};

const S: &str = "mig";

fn run(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = sjournal(root).args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn event(i: usize) -> String {
    format!(
        r#"{{"hook_event_name":"PostToolUse","session_id":"mig","tool_name":"Bash","tool_input":{{"command":"echo zebra{i}"}},"tool_response":{{"stdout":"giraffe{i}"}}}}"#
    )
}

/// A format-1 journal of `n` events through the CLI.
fn v1_session(root: &Path, n: usize) -> PathBuf {
    let r = Root::new(root);
    support::start_v1(&r, S);
    for i in 0..n {
        sjournal(root)
            .args(["append", "--session", S])
            .write_stdin(event(i))
            .assert()
            .success();
    }
    let path = r.session(S).unwrap().journal;
    assert_eq!(version(&path), 1);
    path
}

fn version(path: &Path) -> u16 {
    Header::decode(&read(path)).unwrap().0.format_version
}

fn keys(root: &Path) -> (PathBuf, PathBuf) {
    let key = root.join("k.key");
    sjournal(root)
        .args(["checkpoint", "keygen", "--name", "auditor"])
        .arg(&key)
        .assert()
        .success();
    (key.clone(), root.join("k.key.pub"))
}

/// The statement file `migrate` wrote beside the journal.
fn statement(root: &Path) -> PathBuf {
    let dir = Root::new(root).sessions_dir();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".note"))
        .collect();
    assert_eq!(v.len(), 1, "{v:?}");
    v.pop().unwrap()
}

fn kept(root: &Path) -> Vec<PathBuf> {
    let dir = Root::new(root).sessions_dir();
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".sjl.v1-"))
        .collect()
}

fn state_json(root: &Path, session: &str) -> String {
    let (code, out, err) = run(root, &["state", "--session", session, "--json"]);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn fixture_journal_migrates_keeps_its_state_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let fixture = support::fixtures_dir().join("journals/session.sjl");
    let original = read(&fixture);
    let session = Header::decode(&original).unwrap().0.session_id;
    let paths = Root::new(&root).session(&session).unwrap();
    Root::new(&root).ensure().unwrap();
    std::fs::write(&paths.journal, &original).unwrap();
    let before = state_json(&root, &session);
    let (key, public) = keys(dir.path());

    let (code, out, err) = run(
        &root,
        &[
            "migrate",
            "--session",
            &session,
            "--key",
            key.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("migrated format 1 to 3"), "{out}");
    assert_eq!(version(&paths.journal), FORMAT_VERSION);
    assert_eq!(
        state_json(&root, &session),
        before,
        "the fold sees the same records"
    );
    let (code, out, _) = run(&root, &["verify", "--session", &session]);
    assert_eq!(code, 0, "{out}");

    // The old file, byte for byte, under the name repair's kept files have.
    let old = kept(&root);
    assert_eq!(old.len(), 1);
    assert_eq!(read(&old[0]), original);

    let note = statement(&root);
    let text = std::fs::read_to_string(&note).unwrap();
    assert!(text.contains("\nsjournal migration\nold 1 "), "{text}");
    assert!(text.contains("\n\n\u{2014} auditor "), "signed: {text}");
    let mode = |p: &Path| {
        std::os::unix::fs::PermissionsExt::mode(&p.metadata().unwrap().permissions()) & 0o777
    };
    assert_eq!(mode(&note), 0o600);
    assert_eq!(mode(&paths.journal), 0o600);
    for flag in ["--migration", "--checkpoint"] {
        let (code, out, err) = run(
            &root,
            &[
                "verify",
                "--session",
                &session,
                flag,
                note.to_str().unwrap(),
                "--pubkey",
                public.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 0, "{flag}: {out}{err}");
        assert!(out.contains("signature: valid"), "{out}");
    }

    // Idempotent: a format-3 journal is left alone.
    let now = read(&paths.journal);
    let (code, out, _) = run(&root, &["migrate", "--all"]);
    assert_eq!(code, 0);
    assert!(out.contains("already version 3"), "{out}");
    assert_eq!(read(&paths.journal), now);
}

#[test]
fn edited_statement_or_rechained_payload_fails_verify_migration() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let journal = v1_session(root, 4);
    let (key, public) = keys(root);
    let (code, _, err) = run(
        root,
        &["migrate", "--session", S, "--key", key.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let note = statement(root);
    let text = std::fs::read_to_string(&note).unwrap();
    let check = |file: &Path, pubkey: bool| {
        let mut args = vec![
            "verify",
            "--session",
            S,
            "--migration",
            file.to_str().unwrap(),
        ];
        if pubkey {
            args.extend(["--pubkey", public.to_str().unwrap()]);
        }
        run(root, &args)
    };
    assert_eq!(check(&note, true).0, 0);

    // The signed statement with its old head changed: the signature no longer verifies.
    let (st, _) = Statement::parse(&text).unwrap();
    let mut forged = st.clone();
    forged.old_head = sjournal::format::Hash([9; 32]);
    let edited = text.replacen(&st.body(), &forged.body(), 1);
    assert_ne!(edited, text);
    let bad = root.join("edited.note");
    std::fs::write(&bad, &edited).unwrap();
    let (code, out, _) = check(&bad, true);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("INVALID"), "{out}");
    // Unsigned, it is the old head that does not check.
    std::fs::write(&bad, forged.body()).unwrap();
    let (code, out, _) = check(&bad, false);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("seq 4: the old journal's head"), "{out}");

    // The journal re-chained with seq 2's payload changed, and a statement naming its head:
    // only the record-by-record comparison with the kept old file can tell.
    let old = read(&kept(root)[0]);
    let (h, hlen) = Header::decode(&old).unwrap();
    let mut new = Header::with_version(S, h.created_unix_ns, FORMAT_VERSION).encode();
    let mut prev = genesis_hash(&new);
    let salts = Salts::new();
    let mut at = hlen;
    while at < old.len() {
        let f = scan::frame(&old[at..]).unwrap();
        let payload = if f.seq == 2 {
            sjournal::fold::digest::encode_event("PostToolUse", &event(77))
        } else {
            f.payload.to_vec()
        };
        prev = record::encode_digested(
            &mut new,
            FORMAT_VERSION,
            f.seq,
            f.ts_unix_ns,
            f.kind,
            &prev,
            &payload,
            &salts.salt(f.seq),
            None,
        );
        at += f.len();
    }
    std::fs::write(&journal, &new).unwrap();
    let mut rechained = st.clone();
    rechained.new.hash = prev;
    std::fs::write(&bad, rechained.body()).unwrap();
    let (code, out, _) = check(&bad, false);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "seq 2: the record differs between the old journal and the current one (payload)"
        ),
        "{out}"
    );
    assert!(!out.contains("seq 3:"), "{out}");
}

#[test]
fn erase_works_after_migrate_and_the_migration_still_checks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    v1_session(root, 3);
    let (code, out, _) = run(
        root,
        &["erase", "--session", S, "--seq", "2", "--reason", "pii"],
    );
    assert_eq!(code, 2, "a format-1 journal is refused: {out}");
    assert_eq!(run(root, &["migrate", "--session", S]).0, 0);
    let (code, out, err) = run(
        root,
        &[
            "erase",
            "--session",
            S,
            "--seq",
            "2",
            "--field",
            "/tool_input/command",
            "--reason",
            "pii",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = run(root, &["verify", "--session", S]);
    assert_eq!(code, 0, "{out}");
    let note = statement(root);
    let (code, out, _) = run(
        root,
        &[
            "verify",
            "--session",
            S,
            "--migration",
            note.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}");
    // The statement still checks, and says which record was erased since.
    assert!(
        out.contains("holds the same records but 1 erased since (seq 2)"),
        "{out}"
    );
}

#[test]
fn a_failed_rename_leaves_the_journal_and_its_mark_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let journal = v1_session(root, 3);
    let mark = sjournal::journal::hwm::path_for(&journal);
    let (journal_before, mark_before) = (read(&journal), read(&mark));
    let fs = FaultyFs::new();
    fs.fail(libc::EIO, |op, _| op == Op::Rename);
    let opts = Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    let r = Root::new(root);
    match migrate(&r, S, &opts) {
        Err(MigrateError::Journal(_)) => {}
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert!(fs.injected() > 0);
    assert_eq!(read(&journal), journal_before);
    assert_eq!(read(&mark), mark_before);
    let names: Vec<String> = std::fs::read_dir(r.sessions_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with(".note") || n.ends_with(".migrate")),
        "{names:?}"
    );
    assert_eq!(run(root, &["verify", "--session", S]).0, 0);
    // The disk works again: the migration goes through.
    fs.clear();
    let done = migrate(&r, S, &opts).unwrap();
    assert!(done.migrated);
    assert_eq!(version(&journal), FORMAT_VERSION);
    assert_eq!(run(root, &["verify", "--session", S]).0, 0);
}

/// A crash (here: the mark's write failing) after the new journal was renamed over the old one
/// and before the mark was reset leaves the mark naming the format-1 head: verify fails on it.
/// `migrate` run again finishes the migration from its statement: verify passes, and the next
/// append goes to the journal (no rescue journal).
/// A migration of a 3-record format-1 session in `root` that stops after its rename: the
/// mark's write fails. Returns the journal, the faulty file system (still failing) and the
/// options that use it.
fn migration_stopped_after_rename(root: &Path) -> (PathBuf, FaultyFs, Options) {
    let journal = v1_session(root, 3);
    let mark = sjournal::journal::hwm::path_for(&journal);
    let fs = FaultyFs::new();
    fs.fail(libc::EIO, move |op, p| {
        matches!(op, Op::Open { write: true, .. }) && p == mark
    });
    let opts = Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    assert!(migrate(&Root::new(root), S, &opts).is_err());
    assert!(fs.injected() > 0);
    assert_eq!(version(&journal), FORMAT_VERSION, "the rename happened");
    (journal, fs, opts)
}

#[test]
fn a_migration_stopped_after_its_rename_is_finished_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (_, fs, opts) = migration_stopped_after_rename(root);
    let r = Root::new(root);
    let (code, out, _) = run(root, &["verify", "--session", S]);
    assert_ne!(code, 0, "the mark names the old chain: {out}");
    fs.clear();
    let done = migrate(&r, S, &opts).unwrap();
    assert!(done.finished && !done.migrated, "{done:?}");
    let (code, out, _) = run(root, &["verify", "--session", S]);
    assert_eq!(code, 0, "{out}");
    sjournal(root)
        .args(["append", "--session", S])
        .write_stdin(event(9))
        .assert()
        .success();
    let (code, out, _) = run(root, &["verify", "--session", S]);
    assert_eq!(code, 0, "{out}");
    assert!(!r.session(S).unwrap().rescue.exists());
    // Nothing left to finish.
    assert!(!migrate(&r, S, &opts).unwrap().finished);
}

/// The same interrupted migration, and no `migrate` run again: the next writer finishes it
/// itself (its statement binds the old head the mark names to the journal's head), so hooks'
/// events go to the journal, not to the rescue journal, even when several find the mark
/// refused at once, and everything verifies. Without the statement (the control) the writer
/// refuses the journal as before and the events are rescued.
#[test]
fn the_next_writer_finishes_a_migration_stopped_after_its_rename() {
    for with_statement in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (journal, _fs, _opts) = migration_stopped_after_rename(root);
        let r = Root::new(root);
        if !with_statement {
            std::fs::remove_file(statement(root)).unwrap();
        }
        let payload = format!(
            r#"{{"session_id":"{S}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"true"}},"tool_response":{{}}}}"#
        );
        // Six hooks at once: each finds the mark refused; one finishes, the others must
        // then take the journal too, none its rescue journal.
        let hooks: Vec<std::process::Child> = (0..6)
            .map(|_| {
                let mut c = support::cmd::spawnable(root);
                c.args(["hook", "--host", "claude", "--deadline-ms", "60000"])
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                let mut child = c.spawn().unwrap();
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(payload.as_bytes())
                    .unwrap();
                child
            })
            .collect();
        for mut h in hooks {
            assert!(h.wait().unwrap().success());
        }
        let rescue = r.session(S).unwrap().rescue;
        if with_statement {
            assert!(!rescue.exists(), "an event went to the rescue journal");
            let (code, out, _) = run(root, &["verify", "--session", S]);
            assert_eq!(code, 0, "{out}");
            let records = sjournal::journal::JournalReader::open(&journal, None)
                .unwrap()
                .records()
                .unwrap()
                .count();
            assert_eq!(
                records, 9,
                "the three migrated records and the hooks' six events"
            );
        } else {
            assert!(rescue.exists(), "the control: the journal is refused");
        }
    }
}

#[test]
fn rescue_journal_is_refused_and_dry_run_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let journal = v1_session(root, 2);
    let before = read(&journal);
    let (code, out, _) = run(root, &["migrate", "--session", S, "--dry-run"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("would migrate format 1 to 3 (2 records"),
        "{out}"
    );
    assert_eq!(read(&journal), before);
    assert!(kept(root).is_empty());

    let rescue = Root::new(root).session(S).unwrap().rescue;
    std::fs::write(&rescue, Header::with_version(S, 1, 1).encode()).unwrap();
    let (code, _, err) = run(root, &["migrate", "--session", S]);
    assert_eq!(code, 2);
    assert!(
        err.contains("rescue journal") && err.contains("sjournal repair"),
        "{err}"
    );
    assert_eq!(read(&journal), before);
}

#[cfg(feature = "search")]
fn search(root: &Path, word: &str) -> Vec<Value> {
    let (code, out, err) = run(root, &["search", "--all", "--json", word]);
    // Exit 1: nothing found.
    assert!(code == 0 || (code == 1 && out.is_empty()), "{code} {err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[cfg(feature = "search")]
#[test]
fn the_search_index_forgets_an_erased_field_and_cites_migrated_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    v1_session(root, 3);
    assert_eq!(
        search(root, "zebra1").len(),
        1,
        "the index exists and finds it"
    );

    assert_eq!(run(root, &["migrate", "--session", S]).0, 0);
    let (_, log, _) = run(root, &["log", "--session", S, "--json"]);
    let hash_of = |seq: u64| {
        log.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["seq"] == seq)
            .unwrap()["hash"]
            .clone()
    };
    let hits = search(root, "giraffe1");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["hash"], hash_of(hits[0]["seq"].as_u64().unwrap()));

    // The last record: its offset and hash stay what the index's cursor names, so only a
    // journal read again from its start forgets what was erased from it.
    let last = search(root, "giraffe2");
    let seq = last[0]["seq"].as_u64().unwrap();
    assert_eq!(log.lines().count() as u64, seq, "the last record");
    let seq = seq.to_string();
    let (code, out, err) = run(
        root,
        &[
            "erase",
            "--session",
            S,
            "--seq",
            &seq,
            "--field",
            "/tool_input/command",
            "--reason",
            "pii",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        search(root, "zebra2").is_empty(),
        "the erased command is forgotten"
    );
    assert_eq!(
        search(root, "giraffe2").len(),
        1,
        "the rest of the record is still found"
    );
    assert_eq!(search(root, "zebra1").len(), 1);
}

#[test]
fn all_migrates_session_and_scope_journals() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let session = v1_session(root, 2);
    let r = Root::new(root);
    let scope = "scope:global";
    support::start_v1(&r, scope);
    sjournal(root)
        .args(["append", "--session", scope])
        .write_stdin(event(9))
        .assert()
        .success();
    let scope_journal = r.session(scope).unwrap().journal;
    assert_eq!(version(&scope_journal), 1);
    let (code, out, err) = run(root, &["migrate", "--all", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let ids: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["migrated"] == true)
        .map(|v| v["session_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 2, "{out}");
    assert!(
        ids.contains(&scope.to_owned()) && ids.contains(&S.to_owned()),
        "{ids:?}"
    );
    assert_eq!(version(&session), FORMAT_VERSION);
    assert_eq!(version(&scope_journal), FORMAT_VERSION);
    let (code, out, _) = run(root, &["verify", "--all"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_shipped_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let journal = v1_session(root, 2);
    let bytes = read(&journal);
    let (_, hlen) = Header::decode(&bytes).unwrap();
    let (_, out, _) = run(root, &["verify", "--session", S, "--json"]);
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let line = serde_json::json!({
        "v": 1,
        "genesis": genesis_hash(&bytes[..hlen]).to_hex(),
        "last_seq": v["last_seq"],
        "end": bytes.len(),
        "head": v["head"],
    })
    .to_string();
    let cursors = root.join("remote/cursors/d1");
    std::fs::create_dir_all(&cursors).unwrap();
    std::fs::write(cursors.join("dest"), "file:///elsewhere\n").unwrap();
    let crc = format!("{:08x}", crc32fast::hash(line.as_bytes()));
    std::fs::write(
        cursors.join(format!("{S}.cursor")),
        format!("{line}\n{crc}\n"),
    )
    .unwrap();
    let (code, out, _) = run(root, &["verify", "--session", S]);
    assert_eq!(code, 0, "the cursor agrees with the journal: {out}");
    let (code, _, err) = run(root, &["migrate", "--session", S]);
    assert_eq!(code, 2);
    assert!(err.contains("was shipped (file:///elsewhere)"), "{err}");
    assert_eq!(read(&journal), bytes);
}

/// The checked-in format-2 journal with erasures: its session id.
const FORMAT2: &str = "claude-real-format2-erased-digests";

/// The checked-in format-2 journal copied into a new root at `root`: its paths and bytes.
fn format2_fixture(root: &Path) -> (sjournal::journal::SessionPaths, Vec<u8>) {
    let original = read(&support::fixtures_dir().join(format!("journals/{FORMAT2}.sjl")));
    let paths = Root::new(root).session(FORMAT2).unwrap();
    Root::new(root).ensure().unwrap();
    std::fs::write(&paths.journal, &original).unwrap();
    (paths, original)
}

/// The checked-in format-2 journal (written by the build before format 3, a field of seq 11 and
/// the whole of seq 15 erased): this build reads it (`log` shows the erased records), verifies
/// it with its erasures, appends to it in format 2 (a journal keeps its header's version), and
/// `migrate` rewrites it as format 3 keeping every record's salt and digest: the same erasures
/// (seq, digest) verify, the fold's state is the same, the statement checks, and the old file
/// is kept byte for byte as `.v2-`.
#[test]
fn a_format_2_journal_with_erasures_is_read_appended_to_and_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let (paths, _) = format2_fixture(&root);
    let name = FORMAT2;
    assert_eq!(version(&paths.journal), 2);
    let erasures = |root: &Path| -> Vec<(u64, String)> {
        let (code, out, err) = run(root, &["verify", "--session", name, "--json"]);
        let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        // A journal copied in has no high-water mark until a writer writes one.
        let no_mark = v["problem"]["what"]
            .as_str()
            .is_some_and(|w| w.starts_with("the high-water mark is missing"));
        assert!(code == 0 || (code == 1 && no_mark), "{out}{err}");
        v["erasures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["seq"].as_u64().unwrap(),
                    e["erased_digest"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let before = erasures(&root);
    assert_eq!(
        before.iter().map(|e| e.0).collect::<Vec<_>>(),
        [11, 15],
        "{before:?}"
    );
    let (code, out, err) = run(&root, &["log", "--session", name]);
    assert_eq!(code, 0, "{err}");
    let erased: Vec<&str> = out.lines().filter(|l| l.contains("[ERASED]")).collect();
    assert_eq!(erased.len(), 2, "{out}");
    assert!(erased[1].contains("[ERASED] null"), "{out}");
    assert!(!erased[0].contains("echo hello"), "{out}");

    // An append stays format 2, and the journal verifies.
    sjournal(&root)
        .args(["append", "--session", name])
        .write_stdin(r#"{"hook_event_name":"Stop","session_id":"x"}"#)
        .assert()
        .success();
    let appended = read(&paths.journal);
    let (_, hlen) = Header::decode(&appended).unwrap();
    let last = {
        let mut at = hlen;
        let mut last = None;
        while at < appended.len() {
            let f = scan::frame(&appended[at..]).unwrap();
            last = Some((f.seq, f.version()));
            at += f.len();
        }
        last.unwrap()
    };
    assert_eq!(last, (40, 2));
    assert_eq!(erasures(&root), before);
    let state = state_json(&root, name);

    let (code, out, err) = run(&root, &["migrate", "--session", name]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("migrated format 2 to 3 (40 records"), "{out}");
    assert_eq!(version(&paths.journal), 3);
    assert_eq!(
        erasures(&root),
        before,
        "the same erasures, the same digests"
    );
    assert_eq!(
        state_json(&root, name),
        state,
        "the fold sees the same records"
    );
    let kept: Vec<PathBuf> = std::fs::read_dir(Root::new(&root).sessions_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".sjl.v2-"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(read(&kept[0]), appended);
    let note = statement(&root);
    let (code, out, err) = run(
        &root,
        &[
            "verify",
            "--session",
            name,
            "--migration",
            note.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    // Every frame of the new journal is a version-3 one.
    let new = read(&paths.journal);
    let mut at = hlen;
    while at < new.len() {
        let f = scan::frame(&new[at..]).unwrap();
        assert_eq!(f.version(), 3, "seq {}", f.seq);
        at += f.len();
    }
}

/// A migration to format 2 by an older build, interrupted after its rename (the format-2
/// journal in place, its statement beside it, the mark still naming the old head): `migrate
/// --dry-run` says it would finish it and changes nothing; `migrate` finishes it and then
/// rewrites the journal as format 3, saying both; it verifies.
#[test]
fn an_older_builds_interrupted_migration_is_finished_then_migrated() {
    use sjournal::audit::checkpoint::{origin_for, Checkpoint};
    use sjournal::format::mark::Mark;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let name = "claude-real-format2-erased-digests";
    let original = read(&support::fixtures_dir().join(format!("journals/{name}.sjl")));
    let r = Root::new(&root);
    let paths = r.session(name).unwrap();
    r.ensure().unwrap();
    std::fs::write(&paths.journal, &original).unwrap();
    let (_, hlen) = Header::decode(&original).unwrap();
    let mut chain = scan::Chain::genesis(genesis_hash(&original[..hlen]));
    let mut at = hlen;
    while at < original.len() {
        let f = scan::frame(&original[at..]).unwrap();
        chain.accept(&f).unwrap();
        at += f.len();
    }
    let (seq, head) = (chain.last_seq(), chain.prev_hash);
    let old_head = sjournal::format::Hash([7; 32]);
    let st = Statement {
        new: Checkpoint {
            origin: origin_for(name),
            size: seq,
            hash: head,
        },
        old_format: 1,
        old_records: seq,
        old_head,
        old_file: format!("{name}.sjl.v1-0011223344556677.bin"),
        old_blake3: sjournal::format::Hash([8; 32]),
    };
    let note = r
        .sessions_dir()
        .join(format!("{name}.sjl.migrated-{}.note", &head.to_hex()[..16]));
    std::fs::write(&note, st.body()).unwrap();
    let fs = sjournal::storage::RealFs;
    sjournal::journal::hwm::reset(
        &fs,
        &paths.journal,
        Mark {
            seq,
            hash: old_head,
        },
    )
    .unwrap();
    let (code, _, _) = run(&root, &["verify", "--session", name]);
    assert_eq!(code, 1, "the mark names the old chain");

    let (code, out, err) = run(&root, &["migrate", "--session", name, "--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("would finish an interrupted migration"),
        "{out}"
    );
    assert_eq!(read(&paths.journal), original);
    assert_eq!(run(&root, &["verify", "--session", name]).0, 1);

    let (code, out, err) = run(&root, &["migrate", "--session", name]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("finished an interrupted migration"), "{out}");
    assert!(out.contains("migrated format 2 to 3 (39 records"), "{out}");
    assert_eq!(version(&paths.journal), 3);
    let (code, out, err) = run(&root, &["verify", "--session", name]);
    assert_eq!(code, 0, "{out}{err}");
}

/// A migration of a format-2 journal must keep each record's payload digest: re-chained with
/// another digest on the field-erased record (which nothing else in the journal binds: its
/// remaining payload is checked against its erasure record), `verify --migration` names it.
#[test]
fn a_migration_that_changes_an_erased_records_digest_fails_verify_migration() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let (paths, _) = format2_fixture(&root);
    let name = FORMAT2;
    let (code, out, err) = run(&root, &["migrate", "--session", name]);
    assert_eq!(code, 0, "{out}{err}");
    let note = statement(&root);
    let check = |root: &Path| {
        run(
            root,
            &[
                "verify",
                "--session",
                name,
                "--migration",
                note.to_str().unwrap(),
            ],
        )
    };
    assert_eq!(check(&root).0, 0);

    let migrated = read(&paths.journal);
    let (h, hlen) = Header::decode(&migrated).unwrap();
    let mut new = Header::with_version(name, h.created_unix_ns, FORMAT_VERSION).encode();
    let mut prev = genesis_hash(&new);
    let mut at = hlen;
    while at < migrated.len() {
        let f = scan::frame(&migrated[at..]).unwrap();
        let mut digest = f.payload_digest;
        if f.seq == 11 {
            assert!(
                f.erased() && !f.payload.is_empty(),
                "seq 11 is field-erased"
            );
            digest.0[0] ^= 1;
        }
        prev = record::encode_digested(
            &mut new,
            FORMAT_VERSION,
            f.seq,
            f.ts_unix_ns,
            f.kind,
            &prev,
            f.payload,
            &f.salt,
            f.erased().then_some(&digest),
        );
        at += f.len();
    }
    std::fs::write(&paths.journal, &new).unwrap();
    let text = std::fs::read_to_string(&note).unwrap();
    let (mut st, _) = Statement::parse(&text).unwrap();
    st.new.hash = prev;
    std::fs::write(&note, st.body()).unwrap();
    let (code, out, _) = check(&root);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("seq 11: the current journal does not keep the old record's payload digest"),
        "{out}"
    );
    assert!(!out.contains("seq 12:"), "{out}");
}

/// A statement or checkpoint is of one session: with `--all` it is refused (exit 2), not
/// silently left unchecked.
#[test]
fn verify_all_with_a_statement_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--migration", "--checkpoint"] {
        let (code, out, err) = run(dir.path(), &["verify", "--all", flag, "x.note"]);
        assert_eq!(code, 2, "{flag}: {out}{err}");
        assert!(err.contains("cannot be used with"), "{err}");
    }
}

/// A journal that verify rejects for what its chain does not show (here a correctly chained
/// format-3 frame in a format-2 journal) is not migrated: migrate would bless it under a new
/// chain and a signed statement.
#[test]
fn a_journal_verify_rejects_for_its_layout_is_not_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let r = Root::new(root);
    r.ensure().unwrap();
    let path = r.session(S).unwrap().journal;
    let mut bytes = Header::with_version(S, 1, 2).encode();
    let mut prev = genesis_hash(&bytes);
    for seq in 1..=3u64 {
        let payload = sjournal::fold::digest::encode_event("PostToolUse", &event(seq as usize));
        let v = if seq == 2 { 3 } else { 2 };
        prev = record::encode_digested(
            &mut bytes,
            v,
            seq,
            seq as i64,
            "PostToolUse",
            &prev,
            &payload,
            &[seq as u8; 16],
            None,
        );
    }
    std::fs::write(&path, &bytes).unwrap();
    let (code, out, err) = run(root, &["migrate", "--session", S]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("does not verify") && err.contains("record seq 2 has flags 0x6"),
        "{err}"
    );
    assert_eq!(read(&path), bytes, "nothing was changed");
}
