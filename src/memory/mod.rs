//! Memory across sessions (issue 12, context-recovery §5): a **project** journal per project
//! and one **global** journal, each an ordinary sjournal journal under the root (same format,
//! `verify`, `checkpoint`, `export`, shipping), folded like any session into `State::memory`.
//!
//! - A scope journal's id is `scope:project:<canonical project path>` or `scope:global`; the
//!   header keeps the id, so the path is in the header, and the file stem is `h-` and a hash
//!   of it (`journal::paths::file_stem`).
//! - The project is the host's project directory (`CLAUDE_PROJECT_DIR`, or `--project`),
//!   else the git root above the event's `cwd`, else the `cwd`, canonicalised.
//! - Items are proposed, accepted, rejected, edited, forgotten or marked stale by
//!   `sjournal.memory` records, each with provenance (session, seq, the verbatim quote). The
//!   fold (`state.rs`) checks each op as the writer does (`ops.rs`), under the journal's lock.
//! - Proposals come from deterministic sources only: the standing instructions the fold's
//!   selector picks (at Stop and SessionEnd), `sjournal memory propose`, and "remember: …"
//!   in a prompt: accepted as said only from the human user's own prompt in a main session
//!   (`Host::prompt_author`), else proposed for review (source `relayed`). Rejected or
//!   forgotten text is never proposed again.
//! - Only accepted items reach the model (`hook.rs`); pending proposals are counted to the
//!   user through the host's user-visible channel at session start.

pub mod handoff;
pub mod hook;
pub mod known;
pub mod ops;
pub mod state;

use std::path::{Path, PathBuf};

pub use state::{item_id, text_key, Item, Memory, Provenance};

use crate::error::{Error, Result};

/// A scope beyond the session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// The project at this canonical path.
    Project(String),
    Global,
}

const PROJECT_PREFIX: &str = "scope:project:";
const GLOBAL_ID: &str = "scope:global";

impl Scope {
    /// The id of the scope's journal (kept in its header).
    pub fn journal_id(&self) -> String {
        match self {
            Scope::Project(p) => format!("{PROJECT_PREFIX}{p}"),
            Scope::Global => GLOBAL_ID.to_owned(),
        }
    }

    /// The scope a journal id names, if it names one.
    pub fn of_journal_id(id: &str) -> Option<Scope> {
        if id == GLOBAL_ID {
            return Some(Scope::Global);
        }
        id.strip_prefix(PROJECT_PREFIX)
            .map(|p| Scope::Project(p.to_owned()))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Scope::Project(_) => "project",
            Scope::Global => "global",
        }
    }

    /// `--scope project|global` with the project directory it needs.
    pub fn parse(word: &str, project: impl FnOnce() -> Result<PathBuf>) -> Result<Scope> {
        match word {
            "project" => Ok(Scope::Project(project()?.to_string_lossy().into_owned())),
            "global" => Ok(Scope::Global),
            other => Err(Error::InvalidInput {
                reason: format!("--scope must be project or global (got {other:?})"),
            }),
        }
    }
}

/// True if `id` names a scope journal rather than a host session.
pub fn is_scope_journal(id: &str) -> bool {
    Scope::of_journal_id(id).is_some()
}

/// The project directory: `host_dir` (the host's project dir) as it is, else the git root
/// above `cwd`, else `cwd`; canonicalised where the path exists. None without either.
pub fn project_dir(host_dir: Option<&Path>, cwd: Option<&Path>) -> Option<PathBuf> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    if let Some(d) = host_dir.filter(|d| !d.as_os_str().is_empty()) {
        return Some(canon(d));
    }
    let cwd = canon(cwd.filter(|d| !d.as_os_str().is_empty())?);
    let root = cwd
        .ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_owned);
    Some(root.unwrap_or(cwd))
}
