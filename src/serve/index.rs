//! Every session under the root, kept current from the journals themselves: one load per
//! journal when the viewer starts (the snapshot and the records after it), then, when inotify
//! says a journal (or its spool, rescue journal or mark) changed, only the records appended
//! since the last read, verified link by link and folded into the session's state. Nothing
//! walks the whole root again. Each change is broadcast to the pages (server-sent events) with
//! the session's new summary and its new records.
//!
//! The viewer is a reader: it takes the journals' shared read lock only while it maps a file,
//! never a writer's lock, merges no spool and writes no snapshot, so a hook never waits on it.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use super::text;
use crate::error::{Error, Result};
use crate::fold::{RecordView, State};
use crate::format::payload::{self, is_system_kind};
use crate::format::record::FrameError;
use crate::journal::paths::{Root, SessionPaths, JOURNAL_EXT, SNAPSHOT_EXT};
use crate::journal::scan::{Chain, Problem};
use crate::journal::{JournalReader, Record, WriterOptions};
use crate::snapshot::{load_paths, LoadOptions, SnapshotUse};

/// How long the viewer waits for a journal's read lock (held exclusively only while recovery
/// cuts a torn tail) before it tries again at the next change.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// States kept in memory for the sessions that changed last: their next records fold on top.
/// Others are loaded again (snapshot and tail) when they change.
pub const HOT_STATES: usize = 64;
/// New records sent to the pages per change at most (the rest are counted).
const LIVE_RECORDS_MAX: usize = 200;
/// A session without an end whose last record is older than this is `quiet`, not `running`.
const RUNNING_WITHIN: Duration = Duration::from_secs(15 * 60);

/// One session as the Sessions page lists it. Every text is escaped (`text::line`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The journal's file stem: the session's key in the viewer's URLs.
    pub key: String,
    /// The id in the journal's header.
    pub id: String,
    /// A memory scope journal, not a host session.
    pub scope: bool,
    pub host: Option<String>,
    pub project: Option<String>,
    pub model: Option<String>,
    /// `running`, `quiet` (no end recorded, nothing for a while), `ended`, `damaged` or
    /// `pending` (events wait in its spool).
    pub status: &'static str,
    pub ended: Option<String>,
    pub pending: usize,
    pub rescued: bool,
    pub problem: Option<String>,
    pub first_ns: i64,
    pub last_ns: i64,
    pub records: u64,
    pub seq: u64,
    pub turns: u64,
    pub open_turn: bool,
    pub compactions: u64,
    pub tool_calls: u64,
    pub failures: u64,
    pub subagents: u64,
}

/// One record in a list: what it is and the few fields that say what happened.
#[derive(Debug, Clone, Serialize)]
pub struct Brief {
    pub seq: u64,
    pub ts: i64,
    pub kind: String,
    /// The record's chain hash (hex).
    pub hash: String,
    pub what: String,
}

/// What the pages are told.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
// Each message is made once and shared behind an `Arc`: the size of the small variants is moot.
#[allow(clippy::large_enum_variant)]
pub enum Live {
    /// A session appeared or changed: its summary, and the records it gained.
    Session {
        summary: Summary,
        records: Vec<Brief>,
        /// Records gained beyond those sent.
        more: u64,
    },
    /// A journal is gone.
    Removed { key: String },
    /// The first load of every journal finished.
    Indexed { sessions: usize },
}

/// Where the records read so far end.
#[derive(Debug, Clone, Copy)]
struct Pos {
    offset: u64,
    chain: Chain,
}

struct Entry {
    summary: Summary,
    pos: Pos,
    /// How the state the index keeps was loaded before it folded on: whether the session's
    /// snapshot was used (`SnapshotUse::name`).
    snapshot: &'static str,
}

/// A session's state as the index read it, and how it was loaded: whether the session's
/// snapshot was used (`used`, `none`, `past-target`, `rejected`: `SnapshotUse::name`).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub state: State,
    pub snapshot: &'static str,
}

#[derive(Default)]
struct Inner {
    entries: BTreeMap<String, Entry>,
    /// States of recently changed sessions, by key, with their use order.
    hot: HashMap<String, State>,
    order: VecDeque<String>,
    /// Sessions the first load has still to do (a change before then loads it at once).
    unloaded: BTreeSet<String>,
}

/// The sessions of one root.
pub struct Index {
    root: Root,
    writer: WriterOptions,
    inner: Mutex<Inner>,
    /// Held while a session is read, so two reads of one session never interleave (the first
    /// load and a change can ask at once).
    reading: Mutex<()>,
    tx: broadcast::Sender<Arc<Live>>,
    indexed: AtomicBool,
    /// Journals found by the first load, and loaded so far.
    total: AtomicU64,
    loaded: AtomicU64,
}

/// A session's files from its stem (the file name of its journal without `.sjl`).
pub fn paths_of(root: &Root, stem: &str) -> SessionPaths {
    let dir = root.sessions_dir();
    SessionPaths {
        session_id: String::new(),
        journal: dir.join(format!("{stem}.{JOURNAL_EXT}")),
        lock: dir.join(format!("{stem}.lock")),
        rescue: dir.join(format!("{stem}.rescue.{JOURNAL_EXT}")),
        rescue_lock: dir.join(format!("{stem}.rescue.lock")),
        spool: dir.join(format!("{stem}.spool")),
        snapshot: dir.join(format!("{stem}.{SNAPSHOT_EXT}")),
        stem: stem.to_owned(),
        dir,
    }
}

/// The session a changed file of `sessions/` belongs to: its journal, rescue journal, mark or
/// spool (directory or file in it). None for anything else (locks, snapshots, temporary
/// files).
pub fn key_of(sessions: &Path, changed: &Path) -> Option<String> {
    let rel = changed.strip_prefix(sessions).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let stem = first
        .strip_suffix(&format!(".rescue.{JOURNAL_EXT}"))
        .or_else(|| first.strip_suffix(&format!(".{JOURNAL_EXT}")))
        .or_else(|| first.strip_suffix(".hwm"))
        .or_else(|| first.strip_suffix(".spool"))?;
    (!stem.is_empty() && !stem.starts_with('.')).then(|| stem.to_owned())
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

fn in_flight(p: &Problem) -> bool {
    matches!(p, Problem::Frame(FrameError::Incomplete { .. }))
}

impl Index {
    pub fn new(root: Root, writer: WriterOptions) -> Index {
        Index {
            root,
            writer,
            inner: Mutex::new(Inner::default()),
            reading: Mutex::new(()),
            tx: broadcast::channel(4096).0,
            indexed: AtomicBool::new(false),
            total: AtomicU64::new(0),
            loaded: AtomicU64::new(0),
        }
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Live>> {
        self.tx.subscribe()
    }

    /// (loaded, total, done) of the first load.
    pub fn progress(&self) -> (u64, u64, bool) {
        (
            self.loaded.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
            self.indexed.load(Ordering::Acquire),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every summary, newest activity first.
    pub fn summaries(&self) -> Vec<Summary> {
        let inner = self.lock();
        let mut v: Vec<Summary> = inner.entries.values().map(|e| e.summary.clone()).collect();
        drop(inner);
        // `running` was true when the session last changed; silence since then makes it quiet.
        let now = now_ns();
        for s in v.iter_mut().filter(|s| s.status == "running") {
            if now.saturating_sub(s.last_ns) > RUNNING_WITHIN.as_nanos() as i64 {
                s.status = "quiet";
            }
        }
        v.sort_by(|a, b| b.last_ns.cmp(&a.last_ns).then_with(|| a.key.cmp(&b.key)));
        v
    }

    pub fn summary(&self, key: &str) -> Option<Summary> {
        self.lock().entries.get(key).map(|e| e.summary.clone())
    }

    /// The session's state as the index last read it (up to its summary's seq): kept in
    /// memory for the sessions that changed last, else loaded (the snapshot and the tail up to
    /// that seq), as the hook loads it. The load's error if it fails (the journal is gone or
    /// unreadable since the index read it, its lock is held past the wait).
    pub fn state(&self, key: &str) -> Result<Loaded> {
        let (next, snapshot, hot) = {
            let inner = self.lock();
            let e = inner.entries.get(key).ok_or_else(|| Error::NoSuchSession {
                session: key.to_owned(),
                root: self.root.dir().to_owned(),
            })?;
            let next = e.pos.chain.next_seq;
            let hot = inner.hot.get(key).filter(|s| s.seq + 1 == next).cloned();
            (next, e.snapshot, hot)
        };
        if let Some(state) = hot {
            return Ok(Loaded { state, snapshot });
        }
        let opts = LoadOptions {
            at: Some(next.saturating_sub(1)),
            use_snapshot: true,
            deadline: Some(Instant::now() + LOCK_WAIT),
        };
        let (state, info) = load_paths(&paths_of(&self.root, key), &opts)?;
        Ok(Loaded {
            state,
            snapshot: info.snapshot.name(),
        })
    }

    /// The first load: every journal under the root, oldest file name first. Changes that
    /// arrive meanwhile load their session at once ([`Index::changed`]).
    pub fn load_all(&self) {
        let journals = self.root.journals().unwrap_or_default();
        let rescue = format!(".rescue.{JOURNAL_EXT}");
        let keys: Vec<String> = journals
            .iter()
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .filter(|n| !n.ends_with(&rescue))
            .filter_map(|n| {
                n.strip_suffix(&format!(".{JOURNAL_EXT}"))
                    .map(str::to_owned)
            })
            .collect();
        self.total.store(keys.len() as u64, Ordering::Relaxed);
        self.lock().unloaded.extend(keys.iter().cloned());
        let pending: BTreeSet<String> =
            crate::journal::spool::sessions_with_pending(&self.root, &self.writer)
                .unwrap_or_default()
                .into_iter()
                .collect();
        for key in keys {
            if self.lock().unloaded.remove(&key) {
                self.refresh(&key, Some(&pending), false);
            }
            self.loaded.fetch_add(1, Ordering::Relaxed);
        }
        self.indexed.store(true, Ordering::Release);
        let n = self.lock().entries.len();
        let _ = self.tx.send(Arc::new(Live::Indexed { sessions: n }));
    }

    /// A file of these sessions changed: read what their journals gained and tell the pages.
    pub fn changed(&self, keys: &BTreeSet<String>) {
        for key in keys {
            self.lock().unloaded.remove(key);
            self.refresh(key, None, true);
        }
    }

    /// Brings one session up to date. `pending`: the sessions with spooled events, when the
    /// caller listed them all at once (else this session's spool is listed).
    fn refresh(&self, key: &str, pending: Option<&BTreeSet<String>>, announce: bool) {
        let _reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let paths = paths_of(&self.root, key);
        if std::fs::symlink_metadata(&paths.journal).is_err() {
            let gone = {
                let mut inner = self.lock();
                inner.hot.remove(key);
                inner.entries.remove(key).is_some()
            };
            if gone && announce {
                let _ = self.tx.send(Arc::new(Live::Removed { key: key.into() }));
            }
            return;
        }
        let (prev, hot, before) = {
            let mut inner = self.lock();
            let e = inner.entries.get(key);
            let (prev, before) = (e.map(|e| (e.pos, e.snapshot)), e.map(|e| e.summary.clone()));
            (prev, inner.hot.remove(key), before)
        };
        let Some(update) = self.read(&paths, prev, hot, pending) else {
            return;
        };
        let Update {
            summary,
            state,
            pos,
            snapshot,
            records,
            more,
        } = update;
        {
            let mut inner = self.lock();
            inner.entries.insert(
                key.to_owned(),
                Entry {
                    summary: summary.clone(),
                    pos,
                    snapshot,
                },
            );
            inner.order.retain(|k| k != key);
            inner.order.push_back(key.to_owned());
            inner.hot.insert(key.to_owned(), state);
            while inner.hot.len() > HOT_STATES {
                match inner.order.pop_front() {
                    Some(old) => {
                        inner.hot.remove(&old);
                    }
                    None => break,
                }
            }
        }
        // A change that added nothing and changed nothing shown (the mark or the lock file
        // written after the journal) is not news.
        if announce && (!records.is_empty() || before.as_ref() != Some(&summary)) {
            let _ = self.tx.send(Arc::new(Live::Session {
                summary,
                records,
                more,
            }));
        }
    }

    /// The session's state up to where it was read before (`prev`), then the records since.
    fn read(
        &self,
        paths: &SessionPaths,
        prev: Option<(Pos, &'static str)>,
        hot: Option<State>,
        pending: Option<&BTreeSet<String>>,
    ) -> Option<Update> {
        let deadline = Some(Instant::now() + LOCK_WAIT);
        let reader = match JournalReader::open(&paths.journal, deadline) {
            Ok(r) => r,
            Err(e) => return Some(self.unreadable(paths, &e.to_string())),
        };
        let (header, hlen, genesis) = match reader.header() {
            Ok(h) => h,
            Err(e) => return Some(self.unreadable(paths, &format!("bad header: {e}"))),
        };
        let len = reader.bytes().len() as u64;
        let mut warnings = Vec::new();
        // A file shorter than what was read (repaired, replaced): start over.
        let prev = prev.filter(|(p, _)| p.offset <= len);
        let mut snapshot = SnapshotUse::None.name();
        let (mut state, mut pos) = match (prev, hot) {
            (Some((p, used)), Some(s)) if s.seq + 1 == p.chain.next_seq => {
                snapshot = used;
                (s, p)
            }
            (Some((p, _)), _) => {
                let opts = LoadOptions {
                    at: Some(p.chain.next_seq - 1),
                    use_snapshot: true,
                    deadline,
                };
                match load_paths(paths, &opts) {
                    Ok((s, info)) if s.seq + 1 == p.chain.next_seq => {
                        snapshot = info.snapshot.name();
                        (s, p)
                    }
                    _ => (
                        State::new(),
                        Pos {
                            offset: hlen as u64,
                            chain: Chain::genesis(genesis),
                        },
                    ),
                }
            }
            (None, _) => match load_paths(
                paths,
                &LoadOptions {
                    deadline,
                    ..LoadOptions::latest()
                },
            ) {
                Ok((s, info)) => {
                    warnings = info.warnings;
                    snapshot = info.snapshot.name();
                    let pos = match info.head {
                        Some(h) => Pos {
                            offset: h.end_offset,
                            chain: Chain {
                                next_seq: h.seq + 1,
                                prev_hash: h.hash,
                            },
                        },
                        None => Pos {
                            offset: hlen as u64,
                            chain: Chain::genesis(genesis),
                        },
                    };
                    (s, pos)
                }
                Err(e) => return Some(self.unreadable(paths, &e.to_string())),
            },
        };
        let mut records = Vec::new();
        let mut more = 0;
        let mut problem = warnings.into_iter().next();
        if prev.is_some() || pos.offset < len {
            for r in reader.records_from(pos.offset as usize, pos.chain) {
                match r {
                    Ok(rec) => {
                        state.apply(&RecordView::from(&rec));
                        pos = Pos {
                            offset: rec.offset + rec.len() as u64,
                            chain: Chain {
                                next_seq: rec.seq + 1,
                                prev_hash: rec.hash,
                            },
                        };
                        if prev.is_some() {
                            if records.len() < LIVE_RECORDS_MAX {
                                records.push(brief(&rec));
                            } else {
                                more += 1;
                            }
                        }
                    }
                    Err(stop) if in_flight(&stop.problem) => break,
                    Err(stop) => {
                        problem = Some(format!(
                            "the journal stops at offset {}: {}",
                            stop.offset, stop.problem
                        ));
                        break;
                    }
                }
            }
        }
        drop(reader);
        let id = header.session_id;
        let pending = match pending {
            Some(set) => usize::from(set.contains(&id)),
            None => crate::journal::spool::has_pending(&self.root, &id, &self.writer)
                .map(usize::from)
                .unwrap_or(0),
        };
        let rescued = std::fs::symlink_metadata(&paths.rescue).is_ok();
        let summary = summarize(&paths.stem, &id, &state, problem, pending, rescued);
        Some(Update {
            summary,
            state,
            pos,
            snapshot,
            records,
            more,
        })
    }

    /// A journal that cannot be read at all: listed, damaged, with why.
    fn unreadable(&self, paths: &SessionPaths, why: &str) -> Update {
        let mut s = summarize(&paths.stem, &paths.stem, &State::new(), None, 0, false);
        s.status = "damaged";
        s.problem = Some(text::line(why));
        Update {
            summary: s,
            state: State::new(),
            pos: Pos {
                offset: u64::MAX,
                chain: Chain::genesis(crate::format::Hash([0; 32])),
            },
            snapshot: SnapshotUse::None.name(),
            records: Vec::new(),
            more: 0,
        }
    }
}

struct Update {
    summary: Summary,
    state: State,
    pos: Pos,
    snapshot: &'static str,
    records: Vec<Brief>,
    more: u64,
}

fn summarize(
    key: &str,
    id: &str,
    st: &State,
    problem: Option<String>,
    pending: usize,
    rescued: bool,
) -> Summary {
    let ident = &st.identity;
    let scope = crate::memory::Scope::of_journal_id(id);
    let project = match &scope {
        Some(crate::memory::Scope::Project(p)) => Some(p.clone()),
        _ => ident.project_dir.clone().or_else(|| ident.cwd.clone()),
    };
    let now = now_ns();
    let status = if problem.is_some() {
        "damaged"
    } else if pending > 0 {
        "pending"
    } else if st.ended.is_some() {
        "ended"
    } else if now.saturating_sub(st.last_ts_unix_ns) <= RUNNING_WITHIN.as_nanos() as i64 {
        "running"
    } else {
        "quiet"
    };
    Summary {
        key: key.to_owned(),
        id: text::line(id),
        scope: scope.is_some(),
        host: text::opt(ident.host.as_deref()),
        project: text::opt(project.as_deref()),
        model: text::opt(ident.model.as_deref()),
        status,
        ended: st.ended.as_ref().map(|e| {
            text::line(&match &e.reason {
                Some(r) => format!("{} ({r})", e.event),
                None => e.event.clone(),
            })
        }),
        pending,
        rescued,
        problem: problem.as_deref().map(text::line),
        first_ns: st.first_ts_unix_ns,
        last_ns: st.last_ts_unix_ns,
        records: st.records,
        seq: st.seq,
        turns: st.turns.count,
        open_turn: st.turns.open,
        compactions: st.compactions.count,
        tool_calls: st.tools.calls,
        failures: st.tools.failures + st.turns.stop_failures,
        subagents: st.subagents.started,
    }
}

/// A field of an event as one short line.
fn field(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Null | Value::String(_) => None,
        other => Some(other.to_string()),
    }
}

/// What a record says, in a line: a tool call's tool and command or path, a prompt, a start's
/// source, an error; a system record's fields.
pub fn brief(rec: &Record<'_>) -> Brief {
    let what = if is_system_kind(rec.kind) {
        payload::to_json(rec.seq, rec.kind, rec.payload)
            .map(|r| text::short(r.get(), 160))
            .unwrap_or_default()
    } else {
        let v = payload::decode_event(rec.seq, rec.payload)
            .ok()
            .and_then(|s| crate::event::lenient::value(s.as_bytes()).ok())
            .unwrap_or(Value::Null);
        let input = v.get("tool_input").or_else(|| v.get("toolInput"));
        let detail = input.and_then(|i| {
            [
                "command",
                "file_path",
                "path",
                "pattern",
                "url",
                "description",
            ]
            .iter()
            .find_map(|k| field(i, k))
        });
        let parts: Vec<String> = [
            field(&v, "tool_name").or_else(|| field(&v, "toolName")),
            detail,
            field(&v, "prompt"),
            field(&v, "source"),
            field(&v, "trigger"),
            field(&v, "reason"),
            field(&v, "agent_type"),
            field(&v, "error"),
            field(&v, "last_assistant_message"),
            field(&v, "message"),
        ]
        .into_iter()
        .flatten()
        .collect();
        text::short(&parts.join(" · "), 160)
    };
    Brief {
        seq: rec.seq,
        ts: rec.ts_unix_ns,
        kind: text::line(rec.kind),
        hash: rec.hash.to_hex(),
        what,
    }
}

/// Watches `sessions/` with inotify (recursively: spool directories too) and sends the key of
/// every session whose files change. Returns the watcher: dropping it stops watching.
pub fn watch(
    root: &Root,
    tx: tokio::sync::mpsc::UnboundedSender<String>,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::{RecursiveMode, Watcher};
    let sessions = root.sessions_dir();
    let dir = sessions.clone();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(ev) = res else { return };
        for p in &ev.paths {
            if let Some(k) = key_of(&dir, p) {
                let _ = tx.send(k);
            }
        }
    })?;
    watcher.watch(&sessions, RecursiveMode::Recursive)?;
    Ok(watcher)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_files_name_their_session() {
        let s = Path::new("/r/sessions");
        let k = |p: &str| key_of(s, Path::new(p));
        assert_eq!(k("/r/sessions/abc.sjl").as_deref(), Some("abc"));
        assert_eq!(k("/r/sessions/abc.rescue.sjl").as_deref(), Some("abc"));
        assert_eq!(
            k("/r/sessions/h-12.spool/0001.spool").as_deref(),
            Some("h-12")
        );
        assert_eq!(k("/r/sessions/abc.hwm").as_deref(), Some("abc"));
        assert_eq!(k("/r/sessions/abc.lock"), None);
        assert_eq!(k("/r/sessions/abc.snap"), None);
        assert_eq!(k("/r/sessions/.sjl"), None);
        assert_eq!(k("/elsewhere/abc.sjl"), None);
    }
}
