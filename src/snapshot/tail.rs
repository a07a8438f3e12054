//! Folding the records after the snapshot (or all of them): on one thread for a short tail
//! (the hook's case), on two for a long one (a cold load of a large journal) on a machine of
//! two cores or more: a reader thread checks each frame (CRC, seq) and decodes its event's
//! digest, the caller's thread applies the records in seq order. Decoding an event reads
//! nothing of the state, so it can run ahead; applying is sequential, and stays on one
//! thread, in the journal's order: the state is the same, byte for byte, whichever path
//! folded it.
//!
//! The two threads pass batches of decoded records through a bounded channel, and the
//! batches' buffers come back to the reader to be filled again: memory stays flat (a few
//! batches of events, borrowed from the mapped journal) however long the journal is.

use std::borrow::Cow;
use std::sync::mpsc::{channel, sync_channel};

use crate::event::{Event, EventKind, Host};
use crate::fold::digest;
use crate::fold::{RecordView, State};
use crate::format::payload::{event_digest, is_system_kind};
use crate::journal::reader::{Record, Records};
use crate::journal::scan::Stop;

/// A tail at least this long (bytes of journal) is folded on two threads (where a core is
/// likely to be free: [`spare_core`]); a shorter one is over before a second thread would have
/// started.
pub(super) const TWO_THREADS_MIN_BYTES: usize = 4 << 20;

/// Whether a second thread can have a core of its own: with two cores or more. A tail this
/// long is a cold load: `replay`, `state` or `inspect` of a large journal, or a hook whose
/// snapshot is missing or was rejected (after a `FOLD_VERSION` bump), which has its deadline
/// to meet. Two threads do a little more work in all, so they pay only when the other core is
/// free; the reader thread then bounds the load (BENCHMARKS.md, "Speed mechanisms": two-thread
/// cold fold).
pub(super) fn spare_core() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// Records per batch handed from the reader thread to the folding one.
const BATCH: usize = 256;

/// Batches in flight: the reader runs at most this far ahead of the fold.
const IN_FLIGHT: usize = 2;

/// What folding the tail came to.
pub(super) struct Folded<'a> {
    /// Records folded.
    pub records: u64,
    /// The last record folded.
    pub last: Option<Record<'a>>,
    /// Where the records stopped before the end of the file, if they did.
    pub stop: Option<Stop>,
}

/// Folds `records` into `state`, up to seq `at` (all of them: None), on two threads when
/// `two_threads`.
pub(super) fn fold<'a>(
    records: Records<'a>,
    at: Option<u64>,
    state: &mut State,
    two_threads: bool,
) -> Folded<'a> {
    if two_threads {
        return fold_on_two_threads(records, at, state);
    }
    let mut f = Folded {
        records: 0,
        last: None,
        stop: None,
    };
    // One slot, each event decoded over the one before (see `DecodedBatch`).
    let mut slot: Option<DecodedRecord<'a>> = None;
    for r in records {
        match r {
            Ok(rec) if at.is_some_and(|at| rec.seq > at) => break,
            Ok(rec) => {
                let slot = match slot.as_mut() {
                    Some(slot) => {
                        slot.fill(rec);
                        slot
                    }
                    None => slot.insert(DecodedRecord::new(rec)),
                };
                slot.apply(state);
                f.records += 1;
                f.last = Some(rec);
            }
            Err(stop) => {
                f.stop = Some(stop);
                break;
            }
        }
    }
    f
}

/// A record read by the reader thread, and its event as its digest reads: `event` is that
/// event when `decoded`; else the record is a system record, or an event without a digest
/// the fold reads (folded from its JSON), and `event` holds nothing to read.
struct DecodedRecord<'a> {
    rec: Record<'a>,
    decoded: bool,
    event: Event<'a>,
}

impl<'a> DecodedRecord<'a> {
    /// A slot holding `rec` (see [`DecodedRecord::fill`]).
    fn new(rec: Record<'a>) -> Self {
        let mut slot = DecodedRecord {
            rec,
            decoded: false,
            event: Event::bare(Host::Unknown, EventKind::Other, Cow::Borrowed("")),
        };
        slot.fill(rec);
        slot
    }

    /// Holds `rec`, its event decoded from its digest (if it has one the fold reads) over
    /// the slot's event before.
    fn fill(&mut self, rec: Record<'a>) {
        self.rec = rec;
        self.decoded = match (!is_system_kind(rec.kind))
            .then(|| event_digest(rec.payload))
            .flatten()
        {
            Some(d) => digest::decode_into(d, &mut self.event),
            None => false,
        };
    }

    /// Folds the record into `state`: as [`State::apply`] does, the event decoded already.
    fn apply(&self, state: &mut State) {
        state.apply_decoded(
            &RecordView::from(&self.rec),
            self.decoded.then_some(&self.event),
        );
    }
}

/// Records handed from the reader thread to the folding one: the first `len` slots. The
/// slots stay when the batch comes back to be filled again, and each event is decoded over
/// the one before it, in place: an `Event` is large, and building one aside and moving it
/// in would copy it over and over (BENCHMARKS.md, "Speed mechanisms": decoding in place).
struct DecodedBatch<'a> {
    slots: Vec<DecodedRecord<'a>>,
    len: usize,
}

impl<'a> DecodedBatch<'a> {
    fn new() -> Self {
        DecodedBatch {
            slots: Vec::with_capacity(BATCH),
            len: 0,
        }
    }

    /// Adds `rec`, its event decoded over the one the slot held.
    fn push(&mut self, rec: Record<'a>) {
        match self.slots.get_mut(self.len) {
            Some(slot) => slot.fill(rec),
            None => self.slots.push(DecodedRecord::new(rec)),
        }
        self.len += 1;
    }

    fn filled(&self) -> &[DecodedRecord<'a>] {
        &self.slots[..self.len]
    }
}

fn fold_on_two_threads<'a>(records: Records<'a>, at: Option<u64>, state: &mut State) -> Folded<'a> {
    let (full_tx, full_rx) = sync_channel::<DecodedBatch<'a>>(IN_FLIGHT);
    let (empty_tx, empty_rx) = channel::<DecodedBatch<'a>>();
    std::thread::scope(|s| {
        // The reader: its result is where the records stop, if they do before the end.
        let reader = s.spawn(move || {
            let mut batch = DecodedBatch::new();
            let mut stop = None;
            for r in records {
                match r {
                    Ok(rec) if at.is_some_and(|at| rec.seq > at) => break,
                    Ok(rec) => batch.push(rec),
                    Err(s) => {
                        stop = Some(s);
                        break;
                    }
                }
                if batch.len == BATCH {
                    if full_tx.send(batch).is_err() {
                        return stop;
                    }
                    batch = empty_rx.try_recv().unwrap_or_else(|_| DecodedBatch::new());
                }
            }
            if batch.len > 0 {
                let _ = full_tx.send(batch);
            }
            stop
        });
        let mut f = Folded {
            records: 0,
            last: None,
            stop: None,
        };
        for mut batch in full_rx {
            for slot in batch.filled() {
                slot.apply(state);
            }
            f.records += batch.len as u64;
            f.last = batch.filled().last().map(|slot| slot.rec).or(f.last);
            batch.len = 0;
            // The reader may be done: a buffer it will not take back is dropped here.
            let _ = empty_tx.send(batch);
        }
        f.stop = match reader.join() {
            Ok(stop) => stop,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        f
    })
}

#[cfg(test)]
mod tests {
    //! A long cold load folds on two threads (a reader decoding ahead, the caller applying):
    //! over the same records, with events from digests and from their JSON alone, system
    //! records, a fold up to a seq, and records that stop early (a torn tail, a damaged
    //! record), it folds to the same state, the same count and last record, and stops at the
    //! same place as the fold on one thread.

    use super::*;
    use crate::fold::digest::encode_event;
    use crate::format::hash::genesis_hash;
    use crate::format::payload::{encode_event_json, encode_system, ContextSet, KIND_CONTEXT_SET};
    use crate::format::Header;
    use crate::journal::scan::Chain;
    use crate::journal::{Root, Writer, WriterOptions};

    /// A journal of `n` records (more than a few batches), as its bytes.
    fn journal(n: usize) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let mut w = Writer::open(&root, "two", &WriterOptions::default()).unwrap();
        let mut items: Vec<(String, Vec<u8>)> = Vec::new();
        for i in 0..n {
            let (kind, json) = match i % 5 {
                0 => (
                    "UserPromptSubmit",
                    format!(
                        r#"{{"hook_event_name":"UserPromptSubmit","session_id":"two","prompt":"step {i}: always run the tests"}}"#
                    ),
                ),
                1 | 2 => (
                    "PreToolUse",
                    format!(
                        r#"{{"hook_event_name":"PreToolUse","session_id":"two","tool_name":"Bash","tool_use_id":"t{i}","tool_input":{{"command":"cargo test -p m{}"}}}}"#,
                        i % 7
                    ),
                ),
                3 => (
                    "PostToolUseFailure",
                    format!(
                        r#"{{"hook_event_name":"PostToolUseFailure","session_id":"two","tool_name":"Bash","tool_use_id":"t{i}","tool_input":{{"command":"cargo test -p m{}"}},"error":"Exit code 101\nfailed {i}"}}"#,
                        i % 7
                    ),
                ),
                _ => (
                    "Stop",
                    r#"{"hook_event_name":"Stop","session_id":"two"}"#.to_owned(),
                ),
            };
            // Every seventh event without its digest: folded from its JSON.
            let payload = if i % 7 == 6 {
                encode_event_json(&json)
            } else {
                encode_event(kind, &json)
            };
            items.push((kind.to_owned(), payload));
            if i % 11 == 10 {
                let set = ContextSet {
                    channel: "persistent".into(),
                    key: format!("k{}", i % 3),
                    text: format!("note {i}"),
                };
                items.push((KIND_CONTEXT_SET.to_owned(), encode_system(&set)));
            }
        }
        let batch: Vec<(&str, &[u8])> = items.iter().map(|(k, p)| (k.as_str(), &p[..])).collect();
        w.append_batch(&batch).unwrap();
        drop(w);
        std::fs::read(root.session("two").unwrap().journal).unwrap()
    }

    fn fold_bytes(
        bytes: &[u8],
        at: Option<u64>,
        two: bool,
    ) -> (Vec<u8>, u64, Option<u64>, Option<Stop>) {
        let (_, hlen) = Header::decode(bytes).unwrap();
        let chain = Chain::genesis(genesis_hash(&bytes[..hlen]));
        let records = Records::new(bytes, hlen, chain).first_link_only();
        let mut state = State::new();
        let f = fold(records, at, &mut state, two);
        (state.encode(), f.records, f.last.map(|r| r.offset), f.stop)
    }

    /// The same fold, record by record through `State::apply` (which decodes each digest
    /// on its own, not into a slot): the oracle both paths above are held to.
    fn fold_bytes_by_apply(bytes: &[u8], at: Option<u64>) -> (Vec<u8>, u64, Option<u64>) {
        let (_, hlen) = Header::decode(bytes).unwrap();
        let chain = Chain::genesis(genesis_hash(&bytes[..hlen]));
        let mut state = State::new();
        let (mut n, mut last) = (0, None);
        for rec in Records::new(bytes, hlen, chain).first_link_only() {
            let Ok(rec) = rec else { break };
            if at.is_some_and(|at| rec.seq > at) {
                break;
            }
            state.apply(&RecordView::from(&rec));
            (n, last) = (n + 1, Some(rec.offset));
        }
        (state.encode(), n, last)
    }

    #[test]
    fn two_threads_fold_as_one() {
        let bytes = journal(3 * BATCH + 17);
        let len = bytes.len();
        let mut damaged = bytes.clone();
        damaged[len / 2] ^= 0x55;
        let cases: [(&[u8], Option<u64>); 5] = [
            (&bytes, None),
            (&bytes, Some(BATCH as u64 + 3)),
            (&bytes, Some(0)),
            (&bytes[..len - 7], None),
            (&damaged, None),
        ];
        for (i, (b, at)) in cases.into_iter().enumerate() {
            let one = fold_bytes(b, at, false);
            let two = fold_bytes(b, at, true);
            assert!(one.1 > 0 || at == Some(0), "case {i}");
            assert_eq!(one.1, two.1, "case {i}: records");
            assert_eq!(one.2, two.2, "case {i}: last record");
            assert_eq!(one.3, two.3, "case {i}: stop");
            assert!(one.0 == two.0, "case {i}: the states differ");
            let by_apply = fold_bytes_by_apply(b, at);
            assert_eq!(
                (one.1, one.2),
                (by_apply.1, by_apply.2),
                "case {i}: by apply"
            );
            assert!(
                one.0 == by_apply.0,
                "case {i}: the state differs from apply's"
            );
        }
        // The torn tail and the damaged record do stop the fold.
        assert!(fold_bytes(&bytes[..len - 7], None, true).3.is_some());
        assert!(fold_bytes(&damaged, None, true).3.is_some());
    }
}
