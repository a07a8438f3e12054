//! The Search page's boundary: a query in, hits out, each hit pinned to a record (session,
//! seq, time, kind, the record's chain hash) with a snippet and where the match is in it. The
//! page links every hit into its session at that seq.
//!
//! The viewer does not search itself: an engine implements [`Search`] and `sjournal serve`
//! hands it in ([`super::Options::search`]): [`Engine`], the `sjournal search` engine
//! (`crate::search`: the same index, query syntax and ranking), when the `search` feature is
//! built; else [`NotBuilt`], and the page says search is not built in.

use serde::{Deserialize, Serialize};

/// What the person asked. The fields are the `sjournal search` options.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Query {
    /// The query text (an engine's syntax: words, phrases, `field:value`).
    #[serde(default)]
    pub q: String,
    /// Only sessions of this project directory (or under it).
    pub project: Option<String>,
    /// Only this session (its id).
    pub session: Option<String>,
    /// Only records of these kinds.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Only records at or after / before this time (Unix nanoseconds).
    pub since_ns: Option<i64>,
    pub until_ns: Option<i64>,
    /// At most this many hits (the page asks for 50).
    pub limit: Option<usize>,
}

/// One hit: a record, and the text that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The session id (as in the journal's header).
    pub session: String,
    /// The record's seq in the session's journal (None: a pending event, in no journal yet).
    pub seq: Option<u64>,
    pub ts_unix_ns: i64,
    /// What the record is (the engine's kind: `prompt`, `call`, `failure`, ...).
    pub kind: String,
    /// The record's chain hash (hex): what `verify` checks the record against (None: pending).
    pub hash: Option<String>,
    /// A bounded excerpt of the record's text, as journaled (not escaped yet).
    pub snippet: String,
    /// Where the query matched in `snippet`: byte ranges `[start, end)`, in order.
    pub matches: Vec<(usize, usize)>,
    /// The record is not (yet) in a journal that verifies: `damaged`, `pending` (spooled),
    /// `rescued`; None for an ordinary record.
    pub mark: Option<String>,
    /// The seq is one of the session's journal (not of its rescue journal, nor pending): the
    /// session page can show the record at it.
    pub in_journal: bool,
}

/// What an engine says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// False: the page shows `note` instead of a search box.
    pub available: bool,
    /// The engine's name, and anything the person should know (index age, what it covers).
    pub engine: String,
    pub note: String,
}

/// A search engine over the journals under the root. Called on a blocking thread: it may read
/// its index and the journals.
pub trait Search: Send + Sync {
    fn status(&self) -> Status;
    /// Hits, best first. `Err` is a message for the person (a query it cannot parse).
    fn search(&self, query: &Query) -> Result<Vec<Hit>, String>;
}

/// The engine when none is built in.
#[derive(Debug, Default, Clone, Copy)]
pub struct NotBuilt;

impl Search for NotBuilt {
    fn status(&self) -> Status {
        Status {
            available: false,
            engine: "none".into(),
            note: "Search needs the `search` feature, and this sjournal was built without it \
                   (it is a default feature: `cargo install --locked --path . --features viewer` builds \
                   both). Meanwhile `sjournal log --session ID --json` and `grep` find text in \
                   one session."
                .into(),
        }
    }

    fn search(&self, _: &Query) -> Result<Vec<Hit>, String> {
        Err(self.status().note)
    }
}

/// The `sjournal search` engine (`crate::search`) over the viewer's root: every session
/// (`--all`) unless the query names a project. A search catches the index up first, as the
/// command does (the index is a derived read model under `<root>/search/`, never a journal).
#[cfg(feature = "search")]
pub struct Engine {
    pub root: crate::journal::Root,
    pub writer: crate::journal::WriterOptions,
}

#[cfg(feature = "search")]
impl Search for Engine {
    fn status(&self) -> Status {
        Status {
            available: true,
            engine: "sjournal search".into(),
            note: "every session under the root, as `sjournal search --all` finds it: words \
                   (all must match), \"a phrase\", -word, file:PATH, tool:NAME, failed:yes|no, \
                   kind:prompt|call|failure|..., status:damaged|rescued|pending, session:ID"
                .into(),
        }
    }

    fn search(&self, q: &Query) -> Result<Vec<Hit>, String> {
        use crate::search::{self as engine, DocKind, Scope};
        let scope = match q
            .project
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            Some(p) => Scope::Project(
                crate::memory::project_dir(Some(std::path::Path::new(p)), None)
                    .map(|d| d.to_string_lossy().into_owned())
                    .unwrap_or_else(|| p.to_owned()),
            ),
            None => Scope::All,
        };
        let mut kinds = Vec::new();
        for k in &q.kinds {
            kinds.push(DocKind::parse(k).ok_or_else(|| {
                format!(
                    "no kind {:?}: kinds are {}",
                    crate::escape::text(k),
                    DocKind::ALL.map(DocKind::as_str).join(", ")
                )
            })?);
        }
        let req = engine::Request {
            query: q.q.clone(),
            scope,
            session: q.session.clone(),
            kinds,
            since: q.since_ns,
            until: q.until_ns,
            limit: q.limit.unwrap_or(engine::LIMIT_DEFAULT),
        };
        let opts = engine::Options {
            no_update: false,
            deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(10)),
            writer: self.writer.clone(),
        };
        let found = engine::search(&self.root, &req, &opts).map_err(|e| e.to_string())?;
        Ok(found
            .hits
            .into_iter()
            .map(|h| Hit {
                in_journal: h.seq.is_some() && h.journal == Some("journal"),
                mark: match h.status {
                    engine::Status::Journal => None,
                    other => Some(other.as_str().to_owned()),
                },
                session: h.session,
                seq: h.seq,
                ts_unix_ns: h.ts_unix_ns,
                kind: h.kind.as_str().to_owned(),
                hash: h.hash,
                snippet: h.snippet,
                matches: h.highlights,
            })
            .collect())
    }
}
