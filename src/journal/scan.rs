//! Validation shared by every path that reads records: the writer's recovery scan, the mmap
//! reader, verify and inspect. A record is valid when its frame parses (length, CRC, fields),
//! its seq is the next one, and its `prev_hash` is the hash of the record before it.
//!
//! # What a load of the state checks, and why not every link
//!
//! Loading a session's state (`snapshot::load_paths`: `state`, `context`, `show`, memory, and
//! the hook's reads when it cannot take the session's lock; and the fold under the session's
//! lock, the hook's `Session::load`: the snapshot, then the tail after it) checks, before it
//! folds a record: its length, its CRC, its fields and that its seq is the next one; and the
//! chain link of the *first* record it folds (to the snapshot's record, or to the header's
//! genesis hash for a full replay): [`Links::First`]. With a snapshot, the snapshot's own
//! checks come first: its CRC, body hash and state hash, and its binding to the journal (the
//! record at its `frame_offset` must parse with its `seq` and hash to its `chain_hash`). The
//! record hash of the last record folded is computed once, for the next snapshot.
//!
//! It does **not** re-hash every record to check every link; `verify` does. Why:
//!
//! - A link check is a blake3 of the whole frame, the largest cost of a cold load after the
//!   fold itself (BENCHMARKS.md, "loads leave every link to verify").
//! - What links catch and CRCs do not is a record rewritten *with a valid CRC*, or records
//!   reordered, copied or removed: deliberate edits (a torn write or bit rot fails the CRC; a
//!   missing or repeated record fails the seq check, which loads keep). Loads cannot prove
//!   integrity anyway: a rewrite of the last record, or of everything after a snapshot's
//!   record together with the chain, passes any load-time check; only a head kept elsewhere
//!   (a checkpoint, the high-water mark) and `verify` against it can tell.
//! - A load that found a broken link could only fold the records before it and warn, as it
//!   does for a bad CRC.
//! - The hook's loads fold a snapshot plus a short tail (a snapshot is written every 128
//!   records), so for the hook the difference is small; it matters for full replays.
//!
//! So: a bad CRC, a seq out of order, a first record that does not link, or a snapshot that
//! does not bind, stops or rejects the load with a warning; an edit that keeps CRCs valid is
//! for `verify` (every link, the high-water mark) and `verify --checkpoint` to find. `log`,
//! `inspect`, replay and `verify` check every link ([`Links::Every`]), and so does the writer
//! when it opens a session and finds its end (from the tail hint's record on, or from the
//! header), since recovery must cut only a provably torn tail.

use crate::event::EventKind;
use crate::format::record::{self, FrameError, FrameRef, FRAME_MIN_BYTES};
use crate::format::Hash;
use crate::limits::{FRAME_MAX_BYTES, SCAN_CHUNK_BYTES};
use crate::storage::Storage;

/// Parses the frame at the start of `buf`, as the journal's readers do: the kinds of the
/// events this build knows (nearly every record) are taken by name ([`EventKind::known_name`],
/// a few comparisons), every other kind is checked byte by byte ([`record::parse_known`]).
#[inline]
pub fn frame(buf: &[u8]) -> Result<FrameRef<'_>, FrameError> {
    record::parse_known(buf, EventKind::known_name)
}

/// What is wrong with the bytes at an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    Frame(FrameError),
    /// A CRC-valid record with the wrong seq (deleted, reordered or inserted records).
    SeqMismatch {
        expected: u64,
        found: u64,
    },
    /// A CRC-valid record whose `prev_hash` is not the previous record's hash.
    ChainBroken {
        seq: u64,
    },
    /// A CRC-valid version-2 or -3 record whose payload is not what its digest commits to.
    PayloadAltered {
        seq: u64,
    },
}

impl Problem {
    /// True for damage a torn write or bit rot can produce; false for a CRC-valid record that
    /// does not belong where it is, which only an edit or a bug produces.
    pub fn is_damage(&self) -> bool {
        matches!(self, Problem::Frame(e) if e.is_damage())
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Frame(e) => e.fmt(f),
            Problem::SeqMismatch { expected, found } => write!(
                f,
                "record has seq {found} where seq {expected} was expected (records deleted, reordered or inserted)"
            ),
            Problem::ChainBroken { seq } => write!(
                f,
                "record seq {seq} does not link to the record before it (prev_hash mismatch: a record was altered or replaced)"
            ),
            Problem::PayloadAltered { seq } => write!(
                f,
                "record seq {seq}'s payload does not match its payload digest (the record was altered)"
            ),
        }
    }
}

/// The running state of the chain: what the next record must carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chain {
    pub next_seq: u64,
    pub prev_hash: Hash,
}

impl Chain {
    pub fn genesis(genesis: Hash) -> Chain {
        Chain {
            next_seq: 1,
            prev_hash: genesis,
        }
    }

    pub fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }

    /// Checks `frame`'s seq, and its link only if it is the first frame since the chain was
    /// set from a known hash, and advances past it without hashing it: afterwards
    /// `prev_hash` is [`Hash::ZERO`] (unknown) and later frames' links are not checked.
    pub fn accept_unhashed(&mut self, frame: &FrameRef<'_>) -> Result<(), Problem> {
        if frame.seq != self.next_seq {
            return Err(Problem::SeqMismatch {
                expected: self.next_seq,
                found: frame.seq,
            });
        }
        if self.prev_hash != Hash::ZERO && frame.prev_hash != self.prev_hash {
            return Err(Problem::ChainBroken { seq: frame.seq });
        }
        self.next_seq += 1;
        self.prev_hash = Hash::ZERO;
        Ok(())
    }

    /// Checks `frame` against the chain and advances past it; returns its hash.
    pub fn accept(&mut self, frame: &FrameRef<'_>) -> Result<Hash, Problem> {
        if frame.seq != self.next_seq {
            return Err(Problem::SeqMismatch {
                expected: self.next_seq,
                found: frame.seq,
            });
        }
        if frame.prev_hash != self.prev_hash {
            return Err(Problem::ChainBroken { seq: frame.seq });
        }
        if !frame.payload_matches() {
            return Err(Problem::PayloadAltered { seq: frame.seq });
        }
        let h = frame.hash();
        self.next_seq += 1;
        self.prev_hash = h;
        Ok(h)
    }
}

/// Looks for any CRC-valid frame that starts after the first byte of `tail` (the bytes from
/// the first bad record to the end of the file) and could follow a record with seq
/// `last_seq`. Returns its offset within `tail`. Cheap plausibility checks (length, seq
/// range) run before the CRC, so a scan over garbage costs little more than reading it.
pub fn find_valid_frame_after(tail: &[u8], last_seq: u64) -> Option<usize> {
    let max_records = (tail.len() / FRAME_MIN_BYTES) as u64 + 1;
    (1..tail.len().saturating_sub(FRAME_MIN_BYTES - 1)).find(|&at| {
        let b = &tail[at..];
        let Some(len) = record::peek_len(b) else {
            return false;
        };
        if (len as usize) < FRAME_MIN_BYTES || len > FRAME_MAX_BYTES || len as usize > b.len() {
            return false;
        }
        let seq = u64::from_le_bytes(b[4..12].try_into().unwrap());
        if seq <= last_seq || seq > last_seq + max_records {
            return false;
        }
        frame(b).is_ok()
    })
}

/// The offset (within `tail`, after its first byte) of the next CRC-valid frame, whatever
/// its seq. A variant of [`find_valid_frame_after`] that does not
/// assume the records after damage continue the sequence, so reordered or foreign records
/// are found too. The length check runs before the CRC, so scanning garbage stays cheap.
pub fn find_any_frame_after(tail: &[u8]) -> Option<usize> {
    (1..tail.len().saturating_sub(FRAME_MIN_BYTES - 1)).find(|&at| {
        let b = &tail[at..];
        match record::peek_len(b) {
            Some(len) if (len as usize) >= FRAME_MIN_BYTES && len <= FRAME_MAX_BYTES => {
                len as usize <= b.len() && frame(b).is_ok()
            }
            _ => false,
        }
    })
}

/// Where a scan stopped early and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub offset: u64,
    pub problem: Problem,
}

/// Result of scanning a journal's records from some offset to the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanEnd {
    /// The chain after the last valid record.
    pub chain: Chain,
    /// End of the last valid record.
    pub end: u64,
    /// Start of the last valid record (None if the scan accepted none).
    pub last_frame_at: Option<u64>,
    pub records: u64,
    /// Set if bytes at `end` are not a valid record.
    pub stop: Option<Stop>,
}

/// How much of the chain a scan checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Every record's link to the one before it (a blake3 of every frame): what recovery
    /// and the writer's open need, to cut only a provably torn tail.
    Every,
    /// The first record's link to the chain the scan starts from (the header's genesis or
    /// a snapshot's head), then CRCs and seqs: what a fold of the state checks (the module
    /// docs say why). The returned chain's
    /// `prev_hash` is then unknown ([`Hash::ZERO`]).
    First,
}

/// Scans records in `[start, len)` of a storage through a chunked buffer, so memory stays
/// bounded by the largest frame whatever the journal's size.
pub fn scan_storage<S: Storage + ?Sized>(
    storage: &S,
    start: u64,
    len: u64,
    chain: Chain,
) -> std::io::Result<ScanEnd> {
    scan_storage_with(storage, start, len, chain, Links::Every, &mut |_, _| {})
}

/// [`scan_storage`], checking `links`, calling `visit(offset, record)` for every valid record
/// (the session's state is folded from the writer's own storage this way, without a second
/// open).
pub fn scan_storage_with<S: Storage + ?Sized>(
    storage: &S,
    start: u64,
    len: u64,
    mut chain: Chain,
    links: Links,
    visit: &mut dyn FnMut(u64, &FrameRef<'_>),
) -> std::io::Result<ScanEnd> {
    let mut buf: Vec<u8> = Vec::new();
    let mut buf_at = start; // file offset of buf[0]
    let mut pos = 0usize;
    let mut records = 0;
    let mut last_frame_at = None;
    loop {
        let at = buf_at + pos as u64;
        if at == len {
            return Ok(ScanEnd {
                chain,
                end: at,
                last_frame_at,
                records,
                stop: None,
            });
        }
        let stop = |problem| Stop {
            offset: at,
            problem,
        };
        match frame(&buf[pos..]) {
            Ok(frame) => {
                let accepted = match links {
                    Links::Every => chain.accept(&frame).map(drop),
                    Links::First => chain.accept_unhashed(&frame),
                };
                if let Err(p) = accepted {
                    return Ok(ScanEnd {
                        chain,
                        end: at,
                        last_frame_at,
                        records,
                        stop: Some(stop(p)),
                    });
                }
                visit(at, &frame);
                last_frame_at = Some(at);
                records += 1;
                pos += frame.len();
            }
            Err(FrameError::Incomplete { need, .. }) if buf_at + (buf.len() as u64) < len => {
                buf.drain(..pos);
                buf_at += pos as u64;
                pos = 0;
                let want = need.max(SCAN_CHUNK_BYTES) as u64;
                let have = buf.len() as u64;
                let more = (want.saturating_sub(have)).min(len - buf_at - have) as usize;
                let old = buf.len();
                buf.resize(old + more, 0);
                storage.read_exact_at(&mut buf[old..], buf_at + old as u64)?;
            }
            Err(e) => {
                return Ok(ScanEnd {
                    chain,
                    end: at,
                    last_frame_at,
                    records,
                    stop: Some(stop(Problem::Frame(e))),
                })
            }
        }
    }
}
