//! Inspect: decode every record of a journal that can be decoded, damaged files included,
//! and say what is wrong where. Read-only by construction: it works on a byte slice (the CLI
//! maps the file read-only under a shared lock).
//!
//! Unlike the reader, which stops at the first problem, inspect goes on. After bytes that do
//! not parse as a frame it resynchronizes: it scans forward for the next CRC-valid frame
//! (whatever its seq, so reordered records are found too) and reports the bytes in between
//! as one damaged region. Records found after damage are marked `after_damage`: their link to
//! what came before cannot be fully checked. Files without a valid header (quarantine files,
//! fragments) are read from the first CRC-valid frame on.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::format::hash::genesis_hash;
use crate::format::header::{self, Header, HeaderError};
use crate::format::payload;
use crate::format::record::{self, valid_kind, FrameError, FrameRef};
use crate::format::Hash;
use crate::journal::scan::Chain;

/// Longest payload summary in characters.
const SUMMARY_CHARS: usize = 120;

/// What inspect found in one file. The JSON form (`inspect --json`) is this struct.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    pub bytes: u64,
    pub header: HeaderInfo,
    /// Records and damaged regions, in file order.
    pub items: Vec<Item>,
    pub summary: Summary,
}

#[derive(Debug, Clone, Serialize)]
pub struct HeaderInfo {
    /// True if a valid header was decoded.
    pub ok: bool,
    /// Length of the header (for a damaged one: the length it claims, when plausible).
    pub len: Option<u64>,
    pub session_id: Option<String>,
    pub format_version: Option<u16>,
    pub created_unix_ns: Option<i64>,
    /// The hash record 1 must link to (only with a valid header).
    pub genesis: Option<String>,
    pub problem: Option<Issue>,
}

/// One record or one damaged region.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    Record(RecordItem),
    Damage(DamageItem),
}

/// A CRC-valid frame.
#[derive(Debug, Clone, Serialize)]
pub struct RecordItem {
    pub offset: u64,
    pub len: u64,
    pub seq: u64,
    pub ts_unix_ns: i64,
    pub kind: String,
    /// This record's chain hash.
    pub hash: String,
    pub prev_hash: String,
    /// Found by resynchronizing after damaged bytes.
    pub after_damage: bool,
    /// Empty for a record that is where it belongs.
    pub issues: Vec<Issue>,
    /// One line: the payload, shortened.
    pub summary: String,
    /// The payload as JSON (an event's own JSON text; a system record's fields), when it
    /// decodes.
    pub payload: Option<Box<RawValue>>,
}

/// Bytes that are not a valid frame, from `offset` to the next CRC-valid frame or the end.
#[derive(Debug, Clone, Serialize)]
pub struct DamageItem {
    pub offset: u64,
    pub len: u64,
    pub issue: Issue,
    /// The frame fields as the damaged bytes claim them. Unverified: read only to help
    /// identify what was lost.
    pub claimed: Claimed,
    /// Where reading went on (the next CRC-valid frame), if anywhere.
    pub resync_at: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Claimed {
    pub len: Option<u32>,
    pub seq: Option<u64>,
    pub ts_unix_ns: Option<i64>,
    pub kind: Option<String>,
}

/// What is wrong, in a word and in a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub code: IssueCode,
    pub what: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueCode {
    /// The file starts with no valid header.
    BadHeader,
    /// The bytes end inside a frame.
    Incomplete,
    /// A length word no frame can have.
    BadLength,
    /// The CRC does not match the bytes.
    BadCrc,
    /// CRC-valid, but a field is out of range (kind, flags).
    BadField,
    /// The seq is not the one after the previous record's.
    SeqGap,
    /// `prev_hash` is not the previous record's hash.
    ChainBreak,
    /// The link to the previous record cannot be checked (that record is damaged, or the
    /// header is).
    Unverified,
    /// CRC-valid, but the payload does not decode for its kind.
    BadPayload,
}

impl IssueCode {
    /// The name used in JSON output.
    pub fn as_str(&self) -> &'static str {
        match self {
            IssueCode::BadHeader => "bad_header",
            IssueCode::Incomplete => "incomplete",
            IssueCode::BadLength => "bad_length",
            IssueCode::BadCrc => "bad_crc",
            IssueCode::BadField => "bad_field",
            IssueCode::SeqGap => "seq_gap",
            IssueCode::ChainBreak => "chain_break",
            IssueCode::Unverified => "unverified",
            IssueCode::BadPayload => "bad_payload",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// CRC-valid frames found.
    pub records: u64,
    /// Records with at least one issue.
    pub records_with_issues: u64,
    pub damaged_regions: u64,
    pub damaged_bytes: u64,
    /// Offset of the first problem (header included), if any.
    pub first_problem_at: Option<u64>,
    /// True if the file is a clean journal: valid header, every record in place.
    pub clean: bool,
}

fn issue(code: IssueCode, what: impl Into<String>) -> Issue {
    Issue {
        code,
        what: what.into(),
    }
}

/// Inspects the bytes of a journal (or of any fragment of one).
pub fn inspect(bytes: &[u8]) -> Inspection {
    let (header, start, mut chain) = read_header(bytes);
    let mut items = Vec::new();
    let mut at = start;
    let mut after_damage = false;
    // True for the first record after a damaged region, whose predecessor is unreadable.
    let mut resynced = false;
    while at < bytes.len() {
        match record::parse(&bytes[at..]) {
            Ok(frame) => {
                let mut item = record_item(at, &frame, chain.as_ref(), resynced);
                item.after_damage = after_damage;
                resynced = false;
                chain = Some(Chain {
                    next_seq: frame.seq.wrapping_add(1),
                    prev_hash: frame.hash(),
                });
                at += frame.len();
                items.push(Item::Record(item));
            }
            Err(e) => {
                let next = match e {
                    // The CRC vouches for the length: the next frame starts right after.
                    FrameError::BadField(_) => {
                        let len = record::peek_len(&bytes[at..]).unwrap_or(0) as usize;
                        Some(at + len).filter(|&n| n < bytes.len())
                    }
                    _ => find_any_frame_after(&bytes[at..]).map(|rel| at + rel),
                };
                let end = next.unwrap_or(bytes.len());
                items.push(Item::Damage(DamageItem {
                    offset: at as u64,
                    len: (end - at) as u64,
                    issue: frame_issue(&e),
                    claimed: claimed(&bytes[at..]),
                    resync_at: next.map(|n| n as u64),
                }));
                after_damage = true;
                resynced = true;
                at = end;
            }
        }
    }
    let summary = summarize(&header, &items);
    Inspection {
        bytes: bytes.len() as u64,
        header,
        items,
        summary,
    }
}

/// Decodes the header. Returns where records start and the chain record 1 must extend
/// (None when the header is damaged, so the genesis hash is unknown).
fn read_header(bytes: &[u8]) -> (HeaderInfo, usize, Option<Chain>) {
    let mut info = HeaderInfo {
        ok: false,
        len: None,
        session_id: None,
        format_version: None,
        created_unix_ns: None,
        genesis: None,
        problem: None,
    };
    if bytes.is_empty() {
        info.problem = Some(issue(IssueCode::BadHeader, "the file is empty"));
        return (info, 0, None);
    }
    match Header::decode(bytes) {
        Ok((h, len)) => {
            let genesis = genesis_hash(&bytes[..len]);
            info.ok = true;
            info.len = Some(len as u64);
            info.session_id = Some(h.session_id);
            info.format_version = Some(h.format_version);
            info.created_unix_ns = Some(h.created_unix_ns);
            info.genesis = Some(genesis.to_hex());
            (info, len, Some(Chain::genesis(genesis)))
        }
        Err(e) => {
            let magic = bytes.starts_with(&header::MAGIC);
            let claimed = claimed_header_len(bytes).filter(|_| magic);
            let start = match claimed {
                Some(len) if len <= bytes.len() => len,
                // No header to skip: read records from the first CRC-valid frame.
                _ if !magic => 0,
                _ => find_any_frame_after(bytes).unwrap_or(bytes.len()),
            };
            info.len = claimed.map(|l| l as u64);
            let what = match (&e, magic) {
                (HeaderError::Invalid(_), false) => format!(
                    "no sjournal header ({e}); reading it as a fragment of records (a quarantine \
                     file, or a file whose start is lost)"
                ),
                _ => format!("damaged header: {e}; records are read from offset {start}"),
            };
            info.problem = Some(issue(IssueCode::BadHeader, what));
            (info, start, None)
        }
    }
}

/// The header length a damaged header claims, if it is a possible one.
fn claimed_header_len(bytes: &[u8]) -> Option<usize> {
    let b = bytes.get(12..16)?;
    let len = u32::from_le_bytes(b.try_into().unwrap()) as usize;
    (header::MIN_LEN..=header::MAX_LEN)
        .contains(&len)
        .then_some(len)
}

fn record_item(
    at: usize,
    frame: &FrameRef<'_>,
    chain: Option<&Chain>,
    resynced: bool,
) -> RecordItem {
    let mut issues = Vec::new();
    match chain {
        None => issues.push(issue(
            IssueCode::Unverified,
            "the link to the previous record cannot be checked: the header is damaged or missing",
        )),
        Some(c) if frame.seq == c.next_seq => {
            if frame.prev_hash != c.prev_hash {
                issues.push(issue(
                    IssueCode::ChainBreak,
                    format!(
                        "prev_hash {} is not the hash of the record before it ({}): a record was \
                         altered or replaced",
                        short(&frame.prev_hash),
                        short(&c.prev_hash)
                    ),
                ));
            }
        }
        Some(c) if resynced => {
            let lost = frame.seq.checked_sub(c.next_seq);
            let what = match lost {
                Some(n) => format!(
                    "seq {} follows seq {}: {} record(s) lost in the damage before it; the link \
                     to them cannot be checked",
                    frame.seq,
                    c.next_seq.wrapping_sub(1),
                    n
                ),
                None => format!(
                    "seq {} after damage that followed seq {}: out of order, and the link cannot \
                     be checked",
                    frame.seq,
                    c.next_seq.wrapping_sub(1)
                ),
            };
            issues.push(issue(
                if lost.is_some() {
                    IssueCode::Unverified
                } else {
                    IssueCode::SeqGap
                },
                what,
            ));
        }
        Some(c) => {
            issues.push(issue(
                IssueCode::SeqGap,
                format!(
                    "seq {} where seq {} was expected (records deleted, reordered or inserted)",
                    frame.seq, c.next_seq
                ),
            ));
            if frame.prev_hash != c.prev_hash {
                issues.push(issue(
                    IssueCode::ChainBreak,
                    format!(
                        "prev_hash {} is not the hash of the record before it ({})",
                        short(&frame.prev_hash),
                        short(&c.prev_hash)
                    ),
                ));
            }
        }
    }
    let (summary, payload) = match payload::to_json(frame.seq, frame.kind, frame.payload) {
        Ok(json) => (
            crate::audit::one_line(json.get(), SUMMARY_CHARS),
            Some(json),
        ),
        Err(e) => {
            // An event whose text is not JSON is still shown.
            let text = payload::decode_event(frame.seq, frame.payload).ok();
            match (text, payload::is_system_kind(frame.kind)) {
                (Some(t), false) => (crate::audit::one_line(t, SUMMARY_CHARS), None),
                _ => {
                    issues.push(issue(IssueCode::BadPayload, e.to_string()));
                    (format!("<{} undecodable bytes>", frame.payload.len()), None)
                }
            }
        }
    };
    RecordItem {
        offset: at as u64,
        len: frame.len() as u64,
        seq: frame.seq,
        ts_unix_ns: frame.ts_unix_ns,
        kind: frame.kind.to_owned(),
        hash: frame.hash().to_hex(),
        prev_hash: frame.prev_hash.to_hex(),
        after_damage: resynced,
        issues,
        summary,
        payload,
    }
}

fn short(h: &Hash) -> String {
    h.to_hex()[..16].to_owned()
}

fn frame_issue(e: &FrameError) -> Issue {
    let code = match e {
        FrameError::Incomplete { .. } => IssueCode::Incomplete,
        FrameError::BadLength { .. } => IssueCode::BadLength,
        FrameError::BadCrc { .. } => IssueCode::BadCrc,
        FrameError::BadField(_) => IssueCode::BadField,
    };
    issue(code, e.to_string())
}

/// Reads the fields a damaged frame claims, as far as its bytes go.
fn claimed(b: &[u8]) -> Claimed {
    let u64_at = |at: usize| {
        b.get(at..at + 8)
            .map(|s| u64::from_le_bytes(s.try_into().unwrap()))
    };
    let kind_len = b
        .get(20..22)
        .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize);
    // The kind follows the fixed fields: at FIXED_LEN in a version-1 frame, after the payload
    // digest and salt in a version-2 or -3 one (flag DIGESTED). The flags may be what is
    // damaged: the layout they name is tried first, then the other.
    let digested = b
        .get(22..24)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .is_some_and(|f| f & record::FLAG_DIGESTED != 0);
    let starts = if digested {
        [record::FIXED_LEN_V2, record::FIXED_LEN]
    } else {
        [record::FIXED_LEN, record::FIXED_LEN_V2]
    };
    let kind = kind_len.and_then(|n| {
        starts.iter().find_map(|&at| {
            let s = b.get(at..at + n)?;
            std::str::from_utf8(s)
                .ok()
                .filter(|k| valid_kind(k))
                .map(str::to_owned)
        })
    });
    Claimed {
        len: record::peek_len(b),
        seq: u64_at(4),
        ts_unix_ns: u64_at(12).map(|t| t as i64),
        kind,
    }
}

pub use crate::journal::scan::find_any_frame_after;

fn summarize(header: &HeaderInfo, items: &[Item]) -> Summary {
    let mut s = Summary::default();
    if header.problem.is_some() {
        s.first_problem_at = Some(0);
    }
    for item in items {
        let problem_at = match item {
            Item::Record(r) => {
                s.records += 1;
                if r.issues.is_empty() {
                    continue;
                }
                s.records_with_issues += 1;
                r.offset
            }
            Item::Damage(d) => {
                s.damaged_regions += 1;
                s.damaged_bytes += d.len;
                d.offset
            }
        };
        s.first_problem_at.get_or_insert(problem_at);
    }
    s.clean = s.first_problem_at.is_none();
    s
}
