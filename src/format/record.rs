//! Record framing.
//!
//! ```text
//! offset   size field
//!      0      4 frame_len   u32 LE, the whole frame: 60 + kind_len + payload_len
//!      4      8 seq         u64 LE, 1 for the first record, +1 for each next one
//!     12      8 ts_unix_ns  i64 LE, wall clock taken at append time
//!     20      2 kind_len    u16 LE, 1..=64
//!     22      2 flags       u16 LE: 0 (version 1); DIGESTED (version 2) or DIGESTED|V3
//!                           (version 3), either with ERASED once erased
//!     24     32 prev_hash   chain link: record hash of seq-1, or the genesis hash for seq 1
//!     56      k kind        ASCII [A-Za-z0-9._-]
//!   56+k      p payload     MessagePack (rmp-serde), schema chosen by kind
//! 56+k+p      4 crc32       crc32fast (IEEE) of bytes [0, 56+k+p)
//! ```
//!
//! A version-2 or -3 frame (flag DIGESTED) has 48 more bytes after `prev_hash`:
//! `payload_digest` (32, [`payload_digest`] of salt and payload) and `salt` (16); the kind
//! starts at 104. Its record hash commits to seq, ts, kind, prev_hash and payload_digest, not
//! to the payload bytes, so a payload can be erased (flag ERASED, salt zeroed) and the chain
//! still holds. Versions 2 and 3 differ only in the record hash (flag V3: `record_hash_v3`,
//! one blake3 block where `record_hash_v2` takes two).
//!
//! The parser checks the length against the limits and the bytes present before it looks at
//! anything else, then the CRC, and only then the fields a CRC-valid frame could still get
//! wrong (kind, flags), so a torn or rotted frame is always reported as such.

use super::hash::{payload_digest, record_hash, record_hash_v2, record_hash_v3, Hash, HASH_LEN};
use crate::limits::{FRAME_MAX_BYTES, KIND_MAX_BYTES};

const LEN_AT: usize = 0;
const SEQ_AT: usize = LEN_AT + 4;
const TS_AT: usize = SEQ_AT + 8;
const KIND_LEN_AT: usize = TS_AT + 8;
const FLAGS_AT: usize = KIND_LEN_AT + 2;
const PREV_AT: usize = FLAGS_AT + 2;
/// Bytes before the kind.
pub const FIXED_LEN: usize = PREV_AT + HASH_LEN;
const DIGEST_AT: usize = FIXED_LEN;
const SALT_AT: usize = DIGEST_AT + HASH_LEN;
pub const SALT_LEN: usize = 16;
/// Bytes before the kind in a version-2 or -3 frame.
pub const FIXED_LEN_V2: usize = SALT_AT + SALT_LEN;
/// Flag: the payload was erased (whole, or rewritten without a field) after it was written.
pub const FLAG_ERASED: u16 = 1;
/// Flag: a version-2 or -3 frame, with `payload_digest` and `salt`.
pub const FLAG_DIGESTED: u16 = 2;
/// Flag (with [`FLAG_DIGESTED`]): a version-3 frame, whose record hash is `record_hash_v3`.
pub const FLAG_V3: u16 = 4;
const CRC_LEN: usize = 4;
/// Frame bytes that are not kind or payload.
pub const FRAME_OVERHEAD: usize = FIXED_LEN + CRC_LEN;
/// The smallest valid frame: a one-byte kind and an empty payload.
pub const FRAME_MIN_BYTES: usize = FRAME_OVERHEAD + 1;

/// A validated frame borrowed from the bytes it was parsed from.
#[derive(Debug, Clone, Copy)]
pub struct FrameRef<'a> {
    pub bytes: &'a [u8],
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub kind: &'a str,
    pub prev_hash: Hash,
    pub payload: &'a [u8],
    /// 0, or [`FLAG_DIGESTED`] (and [`FLAG_V3`]) with or without [`FLAG_ERASED`].
    pub flags: u16,
    /// Versions 2 and 3: the digest the chain commits to ([`Hash::ZERO`] in a version-1 frame).
    pub payload_digest: Hash,
    /// Versions 2 and 3: the digest's salt (zero in a version-1 frame and once erased).
    pub salt: [u8; SALT_LEN],
}

impl FrameRef<'_> {
    /// The chain hash of this record (the next record's `prev_hash`).
    pub fn hash(&self) -> Hash {
        if self.flags & FLAG_V3 != 0 {
            record_hash_v3(
                self.seq,
                self.ts_unix_ns,
                self.kind,
                &self.prev_hash,
                &self.payload_digest,
            )
        } else if self.digested() {
            record_hash_v2(
                self.seq,
                self.ts_unix_ns,
                self.kind,
                &self.prev_hash,
                &self.payload_digest,
            )
        } else {
            record_hash(self.bytes)
        }
    }

    /// A version-2 or -3 frame.
    pub fn digested(&self) -> bool {
        self.flags & FLAG_DIGESTED != 0
    }

    /// The journal format version whose layout and record hash this frame has.
    pub fn version(&self) -> u16 {
        flags_version(self.flags)
    }

    /// Its payload was erased after it was written.
    pub fn erased(&self) -> bool {
        self.flags & FLAG_ERASED != 0
    }

    /// True unless a version-2 or -3 frame's payload is not what its digest commits to (an
    /// erased frame's payload is checked against its `sjournal.erased` record instead).
    pub fn payload_matches(&self) -> bool {
        !self.digested()
            || self.erased()
            || payload_digest(&self.salt, self.payload) == self.payload_digest
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Why bytes at an offset are not a valid frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The bytes end before the frame does (or before its length word).
    Incomplete { have: usize, need: usize },
    /// The length word is below the minimum frame or above `FRAME_MAX_BYTES`.
    BadLength { len: u32 },
    /// The stored CRC does not match the bytes.
    BadCrc { stored: u32, computed: u32 },
    /// CRC-valid, but a field is out of range: not damage a torn write can produce.
    BadField(&'static str),
}

impl FrameError {
    /// True for the damage an interrupted write or bit rot leaves behind; false for a frame
    /// whose CRC matched but whose fields are wrong (a writer bug or deliberate edit).
    pub fn is_damage(&self) -> bool {
        !matches!(self, FrameError::BadField(_))
    }
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Incomplete { have, need } => {
                write!(f, "incomplete record: {have} bytes present, {need} needed")
            }
            FrameError::BadLength { len } => write!(
                f,
                "impossible record length {len} (must be {FRAME_MIN_BYTES}..={FRAME_MAX_BYTES})"
            ),
            FrameError::BadCrc { stored, computed } => {
                write!(
                    f,
                    "CRC mismatch: stored {stored:08x}, computed {computed:08x}"
                )
            }
            FrameError::BadField(what) => write!(f, "invalid field: {what}"),
        }
    }
}

/// True if `kind` is a well-formed kind name.
pub fn valid_kind(kind: &str) -> bool {
    valid_kind_bytes(kind.as_bytes())
}

/// [`valid_kind`] over bytes: 1..=`KIND_MAX_BYTES` of `[A-Za-z0-9._-]` (so ASCII, and UTF-8).
/// One table lookup per byte: every record a load reads passes here.
fn valid_kind_bytes(kind: &[u8]) -> bool {
    !kind.is_empty() && kind.len() <= KIND_MAX_BYTES && kind.iter().all(|&b| KIND_BYTES[b as usize])
}

/// The bytes a kind name may hold: `[A-Za-z0-9._-]`.
const KIND_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-');
        b += 1;
    }
    t
};

/// A record's kind as a str, if it is a well-formed kind name ([`valid_kind`]). A name
/// `known` recognises comes back as the `&'static str` it gives, after its comparison; only
/// the others are checked byte by byte and as UTF-8 (see [`parse_known`]; a load reads every
/// record's kind; BENCHMARKS.md, "Speed mechanisms": decoding in place).
#[inline(always)]
fn kind_str(kind: &[u8], known: impl Fn(&[u8]) -> Option<&'static str>) -> Option<&str> {
    if let Some(name) = known(kind) {
        debug_assert!(name.as_bytes() == kind && valid_kind(name));
        return Some(name);
    }
    valid_kind_bytes(kind)
        .then(|| std::str::from_utf8(kind).ok())
        .flatten()
}

/// Reads the frame length word at the start of `buf` without validating anything else.
pub fn peek_len(buf: &[u8]) -> Option<u32> {
    buf.get(..4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// Parses the frame at the start of `buf` (which may hold more bytes after it).
pub fn parse(buf: &[u8]) -> Result<FrameRef<'_>, FrameError> {
    parse_known(buf, |_| None)
}

/// [`parse`], with the kind names `known` returns (each a well-formed kind, spelled as the
/// bytes it was given) taken without the byte-by-byte check: a load reads every record's
/// kind, and nearly all are the names of the event kinds the reader knows, which a few
/// comparisons find. The codec itself knows no kind: the reader passes them.
#[inline]
pub fn parse_known(
    buf: &[u8],
    known: impl Fn(&[u8]) -> Option<&'static str>,
) -> Result<FrameRef<'_>, FrameError> {
    let len = peek_len(buf).ok_or(FrameError::Incomplete {
        have: buf.len(),
        need: 4,
    })?;
    if (len as usize) < FRAME_MIN_BYTES || len > FRAME_MAX_BYTES {
        return Err(FrameError::BadLength { len });
    }
    let len = len as usize;
    if buf.len() < len {
        return Err(FrameError::Incomplete {
            have: buf.len(),
            need: len,
        });
    }
    let bytes = &buf[..len];
    let crc_at = len - CRC_LEN;
    let stored = u32::from_le_bytes(bytes[crc_at..].try_into().unwrap());
    let computed = crc32fast::hash(&bytes[..crc_at]);
    if stored != computed {
        return Err(FrameError::BadCrc { stored, computed });
    }
    let flags = u16_at(bytes, FLAGS_AT);
    let fixed = fixed_len_for_flags(flags).ok_or(FrameError::BadField("flags"))?;
    let kind_len = u16_at(bytes, KIND_LEN_AT) as usize;
    if kind_len == 0 || kind_len > KIND_MAX_BYTES || fixed + kind_len > crc_at {
        return Err(FrameError::BadField("kind length"));
    }
    let kind = kind_str(&bytes[fixed..fixed + kind_len], known)
        .ok_or(FrameError::BadField("kind name"))?;
    let (payload_digest, salt) = if fixed == FIXED_LEN {
        (Hash::ZERO, [0; SALT_LEN])
    } else {
        (
            Hash(bytes[DIGEST_AT..SALT_AT].try_into().unwrap()),
            bytes[SALT_AT..FIXED_LEN_V2].try_into().unwrap(),
        )
    };
    Ok(FrameRef {
        bytes,
        seq: u64_at(bytes, SEQ_AT),
        ts_unix_ns: u64_at(bytes, TS_AT) as i64,
        kind,
        prev_hash: Hash(bytes[PREV_AT..FIXED_LEN].try_into().unwrap()),
        payload: &bytes[fixed + kind_len..crc_at],
        flags,
        payload_digest,
        salt,
    })
}

/// The length a version-1 frame with this kind and payload will have.
pub fn frame_len(kind: &str, payload_len: usize) -> usize {
    FRAME_OVERHEAD + kind.len() + payload_len
}

/// The length a frame of journal format `version` with this kind and payload will have.
pub fn frame_len_for(version: u16, kind: &str, payload_len: usize) -> usize {
    frame_len(kind, payload_len)
        + if version >= 2 {
            FIXED_LEN_V2 - FIXED_LEN
        } else {
            0
        }
}

/// The bytes before the kind in a frame with these flags; None: no valid frame has them.
/// The one list of valid flags: parse, the parallel verify's search for a record start and
/// the search index's reader of damaged frames all ask here.
#[inline]
pub fn fixed_len_for_flags(flags: u16) -> Option<usize> {
    match flags {
        0 => Some(FIXED_LEN),
        // DIGESTED, or DIGESTED|V3; either with ERASED.
        2 | 3 | 6 | 7 => Some(FIXED_LEN_V2),
        _ => None,
    }
}

/// The format version of a frame with these (valid) flags: 1, 2 or 3.
pub fn flags_version(flags: u16) -> u16 {
    if flags & FLAG_V3 != 0 {
        3
    } else if flags & FLAG_DIGESTED != 0 {
        2
    } else {
        1
    }
}

/// The flags of an unerased frame of format `version` (2 or 3 for [`encode_digested`]).
pub fn version_flags(version: u16) -> u16 {
    match version {
        1 => 0,
        2 => FLAG_DIGESTED,
        _ => FLAG_DIGESTED | FLAG_V3,
    }
}

/// The salts of one batch of version-2 or -3 frames: one `getrandom` per batch for a key that
/// is never stored, and each record's salt derived from it and its seq. A salt is not reused
/// across records, so erasing one record's salt leaves nothing in its neighbours to find it by.
pub struct Salts([u8; 32]);

impl Salts {
    pub fn new() -> Salts {
        use rand_core::RngCore;
        let mut key = [0u8; 32];
        rand_core::OsRng.fill_bytes(&mut key);
        Salts(key)
    }

    pub fn salt(&self, seq: u64) -> [u8; SALT_LEN] {
        let h = blake3::keyed_hash(&self.0, &seq.to_le_bytes());
        h.as_bytes()[..SALT_LEN].try_into().unwrap()
    }
}

impl Default for Salts {
    fn default() -> Self {
        Salts::new()
    }
}

/// Appends one encoded frame of format `version` (2 or 3) to `out`: its payload digest is
/// made with `salt` (zero and `flags` [`FLAG_ERASED`] only when an erasure rewrites a frame,
/// keeping the digest it had: `erased_digest` then names it). Returns the frame's record hash.
#[allow(clippy::too_many_arguments)]
pub fn encode_digested(
    out: &mut Vec<u8>,
    version: u16,
    seq: u64,
    ts_unix_ns: i64,
    kind: &str,
    prev_hash: &Hash,
    payload: &[u8],
    salt: &[u8; SALT_LEN],
    erased_digest: Option<&Hash>,
) -> Hash {
    debug_assert!(valid_kind(kind));
    debug_assert!(matches!(version, 2 | 3));
    let len = frame_len_for(version, kind, payload.len());
    let digest = match erased_digest {
        Some(d) => *d,
        None => payload_digest(salt, payload),
    };
    let flags = version_flags(version)
        | if erased_digest.is_some() {
            FLAG_ERASED
        } else {
            0
        };
    let start = out.len();
    out.reserve(len);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&ts_unix_ns.to_le_bytes());
    out.extend_from_slice(&(kind.len() as u16).to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&prev_hash.0);
    out.extend_from_slice(&digest.0);
    out.extend_from_slice(salt);
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len() - start, len);
    if version == 2 {
        record_hash_v2(seq, ts_unix_ns, kind, prev_hash, &digest)
    } else {
        record_hash_v3(seq, ts_unix_ns, kind, prev_hash, &digest)
    }
}

/// Appends one encoded frame to `out`. The caller has checked `kind` and the size limit.
pub fn encode(
    out: &mut Vec<u8>,
    seq: u64,
    ts_unix_ns: i64,
    kind: &str,
    prev_hash: &Hash,
    payload: &[u8],
) {
    debug_assert!(valid_kind(kind));
    let len = frame_len(kind, payload.len());
    debug_assert!(len <= FRAME_MAX_BYTES as usize);
    let start = out.len();
    out.reserve(len);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&ts_unix_ns.to_le_bytes());
    out.extend_from_slice(&(kind.len() as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&prev_hash.0);
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len() - start, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut v = Vec::new();
        encode(&mut v, 7, 1234, "PostToolUse", &Hash([9; 32]), b"\xa2{}");
        v
    }

    #[test]
    fn a_kind_is_letters_digits_dots_underscores_and_dashes_of_every_byte() {
        for b in 0..=255u8 {
            let want = b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
            assert_eq!(valid_kind_bytes(&[b]), want, "byte {b:#04x}");
            assert_eq!(valid_kind_bytes(&[b'a', b, b'z']), want, "byte {b:#04x}");
        }
        assert!(!valid_kind_bytes(b""));
        assert!(valid_kind_bytes(&[b'a'; KIND_MAX_BYTES]));
        assert!(!valid_kind_bytes(&[b'a'; KIND_MAX_BYTES + 1]));
        assert!(!valid_kind("Pre\u{e9}Tool"));
    }

    /// A name the reader knows comes back as its own `&'static str`; any other, or a known
    /// name changed, cut short or made longer, reads as the byte-by-byte check says.
    #[test]
    fn known_names_are_taken_and_others_are_checked() {
        static KNOWN: &[&str] = &["PreToolUse", "Stop"];
        let known = |b: &[u8]| KNOWN.iter().copied().find(|k| k.as_bytes() == b);
        fn checked(b: &[u8]) -> Option<&str> {
            valid_kind_bytes(b)
                .then(|| std::str::from_utf8(b).ok())
                .flatten()
        }
        for name in KNOWN {
            let got = kind_str(name.as_bytes(), known).unwrap();
            assert!(std::ptr::eq(got, *name), "the known name itself");
            let mut b = name.as_bytes().to_vec();
            for i in 0..b.len() {
                let was = b[i];
                for x in [b'x', b'.', b' ', 0xff] {
                    b[i] = x;
                    assert_eq!(kind_str(&b, known), checked(&b), "{b:?}");
                }
                b[i] = was;
            }
            for n in 0..b.len() {
                assert_eq!(kind_str(&b[..n], known), checked(&b[..n]));
            }
            b.push(b'x');
            assert_eq!(kind_str(&b, known), checked(&b));
        }
        for other in ["BeforeTool", "sjournal.injected", "a", "Stop\u{e9}"] {
            assert_eq!(kind_str(other.as_bytes(), known), checked(other.as_bytes()));
        }
        assert_eq!(kind_str(b"Stop\xff", known), None);
    }

    #[test]
    fn roundtrip() {
        let b = sample();
        let f = parse(&b).unwrap();
        assert_eq!(
            (f.seq, f.ts_unix_ns, f.kind, f.payload),
            (7, 1234, "PostToolUse", &b"\xa2{}"[..])
        );
        assert_eq!(f.prev_hash, Hash([9; 32]));
        assert_eq!(f.len(), b.len());
    }

    /// Pins the CRC over a fixed frame: a layout change must bump FORMAT_VERSION.
    #[test]
    fn checksum_stability() {
        let b = sample();
        assert_eq!(b.len(), 60 + 11 + 3);
        assert_eq!(
            u32::from_le_bytes(b[b.len() - 4..].try_into().unwrap()),
            1_078_911_438
        );
    }

    /// Versions 2 and 3: the record hash ignores the payload bytes, erasing keeps it, and the
    /// flags say which hash a frame has.
    #[test]
    fn digested_roundtrip_hash_ignores_payload_and_erasure_keeps_the_hash() {
        let frame = |version: u16, payload: &[u8], salt: u8, erased: Option<&Hash>| {
            let mut b = Vec::new();
            let h = encode_digested(
                &mut b,
                version,
                7,
                1234,
                "Stop",
                &Hash([9; 32]),
                payload,
                &[salt; 16],
                erased,
            );
            (b, h)
        };
        let mut hashes = Vec::new();
        for version in [2u16, 3] {
            let (b, h) = frame(version, b"\xa2{}", 5, None);
            let f = parse(&b).unwrap();
            assert_eq!((f.seq, f.kind, f.payload), (7, "Stop", &b"\xa2{}"[..]));
            assert!(f.digested() && !f.erased() && f.payload_matches());
            assert_eq!(f.version(), version);
            assert_eq!(f.hash(), h);
            assert_eq!(b.len(), frame_len_for(version, "Stop", 3));
            hashes.push(h);
            let (e, _) = frame(version, b"", 0, Some(&f.payload_digest));
            let g = parse(&e).unwrap();
            assert!(g.erased() && g.payload.is_empty());
            assert_eq!(g.version(), version);
            assert_eq!(g.hash(), h, "erasing keeps the record hash");
            // The same payload under another salt: another digest, another hash.
            assert_ne!(h, frame(version, b"\xa2{}", 6, None).1);
            // A payload changed with a valid CRC no longer matches its digest.
            let (mut d, _) = frame(version, b"\xa2{]", 5, None);
            d[DIGEST_AT..SALT_AT].copy_from_slice(&f.payload_digest.0);
            let n = d.len() - 4;
            let crc = crc32fast::hash(&d[..n]);
            d[n..].copy_from_slice(&crc.to_le_bytes());
            assert!(!parse(&d).unwrap().payload_matches());
        }
        assert_ne!(hashes[0], hashes[1], "versions 2 and 3 hash differently");
        // ERASED or V3 without DIGESTED is no valid frame.
        for flags in [1u8, 4, 5, 8] {
            let mut v1 = sample();
            v1[FLAGS_AT] = flags;
            let n = v1.len() - 4;
            let crc = crc32fast::hash(&v1[..n]);
            v1[n..].copy_from_slice(&crc.to_le_bytes());
            assert_eq!(
                parse(&v1).unwrap_err(),
                FrameError::BadField("flags"),
                "{flags}"
            );
        }
    }

    #[test]
    fn every_prefix_incomplete_every_flip_detected() {
        let b = sample();
        for cut in 0..b.len() {
            let e = parse(&b[..cut]).unwrap_err();
            assert!(e.is_damage(), "cut {cut}: {e:?}");
        }
        for bit in 0..b.len() * 8 {
            let mut c = b.clone();
            c[bit / 8] ^= 1 << (bit % 8);
            assert!(parse(&c).is_err(), "bit {bit}");
        }
    }
}
