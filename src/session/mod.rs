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

mod batch;
mod elsewhere;
mod load;

use crate::error::{Error, Result};
use crate::fold::State;
use crate::format::record;
use crate::format::spool::Attempted;
use crate::journal::paths::{Root, SessionPaths};
use crate::journal::spool::{self, MergeReport, SpoolDir};
use crate::journal::writer::{Appended, Writer, WriterOptions};
use crate::limits::BATCH_MAX_BYTES;

use batch::SnapshotDue;
pub use batch::{Batch, Committed, Landed, SnapshotJob};
pub use elsewhere::{flush, fold_pending, keep_elsewhere, write, Flushed};
use load::{due, Loaded};

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
        let opened = match Writer::open(root, session_id, opts) {
            // A migration interrupted after its rename leaves the mark naming the old chain's
            // head; finishing it (as `sjournal migrate` would) lets this writer take the
            // journal (see `audit::migrate::finish_on_open`).
            Err(e)
                if crate::journal::error::Corrupt::of(&e).is_some_and(|c| {
                    crate::audit::migrate::finish_on_open(
                        root,
                        session_id,
                        c,
                        opts.deadline,
                        &opts.fs,
                    )
                }) =>
            {
                Writer::open(root, session_id, opts)
            }
            other => other,
        };
        let (writer, rescued, merge) = match opened {
            Ok(mut w) => {
                let dirs: Vec<SpoolDir> = spool::dirs(root, w.session_paths(), opts);
                let merge = spool::merge_pending(&mut w, root, &dirs, opts.merge_budget)?;
                (w, None, merge)
            }
            Err(
                cause @ (Error::Corrupt(_)
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
            .append_batch_timed(|i| batch.ts(i), &batch.items())?;
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
                keep_elsewhere(
                    &self.root,
                    &id,
                    &items,
                    &batch.times,
                    &reason,
                    None,
                    &self.opts,
                )
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
                    .append_batch_and_release_timed(|n| batch.ts(done + n), chunk)
            } else {
                w.append_batch_timed(|n| batch.ts(done + n), chunk)
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
                        batch.times.get(done..).unwrap_or_default(),
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
            (Landed::Journal { appended }, Some(l)) => due(l, appended).map(|head| SnapshotDue {
                paths: self.paths.clone(),
                head,
                fs: self.opts.fs.clone(),
            }),
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
}

/// Splits records into writes of at most `BATCH_MAX_BYTES` of frames (at least one write).
fn split<'a, 'b>(items: &'b [(&'a str, &'a [u8])]) -> Vec<&'b [(&'a str, &'a [u8])]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, (k, p)) in items.iter().enumerate() {
        // The larger (version-2 or -3) frame, whichever version the journal is.
        let len = record::frame_len_for(2, k, p.len()) as u64;
        if bytes + len > BATCH_MAX_BYTES && i > start {
            out.push(&items[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += len;
    }
    out.push(&items[start..]);
    out
}
