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
//! exclusive lock). Every record is validated (length, CRC, seq, chain) before it is yielded,
//! and validation copies nothing out before checking. A process that ignores the protocol
//! (another program truncating the file) can still fault a reader; we do not defend against
//! that, see "What we assume of the storage" in journal-format.md.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::format::hash::genesis_hash;
use crate::format::header::{Header, HeaderError};
use crate::format::record::{self, FrameRef};
use crate::format::Hash;
use crate::journal::lock::{self, Mode};
use crate::journal::paths;
use crate::journal::scan::{Chain, Problem, Stop};

/// A journal opened for reading, mapped read-only and protected by a shared lock.
pub struct JournalReader {
    path: PathBuf,
    // Field order matters: the map must be dropped before the file whose lock protects it.
    map: Option<Mmap>,
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
        let len = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: see the module documentation: the shared lock held in `_file` for the
            // life of the map keeps `[0, len)` from being truncated, and writers never rewrite
            // bytes of valid records; every record is validated before use.
            Some(unsafe { Mmap::map(&file) }.map_err(|e| Error::io("mmap", path, e))?)
        };
        Ok(JournalReader {
            path: path.to_owned(),
            map,
            _file: file,
        })
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

    /// Validated records from the first; stops at the first problem, which it yields once as
    /// `Err`. Fails if the header does not decode.
    pub fn records(&self) -> Result<Records<'_>> {
        let (_, hlen, genesis) = self.header().map_err(|e| Error::BadHeader {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        Ok(Records::new(self.bytes(), hlen, Chain::genesis(genesis)))
    }
}

/// Iterator over validated records of a byte slice.
pub struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
    chain: Chain,
    done: bool,
}

impl<'a> Records<'a> {
    pub fn new(bytes: &'a [u8], start: usize, chain: Chain) -> Records<'a> {
        Records {
            bytes,
            at: start,
            chain,
            done: false,
        }
    }

    /// The chain after the last record yielded.
    pub fn chain(&self) -> Chain {
        self.chain
    }

    /// Offset just past the last record yielded.
    pub fn offset(&self) -> u64 {
        self.at as u64
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = std::result::Result<Record<'a>, Stop>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.at >= self.bytes.len() {
            return None;
        }
        let offset = self.at as u64;
        let stop = |problem| Some(Err(Stop { offset, problem }));
        let frame = match record::parse(&self.bytes[self.at..]) {
            Ok(f) => f,
            Err(e) => {
                self.done = true;
                return stop(Problem::Frame(e));
            }
        };
        match self.chain.accept(&frame) {
            Ok(hash) => {
                self.at += frame.len();
                Some(Ok(Record {
                    offset,
                    frame,
                    hash,
                }))
            }
            Err(p) => {
                self.done = true;
                stop(p)
            }
        }
    }
}
