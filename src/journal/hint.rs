//! The tail hint: where the last record is, kept in the lock file so an append does not have
//! to scan the journal. It is a hint, never trusted: the writer re-reads the record it names
//! and checks its CRC, seq and hash, and falls back to a full scan on any mismatch. It is
//! written after each append without a sync; after a crash it may be stale, which only costs
//! a scan of the records written after it.
//!
//! It is also a witness (see `journal::verify::witness`): it names the last record a writer
//! wrote, so a journal that ends before it lost records. Unlike the high-water mark it may name
//! a record whose sync had not returned yet (group commit writes it before the sync), so it
//! tells of records *written*, not acknowledged.
//!
//! ```text
//! offset size field
//!      0    8 magic          b"SJTAIL01"
//!      8    8 last_frame_at  u64 LE, offset of the last record
//!     16    8 end            u64 LE, end of the last record
//!     24    8 last_seq       u64 LE
//!     32   32 last_hash      record hash of last_seq
//!     64    4 crc32          of bytes [0, 64)
//! ```

use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::format::Hash;
use crate::journal::paths;

pub const MAGIC: [u8; 8] = *b"SJTAIL01";
pub const LEN: usize = 68;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailHint {
    pub last_frame_at: u64,
    pub end: u64,
    pub last_seq: u64,
    pub last_hash: Hash,
}

impl TailHint {
    pub fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..16].copy_from_slice(&self.last_frame_at.to_le_bytes());
        b[16..24].copy_from_slice(&self.end.to_le_bytes());
        b[24..32].copy_from_slice(&self.last_seq.to_le_bytes());
        b[32..64].copy_from_slice(&self.last_hash.0);
        let crc = crc32fast::hash(&b[..64]);
        b[64..68].copy_from_slice(&crc.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Option<TailHint> {
        if b.len() < LEN || b[0..8] != MAGIC {
            return None;
        }
        let crc = u32::from_le_bytes(b[64..68].try_into().unwrap());
        if crc32fast::hash(&b[..64]) != crc {
            return None;
        }
        let u = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        Some(TailHint {
            last_frame_at: u(8),
            end: u(16),
            last_seq: u(24),
            last_hash: Hash(b[32..64].try_into().unwrap()),
        })
    }
}

/// Reads the hint in a lock file without locking (a read torn by a writer's rewrite fails the
/// CRC and reads as none). None if there is no lock file or no whole hint in it.
pub fn read(lock_path: &Path) -> Option<TailHint> {
    let f = paths::open_file(lock_path, false, false).ok()?;
    let mut b = [0u8; LEN];
    f.read_exact_at(&mut b, 0).ok()?;
    TailHint::decode(&b)
}
