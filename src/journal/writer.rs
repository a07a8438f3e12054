//! The writer: one per session at a time (it holds the session's lock for its lifetime),
//! appending checksummed, chained records and acknowledging them only after `sync_data`.
//!
//! Opening recovers: it finds the tail (through the hint, else by a scan), and if the bytes
//! after the last valid record are a provably torn tail it quarantines them, cuts them and
//! appends a `sjournal.recovered` record; if valid records follow the damage it refuses.
//!
//! # Appending
//!
//! The bytes it writes (header, frames, tail hint, high-water mark) are specified in
//! `journal-format.md`; this is the order it writes them in.
//!
//! 1. Take the exclusive flock on `<stem>.lock` (with a deadline for the hook).
//! 2. Open (create, 0600, `O_NOFOLLOW`) `<stem>.sjl` and its mark `<stem>.hwm`; if the journal
//!    was created, fsync the directory. If it is empty, check that no witness names a record
//!    (else refuse: it was emptied or deleted), write the mark of seq 0 and `fdatasync` it,
//!    then write the header and `fdatasync` it.
//! 3. Find the tail (hint, else scan); check the witnesses; recover if needed.
//! 4. Encode the batch's frames into one buffer; `pwrite` it at the end of the last valid
//!    record; `fdatasync`. Only then is the record acknowledged (`{"seq":N,"hash":…}`).
//! 5. Rewrite the hint; release the lock; advance the high-water mark and its copy.
//!
//! If the write or the `fdatasync` fails, the writer is **poisoned**: it refuses every further
//! append with `Error::Poisoned`. It never retries an fsync and reports success: after a
//! failed `fsync` Linux may have dropped the dirty pages and cleared the error, so a retry can
//! "succeed" on data that is gone. The next writer to open the journal re-reads it from disk
//! and recovers.
//!
//! A batch is acknowledged only once it is synced in the first place that takes it: the
//! journal, its rescue journal (when the journal refuses appends: case-table rows 3–5 and
//! 9–12), the root's spool, the fallback spool, else nowhere (`Error::Unkept`). That policy is
//! `session`'s.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::format::hash::{content_hash, genesis_hash};
use crate::format::header::{self, Header, HeaderError};
use crate::format::payload::{self, Recovered, KIND_RECOVERED};
use crate::format::record::FrameRef;
use crate::format::record::{self, valid_kind};
use crate::format::Hash;
use crate::journal::error::Corrupt;
use crate::journal::hint::{self, TailHint};
use crate::journal::hwm::Keeper;
use crate::journal::paths::{self, Root, SessionPaths};
use crate::journal::recovery::{self, Corruption, Verdict};
use crate::journal::scan::{self, Chain, ScanEnd, Stop};
use crate::journal::verify::witness::{self, WitnessKind};
use crate::limits::{BATCH_MAX_BYTES, FRAME_MAX_BYTES};
use crate::storage::lock::{self, Mode};
use crate::storage::{Fs, RealFs, Storage};

/// How to open a writer (and a `Session`).
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Give up waiting for locks at this instant (`LockTimeout`); None waits as long as it takes.
    pub deadline: Option<Instant>,
    /// Every file operation goes through this (the seam for fault injection).
    pub fs: Arc<dyn Fs>,
    /// The fallback spool's base directory (`[hook] fallback_spool_dir`); None: the default
    /// places (see `journal::spool::fallback`).
    pub fallback_dir: Option<PathBuf>,
    /// `Session::open` merges at most this many spool files (None: all). The hook bounds it,
    /// so a long backlog never holds up one event (see `journal::session`).
    pub merge_budget: Option<usize>,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            deadline: None,
            fs: Arc::new(RealFs),
            fallback_dir: None,
            merge_budget: None,
        }
    }
}

impl WriterOptions {
    /// The default options with every file operation going through `fs`.
    pub fn with_fs(fs: impl Fs + 'static) -> Self {
        WriterOptions {
            fs: Arc::new(fs),
            ..Self::default()
        }
    }

    /// The default options with locks given up at `deadline`.
    pub fn until(deadline: Instant) -> Self {
        WriterOptions {
            deadline: Some(deadline),
            ..Self::default()
        }
    }
}

/// An acknowledged record: durable when this is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    pub seq: u64,
    pub hash: Hash,
    pub offset: u64,
    /// The record's length in bytes.
    pub len: u64,
    pub ts_unix_ns: i64,
}

/// What recovery did on open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Where the cut bytes began.
    pub offset: u64,
    pub length: u64,
    pub blake3: Hash,
    pub quarantine: PathBuf,
    pub reason: String,
    /// The seq of the `sjournal.recovered` record that names the cut (after a torn header,
    /// seq 1 of the fresh chain).
    pub recovered_seq: u64,
}

/// Which file of the session a writer appends to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Main,
    /// The rescue journal, used when the main journal refuses appends.
    Rescue,
}

pub struct Writer {
    paths: SessionPaths,
    journal_path: PathBuf,
    lock_path: PathBuf,
    lock_file: File,
    fs: Arc<dyn Fs>,
    storage: Box<dyn Storage>,
    header: Header,
    header_len: u64,
    /// The chain before the first record (genesis hash).
    genesis: Chain,
    chain: Chain,
    end: u64,
    last_frame_at: Option<u64>,
    poisoned: Option<&'static str>,
    buf: Vec<u8>,
    recovery: Option<RecoveryReport>,
    deadline: Option<Instant>,
    /// The journal's high-water mark and its copy (rollback detection).
    hwm: Keeper,
    /// The other witnesses kept with the session, as read when the writer opened.
    witnesses: Witnessed,
}

/// What the tail hint and the snapshot named when the writer opened.
struct Witnessed {
    hinted: Option<TailHint>,
    snapshot: Option<crate::format::snapshot::SnapshotHeader>,
}

fn read_hint(lock_file: &File) -> Option<TailHint> {
    let mut b = [0u8; hint::LEN];
    FileExt::read_exact_at(lock_file, &mut b, 0).ok()?;
    TailHint::decode(&b)
}

pub fn now_unix_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl Writer {
    /// Opens (creating if needed) the session's journal for appending, recovering its tail.
    pub fn open(root: &Root, session_id: &str, opts: &WriterOptions) -> Result<Writer> {
        Self::open_with(root, session_id, Target::Main, opts)
    }

    /// Opens the session's rescue journal (see [`Target::Rescue`]).
    pub fn open_rescue(root: &Root, session_id: &str, opts: &WriterOptions) -> Result<Writer> {
        Self::open_with(root, session_id, Target::Rescue, opts)
    }

    /// Opens one of the session's journals. Every file operation goes through `opts.fs`.
    /// The writer only appends and recovers; merging the session's spool is `Session`'s.
    pub fn open_with(
        root: &Root,
        session_id: &str,
        target: Target,
        opts: &WriterOptions,
    ) -> Result<Writer> {
        let fs = opts.fs.clone();
        let sessions = root.ensure_with(&*fs)?;
        let paths = root.session(session_id)?;
        let (journal_path, lock_path) = match target {
            Target::Main => (paths.journal.clone(), paths.lock.clone()),
            Target::Rescue => (paths.rescue.clone(), paths.rescue_lock.clone()),
        };
        let lock_file = paths::open_file_with(&*fs, &lock_path, true, true)?;
        lock::lock(&lock_file, &lock_path, Mode::Exclusive, opts.deadline)?;
        // The witnesses kept with the session, read before anything is changed: what the tail
        // hint names (the mark and its copy are read by the keeper, the snapshot below).
        let hinted = read_hint(&lock_file);
        let existed = journal_path.exists();
        let file = paths::open_file_with(&*fs, &journal_path, true, true)?;
        // Opened (created) before the directory is synced, so a new journal's mark is as
        // durable as the journal.
        let mut hwm = Keeper::open(
            fs.clone(),
            &journal_path,
            lock_file.try_clone().ok(),
            opts.deadline,
        );
        if !existed {
            paths::sync_dir_with(&*fs, &sessions)?;
            hwm.entry_synced();
        }
        let storage = fs.journal(&journal_path, file);
        let snapshot = match target {
            Target::Main => witness::snapshot_claim(&paths.snapshot),
            Target::Rescue => None,
        };
        let mut w = Writer {
            paths,
            journal_path,
            lock_path,
            lock_file,
            fs,
            storage,
            header: Header::new(session_id, 0),
            header_len: 0,
            genesis: Chain::genesis(Hash::ZERO),
            chain: Chain::genesis(Hash::ZERO),
            end: 0,
            last_frame_at: None,
            poisoned: None,
            buf: Vec::new(),
            recovery: None,
            deadline: opts.deadline,
            hwm,
            witnesses: Witnessed { hinted, snapshot },
        };
        w.open_tail()?;
        let (last_seq, head) = (w.chain.last_seq(), w.chain.prev_hash);
        w.hwm
            .check(last_seq, head)
            .map_err(|c| w.corrupt(w.end, c))?;
        // A mark found missing or damaged, where the journal has records and every witness
        // agrees with it: written again now (after a sync of the journal, so it names only
        // durable records), not left off until the next append.
        if w.hwm.needs_rewrite() && last_seq > 0 {
            w.sync_written()?;
        }
        Ok(w)
    }

    /// Rows 23, 24 by every witness kept with the session, checked when the tail is found and
    /// before recovery may cut anything: the journal ending at seq `last_seq` with hash `head`
    /// must hold what the mark, its copy, the tail hint and the snapshot name, or this writer
    /// refuses (the event then goes to the rescue journal, and `repair` rebuilds). A writer
    /// that went on would reuse the seqs they name. `torn` says bytes after the last record
    /// are about to be judged by recovery: records a crash tore there may be what the tail
    /// hint names (it is written before the sync), and the recovery record names the cut.
    fn check_witnesses(&self, torn: bool) -> Result<()> {
        let (last_seq, head) = (self.chain.last_seq(), self.chain.prev_hash);
        let refuse = |c| Err(self.corrupt(self.end, c));
        if !torn {
            if let Err(c) = self.hwm.check(last_seq, head) {
                return refuse(c);
            }
            if let Some(h) = self.witnesses.hinted {
                let by = WitnessKind::TailHint;
                if let Err(c) = recovery::check_claim(last_seq, head, h.last_seq, h.last_hash, by) {
                    return refuse(c);
                }
            }
        }
        if let Some(snap) = &self.witnesses.snapshot {
            let (seq, hash) = (snap.seq, snap.chain_hash);
            let by = WitnessKind::Snapshot;
            recovery::check_claim(last_seq, head, seq, hash, by).or_else(refuse)?;
            if seq < last_seq {
                // The record it names must still be where it was, with its hash.
                let found = self
                    .read_frame_at(snap.frame_offset)
                    .and_then(|b| scan::frame(&b).ok().map(|f| (f.seq, f.hash())));
                if found.is_some_and(|(s, h)| s != seq || h != hash) {
                    return refuse(Corruption::Replaced {
                        seq,
                        hash,
                        found: found.map_or(Hash::ZERO, |(_, h)| h),
                        by,
                    });
                }
            }
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.journal_path
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The seq the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.chain.next_seq
    }

    /// Hash of the last record (the genesis hash for an empty journal).
    pub fn head(&self) -> Hash {
        self.chain.prev_hash
    }

    /// Bytes of valid journal.
    pub fn len(&self) -> u64 {
        self.end
    }

    pub fn is_empty(&self) -> bool {
        self.chain.next_seq == 1
    }

    pub fn recovery(&self) -> Option<&RecoveryReport> {
        self.recovery.as_ref()
    }

    pub fn session_paths(&self) -> &SessionPaths {
        &self.paths
    }

    /// Length of the journal's header (where its records begin).
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// The file operations this writer goes through.
    pub fn fs(&self) -> &dyn Fs {
        &*self.fs
    }

    /// Calls `visit(offset, record)` for every valid record from `offset` (a record
    /// boundary, at or after the header) to the tail, reading through the writer's own
    /// storage. `chain` is what the record at `offset` must link to (None: from the header);
    /// `links` says whether the links after it are checked too.
    /// Returns where the scan ended: short of the tail only if a record before the tail is
    /// damaged (a writer that trusted a valid hint past it, case-table row 17).
    pub(crate) fn visit_records(
        &self,
        offset: Option<(u64, Chain)>,
        links: scan::Links,
        visit: &mut dyn FnMut(u64, &FrameRef<'_>),
    ) -> Result<ScanEnd> {
        let (start, chain) = offset.unwrap_or((self.header_len, self.genesis));
        scan::scan_storage_with(&*self.storage, start, self.end, chain, links, visit)
            .map_err(|e| self.io_err("read", e))
    }

    /// The bytes of the frame at `offset`, if a whole frame (by its length word) lies within
    /// the valid journal. Not validated: the caller parses it.
    pub(crate) fn read_frame_at(&self, offset: u64) -> Option<Vec<u8>> {
        read_frame_at(&*self.storage, offset, self.end)
    }

    /// Syncs what the journal holds now. The spool calls it before deleting a spool file
    /// because its records are in the journal: another process may have written them and
    /// not synced them yet (it gives up the lock before its sync, or was killed before it),
    /// and a deleted spool file must never be the only copy that was durable. Once synced,
    /// the journal up to this writer's head is acknowledged: the high-water mark moves there.
    pub(crate) fn sync_written(&mut self) -> Result<()> {
        if let Err(e) = self.storage.sync_data() {
            return Err(self.poison("fsync", e));
        }
        let (last_seq, head) = (self.chain.last_seq(), self.chain.prev_hash);
        if last_seq > 0 {
            self.hwm.advance(last_seq, head);
        }
        Ok(())
    }

    pub fn is_poisoned(&self) -> bool {
        self.poisoned.is_some()
    }

    fn io_err(&self, op: &'static str, e: std::io::Error) -> Error {
        Error::io(op, &self.journal_path, e)
    }

    /// The journal's bytes, header included, up to the end of its last valid record.
    pub(crate) fn read_all(&self) -> Result<Vec<u8>> {
        let mut b = vec![0u8; self.end as usize];
        self.storage
            .read_exact_at(&mut b, 0)
            .map_err(|e| self.io_err("read", e))?;
        Ok(b)
    }

    /// What the next record must carry: for a caller that builds the file's next bytes
    /// itself ([`Writer::replace`]).
    pub(crate) fn chain(&self) -> Chain {
        self.chain
    }

    /// Replaces the journal by `bytes` (which end with the record `last`), atomically: a
    /// temporary file in the same directory (0600) is written and synced, renamed over the
    /// journal, and the directory synced. A failure before the rename leaves the journal as
    /// it was (the temporary file is removed); one after it poisons the writer. Only the
    /// bytes of this file are replaced: copies elsewhere (backups, shipped segments) are not.
    pub(crate) fn replace(&mut self, bytes: &[u8], last: Appended) -> Result<()> {
        if let Some(op) = self.poisoned {
            return Err(Error::Poisoned {
                path: self.journal_path.clone(),
                op,
            });
        }
        let mut tmp = self.journal_path.clone().into_os_string();
        tmp.push(".rewrite");
        let tmp = PathBuf::from(tmp);
        // A temporary left by an interrupted rewrite holds nothing the journal needs.
        let _ = self.fs.remove_file(&tmp);
        let written = self
            .fs
            .write_new(&tmp, bytes)
            .and_then(|()| self.fs.rename(&tmp, &self.journal_path));
        if let Err(e) = written {
            let _ = self.fs.remove_file(&tmp);
            return Err(self.io_err("rewrite", e));
        }
        let dir = self.journal_path.parent().unwrap_or(Path::new("."));
        if let Err(e) = self.fs.sync_dir(dir) {
            return Err(self.poison("fsync directory", e));
        }
        let file = match paths::open_file_with(&*self.fs, &self.journal_path, true, false) {
            Ok(f) => f,
            Err(e) => {
                self.poisoned = Some("reopen");
                return Err(e);
            }
        };
        self.storage = self.fs.journal(&self.journal_path, file);
        self.end = bytes.len() as u64;
        self.chain = Chain {
            next_seq: last.seq + 1,
            prev_hash: last.hash,
        };
        self.last_frame_at = Some(last.offset);
        self.hwm.advance(last.seq, last.hash);
        self.write_hint();
        Ok(())
    }

    fn poison(&mut self, op: &'static str, e: std::io::Error) -> Error {
        self.poisoned = Some(op);
        self.io_err(op, e)
    }

    fn corrupt(&self, offset: u64, reason: Corruption) -> Error {
        Corrupt {
            path: self.journal_path.clone(),
            offset,
            seq: self.chain.next_seq,
            reason,
        }
        .into()
    }

    fn open_tail(&mut self) -> Result<()> {
        let len = self.storage.len().map_err(|e| self.io_err("stat", e))?;
        if len == 0 {
            // An empty journal whose witnesses name records was emptied or deleted: refuse
            // before writing anything (the witnesses are the evidence).
            self.check_witnesses(false)?;
            // A journal being created: its mark first (nothing acknowledged yet), synced, so
            // that from its first record on, a missing mark is never a crash's doing.
            self.hwm.init();
            return self.write_header();
        }
        let mut hb = vec![0u8; (len as usize).min(header::MAX_LEN)];
        self.storage
            .read_exact_at(&mut hb, 0)
            .map_err(|e| self.io_err("read", e))?;
        match Header::decode(&hb) {
            Ok((h, hlen)) => {
                if h.session_id != self.paths.session_id {
                    return Err(Error::SessionMismatch {
                        path: self.journal_path.clone(),
                        expected: self.paths.session_id.clone(),
                        found: h.session_id,
                    });
                }
                self.chain = Chain::genesis(genesis_hash(&hb[..hlen]));
                self.genesis = self.chain;
                self.header = h;
                self.header_len = hlen as u64;
            }
            // The header is written and synced alone before any record, so a file that is no
            // longer than a header and holds no valid header is an interrupted creation: no
            // record can exist in it. Keep its bytes in quarantine and start afresh.
            Err(HeaderError::Incomplete { .. } | HeaderError::Invalid(_))
                if recovery::is_torn_header(&hb, len)
                    && self.hwm.acknowledged().is_none()
                    && self.witnesses.hinted.is_none()
                    && self.witnesses.snapshot.is_none() =>
            {
                let reason = format!("torn header: {}", Header::decode(&hb).unwrap_err());
                let report = self.quarantine_and_cut(0, hb, reason)?;
                self.hwm.init();
                self.write_header()?;
                // The fresh chain starts by naming what was cut, like any other recovery.
                return self.append_recovered(&report);
            }
            Err(e) => {
                return Err(Error::BadHeader {
                    path: self.journal_path.clone(),
                    reason: e.to_string(),
                })
            }
        }
        let scan = self.find_tail(len).map_err(|e| self.io_err("read", e))?;
        self.chain = scan.chain;
        self.end = scan.end;
        self.last_frame_at = scan.last_frame_at;
        self.check_witnesses(scan.stop.is_some())?;
        if let Some(stop) = scan.stop {
            self.recover(stop, len)?;
        } else if scan.records > 0 {
            self.write_hint();
        }
        Ok(())
    }

    fn write_header(&mut self) -> Result<()> {
        let h = Header::new(&self.paths.session_id, now_unix_ns());
        let bytes = h.encode();
        if let Err(e) = self.storage.write_all_at(&bytes, 0) {
            return Err(self.poison("write", e));
        }
        if let Err(e) = self.storage.sync_data() {
            return Err(self.poison("fsync", e));
        }
        self.chain = Chain::genesis(genesis_hash(&bytes));
        self.genesis = self.chain;
        self.header = h;
        self.header_len = bytes.len() as u64;
        self.end = self.header_len;
        self.last_frame_at = None;
        Ok(())
    }

    /// Finds the end of the valid records: through the hint when it checks out, else by a
    /// scan from the header.
    fn find_tail(&self, len: u64) -> std::io::Result<ScanEnd> {
        if let Some(from) = self.hinted_chain(len) {
            let (chain, at, last) = from;
            let mut end = scan::scan_storage(&*self.storage, at, len, chain)?;
            end.last_frame_at = end.last_frame_at.or(Some(last));
            return Ok(end);
        }
        scan::scan_storage(&*self.storage, self.header_len, len, self.chain)
    }

    fn hinted_chain(&self, len: u64) -> Option<(Chain, u64, u64)> {
        // As read when the writer opened, under the lock (nobody rewrote it since).
        let h = self.witnesses.hinted?;
        let frame_len = h.end.checked_sub(h.last_frame_at)?;
        if h.last_frame_at < self.header_len || h.end > len || frame_len > FRAME_MAX_BYTES as u64 {
            return None;
        }
        let mut fb = vec![0u8; frame_len as usize];
        self.storage.read_exact_at(&mut fb, h.last_frame_at).ok()?;
        let f = scan::frame(&fb).ok()?;
        // A version-2 or -3 hash does not cover the payload: its digest is checked too.
        if f.len() as u64 != frame_len
            || f.seq != h.last_seq
            || f.hash() != h.last_hash
            || !f.payload_matches()
        {
            return None;
        }
        let chain = Chain {
            next_seq: h.last_seq + 1,
            prev_hash: h.last_hash,
        };
        Some((chain, h.end, h.last_frame_at))
    }

    fn write_hint(&self) {
        let Some(last_frame_at) = self.last_frame_at else {
            return;
        };
        let h = TailHint {
            last_frame_at,
            end: self.end,
            last_seq: self.chain.last_seq(),
            last_hash: self.chain.prev_hash,
        };
        // A hint that fails to write only costs the next opener a scan.
        let _ = self
            .fs
            .write_at(&self.lock_path, &self.lock_file, &h.encode(), 0);
    }

    /// Bytes after the last valid record: cut them only if `recovery::classify` calls them
    /// a provably torn tail.
    fn recover(&mut self, stop: Stop, len: u64) -> Result<()> {
        let storage = &self.storage;
        let verdict = recovery::classify(
            Some(&stop),
            len,
            self.chain.last_seq(),
            self.hwm.acknowledged(),
            |offset, tail_len| {
                let mut tail = vec![0u8; tail_len as usize];
                storage.read_exact_at(&mut tail, offset).map(|()| tail)
            },
        )
        .map_err(|e| self.io_err("read", e))?;
        match verdict {
            Verdict::Clean => Ok(()),
            Verdict::Corrupt { offset, reason } => Err(self.corrupt(offset, reason)),
            Verdict::TornTail {
                offset,
                tail,
                reason,
            } => {
                let report = self.quarantine_and_cut(offset, tail, reason)?;
                self.append_recovered(&report)
            }
        }
    }

    /// Appends the `sjournal.recovered` record that names a cut.
    fn append_recovered(&mut self, report: &RecoveryReport) -> Result<()> {
        let rec = Recovered {
            offset: report.offset,
            length: report.length,
            blake3: report.blake3.to_hex(),
            quarantine: file_name(&report.quarantine),
            reason: report.reason.clone(),
        };
        let appended = self.append(KIND_RECOVERED, &payload::encode_system(&rec))?;
        if let Some(r) = self.recovery.as_mut() {
            r.recovered_seq = appended.seq;
        }
        Ok(())
    }

    /// Copies `[offset, offset+bytes.len())` to a quarantine file (synced, never deleted), then
    /// truncates the journal to `offset` and syncs it. Readers are excluded for the cut.
    fn quarantine_and_cut(
        &mut self,
        offset: u64,
        bytes: Vec<u8>,
        reason: String,
    ) -> Result<RecoveryReport> {
        let digest = content_hash(&bytes);
        let qpath =
            recovery::keep_in_quarantine(&*self.fs, &self.journal_path, offset, &bytes, digest)?;
        // Exclude readers: a mapped page past the new end would fault (SIGBUS) in them.
        let reader_lock = paths::open_file_with(&*self.fs, &self.journal_path, false, false)?;
        lock::lock(
            &reader_lock,
            &self.journal_path,
            Mode::Exclusive,
            self.deadline,
        )?;
        if let Err(e) = self.storage.set_len(offset) {
            return Err(self.poison("truncate", e));
        }
        if let Err(e) = self.storage.sync_data() {
            return Err(self.poison("fsync", e));
        }
        drop(reader_lock);
        self.end = offset;
        let report = RecoveryReport {
            offset,
            length: bytes.len() as u64,
            blake3: digest,
            quarantine: qpath,
            reason,
            recovered_seq: 0,
        };
        self.recovery = Some(report.clone());
        Ok(report)
    }

    /// Appends one record; returns once it is durable.
    pub fn append(&mut self, kind: &str, payload: &[u8]) -> Result<Appended> {
        Ok(self.append_batch(&[(kind, payload)])?[0])
    }

    /// Appends records in one write and one `sync_data`; returns once all are durable.
    pub fn append_batch(&mut self, items: &[(&str, &[u8])]) -> Result<Vec<Appended>> {
        self.append_batch_at(now_unix_ns(), items)
    }

    /// Like [`Writer::append_batch`], with the records' timestamp given instead of read from
    /// the clock. For fixtures, benches and imports that must produce the same records every
    /// time (the fold reads time only from records, so golden state hashes need fixed `ts`).
    pub fn append_batch_at(
        &mut self,
        ts_unix_ns: i64,
        items: &[(&str, &[u8])],
    ) -> Result<Vec<Appended>> {
        self.append_batch_timed(|_| ts_unix_ns, items)
    }

    /// Like [`Writer::append_batch`], the `i`-th record with timestamp `ts(i)` (an import
    /// keeping the times of the records it copies).
    pub fn append_batch_timed(
        &mut self,
        ts: impl Fn(usize) -> i64,
        items: &[(&str, &[u8])],
    ) -> Result<Vec<Appended>> {
        let out = self.write_batch(ts, items)?;
        if let Err(e) = self.storage.sync_data() {
            return Err(self.poison("fsync", e));
        }
        if let Some(last) = out.last() {
            self.hwm.advance(last.seq, last.hash);
        }
        self.write_hint();
        Ok(out)
    }

    /// Encodes and writes records at the tail, without syncing, and advances the tail.
    /// Poisons the writer if the write fails.
    fn write_batch(
        &mut self,
        ts: impl Fn(usize) -> i64,
        items: &[(&str, &[u8])],
    ) -> Result<Vec<Appended>> {
        if let Some(op) = self.poisoned {
            return Err(Error::Poisoned {
                path: self.journal_path.clone(),
                op,
            });
        }
        let mut total = 0u64;
        for (kind, p) in items {
            if !valid_kind(kind) {
                return Err(Error::InvalidKind {
                    kind: kind.to_string(),
                });
            }
            let len = record::frame_len_for(self.header.format_version, kind, p.len()) as u64;
            if len > FRAME_MAX_BYTES as u64 {
                return Err(Error::TooLarge {
                    len,
                    max: FRAME_MAX_BYTES as u64,
                });
            }
            total += len;
        }
        if total > BATCH_MAX_BYTES {
            return Err(Error::TooLarge {
                len: total,
                max: BATCH_MAX_BYTES,
            });
        }
        let mut chain = self.chain;
        let mut out = Vec::with_capacity(items.len());
        self.buf.clear();
        let salts = (self.header.format_version >= 2).then(record::Salts::new);
        for (i, (kind, p)) in items.iter().enumerate() {
            let ts = ts(i);
            let start = self.buf.len();
            let (seq, prev) = (chain.next_seq, &chain.prev_hash);
            let hash = match &salts {
                Some(salts) => {
                    let salt = salts.salt(seq);
                    let v = self.header.format_version;
                    record::encode_digested(&mut self.buf, v, seq, ts, kind, prev, p, &salt, None)
                }
                None => {
                    record::encode(&mut self.buf, seq, ts, kind, prev, p);
                    crate::format::hash::record_hash(&self.buf[start..])
                }
            };
            out.push(Appended {
                seq: chain.next_seq,
                hash,
                offset: self.end + start as u64,
                len: (self.buf.len() - start) as u64,
                ts_unix_ns: ts,
            });
            chain.next_seq += 1;
            chain.prev_hash = hash;
        }
        let buf = std::mem::take(&mut self.buf);
        let written = self.storage.write_all_at(&buf, self.end);
        self.buf = buf;
        if let Err(e) = written {
            return Err(self.poison("write", e));
        }
        // The bytes are in the file: later appends go after them even if the sync fails
        // (a poisoned writer makes no later appends anyway).
        self.chain = chain;
        self.end += self.buf.len() as u64;
        self.last_frame_at = out.last().map(|a| a.offset);
        Ok(out)
    }
}

impl Writer {
    /// Appends records and gives up the session's lock *before* syncing them: the write
    /// happens under the lock, then the lock is released, then `sync_data` runs, and the
    /// records are acknowledged when it returns. Other processes can append while this one
    /// waits for the disk, and the kernel folds their syncs into the same device flush (group
    /// commit across processes, with no coordination beyond the lock). Consumes the writer:
    /// without the lock it no longer knows the tail.
    ///
    /// If the sync fails, the records' bytes are in the file but not known to be durable;
    /// the error is returned and nothing is acknowledged.
    pub fn append_batch_and_release(self, items: &[(&str, &[u8])]) -> Result<Vec<Appended>> {
        self.append_batch_and_release_at(now_unix_ns(), items)
    }

    /// [`Writer::append_batch_and_release`] with the records' timestamp given.
    pub fn append_batch_and_release_at(
        self,
        ts_unix_ns: i64,
        items: &[(&str, &[u8])],
    ) -> Result<Vec<Appended>> {
        self.append_batch_and_release_timed(|_| ts_unix_ns, items)
    }

    /// [`Writer::append_batch_and_release`], the `i`-th record with timestamp `ts(i)`.
    pub fn append_batch_and_release_timed(
        mut self,
        ts: impl Fn(usize) -> i64,
        items: &[(&str, &[u8])],
    ) -> Result<Vec<Appended>> {
        let out = self.write_batch(ts, items)?;
        self.write_hint();
        // Dropping the lock here lets the next writer in while our sync is in flight.
        let _ = self.lock_file.unlock();
        if let Err(e) = self.storage.sync_data() {
            return Err(self.poison("fsync", e));
        }
        if let Some(last) = out.last() {
            self.hwm.advance(last.seq, last.hash);
        }
        Ok(out)
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The bytes of the frame at `offset` of `storage` (its length first, then the frame), if one
/// of a plausible length lies wholly before `end`.
pub(crate) fn read_frame_at(storage: &dyn Storage, offset: u64, end: u64) -> Option<Vec<u8>> {
    let mut lb = [0u8; 4];
    if offset.checked_add(4)? > end {
        return None;
    }
    storage.read_exact_at(&mut lb, offset).ok()?;
    let len = u32::from_le_bytes(lb) as u64;
    if len < 4 || len > FRAME_MAX_BYTES as u64 || offset + len > end {
        return None;
    }
    let mut b = vec![0u8; len as usize];
    storage.read_exact_at(&mut b, offset).ok()?;
    Some(b)
}
