//! The blake3 chain, domain separated. Each purpose gets its own key, derived once from a
//! context string with `blake3::derive_key`, and hashes with `blake3::keyed_hash`:
//!
//! - genesis = keyed(K_genesis, header bytes): the `prev_hash` of record 1, binding the chain
//!   to the file header (and so to the session id and creation time);
//! - record  = keyed(K_record, whole frame, CRC included): the `prev_hash` of the next record
//!   (version 1);
//! - record v2 = keyed(K_record_v2, seq ‖ ts ‖ kind_len ‖ kind ‖ prev_hash ‖ payload_digest),
//!   integers little-endian (version 2: not the payload bytes, so a payload can be erased);
//! - payload digest = keyed(K_payload_v2, salt ‖ payload) (version 2).

use std::fmt;
use std::sync::LazyLock;

pub const HASH_LEN: usize = 32;

pub const GENESIS_CONTEXT: &str = "sjournal 2026-11-29 journal genesis v1";
pub const RECORD_CONTEXT: &str = "sjournal 2026-11-29 journal record v1";

pub const RECORD_V2_CONTEXT: &str = "sjournal 2026-12-03 journal record v2";
pub const PAYLOAD_V2_CONTEXT: &str = "sjournal 2026-12-03 journal payload v2";

static RECORD_V2_KEY: LazyLock<[u8; 32]> =
    LazyLock::new(|| blake3::derive_key(RECORD_V2_CONTEXT, b""));
static PAYLOAD_V2_KEY: LazyLock<[u8; 32]> =
    LazyLock::new(|| blake3::derive_key(PAYLOAD_V2_CONTEXT, b""));

static GENESIS_KEY: LazyLock<[u8; 32]> = LazyLock::new(|| blake3::derive_key(GENESIS_CONTEXT, b""));
static RECORD_KEY: LazyLock<[u8; 32]> = LazyLock::new(|| blake3::derive_key(RECORD_CONTEXT, b""));

/// A 32-byte blake3 digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hash(pub [u8; HASH_LEN]);

impl Hash {
    pub const ZERO: Hash = Hash([0; HASH_LEN]);

    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    pub fn from_hex(s: &str) -> Option<Hash> {
        blake3::Hash::from_hex(s).ok().map(|h| Hash(*h.as_bytes()))
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", self.to_hex())
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

pub fn genesis_hash(header_bytes: &[u8]) -> Hash {
    Hash(*blake3::keyed_hash(&GENESIS_KEY, header_bytes).as_bytes())
}

pub fn record_hash(frame: &[u8]) -> Hash {
    Hash(*blake3::keyed_hash(&RECORD_KEY, frame).as_bytes())
}

/// The record hash of a version-2 frame.
pub fn record_hash_v2(seq: u64, ts_unix_ns: i64, kind: &str, prev: &Hash, digest: &Hash) -> Hash {
    let mut h = blake3::Hasher::new_keyed(&RECORD_V2_KEY);
    h.update(&seq.to_le_bytes());
    h.update(&ts_unix_ns.to_le_bytes());
    h.update(&(kind.len() as u16).to_le_bytes());
    h.update(kind.as_bytes());
    h.update(&prev.0);
    h.update(&digest.0);
    Hash(*h.finalize().as_bytes())
}

/// The payload digest of a version-2 frame: salted, so that once the salt is erased with the
/// payload, nobody can test guesses of a low-entropy payload against the digest.
pub fn payload_digest(salt: &[u8; 16], payload: &[u8]) -> Hash {
    let mut h = blake3::Hasher::new_keyed(&PAYLOAD_V2_KEY);
    h.update(salt);
    h.update(payload);
    Hash(*h.finalize().as_bytes())
}

/// Plain blake3 (no key) of arbitrary bytes, e.g. quarantined tails and injected text.
pub fn content_hash(bytes: &[u8]) -> Hash {
    Hash(*blake3::hash(bytes).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pins the hash functions: a change here is a format change and must bump the version.
    #[test]
    fn hash_stability() {
        assert_eq!(
            genesis_hash(b"sjournal").to_hex(),
            blake3::keyed_hash(&blake3::derive_key(GENESIS_CONTEXT, b""), b"sjournal")
                .to_hex()
                .as_str()
        );
        assert_eq!(
            record_hash(b"").to_hex(),
            "21aa53fd54f4ec8e6e3cc5d0736219734d9a0c1cdfec4c4c05c010d1801cfa8a",
            "record hash of the empty frame changed: this is a format change"
        );
    }
}
