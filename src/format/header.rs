//! The file header: the first bytes of every journal.
//!
//! ```text
//! offset size field
//!      0    8 magic            b"SJOURNAL"
//!      8    2 format_version   u16 LE (FORMAT_VERSION)
//!     10    2 flags            u16 LE, must be 0
//!     12    4 header_len       u32 LE, whole header including the CRC = 36 + session_len
//!     16    8 created_unix_ns  i64 LE, wall clock when the file was created
//!     24    2 session_len      u16 LE, 1..=1024
//!     26    6 reserved         zero
//!     32    n session_id       UTF-8, the session id exactly as the host gave it
//!   32+n    4 crc32            crc32fast (IEEE) of bytes [0, 32+n)
//! ```

use crate::limits::SESSION_ID_MAX_BYTES;

pub const MAGIC: [u8; 8] = *b"SJOURNAL";
/// The version new journals are written in. Versions 1 (frames without a payload digest) and
/// 2 (the record hash of two blake3 blocks, see `record`) are still read, verified, folded and
/// appended to in their own version; `sjournal migrate` rewrites them as this one.
pub const FORMAT_VERSION: u16 = 3;
/// The oldest version this build reads.
pub const FORMAT_VERSION_MIN: u16 = 1;

const MAGIC_AT: usize = 0;
const VERSION_AT: usize = MAGIC_AT + 8;
const FLAGS_AT: usize = VERSION_AT + 2;
const HEADER_LEN_AT: usize = FLAGS_AT + 2;
const CREATED_AT: usize = HEADER_LEN_AT + 4;
const SESSION_LEN_AT: usize = CREATED_AT + 8;
const RESERVED_AT: usize = SESSION_LEN_AT + 2;
/// Bytes before the session id.
pub const FIXED_LEN: usize = RESERVED_AT + 6;
const CRC_LEN: usize = 4;
/// The smallest and largest possible header.
pub const MIN_LEN: usize = FIXED_LEN + 1 + CRC_LEN;
pub const MAX_LEN: usize = FIXED_LEN + SESSION_ID_MAX_BYTES + CRC_LEN;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub format_version: u16,
    pub created_unix_ns: i64,
    pub session_id: String,
}

/// Why a header did not decode. `Incomplete` means the bytes end before the header does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// The bytes end before the header does.
    Incomplete { needed: usize },
    /// Damaged: bad magic, impossible lengths, CRC mismatch.
    Invalid(String),
    /// CRC-valid but written by another format version (or with flags this build lacks).
    Unsupported(String),
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::Incomplete { needed } => {
                write!(f, "file ends inside the header ({needed} bytes needed)")
            }
            HeaderError::Invalid(r) | HeaderError::Unsupported(r) => f.write_str(r),
        }
    }
}

impl Header {
    pub fn new(session_id: &str, created_unix_ns: i64) -> Header {
        Header {
            format_version: FORMAT_VERSION,
            created_unix_ns,
            session_id: session_id.to_owned(),
        }
    }

    /// A header of an older `format_version` (tests and `migrate`'s fixtures).
    pub fn with_version(session_id: &str, created_unix_ns: i64, format_version: u16) -> Header {
        Header {
            format_version,
            ..Header::new(session_id, created_unix_ns)
        }
    }

    pub fn encoded_len(&self) -> usize {
        FIXED_LEN + self.session_id.len() + CRC_LEN
    }

    pub fn encode(&self) -> Vec<u8> {
        let id = self.session_id.as_bytes();
        assert!(!id.is_empty() && id.len() <= SESSION_ID_MAX_BYTES);
        let len = self.encoded_len();
        let mut b = Vec::with_capacity(len);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&self.format_version.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(len as u32).to_le_bytes());
        b.extend_from_slice(&self.created_unix_ns.to_le_bytes());
        b.extend_from_slice(&(id.len() as u16).to_le_bytes());
        b.extend_from_slice(&[0; 6]);
        b.extend_from_slice(id);
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        debug_assert_eq!(b.len(), len);
        b
    }

    /// Decodes the header at the start of `bytes`; returns it and its length.
    pub fn decode(bytes: &[u8]) -> Result<(Header, usize), HeaderError> {
        if bytes.len() < FIXED_LEN {
            if !MAGIC.starts_with(&bytes[..bytes.len().min(8)]) {
                return Err(HeaderError::Invalid(
                    "bad magic: not an sjournal file".into(),
                ));
            }
            return Err(HeaderError::Incomplete { needed: FIXED_LEN });
        }
        if bytes[MAGIC_AT..VERSION_AT] != MAGIC {
            return Err(HeaderError::Invalid(
                "bad magic: not an sjournal file".into(),
            ));
        }
        let session_len =
            u16::from_le_bytes([bytes[SESSION_LEN_AT], bytes[SESSION_LEN_AT + 1]]) as usize;
        let header_len =
            u32::from_le_bytes(bytes[HEADER_LEN_AT..CREATED_AT].try_into().unwrap()) as usize;
        if session_len == 0 || session_len > SESSION_ID_MAX_BYTES {
            return Err(HeaderError::Invalid(format!(
                "session id length {session_len} out of range"
            )));
        }
        if header_len != FIXED_LEN + session_len + CRC_LEN {
            return Err(HeaderError::Invalid(format!(
                "header_len {header_len} does not match session id length {session_len}"
            )));
        }
        if bytes.len() < header_len {
            return Err(HeaderError::Incomplete { needed: header_len });
        }
        let crc_at = header_len - CRC_LEN;
        let stored = u32::from_le_bytes(bytes[crc_at..header_len].try_into().unwrap());
        if crc32fast::hash(&bytes[..crc_at]) != stored {
            return Err(HeaderError::Invalid("header CRC mismatch".into()));
        }
        let version = u16::from_le_bytes([bytes[VERSION_AT], bytes[VERSION_AT + 1]]);
        if !(FORMAT_VERSION_MIN..=FORMAT_VERSION).contains(&version) {
            return Err(HeaderError::Unsupported(format!(
                "format version {version} is not supported (this build reads versions {FORMAT_VERSION_MIN} to {FORMAT_VERSION})"
            )));
        }
        let flags = u16::from_le_bytes([bytes[FLAGS_AT], bytes[FLAGS_AT + 1]]);
        if flags != 0 || bytes[RESERVED_AT..FIXED_LEN] != [0; 6] {
            return Err(HeaderError::Unsupported("unknown header flags".into()));
        }
        let created = i64::from_le_bytes(bytes[CREATED_AT..SESSION_LEN_AT].try_into().unwrap());
        let id = std::str::from_utf8(&bytes[FIXED_LEN..crc_at])
            .map_err(|_| HeaderError::Invalid("session id is not UTF-8".into()))?;
        let header = Header {
            format_version: version,
            created_unix_ns: created,
            session_id: id.to_owned(),
        };
        Ok((header, header_len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_every_prefix_is_incomplete() {
        let h = Header::new("abc-123", 1_700_000_000_000_000_000);
        let b = h.encode();
        assert_eq!(b.len(), 43);
        let v1 = Header::with_version("abc-123", 1, 1);
        assert_eq!(Header::decode(&v1.encode()).unwrap().0, v1);
        assert_eq!(Header::decode(&b).unwrap(), (h, 43));
        for cut in 0..b.len() {
            assert!(
                matches!(
                    Header::decode(&b[..cut]),
                    Err(HeaderError::Incomplete { .. })
                ),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn every_bit_flip_is_detected() {
        let b = Header::new("s", 42).encode();
        for bit in 0..b.len() * 8 {
            let mut c = b.clone();
            c[bit / 8] ^= 1 << (bit % 8);
            assert!(Header::decode(&c).is_err(), "bit {bit}");
        }
    }
}
