//! The reader: zero-copy iteration over validated records of a memory-mapped journal. This is
//! the one module where `unsafe` (memmap2) lives.
//!
//! # Why the mapping is sound
//!
//! `Mmap::map` is unsafe because the mapped file may change underneath: bytes could change
//! (the slice would not be immutable) or the file could shrink (touching a page past the new
//! end raises SIGBUS). The journal protocol rules out both for the mapped range:
//!
//! 1. The reader maps only `[0, len)` where `len` is the file size it saw *after* taking a
//!    shared lock on the journal file, and holds that lock for as long as the map lives.
//! 2. Writers only ever write at or past the end of the last valid record, which is at or
//!    past `len` unless bytes after it are a damaged tail. They never rewrite bytes of a
//!    valid record.
//! 3. The one operation that shrinks a journal, recovery's truncation of a torn tail, first
//!    takes an exclusive lock on the journal file, which waits for every shared lock (1).
//!    Truncated bytes are never rewritten while a reader is mapped.
//!
//! What can still change under a reader are bytes of a damaged tail inside `[0, len)` (a
//! writer that had them torn does not rewrite them either; recovery cuts them only under the
//! exclusive lock), and bytes of an append in flight: a write becomes visible page by page, so
//! `len` can end inside a record another process is still writing. Every record is validated
//! (length, CRC, seq, and its chain link, or for [`Records::first_link_only`] the first
//! record's) before it is yielded, and validation copies nothing out before checking.
//!
//! # An append in flight is not a torn tail
//!
//! A writer holds its session's lock file (`<stem>.lock`) exclusively from open to close, and
//! it recovered the tail when it opened, so while it holds the lock the only bytes past the
//! last valid record are its own write in progress. The reader tries a shared lock on the
//! writers' lock file before it reads `len`: if it gets it, no append is in flight (it holds
//! the lock until the file is mapped), and an incomplete tail is real damage; if a writer
//! holds it, a damaged tail with nothing valid after it is that writer's unfinished append
//! (or the tail it is about to recover), and the records end before it without an error. A process that ignores the protocol
//! (another program truncating the file) can still fault a reader; we do not defend against
//! that (see "What we assume of the storage" in the `storage` module docs).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::format::hash::genesis_hash;
use crate::format::header::{Header, HeaderError};
use crate::format::record::FrameRef;
use crate::format::Hash;
use crate::journal::paths;
use crate::journal::scan::{self, Chain, Problem, Stop};
use crate::storage::lock::{self, Mode};

/// A journal opened for reading, mapped read-only and protected by a shared lock.
pub struct JournalReader {
    path: PathBuf,
    // Field order matters: the map must be dropped before the file whose lock protects it.
    map: Option<Mmap>,
    /// A writer held the session's lock when `len` was read (see the module documentation).
    writer_active: bool,
    _file: File,
}

/// A record that passed every check, borrowed from the mapping.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub offset: u64,
    pub frame: FrameRef<'a>,
    pub hash: Hash,
}

impl<'a> std::ops::Deref for Record<'a> {
    type Target = FrameRef<'a>;
    fn deref(&self) -> &FrameRef<'a> {
        &self.frame
    }
}

impl JournalReader {
    /// Opens and maps `path`, waiting for the shared lock until `deadline` (None: as long as
    /// it takes).
    pub fn open(path: &Path, deadline: Option<Instant>) -> Result<JournalReader> {
        let file = paths::open_file(path, false, false)?;
        lock::lock(&file, path, Mode::Shared, deadline)?;
        // Held (when we get it) until the file is mapped, so no append starts meanwhile.
        let writers = writers_lock(path)?;
        let writer_active = match &writers {
            None => false,
            Some(w) => match w.try_lock_shared() {
                Ok(()) => false,
                Err(std::fs::TryLockError::WouldBlock) => true,
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
            },
        };
        let len = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        #[allow(unsafe_code)] // the mapping; its soundness argument is in the module docs
        let map = if len == 0 {
            None
        } else {
            // SAFETY: see the module documentation: the shared lock held in `_file` for the
            // life of the map keeps `[0, len)` from being truncated, and writers never rewrite
            // bytes of valid records; every record is validated before use.
            Some(unsafe { Mmap::map(&file) }.map_err(|e| Error::io("mmap", path, e))?)
        };
        drop(writers);
        Ok(JournalReader {
            path: path.to_owned(),
            map,
            writer_active,
            _file: file,
        })
    }

    /// True if a writer held the session's lock when the journal was mapped: bytes past the
    /// last valid record may be its append in flight.
    pub fn writer_active(&self) -> bool {
        self.writer_active
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The mapped bytes: the whole file as it was when opened.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// Decodes the header; returns it with its length and the chain's genesis hash.
    pub fn header(&self) -> std::result::Result<(Header, usize, Hash), HeaderError> {
        let b = self.bytes();
        let (h, len) = Header::decode(b)?;
        Ok((h, len, genesis_hash(&b[..len])))
    }

    /// Drops the mapped pages wholly inside `[from, to)` from this process (`MADV_DONTNEED`),
    /// as [`Records`] does behind its cursor: for readers that walk the mapping themselves
    /// (verify's workers), so the resident set stays bounded whatever the journal's size.
    /// Bytes read later from the range fault back in unchanged. A no-op on an empty journal.
    pub fn release(&self, from: usize, to: usize) {
        if let Some(map) = &self.map {
            release_pages(map, from, to);
        }
    }

    /// Validated records from the first; stops at the first problem, which it yields once as
    /// `Err`. Fails if the header does not decode.
    pub fn records(&self) -> Result<Records<'_>> {
        let (_, hlen, genesis) = self.header().map_err(|e| Error::BadHeader {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        Ok(self.records_from(hlen, Chain::genesis(genesis)))
    }

    /// Validated records from `start`, which must be where a record with the chain's
    /// `next_seq` begins (the end of a snapshot's last record, say).
    pub fn records_from(&self, start: usize, chain: Chain) -> Records<'_> {
        let mut r = Records::new(self.bytes(), start, chain);
        r.tail_in_flight = self.writer_active;
        r.map = self.map.as_ref();
        r
    }
}

/// Opens the writers' lock file of a journal (`<stem>.sjl` -> `<stem>.lock`), if it has one.
fn writers_lock(journal: &Path) -> Result<Option<File>> {
    if journal.extension().is_none_or(|x| x != paths::JOURNAL_EXT) {
        return Ok(None);
    }
    match paths::open_file(&journal.with_extension("lock"), false, false) {
        Ok(f) => Ok(Some(f)),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Iterator over validated records of a byte slice.
pub struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
    chain: Chain,
    done: bool,
    /// End quietly at a damaged tail with nothing valid after it: it is an append in flight.
    tail_in_flight: bool,
    /// The mapping `bytes` come from, whose pages are released behind the iterator.
    map: Option<&'a Mmap>,
    /// Offset up to which pages were released.
    released: usize,
    /// Check every record's `prev_hash` (false: only the first one's, see
    /// [`Records::first_link_only`]).
    every_link: bool,
    /// What verify notes of the records yielded ([`Records::noting`]).
    seen: Option<Seen>,
}

/// What verify notes of the records as it checks them, so that nothing walks the journal a
/// second time: the frames' flags (every record's layout must be its header's format
/// version), the offset of the last record, and the offsets of the few records a report
/// reads again (erased records, `sjournal.erased` and `sjournal.redacted`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The flags of every record, or'ed and and'ed (`flags_and` is `u16::MAX` with none).
    pub flags_or: u16,
    pub flags_and: u16,
    /// The offset of the last record.
    pub last: Option<usize>,
    /// Offsets of the erased, `sjournal.erased` and `sjournal.redacted` records, in file order.
    pub noted: Vec<usize>,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            flags_or: 0,
            flags_and: u16::MAX,
            last: None,
            noted: Vec::new(),
        }
    }
}

impl Seen {
    fn note(&mut self, offset: usize, frame: &FrameRef<'_>) {
        use crate::format::payload::{KIND_ERASED, KIND_REDACTED};
        self.flags_or |= frame.flags;
        self.flags_and &= frame.flags;
        self.last = Some(offset);
        if frame.erased() || frame.kind == KIND_ERASED || frame.kind == KIND_REDACTED {
            self.noted.push(offset);
        }
    }

    /// Appends what was seen of the records after these.
    pub fn then(&mut self, later: Seen) {
        self.flags_or |= later.flags_or;
        self.flags_and &= later.flags_and;
        self.last = later.last.or(self.last);
        self.noted.extend(later.noted);
    }
}

impl<'a> Records<'a> {
    pub fn new(bytes: &'a [u8], start: usize, chain: Chain) -> Records<'a> {
        Records {
            bytes,
            at: start,
            chain,
            done: false,
            tail_in_flight: false,
            map: None,
            released: 0,
            every_link: true,
            seen: None,
        }
    }

    /// Notes what verify needs of each record yielded ([`Seen`]; [`Records::seen`]).
    pub fn noting(mut self) -> Self {
        self.seen = Some(Seen::default());
        self
    }

    /// What was noted of the records yielded so far (None unless [`Records::noting`]).
    pub fn seen(&mut self) -> Option<Seen> {
        self.seen.take()
    }

    /// Checks frames (length, CRC, fields) and seqs as before, but the chain link only of the
    /// first record (it must link to the chain the iterator started from: the genesis hash, or
    /// the snapshot's record), and computes no record hash: each yielded [`Record::hash`] is
    /// [`Hash::ZERO`], and a caller that needs one hashes that frame ([`FrameRef::hash`]).
    /// What loading a state does; `verify` checks every link (why that suffices: the module
    /// docs of `journal::scan`).
    pub fn first_link_only(mut self) -> Self {
        self.every_link = false;
        self
    }

    /// The chain after the last record yielded.
    ///
    /// # Panics
    ///
    /// After [`Records::first_link_only`], which computes no record hashes: its chain is
    /// unknown, and nothing may be appended to or resumed from it.
    pub fn chain(&self) -> Chain {
        assert!(
            self.every_link,
            "Records::chain after first_link_only: no record hash was computed"
        );
        self.chain
    }

    /// Offset just past the last record yielded.
    pub fn offset(&self) -> u64 {
        self.at as u64
    }
}

impl Records<'_> {
    /// Keeps the resident set bounded on large journals: every `RELEASE_STEP_BYTES` the pages
    /// already iterated over are dropped from this process (`MADV_DONTNEED`). Memory then
    /// grows with what the caller keeps (the folded state), not with the journal.
    fn release_behind(&mut self) {
        const RELEASE_STEP_BYTES: usize = 8 << 20;
        let Some(map) = self.map else { return };
        // Release only what lies a full step behind the cursor: the record just yielded (and
        // whatever the caller still reads of its neighbours) stays mapped, so the caller's
        // reads do not fault released pages back in where nothing would release them again.
        if self.at - self.released < 2 * RELEASE_STEP_BYTES {
            return;
        }
        let end = self.at - RELEASE_STEP_BYTES;
        release_pages(map, self.released, end);
        self.released = end / page_size() * page_size();
    }
}

/// Releases the pages of `map` wholly inside `[from, to)` (`from` rounded up, `to` down to a
/// page boundary).
fn release_pages(map: &Mmap, from: usize, to: usize) {
    let page = page_size();
    let from = from.div_ceil(page) * page;
    let to = to.min(map.len()) / page * page;
    if to <= from {
        return;
    }
    // SAFETY: `map` is a read-only, shared, file-backed mapping (`Mmap::map`). Dropping its
    // pages does not change what they read as: a later access (records already yielded still
    // borrow these bytes) faults them back in from the file, whose bytes in this range cannot
    // change while the reader's lock is held (see the module docs).
    #[allow(unsafe_code)]
    let _ =
        unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from) };
}

fn page_size() -> usize {
    rustix::param::page_size()
}

impl<'a> Iterator for Records<'a> {
    type Item = std::result::Result<Record<'a>, Stop>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.at >= self.bytes.len() {
            return None;
        }
        let offset = self.at as u64;
        let problem = match scan::frame(&self.bytes[self.at..]) {
            Ok(frame) if !self.every_link => match self.chain.accept_unhashed(&frame) {
                Ok(()) => {
                    self.at += frame.len();
                    self.release_behind();
                    return Some(Ok(Record {
                        offset,
                        frame,
                        hash: Hash::ZERO,
                    }));
                }
                Err(p) => p,
            },
            Ok(frame) => match self.chain.accept(&frame) {
                Ok(hash) => {
                    if let Some(seen) = &mut self.seen {
                        seen.note(self.at, &frame);
                    }
                    self.at += frame.len();
                    self.release_behind();
                    return Some(Ok(Record {
                        offset,
                        frame,
                        hash,
                    }));
                }
                Err(p) => p,
            },
            Err(e) => Problem::Frame(e),
        };
        self.done = true;
        let tail = &self.bytes[self.at..];
        if self.tail_in_flight
            && problem.is_damage()
            && scan::find_valid_frame_after(tail, self.chain.last_seq()).is_none()
        {
            return None;
        }
        Some(Err(Stop { offset, problem }))
    }
}
