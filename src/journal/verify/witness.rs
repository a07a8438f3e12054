//! The independent witnesses of how far a journal got, and whether the journal still holds
//! what each of them names.
//!
//! The hash chain cannot see records cut off at a record boundary, or an older copy of the
//! journal put back: what is left is a valid, shorter chain. Only something kept outside the
//! journal can tell. sjournal keeps several such things, in different files, each written for
//! its own reason; each names a record (its seq and hash) the journal held when it was
//! written:
//!
//! | witness | file | names | written |
//! |---|---|---|---|
//! | the high-water mark | `<stem>.hwm` | the last acknowledged record | after each sync; synced at creation |
//! | the mark's copy | `<stem>.lock`, at [`hwm::COPY_AT`] | the same | with the mark, never synced |
//! | the tail hint | `<stem>.lock`, at 0 | the last record written | after each write, maybe before its sync |
//! | the snapshot | `<stem>.snap` | the last record folded into it | after a commit (synced, renamed) |
//! | each remote cursor | `remote/cursors/<dest>/<stem>.cursor` | the last record shipped, and the journal's genesis | after the upload (synced, renamed) |
//! | a signed checkpoint | kept by the auditor; on every shipped segment | a signed `(seq, head)` | out of sjournal's hands |
//!
//! All but the tail hint name only records that were synced, so a crash can make them lag
//! the journal, never lead it: one that names a record the journal lacks, or holds with
//! another hash, is evidence of a rollback or an edit. The tail hint may name a record whose
//! sync had not returned when a power loss came (group commit writes it before the sync), so
//! alone it is weaker evidence, and says so; with the mark's copy in the same file, a rollback
//! that spares the lock file is caught as acknowledged records lost.
//!
//! A missing, empty or damaged high-water mark where the journal has records is a finding of
//! its own: the mark is written and synced when the journal is created, and rewritten in place
//! (within one sector), so a crash does not lose it.
//!
//! Signed checkpoints are the witness kept out of sjournal's hands: `verify --checkpoint FILE`
//! proves the journal still extends one, and `verify --remote` checks the ones every shipped
//! segment carries.
//!
//! [`read`] takes the witnesses before the journal is mapped (so records synced meanwhile
//! cannot look missing), `Witnesses::judge` compares them with the verified records and
//! fills [`VerifyReport::witnesses`]; [`orphans`] finds witnesses of journals that are gone.
//! `verify`, `repair` and the writer (for the witnesses kept with the session) use them.
//!
//! # Verdicts
//!
//! One per witness (`witnesses[].verdict` in `verify --json`):
//!
//! - **ahead**: it names a seq past the journal's last valid record. **replaced**: the
//!   journal's record at that seq has another hash (or, for a ship cursor, the journal has
//!   another genesis). Either is a finding, `rolled back: …` (exit 1), naming every witness
//!   that disagrees; the human output lists every witness under the journal, one a line. A
//!   tail hint is compared only at or past the journal's end (a stale hint is not evidence);
//!   when it alone disagrees the finding says a power loss before the sync can explain it.
//! - **missing**: the mark is absent, empty, damaged or unreadable while a journal in a root
//!   has records (a finding; the other witnesses say whether anything was lost).
//! - **agrees**, **not-checked** (it names nothing, or cannot be read: a damaged copy or hint
//!   is taken for a torn read, never a finding).
//!
//! A journal that is gone (deleted) or empty while its mark, copy, hint or snapshot names
//! records is a rollback to nothing: `verify --session` and `verify --all` report it (not "no
//! such session").
//!
//! # What a writer does when a witness names a later record
//!
//! A writer checks, when it opens and before recovery may cut anything, the witnesses kept
//! with the session: the mark, its copy, the tail hint, and the snapshot (whose record must
//! also still be at its offset with its hash). If any names a record the journal lacks, or
//! another record at the journal's last seq, it refuses with `journal::Corrupt` naming the
//! witness (`…; witness: the tail hint in the lock file`), exactly as for the mark: the event
//! goes to the rescue journal (the hook still exits 0 and says so on stderr), nothing is
//! reused, and `sjournal repair` settles it, recording in `sjournal.repaired` what was lost.
//!
//! A refusal rather than a recorded continuation, because continuing would hand out again seqs
//! that a checkpoint, a shipped copy or a webhook receiver may already know by another hash,
//! and because a rollback is rare enough that a person should look before the journal goes
//! on. The one false alarm this can raise is the tail hint's after a power loss in a write's
//! sync window, which also needs the lock file's page to reach the disk before the journal's;
//! it is reported as such, and repair resumes the session with nothing lost. A torn tail the
//! writer is about to cut is not held against the hint (the crash that tore it is what left
//! the hint ahead; the `sjournal.recovered` record names the cut). Ship cursors are checked by
//! `verify` and by `ship` (which reports DIVERGED), not by the writer: repair cannot rewrite
//! what was shipped, so a writer held to them could never resume.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::format::hash::genesis_hash;
use crate::format::header::Header;
use crate::format::mark::Mark;
use crate::format::snapshot::{SnapshotHeader, HEADER_LEN as SNAPSHOT_HEADER_LEN};
use crate::format::Hash;
use crate::journal::hint::{self, TailHint};
use crate::journal::hwm::{self, MarkFile};
use crate::journal::paths::{self, JOURNAL_EXT};
use crate::journal::reader::Records;
use crate::journal::scan::{self, Chain};

use super::{Finding, VerifyReport};

/// Which witness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WitnessKind {
    /// The high-water mark, `<stem>.hwm`.
    Mark,
    /// The copy of the mark in the lock file.
    MarkCopy,
    /// The tail hint in the lock file.
    TailHint,
    /// The snapshot, `<stem>.snap`.
    Snapshot,
    /// A ship cursor, `remote/cursors/<destination>/<stem>.cursor`.
    RemoteCursor,
}

impl WitnessKind {
    /// What it is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            WitnessKind::Mark => "the high-water mark (<stem>.hwm)",
            WitnessKind::MarkCopy => {
                "the copy of the high-water mark in the lock file (<stem>.lock)"
            }
            WitnessKind::TailHint => "the tail hint in the lock file (<stem>.lock)",
            WitnessKind::Snapshot => "the snapshot (<stem>.snap)",
            WitnessKind::RemoteCursor => "a ship cursor (remote/cursors/)",
        }
    }

    /// What the record it names is known to have been.
    pub fn what_it_proves(self) -> &'static str {
        match self {
            WitnessKind::Mark | WitnessKind::MarkCopy => "acknowledged",
            WitnessKind::TailHint => "written",
            WitnessKind::Snapshot => "acknowledged and folded into the snapshot",
            WitnessKind::RemoteCursor => "acknowledged and shipped",
        }
    }

    /// True if it names only records that were synced: a crash can make it lag the journal,
    /// never lead it. The tail hint may lead it after a power loss.
    pub fn names_only_synced(self) -> bool {
        self != WitnessKind::TailHint
    }
}

/// The state of a witness's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// It names a record (`seq`, `hash`).
    Names,
    /// A mark written when the journal was created: nothing acknowledged yet.
    NothingYet,
    /// There is none.
    Absent,
    /// There is one, but it does not decode.
    Damaged,
    /// It cannot be read (a symlink, a FIFO, no permission).
    Unreadable,
}

/// How a witness compares with the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The journal holds the record it names.
    Agrees,
    /// It names a record past the journal's last valid one: records were lost.
    Ahead,
    /// The journal holds another record at the seq it names.
    Replaced,
    /// The high-water mark is missing, empty, damaged or unreadable while the journal has
    /// records.
    Missing,
    /// Nothing to compare (it names nothing, or the journal's records could not be read).
    NotChecked,
}

impl Verdict {
    /// True if this witness's verdict is a finding.
    pub fn disagrees(self) -> bool {
        matches!(self, Verdict::Ahead | Verdict::Replaced | Verdict::Missing)
    }
}

/// One witness and what it says. `verify --json` lists them in `witnesses`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Witness {
    pub kind: WitnessKind,
    pub path: PathBuf,
    /// The destination of a ship cursor (its `dest` file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    pub state: State,
    /// The record it names.
    pub seq: Option<u64>,
    pub hash: Option<String>,
    pub verdict: Verdict,
    /// Details: the hash the journal holds at `seq` instead, why it cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where the record it names ends in the journal, when it says.
    #[serde(skip)]
    end: Option<u64>,
    /// The genesis hash of the journal it describes, when it says.
    #[serde(skip)]
    genesis: Option<Hash>,
}

impl Witness {
    fn new(kind: WitnessKind, path: PathBuf, state: State) -> Witness {
        Witness {
            kind,
            path,
            destination: None,
            state,
            seq: None,
            hash: None,
            verdict: Verdict::NotChecked,
            note: None,
            end: None,
            genesis: None,
        }
    }

    fn naming(kind: WitnessKind, path: PathBuf, seq: u64, hash: Hash) -> Witness {
        Witness {
            seq: Some(seq),
            hash: Some(hash.to_hex()),
            ..Witness::new(kind, path, State::Names)
        }
    }

    fn claim(&self) -> Option<(u64, Hash)> {
        match (
            self.state,
            self.seq,
            self.hash.as_deref().and_then(Hash::from_hex),
        ) {
            (State::Names, Some(s), Some(h)) => Some((s, h)),
            _ => None,
        }
    }

    /// What it is, with its file: "mark's copy in s.lock".
    pub fn name(&self) -> String {
        let file = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match self.kind {
            WitnessKind::Mark => format!("high-water mark {file}"),
            WitnessKind::MarkCopy => format!("mark's copy in {file}"),
            WitnessKind::TailHint => format!("tail hint in {file}"),
            WitnessKind::Snapshot => format!("snapshot {file}"),
            WitnessKind::RemoteCursor => format!(
                "ship cursor {file} (to {})",
                self.destination.as_deref().unwrap_or("?")
            ),
        }
    }

    /// In a few words, why it disagrees: "high-water mark s.hwm names seq 5", "high-water
    /// mark s.hwm is missing".
    pub fn against(&self) -> String {
        let seq = self.seq.unwrap_or(0);
        match (self.verdict, self.state) {
            (Verdict::Ahead, _) => format!("{} names seq {seq}", self.name()),
            (Verdict::Replaced, _) => {
                format!("{} names seq {seq} with another hash", self.name())
            }
            (_, State::Absent) => format!("{} is missing", self.name()),
            (_, State::Damaged) => format!("{} is empty or damaged", self.name()),
            (_, State::Unreadable) => format!("{} cannot be read", self.name()),
            _ => self.name(),
        }
    }

    /// One line: what it is, what it names, how that compares.
    pub fn summary(&self) -> String {
        let what = self.name();
        let says = match (self.state, self.seq, &self.hash) {
            (State::Names, Some(s), Some(h)) => format!("names seq {s} (hash {h})"),
            (State::NothingYet, ..) => "names nothing acknowledged yet".into(),
            (State::Absent, ..) => "absent".into(),
            (State::Damaged, ..) => "damaged".into(),
            (State::Unreadable, ..) => "unreadable".into(),
            _ => "?".into(),
        };
        let verdict = match self.verdict {
            Verdict::Agrees => "agrees",
            Verdict::Ahead => "AHEAD: the journal lacks that record",
            Verdict::Replaced => "REPLACED: the journal holds another record there",
            Verdict::Missing => "MISSING while the journal has records",
            Verdict::NotChecked => "not compared",
        };
        let note = self
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        format!("{what}: {says}: {verdict}{note}")
    }
}

/// Every witness of one journal, as read before the journal was mapped.
#[derive(Debug)]
pub struct Witnesses {
    /// The mark as `verify_checked` takes it (rows 22-24).
    pub(crate) mark: MarkFile,
    pub list: Vec<Witness>,
}

/// Reads every witness of the journal at `path` (`<root>/sessions/<stem>[.rescue].sjl`). Never
/// fails: a witness that cannot be read is listed as such.
pub fn read(journal: &Path) -> Witnesses {
    let mut list = Vec::new();
    let mark = hwm::inspect(journal);
    let mark_path = hwm::path_for(journal);
    list.push(match &mark {
        MarkFile::Absent => Witness::new(WitnessKind::Mark, mark_path, State::Absent),
        MarkFile::Damaged { len } => Witness {
            note: Some(match len {
                0 => "empty".into(),
                n => format!("{n} bytes, not a whole mark"),
            }),
            ..Witness::new(WitnessKind::Mark, mark_path, State::Damaged)
        },
        MarkFile::Unreadable(e) => Witness {
            note: Some(e.to_string()),
            ..Witness::new(WitnessKind::Mark, mark_path, State::Unreadable)
        },
        MarkFile::Mark(m) if m.seq == 0 => {
            Witness::new(WitnessKind::Mark, mark_path, State::NothingYet)
        }
        MarkFile::Mark(m) => Witness::naming(WitnessKind::Mark, mark_path, m.seq, m.hash),
    });
    let lock = hwm::lock_path_for(journal);
    if let Some(c) = hwm::read_copy(journal) {
        list.push(Witness::naming(
            WitnessKind::MarkCopy,
            lock.clone(),
            c.seq,
            c.hash,
        ));
    }
    if let Some(h) = hint::read(&lock) {
        list.push(hint_witness(lock, h));
    }
    if !is_rescue(journal) {
        if let Some(w) = snapshot_witness(&journal.with_extension("snap")) {
            list.push(w);
        }
    }
    list.extend(remote_cursors(journal));
    Witnesses { mark, list }
}

/// True if the journal is in a root's `sessions/` directory.
fn in_a_root(journal: &Path) -> bool {
    journal
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == "sessions")
}

fn hint_witness(lock: PathBuf, h: TailHint) -> Witness {
    Witness {
        end: Some(h.end),
        ..Witness::naming(WitnessKind::TailHint, lock, h.last_seq, h.last_hash)
    }
}

fn is_rescue(journal: &Path) -> bool {
    journal
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(&format!(".rescue.{JOURNAL_EXT}")))
}

/// The record a snapshot file names: its seq, where that record starts and ends, its hash.
/// None if there is no snapshot or its header does not decode.
pub fn snapshot_claim(path: &Path) -> Option<SnapshotHeader> {
    let f = paths::open_file(path, false, false).ok()?;
    let mut b = [0u8; SNAPSHOT_HEADER_LEN];
    let mut r = f.take(SNAPSHOT_HEADER_LEN as u64);
    r.read_exact(&mut b).ok()?;
    SnapshotHeader::decode(&b).ok()
}

fn snapshot_witness(path: &Path) -> Option<Witness> {
    match paths::open_file(path, false, false) {
        Err(crate::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            None
        }
        Err(e) => Some(Witness {
            note: Some(e.to_string()),
            ..Witness::new(WitnessKind::Snapshot, path.to_owned(), State::Unreadable)
        }),
        Ok(_) => Some(match snapshot_claim(path) {
            Some(h) => Witness {
                end: Some(h.end_offset),
                ..Witness::naming(WitnessKind::Snapshot, path.to_owned(), h.seq, h.chain_hash)
            },
            None => Witness::new(WitnessKind::Snapshot, path.to_owned(), State::Damaged),
        }),
    }
}

/// The ship cursors of the journal, one per destination it was shipped to. The format is the
/// one `remote::cursor` writes (read here too, so that a build without the `remote` feature
/// still checks a root that shipped): a JSON line, then the CRC-32 of that line in hex.
fn remote_cursors(journal: &Path) -> Vec<Witness> {
    let (Some(sessions), Some(name)) = (journal.parent(), journal.file_name()) else {
        return Vec::new();
    };
    let Some(root) = sessions.parent() else {
        return Vec::new();
    };
    let file = Path::new(name).with_extension("cursor");
    let Ok(dests) = std::fs::read_dir(root.join("remote").join("cursors")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = dests.flatten().map(|e| e.path()).collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let path = dir.join(&file);
        let text = match crate::storage::read_regular_text(
            &path,
            crate::storage::Owner::Anyone,
            1 << 20,
        ) {
            Ok(t) => t,
            Err(crate::Error::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                continue
            }
            // Too long, or not text: not a cursor (damaged, below).
            Err(crate::Error::Io { op: "read", .. }) => String::new(),
            Err(e) => {
                out.push(Witness {
                    note: Some(e.to_string()),
                    ..Witness::new(WitnessKind::RemoteCursor, path, State::Unreadable)
                });
                continue;
            }
        };
        let destination = crate::storage::read_regular_text(
            &dir.join("dest"),
            crate::storage::Owner::Anyone,
            1 << 16,
        )
        .ok()
        .map(|d| d.trim().to_owned());
        let w = match parse_cursor(&text) {
            Some(c) if c.last_seq > 0 => Witness {
                end: Some(c.end),
                genesis: Hash::from_hex(&c.genesis),
                ..Witness::naming(
                    WitnessKind::RemoteCursor,
                    path,
                    c.last_seq,
                    Hash::from_hex(&c.head).unwrap_or(Hash::ZERO),
                )
            },
            Some(_) => continue,
            None => Witness::new(WitnessKind::RemoteCursor, path, State::Damaged),
        };
        out.push(Witness { destination, ..w });
    }
    out
}

#[derive(serde::Deserialize)]
struct CursorLine {
    v: u32,
    genesis: String,
    last_seq: u64,
    end: u64,
    head: String,
}

fn parse_cursor(text: &str) -> Option<CursorLine> {
    let mut lines = text.lines();
    let (line, crc) = (lines.next()?, lines.next()?);
    if format!("{:08x}", crc32fast::hash(line.as_bytes())) != crc {
        return None;
    }
    serde_json::from_str(line)
        .ok()
        .filter(|c: &CursorLine| c.v == 1)
}

/// What the verified journal is, for `Witnesses::judge`.
pub(crate) struct Verified<'b> {
    pub bytes: &'b [u8],
    /// Where the valid records end.
    pub valid_end: u64,
    /// The hash of the record at the mark's seq, if the verify saw it.
    pub at_mark: Option<(u64, Hash)>,
}

impl Witnesses {
    /// True if any witness names a record (seq 1 or later).
    pub fn names_records(&self) -> bool {
        self.list
            .iter()
            .any(|w| w.claim().is_some_and(|(s, _)| s > 0))
    }

    /// The mark as the checks of rows 22-24 take it (taken out: the list keeps what it said).
    pub(crate) fn take_mark(&mut self) -> crate::Result<Option<Mark>> {
        match std::mem::replace(&mut self.mark, MarkFile::Absent) {
            MarkFile::Unreadable(e) => Err(e),
            m => Ok(m.mark()),
        }
    }

    /// Compares every witness with the verified journal, lists them in `report.witnesses`,
    /// and, if the report has no problem yet, makes the disagreement its problem (a rollback
    /// when a witness of synced records disagrees).
    pub(crate) fn judge(self, report: &mut VerifyReport, v: Verified<'_>) {
        let mut list = self.list;
        let header = Header::decode(v.bytes).ok();
        let Some((_, hlen)) = header else {
            // An empty file (a journal emptied, or created again after it was deleted) whose
            // witnesses name records: a rollback to nothing, not an interrupted creation.
            if v.bytes.is_empty() && list.iter().any(|w| w.claim().is_some_and(|(s, _)| s > 0)) {
                report.problem = Some(missing_finding(&mut list, &report.path, "is empty"));
                report.rolled_back = true;
                report.ok = false;
            }
            report.witnesses = list;
            return;
        };
        let genesis = genesis_hash(&v.bytes[..hlen]);
        let last = report.last_seq;
        let head = report
            .head
            .as_deref()
            .and_then(Hash::from_hex)
            .unwrap_or(genesis);
        // Seqs before the end that no cheaper check settles: one scan finds their hashes.
        let mut hashes: BTreeMap<u64, Hash> = BTreeMap::new();
        if let Some((s, h)) = v.at_mark {
            hashes.insert(s, h);
        }
        let settled = |w: &Witness, hashes: &BTreeMap<u64, Hash>| -> Option<Verdict> {
            let (seq, hash) = w.claim()?;
            if w.genesis.is_some_and(|g| g != genesis) {
                return Some(Verdict::Replaced);
            }
            if seq > last {
                return Some(Verdict::Ahead);
            }
            if seq == last {
                return Some(if hash == head {
                    Verdict::Agrees
                } else {
                    Verdict::Replaced
                });
            }
            if let Some(h) = hashes.get(&seq) {
                return Some(if *h == hash {
                    Verdict::Agrees
                } else {
                    Verdict::Replaced
                });
            }
            // The record after it, where the witness says it ends, links to it.
            let end = w.end? as usize;
            if end < v.valid_end as usize {
                if let Ok(next) = scan::frame(&v.bytes[end..v.valid_end as usize]) {
                    if next.seq == seq + 1 && next.prev_hash == hash {
                        return Some(Verdict::Agrees);
                    }
                }
            }
            None
        };
        let wanted: BTreeSet<u64> = list
            .iter()
            .filter(|w| settled(w, &hashes).is_none())
            .filter_map(|w| w.claim().map(|(s, _)| s))
            .collect();
        if !wanted.is_empty() {
            for r in Records::new(v.bytes, hlen, Chain::genesis(genesis)).flatten() {
                if wanted.contains(&r.seq) {
                    hashes.insert(r.seq, r.hash);
                }
                if r.seq >= *wanted.last().expect("not empty") {
                    break;
                }
            }
        }
        // A journal in a root (`<root>/sessions/`) has a mark from its creation on; a journal
        // file elsewhere (a copy, a fixture) is judged by its chain and what lies beside it.
        let has_records = report.records > 0 && in_a_root(&report.path);
        for w in &mut list {
            w.verdict = match (w.kind, w.state) {
                (WitnessKind::Mark, State::Absent | State::Damaged | State::Unreadable)
                    if has_records =>
                {
                    Verdict::Missing
                }
                (WitnessKind::Mark, State::NothingYet) => Verdict::Agrees,
                // A stale tail hint (records were appended after it) says where an earlier
                // writer left the tail, in whatever history the journal had then; it is
                // evidence only at the end, where the writer checks it too.
                (WitnessKind::TailHint, _)
                    if w.seq.is_some_and(|s| s < last)
                        && settled(w, &hashes) != Some(Verdict::Agrees) =>
                {
                    w.note = Some("stale: the journal has records after it".into());
                    Verdict::NotChecked
                }
                _ => settled(w, &hashes).unwrap_or(Verdict::NotChecked),
            };
            if w.verdict == Verdict::Replaced {
                if let Some((seq, _)) = w.claim() {
                    w.note = match w.genesis.filter(|g| *g != genesis) {
                        Some(_) => {
                            Some("it describes another journal (another genesis hash)".into())
                        }
                        None => (seq == last)
                            .then_some(head)
                            .or_else(|| hashes.get(&seq).copied())
                            .map(|h| format!("the journal's seq {seq} has hash {}", h.to_hex())),
                    };
                }
            }
        }
        if report.problem.is_none() {
            if let Some(f) = finding(&list, report) {
                report.rolled_back = list
                    .iter()
                    .any(|w| matches!(w.verdict, Verdict::Ahead | Verdict::Replaced));
                report.problem = Some(f);
                report.ok = false;
            }
        }
        report.witnesses = list;
    }
}

/// The furthest record named by a witness of synced records that disagrees with the journal
/// (what `repair` records as acknowledged when the mark itself says nothing).
pub fn furthest_lost(list: &[Witness]) -> Option<Mark> {
    list.iter()
        .filter(|w| {
            w.kind.names_only_synced() && matches!(w.verdict, Verdict::Ahead | Verdict::Replaced)
        })
        .filter_map(|w| w.claim())
        .max_by_key(|(s, _)| *s)
        .map(|(seq, hash)| Mark { seq, hash })
}

/// The finding the witnesses make, if any disagrees.
fn finding(list: &[Witness], report: &VerifyReport) -> Option<Finding> {
    let against: Vec<&Witness> = list.iter().filter(|w| w.verdict.disagrees()).collect();
    if against.is_empty() {
        return None;
    }
    let lost = against
        .iter()
        .any(|w| matches!(w.verdict, Verdict::Ahead | Verdict::Replaced));
    let hard = against
        .iter()
        .any(|w| w.kind.names_only_synced() && w.verdict != Verdict::Missing);
    let agree: Vec<String> = list
        .iter()
        .filter(|w| w.verdict == Verdict::Agrees)
        .map(|w| w.name())
        .collect();
    let listed: Vec<String> = against.iter().map(|w| w.against()).collect();
    let what = if !lost {
        format!(
            "the high-water mark is missing or damaged while the journal has {} record(s), so \
             rollback cannot be checked against it: {}; the other witnesses agree: {} \
             (the next writer writes the mark again)",
            report.records,
            listed.join(", "),
            if agree.is_empty() {
                "none".to_owned()
            } else {
                agree.join(", ")
            }
        )
    } else if hard {
        format!(
            "rolled back: the journal ends at seq {} (hash {}), but witnesses of acknowledged \
             records disagree: {} (an older copy restored, records cut off, or the journal \
             replaced; the next append goes to the rescue journal until `sjournal repair` \
             rebuilds it)",
            report.last_seq,
            report.head.as_deref().unwrap_or("-"),
            listed.join(", ")
        )
    } else {
        format!(
            "rolled back: the journal ends at seq {} (hash {}), but later records were written: \
             {}; no witness of acknowledged records goes past it, so a power loss before their \
             sync can explain it, as can records cut off (the next append goes to the rescue \
             journal until `sjournal repair` rebuilds it)",
            report.last_seq,
            report.head.as_deref().unwrap_or("-"),
            listed.join(", ")
        )
    };
    Some(Finding {
        offset: report.bytes,
        seq: report.last_seq + 1,
        what,
        torn_tail: false,
    })
}

/// Journals that are gone while their witnesses still name records (a journal deleted, with or
/// without its mark): under `sessions`, every `<stem>[.rescue].sjl` path whose file is missing
/// but whose mark, mark copy, tail hint or snapshot names a record. A rescue journal `repair`
/// moved aside (kept as `….merged-*.bin`) is not one.
pub fn orphans(sessions: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(sessions) else {
        return Vec::new();
    };
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut all: BTreeSet<String> = BTreeSet::new();
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        for ext in [".hwm", ".lock", ".snap"] {
            if let Some(base) = n.strip_suffix(ext) {
                names.insert(base.to_owned());
            }
        }
        all.insert(n);
    }
    let mut out = Vec::new();
    for base in names {
        let journal = format!("{base}.{JOURNAL_EXT}");
        if all.contains(&journal) {
            continue;
        }
        let kept = format!("{journal}.merged-");
        if all.iter().any(|n| n.starts_with(&kept)) {
            continue;
        }
        let path = sessions.join(&journal);
        let w = read(&path);
        if w.list.iter().any(|w| w.claim().is_some_and(|(s, _)| s > 0)) {
            out.push(path);
        }
    }
    out
}

/// The report for a journal that is gone while witnesses name its records (see [`orphans`]):
/// a rollback to nothing.
pub fn missing_journal_report(path: &Path) -> VerifyReport {
    let mut list = read(path).list;
    let problem = missing_finding(&mut list, path, "is gone");
    VerifyReport {
        path: path.to_owned(),
        session_id: None,
        ok: false,
        records: 0,
        bytes: 0,
        last_seq: 0,
        head: None,
        problem: Some(problem),
        acknowledged: None,
        rolled_back: true,
        witnesses: list,
        erasures: Vec::new(),
        seen: Default::default(),
    }
}

/// Judges the witnesses of a journal with no records left, and says what they name.
fn missing_finding(list: &mut [Witness], path: &Path, how: &str) -> Finding {
    for w in list.iter_mut() {
        w.verdict = match (w.kind, w.state) {
            (_, State::Names) => Verdict::Ahead,
            (WitnessKind::Mark, State::Absent | State::Damaged | State::Unreadable) => {
                Verdict::Missing
            }
            _ => Verdict::NotChecked,
        };
    }
    let named: Vec<String> = list
        .iter()
        .filter(|w| w.verdict.disagrees())
        .map(|w| w.against())
        .collect();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Finding {
        offset: 0,
        seq: 1,
        what: format!(
            "rolled back: the journal {name} {how}, but its witnesses name records it held: {} \
             (the journal was deleted or emptied; the next append goes to the rescue journal \
             until `sjournal repair --session ID` starts it again, recording what they name)",
            named.join(", ")
        ),
        torn_tail: false,
    }
}
