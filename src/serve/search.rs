//! The Search page's boundary: a query in, hits out, each hit pinned to a record (session,
//! seq, time, kind, the record's chain hash) with a snippet and where the match is in it. The
//! page links every hit into its session at that seq.
//!
//! The viewer does not search itself: an engine implements [`Search`] and `sjournal serve`
//! hands it in ([`super::Options::search`]). Until one is built in, [`NotBuilt`] answers, and
//! the page says so.

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
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub kind: String,
    /// The record's chain hash (hex): what `verify` checks the record against.
    pub hash: String,
    /// A bounded excerpt of the record's text.
    pub snippet: String,
    /// Where the query matched in `snippet`: character ranges `[start, end)`.
    pub matches: Vec<(usize, usize)>,
    /// The record is not (yet) in a journal that verifies: `damaged`, `pending` (spooled),
    /// `rescued`; None for an ordinary record.
    pub mark: Option<String>,
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
            note: "Search is not built into this sjournal: there is no `sjournal search` engine \
                   yet. Until there is, `sjournal log --session ID --json` and `grep` find text \
                   in one session."
                .into(),
        }
    }

    fn search(&self, _: &Query) -> Result<Vec<Hit>, String> {
        Err(self.status().note)
    }
}
