//! The high-water mark codec: the seq and hash of a journal's last acknowledged record, kept
//! in a small file beside the journal (see `journal::hwm` for when it is read and written).
//!
//! ```text
//! offset size field
//!      0    8 magic   b"SJHWM001"
//!      8    8 seq     u64 LE, the last acknowledged record
//!     16   32 hash    its record hash
//!     48    4 crc32   of bytes [0, 48)
//! ```

use crate::format::Hash;

pub const MAGIC: [u8; 8] = *b"SJHWM001";
const SEQ_AT: usize = MAGIC.len();
const HASH_AT: usize = SEQ_AT + 8;
const CRC_AT: usize = HASH_AT + 32;
pub const LEN: usize = CRC_AT + 4;

/// A journal's last acknowledged record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub seq: u64,
    pub hash: Hash,
}

impl Mark {
    pub fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[..SEQ_AT].copy_from_slice(&MAGIC);
        b[SEQ_AT..HASH_AT].copy_from_slice(&self.seq.to_le_bytes());
        b[HASH_AT..CRC_AT].copy_from_slice(&self.hash.0);
        let crc = crc32fast::hash(&b[..CRC_AT]);
        b[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// The mark in `b`, or None if it is not a whole, CRC-valid mark (a lost mark only
    /// weakens rollback detection, so a damaged one reads as absent).
    pub fn decode(b: &[u8]) -> Option<Mark> {
        if b.len() < LEN || b[..SEQ_AT] != MAGIC {
            return None;
        }
        let crc = u32::from_le_bytes(b[CRC_AT..LEN].try_into().ok()?);
        if crc32fast::hash(&b[..CRC_AT]) != crc {
            return None;
        }
        Some(Mark {
            seq: u64::from_le_bytes(b[SEQ_AT..HASH_AT].try_into().ok()?),
            hash: Hash(b[HASH_AT..CRC_AT].try_into().ok()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let m = Mark {
            seq: 42,
            hash: Hash([9; 32]),
        };
        let b = m.encode();
        assert_eq!(Mark::decode(&b), Some(m));
        for i in 0..LEN {
            let mut d = b;
            d[i] ^= 0x10;
            assert_eq!(Mark::decode(&d), None, "byte {i}");
        }
        assert_eq!(Mark::decode(&b[..LEN - 1]), None);
        assert_eq!(Mark::decode(&[]), None);
    }
}
