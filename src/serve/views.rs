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
use crate::journal::scan::Chain;
use crate::journal::{JournalReader, Record, Root, VerifyOptions, WriterOptions};
use crate::memory::{ops, Item, Scope};
use crate::replay::session::SessionFold;
use crate::replay::{replay_records, Range, Step};
use crate::snapshot::LoadOptions;

/// Rows of each timeline table sent with the session page (the newest); the rest are counted.
const ROWS_MAX: usize = 400;
/// Records per page of the records table.
pub const RECORDS_PAGE_MAX: usize = 500;
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
struct Kept {
    state: State,
    offset: u64,
    chain: Chain,
}

/// Slider states of one journal as it was (its length when they were made).
struct Slider {
    len: u64,
    kept: Vec<Kept>,
}

/// The pages' shared caches.
pub struct Views {
    pub index: Arc<Index>,
    pub policy: Policy,
    pub writer: WriterOptions,
    sliders: Mutex<Vec<(String, Arc<Slider>)>>,
    verified: Mutex<HashMap<String, (MtimeKey, Value)>>,
}

/// A file's length and modification time: a cached answer about it holds while these do.
type MtimeKey = (u64, i128);

fn mtime_key(p: &std::path::Path) -> MtimeKey {
    std::fs::metadata(p)
        .map(|m| {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128);
            (m.len(), t)
        })
        .unwrap_or((0, 0))
}

impl Views {
    pub fn new(index: Arc<Index>, policy: Policy, writer: WriterOptions) -> Views {
        Views {
            index,
            policy,
            writer,
            sliders: Mutex::new(Vec::new()),
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
        if self.index.summary(key).is_none() {
            return Err(not_found(key));
        }
        let paths = paths_of(self.root(), key);
        Ok(JournalReader::open(&paths.journal, deadline())?)
    }

    /// The Session page: summary, state, timeline tables (the newest rows), the recovery
    /// blocks the agent got after each compaction, files changed, failures, subagents.
    pub fn session(&self, key: &str) -> Answer {
        let summary = self.index.summary(key).ok_or_else(|| not_found(key))?;
        let paths = paths_of(self.root(), key);
        let reader = self.reader(key)?;
        let t = timeline::build(&reader)?;
        let (state, info) = crate::snapshot::load_paths(
            &paths,
            &LoadOptions {
                deadline: deadline(),
                ..LoadOptions::latest()
            },
        )?;
        // The full text of what was injected right after each compaction: the recovery block
        // as the agent got it.
        let mut wanted: BTreeMap<u64, u64> = BTreeMap::new();
        for c in &t.compactions {
            if let Some(i) = t.injections.iter().find(|i| i.seq > c.seq) {
                wanted.insert(i.seq, c.seq);
            }
        }
        let mut recovery = Vec::new();
        if !t.injections.is_empty() {
            for rec in reader.records()?.map_while(|r| r.ok()) {
                if rec.kind != KIND_INJECTED {
                    continue;
                }
                let Ok(j) = decode_system::<Injected>(rec.seq, rec.payload) else {
                    continue;
                };
                // The policy names the block it made; records older than the policy are
                // matched by place (the first injection after a compaction).
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
                if recovery.len() == ROWS_MAX {
                    recovery.remove(0);
                }
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
        }
        drop(reader);
        let newest = |n: usize| n.saturating_sub(ROWS_MAX);
        let turns: Vec<Value> = t.turns[newest(t.turns.len())..]
            .iter()
            .map(|u| {
                json!({"seq": u.seq, "start": u.start_ns, "end": u.end_ns,
                       "prompt": text::line(&u.prompt), "error": text::opt(u.error.as_deref())})
            })
            .collect();
        let tools: Vec<Value> = t.tools[newest(t.tools.len())..]
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
        let marks: Vec<Value> = t.marks[newest(t.marks.len())..]
            .iter()
            .map(|m| {
                json!({"seq": m.seq, "ts": m.ts_ns, "kind": text::line(&m.kind),
                       "label": text::line(&m.label), "bad": m.bad})
            })
            .collect();
        let injections: Vec<Value> = t.injections[newest(t.injections.len())..]
            .iter()
            .map(|i| {
                json!({"seq": i.seq, "ts": i.ts_ns, "event_seq": i.event_seq,
                       "event": text::opt(i.event.as_deref()), "bytes": i.bytes,
                       "truncated": i.truncated, "text": text::line(&i.text)})
            })
            .collect();
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
        Ok(json!({
            "summary": summary,
            "state_hash": state.state_hash().to_hex(),
            "snapshot": info.snapshot.name(),
            "problem": text::opt(t.problem.as_deref()),
            "first_seq": if t.records > 0 { 1 } else { 0 },
            "last_seq": state.seq,
            "counts": {
                "turns": t.turns.len(), "tools": t.tools.len(),
                "failed_tools": t.tools.iter().filter(|c| c.failed).count(),
                "compactions": t.compactions.len(), "injections": t.injections.len(),
                "marks": t.marks.len(), "records": t.records,
            },
            "kinds": t.kinds.iter().map(|(k, n)| (text::line(k), json!(n))).collect::<serde_json::Map<_, _>>(),
            "turns": turns,
            "tools": tools,
            "compactions": compactions,
            "marks": marks,
            "injections": injections,
            "recovery": recovery,
            "files": files,
            "failures": failures,
            "subagents": subagents,
        }))
    }

    /// The records table: up to `limit` records from `from` on.
    pub fn records(&self, key: &str, from: u64, limit: usize) -> Answer {
        let reader = self.reader(key)?;
        let limit = limit.clamp(1, RECORDS_PAGE_MAX);
        let mut out = Vec::with_capacity(limit);
        let start = self.slider(key, &reader).ok().and_then(|s| {
            s.kept
                .iter()
                .rev()
                .find(|k| k.state.seq < from)
                .map(|k| (k.offset, k.chain))
        });
        let records = match start {
            Some((offset, chain)) => reader.records_from(offset as usize, chain),
            None => reader.records()?,
        };
        for rec in records.map_while(|r| r.ok()) {
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

    /// The slider's kept states of `key`, made on the first step asked of the journal as it
    /// is now (one fold of the whole journal).
    fn slider(&self, key: &str, reader: &JournalReader) -> Result<Arc<Slider>> {
        let len = reader.bytes().len() as u64;
        {
            let s = self.sliders.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, sl)) = s.iter().find(|(k, sl)| k == key && sl.len == len) {
                return Ok(sl.clone());
            }
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
                });
            }
        }
        let sl = Arc::new(Slider { len, kept });
        let mut s = self.sliders.lock().unwrap_or_else(|p| p.into_inner());
        s.retain(|(k, _)| k != key);
        s.push((key.to_owned(), sl.clone()));
        while s.len() > SLIDER_SESSIONS {
            s.remove(0);
        }
        Ok(sl)
    }

    /// The replay slider at `seq`: the record, the state after it, what it changed, and the
    /// injection of its event as journaled and as re-derived from the journal.
    pub fn at(&self, key: &str, seq: u64) -> Answer {
        let reader = self.reader(key)?;
        let slider = self.slider(key, &reader)?;
        let Some(kept) = slider.kept.iter().rev().find(|k| k.state.seq < seq) else {
            return Err(Failed(400, "seq 0 is the header: pick a record".into()));
        };
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
