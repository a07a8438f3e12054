//! Running a query: catch up, build the tantivy query, search the index and the records read
//! now (pending spool records, reviewed memory), merge, cite.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use tantivy::query::{
    AllQuery, BooleanQuery, ConstScoreQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery,
    TermSetQuery,
};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use crate::error::{Error, Result};
use crate::journal::{JournalReader, Root, WriterOptions};
use crate::memory;

use super::doc::{self, DocKind, Status};
use super::index::{self, ix_err, Fields, Meta, Place};
use super::query::{self, Clause, Parsed};
use super::snippet::{self, Snippet};
use super::update::Updated;

/// The most hits one search returns.
pub const LIMIT_MAX: usize = 200;
/// Hits when none is asked for.
pub const LIMIT_DEFAULT: usize = 20;
/// A snippet's width in bytes (about as many characters).
const SNIPPET_WIDTH: usize = 180;

/// Whose sessions a search covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The sessions of this project (its canonical directory), and its and the global
    /// reviewed memory.
    Project(String),
    /// Every session under the root, and every scope's reviewed memory.
    All,
}

/// A search.
#[derive(Debug, Clone)]
pub struct Request {
    pub query: String,
    pub scope: Scope,
    /// Only this session (within the scope).
    pub session: Option<String>,
    /// Only these kinds (empty: every kind but `call`).
    pub kinds: Vec<DocKind>,
    /// Only records at or after / before this time (Unix ns).
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub limit: usize,
}

/// How a search runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Do not catch up first (the index as it is; pending records are still read).
    pub no_update: bool,
    /// Wait for the index's lock until then.
    pub deadline: Option<Instant>,
    /// Where pending records are read from (the fallback spool's place).
    pub writer: WriterOptions,
}

/// One hit: the record it came from, why it matched, and how to check it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub session: String,
    /// The record's seq (None: pending, not in the journal yet).
    pub seq: Option<u64>,
    /// The record's hash (hex), which `sjournal verify` checks (None: pending).
    pub hash: Option<String>,
    pub ts_unix_ns: i64,
    pub kind: DocKind,
    /// The record's kind as journaled (the host's event name, or `sjournal.*`).
    pub record_kind: String,
    pub status: Status,
    /// `rescue` for a record of the session's rescue journal, else `journal` (None: pending).
    pub journal: Option<&'static str>,
    pub tool: Option<String>,
    pub files: Vec<String>,
    pub failed: bool,
    /// BM25, rounded to 4 decimals (0 for a query of filters only).
    pub score: f64,
    pub snippet: String,
    /// Byte ranges of the query's words in `snippet`.
    pub highlights: Vec<(usize, usize)>,
    /// The pending record's spool file.
    pub spool_file: Option<String>,
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct Found {
    pub hits: Vec<Hit>,
    /// What the catch-up before it did (None: no catch-up).
    pub updated: Option<Updated>,
    /// The catch-up failed: the index was searched as it was, and why.
    pub stale: Option<String>,
    /// The sessions the scope covered (a project's), for the caller's report.
    pub sessions: Option<usize>,
}

type Key = (u64, Reverse<u64>, Reverse<u64>);

/// Searches `root` (see the module docs).
pub fn search(root: &Root, req: &Request, opts: &Options) -> Result<Found> {
    search_cached(root, req, opts, &mut None)
}

/// `search`, with the index taken from `cache` while it is still the one on disk and left
/// there opened (what a long-lived process keeps between searches).
pub fn search_cached(
    root: &Root,
    req: &Request,
    opts: &Options,
    cache: &mut index::Cache,
) -> Result<Found> {
    let parsed = query::parse(&req.query)?;
    let limit = req.limit.clamp(1, LIMIT_MAX);
    let place = Place::of(root);
    let mut updated = None;
    let mut stale = None;
    let lock = if opts.no_update {
        None
    } else {
        match place
            .ensure(root)
            .and_then(|()| index::Lock::exclusive(&place, opts.deadline))
        {
            Ok(l) => match super::update::catch_up_cached(root, &place, cache) {
                Ok(u) => {
                    updated = Some(u);
                    l.downgrade()?;
                    Some(l)
                }
                Err(e) => {
                    stale = Some(e.to_string());
                    l.downgrade()?;
                    Some(l)
                }
            },
            Err(e) => {
                stale = Some(e.to_string());
                None
            }
        }
    };
    let _lock = match lock {
        Some(l) => l,
        None => {
            if !place.exists() {
                return Err(Error::Search {
                    reason: format!(
                        "there is no search index under {} and it could not be built{}",
                        place.dir.display(),
                        stale
                            .as_deref()
                            .map(|s| format!(": {s}"))
                            .unwrap_or_default()
                    ),
                });
            }
            index::Lock::shared(&place, opts.deadline)?
        }
    };
    let opened = match index::Opened::get(cache, &place.index(), false) {
        Ok(o) => o,
        Err(e) => {
            *cache = None;
            return Err(e);
        }
    };
    let searcher = opened.searcher()?;
    let no_meta = Meta::new();
    let meta = opened.meta.as_ref().unwrap_or(&no_meta);
    let (_, f) = index::schema();

    let projects = meta.projects();
    let sessions: Option<Vec<String>> = match &req.scope {
        Scope::All => None,
        Scope::Project(p) => Some(meta.sessions_of(p)),
    };
    let q = build(&parsed, req, sessions.as_deref(), &f);
    // On the index, whose documents all come from the journals the meta lists, a scope can be
    // the sessions left out instead, when they are fewer (none: no filter at all). A filter
    // of many terms costs its documents' postings on every query (a bit set over them): the
    // project's sessions are often nearly every document, the others few.
    let turned = sessions.as_deref().and_then(|list| {
        let keep = scope_terms(list, req);
        let drop: Vec<String> = meta
            .sessions_and_scopes()
            .into_iter()
            .filter(|s| !keep.contains(s))
            .collect();
        (drop.len() < keep.len()).then(|| build_main(&parsed, req, &drop, &f))
    });
    let q_main = turned.as_deref().unwrap_or(&*q);

    // The index.
    let mut found: Vec<(Key, Source)> =
        collect(&searcher, q_main, None, limit, parsed.only_filters())?
            .into_iter()
            .map(|(k, a)| (k, Source::Main(a)))
            .collect();

    // Pending records and reviewed memory: indexed now, scored with the index's statistics.
    let extra = transient(root, req, meta, &projects, opts)?;
    let mut extra_docs = Vec::new();
    if !extra.is_empty() {
        let (schema, _) = index::schema();
        let ram = tantivy::Index::create_in_ram(schema);
        {
            let mut w: tantivy::IndexWriter =
                ram.writer_with_num_threads(1, 15_000_000).map_err(ix_err)?;
            for d in &extra {
                w.add_document(d.clone()).map_err(ix_err)?;
            }
            w.commit().map_err(ix_err)?;
        }
        let rr = ram
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()
            .map_err(ix_err)?;
        let rs: Searcher = rr.searcher();
        for (k, a) in collect(&rs, &*q, Some(&searcher), limit, parsed.only_filters())? {
            let d: TantivyDocument = rs.doc(a).map_err(ix_err)?;
            found.push((k, Source::Extra(extra_docs.len())));
            extra_docs.push(d);
        }
    }
    found.sort_by_key(|x| Reverse(x.0));
    found.truncate(limit);

    let words = parsed.words();
    let mut hits = Vec::with_capacity(found.len());
    for (key, src) in found {
        let d: TantivyDocument = match src {
            Source::Main(a) => searcher.doc(a).map_err(ix_err)?,
            Source::Extra(i) => extra_docs[i].clone(),
        };
        hits.push(hit(&d, &f, &words, key, parsed.only_filters()));
    }
    Ok(Found {
        hits,
        updated,
        stale,
        sessions: sessions.map(|s| s.len()),
    })
}

enum Source {
    Main(DocAddress),
    Extra(usize),
}

/// The session ids a project scope keeps: its sessions, and its and the global memory (cited by
/// their scope journals' ids).
fn scope_terms(list: &[String], req: &Request) -> std::collections::BTreeSet<String> {
    let mut keep: std::collections::BTreeSet<String> = list.iter().cloned().collect();
    if let Scope::Project(p) = &req.scope {
        for scope in [memory::Scope::Project(p.clone()), memory::Scope::Global] {
            keep.insert(scope.journal_id());
        }
    }
    keep
}

/// The query on the index for a project scope given as the sessions it leaves out (`build`
/// with the scope's filter turned around).
fn build_main(p: &Parsed, req: &Request, drop: &[String], f: &Fields) -> Box<dyn Query> {
    let all = Request {
        scope: Scope::All,
        ..req.clone()
    };
    let q = build(p, &all, None, f);
    if drop.is_empty() {
        return q;
    }
    let terms = drop.iter().map(|s| Term::from_field_text(f.session, s));
    Box::new(BooleanQuery::new(vec![
        (Occur::Must, q),
        (Occur::MustNot, any_of(terms.collect())),
    ]))
}

/// The query: the clauses (scored), the filters (not scored).
fn build(p: &Parsed, req: &Request, sessions: Option<&[String]>, f: &Fields) -> Box<dyn Query> {
    let mut subs: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    let mut scored = false;
    for c in &p.must {
        let (q, is_scored) = clause(c, f);
        scored |= is_scored;
        subs.push((Occur::Must, q));
    }
    for c in &p.must_not {
        subs.push((Occur::MustNot, clause(c, f).0));
    }
    if !scored {
        subs.push((Occur::Must, Box::new(AllQuery)));
    }
    let filter = |q: Box<dyn Query>| -> (Occur, Box<dyn Query>) {
        (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
    };
    let kinds = if req.kinds.is_empty() {
        DocKind::default_set()
    } else {
        req.kinds.clone()
    };
    // Every document has one kind: the kinds left out when they are fewer (by default only
    // `call`), as the scope above.
    let left_out: Vec<DocKind> = DocKind::ALL
        .into_iter()
        .filter(|k| !kinds.contains(k))
        .collect();
    if !left_out.is_empty() && left_out.len() < kinds.len() {
        let terms = left_out
            .iter()
            .map(|k| Term::from_field_text(f.kind, k.as_str()));
        subs.push((Occur::MustNot, any_of(terms.collect())));
    } else if kinds.len() < DocKind::ALL.len() {
        let terms = kinds
            .iter()
            .map(|k| Term::from_field_text(f.kind, k.as_str()));
        subs.push(filter(any_of(terms.collect())));
    }
    if let Some(s) = &req.session {
        subs.push(filter(Box::new(TermQuery::new(
            Term::from_field_text(f.session, s),
            IndexRecordOption::Basic,
        ))));
    }
    if let Some(list) = sessions {
        // The project's sessions, and its memory (cited by its scope journal's id).
        let mut terms: Vec<Term> = list
            .iter()
            .map(|s| Term::from_field_text(f.session, s))
            .collect();
        if let Scope::Project(p) = &req.scope {
            for scope in [memory::Scope::Project(p.clone()), memory::Scope::Global] {
                terms.push(Term::from_field_text(f.session, &scope.journal_id()));
            }
        }
        subs.push(filter(any_of(terms)));
    }
    if req.since.is_some() || req.until.is_some() {
        let lo = req.since.map_or(Bound::Unbounded, |t| {
            Bound::Included(Term::from_field_i64(f.ts, t))
        });
        let hi = req.until.map_or(Bound::Unbounded, |t| {
            Bound::Excluded(Term::from_field_i64(f.ts, t))
        });
        subs.push(filter(Box::new(RangeQuery::new(lo, hi))));
    }
    Box::new(BooleanQuery::new(subs))
}

/// The documents with any of `terms` (of one field), unscored (a filter, or what a filter
/// leaves out). A `TermSetQuery` builds an automaton of its terms at every search (an FST
/// builder's buffers: most of a rare word's query time), which only pays for itself when
/// the terms are many; a few are a union of term queries.
fn any_of(terms: Vec<Term>) -> Box<dyn Query> {
    const FEW: usize = 8;
    let one = |t: Term| -> Box<dyn Query> { Box::new(TermQuery::new(t, IndexRecordOption::Basic)) };
    match terms.len() {
        1 => one(terms.into_iter().next().expect("one term")),
        2..=FEW => Box::new(BooleanQuery::new(
            terms.into_iter().map(|t| (Occur::Should, one(t))).collect(),
        )),
        _ => Box::new(TermSetQuery::new(terms)),
    }
}

/// One clause as a query, and whether it scores (text does; fields only filter).
fn clause(c: &Clause, f: &Fields) -> (Box<dyn Query>, bool) {
    let text_in = |field, words: &[String]| -> Box<dyn Query> {
        if words.len() == 1 {
            Box::new(TermQuery::new(
                Term::from_field_text(field, &words[0]),
                IndexRecordOption::WithFreqs,
            ))
        } else {
            Box::new(PhraseQuery::new(
                words
                    .iter()
                    .map(|w| Term::from_field_text(field, w))
                    .collect(),
            ))
        }
    };
    let exact = |field, v: &str| -> Box<dyn Query> {
        Box::new(ConstScoreQuery::new(
            Box::new(TermQuery::new(
                Term::from_field_text(field, v),
                IndexRecordOption::Basic,
            )),
            0.0,
        ))
    };
    match c {
        Clause::Text(w) => (
            Box::new(BooleanQuery::new(vec![
                (Occur::Should, text_in(f.body, w)),
                (Occur::Should, text_in(f.file, w)),
            ])),
            true,
        ),
        Clause::File(w) => (text_in(f.file, w), true),
        Clause::Tool(t) => (exact(f.tool, t), false),
        Clause::Failed(b) => (exact(f.failed, if *b { "yes" } else { "no" }), false),
        Clause::Kind(k) => (exact(f.kind, k.as_str()), false),
        Clause::Status(s) => (exact(f.status, s.as_str()), false),
        Clause::Session(s) => (exact(f.session, s), false),
    }
}

/// The top `limit` documents by (score, tie-break), scored with `stats`' statistics when
/// given (the records read now, against the index's).
fn collect(
    searcher: &Searcher,
    q: &dyn Query,
    stats: Option<&Searcher>,
    limit: usize,
    by_time: bool,
) -> Result<Vec<(Key, DocAddress)>> {
    let collector = TopKeys { limit, by_time };
    let r = match stats {
        Some(s) => searcher.search_with_statistics_provider(q, &collector, s),
        None => searcher.search(q, &collector),
    }
    .map_err(ix_err)?;
    Ok(r)
}

/// The top `limit` documents by `Key`, best first (equal keys: the first document first).
///
/// Scores are read through tantivy's pruning entry point (`Weight::for_each_pruning`, what
/// its own `TopDocs` uses): once `limit` documents are held, only a document whose score
/// rounds to at least the worst one's can enter, so the scorer is told to skip every score
/// below that (block-max WAND where the query allows it). A collector that computed the key
/// of every matching document (`TopDocs::tweak_score`) read three fast fields and kept a
/// candidate for each of them.
struct TopKeys {
    limit: usize,
    by_time: bool,
}

type Ranked = (Key, Reverse<DocAddress>);

/// The best `limit` of what is pushed (a min-heap of them: its top is the worst kept).
struct Best {
    limit: usize,
    heap: std::collections::BinaryHeap<Reverse<Ranked>>,
}

impl Best {
    fn new(limit: usize) -> Best {
        Best {
            limit,
            heap: std::collections::BinaryHeap::with_capacity(limit + 1),
        }
    }

    fn push(&mut self, r: Ranked) {
        if self.heap.len() < self.limit {
            self.heap.push(Reverse(r));
        } else if self.heap.peek().is_some_and(|w| r > w.0) {
            self.heap.pop();
            self.heap.push(Reverse(r));
        }
    }

    /// The worst key kept once `limit` are.
    fn worst(&self) -> Option<Key> {
        (self.heap.len() >= self.limit)
            .then(|| self.heap.peek().map(|w| w.0 .0))
            .flatten()
    }

    fn sorted(self) -> Vec<(Key, DocAddress)> {
        let mut v: Vec<Ranked> = self.heap.into_iter().map(|r| r.0).collect();
        v.sort_by(|a, b| b.cmp(a));
        v.into_iter().map(|(k, d)| (k, d.0)).collect()
    }
}

/// The lowest score tantivy may skip once the worst key kept has `primary` as its rounded
/// score: every score that rounds to `primary` or more is above it (a score s rounds to
/// round(s * 10^4), so one that rounds to `primary` is at least (primary - 0.5) / 10^4;
/// the bound is lowered by a few ulps against the conversion's rounding).
fn floor_of(primary: u64) -> tantivy::Score {
    let lo = (primary as f64 - 0.5) / 10_000.0;
    if lo <= 0.0 {
        return tantivy::Score::MIN;
    }
    let f = lo as f32;
    f32::from_bits(f.to_bits().saturating_sub(4))
}

impl tantivy::collector::Collector for TopKeys {
    type Fruit = Vec<(Key, DocAddress)>;
    type Child = NoChild;

    fn for_segment(&self, _: u32, _: &tantivy::SegmentReader) -> tantivy::Result<NoChild> {
        unreachable!("collect_segment is overridden")
    }

    fn requires_scoring(&self) -> bool {
        !self.by_time
    }

    fn merge_fruits(&self, fruits: Vec<Self::Fruit>) -> tantivy::Result<Self::Fruit> {
        let mut best = Best::new(self.limit);
        for (k, d) in fruits.into_iter().flatten() {
            best.push((k, Reverse(d)));
        }
        Ok(best.sorted())
    }

    fn collect_segment(
        &self,
        weight: &dyn tantivy::query::Weight,
        segment_ord: u32,
        seg: &tantivy::SegmentReader,
    ) -> tantivy::Result<Self::Fruit> {
        let ff = seg.fast_fields();
        let tie = ff.u64("tie")?.first_or_default_col(0);
        let order = ff.u64("order")?.first_or_default_col(0);
        let ts = ff.i64("ts")?.first_or_default_col(0);
        let alive = seg.alive_bitset();
        let mut best = Best::new(self.limit);
        let by_time = self.by_time;
        let key = |doc: tantivy::DocId, score: tantivy::Score| -> Key {
            let primary = if by_time {
                (ts.get_val(doc) as i128 - i64::MIN as i128) as u64
            } else {
                quantize(score)
            };
            (
                primary,
                Reverse(tie.get_val(doc)),
                Reverse(order.get_val(doc)),
            )
        };
        let address = |doc_id| DocAddress {
            segment_ord,
            doc_id,
        };
        if by_time {
            // Filters only: every document scores alike, nothing to prune.
            weight.for_each_no_score(seg, &mut |docs| {
                for &doc in docs {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        best.push((key(doc, 0.0), Reverse(address(doc))));
                    }
                }
            })?;
        } else {
            let mut floor = tantivy::Score::MIN;
            weight.for_each_pruning(tantivy::Score::MIN, seg, &mut |doc, score| {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    best.push((key(doc, score), Reverse(address(doc))));
                    if let Some(w) = best.worst() {
                        floor = floor_of(w.0);
                    }
                }
                floor
            })?;
        }
        Ok(best.sorted())
    }
}

/// `TopKeys` collects whole segments (`collect_segment`): it has no per-document child.
struct NoChild;

impl tantivy::collector::SegmentCollector for NoChild {
    type Fruit = Vec<(Key, DocAddress)>;

    fn collect(&mut self, _: tantivy::DocId, _: tantivy::Score) {}

    fn harvest(self) -> Self::Fruit {
        Vec::new()
    }
}

/// A score as the integer that orders hits: rounded to 4 decimals.
fn quantize(score: f32) -> u64 {
    (f64::from(score.max(0.0)) * 10_000.0).round() as u64
}

fn hit(d: &TantivyDocument, f: &Fields, words: &[String], key: Key, by_time: bool) -> Hit {
    let s = |field| {
        d.get_first(field)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let status = s(f.status)
        .as_deref()
        .and_then(Status::parse)
        .unwrap_or(Status::Journal);
    let body = s(f.body).unwrap_or_default();
    let files: Vec<String> = d
        .get_all(f.file)
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let mut snip: Snippet = snippet::make(&body, words, SNIPPET_WIDTH);
    if snip.highlights.is_empty() && !files.is_empty() {
        let line = format!("{} {}", files.join(" "), snip.text);
        snip = snippet::make(&line, words, SNIPPET_WIDTH);
    }
    let seq = d.get_first(f.seq).and_then(|v| v.as_u64());
    let pending = status == Status::Pending;
    let kind = s(f.kind)
        .as_deref()
        .and_then(DocKind::parse)
        .unwrap_or(DocKind::Other);
    Hit {
        session: s(f.session).unwrap_or_default(),
        seq: seq.filter(|_| !pending),
        hash: s(f.hash).filter(|_| !pending),
        ts_unix_ns: d.get_first(f.ts).and_then(|v| v.as_i64()).unwrap_or(0),
        kind,
        record_kind: s(f.record_kind).unwrap_or_default(),
        status,
        journal: (!pending).then_some(if key.2 .0 % 2 == 1 {
            "rescue"
        } else {
            "journal"
        }),
        tool: s(f.tool_name),
        files,
        failed: d
            .get_first(f.failed)
            .and_then(|v| v.as_str())
            .is_some_and(|v| v == "yes"),
        score: if by_time {
            0.0
        } else {
            key.0 as f64 / 10_000.0
        },
        snippet: snip.text,
        highlights: snip.highlights,
        spool_file: s(f.spool_file),
    }
}

/// The documents read when the query runs: pending spool records of the sessions in scope,
/// and reviewed memory items of the scopes in scope.
fn transient(
    root: &Root,
    req: &Request,
    meta: &Meta,
    projects: &BTreeMap<String, Vec<String>>,
    opts: &Options,
) -> Result<Vec<TantivyDocument>> {
    let (_, f) = index::schema();
    let mut out = Vec::new();
    let in_scope = |session: &str, cwd: Option<&str>| -> bool {
        if req.session.as_deref().is_some_and(|s| s != session) {
            return false;
        }
        match &req.scope {
            Scope::All => true,
            Scope::Project(p) => match projects.get(session) {
                Some(ps) => ps.contains(p),
                None => cwd
                    .and_then(|c| memory::project_dir(None, Some(Path::new(c))))
                    .is_some_and(|d| d.to_string_lossy() == p.as_str()),
            },
        }
    };
    // Pending records.
    let pending_sessions =
        crate::journal::spool::sessions_with_pending(root, &opts.writer).unwrap_or_default();
    for session in pending_sessions {
        if memory::is_scope_journal(&session) {
            continue;
        }
        let Ok(files) = crate::journal::pending_spool(root, &session, &opts.writer) else {
            continue;
        };
        for p in files {
            let Some(file) = &p.file else { continue };
            for r in &file.records {
                if crate::format::payload::is_system_kind(&r.kind) {
                    continue;
                }
                let Ok(json) = crate::format::payload::to_json(0, &r.kind, &r.payload) else {
                    continue;
                };
                let c = doc::content_of_json(&r.kind, json.get());
                let Some(kind) = c.kind else { continue };
                if !in_scope(&session, c.cwd.as_deref()) {
                    continue;
                }
                let ts = r.ts_unix_ns.unwrap_or(file.spooled_at_ns);
                let mut d = base(&f, &session, kind, Status::Pending, ts, &r.kind, &c.text);
                for p in &c.files {
                    d.add_text(f.file, p);
                }
                if let Some(t) = &c.tool {
                    d.add_text(f.tool, t.to_lowercase());
                    d.add_text(f.tool_name, t);
                }
                d.add_text(f.failed, if c.failed { "yes" } else { "no" });
                d.add_u64(f.tie, index::tie(&session));
                d.add_u64(f.order, u64::MAX);
                d.add_text(f.spool_file, p.path.display().to_string());
                out.push(d);
            }
        }
    }
    // Reviewed memory.
    let scopes: Vec<memory::Scope> = match &req.scope {
        Scope::Project(p) => vec![memory::Scope::Project(p.clone()), memory::Scope::Global],
        Scope::All => {
            let mut v: Vec<memory::Scope> = meta
                .journals
                .values()
                .filter(|c| c.scope)
                .filter_map(|c| memory::Scope::of_journal_id(&c.session))
                .collect();
            v.sort();
            v.dedup();
            v
        }
    };
    for scope in scopes {
        let id = scope.journal_id();
        if req.session.as_deref().is_some_and(|s| s != id) {
            continue;
        }
        for (item, hash, ts) in reviewed(root, &scope)? {
            let mut d = base(
                &f,
                &id,
                DocKind::Memory,
                Status::Journal,
                ts,
                "sjournal.memory",
                &item.text,
            );
            d.add_u64(f.seq, item.seq);
            d.add_text(f.hash, &hash);
            d.add_text(f.failed, "no");
            d.add_u64(f.tie, index::tie(&id));
            d.add_u64(f.order, index::order(item.seq, false));
            out.push(d);
        }
    }
    Ok(out)
}

fn base(
    f: &Fields,
    session: &str,
    kind: DocKind,
    status: Status,
    ts: i64,
    record_kind: &str,
    text: &str,
) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_text(f.body, text);
    d.add_text(f.kind, kind.as_str());
    d.add_text(f.status, status.as_str());
    d.add_text(f.session, session);
    d.add_i64(f.ts, ts);
    d.add_text(f.record_kind, record_kind);
    d
}

/// The accepted items of a scope, each with the hash and time of the scope journal's record
/// at its seq (the record that last changed it): nothing pending, rejected, forgotten or
/// stale.
pub fn reviewed(root: &Root, scope: &memory::Scope) -> Result<Vec<(memory::Item, String, i64)>> {
    let st = memory::ops::load(root, scope, &crate::snapshot::LoadOptions::latest())?;
    let items: Vec<memory::Item> = st.memory.accepted().into_iter().cloned().collect();
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let hashes = record_hashes(root, &scope.journal_id())?;
    Ok(items
        .into_iter()
        .map(|i| {
            let (h, ts) = hashes.get(&i.seq).cloned().unwrap_or_default();
            (i, h, ts)
        })
        .collect())
}

/// Seq → record hash and time, of a (small) journal.
fn record_hashes(root: &Root, session: &str) -> Result<BTreeMap<u64, (String, i64)>> {
    let paths = root.existing_session(session)?;
    let r = JournalReader::open(&paths.journal, None)?;
    let mut out = BTreeMap::new();
    for rec in r.records()?.flatten() {
        out.insert(rec.seq, (rec.hash.to_hex(), rec.ts_unix_ns));
    }
    Ok(out)
}
