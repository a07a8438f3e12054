//! The blake3 chain, domain separated. Each purpose gets its own key, derived once from a
//! context string with `blake3::derive_key`, and hashes with `blake3::keyed_hash`:
//!
//! - genesis = keyed(K_genesis, header bytes): the `prev_hash` of record 1, binding the chain
//!   to the file header (and so to the session id and creation time);
//! - record  = keyed(K_record, whole frame, CRC included): the `prev_hash` of the next record
//!   (version 1);
//! - record v2 = keyed(K_record_v2, seq ‖ ts ‖ kind_len ‖ kind ‖ prev_hash ‖ payload_digest),
//!   integers little-endian (version 2: not the payload bytes, so a payload can be erased);
//! - record v3 = keyed(K_record_v3 ⊕ prev_hash, seq ‖ ts ‖ payload_digest ‖ kind) (version 3:
//!   what version 2 commits to, with the link as the key: one blake3 block, so one
//!   compression, for a kind of at most 16 bytes, where version 2 takes two and a
//!   finalisation; the kind's length is the input's length less 48);
//! - payload digest = keyed(K_payload_v2, salt ‖ payload) (versions 2 and 3).
//!
//! Keying the record hash by the link is how blake3 itself chains the blocks of a chunk (each
//! block's compression takes the previous output as its key): two records with one hash are a
//! collision of the compression function over (key, block). The constant K_record_v3 XORed
//! into the key keeps these hashes apart from every other keyed hash of the same bytes.
//!
//! Through the genesis hash a record copied from another journal does not link. The chain
//! shows any change to a record followed by another record, and any deletion, insertion or
//! reordering. It cannot by itself show a rewrite of the *last* record (its CRC, and in
//! version 2 its payload digest, recomputed) or a cut at a record boundary: those need a head
//! kept outside the journal (`journal::verify::witness`), such as the high-water mark kept by
//! the writer beside the journal, or a checkpoint kept out of the writer's control.

use std::fmt;
use std::sync::LazyLock;

pub const HASH_LEN: usize = 32;

pub const GENESIS_CONTEXT: &str = "sjournal 2026-11-29 journal genesis v1";
pub const RECORD_CONTEXT: &str = "sjournal 2026-11-29 journal record v1";

pub const RECORD_V2_CONTEXT: &str = "sjournal 2026-12-03 journal record v2";
pub const RECORD_V3_CONTEXT: &str = "sjournal 2026-12-04 journal record v3";
pub const PAYLOAD_V2_CONTEXT: &str = "sjournal 2026-12-03 journal payload v2";

static RECORD_V2_KEY: LazyLock<[u8; 32]> =
    LazyLock::new(|| blake3::derive_key(RECORD_V2_CONTEXT, b""));
static RECORD_V3_KEY: LazyLock<[u8; 32]> =
    LazyLock::new(|| blake3::derive_key(RECORD_V3_CONTEXT, b""));
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

/// The record hash of a version-2 frame. Its input (82 bytes and the kind) is laid out on the
/// stack and hashed in one call: one `keyed_hash` of two blocks, not a `Hasher` fed six
/// pieces (BENCHMARKS.md: verify and cold fold of formats 2 and 3 against format 1).
pub fn record_hash_v2(seq: u64, ts_unix_ns: i64, kind: &str, prev: &Hash, digest: &Hash) -> Hash {
    const FIXED: usize = 8 + 8 + 2 + 2 * HASH_LEN;
    let kind = kind.as_bytes();
    if kind.len() > crate::limits::KIND_MAX_BYTES {
        // No frame holds such a kind (parse and the writers refuse it); hashed all the same.
        return record_hash_v2_pieces(seq, ts_unix_ns, kind, prev, digest);
    }
    let mut buf = [0u8; FIXED + crate::limits::KIND_MAX_BYTES];
    buf[..8].copy_from_slice(&seq.to_le_bytes());
    buf[8..16].copy_from_slice(&ts_unix_ns.to_le_bytes());
    buf[16..18].copy_from_slice(&(kind.len() as u16).to_le_bytes());
    let k = 18 + kind.len();
    buf[18..k].copy_from_slice(kind);
    buf[k..k + HASH_LEN].copy_from_slice(&prev.0);
    buf[k + HASH_LEN..k + 2 * HASH_LEN].copy_from_slice(&digest.0);
    Hash(*blake3::keyed_hash(&RECORD_V2_KEY, &buf[..k + 2 * HASH_LEN]).as_bytes())
}

/// [`record_hash_v2`]'s definition, piece by piece.
fn record_hash_v2_pieces(
    seq: u64,
    ts_unix_ns: i64,
    kind: &[u8],
    prev: &Hash,
    digest: &Hash,
) -> Hash {
    let mut h = blake3::Hasher::new_keyed(&RECORD_V2_KEY);
    h.update(&seq.to_le_bytes());
    h.update(&ts_unix_ns.to_le_bytes());
    h.update(&(kind.len() as u16).to_le_bytes());
    h.update(kind);
    h.update(&prev.0);
    h.update(&digest.0);
    Hash(*h.finalize().as_bytes())
}

/// The record hash of a version-3 frame: keyed by `prev` XOR K_record_v3, over seq ‖ ts ‖
/// digest ‖ kind (48 bytes and the kind) laid out on the stack: one block for a kind of at
/// most 16 bytes (BENCHMARKS.md: verify of format 3 against format 1, 1.04x; format 2 1.08x).
pub fn record_hash_v3(seq: u64, ts_unix_ns: i64, kind: &str, prev: &Hash, digest: &Hash) -> Hash {
    const FIXED: usize = 8 + 8 + HASH_LEN;
    let mut key = *RECORD_V3_KEY;
    for (k, p) in key.iter_mut().zip(prev.0) {
        *k ^= p;
    }
    let kind = kind.as_bytes();
    if kind.len() > crate::limits::KIND_MAX_BYTES {
        // No frame holds such a kind (parse and the writers refuse it); hashed all the same.
        let mut h = blake3::Hasher::new_keyed(&key);
        h.update(&seq.to_le_bytes());
        h.update(&ts_unix_ns.to_le_bytes());
        h.update(&digest.0);
        h.update(kind);
        return Hash(*h.finalize().as_bytes());
    }
    let mut buf = [0u8; FIXED + crate::limits::KIND_MAX_BYTES];
    buf[..8].copy_from_slice(&seq.to_le_bytes());
    buf[8..16].copy_from_slice(&ts_unix_ns.to_le_bytes());
    buf[16..FIXED].copy_from_slice(&digest.0);
    buf[FIXED..FIXED + kind.len()].copy_from_slice(kind);
    Hash(*blake3::keyed_hash(&key, &buf[..FIXED + kind.len()]).as_bytes())
}

/// The payload digest of a version-2 or -3 frame: salted, so that once the salt is erased with the
/// payload, nobody can test guesses of a low-entropy payload against the digest.
///
/// Salt and payload are copied into one buffer and hashed in one call: blake3 then hashes the
/// payload's whole 1 KiB chunks with its many-chunk SIMD routine, which a `Hasher` fed the
/// 16-byte salt first does not use for the first chunk (BENCHMARKS.md, the formats' verify
/// row). Payloads past 64 KiB (`ONE_CALL_MAX`) go through a `Hasher` (the copy would be kept
/// per thread).
pub fn payload_digest(salt: &[u8; 16], payload: &[u8]) -> Hash {
    use std::cell::RefCell;
    thread_local! {
        static BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    if payload.len() > ONE_CALL_MAX {
        let mut h = blake3::Hasher::new_keyed(&PAYLOAD_V2_KEY);
        h.update(salt);
        h.update(payload);
        return Hash(*h.finalize().as_bytes());
    }
    BUF.with_borrow_mut(|buf| {
        buf.clear();
        buf.extend_from_slice(salt);
        buf.extend_from_slice(payload);
        Hash(*blake3::keyed_hash(&PAYLOAD_V2_KEY, buf).as_bytes())
    })
}

/// The largest payload [`payload_digest`] copies to hash in one call.
const ONE_CALL_MAX: usize = 64 << 10;

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

    /// The payload digest is keyed(K_payload_v2, salt ‖ payload), through the copy and past it.
    #[test]
    fn payload_digest_is_its_definition() {
        let salt = [7u8; 16];
        for len in [
            0,
            1,
            1008,
            1009,
            5000,
            ONE_CALL_MAX,
            ONE_CALL_MAX + 1,
            200_000,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let mut whole = salt.to_vec();
            whole.extend_from_slice(&payload);
            assert_eq!(
                payload_digest(&salt, &payload).0,
                *blake3::keyed_hash(&blake3::derive_key(PAYLOAD_V2_CONTEXT, b""), &whole)
                    .as_bytes(),
                "payload of {len} bytes"
            );
        }
    }

    /// The one-call record hash of a version-2 frame is its piecewise definition, for every
    /// kind length a frame can hold (and past it).
    #[test]
    fn record_hash_v2_is_its_definition() {
        let (prev, digest) = (content_hash(b"prev"), content_hash(b"digest"));
        for len in 0..=crate::limits::KIND_MAX_BYTES + 3 {
            let kind = "k".repeat(len);
            for (seq, ts) in [
                (1u64, 0i64),
                (u64::MAX, i64::MIN),
                (42, 1_764_000_000_000_000_000),
            ] {
                assert_eq!(
                    record_hash_v2(seq, ts, &kind, &prev, &digest),
                    record_hash_v2_pieces(seq, ts, kind.as_bytes(), &prev, &digest),
                    "kind of {len} bytes, seq {seq}"
                );
            }
        }
        assert_eq!(
            record_hash_v2(7, 9, "PostToolUse", &Hash::ZERO, &Hash::ZERO).to_hex(),
            record_hash_v2_pieces(7, 9, b"PostToolUse", &Hash::ZERO, &Hash::ZERO).to_hex()
        );
    }

    /// The record hash of a version-3 frame is its definition (a `Hasher` keyed by prev XOR
    /// K_record_v3, fed the pieces), for every kind length a frame can hold and past it; and
    /// it is pinned: a change is a format change.
    #[test]
    fn record_hash_v3_is_its_definition_and_pinned() {
        let (prev, digest) = (content_hash(b"prev"), content_hash(b"digest"));
        let k = blake3::derive_key(RECORD_V3_CONTEXT, b"");
        let mut key = [0u8; 32];
        for i in 0..32 {
            key[i] = k[i] ^ prev.0[i];
        }
        for len in 0..=crate::limits::KIND_MAX_BYTES + 3 {
            let kind = "k".repeat(len);
            for (seq, ts) in [
                (1u64, 0i64),
                (u64::MAX, i64::MIN),
                (42, 1_764_000_000_000_000_000),
            ] {
                let mut h = blake3::Hasher::new_keyed(&key);
                h.update(&seq.to_le_bytes());
                h.update(&ts.to_le_bytes());
                h.update(&digest.0);
                h.update(kind.as_bytes());
                assert_eq!(
                    record_hash_v3(seq, ts, &kind, &prev, &digest).0,
                    *h.finalize().as_bytes(),
                    "kind of {len} bytes, seq {seq}"
                );
            }
        }
        // Every input moves it.
        let base = record_hash_v3(7, 9, "PostToolUse", &prev, &digest);
        for other in [
            record_hash_v3(8, 9, "PostToolUse", &prev, &digest),
            record_hash_v3(7, 10, "PostToolUse", &prev, &digest),
            record_hash_v3(7, 9, "PostToolUsf", &prev, &digest),
            record_hash_v3(7, 9, "PostToolUse", &digest, &digest),
            record_hash_v3(7, 9, "PostToolUse", &prev, &prev),
            record_hash_v2(7, 9, "PostToolUse", &prev, &digest),
        ] {
            assert_ne!(base, other);
        }
        assert_eq!(
            record_hash_v3(7, 9, "PostToolUse", &Hash::ZERO, &Hash::ZERO).to_hex(),
            "f352095e9cfb54eba5220f9a82775c2a4987020870961a924175a5a07ed8a827",
            "record hash v3 changed: this is a format change"
        );
    }
}
