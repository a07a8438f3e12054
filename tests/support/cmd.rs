//! Running the built `sjournal` binary against a test root, with assert_cmd. The environment
//! is cleaned of what would change where or how it writes (`SJOURNAL_HOME`, the host's
//! session id).

use std::path::Path;
use std::process::Output;

use assert_cmd::cargo::CommandCargoExt;

/// `--deadline-ms` for tests that check what the hook journals rather than its deadline: long
/// enough that a loaded machine never makes the hook spool the event instead (the hook exits
/// as soon as it is done, so this costs nothing when the machine is idle).
pub const PATIENT_MS: &str = "60000";

/// The path of the `sjournal` binary built for these tests (for scripts: `BIN=...`).
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sjournal")
}

/// The path of the `sjournal-hook` binary built for these tests (the hook alone).
pub fn hook_bin() -> &'static str {
    env!("CARGO_BIN_EXE_sjournal-hook")
}

/// `sjournal --root ROOT` as an assert_cmd command, to add arguments, stdin and assertions to.
pub fn sjournal(root: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("sjournal").expect("the built binary");
    c.arg("--root").arg(root);
    c.env_remove("SJOURNAL_HOME")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CLAUDE_PROJECT_DIR");
    c
}

/// The same as a `std::process::Command`, for tests that spawn several at once or hold a
/// pipe open.
pub fn spawnable(root: &Path) -> std::process::Command {
    let mut c = std::process::Command::cargo_bin("sjournal").expect("the built binary");
    c.arg("--root").arg(root);
    c.env_remove("SJOURNAL_HOME")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CLAUDE_PROJECT_DIR");
    c
}

/// A copy of the built binary in `dir/bin/` (both made 0755), for a test that runs sjournal as
/// another user: the build's own binary may sit where only its owner can reach it (a clone
/// in a private temp dir). `dir` and every directory above it must let that user through.
pub fn copy_for_another_user(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin_dir = dir.join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    std::fs::set_permissions(&bin_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = bin_dir.join("sjournal");
    std::fs::copy(bin(), &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    copy
}

/// `BIN --root ROOT` (a copy of the binary: [`copy_for_another_user`]), cleaned as
/// [`spawnable`] is.
pub fn spawnable_at(bin: &Path, root: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(bin);
    c.arg("--root").arg(root);
    c.env_remove("SJOURNAL_HOME")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CLAUDE_PROJECT_DIR");
    c
}

/// Runs `sjournal --root ROOT <args>` with `stdin` to completion. The hook may exit before
/// reading everything (it fails open); a broken pipe is fine.
pub fn run(root: &Path, args: &[&str], stdin: &[u8]) -> Output {
    run_env(root, args, stdin, &[])
}

pub fn run_env(root: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut c = sjournal(root);
    c.args(args).write_stdin(stdin.to_vec());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run sjournal")
}

/// `sjournal verify --all` passes.
pub fn verify_all(root: &Path) {
    let out = run(root, &["verify", "--all"], b"");
    assert!(
        out.status.success(),
        "verify failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The name the test harness knows test `f` of module `module` (its `module_path!()`) by,
/// to run it alone in a child process of the test binary (`--exact`): the module path
/// without the crate's own name.
pub fn test_name(module: &str, f: &str) -> String {
    match module.split_once("::") {
        Some((_, rest)) => format!("{rest}::{f}"),
        None => f.to_owned(),
    }
}
