//! What `fetch --json` prints (the `remote` feature).

use std::path::Path;

use serde::Serialize;

use crate::remote::fetch::Fetched;
use crate::remote::Location;

/// `fetch --json`: one line per shipped journal.
///
/// `{"location": {<remote::Location>}|null, "path": "<local path>"|null, "outcome":
/// "written"|"up to date"|"refused: ..", "ok": bool, "last_seq", "findings": [".."]}`:
/// where the journal is in the remote, where it was written, what was done, whether it
/// verified, its last seq, and what verification found.
#[derive(Debug, Clone, Serialize)]
pub struct FetchLine<'a> {
    pub location: Option<&'a Location>,
    pub path: Option<&'a Path>,
    pub outcome: &'a str,
    pub ok: bool,
    pub last_seq: u64,
    pub findings: &'a [String],
}

impl<'a> From<&'a Fetched> for FetchLine<'a> {
    fn from(f: &'a Fetched) -> Self {
        FetchLine {
            location: f.verdict.location.as_ref(),
            path: f.path.as_deref(),
            outcome: &f.outcome,
            ok: f.ok,
            last_seq: f.verdict.last_seq,
            findings: &f.verdict.findings,
        }
    }
}
