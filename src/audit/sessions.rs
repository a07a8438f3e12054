//! One summary per session under a root: who ran it (host, project directory), when (first
//! and last record), how much (records per kind, bytes on disk), and whether it verifies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Result;
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

/// Summaries of every session under the root, in order of their first record.
pub fn list(root: &Root) -> Result<Vec<SessionSummary>> {
    let rescue_suffix = format!(".rescue.{JOURNAL_EXT}");
    let mut out = Vec::new();
    for path in root.journals()? {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(&rescue_suffix) {
            continue;
        }
        // An entry that cannot be read (a symlink or a directory named like a journal, no
        // permission) is listed as a finding; the others are still summarized.
        out.push(summarize(&path).unwrap_or_else(|e| SessionSummary::unreadable(&path, &e)));
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
    let mut state = crate::fold::State::new();
    if let Ok(records) = reader.records() {
        for rec in records.map_while(|r| r.ok()) {
            s.records += 1;
            // A webhook attempt is delivery bookkeeping, written whenever the deliverer runs
            // (minutes or hours after the session ended): it is not session time.
            if rec.kind != crate::format::payload::KIND_WEBHOOK {
                s.first_ts_unix_ns.get_or_insert(rec.ts_unix_ns);
                s.last_ts_unix_ns = Some(rec.ts_unix_ns);
            }
            *s.kinds.entry(rec.kind.to_owned()).or_default() += 1;
            state.apply(&crate::fold::RecordView::from(&rec));
        }
    }
    s.identity = Identity::of(&state);
    let rescue = rescue_path(path);
    if std::fs::symlink_metadata(&rescue).is_ok() {
        let r = verify_file(&rescue, None)
            .unwrap_or_else(|e| crate::journal::VerifyReport::unreadable(&rescue, &e));
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

impl SessionSummary {
    /// The summary of a journal that could not be read at all.
    pub fn unreadable(path: &Path, error: &crate::Error) -> SessionSummary {
        SessionSummary {
            session_id: None,
            journal: path.to_owned(),
            identity: Identity::default(),
            first_ts_unix_ns: None,
            last_ts_unix_ns: None,
            records: 0,
            kinds: BTreeMap::new(),
            bytes: 0,
            rescued: None,
            ok: false,
            problem: Some(format!("cannot be read: {error}")),
        }
    }
}

fn rescue_path(journal: &Path) -> PathBuf {
    let name = journal.file_name().unwrap_or_default().to_string_lossy();
    let stem = name
        .strip_suffix(&format!(".{JOURNAL_EXT}"))
        .unwrap_or(&name);
    journal.with_file_name(format!("{stem}.rescue.{JOURNAL_EXT}"))
}

impl Identity {
    /// Host, project (cwd) and model as the fold recognised them.
    pub fn of(state: &crate::fold::State) -> Identity {
        Identity {
            host: state.identity.host.clone(),
            project: state.identity.cwd.clone(),
            model: state.identity.model.clone(),
        }
    }
}
