//! Safety on disk. A journal file, a lock file or the sessions directory: each symlink is
//! refused (`Error::Symlink` from the library; from the CLI a clear message, and for reads
//! exit 2), and whatever the link points at is left exactly as it was. A write refused that
//! way still keeps its event (the session's policy): `append` spools it — to the root's spool,
//! or to the fallback spool when the link is where `sessions/` should be — says why, and
//! exits with 1. A link or FIFO planted where recovery would write its quarantine copy is
//! passed over for the next name (never followed, opened or deleted). Session ids that look
//! like paths (`../../x`, absolute paths, dots, separators, NUL, newlines, very long ids) never
//! become a path outside the root: they map to a hashed file name inside it, and the journal
//! header keeps the id exactly as given. Every file sjournal creates (journal, lock,
//! quarantine, rescue journal and its lock) is 0600 and every directory 0700, even under
//! `umask 000`.
//!
//! Not covered here, by design: readers (verify, log) open the journal without following a
//! link at its last component, but do not check the directories above it; they never write.

use crate::support;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use sjournal::journal::{verify_file, JournalReader, Root, Writer};
use sjournal::Error;

const SESSION: &str = "sec-session";

/// A file outside the root that links will point at, with its original content.
fn victim(dir: &Path) -> (PathBuf, Vec<u8>) {
    let p = dir.join("victim.txt");
    let content = b"precious data, not a journal\n".to_vec();
    fs::write(&p, &content).unwrap();
    (p, content)
}

fn cli(root: &Path, args: &[&str], stdin: &str) -> Output {
    support::run(root, args, stdin.as_bytes())
}

fn assert_symlink_refused(out: &Output, what: &str) {
    assert_eq!(out.status.code(), Some(2), "{what}: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("symlink"), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}");
}

/// The write was refused by the link, and its event kept in a spool instead (exit 1).
fn assert_symlink_refused_and_spooled(out: &Output, what: &str, fallback: bool) {
    assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("symlink"), "{what}: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["spooled"], true, "{what}: {v}");
    assert_eq!(v["fallback"], fallback, "{what}: {v}");
}

#[test]
fn symlinked_journal_is_refused() {
    let dir = support::scratch();
    let root = Root::new(dir.path().join("root"));
    root.ensure().unwrap();
    let (target, content) = victim(dir.path());
    let journal = root.session(SESSION).unwrap().journal;
    symlink(&target, &journal).unwrap();

    match Writer::open(&root, SESSION, &support::opts()) {
        Err(Error::Symlink { path }) => assert_eq!(path, journal),
        other => panic!("expected Symlink, got {:?}", other.err()),
    }
    assert!(matches!(
        JournalReader::open(&journal, None),
        Err(Error::Symlink { .. })
    ));
    assert!(matches!(
        verify_file(&journal, None),
        Err(Error::Symlink { .. })
    ));
    let out = cli(root.dir(), &["append", "--session", SESSION], r#"{"a":1}"#);
    assert_symlink_refused_and_spooled(&out, "append", false);
    let out = cli(root.dir(), &["verify", "--session", SESSION], "");
    assert_symlink_refused(&out, "verify");
    let out = cli(root.dir(), &["log", "--session", SESSION], "");
    assert_symlink_refused(&out, "log");
    assert_eq!(
        fs::read(&target).unwrap(),
        content,
        "the link target changed"
    );
    assert!(fs::symlink_metadata(&journal).unwrap().is_symlink());
}

/// A symlink in the journal's place whose target does not exist is still a symlink in the
/// journal's place: loading the state refuses it for what it is (`Error::Symlink`) rather than
/// reporting a session that does not exist, which readers would show as empty.
#[test]
fn a_dangling_symlinked_journal_is_refused_not_taken_for_a_missing_session() {
    let dir = support::scratch();
    let root = Root::new(dir.path().join("root"));
    root.ensure().unwrap();
    let journal = root.session(SESSION).unwrap().journal;
    symlink(dir.path().join("nowhere.sjl"), &journal).unwrap();
    match sjournal::snapshot::load_state(&root, SESSION, &sjournal::snapshot::LoadOptions::latest())
    {
        Err(Error::Symlink { path }) => assert_eq!(path, journal),
        other => panic!("expected Symlink, got {:?}", other.map(|_| ())),
    }
    assert!(
        !dir.path().join("nowhere.sjl").exists(),
        "nothing was created"
    );
    match sjournal::snapshot::load_state(
        &root,
        "absent",
        &sjournal::snapshot::LoadOptions::latest(),
    ) {
        Err(Error::NoSuchSession { .. }) => {}
        other => panic!("expected NoSuchSession, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn symlinked_lock_file_is_refused() {
    let dir = support::scratch();
    let root = Root::new(dir.path().join("root"));
    root.ensure().unwrap();
    let (target, content) = victim(dir.path());
    let lock = root.session(SESSION).unwrap().lock;
    symlink(&target, &lock).unwrap();

    match Writer::open(&root, SESSION, &support::opts()) {
        Err(Error::Symlink { path }) => assert_eq!(path, lock),
        other => panic!("expected Symlink, got {:?}", other.err()),
    }
    let out = cli(root.dir(), &["append", "--session", SESSION], r#"{"a":1}"#);
    assert_symlink_refused_and_spooled(&out, "append", false);
    assert_eq!(
        fs::read(&target).unwrap(),
        content,
        "the tail hint went into the target"
    );
}

#[test]
fn symlinked_sessions_dir_is_refused() {
    let dir = support::scratch();
    let root_dir = dir.path().join("root");
    fs::create_dir(&root_dir).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, root_dir.join("sessions")).unwrap();
    let root = Root::new(&root_dir);

    assert!(matches!(root.ensure(), Err(Error::Symlink { .. })));
    assert!(matches!(
        Writer::open(&root, SESSION, &support::opts()),
        Err(Error::Symlink { .. })
    ));
    // The fallback spool, kept inside the test's directory.
    let fallback = dir.path().join("fallback");
    fs::write(
        root_dir.join("config.toml"),
        format!("[hook]\nfallback_spool_dir = {:?}\n", fallback),
    )
    .unwrap();
    let out = cli(&root_dir, &["append", "--session", SESSION], r#"{"a":1}"#);
    assert_symlink_refused_and_spooled(&out, "append", true);
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "files written through the link"
    );
}

/// Every path under `dir`, recursively.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(tree(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

#[test]
fn path_like_session_ids_stay_inside_the_root() {
    let dir = support::scratch();
    let root_dir = dir.path().join("a/b/root");
    let root = Root::new(&root_dir);
    let (target, content) = victim(dir.path());
    let absolute = target.to_str().unwrap().to_owned();
    let long = "L".repeat(1024);
    let ids: Vec<&str> = vec![
        "../../x",
        "../../../victim.txt",
        &absolute,
        "/etc/passwd",
        "..",
        ".",
        "a/../../b",
        "x\0y",
        "line\nbreak",
        "sessions/../../x",
        &long,
    ];
    for id in &ids {
        let mut w =
            Writer::open(&root, id, &support::opts()).unwrap_or_else(|e| panic!("{id:?}: {e}"));
        w.append(
            "Ev",
            &sjournal::fold::digest::encode_event("Ev", r#"{"ok":1}"#),
        )
        .unwrap();
        let path = w.path().to_owned();
        drop(w);
        assert!(
            path.starts_with(root_dir.join("sessions")),
            "{id:?} -> {}",
            path.display()
        );
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("h-") && name.ends_with(".sjl"),
            "{id:?} -> {name}"
        );
        let reader = JournalReader::open(&path, None).unwrap();
        assert_eq!(
            reader.header().unwrap().0.session_id,
            *id,
            "the header lost the id"
        );
        assert!(verify_file(&path, None).unwrap().ok);
    }
    // Nothing outside the root: only the victim and the root's own parents are in `dir`.
    for p in tree(dir.path()) {
        let inside = p.starts_with(&root_dir)
            || p == target
            || p == dir.path().join("a")
            || p == dir.path().join("a/b");
        assert!(inside, "created outside the root: {}", p.display());
    }
    assert_eq!(fs::read(&target).unwrap(), content);
    // Distinct ids never share a journal.
    let n = fs::read_dir(root_dir.join("sessions"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().unwrap() == "sjl")
        .count();
    assert_eq!(n, ids.len());

    // Through the CLI too, and the log shows the event under the original id.
    let out = cli(
        &root_dir,
        &["append", "--session", "../../cli"],
        r#"{"c":1}"#,
    );
    assert!(out.status.success(), "{out:?}");
    let out = cli(&root_dir, &["log", "--json", "--session", "../../cli"], "");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(r#""payload":{"c":1}"#),
        "{out:?}"
    );
    assert!(!dir.path().join("cli.sjl").exists() && !dir.path().join("a/cli.sjl").exists());

    // Ids too long for a header are refused, not truncated.
    let e = Writer::open(&root, &"L".repeat(1025), &support::opts()).err();
    assert!(matches!(e, Some(Error::InvalidSessionId { .. })), "{e:?}");
}

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

/// Runs the CLI under `umask 000`, so that only sjournal's own modes protect the files.
fn cli_umask0(root: &Path, session: &str, stdin: &str) -> Output {
    use std::io::Write;
    let mut c = Command::new("sh")
        .args([
            "-c",
            r#"umask 000; exec "$BIN" --root "$ROOT" append --session "$S""#,
        ])
        .env("BIN", support::bin())
        .env("ROOT", root)
        .env("S", session)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

#[test]
fn files_are_0600_and_directories_0700() {
    let dir = support::scratch();
    let root_dir = dir.path().join("new/root");
    let root = Root::new(&root_dir);

    // A journal and its lock.
    assert!(cli_umask0(&root_dir, "perm", r#"{"n":1}"#).status.success());
    let paths = root.session("perm").unwrap();
    // A quarantine: tear the tail, then append (recovery). A torn write is one that was never
    // acknowledged, so no high-water mark (nor its copy in the lock file) covers it.
    fs::remove_file(sjournal::journal::hwm::path_for(&paths.journal)).unwrap();
    fs::write(&paths.lock, b"").unwrap();
    let len = fs::metadata(&paths.journal).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&paths.journal)
        .unwrap()
        .set_len(len - 3)
        .unwrap();
    assert!(cli_umask0(&root_dir, "perm", r#"{"n":2}"#).status.success());
    let quarantined = support::quarantine_files(&paths.dir);
    assert_eq!(quarantined.len(), 1);
    // A rescue journal: damage the middle, then append (refused, rescued).
    let mut b = support::read(&paths.journal);
    let first = support::parse(&b).records[0].offset as usize;
    b[first + 10] ^= 0xff;
    support::overwrite(&paths.journal, &b);
    // Drop the tail hint, which would let the writer skip straight to the (intact) end.
    fs::write(&paths.lock, b"").unwrap();
    let out = cli_umask0(&root_dir, "perm", r#"{"n":3}"#);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(paths.rescue.exists());

    let files = [
        paths.journal.clone(),
        paths.lock.clone(),
        quarantined[0].clone(),
        paths.rescue.clone(),
        paths.dir.join("perm.rescue.lock"),
        paths.dir.join("perm.hwm"),
        paths.dir.join("perm.rescue.hwm"),
    ];
    for f in &files {
        assert_eq!(mode(f), 0o600, "{}", f.display());
    }
    // Every file in the sessions directory is one of those.
    assert_eq!(fs::read_dir(&paths.dir).unwrap().count(), files.len());
    for d in [dir.path().join("new"), root_dir.clone(), paths.dir.clone()] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
}

/// A link planted where recovery will put its quarantine copy must not pass for the copy
/// (which would let recovery cut bytes that were kept nowhere), and must not block recovery
/// either (every later open failed on it): recovery passes the name over — and a FIFO at the
/// next name too, without waiting on it — keeps the bytes under the name after, and cuts the
/// tail; the link, its target and the FIFO stay as they were.
#[test]
fn symlinked_quarantine_path_is_passed_over() {
    let dir = support::scratch();
    let root = Root::new(dir.path().join("root"));
    let (target, content) = victim(dir.path());
    let path = support::write_events(&root, SESSION, &[r#"{"a":1}"#.into(), r#"{"b":2}"#.into()]);
    let full = support::read(&path);
    let torn = &full[..full.len() - 5];
    fs::write(&path, torn).unwrap();
    let paths = root.session(SESSION).unwrap();
    fs::write(&paths.lock, b"").unwrap();
    // The torn write was never acknowledged: no high-water mark covers it.
    fs::remove_file(sjournal::journal::hwm::path_for(&path)).unwrap();
    let at = support::parse(torn).stop.unwrap().offset as usize;
    let digest = sjournal::format::hash::content_hash(&torn[at..]).to_hex();
    let name = format!("{SESSION}.sjl.quarantine-{at}-{}", &digest[..16]);
    let link = paths.dir.join(format!("{name}.bin"));
    symlink(&target, &link).unwrap();
    let fifo = paths.dir.join(format!("{name}-1.bin"));
    super::mkfifo(&fifo);

    let w = Writer::open(&root, SESSION, &support::opts()).expect("recovery is not blocked");
    let report = w.recovery().unwrap().clone();
    drop(w);
    assert_eq!(report.quarantine, paths.dir.join(format!("{name}-2.bin")));
    assert_eq!(fs::read(&report.quarantine).unwrap(), &torn[at..]);
    let now = support::read(&path);
    assert_eq!(&now[..at], &torn[..at], "the valid records are kept");
    assert_ne!(&now[at..], &torn[at..], "the torn tail is cut");
    assert!(
        fs::symlink_metadata(&link).unwrap().is_symlink(),
        "the link is kept"
    );
    assert_eq!(fs::read(&target).unwrap(), content);
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&fs::symlink_metadata(&fifo).unwrap().file_type()),
        "the FIFO is kept"
    );
}

/// The `sjournal` binary is linked as `build.rs` says (`SJOURNAL_LINKED`): a static PIE on
/// x86_64 Linux with glibc (an ELF of type DYN with no
/// interpreter, so no dynamic loader runs at start, and still position independent for ASLR),
/// and a dynamic PIE with `SJOURNAL_LINK=dynamic` or on other targets (type DYN, with an
/// interpreter).
#[test]
fn the_binary_is_linked_as_the_build_script_says() {
    let path = assert_cmd::cargo::cargo_bin("sjournal");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF", "{}", path.display());
    assert_eq!(bytes[4], 2, "a 64-bit ELF: {}", path.display());
    // An unsigned field of `n` bytes at `o`, in the file's byte order.
    let le = bytes[5] == 1;
    let int = |o: usize, n: usize| -> u64 {
        let field = &bytes[o..o + n];
        (0..n).fold(0, |v, i| {
            (v << 8) | u64::from(if le { field[n - 1 - i] } else { field[i] })
        })
    };
    // ET_DYN = 3: position independent (ASLR), whichever way it is linked.
    assert_eq!(int(16, 2), 3, "{}", path.display());
    let (phoff, phentsize, phnum) = (int(32, 8), int(54, 2), int(56, 2));
    // PT_INTERP = 3: the program asks for a dynamic loader.
    let has_interp = (0..phnum).any(|i| int((phoff + i * phentsize) as usize, 4) == 3);
    let linked = env!("SJOURNAL_LINKED");
    let measured = cfg!(all(
        target_os = "linux",
        target_env = "gnu",
        target_arch = "x86_64"
    ));
    let expected = match option_env!("SJOURNAL_LINK") {
        Some("dynamic") => "dynamic",
        _ if measured => "static-pie",
        _ => "dynamic",
    };
    assert_eq!(
        linked, expected,
        "the build linked sjournal {linked} (its warning says why: usually the C library's \
         static archives are missing; Debian/Ubuntu: libc6-dev, Fedora: glibc-static)"
    );
    assert_eq!(
        has_interp,
        expected == "dynamic",
        "{} is linked {linked}, but its program headers say otherwise",
        path.display()
    );
}
