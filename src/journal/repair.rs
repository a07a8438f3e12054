//! `sjournal repair`: rebuilds a session's journal from everything that can be salvaged, when
//! the journal refuses appends (damage recovery may not cut, a rollback) or events wait in
//! its rescue journal. Nothing is deleted: the journal it replaces is kept byte for byte
//! beside the new one, and so is the rescue journal it merged.
//!
//! The new journal, written to a temporary file, synced and verified before it replaces the
//! old one (a rename, so readers see the old file or the new one, never a mix):
//!
//! 1. the old header, when it decodes (so the records before the first damage keep their
//!    bytes and hashes, and checkpoints of that prefix still verify); else a fresh one;
//! 2. every CRC-valid record of the old journal in file order, resynchronizing past damage as
//!    `inspect` does. Each keeps its seq, kind, timestamp and payload; its link is re-made.
//!    Records lost in a damaged region between two salvaged ones are replaced by
//!    `sjournal.lost` records (one per missing seq, when the gap fits the damaged bytes), so
//!    that the records after them keep their seq (and every seq another record or a
//!    checkpoint refers to still means the same record). A record that cannot keep its seq
//!    (a duplicate, one out of order) gets the next one, and is listed;
//! 3. one `sjournal.repaired` record naming the old file (as kept), its blake3 and length,
//!    each byte range that held nothing salvageable, and the high-water mark the journal
//!    fell short of, if any;
//! 4. the records of the rescue journal (events written there while the journal refused
//!    them, so after all of its records), renumbered, with the `event_seq` of their
//!    `sjournal.exec`, `sjournal.injected` and `sjournal.host` records renumbered alike.
//!
//! It also rebuilds a journal whose witnesses disagree with it (`verify::witness`), and one
//! that is gone while they name its records (from a fresh header). A journal that verifies,
//! with no rescue journal, is left alone; `--dry-run` builds and checks the new journal and
//! changes nothing.
//!
//! Order of the steps, so that a crash anywhere leaves something the next run finishes. The
//! new file is synced and verified. Then: the old journal is hard-linked to
//! `<stem>.sjl.damaged-<blake3/16>.bin` (a link never replaces a file; one already there is
//! reused if it holds the same bytes); the high-water mark is set to the new journal's last
//! record and synced, its copy in the lock file too, and the tail hint is cleared; the new
//! file is renamed over the journal (readers see the old file or the new one, never a mix; a
//! reader holding a map of the old file keeps reading it); a snapshot that no longer binds the
//! new journal is renamed to `<stem>.snap.superseded-<blake3/16>.bin`; the directory is
//! synced; the rescue journal is hard-linked to `<stem>.rescue.sjl.merged-<blake3/16>.bin`,
//! its mark renamed beside it (`….merged-<blake3/16>.hwm`, so a rescue writer still finishing
//! its sync advances that file, not the next rescue journal's mark), its name unlinked, and
//! the tail hint and mark copy in `<stem>.rescue.lock` cleared. A crash before the rename
//! leaves the damaged journal in place (the next run starts over); a crash after it leaves a
//! rescue journal that the last `sjournal.repaired` record names by its blake3, which the next
//! run only moves aside. Nothing is deleted. A snapshot that still binds needs nothing: it is
//! checked against the journal on load (valid when it covers the unchanged prefix, ignored
//! otherwise). The session's lock (and the rescue journal's) is held throughout, so no writer
//! appends meanwhile; hooks that cannot wait spool.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::hash::{content_hash, genesis_hash, record_hash};
use crate::format::header::Header;
use crate::format::mark::Mark;
use crate::format::payload::{
    self, AcknowledgedMark, ByteRange, Exec, HostOverride, Injected, Lost, Renumbered, Repaired,
    RescueMerged, KIND_EXEC, KIND_HOST, KIND_INJECTED, KIND_LOST, KIND_REPAIRED,
};
use crate::format::record::{self, FrameError, FrameRef, FRAME_MIN_BYTES};
use crate::format::Hash;
use crate::journal::reader::{JournalReader, Records};
use crate::journal::scan::{self, find_any_frame_after, Chain};
use crate::journal::verify::witness;
use crate::journal::verify::{verify_bytes, verify_bytes_witnessed};
use crate::journal::writer::now_unix_ns;
use crate::journal::{hwm, paths, Root};
use crate::limits::REPAIR_LIST_MAX;
use crate::storage::lock::{self, Mode};
use crate::storage::{Fs, RealFs};

/// How to repair.
#[derive(Debug, Clone)]
pub struct RepairOptions {
    /// Build and check the new journal, report, and change nothing.
    pub dry_run: bool,
    /// Give up waiting for the session's locks at this instant.
    pub deadline: Option<Instant>,
    /// The file system the locks, links, renames, removals and the mark go through (tests
    /// inject faults here, as for the writer).
    pub fs: Arc<dyn Fs>,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            dry_run: false,
            deadline: None,
            fs: Arc::new(RealFs),
        }
    }
}

/// What `repair` did (or, with `dry_run`, would do). The JSON form (`repair --json`) is this
/// struct.
#[derive(Debug, Clone, Serialize)]
pub struct RepairReport {
    pub session_id: String,
    pub journal: PathBuf,
    /// False when there was nothing to repair (the journal verifies and has no rescue
    /// journal); nothing was changed then.
    pub repaired: bool,
    pub dry_run: bool,
    /// True if this run only finished an earlier repair that stopped before it had moved the
    /// merged rescue journal aside.
    pub finished_earlier: bool,
    /// Where the replaced journal is kept, byte for byte.
    pub kept: Option<PathBuf>,
    /// Where the merged rescue journal is kept, byte for byte.
    pub rescue_kept: Option<PathBuf>,
    /// Records in the new journal, its last seq, and its head.
    pub records: u64,
    pub head: Option<String>,
    /// The `sjournal.repaired` record written into it.
    pub record: Option<Repaired>,
}

/// Rebuilds the session's journal (see the module documentation).
pub fn repair(root: &Root, session_id: &str, opts: &RepairOptions) -> Result<RepairReport> {
    let sessions = root.ensure()?;
    let paths = root.session(session_id)?;
    let has_main = present(&paths.journal)?;
    let has_rescue = present(&paths.rescue)?;
    // Read before anything is mapped, as verify does. A journal that is gone while its
    // witnesses name records was deleted: it is started again, recording what they name.
    let witnesses = witness::read(&paths.journal);
    let deleted = !has_main && witnesses.names_records();
    if !has_main && !has_rescue && !deleted {
        return Err(Error::NoSuchSession {
            session: session_id.to_owned(),
            root: root.dir().to_owned(),
        });
    }
    let fs = &*opts.fs;
    let _lock = hold(fs, &paths.lock, opts.deadline)?;
    let _rescue_lock = hold(fs, &paths.rescue_lock, opts.deadline)?;
    let mut report = RepairReport {
        session_id: session_id.to_owned(),
        journal: paths.journal.clone(),
        repaired: false,
        dry_run: opts.dry_run,
        finished_earlier: false,
        kept: None,
        rescue_kept: None,
        records: 0,
        head: None,
        record: None,
    };

    let mark = hwm::read(&paths.journal)?;
    // What the journal fell short of: the furthest acknowledged record the mark or another
    // witness of synced records names, that the journal lacks or holds differently.
    let mut acknowledged = mark;
    let main = has_main
        .then(|| JournalReader::open(&paths.journal, opts.deadline))
        .transpose()?;
    let main_bytes = main.as_ref().map_or(&[][..], |r| r.bytes());
    let verdict = match &main {
        // The session's lock is ours: no append is in flight, every byte counts.
        Some(_) => Some(verify_bytes_witnessed(
            &paths.journal,
            main_bytes,
            witnesses,
            |s, c| Records::new(main_bytes, s, c),
        )?),
        None if deleted => Some(witness::missing_journal_report(&paths.journal)),
        None => None,
    };
    if let Some(lost) = verdict
        .as_ref()
        .and_then(|v| witness::furthest_lost(&v.witnesses))
    {
        if acknowledged.is_none_or(|m| m.seq < lost.seq) {
            acknowledged = Some(lost);
        }
    }
    if let Ok((h, _)) = Header::decode(main_bytes) {
        if h.session_id != session_id {
            return Err(Error::SessionMismatch {
                path: paths.journal.clone(),
                expected: session_id.to_owned(),
                found: h.session_id,
            });
        }
    }
    let rescue = has_rescue
        .then(|| JournalReader::open(&paths.rescue, opts.deadline))
        .transpose()?;
    let rescue_bytes = rescue.as_ref().map_or(&[][..], |r| r.bytes());
    let main_ok = verdict.as_ref().is_some_and(|v| v.ok);
    if main_ok && !has_rescue {
        return Ok(report);
    }
    if main_ok && already_merged(main_bytes, rescue_bytes) {
        report.finished_earlier = true;
        report.repaired = true;
        if !opts.dry_run {
            report.rescue_kept = Some(move_rescue_aside(fs, &paths.rescue, rescue_bytes)?);
        }
        return Ok(report);
    }

    // Build the new journal in a temporary file beside the journal.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.repair-", paths.stem))
        .suffix(".tmp")
        .tempfile_in(&sessions)
        .map_err(|e| Error::io("create", &sessions, e))?;
    let header_bytes = match Header::decode(main_bytes) {
        Ok((_, hlen)) => main_bytes[..hlen].to_vec(),
        Err(_) => Header::new(session_id, now_unix_ns()).encode(),
    };
    let mut out = Builder::new(tmp.as_file_mut(), &header_bytes);
    let mut rec = Repaired {
        damaged_len: main_bytes.len() as u64,
        damaged_blake3: content_hash(main_bytes).to_hex(),
        problem: verdict
            .as_ref()
            .and_then(|v| v.problem.as_ref())
            .map(|f| format!("offset {}: {}", f.offset, f.what))
            .unwrap_or_default(),
        acknowledged: acknowledged.map(|m| AcknowledgedMark {
            seq: m.seq,
            hash: m.hash.to_hex(),
        }),
        ..Repaired::default()
    };
    if has_main {
        salvage_main(main_bytes, &mut out, &mut rec)?;
    }
    let kept_name = |base: &Path, what: &str, digest: &str| {
        format!(
            "{}.{what}-{}.bin",
            file_name(base),
            &digest[..16.min(digest.len())]
        )
    };
    if has_main {
        rec.damaged = kept_name(&paths.journal, "damaged", &rec.damaged_blake3);
    }
    let rescue_found = has_rescue.then(|| salvage(rescue_bytes));
    if let Some(found) = &rescue_found {
        let blake3 = content_hash(rescue_bytes).to_hex();
        rec.rescue = Some(RescueMerged {
            file: kept_name(&paths.rescue, "merged", &blake3),
            blake3,
            len: rescue_bytes.len() as u64,
            records: found
                .iter()
                .filter(|f| matches!(f, Found::Record(..)))
                .count() as u64,
            first_seq: out.chain.next_seq + 1,
            lost: found
                .iter()
                .filter_map(|f| match f {
                    Found::Lost(r) => Some(*r),
                    _ => None,
                })
                .take(REPAIR_LIST_MAX)
                .collect(),
        });
    }
    let ts = now_unix_ns();
    out.push(ts, KIND_REPAIRED, &payload::encode_system(&rec))?;
    if let Some(found) = &rescue_found {
        merge_rescue(found, &mut out)?;
    }
    let (records, last) = (out.records, out.last);
    out.finish()?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io("fsync", tmp.path(), e))?;
    check_written(tmp.path())?;
    report.repaired = true;
    report.records = records;
    report.head = last.map(|(_, h)| h.to_hex());
    if opts.dry_run {
        report.record = Some(rec);
        return Ok(report);
    }

    // Commit: keep the old journal, move the mark, rename the new one into place.
    if has_main {
        report.kept = Some(link_beside(
            fs,
            &paths.journal,
            &sessions.join(&rec.damaged),
            main_bytes,
        )?);
    }
    if let Some((seq, hash)) = last {
        hwm::reset(fs, &paths.journal, Mark { seq, hash })?;
    }
    drop(main);
    tmp.persist(&paths.journal)
        .map_err(|e| Error::io("rename", &paths.journal, e.error))?;
    // A snapshot of the history replaced no longer binds: keep it aside (it still says what
    // the old journal held), so it neither stands as a witness against the new journal nor
    // is loaded.
    set_snapshot_aside(fs, &paths.snapshot, &paths.journal)?;
    paths::sync_dir_with(fs, &sessions)?;
    if has_rescue {
        report.rescue_kept = Some(move_rescue_aside(fs, &paths.rescue, rescue_bytes)?);
    }
    report.record = Some(rec);
    Ok(report)
}

/// True if the file exists (as a regular file); a symlink or another file type is refused.
pub(crate) fn present(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::Symlink { path: path.into() }),
        Ok(m) if !m.is_file() => Err(Error::WrongFileType {
            path: path.into(),
            expected: "regular file",
        }),
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("inspect", path, e)),
    }
}

pub(crate) fn hold(
    fs: &dyn Fs,
    lock_path: &Path,
    deadline: Option<Instant>,
) -> Result<std::fs::File> {
    let f = paths::open_file_with(fs, lock_path, true, true)?;
    lock::lock(&f, lock_path, Mode::Exclusive, deadline)?;
    Ok(f)
}

pub(crate) fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// One thing found in a damaged file: a CRC-valid frame, or bytes holding none.
#[derive(Debug)]
enum Found<'a> {
    Record(u64, FrameRef<'a>),
    Lost(ByteRange),
}

/// Every CRC-valid frame of `bytes` in file order, and the ranges between them, from after a
/// valid header (or from the first frame when the header is damaged), resynchronizing past
/// damage as `inspect` does.
fn salvage(bytes: &[u8]) -> Vec<Found<'_>> {
    let mut out = Vec::new();
    let start = match Header::decode(bytes) {
        Ok((_, hlen)) => hlen,
        Err(_) if scan::frame(bytes).is_ok() => 0,
        Err(_) => find_any_frame_after(bytes).unwrap_or(bytes.len()),
    };
    if start > 0 && Header::decode(bytes).is_err() {
        out.push(Found::Lost(ByteRange {
            offset: 0,
            length: start as u64,
        }));
    }
    let mut at = start;
    while at < bytes.len() {
        match scan::frame(&bytes[at..]) {
            Ok(frame) => {
                let len = frame.len();
                out.push(Found::Record(at as u64, frame));
                at += len;
            }
            Err(e) => {
                let next = match e {
                    // The CRC vouches for the length: the next frame starts right after.
                    FrameError::BadField(_) => record::peek_len(&bytes[at..])
                        .map(|l| at + l as usize)
                        .filter(|&n| n < bytes.len()),
                    _ => find_any_frame_after(&bytes[at..]).map(|rel| at + rel),
                };
                let end = next.unwrap_or(bytes.len());
                out.push(Found::Lost(ByteRange {
                    offset: at as u64,
                    length: (end - at) as u64,
                }));
                at = end;
            }
        }
    }
    out
}

/// Step 2: the old journal's records, keeping their seqs (`sjournal.lost` in the gaps).
fn salvage_main(bytes: &[u8], out: &mut Builder<'_>, rec: &mut Repaired) -> Result<()> {
    let mut gap: Option<ByteRange> = None;
    for found in salvage(bytes) {
        match found {
            Found::Lost(r) => {
                rec.lost_bytes += r.length;
                if rec.lost.len() < REPAIR_LIST_MAX {
                    rec.lost.push(r);
                } else {
                    rec.lost_more += 1;
                }
                gap = Some(r);
            }
            Found::Record(offset, f) => {
                let next = out.chain.next_seq;
                // Records lost in the damage just before this one: as many as its seq says,
                // if that many frames fit the damaged bytes.
                if let Some(g) = gap.take().filter(|g| {
                    f.seq > next
                        && (f.seq - next).saturating_mul(FRAME_MIN_BYTES as u64) <= g.length
                }) {
                    let lost = payload::encode_system(&Lost {
                        offset: g.offset,
                        length: g.length,
                    });
                    for _ in next..f.seq {
                        out.push(f.ts_unix_ns, KIND_LOST, &lost)?;
                        rec.lost_records += 1;
                    }
                }
                let seq = out.chain.next_seq;
                if f.seq != seq && rec.renumbered.len() < REPAIR_LIST_MAX {
                    rec.renumbered.push(Renumbered {
                        offset,
                        was: f.seq,
                        now: seq,
                    });
                }
                out.push_salvaged(&f)?;
                rec.salvaged += 1;
            }
        }
    }
    Ok(())
}

/// Step 4: the rescue journal's records, renumbered, with the seqs they refer to.
fn merge_rescue(found: &[Found<'_>], out: &mut Builder<'_>) -> Result<()> {
    let mut renumber = std::collections::BTreeMap::new();
    for f in found {
        let Found::Record(_, f) = f else { continue };
        let seq = out.chain.next_seq;
        renumber.insert(f.seq, seq);
        let rewritten = match f.kind {
            KIND_EXEC => payload::decode_system::<Exec>(f.seq, f.payload)
                .ok()
                .and_then(|mut e| {
                    e.event_seq = *renumber.get(&e.event_seq)?;
                    Some(payload::encode_system(&e))
                }),
            KIND_INJECTED => payload::decode_system::<Injected>(f.seq, f.payload)
                .ok()
                .and_then(|mut i| {
                    i.event_seq = *renumber.get(&i.event_seq)?;
                    Some(payload::encode_system(&i))
                }),
            KIND_HOST => payload::decode_system::<HostOverride>(f.seq, f.payload)
                .ok()
                .and_then(|mut h| {
                    h.event_seq = *renumber.get(&h.event_seq)?;
                    Some(payload::encode_system(&h))
                }),
            _ => None,
        };
        out.push(
            f.ts_unix_ns,
            f.kind,
            rewritten.as_deref().unwrap_or(f.payload),
        )?;
    }
    Ok(())
}

/// True if the journal's last `sjournal.repaired` record names this rescue journal: a repair
/// merged it and stopped before moving it aside.
fn already_merged(main: &[u8], rescue: &[u8]) -> bool {
    let Ok((_, hlen)) = Header::decode(main) else {
        return false;
    };
    let digest = content_hash(rescue).to_hex();
    Records::new(main, hlen, Chain::genesis(genesis_hash(&main[..hlen])))
        .map_while(|r| r.ok())
        .filter(|r| r.kind == KIND_REPAIRED)
        .last()
        .and_then(|r| payload::decode_system::<Repaired>(r.seq, r.payload).ok())
        .and_then(|r| r.rescue)
        .is_some_and(|r| r.blake3 == digest)
}

/// Keeps `bytes` (the content of `path`) under `want` by a hard link to `path` (a link never
/// replaces a file). A file already there is used if it holds the same bytes; else the next
/// free name (`-1`, `-2`, … before `.bin`).
pub(crate) fn link_beside(fs: &dyn Fs, path: &Path, want: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let digest = content_hash(bytes);
    let dir = want.parent().unwrap_or(Path::new("."));
    let stem = file_name(want);
    let stem = stem.strip_suffix(".bin").unwrap_or(&stem).to_owned();
    for n in 0..crate::limits::QUARANTINE_NAMES_MAX {
        let candidate = match n {
            0 => dir.join(format!("{stem}.bin")),
            n => dir.join(format!("{stem}-{n}.bin")),
        };
        match fs.hard_link(path, &candidate) {
            Ok(()) => {
                paths::sync_dir_with(fs, dir)?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if present(&candidate)?
                    && read_whole(&candidate).is_ok_and(|b| content_hash(&b) == digest)
                {
                    return Ok(candidate);
                }
            }
            Err(e) => return Err(Error::io("link", &candidate, e)),
        }
    }
    Err(Error::io(
        "link",
        want,
        std::io::Error::other("too many files by that name hold other bytes"),
    ))
}

/// Keeps the merged rescue journal under its kept name, removes it from its own name, and
/// moves its high-water mark aside with it (the next rescue journal starts without one). The
/// mark is renamed, not rewritten: a rescue writer still finishing its sync holds the old
/// mark file open, and its late advance must land there, not on the next journal's mark.
fn move_rescue_aside(fs: &dyn Fs, rescue: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let blake3 = content_hash(bytes).to_hex();
    let want = rescue.with_file_name(format!(
        "{}.merged-{}.bin",
        file_name(rescue),
        &blake3[..16]
    ));
    let kept = link_beside(fs, rescue, &want, bytes)?;
    let mark = hwm::path_for(rescue);
    if present(&mark)? {
        let to = kept.with_extension("hwm");
        fs.rename(&mark, &to)
            .map_err(|e| Error::io("rename", &mark, e))?;
    }
    fs.remove_file(rescue)
        .map_err(|e| Error::io("unlink", rescue, e))?;
    // Its tail hint and mark copy described it; the next rescue journal starts afresh.
    hwm::clear_lock(fs, rescue)?;
    paths::sync_dir_with(fs, rescue.parent().unwrap_or(Path::new(".")))?;
    Ok(kept)
}

/// A whole file of the root, opened as every file sjournal reads (`storage::open_regular`).
pub(crate) fn read_whole(path: &Path) -> Result<Vec<u8>> {
    crate::storage::read_regular(path, crate::storage::Owner::Anyone, u64::MAX)
}

/// Renames the snapshot to `<stem>.snap.superseded-<blake3/16>.bin` unless the record it
/// names is in `journal` at its offset with its hash.
pub(crate) fn set_snapshot_aside(fs: &dyn Fs, snapshot: &Path, journal: &Path) -> Result<()> {
    let Some(h) = witness::snapshot_claim(snapshot) else {
        return Ok(());
    };
    // Only the frame at the offset the snapshot names is read (its length first).
    let frame = paths::open_file(journal, false, false).ok().and_then(|f| {
        let end = f.metadata().ok()?.len();
        crate::journal::writer::read_frame_at(&f, h.frame_offset, end)
    });
    let binds = frame
        .as_deref()
        .and_then(|b| scan::frame(b).ok())
        .is_some_and(|f| f.seq == h.seq && f.hash() == h.chain_hash);
    if binds {
        return Ok(());
    }
    let kept = read_whole(snapshot)?;
    let to = snapshot.with_file_name(format!(
        "{}.superseded-{}.bin",
        file_name(snapshot),
        &content_hash(&kept).to_hex()[..16]
    ));
    fs.rename(snapshot, &to)
        .map_err(|e| Error::io("rename", snapshot, e))
}

/// The new journal must verify before it replaces anything.
fn check_written(path: &Path) -> Result<()> {
    let bytes = read_whole(path)?;
    let v = verify_bytes(path, &bytes, Ok(None), |s, c| Records::new(&bytes, s, c))?;
    match v.problem {
        None => Ok(()),
        Some(f) => Err(Error::io(
            "verify",
            path,
            std::io::Error::other(format!(
                "the repaired journal does not verify at offset {}: {} (nothing was replaced; please report this)",
                f.offset, f.what
            )),
        )),
    }
}

/// Writes a journal from scratch: records chained and numbered as they are pushed.
struct Builder<'f> {
    out: std::io::BufWriter<&'f mut std::fs::File>,
    /// The header's format version.
    version: u16,
    /// Set for a version-2 or -3 journal.
    salts: Option<record::Salts>,
    chain: Chain,
    buf: Vec<u8>,
    records: u64,
    last: Option<(u64, Hash)>,
    error: Option<std::io::Error>,
}

impl<'f> Builder<'f> {
    fn new(file: &'f mut std::fs::File, header: &[u8]) -> Builder<'f> {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let error = out.write_all(header).err();
        let version = Header::decode(header).map_or(1, |(h, _)| h.format_version);
        let salts = (version >= 2).then(record::Salts::new);
        Builder {
            out,
            version,
            salts,
            chain: Chain::genesis(genesis_hash(header)),
            buf: Vec::new(),
            records: 0,
            last: None,
            error,
        }
    }

    fn push(&mut self, ts: i64, kind: &str, payload: &[u8]) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(Error::io("write", "<repaired journal>", e));
        }
        self.buf.clear();
        let seq = self.chain.next_seq;
        let prev = &self.chain.prev_hash;
        let hash = match &self.salts {
            Some(salts) => {
                let salt = salts.salt(seq);
                let v = self.version;
                record::encode_digested(&mut self.buf, v, seq, ts, kind, prev, payload, &salt, None)
            }
            None => {
                record::encode(&mut self.buf, seq, ts, kind, prev, payload);
                record_hash(&self.buf)
            }
        };
        self.out
            .write_all(&self.buf)
            .map_err(|e| Error::io("write", "<repaired journal>", e))?;
        self.chain.next_seq += 1;
        self.chain.prev_hash = hash;
        self.records += 1;
        self.last = Some((seq, hash));
        Ok(())
    }

    /// A salvaged record: its bytes as they were when it keeps its place in the chain (so a
    /// digested record keeps its salt and digest, and an erased one stays erased), else
    /// encoded afresh at the next seq.
    fn push_salvaged(&mut self, f: &FrameRef<'_>) -> Result<()> {
        let in_place = f.seq == self.chain.next_seq
            && f.prev_hash == self.chain.prev_hash
            && f.version() == self.version;
        if !in_place {
            return self.push(f.ts_unix_ns, f.kind, f.payload);
        }
        if let Some(e) = self.error.take() {
            return Err(Error::io("write", "<repaired journal>", e));
        }
        let hash = f.hash();
        self.out
            .write_all(f.bytes)
            .map_err(|e| Error::io("write", "<repaired journal>", e))?;
        self.chain.next_seq += 1;
        self.chain.prev_hash = hash;
        self.records += 1;
        self.last = Some((f.seq, hash));
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(Error::io("write", "<repaired journal>", e));
        }
        self.out
            .flush()
            .map_err(|e| Error::io("write", "<repaired journal>", e))
    }
}
