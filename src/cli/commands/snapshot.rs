//! `sjournal snapshot --session ID`: writes a snapshot of the session's state now.
//! `sjournal snapshot --session ID --detached`: the same, as the hook starts it after its
//! reply when the session's fold outlasted the deadline: in a session of its own, printing
//! nothing, and only if no other rebuild of the session runs (`snapshot::rebuild_lock`).
//! `sjournal snapshot rebuild (--session ID | --all)`: replays each journal in full, ignoring
//! any snapshot, and writes a fresh one.
//!
//! Prints one line per snapshot written: `{"session", "seq", "state_hash", "bytes"}`.

use std::io::Write;

use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::{JournalReader, Root};
use sjournal::snapshot::{self, load_state, LoadOptions};

/// Write a snapshot of a session's folded state
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES, args_conflicts_with_subcommands = true)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: Option<String>,
    /// Run as the hook's detached rebuild (a session of its own, nothing printed, at most one
    /// per session)
    #[arg(long, hide = true, requires = "session")]
    pub detached: bool,
    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Replay journals in full and write fresh snapshots
    Rebuild(RebuildArgs),
}

#[derive(Debug, clap::Args)]
#[group(required = true, multiple = false, args = ["session", "all"])]
pub struct RebuildArgs {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: Option<String>,
    /// Every session under the root
    #[arg(long)]
    pub all: bool,
}

fn take(root: &Root, session: &str, full: bool) -> Result<Option<snapshot::Written>> {
    let opts = LoadOptions {
        use_snapshot: !full,
        ..LoadOptions::latest()
    };
    let (state, info) = load_state(root, session, &opts)?;
    for w in &info.warnings {
        output::warn(&format!("sjournal: warning: {w}"));
    }
    let Some(head) = info.head else {
        output::warn(&format!(
            "sjournal: session {session:?} has no records yet; no snapshot written"
        ));
        return Ok(None);
    };
    snapshot::write(&root.session(session)?, &state, &head).map(Some)
}

/// Session ids of every main journal under the root (rescue journals have no snapshot).
fn all_sessions(root: &Root) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    for path in root.journals()? {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| n.ends_with(".rescue.sjl")) {
            continue;
        }
        let reader = JournalReader::open(&path, None)?;
        match reader.header() {
            Ok((h, _, _)) => ids.push(h.session_id),
            Err(e) => output::warn(&format!(
                "sjournal: warning: skipping {}: {e}",
                path.display()
            )),
        }
    }
    Ok(ids)
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    if let (true, Some(session)) = (args.detached, args.session.as_deref()) {
        return detached(root, session);
    }
    let (sessions, full) = match args.action {
        Some(Action::Rebuild(r)) => match r.session {
            Some(s) => (vec![s], true),
            None => (all_sessions(root)?, true),
        },
        None => match args.session {
            Some(s) => (vec![s], false),
            None => {
                return Err(sjournal::error::Error::InvalidInput {
                    reason: "name a session: `sjournal snapshot --session ID`, or \
                             `sjournal snapshot rebuild --all`"
                        .into(),
                })
            }
        },
    };
    let mut out = output::stdout();
    for s in &sessions {
        if let Some(w) = take(root, s, full)? {
            let line = sjournal::report::SnapshotLine::new(s, &w);
            output::json_line(&mut out, &sjournal::report::line(&line))?;
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}

/// The hook's detached rebuild: leaves the hook's session and process group, then writes the
/// snapshot if no other rebuild of the session holds its lock. Prints nothing (its stdio is
/// /dev/null); what went wrong is for the next hook to find (no snapshot).
fn detached(root: &Root, session: &str) -> Result<Outcome> {
    sjournal::webhook::detach();
    let paths = root.session(session)?;
    // A hook's probe holds the lock for an instant; a rebuild for as long as it runs.
    let wait = std::time::Duration::from_millis(50);
    let Some(_held) = snapshot::rebuild_lock(&paths, wait)? else {
        return Ok(Outcome::Ok);
    };
    take(root, session, false)?;
    Ok(Outcome::Ok)
}
