//! `sjournal install cline` through the built binary, offline: it writes one 0700 hook script
//! per Cline hook (user scope under `$HOME/Documents/Cline/Hooks/`, project scope under
//! `.clinerules/hooks/`, missing directories made 0700); a second run changes nothing; a
//! user's own hook at any of the names (a script, a binary, an unreadable file, a symlink) is
//! refused before anything is written, and left as it was; a symlink planted at the hooks
//! directory, at `.clinerules` above it, or at a temporary file's name is never followed; `uninstall` removes exactly
//! sjournal's hooks and leaves the user's files alone.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::Output;

use sjournal::install::cline::HOOKS;

fn cli(home: &Path, args: &[&str]) -> Output {
    let mut cmd = assert_cmd::Command::cargo_bin("sjournal").unwrap();
    cmd.args(args).env("HOME", home).env_remove("SJOURNAL_HOME");
    cmd.output().unwrap()
}

fn install(home: &Path, project: &Path) -> Output {
    let p = project.to_str().unwrap();
    let args = ["install", "cline", "--scope", "project", "--project-dir", p];
    cli(home, &[&args[..], &["--command", "sjournal"]].concat())
}

fn uninstall(home: &Path, project: &Path) -> Output {
    let p = project.to_str().unwrap();
    cli(
        home,
        &[
            "uninstall",
            "cline",
            "--scope",
            "project",
            "--project-dir",
            p,
        ],
    )
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The names in the hooks directory (temporary files included).
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn user_scope_hooks_are_0700_scripts_in_0700_directories_and_a_rerun_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let out = cli(home.path(), &["install", "cline", "--command", "sjournal"]);
    assert!(out.status.success(), "{out:?}");
    let dir = home.path().join("Documents/Cline/Hooks");
    for d in ["Documents", "Documents/Cline", "Documents/Cline/Hooks"] {
        assert_eq!(mode(&home.path().join(d)), 0o700, "{d}");
    }
    for h in HOOKS {
        let f = dir.join(h);
        assert_eq!(mode(&f), 0o700, "{h}");
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.starts_with("#!/bin/sh\n# sjournal bridge"), "{text}");
        assert!(text.contains("exec sjournal hook --host cline"), "{text}");
    }
    let mut want: Vec<String> = HOOKS.iter().map(|h| h.to_string()).collect();
    want.sort();
    assert_eq!(listing(&dir), want, "no temporary file left");

    let again = cli(home.path(), &["install", "cline", "--command", "sjournal"]);
    assert!(again.status.success(), "{again:?}");
    assert!(stdout(&again).contains("already installed"), "{again:?}");

    // An install of an older version (0755) is brought to 0700.
    std::fs::set_permissions(
        dir.join("TaskStart"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let fix = cli(home.path(), &["install", "cline", "--command", "sjournal"]);
    assert!(stdout(&fix).contains("TaskStart"), "{fix:?}");
    assert_eq!(mode(&dir.join("TaskStart")), 0o700);

    let out = cli(home.path(), &["uninstall", "cline"]);
    assert!(out.status.success(), "{out:?}");
    assert!(listing(&dir).is_empty());
}

/// A file of someone else's at the last hook name: nothing is written, the error names it.
fn refused_before_anything_is_written(what: &str, plant: impl FnOnce(&Path)) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().join(".clinerules/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let last = dir.join(HOOKS[HOOKS.len() - 1]);
    plant(&last);
    let before = listing(&dir);
    let content = std::fs::read(&last).ok();
    let link = std::fs::symlink_metadata(&last)
        .unwrap()
        .file_type()
        .is_symlink();
    let out = install(home.path(), project.path());
    assert_eq!(out.status.code(), Some(2), "{what}: {out:?}");
    let err = stderr(&out);
    assert!(err.contains(&last.display().to_string()), "{what}: {err}");
    assert!(err.contains("move it away first"), "{what}: {err}");
    assert_eq!(listing(&dir), before, "{what}: nothing written");
    assert_eq!(std::fs::read(&last).ok(), content, "{what}: kept");
    let still = std::fs::symlink_metadata(&last)
        .unwrap()
        .file_type()
        .is_symlink();
    assert_eq!(still, link, "{what}: kept");
}

#[test]
fn a_users_hook_at_the_last_name_is_refused_and_nothing_is_written() {
    refused_before_anything_is_written("script", |p| {
        std::fs::write(p, "#!/bin/sh\necho mine\n").unwrap();
    });
}

#[test]
fn a_binary_a_directory_or_a_symlink_in_the_way_is_refused_and_kept() {
    refused_before_anything_is_written("binary", |p| {
        std::fs::write(p, b"\x7fELF\x02\x01\x01\xff\xfe").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    });
    refused_before_anything_is_written("directory", |p| {
        std::fs::create_dir(p).unwrap();
    });
    refused_before_anything_is_written("symlink to a file of ours", |p| {
        let elsewhere = p.parent().unwrap().parent().unwrap().join("elsewhere");
        std::fs::write(
            &elsewhere,
            "# sjournal bridge: installed by `sjournal install\n",
        )
        .unwrap();
        symlink(&elsewhere, p).unwrap();
    });
}

#[test]
fn an_unreadable_file_in_the_way_is_refused_and_kept() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().join(".clinerules/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("PreToolUse");
    std::fs::write(&f, "#!/bin/sh\n# mine\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&f).is_ok() {
        crate::support::skip::whole(
            "running as root: a mode-0000 file is still readable",
            "tools/test.sh as a user other than root",
        );
        return;
    }
    let out = install(home.path(), project.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("cannot read"), "{out:?}");
    assert_eq!(listing(&dir), vec!["PreToolUse"]);
    assert_eq!(mode(&f), 0o000);
}

#[test]
fn planted_symlinks_are_never_followed() {
    let home = tempfile::tempdir().unwrap();
    let victim = home.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();

    // (A link at the temporary file's name: `install::bridge`'s unit tests, which know the
    // pid it is named after.)
    // At the hooks directory of a cloned repository: refused, nothing written through it.
    let project = tempfile::tempdir().unwrap();
    let elsewhere = home.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir(project.path().join(".clinerules")).unwrap();
    symlink(&elsewhere, project.path().join(".clinerules/hooks")).unwrap();
    let out = install(home.path(), project.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("symbolic link"), "{out:?}");
    assert!(listing(&elsewhere).is_empty());

    // At `.clinerules` itself, above the hooks directory: refused too, nothing made in its
    // target.
    let project = tempfile::tempdir().unwrap();
    symlink(&elsewhere, project.path().join(".clinerules")).unwrap();
    let out = install(home.path(), project.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("symbolic link"), "{out:?}");
    assert!(listing(&elsewhere).is_empty());
    let out = uninstall(home.path(), project.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // At a hook's name: refused (the user's link), the target untouched.
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().join(".clinerules/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    symlink(&victim, dir.join("TaskStart")).unwrap();
    let out = install(home.path(), project.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("symbolic link"), "{out:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(mode(&victim), 0o600);
    assert_eq!(listing(&dir), vec!["TaskStart"]);
}

#[test]
fn project_install_is_idempotent_and_uninstall_leaves_the_users_files() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().join(".clinerules/hooks");
    let out = install(home.path(), project.path());
    assert!(out.status.success(), "{out:?}");
    assert_eq!(mode(&project.path().join(".clinerules")), 0o700);
    assert_eq!(mode(&dir), 0o700);
    for h in HOOKS {
        assert_eq!(mode(&dir.join(h)), 0o700, "{h}");
    }
    let again = install(home.path(), project.path());
    assert!(stdout(&again).contains("already installed"), "{again:?}");

    // The user's own hook under another name, and one put in place of ours.
    std::fs::write(dir.join("my-hook"), "#!/bin/sh\n").unwrap();
    std::fs::write(dir.join("TaskCancel"), "#!/bin/sh\necho mine\n").unwrap();
    let out = uninstall(home.path(), project.path());
    assert!(out.status.success(), "{out:?}");
    assert_eq!(listing(&dir), vec!["TaskCancel", "my-hook"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("TaskCancel")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    let out = uninstall(home.path(), project.path());
    assert!(stdout(&out).contains("not installed"), "{out:?}");
}
