//! What each page shows, as JSON, built from the library: the session timeline
//! (`audit::timeline`), the state at any seq with what its record changed and the injection
//! re-derived (`replay`), memory items (`memory::ops`), verify reports and checkpoints
//! (`journal::verify`, `audit::checkpoint`). Every text from a journal goes through [`text`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

use serde_json::{json, Value};

use super::index::{brief, paths_of, Index};
use super::text;
use crate::audit::timeline;
use crate::context::Policy;
use crate::error::{Error, Result};
use crate::fold::{RecordView, State};
use crate::format::payload::{
    decode_system, is_system_kind, Exec, ExtrasRecord, Injected, KIND_EXEC, KIND_EXTRAS,
    KIND_INJECTED,
};
use crate::journal::scan::{Chain, Problem, Stop};
use crate::journal::{JournalReader, Record, Root, VerifyOptions, WriterOptions};
use crate::memory::{ops, Item, Scope};
use crate::replay::session::SessionFold;
use crate::replay::{replay_records, Range, Step};
use crate::snapshot::LoadOptions;

/// Records in one page of the timeline (the Session page sends the newest).
pub const WINDOW: u64 = 2_000;
/// Records between two places [`Seeks`] keeps.
const SEEK_EVERY: u64 = 512;
/// Sessions whose places are kept.
const SEEK_SESSIONS: usize = 16;
/// Records per page of the records table.
pub(crate) const RECORDS_PAGE_MAX: usize = 500;
/// States kept per session for the replay slider: a step folds at most the records since the
/// nearest one.
const CHECKPOINTS_MAX: u64 = 64;
const CHECKPOINT_EVERY_MIN: u64 = 256;
/// Sessions whose slider states are kept.
const SLIDER_SESSIONS: usize = 2;
/// Records after a step searched for the end of its event's batch (its injection).
const BATCH_MAX: u64 = 32;
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// A page's error: the status to answer with, and what to say.
#[derive(Debug)]
pub struct Failed(pub u16, pub String);

impl From<Error> for Failed {
    fn from(e: Error) -> Failed {
        let status = match e {
            Error::NoSuchSession { .. } => 404,
            Error::InvalidInput { .. } => 400,
            _ => 500,
        };
        Failed(status, text::line(&e.to_string()))
    }
}

pub type Answer = std::result::Result<Value, Failed>;

fn not_found(key: &str) -> Failed {
    Failed(
        404,
        format!("no session {} under this root", text::line(key)),
    )
}

fn deadline() -> Option<Instant> {
    Some(Instant::now() + LOCK_WAIT)
}

/// A state kept at a record, for the slider.
#[derive(Clone)]
struct Kept {
    state: State,
    offset: u64,
    chain: Chain,
    /// Where it came from: `snapshot` (the session's snapshot and the records after it) or
    /// `kept` (the slider's states, made by one fold of the journal).
    from: &'static str,
}

/// Slider states of one journal as it was (its file and its length when they were made).
struct Slider {
    file: Option<FileId>,
    len: u64,
    kept: Vec<Kept>,
}

/// Which file a journal's path named when it was opened: (device, inode). Repair, erase and
/// migrate rename a new file over a journal: a place or state kept for the old file is
/// worthless for the new one, whatever its length.
type FileId = (u64, u64);

fn file_id(p: &std::path::Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// A journal opened for a page, and the file it is (None if the path was renamed over while
/// it was opened: nothing is kept for it then).
struct Opened {
    reader: JournalReader,
    file: Option<FileId>,
}

/// Where a record begins, with the chain it must link to.
#[derive(Debug, Clone, Copy)]
struct At {
    offset: u64,
    chain: Chain,
}

/// Where every [`SEEK_EVERY`]th record of a journal begins, so a page of records or of the
/// timeline is read from near its first record, not from the journal's first.
#[derive(Debug, Clone)]
struct Seeks {
    /// The journal file walked; the places hold for it only.
    file: Option<FileId>,
    /// The journal's length when last walked.
    len: u64,
    /// The first is the header's end (seq 1).
    points: Vec<At>,
    /// Where the record after the last valid one walked begins.
    end: At,
}

impl Seeks {
    fn start(reader: &JournalReader, file: Option<FileId>) -> Result<Seeks> {
        let (_, hlen, genesis) = reader.header().map_err(|e| Error::BadHeader {
            path: reader.path().to_owned(),
            reason: e.to_string(),
        })?;
        let first = At {
            offset: hlen as u64,
            chain: Chain::genesis(genesis),
        };
        Ok(Seeks {
            file,
            len: 0,
            points: vec![first],
            end: first,
        })
    }

    /// Walks the records after `end`: frames, CRCs and seqs, the first link only; hashes
    /// only the records it keeps a place after. False if the first record after `end` does
    /// not fit (the journal is not the one walked before).
    fn extend(&mut self, reader: &JournalReader) -> bool {
        let mut last = None;
        let mut first = true;
        for r in reader
            .records_from(self.end.offset as usize, self.end.chain)
            .first_link_only()
        {
            let Ok(rec) = r else {
                if first
                    && matches!(
                        r,
                        Err(Stop {
                            problem: Problem::ChainBroken { .. } | Problem::SeqMismatch { .. },
                            ..
                        })
                    )
                {
                    return false;
                }
                break;
            };
            first = false;
            if rec.seq % SEEK_EVERY == 0 {
                self.points.push(At {
                    offset: rec.offset + rec.len() as u64,
                    chain: Chain {
                        next_seq: rec.seq + 1,
                        prev_hash: rec.frame.hash(),
                    },
                });
            }
            last = Some(rec);
        }
        if let Some(rec) = last {
            self.end = At {
                offset: rec.offset + rec.len() as u64,
                chain: Chain {
                    next_seq: rec.seq + 1,
                    prev_hash: rec.frame.hash(),
                },
            };
        }
        true
    }

    /// The nearest place at or before record `seq`.
    fn before(&self, seq: u64) -> At {
        self.points
            .iter()
            .rev()
            .find(|p| p.chain.next_seq <= seq)
            .copied()
            .unwrap_or(self.points[0])
    }
}

/// The seq of the session's snapshot, from its header alone (whether it checks out against
/// the journal is `load_paths`'s to say).
fn snapshot_seq(path: &std::path::Path) -> Option<u64> {
    use std::io::Read;
    let mut f = crate::journal::paths::open_file(path, false, false).ok()?;
    let mut b = [0u8; crate::snapshot::HEADER_LEN];
    f.read_exact(&mut b).ok()?;
    crate::snapshot::SnapshotHeader::decode(&b)
        .ok()
        .map(|h| h.seq)
}

/// The pages' shared caches.
pub struct Views {
    pub index: Arc<Index>,
    pub policy: Policy,
    pub writer: WriterOptions,
    sliders: Mutex<Vec<(String, Arc<Slider>)>>,
    seeks: Mutex<Vec<(String, Arc<Seeks>)>>,
    verified: Mutex<HashMap<String, (MtimeKey, Value)>>,
}

/// A file's device, inode, length and modification time: a cached answer about it holds
/// while these do (a file renamed over it is another inode).
type MtimeKey = (u64, u64, u64, i128);

fn mtime_key(p: &std::path::Path) -> MtimeKey {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p)
        .map(|m| {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128);
            (m.dev(), m.ino(), m.len(), t)
        })
        .unwrap_or((0, 0, 0, 0))
}

impl Views {
    pub fn new(index: Arc<Index>, policy: Policy, writer: WriterOptions) -> Views {
        Views {
            index,
            policy,
            writer,
            sliders: Mutex::new(Vec::new()),
            seeks: Mutex::new(Vec::new()),
            verified: Mutex::new(HashMap::new()),
        }
    }

    fn root(&self) -> &Root {
        self.index.root()
    }

    /// The Sessions page: every session (memory scope journals apart), and how far the first
    /// load got.
    pub fn sessions(&self) -> Answer {
        let (loaded, total, done) = self.index.progress();
        let all = self.index.summaries();
        Ok(json!({
            "root": text::line(&self.root().dir().to_string_lossy()),
            "indexing": {"loaded": loaded, "total": total, "done": done},
            "sessions": all,
        }))
    }

    fn reader(&self, key: &str) -> std::result::Result<JournalReader, Failed> {
        Ok(self.open(key)?.reader)
    }

    /// The journal of `key`, and which file it is: the path's file before and after the open
    /// must be the same one for the caches to keep anything about it.
    fn open(&self, key: &str) -> std::result::Result<Opened, Failed> {
        if self.index.summary(key).is_none() {
            return Err(not_found(key));
        }
        let paths = paths_of(self.root(), key);
        let before = file_id(&paths.journal);
        let reader = JournalReader::open(&paths.journal, deadline())?;
        let file = before.filter(|&b| file_id(&paths.journal) == Some(b));
        Ok(Opened { reader, file })
    }

    /// The Session page: the summary, the state (as the index last read it: the snapshot and
    /// the tail, never the whole journal), the files changed, failures and subagents from it,
    /// and the newest page of the timeline ([`Views::timeline`]). Older pages are asked for
    /// with `before`.
    pub fn session(&self, key: &str) -> Answer {
        let summary = self.index.summary(key).ok_or_else(|| not_found(key))?;
        let loaded = match self.index.state(key) {
            Ok(l) => l,
            Err(Error::NoSuchSession { .. }) => return Err(not_found(key)),
            Err(e) => {
                return Err(Failed(
                    500,
                    format!(
                        "the session's state could not be loaded: {}",
                        text::line(&e.to_string())
                    ),
                ))
            }
        };
        let state = loaded.state;
        let mut page = self.timeline(key, None)?;
        let files: Vec<Value> = state
            .files
            .by_path
            .iter()
            .filter(|(_, f)| f.changed())
            .map(|(p, f)| {
                json!({"path": text::line(p), "writes": f.writes, "edits": f.edits,
                       "added": f.added, "removed": f.removed, "created": f.created,
                       "last_seq": f.last_change_seq})
            })
            .collect();
        let failures: Vec<Value> = state
            .failures
            .items
            .iter()
            .map(|f| {
                json!({"tool": text::line(&f.tool), "detail": text::line(&f.detail),
                       "exit_code": f.exit_code, "count": f.count, "seq": f.seq,
                       "first_seq": f.first_seq,
                       "error": f.error_tail.iter().map(|l| text::line(l)).collect::<Vec<_>>(),
                       "resolved": f.resolved.as_ref().map(|r| r.seq)})
            })
            .collect();
        let subagents: Vec<Value> = state
            .subagents
            .by_id
            .iter()
            .map(|(id, a)| {
                json!({"id": text::line(id), "type": text::opt(a.agent_type.as_deref()),
                       "start_seq": a.start_seq, "stop_seq": a.stop_seq,
                       "tool_calls": a.tool_calls,
                       "description": text::opt(a.description.as_deref()),
                       "result": text::opt(a.result.as_deref())})
            })
            .collect();
        let o = page.as_object_mut().expect("a timeline page is an object");
        o.insert("summary".into(), json!(summary));
        o.insert("state_hash".into(), json!(state.state_hash().to_hex()));
        o.insert("snapshot".into(), json!(loaded.snapshot));
        o.insert("first_seq".into(), json!(u64::from(state.seq > 0)));
        o.insert("last_seq".into(), json!(state.seq));
        o.insert(
            "counts".into(),
            json!({"turns": state.turns.count, "tools": state.tools.calls,
                   "failed_tools": state.tools.failures,
                   "compactions": state.compactions.count, "records": state.records,
                   "injections": injections_of(&state), "marks": marks_of(&state)}),
        );
        o.insert("files".into(), json!(files));
        o.insert("failures".into(), json!(failures));
        o.insert("subagents".into(), json!(subagents));
        Ok(page)
    }

    /// One page of the timeline: the records before `before` (None: the newest), at most
    /// [`WINDOW`] of them, starting at a turn's prompt where one is near, so no turn or tool
    /// call is cut in two between pages. Turns, tool calls, compactions, marks, injections and
    /// the recovery blocks the agent got after a compaction, as `audit::timeline` derives them
    /// from those records alone; `window` says which records (`older`: there are more before).
    pub fn timeline(&self, key: &str, before: Option<u64>) -> Answer {
        let Opened { reader, file } = self.open(key)?;
        let seeks = self.seeks(key, &reader, file)?;
        let last = seeks.end.chain.next_seq - 1;
        let before = before.unwrap_or(last + 1).clamp(1, last + 1);
        let nominal = before.saturating_sub(WINDOW).max(1);
        let at = seeks.before(nominal);
        let mut recs: Vec<std::result::Result<Record<'_>, Stop>> = Vec::new();
        for r in reader
            .records_from(at.offset as usize, at.chain)
            .first_link_only()
        {
            match &r {
                Ok(rec) if rec.seq >= before => break,
                Ok(rec) if rec.seq < nominal => continue,
                _ => {}
            }
            recs.push(r);
        }
        // Start the page at the first prompt in it, unless it is the journal's first page or
        // one turn fills it.
        let start = if nominal > 1 {
            recs.iter()
                .position(|r| r.as_ref().is_ok_and(|r| r.kind == "UserPromptSubmit"))
                .unwrap_or(0)
        } else {
            0
        };
        let recs = &recs[start..];
        let from = match recs.first() {
            Some(Ok(r)) => r.seq,
            _ => before,
        };
        let first_ns = recs
            .iter()
            .find_map(|r| r.as_ref().ok().map(|r| r.ts_unix_ns));
        let t = timeline::of_records(recs.iter().cloned());
        // The full text of what was injected right after each compaction: the recovery block
        // as the agent got it.
        let mut wanted: BTreeMap<u64, u64> = BTreeMap::new();
        for c in &t.compactions {
            if let Some(i) = t.injections.iter().find(|i| i.seq > c.seq) {
                wanted.insert(i.seq, c.seq);
            }
        }
        let mut recovery = Vec::new();
        for rec in recs.iter().filter_map(|r| r.as_ref().ok()) {
            if rec.kind != KIND_INJECTED {
                continue;
            }
            let Ok(j) = decode_system::<Injected>(rec.seq, rec.payload) else {
                continue;
            };
            // The policy names the block it made; records older than the policy are matched
            // by place (the first injection after a compaction).
            let after = match j.mode.as_deref() {
                Some("recovery") => t
                    .compactions
                    .iter()
                    .rev()
                    .find(|c| c.seq < rec.seq)
                    .map(|c| c.seq),
                Some(_) => continue,
                None => match wanted.get(&rec.seq) {
                    Some(&c) => Some(c),
                    None => continue,
                },
            };
            recovery.push(json!({
                "compaction_seq": after,
                "seq": rec.seq,
                "event_seq": j.event_seq,
                "event": text::line(&j.event_kind),
                "ts": rec.ts_unix_ns,
                "chars": j.text.chars().count(),
                "truncated": j.truncated,
                "dropped": j.dropped.iter().map(|d| text::line(d)).collect::<Vec<_>>(),
                "text": text::block(&j.text),
            }));
        }
        drop(reader);
        let turns: Vec<Value> = t
            .turns
            .iter()
            .map(|u| {
                json!({"seq": u.seq, "start": u.start_ns, "end": u.end_ns,
                       "prompt": text::line(&u.prompt), "error": text::opt(u.error.as_deref())})
            })
            .collect();
        let tools: Vec<Value> = t
            .tools
            .iter()
            .map(|c| {
                json!({"seq": c.seq, "name": text::line(&c.name), "start": c.start_ns,
                       "end": c.end_ns, "ms": c.duration_ms, "failed": c.failed,
                       "error": text::opt(c.error.as_deref()), "agent": text::opt(c.agent.as_deref())})
            })
            .collect();
        let compactions: Vec<Value> = t
            .compactions
            .iter()
            .map(|c| {
                json!({"seq": c.seq, "start": c.start_ns, "end": c.end_ns,
                       "trigger": text::line(&c.trigger)})
            })
            .collect();
        let marks: Vec<Value> = t
            .marks
            .iter()
            .map(|m| {
                json!({"seq": m.seq, "ts": m.ts_ns, "kind": text::line(&m.kind),
                       "label": text::line(&m.label), "bad": m.bad})
            })
            .collect();
        let injections: Vec<Value> = t
            .injections
            .iter()
            .map(|i| {
                json!({"seq": i.seq, "ts": i.ts_ns, "event_seq": i.event_seq,
                       "event": text::opt(i.event.as_deref()), "bytes": i.bytes,
                       "truncated": i.truncated, "text": text::line(&i.text)})
            })
            .collect();
        Ok(json!({
            "window": {"from": from, "to": before - 1, "older": from > 1,
                       "first_ns": first_ns, "records": t.records},
            "problem": text::opt(t.problem.as_deref()),
            "kinds": t.kinds.iter().map(|(k, n)| (text::line(k), json!(n))).collect::<serde_json::Map<_, _>>(),
            "turns": turns,
            "tools": tools,
            "compactions": compactions,
            "marks": marks,
            "injections": injections,
            "recovery": recovery,
        }))
    }

    /// The records table: up to `limit` records from `from` on.
    pub fn records(&self, key: &str, from: u64, limit: usize) -> Answer {
        let Opened { reader, file } = self.open(key)?;
        let limit = limit.clamp(1, RECORDS_PAGE_MAX);
        let mut out = Vec::with_capacity(limit);
        let at = self.seeks(key, &reader, file)?.before(from);
        for rec in reader
            .records_from(at.offset as usize, at.chain)
            .map_while(|r| r.ok())
        {
            if rec.seq < from {
                continue;
            }
            out.push(brief(&rec));
            if out.len() == limit {
                break;
            }
        }
        Ok(json!({"records": out}))
    }

    /// Where records of `key` begin, every [`SEEK_EVERY`] records: walked once (frames and
    /// CRCs, no payload decoded, no fold), then only over what the journal gained since. The
    /// places hold for the file they were walked in (`file`) while it only grows: a journal
    /// replaced by another file (repair, erase, migrate), or shorter, is walked again.
    fn seeks(&self, key: &str, reader: &JournalReader, file: Option<FileId>) -> Result<Arc<Seeks>> {
        let len = reader.bytes().len() as u64;
        let cached = {
            let s = self.seeks.lock().unwrap_or_else(|p| p.into_inner());
            s.iter()
                .find(|(k, s)| k == key && file.is_some() && s.file == file)
                .map(|(_, s)| s.clone())
        };
        let mut s = match cached {
            Some(s) if s.len == len => return Ok(s),
            Some(s) if s.len < len => {
                let mut s = (*s).clone();
                if s.extend(reader) {
                    s
                } else {
                    // The records after what was walked do not link to it: the journal was
                    // rewritten in place. Walk it again.
                    let mut s = Seeks::start(reader, file)?;
                    s.extend(reader);
                    s
                }
            }
            _ => {
                let mut s = Seeks::start(reader, file)?;
                s.extend(reader);
                s
            }
        };
        s.len = len;
        let s = Arc::new(s);
        let mut all = self.seeks.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|(k, _)| k != key);
        all.push((key.to_owned(), s.clone()));
        while all.len() > SEEK_SESSIONS {
            all.remove(0);
        }
        Ok(s)
    }

    /// The slider's kept states of `key`: one fold of the whole journal, made the first time
    /// a step has no nearer start (no snapshot at or before it), kept while the journal only
    /// grows.
    fn slider(
        &self,
        key: &str,
        reader: &JournalReader,
        file: Option<FileId>,
    ) -> Result<Arc<Slider>> {
        let len = reader.bytes().len() as u64;
        if let Some(sl) = self.kept_slider(key, file, len) {
            return Ok(sl);
        }
        let (_, hlen, genesis) = reader.header().map_err(|e| Error::BadHeader {
            path: reader.path().to_owned(),
            reason: e.to_string(),
        })?;
        let last = self.index.summary(key).map_or(0, |s| s.seq);
        let every = (last / CHECKPOINTS_MAX).max(CHECKPOINT_EVERY_MIN);
        let mut state = State::new();
        let mut kept = vec![Kept {
            state: state.clone(),
            offset: hlen as u64,
            chain: Chain::genesis(genesis),
            from: "kept",
        }];
        for rec in reader.records()?.map_while(|r| r.ok()) {
            state.apply(&RecordView::from(&rec));
            if rec.seq % every == 0 {
                kept.push(Kept {
                    state: state.clone(),
                    offset: rec.offset + rec.len() as u64,
                    chain: Chain {
                        next_seq: rec.seq + 1,
                        prev_hash: rec.hash,
                    },
                    from: "kept",
                });
            }
        }
        let sl = Arc::new(Slider { file, len, kept });
        let mut s = self.sliders.lock().unwrap_or_else(|p| p.into_inner());
        s.retain(|(k, _)| k != key);
        s.push((key.to_owned(), sl.clone()));
        while s.len() > SLIDER_SESSIONS {
            s.remove(0);
        }
        Ok(sl)
    }

    /// The kept states of `key` if they were made for this journal file, shorter or as long
    /// (the records they start from are still there: appends only add after them; a journal
    /// replaced by another file is another inode, and one rewritten in place fails the first
    /// link the fold checks: the states are made again).
    fn kept_slider(&self, key: &str, file: Option<FileId>, len: u64) -> Option<Arc<Slider>> {
        let s = self.sliders.lock().unwrap_or_else(|p| p.into_inner());
        s.iter()
            .find(|(k, sl)| k == key && file.is_some() && sl.file == file && sl.len <= len)
            .map(|(_, sl)| sl.clone())
    }

    fn forget_slider(&self, key: &str) {
        let mut s = self.sliders.lock().unwrap_or_else(|p| p.into_inner());
        s.retain(|(k, _)| k != key);
    }

    /// The state just before record `seq` and where that record begins: from the nearest of
    /// the slider's kept states and the session's snapshot, else from the kept states made
    /// by one fold of the whole journal.
    fn start_at(
        &self,
        key: &str,
        reader: &JournalReader,
        file: Option<FileId>,
        seq: u64,
    ) -> Result<Kept> {
        let len = reader.bytes().len() as u64;
        let kept = self
            .kept_slider(key, file, len)
            .and_then(|sl| sl.kept.iter().rev().find(|k| k.state.seq < seq).cloned());
        let near = kept.as_ref().map_or(0, |k| k.state.seq);
        let paths = paths_of(self.root(), key);
        if snapshot_seq(&paths.snapshot).is_some_and(|s| s < seq && s > near) {
            let opts = LoadOptions {
                at: Some(seq - 1),
                use_snapshot: true,
                deadline: deadline(),
            };
            let (state, info) = crate::snapshot::load_paths(&paths, &opts)?;
            if let (crate::snapshot::SnapshotUse::Used { .. }, Some(h)) =
                (&info.snapshot, info.head)
            {
                if state.seq == h.seq && h.seq + 1 == seq {
                    return Ok(Kept {
                        state,
                        offset: h.end_offset,
                        chain: Chain {
                            next_seq: h.seq + 1,
                            prev_hash: h.hash,
                        },
                        from: "snapshot",
                    });
                }
            }
        }
        if let Some(k) = kept {
            return Ok(k);
        }
        let sl = self.slider(key, reader, file)?;
        sl.kept
            .iter()
            .rev()
            .find(|k| k.state.seq < seq)
            .cloned()
            .ok_or_else(|| Error::InvalidInput {
                reason: "seq 0 is the header: pick a record".into(),
            })
    }

    /// The replay slider at `seq`: the record, the state after it, what it changed, and the
    /// injection of its event as journaled and as re-derived from the journal.
    pub fn at(&self, key: &str, seq: u64) -> Answer {
        if seq == 0 {
            return Err(Failed(400, "seq 0 is the header: pick a record".into()));
        }
        let Opened { reader, file } = self.open(key)?;
        let mut kept = self.start_at(key, &reader, file, seq)?;
        if reader
            .records_from(kept.offset as usize, kept.chain)
            .next()
            .is_some_and(|r| r.is_err())
        {
            // The kept state does not link to the journal as it is now (replaced).
            self.forget_slider(key);
            kept = self.start_at(key, &reader, file, seq)?;
        }
        // The state after `seq`, and the record itself.
        let mut state = kept.state.clone();
        let mut record = None;
        let mut event_seq = None;
        for rec in reader
            .records_from(kept.offset as usize, kept.chain)
            .map_while(|r| r.ok())
        {
            if rec.seq > seq {
                break;
            }
            state.apply(&RecordView::from(&rec));
            if rec.seq == seq {
                event_seq = event_of(&rec);
                record = Some(json!({
                    "seq": rec.seq, "ts": rec.ts_unix_ns, "kind": text::line(rec.kind),
                    "hash": rec.hash.to_hex(), "offset": rec.offset,
                    "payload": crate::format::payload::to_json(rec.seq, rec.kind, rec.payload)
                        .ok()
                        .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
                        .map(text::value),
                }));
            }
        }
        let Some(record) = record else {
            return Err(Failed(
                404,
                format!("no record {seq} in this journal (it has {})", state.seq),
            ));
        };
        // The same replay `sjournal replay` runs, from the kept state: the step's changes,
        // and the injection check where the event's batch ends.
        let mut fold = SessionFold {
            state: kept.state.clone(),
            policy: self.policy.clone(),
        };
        let mut steps: Vec<Step> = Vec::new();
        let range = Range {
            from: seq,
            to: Some(seq + BATCH_MAX),
        };
        replay_records(
            reader.records_from(kept.offset as usize, kept.chain),
            &mut fold,
            range,
            |s| {
                steps.push(s);
                Ok(())
            },
        )?;
        drop(reader);
        let step = steps.iter().find(|s| s.seq == seq);
        let injection = event_seq.and_then(|ev| {
            steps
                .iter()
                .filter_map(|s| s.injection.as_ref())
                .find(|c| c.event_seq == ev)
        });
        let quiet = crate::replay::Fold::bookkeeping(&fold);
        let changes: Vec<Value> = step
            .map(|s| {
                s.changes
                    .iter()
                    .map(|c| {
                        json!({"path": text::line(&c.path), "op": c.op,
                               "before": c.old.clone().map(text::value),
                               "after": c.new.clone().map(text::value),
                               "bookkeeping": quiet.contains(&c.path.as_str())})
                    })
                    .collect()
            })
            .unwrap_or_default();
        let injection = injection.map(|c| {
            json!({
                "event_seq": c.event_seq,
                "status": c.status,
                "journaled": c.journaled.as_deref().map(text::block),
                "journaled_blake3": c.journaled_blake3,
                "render_version": c.render_version,
                "derived": c.derived.as_deref().map(text::block),
                "derived_blake3": c.derived_blake3,
            })
        });
        let state_json = serde_json::to_value(&state)
            .map(text::value)
            .unwrap_or(Value::Null);
        Ok(json!({
            "record": record,
            "state_hash": state.state_hash().to_hex(),
            "step_state_hash": step.map(|s| s.state_hash.clone()),
            "event_seq": event_seq,
            "changes": changes,
            "injection": injection,
            "state": state_json,
            "last_seq": self.index.summary(key).map_or(0, |s| s.seq),
            "start": {"from": kept.from, "seq": kept.state.seq},
        }))
    }

    /// The Memory page: every scope journal's items, pending ones first (the most confident
    /// first), each with its provenance linked to the session and seq it came from.
    pub fn memory(&self) -> Answer {
        let mut scopes = Vec::new();
        let mut ids: Vec<(String, String)> = Vec::new();
        for s in self.index.summaries().into_iter().filter(|s| s.scope) {
            ids.push((s.key, s.id));
        }
        for (key, _) in &ids {
            let paths = paths_of(self.root(), key);
            let reader = match JournalReader::open(&paths.journal, deadline()) {
                Ok(r) => r,
                Err(_) => continue,
            };
            let Ok((header, _, _)) = reader.header() else {
                continue;
            };
            drop(reader);
            let Some(scope) = Scope::of_journal_id(&header.session_id) else {
                continue;
            };
            let st = ops::load(self.root(), &scope, &LoadOptions::latest())?;
            let mut items: Vec<&Item> = st.memory.items.values().collect();
            let rank = |i: &Item| match i.status.as_str() {
                "proposed" | "stale" => 0,
                "accepted" => 1,
                _ => 2,
            };
            items.sort_by(|a, b| {
                rank(a)
                    .cmp(&rank(b))
                    .then(b.sessions().cmp(&a.sessions()))
                    .then(a.proposed_seq.cmp(&b.proposed_seq))
                    .then(a.id.cmp(&b.id))
            });
            scopes.push(json!({
                "journal": text::line(&header.session_id),
                "key": key,
                "name": scope.name(),
                "project": match &scope { Scope::Project(p) => Some(text::line(p)), Scope::Global => None },
                "pending": st.memory.pending(),
                "items": items.iter().map(|i| self.item(i)).collect::<Vec<_>>(),
            }));
        }
        Ok(json!({"scopes": scopes}))
    }

    fn item(&self, i: &Item) -> Value {
        let provenance: Vec<Value> = i
            .provenance
            .iter()
            .map(|p| {
                let key = p
                    .session
                    .as_deref()
                    .and_then(|s| crate::journal::paths::file_stem(s).ok())
                    .filter(|k| self.index.summary(k).is_some());
                json!({"session": text::opt(p.session.as_deref()), "key": key, "seq": p.seq,
                       "quote": p.quote.as_deref().map(text::block)})
            })
            .collect();
        json!({
            "id": text::line(&i.id), "status": text::line(&i.status),
            "source": text::line(&i.source), "text": text::block(&i.text),
            "original": i.original.as_deref().map(text::block),
            "reason": text::opt(i.reason.as_deref()),
            "sessions": i.sessions(), "provenance": provenance,
        })
    }

    /// A review decision from the Memory page: the op `sjournal memory accept|reject|edit|
    /// forget` writes, checked and written the same way (`memory::ops::apply`).
    pub fn memory_op(&self, req: &MemoryRequest) -> Answer {
        let scope = Scope::of_journal_id(&req.journal)
            .ok_or_else(|| Failed(400, "not a memory scope journal".into()))?;
        let exists = self
            .index
            .summaries()
            .iter()
            .any(|s| s.scope && s.id == text::line(&req.journal));
        if !exists {
            return Err(Failed(404, "no such memory scope under this root".into()));
        }
        if !matches!(req.op.as_str(), "accept" | "reject" | "edit" | "forget") {
            return Err(Failed(
                400,
                "op must be accept, reject, edit or forget".into(),
            ));
        }
        let st = ops::load(self.root(), &scope, &LoadOptions::latest())?;
        if !st.memory.items.contains_key(&req.id) {
            return Err(Failed(
                404,
                format!("no memory item {}", text::line(&req.id)),
            ));
        }
        let text_arg = match (req.op.as_str(), req.text.as_deref().map(str::trim)) {
            ("edit", Some(t))
                if !t.is_empty() && t.len() <= crate::limits::MEMORY_TEXT_MAX_BYTES =>
            {
                Some(t)
            }
            ("edit", _) => {
                return Err(Failed(
                    400,
                    format!(
                        "the new text must say something and hold at most {} bytes",
                        crate::limits::MEMORY_TEXT_MAX_BYTES
                    ),
                ))
            }
            _ => None,
        };
        let reason = req
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty());
        let op = ops::on_item(&req.op, &req.id, text_arg, reason);
        let a = ops::apply(self.root(), &scope, std::slice::from_ref(&op), &self.writer)?;
        if let Some(Err(why)) = a.results.first() {
            return Err(Failed(409, format!("refused: {}", text::line(why))));
        }
        let kept_aside = a
            .landed
            .as_ref()
            .is_some_and(|l| !matches!(l, crate::session::Landed::Journal { .. }));
        let status = a
            .state
            .memory
            .items
            .get(&req.id)
            .map(|i| text::line(&i.status));
        Ok(
            json!({"id": text::line(&req.id), "status": status, "written": a.landed.is_some(),
                  "kept_aside": kept_aside}),
        )
    }

    /// The Verify page: each journal's verify report (cached while the file is unchanged),
    /// its witnesses, and the checkpoint it would pin now.
    pub fn verify(&self) -> Answer {
        let mut out = Vec::new();
        let opts = VerifyOptions {
            workers: 1,
            ..VerifyOptions::default()
        };
        for s in self.index.summaries() {
            let path = paths_of(self.root(), &s.key).journal;
            let mk = mtime_key(&path);
            let cached = {
                let v = self.verified.lock().unwrap_or_else(|p| p.into_inner());
                v.get(&s.key)
                    .filter(|(k, _)| *k == mk)
                    .map(|(_, v)| v.clone())
            };
            let report = match cached {
                Some(v) => v,
                None => {
                    let r = crate::journal::verify_file_with(&path, deadline(), opts)
                        .unwrap_or_else(|e| crate::journal::VerifyReport::unreadable(&path, &e));
                    let v = json!({
                        "key": s.key, "id": s.id, "scope": s.scope,
                        "ok": r.ok, "records": r.records, "bytes": r.bytes,
                        "last_seq": r.last_seq, "head": r.head,
                        "problem": r.problem.as_ref().map(|f| json!({
                            "offset": f.offset, "seq": f.seq, "what": text::line(&f.what),
                            "torn_tail": f.torn_tail})),
                        "acknowledged": r.acknowledged.map(|a| a.seq),
                        "rolled_back": r.rolled_back,
                        "witnesses": serde_json::to_value(&r.witnesses).map(text::value).unwrap_or(Value::Null),
                        "summary": text::line(&r.summary()),
                    });
                    self.verified
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(s.key.clone(), (mk, v.clone()));
                    v
                }
            };
            out.push(report);
        }
        let bad = out.iter().filter(|r| r["ok"] != json!(true)).count();
        Ok(json!({"journals": out, "bad": bad}))
    }

    /// Checks a checkpoint a person pasted (and a verifier key, if given) against a session's
    /// journal, as `sjournal verify --checkpoint FILE [--pubkey KEY]` does.
    pub fn checkpoint(&self, req: &CheckpointRequest) -> Answer {
        use crate::audit::checkpoint::{parse, verifier, CheckpointReport};
        let reader = self.reader(&req.key)?;
        let parsed = parse(&req.checkpoint).map_err(|e| {
            Failed(
                400,
                format!(
                    "the checkpoint does not parse: {}",
                    text::line(&e.to_string())
                ),
            )
        })?;
        let key = match req
            .pubkey
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            None => None,
            Some(k) => Some(verifier(k).map_err(|e| {
                Failed(
                    400,
                    format!("the key does not parse: {}", text::line(&e.to_string())),
                )
            })?),
        };
        let r = CheckpointReport::check(std::path::Path::new("(pasted)"), &reader, &parsed, key)?;
        Ok(
            json!({"ok": r.ok, "summary": text::line(&r.summary()), "size": r.size,
                  "signature": r.signature, "signed": r.signed}),
        )
    }
}

/// A review decision (the Memory page's POST).
#[derive(Debug, serde::Deserialize)]
pub struct MemoryRequest {
    /// The scope journal's id (`scope:project:<dir>` or `scope:global`).
    pub journal: String,
    pub op: String,
    pub id: String,
    pub text: Option<String>,
    pub reason: Option<String>,
}

/// A pasted checkpoint (the Verify page's POST).
#[derive(Debug, serde::Deserialize)]
pub struct CheckpointRequest {
    pub key: String,
    pub checkpoint: String,
    pub pubkey: Option<String>,
}

/// The context injections of the whole session (`sjournal.injected` records), from the state's
/// tally: the Session page's count, whichever page of the timeline it shows.
fn injections_of(st: &State) -> u64 {
    st.counts.by_kind.get(KIND_INJECTED).unwrap_or(0)
}

/// The marks `audit::timeline` makes of the whole session, from the state's tally: session
/// starts and ends, subagent starts and stops, failed turns, and every system record but the
/// injections.
fn marks_of(st: &State) -> u64 {
    let events: u64 = [
        "SessionStart",
        "SessionEnd",
        "SubagentStart",
        "SubagentStop",
        "StopFailure",
    ]
    .iter()
    .filter_map(|k| st.counts.by_kind.get(k))
    .sum();
    events + st.counts.system.saturating_sub(injections_of(st))
}

/// The event a record belongs to: itself, or for a batch record (exec output, extras,
/// injected text) the event it answers.
fn event_of(rec: &Record<'_>) -> Option<u64> {
    if !is_system_kind(rec.kind) {
        return Some(rec.seq);
    }
    match rec.kind {
        KIND_INJECTED => decode_system::<Injected>(rec.seq, rec.payload)
            .ok()
            .map(|i| i.event_seq),
        KIND_EXEC => decode_system::<Exec>(rec.seq, rec.payload)
            .ok()
            .map(|e| e.event_seq),
        KIND_EXTRAS => decode_system::<ExtrasRecord>(rec.seq, rec.payload)
            .ok()
            .map(|x| x.event_seq),
        _ => None,
    }
}
