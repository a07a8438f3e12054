//! `sjournal webhook status`: per subscribed session and configured webhook, what is owed,
//! what was delivered, the last attempt and the last failure, and whether a deliverer runs.
//! Read-only: it scans from the cursors without moving them and never takes the lock.

use serde::Serialize;

use crate::config::webhook::WebhookHandler;
use crate::error::Result;
use crate::journal::{JournalReader, Root, SessionPaths};
use crate::webhook::outbox::{self, LastAttempt};

/// One line of `webhook status --json` (one JSON object per session and webhook).
#[derive(Debug, Clone, Serialize)]
pub struct WebhookStatus {
    pub session_id: String,
    pub webhook: String,
    /// The URL as configured (`${VAR}`s unexpanded).
    pub url: String,
    /// Events delivered.
    pub delivered: u64,
    /// Events owed (not delivered yet).
    pub pending: u64,
    pub oldest_pending_seq: Option<u64>,
    pub last_attempt: Option<LastAttempt>,
    pub last_failure: Option<LastAttempt>,
    /// The pid of the deliverer running for the session, if one runs.
    pub deliverer_pid: Option<u32>,
    /// Why the journal could not be read to its end, if so.
    pub problem: Option<String>,
}

/// Status of `session` (None: every subscribed session).
pub fn status(
    root: &Root,
    hooks: &[WebhookHandler],
    session: Option<&str>,
) -> Result<Vec<WebhookStatus>> {
    let sessions: Vec<SessionPaths> = match session {
        Some(id) => vec![root.session(id)?],
        None => subscribed(root)?,
    };
    let mut out = Vec::new();
    for paths in &sessions {
        let dir = outbox::state_dir(paths);
        let pid = outbox::holder(&dir);
        for hook in hooks {
            let cursor = outbox::read_cursor(&dir, &hook.name);
            let mut st = WebhookStatus {
                session_id: paths.session_id.clone(),
                webhook: hook.name.clone(),
                url: hook.url.clone(),
                delivered: 0,
                pending: 0,
                oldest_pending_seq: None,
                last_attempt: None,
                last_failure: None,
                deliverer_pid: pid,
                problem: None,
            };
            match outbox::scan(paths, hook, cursor.as_ref()) {
                Ok(s) => {
                    st.delivered = s.delivered;
                    st.pending = s.pending_total;
                    st.oldest_pending_seq = s.pending.first().map(|p| p.seq);
                    st.last_attempt = s.last;
                    st.last_failure = s.last_failure;
                    st.problem = s.problem;
                }
                Err(e) => st.problem = Some(e.to_string()),
            }
            out.push(st);
        }
    }
    Ok(out)
}

/// The sessions with webhook state, with their ids read from their journals' headers.
pub fn subscribed(root: &Root) -> Result<Vec<SessionPaths>> {
    let mut out = Vec::new();
    for stem in outbox::subscribed_stems(root)? {
        let journal = root.sessions_dir().join(format!("{stem}.sjl"));
        let Ok(reader) = JournalReader::open(&journal, None) else {
            continue;
        };
        let Ok((header, _, _)) = reader.header() else {
            continue;
        };
        let paths = root.session(&header.session_id)?;
        // A journal whose header names a session of another stem is not this state's.
        if paths.stem == stem {
            out.push(paths);
        }
    }
    Ok(out)
}
