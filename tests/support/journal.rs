//! Building journals (through the writer, or byte by byte with fixed timestamps), reading them
//! back record by record, and finding the files recovery leaves behind.

use std::fs;
use std::path::{Path, PathBuf};

use sjournal::format::hash::genesis_hash;
use sjournal::format::header::Header;
use sjournal::format::payload::{self, encode_event_json};
use sjournal::format::{record, Hash};
use sjournal::journal::reader::Records;
use sjournal::journal::scan::{Chain, Stop};
use sjournal::journal::{JournalReader, Root, Writer, WriterOptions};

/// A scratch directory, on tmpfs when the machine has one. The exhaustive tests open, recover
/// and fsync tens of thousands of journals; what they check (what recovery does with the bytes
/// it finds) does not depend on the disk, and on a real disk each fsync costs milliseconds.
/// Tests about durability against the real disk use [`disk_dir`].
pub fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(t) = tempfile::Builder::new()
            .prefix("sjournal-test-")
            .tempdir_in(shm)
        {
            return t;
        }
    }
    disk_dir()
}

/// A scratch directory in the default temporary directory (usually a real disk).
pub fn disk_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sjournal-test-")
        .tempdir()
        .expect("create a temporary directory")
}

pub fn opts() -> WriterOptions {
    WriterOptions::default()
}

/// JSON text of about `size` bytes (at least 9), distinct for each `i`.
pub fn event_json(i: usize, size: usize) -> String {
    let head = format!("{{\"i\":{i},\"p\":\"");
    let pad = size.saturating_sub(head.len() + 2);
    let fill: String = (0..pad)
        .map(|k| (b'a' + ((i + k) % 26) as u8) as char)
        .collect();
    format!("{head}{fill}\"}}")
}

/// One record as read back from a journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub offset: u64,
    pub end: u64,
    pub seq: u64,
    pub kind: String,
    pub payload: Vec<u8>,
    pub hash: Hash,
}

impl Rec {
    /// The event JSON text this record holds (panics for system records).
    pub fn json(&self) -> String {
        payload::decode_event(self.seq, &self.payload)
            .expect("an event payload")
            .to_owned()
    }
}

/// The parsed state of journal bytes: the header length (None if the header does not
/// decode), the valid records, and the problem that stopped the read.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub header: Option<(Header, usize)>,
    pub records: Vec<Rec>,
    pub stop: Option<Stop>,
}

/// Reads journal bytes the way every reader does (frame, CRC, seq, chain).
pub fn parse(bytes: &[u8]) -> Parsed {
    let Ok((header, hlen)) = Header::decode(bytes) else {
        return Parsed {
            header: None,
            records: Vec::new(),
            stop: None,
        };
    };
    let chain = Chain::genesis(genesis_hash(&bytes[..hlen]));
    let mut records = Vec::new();
    let mut stop = None;
    for r in Records::new(bytes, hlen, chain) {
        match r {
            Ok(r) => records.push(Rec {
                offset: r.offset,
                end: r.offset + r.frame.len() as u64,
                seq: r.seq,
                kind: r.kind.to_owned(),
                payload: r.payload.to_vec(),
                hash: r.hash,
            }),
            Err(s) => stop = Some(s),
        }
    }
    Parsed {
        header: Some((header, hlen)),
        records,
        stop,
    }
}

pub fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Creates the session's journal as a format-1 journal (its header alone): a writer appends
/// to it in format 1. For tests of what the version-1 chain alone does and does not catch.
pub fn start_v1(root: &Root, session: &str) {
    let paths = root.session(session).unwrap();
    fs::create_dir_all(paths.journal.parent().unwrap()).unwrap();
    let h = Header::with_version(session, 1_700_000_000_000_000_000, 1);
    fs::write(&paths.journal, h.encode()).unwrap();
}

/// Appends `events` (JSON texts) as kind "Ev" through one writer; returns the journal path.
pub fn write_events(root: &Root, session: &str, events: &[String]) -> PathBuf {
    let mut w = Writer::open(root, session, &opts()).expect("open writer");
    for e in events {
        w.append("Ev", &sjournal::fold::digest::encode_event("Ev", e))
            .expect("append");
    }
    w.path().to_owned()
}

/// Files recovery quarantined in a directory, sorted.
pub fn quarantine_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(d) => d
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.contains(".quarantine-"))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Overwrites the file's bytes (keeping its inode, like a disk would).
pub fn overwrite(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// Recomputes the CRC of the frame at `[start, end)` after its bytes were edited.
pub fn fix_crc(bytes: &mut [u8], start: usize, end: usize) {
    let crc = crc32fast::hash(&bytes[start..end - 4]);
    bytes[end - 4..end].copy_from_slice(&crc.to_le_bytes());
}

/// A session's records: (seq, kind, payload as JSON text).
pub fn records(root: &Path, session: &str) -> Vec<(u64, String, String)> {
    let paths = Root::new(root).session(session).unwrap();
    let r = JournalReader::open(&paths.journal, None).expect("open journal");
    r.records()
        .unwrap()
        .map(|rec| {
            let rec = rec.expect("valid record");
            let json = payload::to_json(rec.seq, rec.kind, rec.payload).unwrap();
            (rec.seq, rec.kind.to_owned(), json.get().to_owned())
        })
        .collect()
}

/// Raw record payload bytes of one kind.
pub fn payloads(root: &Path, session: &str, kind: &str) -> Vec<(u64, i64, Vec<u8>)> {
    let paths = Root::new(root).session(session).unwrap();
    let r = JournalReader::open(&paths.journal, None).expect("open journal");
    r.records()
        .unwrap()
        .map(|rec| rec.expect("valid record"))
        .filter(|rec| rec.kind == kind)
        .map(|rec| (rec.seq, rec.ts_unix_ns, rec.payload.to_vec()))
        .collect()
}

/// A journal built in memory: the bytes and where each record starts and ends.
pub struct Built {
    pub bytes: Vec<u8>,
    pub header_len: usize,
    /// `(start, end)` of record seq i+1.
    pub frames: Vec<(usize, usize)>,
    pub hashes: Vec<Hash>,
}

impl Built {
    pub fn frame(&self, seq: usize) -> &[u8] {
        let (s, e) = self.frames[seq - 1];
        &self.bytes[s..e]
    }
}

/// Encodes a journal for `session` whose records are `events` (kind, raw JSON; for system
/// kinds, the JSON object of the record's fields), the header
/// created at `created_ns` and record i stamped `created_ns + i` seconds.
pub fn build_journal(session: &str, created_ns: i64, events: &[(&str, &str)]) -> Built {
    // Version 1: these journals are checked in, written as the format wrote them then.
    let header = Header::with_version(session, created_ns, 1).encode();
    let mut prev = genesis_hash(&header);
    let mut bytes = header.clone();
    let mut frames = Vec::new();
    let mut hashes = Vec::new();
    for (i, (kind, json)) in events.iter().enumerate() {
        let start = bytes.len();
        let ts = created_ns + (i as i64 + 1) * 1_000_000_000;
        // System records (`sjournal.*`) hold their fields as a MessagePack map; events their
        // JSON alone, as the format wrote them before digests (these journals are checked in).
        let payload = if sjournal::format::payload::is_system_kind(kind) {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            sjournal::format::payload::encode_system(&v)
        } else {
            encode_event_json(json)
        };
        record::encode(&mut bytes, i as u64 + 1, ts, kind, &prev, &payload);
        prev = sjournal::format::hash::record_hash(&bytes[start..]);
        frames.push((start, bytes.len()));
        hashes.push(prev);
    }
    Built {
        bytes,
        header_len: header.len(),
        frames,
        hashes,
    }
}

/// blake3 of a file's bytes, to show a file was left untouched.
pub fn file_digest(path: &Path) -> String {
    blake3_hex(&std::fs::read(path).unwrap())
}

pub fn blake3_hex(b: &[u8]) -> String {
    sjournal::format::hash::content_hash(b).to_hex()
}
