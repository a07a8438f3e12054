//! The hook's part: after the reply to an event that ends a turn or a session (Stop,
//! SessionEnd, as every host's adapter reads them), a detached `sjournal search --update
//! --detached` keeps the index current, so the next search has little to catch up. Only when
//! the root has an index: a root nobody searches gets none, and its hooks start nothing. Nor
//! when an update already waits for the index's lock: it will read what this event wrote.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::event::{Event, EventKind};
use crate::journal::Root;

/// True if `kind`/`raw_json` (a journaled event) ends a turn or a session.
pub(crate) fn ends_turn(kind: &str, raw_json: &str) -> bool {
    let raw = crate::event::lenient::text(raw_json);
    matches!(
        Event::parse(kind, &raw).kind,
        EventKind::Stop | EventKind::SessionEnd
    )
}

/// Starts the detached update if the root has an index and the event ends a turn or a
/// session. Never waits; says something (for the hook's stderr) only when the update could
/// not start.
pub fn after_event(
    root: &Root,
    program: Option<&Path>,
    kind: &str,
    raw_json: Option<&str>,
) -> Option<String> {
    let raw = raw_json?;
    if !super::index_exists(root) || !ends_turn(kind, raw) {
        return None;
    }
    if super::index::Lock::update_queued(&super::index::Place::of(root)) {
        return None;
    }
    let exe = match crate::storage::worker_program(program) {
        Ok(e) => e,
        Err(e) => return Some(format!("could not start the search index's update: {e}")),
    };
    use std::os::unix::process::CommandExt;
    let started = Command::new(&exe)
        .arg("--root")
        .arg(root.dir())
        .args(["search", "--update", "--detached"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match started {
        // Not waited for: it is reparented when the hook exits.
        Ok(_) => None,
        Err(e) => Some(format!(
            "could not start the search index's update ({e}); the next `sjournal search` \
             catches up"
        )),
    }
}
