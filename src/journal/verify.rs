//! Verify: reads a journal through the mmap reader and checks the header, the binding of the
//! file name to the session id in the header, every frame's length and CRC, contiguous seq,
//! and every chain link. Reports the first problem with its offset and seq. Read-only.
//!
//! Large journals are checked on every core (`verify/chunks.rs`) up to the first range that
//! is not clean; the sequential check goes on from there, so the report is the same whatever
//! the number of workers.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use std::convert::Infallible;

use crate::error::Result;
use crate::format::hash::genesis_hash;
use crate::format::header::{self, Header};
use crate::format::mark::Mark;
use crate::format::Hash;
use crate::journal::paths::{file_stem, JOURNAL_EXT};
use crate::journal::reader::{JournalReader, Records, Seen};
use crate::journal::recovery::{self, Verdict};
use crate::journal::scan::{self, Chain, Problem};
use crate::limits::VERIFY_CHUNK_BYTES;

/// The first problem verify found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub offset: u64,
    /// The seq the record at `offset` should have had.
    pub seq: u64,
    pub what: String,
    /// True if the damage is a torn tail (nothing valid after it), which the next append
    /// will quarantine and cut; false for damage followed by valid records, or an edit.
    pub torn_tail: bool,
}

/// What verify found in one journal. The JSON form (`verify --json`) is this struct.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    pub path: PathBuf,
    pub session_id: Option<String>,
    pub ok: bool,
    pub records: u64,
    pub bytes: u64,
    pub last_seq: u64,
    /// Hash of the last valid record (hex), the value a checkpoint pins.
    pub head: Option<String>,
    pub problem: Option<Finding>,
    /// The journal's high-water mark (its last acknowledged record), if it has one.
    pub acknowledged: Option<Acknowledged>,
    /// True if records the mark (or another witness) names are missing or replaced.
    pub rolled_back: bool,
    /// Every independent witness of how far the journal got, and how each compares with it
    /// (see [`witness`]).
    pub witnesses: Vec<witness::Witness>,
    /// The records erased after the fact (`sjournal erase`), each bound by its chained
    /// `sjournal.erased` record; an erasure that is not bound is a problem instead.
    pub erasures: Vec<Erasure>,
    /// Where the verified records that a report reads again are (erased, `sjournal.erased`,
    /// `sjournal.redacted`) and where the last one is: `verify` lists what was redacted from
    /// these without walking the journal again. Not in the JSON form.
    #[serde(skip)]
    pub seen: Seen,
}

/// An erased record, as verify reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Erasure {
    pub seq: u64,
    /// When the erased record was written (its `ts`).
    pub ts_unix_ns: i64,
    /// The JSON pointer of the field erased; None for the whole payload.
    pub field: Option<String>,
    /// The digest of what was erased (salted: nobody can test a guess against it).
    pub erased_digest: String,
    pub reason: String,
    /// The seq of the `sjournal.erased` record.
    pub recorded_at: u64,
}

/// A high-water mark as `verify --json` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Acknowledged {
    pub seq: u64,
    #[serde(serialize_with = "hex")]
    pub hash: Hash,
}

fn hex<S: serde::Serializer>(h: &Hash, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&h.to_hex())
}

impl From<Mark> for Acknowledged {
    fn from(m: Mark) -> Self {
        Acknowledged {
            seq: m.seq,
            hash: m.hash,
        }
    }
}

mod chunks;
pub mod witness;

use chunks::Prefix;

/// How verify spreads its work over the machine's cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Threads that check records. 1 is the plain sequential verify, the reference the
    /// parallel one is tested against; 0 means one per available core.
    pub workers: usize,
    /// Bytes of records per job (rounded up to whole records). Journals smaller than two
    /// chunks are verified sequentially.
    pub chunk_bytes: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            workers: 0,
            chunk_bytes: VERIFY_CHUNK_BYTES,
        }
    }
}

impl VerifyOptions {
    /// Threads worth starting for `len` bytes of records (1: verify sequentially).
    fn workers_for(&self, len: usize) -> usize {
        if self.workers == 1 || len < 2 * self.chunk_bytes.max(1) {
            return 1;
        }
        match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// Verifies one journal file on every core. `Err` only when the file cannot be read at all.
pub fn verify_file(path: &Path, deadline: Option<Instant>) -> Result<VerifyReport> {
    verify_file_with(path, deadline, VerifyOptions::default())
}

/// [`verify_file`] with the work spread as `opts` says. Whatever the options, the report is
/// the same: the parallel verify finds the first problem in file order, as the sequential
/// one does (see `verify/chunks.rs`).
pub fn verify_file_with(
    path: &Path,
    deadline: Option<Instant>,
    opts: VerifyOptions,
) -> Result<VerifyReport> {
    // The witnesses first (the mark among them): they name only records written before them,
    // so the journal mapped after them holds those, whatever writers do meanwhile (no false
    // alarm).
    let mut witnesses = witness::read(path);
    let mark = witnesses.take_mark();
    let reader = JournalReader::open(path, deadline)?;
    let bytes = reader.bytes();
    let prefix = |start: usize, chain, mark_seq| match opts.workers_for(bytes.len() - start) {
        1 => Prefix::empty(start, chain),
        workers => chunks::verify_prefix(
            bytes,
            start,
            chain,
            mark_seq,
            workers,
            opts.chunk_bytes.max(1),
            |from, to| reader.release(from, to),
        ),
    };
    let (mut report, checked) = verify_checked(path, bytes, mark, prefix, |start, chain| {
        reader.records_from(start, chain)
    })?;
    witnesses.judge(
        &mut report,
        witness::Verified {
            bytes,
            valid_end: checked.valid_end,
            at_mark: checked.at_mark,
        },
    );
    Ok(report)
}

/// What the checks saw besides the report, for the witnesses.
#[derive(Debug, Clone, Copy, Default)]
struct Checked {
    /// Where the valid records end.
    valid_end: u64,
    /// The seq of the mark and the hash of the record there, if it was seen.
    at_mark: Option<(u64, Hash)>,
}

/// [`verify_bytes`], and then the witnesses read before the bytes (see [`witness::read`])
/// compared with them: what `repair` checks a journal with.
pub fn verify_bytes_witnessed<'b>(
    path: &Path,
    bytes: &'b [u8],
    mut witnesses: witness::Witnesses,
    records: impl FnOnce(usize, Chain) -> Records<'b>,
) -> Result<VerifyReport> {
    let mark = witnesses.take_mark();
    let (mut report, checked) =
        verify_checked(path, bytes, mark, |s, c, _| Prefix::empty(s, c), records)?;
    witnesses.judge(
        &mut report,
        witness::Verified {
            bytes,
            valid_end: checked.valid_end,
            at_mark: checked.at_mark,
        },
    );
    Ok(report)
}

/// Verifies the bytes of a journal, read with `mark` (its high-water mark, read before the
/// bytes). `records(start, chain)` iterates the records from the header on: a mapped reader's
/// (which knows whether an append may be in flight), or [`Records::new`] for bytes no writer
/// can be extending (a caller holding the session's lock).
pub fn verify_bytes<'b>(
    path: &Path,
    bytes: &'b [u8],
    mark: Result<Option<Mark>>,
    records: impl FnOnce(usize, Chain) -> Records<'b>,
) -> Result<VerifyReport> {
    verify_checked(path, bytes, mark, |s, c, _| Prefix::empty(s, c), records).map(|(r, _)| r)
}

/// The checks of verify. `prefix(start, chain, mark_seq)` vouches for the records from
/// `start` up to where it returns (all valid: the parallel check); `records` then verifies on
/// from there, sequentially, and reports the first problem.
fn verify_checked<'b>(
    path: &Path,
    bytes: &'b [u8],
    mark: Result<Option<Mark>>,
    prefix: impl FnOnce(usize, Chain, Option<u64>) -> Prefix,
    records: impl FnOnce(usize, Chain) -> Records<'b>,
) -> Result<(VerifyReport, Checked)> {
    let mut checked = Checked::default();
    let mut report = VerifyReport {
        path: path.to_owned(),
        session_id: None,
        ok: false,
        records: 0,
        bytes: bytes.len() as u64,
        last_seq: 0,
        head: None,
        problem: None,
        acknowledged: mark.as_ref().ok().copied().flatten().map(Into::into),
        rolled_back: false,
        witnesses: Vec::new(),
        erasures: Vec::new(),
        seen: Seen::default(),
    };
    let finding = |offset, seq, what: String| Finding {
        offset,
        seq,
        what,
        torn_tail: false,
    };
    let mark = match mark {
        Ok(m) => m,
        Err(e) => {
            report.problem = Some(finding(
                0,
                0,
                format!("high-water mark: {e}; rollback cannot be checked"),
            ));
            return Ok((report, checked));
        }
    };
    let (header, hlen) = match Header::decode(bytes) {
        Ok(h) => h,
        Err(e) => {
            let head = &bytes[..bytes.len().min(header::MAX_LEN)];
            let what = if recovery::is_torn_header(head, bytes.len() as u64) && mark.is_none() {
                format!("torn header: {e} (an interrupted creation: the next append quarantines it and starts afresh)")
            } else {
                format!("bad header: {e}")
            };
            report.problem = Some(finding(0, 0, what));
            return Ok((report, checked));
        }
    };
    let genesis = genesis_hash(&bytes[..hlen]);
    report.session_id = Some(header.session_id.clone());
    report.head = Some(genesis.to_hex());
    if let Some(expected) = expected_stem(path) {
        let actual = file_stem(&header.session_id).unwrap_or_default();
        if expected != actual {
            report.problem = Some(finding(
                0,
                0,
                format!(
                    "file name says session file {expected:?} but the header names session {:?} \
                     (file {actual:?}): the journal was moved or replaced",
                    header.session_id
                ),
            ));
            return Ok((report, checked));
        }
    }
    let done = prefix(hlen, Chain::genesis(genesis), mark.map(|m| m.seq));
    report.records = done.records;
    let mut at_mark = done.at_mark;
    let (mut last_seq, mut head) = (done.chain.last_seq(), done.chain.prev_hash);
    let mut records = records(done.at, done.chain).noting();
    let stop = loop {
        match records.next() {
            Some(Ok(rec)) => {
                report.records += 1;
                (last_seq, head) = (rec.seq, rec.hash);
                if mark.is_some_and(|m| m.seq == rec.seq) {
                    at_mark = Some(rec.hash);
                }
            }
            Some(Err(stop)) => break Some(stop),
            None => break None,
        }
    };
    report.last_seq = last_seq;
    report.head = Some(head.to_hex());
    checked.valid_end = records.offset();
    report.seen = done.seen;
    report.seen.then(records.seen().unwrap_or_default());
    checked.at_mark = mark.zip(at_mark).map(|(m, h)| (m.seq, h));
    if let Some(stop) = stop {
        let verdict = recovery::classify(
            Some(&stop),
            bytes.len() as u64,
            last_seq,
            mark.map(|m| m.seq),
            |offset, _| Ok::<_, Infallible>(&bytes[offset as usize..]),
        )
        .unwrap_or_else(|never| match never {});
        let (what, torn) = match verdict {
            Verdict::TornTail { tail, .. } => (
                format!(
                    "torn tail of {} bytes: {} (the next append quarantines and cuts it)",
                    tail.len(),
                    stop.problem
                ),
                true,
            ),
            Verdict::Corrupt { reason, .. } => {
                let mut what = reason.to_string();
                if let Problem::SeqMismatch { .. }
                | Problem::ChainBroken { .. }
                | Problem::PayloadAltered { .. } = stop.problem
                {
                    what.push_str(" (tampering or a copy from another journal)");
                }
                (what, false)
            }
            Verdict::Clean => unreachable!("a stop is never clean"),
        };
        report.problem = Some(Finding {
            offset: stop.offset,
            seq: last_seq + 1,
            what,
            torn_tail: torn,
        });
        return Ok((report, checked));
    }
    // Rows 23, 24: the records end before the acknowledged one, or hold another in its place.
    if let Some(m) = mark.filter(|m| m.seq > 0) {
        let last = report.last_seq;
        let held = match at_mark {
            Some(found) => recovery::check_mark(m.seq, found, m.seq, m.hash),
            None => recovery::check_mark(last, Hash::ZERO, m.seq, m.hash),
        };
        if let Err(c) = held {
            report.rolled_back = true;
            report.problem = Some(finding(bytes.len() as u64, last + 1, c.to_string()));
            return Ok((report, checked));
        }
    }
    match erasures_seen(
        bytes,
        hlen,
        checked.valid_end as usize,
        header.format_version,
        &report.seen,
    ) {
        Ok(list) => report.erasures = list,
        Err((offset, seq, what)) => {
            report.problem = Some(finding(offset, seq, what));
            return Ok((report, checked));
        }
    }
    report.ok = true;
    Ok((report, checked))
}

/// The erased records of `bytes[hlen..end]` (records the chain checks have passed), each
/// checked against the `sjournal.erased` record that names it: salt zeroed, and the payload
/// left empty (whole payload) or with the digest the erasure bound (a field). Also checks
/// that every frame has the layout of the header's format version. Reads each frame's fixed
/// fields only, and decodes just the erased and erasure records. Err: (offset, seq, what).
pub(crate) fn erasures(
    bytes: &[u8],
    hlen: usize,
    end: usize,
    version: u16,
) -> std::result::Result<Vec<Erasure>, (u64, u64, String)> {
    let mut at = hlen;
    let every = std::iter::from_fn(move || {
        (at < end).then(|| {
            let here = at;
            at += u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            here
        })
    });
    erasures_at(bytes, version, every)
}

/// [`erasures`] from what the verify pass noted ([`Seen`]): only the noted records are read
/// again, unless the flags say some record's layout is not the format version's (then every
/// record is, to name the first).
fn erasures_seen(
    bytes: &[u8],
    hlen: usize,
    end: usize,
    version: u16,
    seen: &Seen,
) -> std::result::Result<Vec<Erasure>, (u64, u64, String)> {
    use crate::format::record::{version_flags, FLAG_DIGESTED, FLAG_V3};
    if seen.last.is_none() && end > hlen {
        // Records that were not noted (read without `Records::noting`): walk them all.
        return erasures(bytes, hlen, end, version);
    }
    const LAYOUT: u16 = FLAG_DIGESTED | FLAG_V3;
    let want = version_flags(version);
    let layout_ok =
        seen.last.is_none() || (seen.flags_and & LAYOUT == want && seen.flags_or & LAYOUT == want);
    if !layout_ok {
        return erasures(bytes, hlen, end, version);
    }
    erasures_at(bytes, version, seen.noted.iter().copied())
}

/// [`erasures`] over the records at `offsets` (record boundaries of verified records, in
/// file order).
fn erasures_at(
    bytes: &[u8],
    version: u16,
    offsets: impl Iterator<Item = usize>,
) -> std::result::Result<Vec<Erasure>, (u64, u64, String)> {
    use crate::format::payload::{decode_system, Erased, KIND_ERASED};
    use crate::format::record::{flags_version, FIXED_LEN_V2, FLAG_ERASED};
    use std::collections::BTreeMap;
    let mut erased = Vec::new(); // (offset, frame)
    let mut by: BTreeMap<u64, (u64, u64, Erased)> = BTreeMap::new(); // target -> (offset, seq, record)
    for at in offsets {
        let b = &bytes[at..];
        let seq = u64::from_le_bytes(b[4..12].try_into().unwrap());
        let flags = u16::from_le_bytes([b[22], b[23]]);
        if flags_version(flags) != version {
            return Err((
                at as u64,
                seq,
                format!("record seq {seq} has flags {flags:#x}, not the layout of format version {version} (the record was replaced)"),
            ));
        }
        let kind_len = u16::from_le_bytes([b[20], b[21]]) as usize;
        let is_erasure =
            version >= 2 && b[FIXED_LEN_V2..FIXED_LEN_V2 + kind_len] == *KIND_ERASED.as_bytes();
        if flags & FLAG_ERASED != 0 || is_erasure {
            let f = scan::frame(b).expect("verified above");
            if f.erased() && crate::format::payload::is_system_kind(f.kind) {
                // Only an event's payload can be erased: an erased system record (an erasure
                // record, a context note, a memory item) would let its content be replaced
                // with nothing binding the new one.
                return Err((
                    at as u64,
                    seq,
                    format!(
                        "record seq {seq} is a system record ({}) marked erased; only an event's \
                         payload can be erased (the record was altered)",
                        f.kind
                    ),
                ));
            }
            if is_erasure {
                let e: Erased = decode_system(f.seq, f.payload).map_err(|e| {
                    (
                        at as u64,
                        seq,
                        format!("sjournal.erased record seq {seq}: {e}"),
                    )
                })?;
                if e.seq >= seq {
                    return Err((
                        at as u64,
                        seq,
                        format!(
                            "sjournal.erased record seq {seq} names seq {}, which is not before it",
                            e.seq
                        ),
                    ));
                }
                if let Some((_, other, _)) = by.insert(e.seq, (at as u64, seq, e)) {
                    return Err((
                        at as u64,
                        seq,
                        format!(
                            "sjournal.erased records seq {other} and {seq} name the same record"
                        ),
                    ));
                }
            } else {
                erased.push((at as u64, f));
            }
        }
    }
    let mut out = Vec::with_capacity(erased.len());
    for (offset, f) in erased {
        let seq = f.seq;
        let bad = |what: String| {
            Err((
                offset,
                seq,
                format!("record seq {seq} is marked erased but {what}"),
            ))
        };
        let Some((_, recorded_at, e)) = by.remove(&seq) else {
            return bad("no sjournal.erased record names it (the record was altered)".into());
        };
        if f.salt != [0; 16] {
            return bad("its salt was kept".into());
        }
        let left = match (&e.field, &e.new_payload_digest) {
            (None, None) => f.payload.is_empty() && e.erased_digest == f.payload_digest.to_hex(),
            (Some(_), Some(d)) => *d == crate::journal::erase::left_digest(f.payload).to_hex(),
            _ => false,
        };
        if !left {
            return bad(format!(
                "its payload is not what its erasure (seq {recorded_at}) left (the record was altered)"
            ));
        }
        out.push(Erasure {
            seq,
            ts_unix_ns: f.ts_unix_ns,
            field: e.field,
            erased_digest: e.erased_digest,
            reason: e.reason,
            recorded_at,
        });
    }
    if let Some((target, (offset, seq, _))) = by.into_iter().next() {
        return Err((offset, seq, format!("sjournal.erased record seq {seq} names seq {target}, which is not erased (the record was restored or replaced)")));
    }
    Ok(out)
}

/// The session file stem a journal's name claims: `<stem>.sjl` or `<stem>.rescue.sjl`.
fn expected_stem(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let base = name.strip_suffix(&format!(".{JOURNAL_EXT}"))?;
    Some(base.strip_suffix(".rescue").unwrap_or(base).to_owned())
}

impl VerifyReport {
    /// The report for a journal that could not be read at all (a symlink in its place, a
    /// directory by its name, a permission error): a finding at offset 0 saying why.
    pub fn unreadable(path: &Path, error: &crate::Error) -> VerifyReport {
        VerifyReport {
            path: path.to_owned(),
            session_id: None,
            ok: false,
            records: 0,
            bytes: 0,
            last_seq: 0,
            head: None,
            problem: Some(Finding {
                offset: 0,
                seq: 0,
                what: format!("cannot be read: {error}"),
                torn_tail: false,
            }),
            acknowledged: None,
            rolled_back: false,
            witnesses: Vec::new(),
            erasures: Vec::new(),
            seen: Seen::default(),
        }
    }

    pub fn summary(&self) -> String {
        match &self.problem {
            None => {
                let mut s = format!(
                    "ok  {}  {} records, seq 1..={}, head {}",
                    self.path.display(),
                    self.records,
                    self.last_seq,
                    self.head.as_deref().unwrap_or("-")
                );
                for e in &self.erasures {
                    s.push_str(&format!(
                        "\n    erased seq {} ({}, written at {}): digest {}, reason {:?}, recorded at seq {}",
                        e.seq,
                        e.field.as_deref().map_or("whole payload".into(), |f| format!("field {f}")),
                        crate::format::rfc3339(e.ts_unix_ns),
                        e.erased_digest,
                        e.reason,
                        e.recorded_at
                    ));
                }
                s
            }
            Some(f) => format!(
                "BAD {}  at offset {} (seq {}): {}  [{} valid records before it]",
                self.path.display(),
                f.offset,
                f.seq,
                f.what,
                self.records
            ),
        }
    }
}
