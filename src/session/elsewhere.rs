//! The policy past the journals: keeping a batch in the spool or the fallback spool; writing
//! by the whole policy in one call; and merging a session's spool for readers and `flush`.

use super::{Batch, Landed, Session};
use crate::error::{Error, Result};
use crate::fold::{RecordView, State};
use crate::format::spool::Attempted;
use crate::journal::paths::{self, Root};
use crate::journal::spool::{self, MergeReport};
use crate::journal::writer::{Writer, WriterOptions};

/// Keeps records the session's journals could not take: in the root's spool, else in the
/// fallback spool. `times[i]`, where given, is the `i`-th record's own timestamp, kept
/// through the merge (else the merge time). `Err` ([`Error::Unkept`]) only if neither can
/// take them.
pub fn keep_elsewhere(
    root: &Root,
    session_id: &str,
    records: &[(&str, &[u8])],
    times: &[Option<i64>],
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
    let to_spool = spool::ToSpool {
        session_id,
        records,
        times,
        reason,
        attempted,
    };
    let in_root = (|| {
        root.ensure_with(fs)?;
        let paths = root.session(session_id)?;
        paths::ensure_dir_with(fs, &paths.spool, false)?;
        spool::write_records(fs, &paths.spool, &to_spool, None)
    })();
    let root_err = match in_root {
        Ok(files) => return Ok(spooled(files, reason.to_owned(), false)),
        // No other place would take these either.
        Err(e @ (Error::TooLarge { .. } | Error::InvalidKind { .. })) => return Err(e),
        Err(e) => e,
    };
    let stem = paths::file_stem(session_id)?;
    // Outside the root, a file is merged only if the root's key authenticates it. Without a
    // usable key the event is still kept (unauthenticated), and the user told how to accept it.
    let _ = spool::key::ensure(fs, root);
    let key = spool::key::load(root);
    let fallback =
        spool::fallback::write_first(fs, root, &stem, opts.fallback_dir.as_deref(), |dir| {
            spool::write_records(fs, dir, &to_spool, key.as_ref().ok())
        });
    match fallback {
        Ok(files) => {
            let mut why = format!("{reason}; and the root's spool: {root_err}");
            if let Err(k) = &key {
                why.push_str(&format!(
                    "; it is {} ({k}), so it will not be merged on its own: once the root works \
                     again, `sjournal flush --all` lists it with the commands to review it and \
                     to accept it (`sjournal flush --accept FILE`)",
                    spool::UNAUTHENTICATED
                ));
            }
            Ok(spooled(files, why, true))
        }
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
        Err(e) => keep_elsewhere(
            root,
            session_id,
            &batch.items(),
            &batch.times,
            &e.to_string(),
            None,
            opts,
        ),
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
            match spool::merge_pending(&mut w, root, &dirs, None) {
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
                ts_unix_ns: r.ts_unix_ns.unwrap_or(file.spooled_at_ns),
                kind: &r.kind,
                payload: &r.payload,
            });
        }
        n += 1;
    }
    n
}
