//! `ship`: sealed segments of a journal's acknowledged records, one create-only object each.
//!
//! ```text
//! ship(journal):
//!   map the journal (shared lock), fdatasync it: every record shipped is durable here first
//!   read every record from the header on, checking CRC and chain; stop at the first damage
//!   cursor := the local cursor; the journal must still hold record cursor.last_seq, ending at
//!             cursor.end, with hash cursor.head — else DIVERGED (nothing is written)
//!   no cursor: PUT header (create-only); if it exists, its bytes must equal ours, else DIVERGED,
//!              and LIST seg/ to adopt what is there without uploading it again
//!   quarantine files not yet shipped: PUT create-only (an existing one must be equal)
//!   loop over the records after the cursor, ≤ SEGMENT_MAX_BYTES at a time:
//!     PUT seg/<first> create-only, metadata (first, last, prev hash, head, blake3, signed checkpoint)
//!       created → cursor := last
//!       exists  → GET it; its frames must be the local records from `first` on, each byte for
//!                 byte or (after a lost cursor) the record as it was before a recorded
//!                 erasure, same record hash; it ends at a record boundary (another shipper may
//!                 have cut a shorter or longer segment): adopt, cursor := its last seq; else
//!                 DIVERGED (report, never overwrite)
//!     write the cursor (temporary file, fsync, rename, directory fsync)
//!   every erased record (`sjournal erase`) not shipped as an erasure yet:
//!     PUT erasure/<seq> create-only (the erased frame; an existing one must be equal)
//!     write the cursor
//! ```
//!
//! Erasures: `sjournal erase` rewrites a record in place, so the local journal no longer
//! holds the bytes that were shipped, and its records after it moved. That is not a
//! divergence when the record at the cursor still has the shipped hash: the chain is checked
//! from genesis, a version-2 or -3 record hash commits to seq, time, kind, link and payload digest,
//! and every frame that is not erased carries the payload its digest commits to, so the only
//! records that can differ from what was shipped are erased ones, each of which must be
//! bound by its chained `sjournal.erased` record (the checks of local verify). Ship then
//! uploads each erased frame as `erasure/<seq>` ([`super::erasure`]) instead of calling it
//! DIVERGED; any other difference still is.
//!
//! Every seq ends up in exactly one object: `seg/<k>` is written only once the segment before
//! it is known to end at `k − 1`, and objects are never overwritten. A crash anywhere leaves
//! either a cursor behind the remote (the next run adopts) or a stale temporary file (ignored).
//!
//! Faults are injected through [`Seam`] (tests only; production passes [`NoFaults`]).

use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde::Serialize;

use super::cursor::{self, Cursor};
use super::error::{RemoteError, Result};
use super::identity::Identity;
use super::layout::{Location, StreamKind};
use super::segment::{self, SegmentMeta};
use super::store::{Put, Remote};
use crate::format::hash::content_hash;
use crate::format::Hash;
use crate::journal::paths::{open_file, JOURNAL_EXT};
use crate::journal::scan::find_valid_frame_after;
use crate::journal::JournalReader;
use crate::limits::{BATCH_MAX_BYTES, SEGMENT_MAX_BYTES};

/// A step of [`ship_journal`] at which a test can make it stop, as a crash would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Before the header's PUT.
    Header,
    /// After LIST of the segments (no cursor), before adopting them.
    Listed,
    /// Before a quarantine file's PUT.
    Quarantine(String),
    /// Before the PUT of `seg/<first>`.
    Segment(u64),
    /// After `seg/<first>` was created, before anything else (the cursor is behind).
    Created(u64),
    /// After `seg/<first>` was found to exist and its bytes were compared equal.
    Adopted(u64),
    /// Before the cursor is written with this last seq.
    Cursor(u64),
    /// Before the PUT of `erasure/<seq>`.
    Erasure(u64),
}

/// Fault injection: `at` runs before or after each step; an error stops `ship` there.
pub trait Seam: Send + Sync {
    fn at(&self, step: &Step) -> Result<()>;
}

/// The production seam: no faults.
pub struct NoFaults;

impl Seam for NoFaults {
    fn at(&self, _: &Step) -> Result<()> {
        Ok(())
    }
}

/// What shipping one journal did. The JSON form (`ship --json`) is this struct.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub location: Option<Location>,
    pub journal: PathBuf,
    /// Segments this run created.
    pub created: u64,
    /// Segments found already there (another shipper, or a run that crashed) and adopted.
    pub adopted: u64,
    /// Bytes of the segments created.
    pub bytes: u64,
    /// Records in the segments created.
    pub records: u64,
    /// The last seq the remote holds now, and its hash.
    pub last_seq: u64,
    pub head: Option<String>,
    pub quarantine: Vec<String>,
    /// Erased records whose erasure object this run shipped (`erasure/<seq>`).
    pub erasures: Vec<u64>,
    /// Set when the local journal no longer matches what was shipped: nothing more was
    /// written for it.
    pub diverged: Option<String>,
    /// Damage that stopped shipping before the end of the journal (records after it are not
    /// shipped); None for a torn tail, which is in `notes`.
    pub damaged: Option<String>,
    pub notes: Vec<String>,
}

impl Report {
    /// True if the run found nothing wrong.
    pub fn ok(&self) -> bool {
        self.diverged.is_none() && self.damaged.is_none()
    }

    pub fn summary(&self) -> String {
        let loc = self
            .location
            .as_ref()
            .map(|l| l.display())
            .unwrap_or_else(|| self.journal.display().to_string());
        if let Some(d) = &self.diverged {
            return format!("DIVERGED {loc}: {d}");
        }
        let mut s = format!(
            "{} {loc}: remote has seq 1..={}; this run created {} segment(s) ({} records, {} bytes), adopted {}",
            if self.damaged.is_some() { "BAD" } else { "ok " },
            self.last_seq,
            self.created,
            self.records,
            self.bytes,
            self.adopted
        );
        if !self.quarantine.is_empty() {
            s.push_str(&format!(
                "; quarantine evidence shipped: {}",
                self.quarantine.join(", ")
            ));
        }
        if !self.erasures.is_empty() {
            let seqs: Vec<String> = self.erasures.iter().map(u64::to_string).collect();
            s.push_str(&format!("; erasures shipped: seq {}", seqs.join(", ")));
        }
        if let Some(d) = &self.damaged {
            s.push_str(&format!("; {d}"));
        }
        for n in &self.notes {
            s.push_str(&format!("; {n}"));
        }
        s
    }
}

/// A valid record of the local journal after the cursor.
#[derive(Debug, Clone, Copy)]
struct Rec {
    offset: u64,
    seq: u64,
    len: u64,
    hash: Hash,
}

impl Rec {
    fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// How one pass ended.
enum Flow {
    Done(Box<Report>),
    /// A remote segment holds bytes past the end of our view of the journal: look again.
    Retry,
}

/// Where a journal file's stream goes: `<stem>.sjl` is the main journal, `<stem>.rescue.sjl`
/// the rescue journal. None for other files.
pub(crate) fn location_of(host: &str, journal: &Path) -> Option<Location> {
    let name = journal.file_name()?.to_str()?;
    let base = name.strip_suffix(&format!(".{JOURNAL_EXT}"))?;
    let (stem, kind) = match base.strip_suffix(".rescue") {
        Some(s) => (s, StreamKind::Rescue),
        None => (base, StreamKind::Main),
    };
    super::layout::valid_component(stem).then(|| Location::new(host, stem, kind))
}

/// Ships one journal file to `remote`. Cursors live in `cursor_dir` (see
/// [`cursor::dir_for`]).
pub async fn ship_journal(
    remote: &Remote,
    journal: &Path,
    identity: &Identity,
    cursor_dir: &Path,
    seam: &dyn Seam,
) -> Result<Report> {
    let loc = location_of(&identity.host_id, journal).ok_or_else(|| RemoteError::File {
        path: journal.to_owned(),
        reason: "not a journal file name (<stem>.sjl or <stem>.rescue.sjl)".into(),
    })?;
    for _ in 0..3 {
        if let Flow::Done(r) = ship_once(remote, journal, &loc, identity, cursor_dir, seam).await? {
            return Ok(*r);
        }
    }
    let mut r = base_report(journal, &loc);
    r.diverged = Some(
        "a remote segment holds records past the end of the local journal (remote extends local): \
         the local journal lost records that were shipped; `sjournal verify --remote` compares them"
            .into(),
    );
    Ok(r)
}

fn base_report(journal: &Path, loc: &Location) -> Report {
    Report {
        location: Some(loc.clone()),
        journal: journal.to_owned(),
        ..Default::default()
    }
}

async fn ship_once(
    remote: &Remote,
    journal: &Path,
    loc: &Location,
    identity: &Identity,
    cursor_dir: &Path,
    seam: &dyn Seam,
) -> Result<Flow> {
    let mut report = base_report(journal, loc);
    let reader = JournalReader::open(journal, None)?;
    // Everything shipped must be durable here first: a record another writer wrote but had not
    // yet synced is synced now (fsync covers the file, whichever descriptor asks).
    open_file(journal, false, false)?
        .sync_data()
        .map_err(|e| crate::Error::io("fdatasync", journal, e))?;
    let map = reader.bytes();
    let (header, hlen, genesis) = match reader.header() {
        Ok(h) => h,
        Err(e) => {
            report.damaged = Some(format!(
                "the journal header is damaged ({e}); nothing shipped"
            ));
            return Ok(Flow::Done(Box::new(report)));
        }
    };
    let session_id = header.session_id.clone();
    let cursor_path = cursor::path_for(cursor_dir, &loc.stem, loc.kind);
    let loaded = cursor::load(&cursor_path)?;
    if let Some(c) = &loaded {
        if c.genesis != genesis.to_hex() {
            report.diverged = Some(
                "the journal's header is not the one shipped (its genesis hash differs): the \
                 journal was recreated or replaced after shipping"
                    .into(),
            );
            return Ok(Flow::Done(Box::new(report)));
        }
    }
    let mut cur = loaded
        .clone()
        .unwrap_or_else(|| Cursor::start(genesis, hlen as u64));

    // Read and check every record; keep those after the cursor.
    let mut recs: Vec<Rec> = Vec::new();
    let mut last_valid = 0u64;
    let mut cursor_checked = cur.last_seq == 0 && cur.end == hlen as u64;
    let mut records = reader.records()?;
    let mut stop = None;
    // Erased records: seq -> (offset, len). `moved`: the record at the cursor has the shipped
    // hash but ends elsewhere (an erasure before it changed a frame's length).
    let mut erased_frames = std::collections::BTreeMap::new();
    let mut moved = None;
    for r in records.by_ref() {
        match r {
            Ok(rec) => {
                last_valid = rec.seq;
                let len = rec.frame.len() as u64;
                if rec.frame.erased() {
                    erased_frames.insert(rec.seq, (rec.offset, len));
                }
                if rec.seq == cur.last_seq {
                    let same = Some(rec.hash) == cur.head_hash();
                    cursor_checked = same && rec.offset + len == cur.end;
                    if same && !cursor_checked && !erased_frames.is_empty() {
                        moved = Some(rec.offset + len);
                        cursor_checked = true;
                    }
                    if !cursor_checked {
                        report.diverged = Some(format!(
                            "record seq {} (offset {}) is not the record that was shipped (hash {} \
                             ending at {}, shipped {} ending at {}): the local journal was rewritten \
                             after shipping; the remote copy is the shipped one (`sjournal fetch`)",
                            rec.seq,
                            rec.offset,
                            rec.hash,
                            rec.offset + len,
                            cur.head,
                            cur.end
                        ));
                        return Ok(Flow::Done(Box::new(report)));
                    }
                }
                if rec.seq > cur.last_seq {
                    recs.push(Rec {
                        offset: rec.offset,
                        seq: rec.seq,
                        len,
                        hash: rec.hash,
                    });
                }
            }
            Err(s) => stop = Some(s),
        }
    }
    let valid_end = records.offset();
    if let Some(s) = &stop {
        if last_valid < cur.last_seq {
            report.diverged = Some(format!(
                "record seq {} at offset {} is damaged ({}), but seq 1..={} were shipped: the local \
                 journal changed after shipping (bit rot or an edit); nothing was written; the \
                 remote copy is intact (`sjournal verify --remote`, `sjournal fetch`)",
                last_valid + 1,
                s.offset,
                s.problem,
                cur.last_seq
            ));
            return Ok(Flow::Done(Box::new(report)));
        }
        let tail = &map[s.offset as usize..];
        let torn = s.problem.is_damage()
            && find_valid_frame_after(tail, last_valid).is_none()
            && tail.len() as u64 <= BATCH_MAX_BYTES;
        if torn {
            report.notes.push(format!(
                "a torn tail of {} bytes at offset {} was not shipped (not acknowledged; the next \
                 append quarantines it, and the quarantine file is shipped then)",
                tail.len(),
                s.offset
            ));
        } else {
            report.damaged = Some(format!(
                "the journal is damaged at offset {} (seq {}): {}; records from there on are not \
                 shipped (run `sjournal verify` and `sjournal inspect`)",
                s.offset,
                last_valid + 1,
                s.problem
            ));
        }
    }
    if !cursor_checked {
        report.diverged = Some(format!(
            "the local journal ends at seq {last_valid}, but seq 1..={} were shipped: records \
             were removed after shipping; nothing was written",
            cur.last_seq
        ));
        return Ok(Flow::Done(Box::new(report)));
    }
    // Every erased record must be bound by its `sjournal.erased` record (as local verify
    // checks): only then is a shipped record that changed an erasure, not an edit.
    let bound = if erased_frames.is_empty() {
        Ok(Vec::new())
    } else {
        crate::journal::verify::erasures(map, hlen, valid_end as usize, header.format_version)
    };
    let bound = match (bound, moved) {
        (Ok(list), _) => list,
        (Err((_, seq, what)), Some(_)) => {
            report.diverged = Some(format!(
                "the local journal's records before seq {} changed after shipping, and not by an \
                 erasure this journal records (seq {seq}: {what}); nothing was written",
                cur.last_seq
            ));
            return Ok(Flow::Done(Box::new(report)));
        }
        (Err((_, seq, what)), None) => {
            report.notes.push(format!(
                "erasures not shipped: seq {seq}: {what} (run `sjournal verify`)"
            ));
            Vec::new()
        }
    };
    if let Some(end) = moved {
        cur.end = end;
    }

    // Header and, without a cursor, what the remote already has.
    let mut listed = std::collections::BTreeSet::new();
    if loaded.is_none() {
        seam.at(&Step::Header)?;
        let hbytes = Bytes::copy_from_slice(&map[..hlen]);
        let hmeta = segment::header_meta(&hbytes, genesis);
        let created = remote
            .put_create(&loc.header_key(), hbytes.clone(), &hmeta)
            .await?;
        if created == Put::Exists {
            let there = remote.get(&loc.header_key()).await?;
            match there {
                Some(o) if o.bytes == hbytes => {
                    remote.complete_meta(&loc.header_key(), &hmeta).await?
                }
                _ => {
                    report.diverged = Some(format!(
                        "the remote {} is not this journal's header: another journal was shipped \
                         under host {:?} and file stem {:?}; nothing was written",
                        loc.header_key(),
                        loc.host,
                        loc.stem
                    ));
                    return Ok(Flow::Done(Box::new(report)));
                }
            }
        }
        // A header this run created means nothing was shipped of this journal before: no
        // segment can be there to adopt. Otherwise (a lost cursor, another shipper) list them.
        if created == Put::Exists {
            for k in remote.list(&loc.segments_prefix()).await? {
                if let Some((_, super::layout::Part::Segment(first))) = super::layout::parse_key(&k)
                {
                    listed.insert(first);
                }
            }
            seam.at(&Step::Listed)?;
        }
    }

    // Quarantined bytes: evidence of what recovery cut.
    for (name, path) in quarantine_files(journal)? {
        if cur.quarantine.contains(&name) {
            continue;
        }
        seam.at(&Step::Quarantine(name.clone()))?;
        let bytes = Bytes::from(crate::storage::read_regular(
            &path,
            crate::storage::Owner::Anyone,
            u64::MAX,
        )?);
        let key = loc.quarantine_key(&name);
        let meta = segment::quarantine_meta(&bytes);
        if remote.put_create(&key, bytes.clone(), &meta).await? == Put::Exists {
            match remote.get(&key).await? {
                Some(o) if o.bytes == bytes => remote.complete_meta(&key, &meta).await?,
                _ => {
                    report.diverged = Some(format!(
                        "the remote {key} differs from the local quarantine file {}: one of them \
                         changed after shipping",
                        path.display()
                    ));
                    return Ok(Flow::Done(Box::new(report)));
                }
            }
        }
        report.quarantine.push(name.clone());
        cur.quarantine.push(name);
        cursor::store(cursor_dir, &cursor_path, &cur, remote.url())?;
    }

    // Segments.
    let mut i = 0;
    while i < recs.len() {
        let first = recs[i].seq;
        debug_assert_eq!(first, cur.last_seq + 1);
        let mut j = i + 1;
        let mut size = recs[i].len;
        while j < recs.len() && size + recs[j].len <= SEGMENT_MAX_BYTES as u64 {
            size += recs[j].len;
            j += 1;
        }
        let start = recs[i].offset;
        let prev = cur.head_hash().expect("the cursor's head was checked");
        let key = loc.segment_key(first);
        seam.at(&Step::Segment(first))?;
        let put = if listed.contains(&first) {
            Put::Exists
        } else {
            let body = Bytes::copy_from_slice(&map[start as usize..recs[j - 1].end() as usize]);
            let meta = seg_meta(
                &session_id,
                loc.kind,
                first,
                prev,
                &recs[i..j],
                &body,
                identity,
            )?;
            remote.put_create(&key, body, &meta).await?
        };
        let upto = match put {
            Put::Created => {
                report.created += 1;
                report.bytes += size;
                report.records += (j - i) as u64;
                seam.at(&Step::Created(first))?;
                j - 1
            }
            Put::Exists => {
                let Some(obj) = remote.get(&key).await? else {
                    return Err(RemoteError::S3 {
                        op: "GET",
                        url: key,
                        reason: "the store refused to create the object because it exists, then \
                                 found no object there"
                            .into(),
                    });
                };
                let rb = &obj.bytes;
                let k = match compare_segment(rb, &recs[i..], map, &erased_frames, &bound) {
                    Compared::Same(n) => i + n - 1,
                    Compared::Longer => return Ok(Flow::Retry),
                    Compared::Differs { seq, off } => {
                        let off = start + off as u64;
                        report.diverged = Some(format!(
                            "the remote {key} differs from the local journal at offset {off} \
                             (seq {}): diverged; nothing was written (`sjournal verify --remote` \
                             says which side is intact)",
                            seq.map(|s| s.to_string()).unwrap_or_else(|| "?".into())
                        ));
                        return Ok(Flow::Done(Box::new(report)));
                    }
                    Compared::NotASegment(end) => {
                        report.diverged = Some(format!(
                            "the remote {key} ends at offset {}, inside a record: it is not a \
                             segment of this journal; nothing was written",
                            start + end as u64
                        ));
                        return Ok(Flow::Done(Box::new(report)));
                    }
                };
                let meta = seg_meta(
                    &session_id,
                    loc.kind,
                    first,
                    prev,
                    &recs[i..=k],
                    rb,
                    identity,
                )?;
                remote.complete_meta(&key, &meta).await?;
                report.adopted += 1;
                seam.at(&Step::Adopted(first))?;
                k
            }
        };
        cur.last_seq = recs[upto].seq;
        cur.end = recs[upto].end();
        cur.head = recs[upto].hash.to_hex();
        seam.at(&Step::Cursor(cur.last_seq))?;
        cursor::store(cursor_dir, &cursor_path, &cur, remote.url())?;
        i = upto + 1;
    }

    // Erasures of records already in a segment (after the segment that holds their
    // `sjournal.erased` record, so no reader finds an erasure without its record).
    for e in &bound {
        if e.seq > cur.last_seq || e.recorded_at > cur.last_seq || cur.erasures.contains(&e.seq) {
            continue;
        }
        let Some(&(offset, len)) = erased_frames.get(&e.seq) else {
            continue;
        };
        seam.at(&Step::Erasure(e.seq))?;
        let body = Bytes::copy_from_slice(&map[offset as usize..(offset + len) as usize]);
        let key = loc.erasure_key(e.seq);
        let meta = super::erasure::meta(e.recorded_at, &body);
        if remote.put_create(&key, body.clone(), &meta).await? == Put::Exists {
            match remote.get(&key).await? {
                Some(o) if o.bytes == body => remote.complete_meta(&key, &meta).await?,
                _ => {
                    report.diverged = Some(format!(
                        "the remote {key} is not the local erased record seq {}: one of them \
                         changed after shipping; nothing more was written",
                        e.seq
                    ));
                    return Ok(Flow::Done(Box::new(report)));
                }
            }
        }
        report.erasures.push(e.seq);
        cur.erasures.push(e.seq);
        cursor::store(cursor_dir, &cursor_path, &cur, remote.url())?;
    }
    if moved.is_some() && report.erasures.is_empty() && recs.is_empty() {
        // The cursor's offset moved with the erasure: keep it in step.
        cursor::store(cursor_dir, &cursor_path, &cur, remote.url())?;
    }
    report.last_seq = cur.last_seq;
    report.head = Some(cur.head.clone());
    Ok(Flow::Done(Box::new(report)))
}

/// How a segment that exists remotely compares with the local records from its first seq on.
enum Compared {
    /// Its frames are the first n local records: equal bytes, or the record as it was before
    /// a recorded erasure.
    Same(usize),
    /// Its common part is equal and it holds records past the local view: look again.
    Longer,
    /// It differs at byte `off` of the segment (record `seq`).
    Differs { seq: Option<u64>, off: usize },
    /// It ends at byte n of the segment's local span, inside a record.
    NotASegment(usize),
}

/// Compares remote segment `rb` with `recs` (the local records from its first seq on, in
/// `map`) frame by frame. A frame that is not byte-equal is the same record only when the
/// local one is erased, bound by its `sjournal.erased` record (`bound`), and the remote frame
/// is intact (its payload matches its digest) with the erased record's hash: a version-2 or
/// -3 record hash commits to the payload digest, so the remote frame is that record before its
/// erasure. After a lost cursor that is what segments shipped before the erasure hold.
fn compare_segment(
    rb: &[u8],
    recs: &[Rec],
    map: &[u8],
    erased: &std::collections::BTreeMap<u64, (u64, u64)>,
    bound: &[crate::journal::verify::Erasure],
) -> Compared {
    let mut at = 0usize;
    let mut n = 0usize;
    while at < rb.len() {
        let Some(r) = recs.get(n) else {
            return Compared::Longer;
        };
        let local = &map[r.offset as usize..r.end() as usize];
        let differs = Compared::Differs {
            seq: Some(r.seq),
            off: at,
        };
        let f = match crate::format::record::parse(&rb[at..]) {
            Ok(f) => f,
            Err(_) if rb[at..].len() < local.len() && local.starts_with(&rb[at..]) => {
                return Compared::NotASegment(at + rb[at..].len())
            }
            Err(_) => return differs,
        };
        if f.bytes != local {
            let erasure = erased.contains_key(&r.seq)
                && bound.iter().any(|e| e.seq == r.seq)
                && f.seq == r.seq
                && !f.erased()
                && f.payload_matches()
                && f.hash() == r.hash;
            if !erasure {
                let off = f
                    .bytes
                    .iter()
                    .zip(local.iter())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                return Compared::Differs {
                    seq: Some(r.seq),
                    off: at + off,
                };
            }
        }
        at += f.len();
        n += 1;
    }
    if n == 0 {
        return Compared::Differs { seq: None, off: 0 };
    }
    Compared::Same(n)
}

fn seg_meta(
    session_id: &str,
    kind: StreamKind,
    first: u64,
    prev: Hash,
    recs: &[Rec],
    body: &[u8],
    identity: &Identity,
) -> Result<super::store::Meta> {
    let last = recs.last().expect("a segment has a record");
    let note = segment::checkpoint_note(
        session_id,
        kind,
        last.seq,
        last.hash,
        Some(&identity.signer),
    )
    .map_err(|e| RemoteError::File {
        path: identity.signer_path.clone(),
        reason: e.to_string(),
    })?;
    Ok(SegmentMeta {
        first,
        last: last.seq,
        prev_hash: prev,
        head: last.hash,
        blake3: content_hash(body),
        checkpoint: note,
    }
    .to_meta())
}

/// The quarantine files recovery made for `journal` (`<journal file>.quarantine-*`), by name.
pub fn quarantine_files(journal: &Path) -> Result<Vec<(String, PathBuf)>> {
    let Some(dir) = journal.parent() else {
        return Ok(Vec::new());
    };
    let prefix = format!(
        "{}.quarantine-",
        journal
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
    );
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| crate::Error::io("read directory", dir, e))?;
    for e in entries {
        let e = e.map_err(|e| crate::Error::io("read directory", dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && e.file_type().is_ok_and(|t| t.is_file()) {
            out.push((name, e.path()));
        }
    }
    out.sort();
    Ok(out)
}
