//! Following a journal as it grows (`sjournal tail --follow`). A [`Follower`] remembers where
//! the last record it yielded ended and the chain after it; each [`Follower::poll`] maps the
//! file afresh (a new reader, so a grown file is seen whole and the mapping never outlives
//! the shared lock), validates what was appended since, and yields only new records.
//!
//! Bytes after the last valid record that do not form a valid record yet are not an error
//! here: a write in progress looks exactly like a torn tail to a reader. The follower waits
//! at that offset and reports the problem as [`Poll::pending`]; it is for the caller to
//! decide when a pending problem has lasted long enough to mention. Two things a journal
//! never does are errors: shrinking below records already yielded, and getting another
//! header (the file was replaced).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::Hash;
use crate::journal::reader::Records;
use crate::journal::scan::{Chain, Stop};
use crate::journal::{JournalReader, Record};

pub struct Follower {
    path: PathBuf,
    /// Set once the header was read: the genesis hash, to notice a replaced file.
    genesis: Option<Hash>,
    /// Where the next record starts.
    next_offset: u64,
    chain: Chain,
    /// The file length at the last poll that read it.
    seen_len: u64,
}

/// What one poll found.
#[derive(Debug, Default)]
pub struct Poll {
    /// The file exists (it may not yet, for a session about to start).
    pub exists: bool,
    /// New records yielded.
    pub records: u64,
    /// Bytes after the last valid record that are not (yet) a valid record.
    pub pending: Option<Stop>,
    /// The file length seen.
    pub len: u64,
}

impl Follower {
    pub fn new(path: &Path) -> Follower {
        Follower {
            path: path.to_owned(),
            genesis: None,
            next_offset: 0,
            chain: Chain::genesis(Hash::ZERO),
            seen_len: 0,
        }
    }

    /// The seq of the last record yielded (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.chain.last_seq()
    }

    /// Reads the records appended since the last poll, calling `each` on them in order.
    pub fn poll(&mut self, mut each: impl FnMut(&Record<'_>) -> Result<()>) -> Result<Poll> {
        let len = match std::fs::symlink_metadata(&self.path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Poll::default()),
            Err(e) => return Err(Error::io("stat", &self.path, e)),
        };
        let mut poll = Poll {
            exists: true,
            len,
            ..Poll::default()
        };
        if self.genesis.is_some() && len == self.seen_len {
            return Ok(poll);
        }
        let reader = JournalReader::open(&self.path, None)?;
        let bytes = reader.bytes();
        poll.len = bytes.len() as u64;
        match (reader.header(), self.genesis) {
            // A header still being written: wait for it.
            (Err(crate::format::header::HeaderError::Incomplete { .. }), None) => return Ok(poll),
            (Err(e), _) => {
                return Err(Error::BadHeader {
                    path: self.path.clone(),
                    reason: e.to_string(),
                })
            }
            (Ok((_, hlen, genesis)), None) => {
                self.genesis = Some(genesis);
                self.next_offset = hlen as u64;
                self.chain = Chain::genesis(genesis);
            }
            (Ok((_, _, genesis)), Some(known)) if genesis != known => {
                return Err(Error::Changed {
                    path: self.path.clone(),
                    reason: "its header changed: the journal was replaced by another file".into(),
                })
            }
            (Ok(_), Some(_)) => {}
        }
        if (bytes.len() as u64) < self.next_offset {
            return Err(Error::Changed {
                path: self.path.clone(),
                reason: format!(
                    "it shrank to {} bytes, below the end of seq {} at offset {}",
                    bytes.len(),
                    self.chain.last_seq(),
                    self.next_offset
                ),
            });
        }
        self.seen_len = bytes.len() as u64;
        let mut records = Records::new(bytes, self.next_offset as usize, self.chain);
        for r in records.by_ref() {
            match r {
                Ok(rec) => {
                    each(&rec)?;
                    poll.records += 1;
                    self.next_offset = rec.offset + rec.len() as u64;
                    self.chain = Chain {
                        next_seq: rec.seq + 1,
                        prev_hash: rec.hash,
                    };
                }
                Err(stop) => {
                    // Look again next time even if the length stays the same: the bytes of a
                    // write in progress change in place.
                    self.seen_len = 0;
                    poll.pending = Some(stop);
                }
            }
        }
        Ok(poll)
    }
}
