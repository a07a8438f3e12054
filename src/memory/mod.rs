//! Memory across sessions: a **project** journal per project and one **global** journal, each
//! an ordinary sjournal journal under the root (same header, records, chain, recovery, spool
//! and snapshots; `verify`, `checkpoint`, `export` and `ship` treat them as sessions), folded
//! like any session into `State::memory`. The `sjournal.memory` record's fields are specified
//! in `journal-format.md`, "System records"; this is the scope journals' ids, what the
//! records mean and where they come from.
//!
//! - A scope journal's session id is `scope:project:<canonical project path>` (a project) or
//!   `scope:global`; the header keeps the id, so the path is in the header. Neither id is a
//!   plain stem, so the file stem is `h-` and the first 32 hex digits of the id's unkeyed
//!   blake3 (`journal::paths::file_stem`), as for any such session id.
//! - The project is the host's project directory (`CLAUDE_PROJECT_DIR`, or `--project`),
//!   else the nearest directory above the event's `cwd` that holds `.git`, else the `cwd`;
//!   canonicalised (symlinks resolved) when it exists ([`project_dir`]).
//! - Items are proposed, accepted, rejected, edited, forgotten or marked stale by
//!   `sjournal.memory` records, each with provenance (session, seq, the verbatim quote).
//! - Proposals come from deterministic sources only, and rejected or forgotten text is never
//!   proposed again.
//! - Only accepted items reach the model ([`hook`]); pending proposals are counted to the
//!   user through the host's user-visible channel at session start.
//!
//! # The ops, and when each is allowed
//!
//! The fold ([`state`]) checks each op against the memory as it stands
//! ([`Memory::check`]; the writer, [`ops`], checks the same under the journal's lock, so
//! concurrent writers cannot both propose the same item or accept a rejected one) and counts
//! a refused one in `memory.refused`. An item's `id` is `m` and the first 12 hex digits of
//! its text key (the blake3 of the text's words, lowercased, joined by single spaces).
//!
//! | op | allowed when | effect |
//! |---|---|---|
//! | `propose` | the id is the text's; its text key was never rejected or forgotten; fewer than 512 items; a known item: from a session not yet in its `seen_in` (fewer than 32), or `remember` on a pending item | a new item `proposed` (`remember`: `accepted`); a known item from another session joins `seen_in` (its confidence, "seen in N sessions") and gains a provenance entry (at most 4) |
//! | `accept` | `proposed` or `stale` | `accepted` |
//! | `reject` | not `forgotten` | `rejected`; its text keys (current and original) join `memory.rejected` |
//! | `forget` | any | `forgotten`; its text keys join `memory.rejected` |
//! | `edit` | not `rejected` or `forgotten` | text replaced (the first text kept as `original`), `accepted` |
//! | `stale` | `accepted` | `stale` (back to review) |
//! | `session` | — | the project's recent sessions (at most 8, newest last): the handoff looks up the last one |
//!
//! Ops that would change nothing (accepting an accepted item) are not written.
//!
//! # Where proposals come from
//!
//! The hook writes after its reply: `rule` and `verify` proposals at Stop and SessionEnd, a
//! `remember` or `relayed` one on the prompt that asks. The `source` of a proposal:
//!
//! - `rule`: the standing instructions of the session's prompts (the fold's selector,
//!   `fold::instructions`);
//! - `verify`: a failing shell command that a command of the same family (the same words but
//!   for options, `fold::progress_rules`) later passed in the same session: text
//!   ``"`<passing>` passes where `<failing>` fails"``, provenance seq the passing call's record,
//!   quote `failed: <failing> (exit N); passed: <passing>`. A `verify` item goes stale only
//!   when its passing command (its first code span) fails and is not fixed;
//! - `remember`: a prompt starting `remember:` (project scope) or `remember globally:` (global
//!   scope), any case, spaces allowed before the colon — accepted as said, but only from the
//!   human user's own prompt in a main session, as the host tells it (`Host::prompt_author`);
//! - `relayed`: the same words in any other prompt (a subagent's task, a scheduled job's,
//!   another sender's, one the host generated): a proposal for review, in the project's scope;
//! - `explicit`: `sjournal memory propose`.
//!
//! # What is injected
//!
//! Pending items (`proposed`, `stale`) are never injected. Accepted ones are, at SessionStart
//! `startup`, `clear` and `compact`, under `## Project memory (reviewed)` (at most
//! `MEMORY_INJECT_CHARS`, 600 characters; newest first, project before global). Each
//! injection that carries memory or a handoff is preceded in its batch by an
//! `sjournal.extras` record with exactly those sections, so a replay renders the same bytes.
//!
//! At `compact`, accepted lines that an instruction file the host loaded already contains
//! are left out (compared with whitespace runs collapsed). The files are the session's
//! `requests.files` (from `InstructionsLoaded.file_path`); the hook reads them ([`known`]:
//! absolute paths only, regular files once opened, at most 256 KiB; symlinks are followed:
//! these are the user's files, as the host read them, compared and never injected) and
//! journals each in the `sjournal.extras` record's `read` (path, bytes read, their blake3, or
//! why it was not read, and the lines it left out). Replay renders from the record and never
//! reads the file.
//!
//! The handoff at `startup` ([`handoff`]): of the project's last N sessions other than the
//! starting one (`session` ops, newest first; N = `[memory] handoff_sessions`, default 3, at
//! most 8, 0 = no handoff), the newest that left something unfinished (open todos, a turn
//! with no Stop, an unresolved failure, background work) hands off. A session that ended with
//! `/clear` (SessionEnd reason `clear`) stops the search: neither it nor any older session
//! hands off.

pub mod handoff;
pub mod hook;
pub mod known;
pub mod ops;
/// The memory state, folded with the rest of [`crate::fold::State`] (it lives in `fold/`).
pub use crate::fold::memory as state;

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
