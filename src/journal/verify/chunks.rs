//! Verify on every core. Each record's check (length, CRC, fields, seq, `prev_hash` against
//! the hash of the record before it) depends on nothing but the bytes of two neighbouring
//! records, so once the records are located the checks can run in any order.
//!
//! The bytes after the header are cut into ranges of [`VERIFY_CHUNK_BYTES`]; a range's
//! records are those that start in it. A worker finds its range's first record by looking
//! for the first offset in the range where a plausible frame header (length, kind length,
//! flags) is followed by a matching CRC, then checks the records from there with the same
//! [`Records`] iterator the sequential verify uses, taking the first record's seq and
//! `prev_hash` on trust, up to the first record that ends at or past the range's end. The
//! results are joined in file order, and the join checks what a worker cannot: that a
//! range's first record starts exactly where the previous range's records end, with the
//! next seq, and links to the previous range's last record.
//!
//! What this proves is a *prefix*: every record before [`Prefix::at`] was reached by walking
//! record after record from the header, each checked as the sequential verify checks it. The
//! first range (in file order, whatever order the workers finish in) with any problem, or
//! that does not join, ends the prefix; the caller verifies on from there with the
//! sequential iterator, which so reports exactly what a sequential verify reports, and has at
//! most one range to re-check before the first problem. A start found wrongly (a frame
//! embedded in another's payload, which JSON text cannot hold, or damage) cannot join: the
//! previous range's records end elsewhere. It costs speed (the rest is verified
//! sequentially), never a wrong answer.
//!
//! Finding the records this way reads each range once, in order, on every worker; locating
//! them first by following the length words from record to record would be a chain of
//! dependent memory loads, one per record, all on one thread (BENCHMARKS.md, "Speed
//! mechanisms": parallel verify).
//!
//! Memory stays flat: at most `workers * VERIFY_CHUNKS_IN_FLIGHT` ranges are handed out
//! beyond the prefix, and the pages below the prefix are released as it grows.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::format::record::{FIXED_LEN, FRAME_MIN_BYTES};
use crate::format::Hash;
use crate::journal::reader::{Records, Seen};
use crate::journal::scan::{self, Chain};
use crate::limits::{FRAME_MAX_BYTES, KIND_MAX_BYTES, VERIFY_CHUNKS_IN_FLIGHT};

/// How far the prefix grows between releases of the pages behind it.
const RELEASE_STEP_BYTES: usize = 8 << 20;

/// The records verified so far, from the header on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    /// Where the next record to verify begins.
    pub at: usize,
    /// The chain after the last record verified.
    pub chain: Chain,
    pub records: u64,
    /// The hash of the record with the mark's seq, if it was among them.
    pub at_mark: Option<Hash>,
    /// What was noted of them.
    pub seen: Seen,
}

impl Prefix {
    pub fn empty(at: usize, chain: Chain) -> Prefix {
        Prefix {
            at,
            chain,
            records: 0,
            at_mark: None,
            seen: Seen::default(),
        }
    }
}

/// What a worker found in its range `[from, to)`.
#[derive(Debug, Clone)]
enum Found {
    /// No record starts in the range (one before it spans it, or the range is damaged).
    Nothing { to: usize },
    /// Valid records, chained to each other, from `start` (in the range) to `end` (at or
    /// past the range's end).
    Records {
        start: usize,
        end: usize,
        first_seq: u64,
        first_prev: Hash,
        records: u64,
        last_hash: Hash,
        at_mark: Option<Hash>,
        seen: Seen,
    },
    /// A record in the range is not valid, or a worker panicked.
    Bad,
}

/// The ranges' results, joined to the prefix in file order.
struct Join {
    prefix: Prefix,
    /// Index of the first range not yet joined.
    first: usize,
    /// Results of the ranges from `first` on, as they come in (None: not yet).
    results: VecDeque<Option<Found>>,
    /// A range did not join: hand out no more.
    broken: bool,
    /// The prefix offset up to which pages were released.
    released: usize,
}

impl Join {
    /// Joins the results at the front, in order; true if any was joined.
    fn advance(&mut self) -> bool {
        let mut advanced = false;
        while let Some(Some(_)) = self.results.front() {
            let found = self.results.pop_front().flatten().expect("checked above");
            self.first += 1;
            advanced = true;
            let p = &mut self.prefix;
            match found {
                _ if self.broken => {}
                Found::Nothing { to } if p.at >= to => {}
                Found::Records {
                    start,
                    end,
                    first_seq,
                    first_prev,
                    records,
                    last_hash,
                    at_mark,
                    seen,
                } if start == p.at
                    && first_seq == p.chain.next_seq
                    && first_prev == p.chain.prev_hash =>
                {
                    p.at = end;
                    p.chain = Chain {
                        next_seq: first_seq + records,
                        prev_hash: last_hash,
                    };
                    p.records += records;
                    p.at_mark = p.at_mark.or(at_mark);
                    p.seen.then(seen);
                }
                _ => self.broken = true,
            }
        }
        advanced
    }
}

/// Verifies the records of `bytes` from `start` (where a record with `chain.next_seq` begins)
/// on `workers` threads (this one and `workers - 1` more), and returns the longest prefix
/// found valid (see the module docs). `release(from, to)` is called as the prefix grows,
/// with the range now behind it.
///
/// There is no coordinating thread: each worker takes the next range, checks it, and joins
/// what it can to the prefix, so no core sits waiting for results. A worker waits only when
/// the ranges handed out beyond the prefix fill the window (one very slow range), which
/// bounds the memory they map.
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
    let ranges = (bytes.len() - start).div_ceil(chunk_bytes);
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
        let i = {
            let mut j = lock(&join);
            while !j.broken && taken.load(Ordering::Relaxed) - j.first >= window {
                j = joined.wait(j).expect("no thread panics holding the lock");
            }
            if j.broken {
                return;
            }
            // Taken under the lock, so the window check above holds for it.
            taken.fetch_add(1, Ordering::Relaxed)
        };
        if i >= ranges {
            return;
        }
        let from = start + i * chunk_bytes;
        let to = (from + chunk_bytes).min(bytes.len());
        // A panic would leave the range unjoined and the others waiting for it: count it as
        // bad instead; the sequential re-check then panics on the caller's thread, where it
        // surfaces.
        let found = std::panic::catch_unwind(AssertUnwindSafe(|| {
            check(bytes, from, to, i == 0, mark_seq)
        }))
        .unwrap_or(Found::Bad);
        let mut j = lock(&join);
        let slot = i - j.first;
        if j.results.len() <= slot {
            j.results.resize(slot + 1, None);
        }
        j.results[slot] = Some(found);
        let advanced = j.advance();
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

/// True if a frame could start at `at`: its length, kind length and flags are possible and
/// it fits in `bytes`. Cheap, and false at almost every offset inside a record, so the CRC
/// is computed for few candidates.
fn plausible_start(bytes: &[u8], at: usize) -> bool {
    let Some(b) = bytes.get(at..at + FIXED_LEN) else {
        return false;
    };
    let len = u32::from_le_bytes(b[..4].try_into().unwrap());
    let kind_len = u16::from_le_bytes([b[20], b[21]]) as usize;
    let flags = u16::from_le_bytes([b[22], b[23]]);
    (FRAME_MIN_BYTES..=FRAME_MAX_BYTES as usize).contains(&(len as usize))
        && len as usize <= bytes.len() - at
        && (1..=KIND_MAX_BYTES).contains(&kind_len)
        && crate::format::record::fixed_len_for_flags(flags).is_some()
}

/// Checks the records of the range `[from, to)`: from its first record (`from` itself for the
/// first range) up to the first that ends at or past `to`, as the sequential verify does,
/// taking the first record's seq and `prev_hash` on trust (the join checks them).
fn check(bytes: &[u8], from: usize, to: usize, first: bool, mark_seq: Option<u64>) -> Found {
    let start = if first {
        Some(from)
    } else {
        (from..to).find(|&at| plausible_start(bytes, at) && scan::frame(&bytes[at..]).is_ok())
    };
    let Some(start) = start else {
        return Found::Nothing { to };
    };
    let Ok(frame) = scan::frame(&bytes[start..]) else {
        return Found::Bad;
    };
    let (first_seq, first_prev) = (frame.seq, frame.prev_hash);
    let mut records = Records::new(
        bytes,
        start,
        Chain {
            next_seq: first_seq,
            prev_hash: first_prev,
        },
    )
    .noting();
    let (mut n, mut at_mark) = (0, None);
    while records.offset() < to as u64 {
        match records.next() {
            Some(Ok(r)) => {
                n += 1;
                if Some(r.seq) == mark_seq {
                    at_mark = Some(r.hash);
                }
            }
            Some(Err(_)) => return Found::Bad,
            None => break,
        }
    }
    Found::Records {
        start,
        end: records.offset() as usize,
        first_seq,
        first_prev,
        records: n,
        last_hash: Records::chain(&records).prev_hash,
        at_mark,
        seen: records.seen().unwrap_or_default(),
    }
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
    use crate::format::record::{encode, encode_digested};

    const START: usize = 16;

    /// `n` chained records of format `version` and varied sizes after a 16-byte stand-in for
    /// a header; returns the bytes, the genesis chain and each record's offset.
    fn journal_of(version: u16, n: u64) -> (Vec<u8>, Chain, Vec<usize>) {
        let genesis = Chain::genesis(Hash([1; 32]));
        let mut b = vec![0u8; START];
        let mut prev = genesis.prev_hash;
        let mut offsets = Vec::new();
        for seq in 1..=n {
            let at = b.len();
            offsets.push(at);
            let payload = vec![seq as u8; 20 + (seq as usize * 37) % 300];
            prev = if version == 1 {
                encode(&mut b, seq, 0, "Ev", &prev, &payload);
                record_hash(&b[at..])
            } else {
                let salt = [seq as u8; 16];
                encode_digested(&mut b, version, seq, 0, "Ev", &prev, &payload, &salt, None)
            };
        }
        (b, genesis, offsets)
    }

    fn journal(n: u64) -> (Vec<u8>, Chain, Vec<usize>) {
        journal_of(1, n)
    }

    /// Every format version's frames are found as record starts: the prefix reaches the end.
    #[test]
    fn records_of_every_format_version_are_all_vouched_for() {
        for version in [1, 2, 3] {
            let (b, genesis, _) = journal_of(version, 200);
            for chunk in [150, 4096] {
                let p = verify_prefix(&b, START, genesis, None, 3, chunk, |_, _| {});
                assert_eq!(p.at, b.len(), "version {version} chunk {chunk}");
                assert_eq!(p.records, 200);
                assert_eq!(p.chain, sequential_end(&b, genesis));
            }
        }
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
