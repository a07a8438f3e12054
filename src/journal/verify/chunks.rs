//! Verify on every core. Each record's check (length, CRC, fields, seq, `prev_hash` against
//! the hash of the record before it) depends on nothing but the bytes of two neighbouring
//! records, so once the records are located the checks can run in any order.
//!
//! The coordinating thread hops from length word to length word (no CRC, no hash) and cuts
//! the records into chunks of about [`VERIFY_CHUNK_BYTES`] that end at record boundaries, each
//! tagged with the seq its first record must have. Workers check each chunk with the same
//! [`Records`] iterator the sequential verify uses, starting from a chain that takes the
//! chunk's first `prev_hash` on trust. The coordinator then takes the results in file order and
//! checks the one link a worker cannot: that a chunk's first `prev_hash` is the hash of the
//! previous chunk's last record.
//!
//! What this proves is a *prefix*: every record before [`Prefix::at`] is one the sequential
//! verify accepts too, with the same chain. The first chunk (in file order, whatever order
//! the workers finish in) with any problem, a link that does not join, or where the length
//! hop stopped, ends the prefix at its first byte; the caller verifies on from there with the
//! sequential iterator, which so reports exactly what a sequential verify reports, and never
//! has more than one chunk to re-check. A chunk located wrongly (a damaged length word sends
//! the hop into the middle of a record) cannot pass: its records fail their CRCs.
//!
//! Memory stays flat: at most `workers * VERIFY_CHUNKS_IN_FLIGHT` chunks are handed out
//! beyond the prefix, and the pages below the prefix are released as it grows.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::format::record::{self, FRAME_MIN_BYTES};
use crate::format::Hash;
use crate::journal::reader::Records;
use crate::journal::scan::Chain;
use crate::limits::{FRAME_MAX_BYTES, VERIFY_CHUNKS_IN_FLIGHT};

/// How far the prefix grows between releases of the pages behind it.
const RELEASE_STEP_BYTES: usize = 8 << 20;

/// The records verified so far, from the header on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// Where the next record to verify begins.
    pub at: usize,
    /// The chain after the last record verified.
    pub chain: Chain,
    pub records: u64,
    /// The hash of the record with the mark's seq, if it was among them.
    pub at_mark: Option<Hash>,
}

impl Prefix {
    pub fn empty(at: usize, chain: Chain) -> Prefix {
        Prefix {
            at,
            chain,
            records: 0,
            at_mark: None,
        }
    }
}

/// A run of whole records handed to one worker.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    start: usize,
    end: usize,
    /// The seq its first record must carry.
    first_seq: u64,
    records: u64,
}

/// A chunk whose records are all valid and chained to each other.
#[derive(Debug, Clone, Copy)]
struct Checked {
    first_prev: Hash,
    last_hash: Hash,
    at_mark: Option<Hash>,
}

/// Where the length hop is: the next chunk starts at `at` with a record of seq `seq`.
struct Hop {
    at: usize,
    seq: u64,
    /// Chunks handed out so far (the next chunk's index).
    taken: usize,
    /// No further record can be located: the rest is the sequential check's.
    exhausted: bool,
}

/// The chunks' results, joined to the prefix in file order.
struct Join {
    prefix: Prefix,
    /// Index of the first chunk not yet joined.
    first: usize,
    /// Results of the chunks from `first` on, as they come in (None: not yet).
    results: VecDeque<Option<(Chunk, Option<Checked>)>>,
    /// A chunk did not join: hand out no more.
    broken: bool,
    /// The prefix offset up to which pages were released.
    released: usize,
}

/// Verifies the records of `bytes` from `start` (where a record with `chain.next_seq` begins)
/// on `workers` threads (this one and `workers - 1` more), and returns the longest prefix
/// found valid (see the module docs). `release(from, to)` is called as the prefix grows,
/// with the range now behind it.
///
/// There is no coordinating thread: each worker takes the next chunk (the length hop, under
/// a lock of its own), checks it, and joins what it can to the prefix (under another), so
/// no core sits waiting for results. A worker waits only when the chunks handed out beyond
/// the prefix fill the window (one very slow chunk), which bounds the memory they map.
pub fn verify_prefix(
    bytes: &[u8],
    start: usize,
    chain: Chain,
    mark_seq: Option<u64>,
    workers: usize,
    chunk_bytes: usize,
    release: impl Fn(usize, usize) + Sync,
) -> Prefix {
    let window = workers * VERIFY_CHUNKS_IN_FLIGHT;
    let hop = Mutex::new(Hop {
        at: start,
        seq: chain.next_seq,
        taken: 0,
        exhausted: false,
    });
    let taken = AtomicUsize::new(0);
    let join = Mutex::new(Join {
        prefix: Prefix::empty(start, chain),
        first: 0,
        results: VecDeque::new(),
        broken: false,
        released: start,
    });
    let joined = Condvar::new();
    let work = || loop {
        {
            let mut j = lock(&join);
            while !j.broken && taken.load(Ordering::Acquire) - j.first >= window {
                j = joined.wait(j).expect("no thread panics holding the lock");
            }
            if j.broken {
                return;
            }
        }
        let (i, chunk) = {
            let mut h = lock(&hop);
            if h.exhausted {
                return;
            }
            let Some(chunk) = next_chunk(bytes, h.at, h.seq, chunk_bytes) else {
                h.exhausted = true;
                return;
            };
            let i = h.taken;
            (h.at, h.seq, h.taken) = (chunk.end, chunk.first_seq + chunk.records, i + 1);
            taken.store(i + 1, Ordering::Release);
            (i, chunk)
        };
        // A panic would leave the chunk unjoined and the others waiting for it: count the
        // chunk as failed instead; the sequential re-check of it then panics on the
        // caller's thread, where it surfaces.
        let checked = std::panic::catch_unwind(AssertUnwindSafe(|| check(bytes, chunk, mark_seq)))
            .unwrap_or(None);
        let mut j = lock(&join);
        let slot = i - j.first;
        if j.results.len() <= slot {
            j.results.resize(slot + 1, None);
        }
        j.results[slot] = Some((chunk, checked));
        let mut advanced = false;
        while let Some(&Some((chunk, checked))) = j.results.front() {
            j.results.pop_front();
            j.first += 1;
            advanced = true;
            match checked {
                Some(c) if !j.broken && c.first_prev == j.prefix.chain.prev_hash => {
                    let p = &mut j.prefix;
                    p.at = chunk.end;
                    p.chain = Chain {
                        next_seq: chunk.first_seq + chunk.records,
                        prev_hash: c.last_hash,
                    };
                    p.records += chunk.records;
                    p.at_mark = p.at_mark.or(c.at_mark);
                }
                _ => j.broken = true,
            }
        }
        if j.prefix.at - j.released >= RELEASE_STEP_BYTES {
            release(j.released, j.prefix.at);
            j.released = j.prefix.at;
        }
        if advanced {
            joined.notify_all();
        }
    };
    std::thread::scope(|s| {
        for _ in 1..workers {
            s.spawn(work);
        }
        work();
    });
    let j = join
        .into_inner()
        .expect("no thread panics holding the lock");
    j.prefix
}

/// Locks `m`. Nothing panics while holding these locks (the checks run outside them).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().expect("no thread panics holding the lock")
}

/// The next chunk from `at`: whole records, by their length words alone, until the chunk
/// holds `chunk_bytes` or a length word is impossible or runs past the end. None if not even
/// one record can be located (the sequential check takes it from there).
fn next_chunk(bytes: &[u8], at: usize, first_seq: u64, chunk_bytes: usize) -> Option<Chunk> {
    let mut end = at;
    let mut records = 0;
    while end - at < chunk_bytes {
        let Some(len) = record::peek_len(&bytes[end..]) else {
            break;
        };
        if (len as usize) < FRAME_MIN_BYTES || len > FRAME_MAX_BYTES {
            break;
        }
        if len as usize > bytes.len() - end {
            break;
        }
        end += len as usize;
        records += 1;
    }
    (records > 0).then_some(Chunk {
        start: at,
        end,
        first_seq,
        records,
    })
}

/// Checks a chunk's records as the sequential verify does, taking the first `prev_hash` on
/// trust (the coordinator checks it). None at the first problem.
fn check(bytes: &[u8], chunk: Chunk, mark_seq: Option<u64>) -> Option<Checked> {
    let bytes = &bytes[..chunk.end];
    let first_prev = record::parse(&bytes[chunk.start..]).ok()?.prev_hash;
    let mut records = Records::new(
        bytes,
        chunk.start,
        Chain {
            next_seq: chunk.first_seq,
            prev_hash: first_prev,
        },
    );
    let mut at_mark = None;
    let mut n = 0;
    for r in &mut records {
        let r = r.ok()?;
        n += 1;
        if Some(r.seq) == mark_seq {
            at_mark = Some(r.hash);
        }
    }
    (n == chunk.records).then_some(Checked {
        first_prev,
        last_hash: Records::chain(&records).prev_hash,
        at_mark,
    })
}

#[cfg(test)]
mod tests {
    //! The parallel prefix on its own: over intact records it must vouch for all of them (so
    //! the sequential check after it has nothing left to do, and verify really runs on every
    //! core), and over damaged ones it must stop at or before the damage, at a record
    //! boundary, with at most one chunk left to re-check. That the whole verify then reports
    //! exactly what the sequential one does is tested in `tests/verify_parallel.rs`.

    use super::*;
    use crate::format::hash::record_hash;
    use crate::format::record::encode;

    const START: usize = 16;

    /// `n` chained records of varied sizes after a 16-byte stand-in for a header; returns
    /// the bytes, the genesis chain and each record's offset.
    fn journal(n: u64) -> (Vec<u8>, Chain, Vec<usize>) {
        let genesis = Chain::genesis(Hash([1; 32]));
        let mut b = vec![0u8; START];
        let mut prev = genesis.prev_hash;
        let mut offsets = Vec::new();
        for seq in 1..=n {
            let at = b.len();
            offsets.push(at);
            let payload = vec![seq as u8; 20 + (seq as usize * 37) % 300];
            encode(&mut b, seq, 0, "Ev", &prev, &payload);
            prev = record_hash(&b[at..]);
        }
        (b, genesis, offsets)
    }

    fn sequential_end(bytes: &[u8], chain: Chain) -> Chain {
        let mut r = Records::new(bytes, START, chain);
        for x in &mut r {
            x.unwrap();
        }
        Records::chain(&r)
    }

    #[test]
    fn intact_records_are_all_vouched_for_on_every_split() {
        let (b, genesis, _) = journal(200);
        for workers in [2, 3, 5] {
            for chunk in [1, 150, 700, 4096, 1 << 20] {
                let p = verify_prefix(&b, START, genesis, Some(77), workers, chunk, |_, _| {});
                assert_eq!(p.at, b.len(), "workers {workers} chunk {chunk}");
                assert_eq!(p.records, 200);
                assert_eq!(p.chain, sequential_end(&b, genesis));
                let r77 = Records::new(&b, START, genesis).nth(76).unwrap().unwrap();
                assert_eq!(p.at_mark, Some(r77.hash));
            }
        }
    }

    #[test]
    fn damage_ends_the_prefix_at_a_record_boundary_at_most_one_chunk_before_it() {
        let (b, genesis, offsets) = journal(120);
        for (k, &at) in offsets.iter().enumerate().step_by(7) {
            for (what, delta) in [("length", 0), ("seq", 5), ("link", 30), ("payload", 70)] {
                let mut d = b.clone();
                d[at + delta] ^= 0x40;
                for chunk in [1, 600, 2000] {
                    let p = verify_prefix(&d, START, genesis, None, 3, chunk, |_, _| {});
                    let ctx = format!("{what} of record {} chunk {chunk}", k + 1);
                    assert!(p.at <= at, "{ctx}: prefix {} past the damage", p.at);
                    let i = offsets.iter().position(|&o| o == p.at).expect("a boundary");
                    assert_eq!(p.records, i as u64, "{ctx}");
                    assert!(at - p.at <= chunk + 400, "{ctx}: {} re-checked", at - p.at);
                    if chunk == 1 {
                        assert_eq!(p.at, at, "{ctx}");
                    }
                }
            }
        }
    }
}
