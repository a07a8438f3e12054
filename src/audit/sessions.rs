//! One summary per session under a root: who ran it (host, project directory), when (first
//! and last record), how much (records per kind, bytes on disk), and whether it verifies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Result;
use crate::format::payload;
use crate::journal::paths::JOURNAL_EXT;
use crate::journal::{verify_file, JournalReader, Root};

/// The JSON form (`sessions --json`, one per line) is this struct.
#[derive(Debug, Clone, Serialize)]
pub struct SessionSummary {
    /// The id in the journal header (None if the header is damaged).
    pub session_id: Option<String>,
    pub journal: PathBuf,
    #[serde(flatten)]
    pub identity: Identity,
    pub first_ts_unix_ns: Option<i64>,
    pub last_ts_unix_ns: Option<i64>,
    pub records: u64,
    /// Records per kind, system records included.
    pub kinds: BTreeMap<String, u64>,
    /// Bytes on disk: the journal, plus the rescue journal if there is one.
    pub bytes: u64,
    /// Records in the session's rescue journal (events the main journal refused).
    pub rescued: Option<u64>,
    /// True if the journal (and rescue journal) verify.
    pub ok: bool,
    /// The first problem verify found.
    pub problem: Option<String>,
}

/// Who ran a session, as far as its events tell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// claude, codex, gemini, cursor or cline.
    pub host: Option<String>,
    /// The project directory (the host's cwd or first workspace root).
    pub project: Option<String>,
    pub model: Option<String>,
}

/// How many events are looked at for the identity at most.
const IDENTITY_EVENTS: usize = 64;

/// Summaries of every session under the root, in order of their first record.
pub fn list(root: &Root) -> Result<Vec<SessionSummary>> {
    let rescue_suffix = format!(".rescue.{JOURNAL_EXT}");
    let mut out = Vec::new();
    for path in root.journals()? {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(&rescue_suffix) {
            continue;
        }
        out.push(summarize(&path)?);
    }
    out.sort_by(|a, b| (a.first_ts_unix_ns, &a.journal).cmp(&(b.first_ts_unix_ns, &b.journal)));
    Ok(out)
}

/// The summary of one main journal (and its rescue journal, if any).
pub fn summarize(path: &Path) -> Result<SessionSummary> {
    let report = verify_file(path, None)?;
    let reader = JournalReader::open(path, None)?;
    let mut s = SessionSummary {
        session_id: report.session_id.clone(),
        journal: path.to_owned(),
        identity: Identity::default(),
        first_ts_unix_ns: None,
        last_ts_unix_ns: None,
        records: 0,
        kinds: BTreeMap::new(),
        bytes: reader.bytes().len() as u64,
        rescued: None,
        ok: report.ok,
        problem: report
            .problem
            .map(|f| format!("offset {}: {}", f.offset, f.what)),
    };
    let mut events = Vec::new();
    if let Ok(records) = reader.records() {
        for rec in records.map_while(|r| r.ok()) {
            s.records += 1;
            s.first_ts_unix_ns.get_or_insert(rec.ts_unix_ns);
            s.last_ts_unix_ns = Some(rec.ts_unix_ns);
            *s.kinds.entry(rec.kind.to_owned()).or_default() += 1;
            if events.len() < IDENTITY_EVENTS && !payload::is_system_kind(rec.kind) {
                if let Ok(text) = payload::decode_event(rec.seq, rec.payload) {
                    events.push(text);
                }
            }
        }
    }
    s.identity = identity(&events);
    let rescue = rescue_path(path);
    if rescue.exists() {
        let r = verify_file(&rescue, None)?;
        s.bytes += r.bytes;
        s.rescued = Some(r.records);
        if !r.ok {
            s.ok = false;
            s.problem.get_or_insert(format!(
                "rescue journal: {}",
                r.problem.map(|f| f.what).unwrap_or_default()
            ));
        }
    }
    Ok(s)
}

fn rescue_path(journal: &Path) -> PathBuf {
    let name = journal.file_name().unwrap_or_default().to_string_lossy();
    let stem = name
        .strip_suffix(&format!(".{JOURNAL_EXT}"))
        .unwrap_or(&name);
    journal.with_file_name(format!("{stem}.rescue.{JOURNAL_EXT}"))
}

// INTEGRATION: once the fold is merged, take host, project and model from its `State`
// (identity fields) instead of reading the raw events here; this is the only place that
// guesses them.
/// Host, project and model from the first events' raw JSON: the first event that names
/// each one wins (the model may only come with a later event).
pub fn identity(events: &[&str]) -> Identity {
    let mut id = Identity::default();
    for text in events {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
            continue;
        };
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        let first = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_array())
                .and_then(|a| a.first())
                .and_then(|x| x.as_str())
                .map(str::to_owned)
        };
        if id.host.is_none() {
            id.host = host_of(&v).map(str::to_owned);
        }
        if id.project.is_none() {
            id.project = s("cwd")
                .or_else(|| first("workspace_roots"))
                .or_else(|| first("workspaceRoots"));
        }
        if id.model.is_none() {
            id.model = s("model").or_else(|| s("to_model"));
        }
        if id.host.is_some() && id.project.is_some() && id.model.is_some() {
            break;
        }
    }
    id
}

/// Which host sent an event, by the fields only that host sends
/// (see the hook protocols reference: Codex adds `turn_id`; Gemini sends `timestamp` and its
/// own event names; Cursor sends `conversation_id`; Cline sends camelCase `hookName`).
fn host_of(v: &serde_json::Value) -> Option<&'static str> {
    let has = |k: &str| v.get(k).is_some();
    let event = v.get("hook_event_name").and_then(|e| e.as_str());
    if has("clineVersion") || has("hookName") {
        return Some("cline");
    }
    if has("conversation_id") && (has("workspace_roots") || has("cursor_version")) {
        return Some("cursor");
    }
    let gemini_events = [
        "BeforeAgent",
        "AfterAgent",
        "BeforeModel",
        "AfterModel",
        "BeforeToolSelection",
        "BeforeTool",
        "AfterTool",
        "PreCompress",
    ];
    if event.is_some_and(|e| gemini_events.contains(&e)) || (event.is_some() && has("timestamp")) {
        return Some("gemini");
    }
    // Claude sends `turn_id` too, but only with MessageDisplay.
    if event.is_some_and(|e| e != "MessageDisplay") && has("turn_id") {
        return Some("codex");
    }
    if event.is_some() && has("session_id") {
        return Some("claude");
    }
    None
}
