//! `--session ID` or `--scope project|global [--project DIR]`: which journal a primitive
//! (`slot`, `once`, `unseen`, `fire`, `list`) works on. A scope is a journal like a session's
//! (`sjournal::memory::Scope`), so the same lock, compare-and-set and fold apply.

use std::path::PathBuf;

use sjournal::error::{Error, Result};
use sjournal::memory::Scope;

#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// The session (with --scope session, the default)
    #[arg(long)]
    pub session: Option<String>,
    /// session, project (the project's journal) or global
    #[arg(long, default_value = "session")]
    pub scope: String,
    /// With --scope project: the project directory [default: $CLAUDE_PROJECT_DIR, else the
    /// git root of the current directory]
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

impl Target {
    /// The id of the journal to work on.
    pub fn id(&self) -> Result<String> {
        match (self.scope.as_str(), &self.session) {
            ("session", Some(s)) => Ok(s.clone()),
            ("session", None) => Err(Error::InvalidInput {
                reason: "--session ID is needed (or --scope project|global)".into(),
            }),
            (_, Some(_)) => Err(Error::InvalidInput {
                reason: "--session goes with --scope session only".into(),
            }),
            (word, None) => {
                let flag = self.project.clone();
                let scope = Scope::parse(word, || project_dir(flag))?;
                Ok(scope.journal_id())
            }
        }
    }
}

/// `--project DIR`, else `$CLAUDE_PROJECT_DIR`, else the git root above the current
/// directory, else the current directory.
pub fn project_dir(flag: Option<PathBuf>) -> Result<PathBuf> {
    let host = std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from);
    let cwd = std::env::current_dir().ok();
    let dir = match flag {
        Some(d) => sjournal::memory::project_dir(Some(&d), None),
        None => sjournal::memory::project_dir(host.as_deref(), cwd.as_deref()),
    };
    dir.ok_or_else(|| Error::InvalidInput {
        reason: "no project directory: pass --project DIR".into(),
    })
}
