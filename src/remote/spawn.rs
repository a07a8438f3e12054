//! Shipping at session end, off the hook's path. With `[remote] ship_on_session_end = true`
//! (and `to`), `sjournal hook`, after it has answered the host, starts
//! `sjournal --root ROOT ship --session ID --to URL` as a detached process (its own process
//! group, stdin and stdout closed, stderr appended to `<root>/remote/ship.log`) and exits
//! without waiting for it. The hook itself never touches the network; the detached process
//! runs under no deadline and a failed run is retried by the next one (the cursor makes it
//! safe to run any number of times).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::config::Config;
use crate::journal::Root;

/// Starts the detached shipper for `session_id` if the configuration asks for it and the
/// event just journaled ended that session (`ended`: SessionEnd on any host). Returns what it
/// did, for the hook's stderr; never waits.
pub fn after_event(
    root: &Root,
    program: Option<&std::path::Path>,
    config: &Config,
    session_id: &str,
    ended: bool,
) -> Option<String> {
    let to = config.remote.to.as_deref()?;
    if !config.remote.ship_on_session_end || !ended {
        return None;
    }
    let exe = match crate::storage::worker_program(program) {
        Ok(e) => e,
        Err(e) => return Some(format!("could not start `sjournal ship`: {e}")),
    };
    let log = (|| {
        let dir = root.dir().join("remote");
        crate::journal::paths::ensure_dir(&dir, false).ok()?;
        let path = dir.join("ship.log");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags_nofollow()
            .open(&path)
            .ok()?;
        // A FIFO there opened without waiting (O_NONBLOCK); only a regular file is used.
        crate::storage::check_opened(&path, &f, crate::storage::Owner::Anyone).ok()?;
        Some(f)
    })();
    let mut cmd = Command::new(exe);
    cmd.arg("--root")
        .arg(root.dir())
        .args(["ship", "--session", session_id, "--to", to])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log.map(Stdio::from).unwrap_or_else(Stdio::null))
        .process_group(0);
    match cmd.spawn() {
        // Not waited for: it is reparented when the hook exits.
        Ok(child) => Some(format!(
            "started `sjournal ship` (pid {}) for the ended session",
            child.id()
        )),
        Err(e) => Some(format!("could not start `sjournal ship`: {e}")),
    }
}

trait NoFollow {
    fn custom_flags_nofollow(&mut self) -> &mut Self;
}

impl NoFollow for std::fs::OpenOptions {
    fn custom_flags_nofollow(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.mode(0o600).custom_flags(crate::storage::OPEN_FLAGS)
    }
}
