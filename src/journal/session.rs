//! The session handle: every write to a session goes through it, with one durability policy.
//!
//! [`Session::open`] takes the session's lock and recovers the journal's tail (the writer's
//! job), then merges the session's pending spool (the root's and the fallback's, in order).
//! If the main journal refuses appends because it is damaged, the session opens its rescue
//! journal instead. [`Session::state`] loads the folded state lazily, through the writer's own
//! storage (snapshot plus the tail after it, one scan; no second open, lock or mapping).
//! [`Session::preview`] folds a batch on top without writing it (the hook renders context
//! from it), and [`Session::commit`] writes the batch and folds it in.
//!
//! The policy, in order, for every writer (the hook, `append`, `import`, the primitives):
//! 1. the session's journal;
//! 2. its rescue journal, when the journal is damaged (recovery may not cut it);
//! 3. the root's spool (`<stem>.spool/`), when the journal cannot take it now: the lock is
//!    held past the deadline, the write failed, or older spooled events are still waiting
//!    to be merged (an event never overtakes them);
//! 4. the fallback spool, outside the root, when the root cannot take a file at all;
//! 5. nowhere: [`Error::Unkept`], which the hook tells the user about.
//!
//! A snapshot is due every `SNAPSHOT_EVERY_RECORDS` records; [`Committed::write_snapshot`]
//! writes it after the lock is released, so the hook can answer first.

use std::borrow::Cow;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::fold::{RecordView, State};
use crate::format::record;
use crate::format::spool::Attempted;
use crate::journal::paths::{self, Root, SessionPaths};
use crate::journal::reader::JournalReader;
use crate::journal::scan::{self, Chain};
use crate::journal::spool::{self, MergeReport, SpoolDir};
use crate::journal::writer::{now_unix_ns, Appended, Writer, WriterOptions};
use crate::limits::{BATCH_MAX_BYTES, SNAPSHOT_EVERY_RECORDS};
use crate::snapshot::{self, Head, LoadOptions, Written};

/// Records to write together: one write and one sync, all with the same timestamp.
#[derive(Debug, Clone)]
pub struct Batch {
    pub ts_unix_ns: i64,
    pub records: Vec<(String, Vec<u8>)>,
}

impl Default for Batch {
    fn default() -> Self {
        Self::new()
    }
}

impl Batch {
    /// An empty batch stamped now.
    pub fn new() -> Batch {
        Batch {
            ts_unix_ns: now_unix_ns(),
            records: Vec::new(),
        }
    }

    /// A batch of one record.
    pub fn one(kind: &str, payload: Vec<u8>) -> Batch {
        let mut b = Batch::new();
        b.push(kind, payload);
        b
    }

    pub fn push(&mut self, kind: &str, payload: Vec<u8>) {
        self.records.push((kind.to_owned(), payload));
    }

    pub fn items(&self) -> Vec<(&str, &[u8])> {
        self.records
            .iter()
            .map(|(k, p)| (k.as_str(), p.as_slice()))
            .collect()
    }

    /// Folds the batch into `state`, its first record getting `first_seq`.
    pub fn fold_into(&self, state: &mut State, first_seq: u64) {
        for (i, (kind, payload)) in self.records.iter().enumerate() {
            state.apply(&RecordView {
                seq: first_seq + i as u64,
                ts_unix_ns: self.ts_unix_ns,
                kind,
                payload,
            });
        }
    }
}

/// Where a batch ended up.
#[derive(Debug)]
pub enum Landed {
    /// In the session's journal.
    Journal { appended: Vec<Appended> },
    /// The journal refused appends (`cause`: it is damaged); in the rescue journal.
    Rescue {
        appended: Vec<Appended>,
        cause: Error,
    },
    /// In spool files, to be merged into the journal later. `appended` holds the records
    /// before them that did make it into the journal (a batch written in several parts that
    /// failed part way; usually none).
    Spooled {
        appended: Vec<Appended>,
        files: Vec<PathBuf>,
        reason: String,
        /// In the fallback spool, outside the root: less durable, and the user is told.
        fallback: bool,
    },
}

impl Landed {
    /// The records written to a journal (main or rescue), in order.
    pub fn appended(&self) -> &[Appended] {
        match self {
            Landed::Journal { appended }
            | Landed::Rescue { appended, .. }
            | Landed::Spooled { appended, .. } => appended,
        }
    }

    /// The seq of the first record written to a journal, if one was.
    pub fn first_seq(&self) -> Option<u64> {
        self.appended().first().map(|a| a.seq)
    }

    /// Whether the batch is durable in the root (journal, rescue journal or the root's spool).
    pub fn in_root(&self) -> bool {
        !matches!(self, Landed::Spooled { fallback: true, .. })
    }

    /// What to tell the user (not just a log) about where the batch went: something only
    /// when it could not be stored durably in the root.
    pub fn notice(&self) -> Option<String> {
        match self {
            Landed::Spooled {
                files,
                reason,
                fallback: true,
                ..
            } => Some(format!(
                "sjournal could not store this event in its journal ({reason}). It is kept in {} — \
                 outside the journal's directory and less durable there (lost if the machine \
                 restarts first) — and is merged into the journal once it can take it again \
                 (any sjournal command on this session, or `sjournal flush`).",
                files
                    .first()
                    .map(|f| f.display().to_string())
                    .unwrap_or_default()
            )),
            _ => None,
        }
    }
}

/// A written batch.
#[derive(Debug)]
pub struct Committed {
    pub landed: Landed,
    /// The session's state after the batch (when the state was loaded and the batch went
    /// into a journal).
    pub state: Option<State>,
    snapshot: Option<SnapshotDue>,
}

#[derive(Debug)]
struct SnapshotDue {
    paths: SessionPaths,
    head: Head,
    fs: std::sync::Arc<dyn crate::storage::Fs>,
}

impl From<Landed> for Committed {
    fn from(landed: Landed) -> Committed {
        Committed {
            landed,
            state: None,
            snapshot: None,
        }
    }
}

impl Committed {
    /// Writes the snapshot if one is due. Call it after answering: the lock is already
    /// released, and a snapshot only saves the next loads time (a failure changes nothing).
    pub fn write_snapshot(&mut self) -> Option<Result<Written>> {
        self.snapshot_job().map(SnapshotJob::run)
    }

    /// The snapshot that is due, to write later (the hook writes it after printing its reply).
    pub fn snapshot_job(&mut self) -> Option<SnapshotJob> {
        let due = self.snapshot.take()?;
        Some(SnapshotJob {
            state: self.state.clone()?,
            due,
        })
    }
}

/// A snapshot that is due, with the state to write.
#[derive(Debug)]
pub struct SnapshotJob {
    due: SnapshotDue,
    state: State,
}

impl SnapshotJob {
    pub fn run(self) -> Result<Written> {
        let d = self.due;
        snapshot::write_with(&*d.fs, &d.paths, &self.state, &d.head)
    }
}

/// The loaded state.
#[derive(Debug, Clone)]
struct Loaded {
    state: State,
    /// Seq of the snapshot the state started from (0: none).
    snapshot_seq: u64,
    /// The snapshot on disk did not check out (replace it at the next chance).
    snapshot_rejected: bool,
    /// Rescue mode: rescue records fold with their seq shifted by this much.
    seq_shift: u64,
    /// Damaged records were skipped: the state is not a replay of the journal, so it is
    /// never written as a snapshot.
    skipped_damage: bool,
    warnings: Vec<String>,
}

/// An open session: its lock is held until the session is committed or dropped.
pub struct Session {
    root: Root,
    paths: SessionPaths,
    opts: WriterOptions,
    writer: Writer,
    /// Why the main journal refused appends; `writer` is then the rescue journal's.
    rescued: Option<Error>,
    merge: MergeReport,
    loaded: Option<Loaded>,
}

impl Session {
    /// Takes the session's lock (until `opts.deadline`), recovers the journal's tail, and
    /// merges the pending spool (at most `opts.merge_budget` files). A damaged journal opens
    /// the rescue journal instead (see [`Session::rescued`]).
    pub fn open(root: &Root, session_id: &str, opts: &WriterOptions) -> Result<Session> {
        let (writer, rescued, merge) = match Writer::open(root, session_id, opts) {
            Ok(mut w) => {
                let dirs: Vec<SpoolDir> = spool::dirs(root, w.session_paths(), opts);
                let merge = spool::merge_pending(&mut w, &dirs, opts.merge_budget)?;
                (w, None, merge)
            }
            Err(
                cause @ (Error::Corrupt { .. }
                | Error::BadHeader { .. }
                | Error::SessionMismatch { .. }),
            ) => match Writer::open_rescue(root, session_id, opts) {
                Ok(w) => (w, Some(cause), MergeReport::default()),
                Err(e) => {
                    return Err(Error::RescueRefused {
                        cause: Box::new(cause),
                        error: Box::new(e),
                    })
                }
            },
            Err(e) => return Err(e),
        };
        Ok(Session {
            root: root.clone(),
            paths: writer.session_paths().clone(),
            opts: opts.clone(),
            writer,
            rescued,
            merge,
            loaded: None,
        })
    }

    pub fn paths(&self) -> &SessionPaths {
        &self.paths
    }

    /// Why the main journal refused appends, if it did (writes go to the rescue journal).
    pub fn rescued(&self) -> Option<&Error> {
        self.rescued.as_ref()
    }

    /// What opening did with the spool.
    pub fn merge_report(&self) -> &MergeReport {
        &self.merge
    }

    /// The writer (of the rescue journal, when [`Session::rescued`]).
    pub fn writer(&self) -> &Writer {
        &self.writer
    }

    /// The seq the next record gets (in the journal written to).
    pub fn next_seq(&self) -> u64 {
        self.writer.next_seq()
    }

    /// The seq the next record has in the folded state (differs from [`Session::next_seq`]
    /// only in rescue mode, where rescue records follow the main journal's readable prefix).
    pub fn next_state_seq(&mut self) -> Result<u64> {
        let shift = self.load()?.seq_shift;
        Ok(self.writer.next_seq() + shift)
    }

    /// Warnings from loading the state (a snapshot ignored, damage that stopped a read).
    pub fn warnings(&mut self) -> Result<Vec<String>> {
        Ok(self.load()?.warnings.clone())
    }

    /// The session's folded state (loaded on first use).
    pub fn state(&mut self) -> Result<&State> {
        Ok(&self.load()?.state)
    }

    /// The state with `batch` folded in as it would be written, without writing it.
    pub fn preview(&mut self, batch: &Batch) -> Result<State> {
        let first = self.next_state_seq()?;
        let mut s = self.load()?.state.clone();
        batch.fold_into(&mut s, first);
        Ok(s)
    }

    /// Appends `batch` and keeps the lock (and the session) for more. Errors are the
    /// journal's; the writer is then poisoned. Most callers want [`Session::commit`].
    pub fn append(&mut self, batch: &Batch) -> Result<Vec<Appended>> {
        let first = self.next_state_seq_if_loaded();
        let appended = self
            .writer
            .append_batch_at(batch.ts_unix_ns, &batch.items())?;
        if let (Some(first), Some(l)) = (first, self.loaded.as_mut()) {
            batch.fold_into(&mut l.state, first);
        }
        Ok(appended)
    }

    /// Writes `batch` by the session's policy (journal or rescue journal, else spool, else
    /// fallback spool) and releases the lock. `Err` only if the batch is kept nowhere.
    pub fn commit(self, batch: &Batch) -> Result<Committed> {
        self.commit_if(batch, &|| true)
            .expect("an unconditional commit writes")
    }

    /// [`Session::commit`], but `claim` is asked right before the first write; if it says no
    /// (the hook's watchdog took the event over), nothing is written and None is returned.
    pub fn commit_if(
        mut self,
        batch: &Batch,
        claim: &dyn Fn() -> bool,
    ) -> Option<Result<Committed>> {
        let id = self.paths().session_id.clone();
        if self.merge.backlog > 0 {
            if !claim() {
                return None;
            }
            let reason = format!(
                "{} older spooled event file(s) are still waiting to be merged; spooled behind them \
                 to keep the order",
                self.merge.backlog
            );
            let items = batch.items();
            return Some(
                keep_elsewhere(&self.root, &id, &items, &reason, None, &self.opts)
                    .map(Committed::from),
            );
        }
        let items = batch.items();
        let chunks = split(&items);
        let first_state_seq = self.next_state_seq_if_loaded();
        if !claim() {
            return None;
        }
        let mut appended = Vec::with_capacity(items.len());
        let mut done = 0;
        let mut writer = Some(self.writer);
        for (i, chunk) in chunks.iter().enumerate() {
            let w = writer
                .as_mut()
                .expect("the writer is kept until the last chunk");
            let attempted = Attempted {
                offset: w.len(),
                seq: w.next_seq(),
            };
            let last = i + 1 == chunks.len();
            // Group commit: the last write gives the lock up before its fsync, so parallel
            // writers of the session share device flushes; acknowledged after the sync.
            let r = if last {
                writer
                    .take()
                    .expect("present")
                    .append_batch_and_release_at(batch.ts_unix_ns, chunk)
            } else {
                w.append_batch_at(batch.ts_unix_ns, chunk)
            };
            match r {
                Ok(a) => {
                    appended.extend(a);
                    done += chunk.len();
                }
                Err(e) => {
                    drop(writer);
                    // The write may have reached the file (a failed fsync): the spool entry
                    // says where, so the merge does not repeat it if it did. Only the main
                    // journal merges spools, so a rescue append's position means nothing.
                    let attempted = self.rescued.is_none().then_some(attempted);
                    let reason = e.to_string();
                    let kept = keep_elsewhere(
                        &self.root,
                        &id,
                        &items[done..],
                        &reason,
                        attempted,
                        &self.opts,
                    );
                    return Some(kept.map(|landed| {
                        let landed = match landed {
                            Landed::Spooled {
                                files,
                                reason,
                                fallback,
                                ..
                            } => Landed::Spooled {
                                appended,
                                files,
                                reason,
                                fallback,
                            },
                            other => other,
                        };
                        Committed::from(landed)
                    }));
                }
            }
        }
        let landed = match self.rescued.take() {
            None => Landed::Journal { appended },
            Some(cause) => Landed::Rescue { appended, cause },
        };
        let mut loaded = self.loaded.take();
        if let (Some(l), Some(first)) = (loaded.as_mut(), first_state_seq) {
            batch.fold_into(&mut l.state, first);
        }
        let snapshot = match (&landed, &loaded) {
            (Landed::Journal { appended }, Some(l)) => {
                due(l, appended, batch).map(|head| SnapshotDue {
                    paths: self.paths.clone(),
                    head,
                    fs: self.opts.fs.clone(),
                })
            }
            _ => None,
        };
        Some(Ok(Committed {
            landed,
            state: loaded.map(|l| l.state),
            snapshot,
        }))
    }

    fn next_state_seq_if_loaded(&self) -> Option<u64> {
        self.loaded
            .as_ref()
            .map(|l| self.writer.next_seq() + l.seq_shift)
    }

    fn load(&mut self) -> Result<&Loaded> {
        if self.loaded.is_none() {
            let l = match self.rescued {
                None => self.load_main()?,
                Some(_) => self.load_rescued()?,
            };
            self.loaded = Some(l);
        }
        Ok(self.loaded.as_ref().expect("just loaded"))
    }

    /// The snapshot if it checks out, then the records after it: all read through the
    /// writer's storage, which already knows where the tail is.
    fn load_main(&self) -> Result<Loaded> {
        let w = &self.writer;
        let mut l = Loaded {
            state: State::new(),
            snapshot_seq: 0,
            snapshot_rejected: false,
            seq_shift: 0,
            skipped_damage: false,
            warnings: Vec::new(),
        };
        let mut from = None;
        let frame_at = |offset: u64| w.read_frame_at(offset).map(Cow::Owned);
        let checked = snapshot::read_snapshot(&self.paths.snapshot).and_then(|b| {
            b.map(|b| snapshot::check_with(&b, w.len(), w.header_len(), &frame_at))
                .transpose()
        });
        match checked {
            Ok(None) => {}
            Ok(Some((state, h))) => {
                l.state = state;
                l.snapshot_seq = h.seq;
                from = Some((
                    h.end_offset,
                    Chain {
                        next_seq: h.seq + 1,
                        prev_hash: h.chain_hash,
                    },
                ));
            }
            Err(r) => {
                l.snapshot_rejected = true;
                l.warnings.push(format!(
                    "snapshot {} ignored: {}; replaying the journal in full",
                    self.paths.snapshot.display(),
                    r.0
                ));
            }
        }
        let state = &mut l.state;
        let end = w.visit_records(from, &mut |_, f| state.apply(&RecordView::from(f)))?;
        if let Some(stop) = end.stop.filter(|_| end.end < w.len()) {
            // Damage before the record the writer's hint names (case-table row 17): the
            // writer appends after it, so fold what is readable past it too.
            l.warnings.push(format!(
                "journal {} is damaged at offset {}: {}",
                w.path().display(),
                stop.offset,
                stop.problem
            ));
            let deadline = self.opts.deadline;
            fold_past_damage(w.path(), deadline, &mut l, Some(stop.offset), w.len())?;
        }
        Ok(l)
    }

    /// Rescue mode: the main journal's readable prefix (read-only), then the rescue
    /// journal's records, numbered on from it.
    fn load_rescued(&self) -> Result<Loaded> {
        let load = LoadOptions {
            deadline: self.opts.deadline,
            ..LoadOptions::latest()
        };
        let mut l = Loaded {
            state: State::new(),
            snapshot_seq: 0,
            snapshot_rejected: false,
            seq_shift: 0,
            skipped_damage: false,
            warnings: Vec::new(),
        };
        match snapshot::load_state(&self.root, &self.paths.session_id, &load) {
            Ok((s, info)) => {
                l.state = s;
                l.warnings = info.warnings;
                // Past the damage that stopped the read, what is still readable.
                if info.stopped.is_some() {
                    let from = info.head.map(|h| h.end_offset);
                    let len = std::fs::metadata(&self.paths.journal).map_or(0, |m| m.len());
                    fold_past_damage(&self.paths.journal, load.deadline, &mut l, from, len)?;
                }
            }
            Err(e) => l.warnings.push(format!(
                "the journal could not be read ({e}); the state is the rescue journal's alone"
            )),
        }
        let shift = l.state.seq;
        l.seq_shift = shift;
        let st = &mut l.state;
        self.writer.visit_records(None, &mut |_, f| {
            let mut v = RecordView::from(f);
            v.seq += shift;
            st.apply(&v);
        })?;
        Ok(l)
    }
}

/// Folds the records of the journal at `path` that can still be read past damage: from
/// `offset` (where a scan stopped; None: right after the header) the next record that is
/// valid on its own (its CRC, a later seq), then on from it, past any further damage, up to
/// `end`. Skipped bytes are named in the warnings. For the session's state only: readers and
/// `verify` stop at damage and say so.
fn fold_past_damage(
    path: &std::path::Path,
    deadline: Option<std::time::Instant>,
    l: &mut Loaded,
    offset: Option<u64>,
    end: u64,
) -> Result<()> {
    let reader = JournalReader::open(path, deadline)?;
    let bytes = reader.bytes();
    let end = (end as usize).min(bytes.len());
    let mut offset = match offset {
        Some(o) => o as usize,
        None => reader.header().map_or(end, |(_, hlen, _)| hlen),
    };
    while offset < end {
        let Some(rel) = scan::find_valid_frame_after(&bytes[offset..end], l.state.seq) else {
            l.warnings.push(format!(
                "nothing readable follows offset {offset}; the state covers the records before it \
                 (run `sjournal verify`)"
            ));
            break;
        };
        let at = offset + rel;
        l.skipped_damage = true;
        let f = record::parse(&bytes[at..]).expect("found as a valid frame");
        l.warnings.push(format!(
            "{rel} damaged bytes at offset {offset} are skipped; the state goes on from seq {} at \
             offset {at} (run `sjournal verify`)",
            f.seq
        ));
        let chain = Chain {
            next_seq: f.seq,
            prev_hash: f.prev_hash,
        };
        let mut stopped = None;
        for r in reader.records_from(at, chain) {
            match r {
                Ok(rec) if (rec.offset as usize) < end => l.state.apply(&RecordView::from(&rec)),
                Ok(_) => break,
                Err(stop) => {
                    stopped = Some(stop.offset as usize);
                    break;
                }
            }
        }
        match stopped {
            Some(o) => offset = o,
            None => break,
        }
    }
    Ok(())
}

/// The head to snapshot at, if a snapshot is due after `appended` (the batch's records).
fn due(l: &Loaded, appended: &[Appended], batch: &Batch) -> Option<Head> {
    let last = appended.last()?;
    let (kind, payload) = batch.records.last()?;
    let due = l.state.seq.saturating_sub(l.snapshot_seq) >= SNAPSHOT_EVERY_RECORDS.max(1)
        || l.snapshot_rejected;
    if !due || l.skipped_damage || l.state.seq != last.seq {
        return None;
    }
    Some(Head {
        seq: last.seq,
        frame_offset: last.offset,
        end_offset: last.offset + record::frame_len(kind, payload.len()) as u64,
        hash: last.hash,
    })
}

/// Splits records into writes of at most `BATCH_MAX_BYTES` of frames (at least one write).
fn split<'a, 'b>(items: &'b [(&'a str, &'a [u8])]) -> Vec<&'b [(&'a str, &'a [u8])]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, (k, p)) in items.iter().enumerate() {
        let len = record::frame_len(k, p.len()) as u64;
        if bytes + len > BATCH_MAX_BYTES && i > start {
            out.push(&items[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += len;
    }
    out.push(&items[start..]);
    out
}

/// Keeps records the session's journals could not take: in the root's spool, else in the
/// fallback spool. `Err` ([`Error::Unkept`]) only if neither can take them.
pub fn keep_elsewhere(
    root: &Root,
    session_id: &str,
    records: &[(&str, &[u8])],
    reason: &str,
    attempted: Option<Attempted>,
    opts: &WriterOptions,
) -> Result<Landed> {
    let fs = &*opts.fs;
    let spooled = |files, reason: String, fallback| Landed::Spooled {
        appended: Vec::new(),
        files,
        reason,
        fallback,
    };
    let in_root = (|| {
        root.ensure_with(fs)?;
        let paths = root.session(session_id)?;
        paths::ensure_dir_with(fs, &paths.spool, false)?;
        spool::write_records(fs, &paths.spool, session_id, records, reason, attempted)
    })();
    let root_err = match in_root {
        Ok(files) => return Ok(spooled(files, reason.to_owned(), false)),
        // No other place would take these either.
        Err(e @ (Error::TooLarge { .. } | Error::InvalidKind { .. })) => return Err(e),
        Err(e) => e,
    };
    let stem = paths::file_stem(session_id)?;
    let fallback =
        spool::fallback::ensure_session_dir(fs, root, &stem, opts.fallback_dir.as_deref())
            .and_then(|dir| spool::write_records(fs, &dir, session_id, records, reason, attempted));
    match fallback {
        Ok(files) => Ok(spooled(
            files,
            format!("{reason}; and the root's spool: {root_err}"),
            true,
        )),
        Err(e) => Err(Error::Unkept {
            reason: format!("{reason}; the root's spool: {root_err}; the fallback spool: {e}"),
        }),
    }
}

/// Writes `batch` to the session by the policy: [`Session::open`] then [`Session::commit`],
/// or, if the session cannot be opened, [`keep_elsewhere`]. Writes the snapshot if due.
pub fn write(root: &Root, session_id: &str, batch: &Batch, opts: &WriterOptions) -> Result<Landed> {
    match Session::open(root, session_id, opts) {
        Ok(s) => {
            let mut c = s.commit(batch)?;
            let _ = c.write_snapshot();
            Ok(c.landed)
        }
        Err(e @ (Error::InvalidSessionId { .. } | Error::InvalidKind { .. })) => Err(e),
        Err(e) => keep_elsewhere(root, session_id, &batch.items(), &e.to_string(), None, opts),
    }
}

/// What merging a session's pending spool found (for a reader, or `sjournal flush`).
#[derive(Debug, Default)]
pub struct Flushed {
    pub merged: MergeReport,
    /// Spool files still waiting: the journal could not be opened (its lock is held, the
    /// root is read-only or full, the journal is damaged) or a file could not be deleted.
    pub waiting: Vec<spool::PendingSpool>,
    /// Why they wait.
    pub why: Option<String>,
}

/// Merges the session's pending spool (the root's and the fallback's) into its journal, all
/// of it, waiting for the lock until `opts.deadline`. Never fails for what it cannot merge:
/// that is reported in [`Flushed::waiting`]. Nothing is done (and nothing created) when
/// nothing is pending.
pub fn flush(root: &Root, session_id: &str, opts: &WriterOptions) -> Result<Flushed> {
    if !spool::has_pending(root, session_id, opts)? {
        return Ok(Flushed::default());
    }
    // The main journal's writer, not a Session: a reader must not open (or create) the
    // rescue journal, and only a main journal merges.
    let (merged, why) = match Writer::open(root, session_id, opts) {
        Ok(mut w) => {
            let dirs = spool::dirs(root, w.session_paths(), opts);
            match spool::merge_pending(&mut w, &dirs, None) {
                Ok(r) => (r, None),
                Err(e) => (MergeReport::default(), Some(e.to_string())),
            }
        }
        Err(e) => (MergeReport::default(), Some(e.to_string())),
    };
    let waiting = spool::pending_spool(root, session_id, opts)?;
    let why = match (waiting.is_empty(), why) {
        (true, _) => None,
        (false, Some(w)) => Some(w),
        (false, None) => Some(
            merged
                .warnings
                .first()
                .cloned()
                .unwrap_or_else(|| "they could not be merged".into()),
        ),
    };
    Ok(Flushed {
        merged,
        waiting,
        why,
    })
}

/// Folds spool files that are still waiting on top of `state`, in order, as they would be
/// merged (their records numbered on from the state's seq). For readers that show pending
/// events as pending.
pub fn fold_pending(state: &mut State, waiting: &[spool::PendingSpool]) -> u64 {
    let mut n = 0;
    for p in waiting {
        let Some(file) = &p.file else { continue };
        let mut records = file.records.clone();
        crate::format::spool::fix_event_seqs(&mut records, state.seq + 1);
        for r in &records {
            let seq = state.seq + 1;
            state.apply(&RecordView {
                seq,
                ts_unix_ns: file.spooled_at_ns,
                kind: &r.kind,
                payload: &r.payload,
            });
        }
        n += 1;
    }
    n
}
