//! Loading the session's state: through the writer's own storage (snapshot plus tail), or,
//! for a damaged journal, what is readable of it with the rescue journal folded on top.

use std::borrow::Cow;

use super::Session;
use crate::error::Result;
use crate::fold::{RecordView, State};
use crate::journal::reader::JournalReader;
use crate::journal::scan::{self, Chain, Links};
use crate::journal::writer::Appended;
use crate::limits::SNAPSHOT_EVERY_RECORDS;
use crate::snapshot::{self, Head, LoadOptions};

/// A reader's record as the fold sees it: this layer knows both the reader and the fold.
impl<'a> From<&crate::journal::Record<'a>> for RecordView<'a> {
    fn from(r: &crate::journal::Record<'a>) -> Self {
        RecordView::from(&r.frame)
    }
}

/// The loaded state.
#[derive(Debug, Clone)]
pub(super) struct Loaded {
    pub(super) state: State,
    /// Seq of the snapshot the state started from (0: none).
    pub(super) snapshot_seq: u64,
    /// The snapshot on disk did not check out (replace it at the next chance).
    pub(super) snapshot_rejected: bool,
    /// Rescue mode: rescue records fold with their seq shifted by this much.
    pub(super) seq_shift: u64,
    /// Damaged records were skipped: the state is not a replay of the journal, so it is
    /// never written as a snapshot.
    pub(super) skipped_damage: bool,
    pub(super) warnings: Vec<String>,
}

impl Session {
    /// The snapshot if it checks out, then the records after it: all read through the
    /// writer's storage, which already knows where the tail is.
    pub(super) fn load_main(&self) -> Result<Loaded> {
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
        // A fold: CRCs, seqs and the first record's link to the snapshot (or the header),
        // as every load checks (journal-format.md, "Loading a state: what is checked").
        let end = w.visit_records(from, Links::First, &mut |_, f| {
            state.apply(&RecordView::from(f))
        })?;
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
    pub(super) fn load_rescued(&self) -> Result<Loaded> {
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
        self.writer.visit_records(None, Links::First, &mut |_, f| {
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
        let f = scan::frame(&bytes[at..]).expect("found as a valid frame");
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
pub(super) fn due(l: &Loaded, appended: &[Appended]) -> Option<Head> {
    let last = appended.last()?;
    let due = l.state.seq.saturating_sub(l.snapshot_seq) >= SNAPSHOT_EVERY_RECORDS.max(1)
        || l.snapshot_rejected;
    if !due || l.skipped_damage || l.state.seq != last.seq {
        return None;
    }
    Some(Head {
        seq: last.seq,
        frame_offset: last.offset,
        end_offset: last.offset + last.len,
        hash: last.hash,
    })
}
