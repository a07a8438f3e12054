//! The snapshot file header.
//!
//! ```text
//! offset size field
//!      0    8 magic          b"SJSNAPST"
//!      8    2 format_version u16 LE (FORMAT_VERSION)
//!     10    2 flags          u16 LE, must be 0
//!     12    4 fold_version   u32 LE (fold::FOLD_VERSION of the writer)
//!     16    8 seq            u64 LE, last record folded into the state
//!     24    8 frame_offset   u64 LE, journal offset of that record
//!     32    8 end_offset     u64 LE, journal offset just past it: the tail starts here
//!     40   32 chain_hash     record hash of that record (the journal's chain at `seq`)
//!     72   32 state_hash     fold::hash_encoded(body)
//!    104   32 body_blake3    blake3 (unkeyed) of the body
//!    136    8 body_len       u64 LE
//!    144    4 crc32          crc32fast (IEEE) of bytes [0, 144)
//!    148    n body           State::encode() (rmp-serde)
//! ```

use crate::format::{Hash, HASH_LEN};

pub const MAGIC: [u8; 8] = *b"SJSNAPST";
pub const FORMAT_VERSION: u16 = 1;

const MAGIC_AT: usize = 0;
const VERSION_AT: usize = MAGIC_AT + 8;
const FLAGS_AT: usize = VERSION_AT + 2;
const FOLD_AT: usize = FLAGS_AT + 2;
const SEQ_AT: usize = FOLD_AT + 4;
const FRAME_AT: usize = SEQ_AT + 8;
const END_AT: usize = FRAME_AT + 8;
const CHAIN_AT: usize = END_AT + 8;
const STATE_AT: usize = CHAIN_AT + HASH_LEN;
const BODY_HASH_AT: usize = STATE_AT + HASH_LEN;
const BODY_LEN_AT: usize = BODY_HASH_AT + HASH_LEN;
const CRC_AT: usize = BODY_LEN_AT + 8;
/// Bytes before the body.
pub const HEADER_LEN: usize = CRC_AT + 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotHeader {
    pub format_version: u16,
    pub fold_version: u32,
    pub seq: u64,
    pub frame_offset: u64,
    pub end_offset: u64,
    pub chain_hash: Hash,
    pub state_hash: Hash,
    pub body_blake3: Hash,
    pub body_len: u64,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn hash_at(b: &[u8], at: usize) -> Hash {
    Hash(b[at..at + HASH_LEN].try_into().unwrap())
}

impl SnapshotHeader {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[MAGIC_AT..VERSION_AT].copy_from_slice(&MAGIC);
        b[VERSION_AT..FLAGS_AT].copy_from_slice(&self.format_version.to_le_bytes());
        b[FOLD_AT..SEQ_AT].copy_from_slice(&self.fold_version.to_le_bytes());
        b[SEQ_AT..FRAME_AT].copy_from_slice(&self.seq.to_le_bytes());
        b[FRAME_AT..END_AT].copy_from_slice(&self.frame_offset.to_le_bytes());
        b[END_AT..CHAIN_AT].copy_from_slice(&self.end_offset.to_le_bytes());
        b[CHAIN_AT..STATE_AT].copy_from_slice(&self.chain_hash.0);
        b[STATE_AT..BODY_HASH_AT].copy_from_slice(&self.state_hash.0);
        b[BODY_HASH_AT..BODY_LEN_AT].copy_from_slice(&self.body_blake3.0);
        b[BODY_LEN_AT..CRC_AT].copy_from_slice(&self.body_len.to_le_bytes());
        let crc = crc32fast::hash(&b[..CRC_AT]);
        b[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes and checks magic, CRC and flags. Versions are returned as found: whether they
    /// are usable is the loader's call.
    pub fn decode(b: &[u8]) -> Result<SnapshotHeader, String> {
        if b.len() < HEADER_LEN {
            return Err(format!(
                "the file is {} bytes, shorter than a snapshot header ({HEADER_LEN})",
                b.len()
            ));
        }
        if b[MAGIC_AT..VERSION_AT] != MAGIC {
            return Err("not a snapshot (bad magic)".into());
        }
        let stored = u32::from_le_bytes(b[CRC_AT..HEADER_LEN].try_into().unwrap());
        let computed = crc32fast::hash(&b[..CRC_AT]);
        if stored != computed {
            return Err(format!(
                "header CRC mismatch: stored {stored:08x}, computed {computed:08x}"
            ));
        }
        if b[FLAGS_AT..FOLD_AT] != [0, 0] {
            return Err("unknown header flags".into());
        }
        Ok(SnapshotHeader {
            format_version: u16::from_le_bytes([b[VERSION_AT], b[VERSION_AT + 1]]),
            fold_version: u32::from_le_bytes(b[FOLD_AT..SEQ_AT].try_into().unwrap()),
            seq: u64_at(b, SEQ_AT),
            frame_offset: u64_at(b, FRAME_AT),
            end_offset: u64_at(b, END_AT),
            chain_hash: hash_at(b, CHAIN_AT),
            state_hash: hash_at(b, STATE_AT),
            body_blake3: hash_at(b, BODY_HASH_AT),
            body_len: u64_at(b, BODY_LEN_AT),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_every_flip_detected() {
        let h = SnapshotHeader {
            format_version: FORMAT_VERSION,
            fold_version: 7,
            seq: 42,
            frame_offset: 1000,
            end_offset: 1100,
            chain_hash: Hash([1; 32]),
            state_hash: Hash([2; 32]),
            body_blake3: Hash([3; 32]),
            body_len: 99,
        };
        let b = h.encode();
        assert_eq!(HEADER_LEN, 148);
        assert_eq!(SnapshotHeader::decode(&b).unwrap(), h);
        for bit in 0..HEADER_LEN * 8 {
            let mut c = b;
            c[bit / 8] ^= 1 << (bit % 8);
            assert!(SnapshotHeader::decode(&c).is_err(), "bit {bit}");
        }
    }
}
