//! Keeping the index current: catch-up (index what each journal gained since its cursor) and
//! rebuild (everything again, into a fresh index swapped in whole).
//!
//! Journals only grow, so a catch-up only adds documents. A journal that did anything else —
//! shorter than its cursor, another record at the cursor's seq (a repair), damaged records
//! that changed, gone — makes the catch-up rebuild the whole index instead: documents are
//! never deleted from an index, so its ranking statistics are always those of its documents
//! (an index with deleted documents ranks by estimates until they are merged away), and a
//! rebuilt index ranks exactly like one caught up record by record.

use std::path::Path;
use std::time::{Duration, Instant};

use tantivy::{IndexWriter, TantivyDocument};

use crate::error::{Error, Result};
use crate::format::payload::{self, MemoryOp};
use crate::format::record::{self, FrameRef, FRAME_MIN_BYTES};
use crate::format::Hash;
use crate::journal::scan::{find_any_frame_after, Chain};
use crate::journal::{JournalReader, Root};
use crate::limits::FRAME_MAX_BYTES;

use super::doc::{self, Status};
use super::index::{self, ix_err, Cursor, Fields, Last, Meta, Place};

/// How long a catch-up waits for one journal's shared lock (a writer appending holds the
/// exclusive one for a moment); a journal not read in time is read by the next catch-up.
const JOURNAL_WAIT: Duration = Duration::from_secs(2);

/// What an update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Updated {
    /// Journals read (new or grown).
    pub journals: usize,
    pub docs: u64,
    /// The whole index was built again, and why.
    pub rebuilt: Option<String>,
    /// Journals that could not be read now, and why (they are read by the next update).
    pub problems: Vec<String>,
}

/// Why a catch-up cannot go on record by record.
struct Rebuild(String);

/// Brings the index at `place` up to date with the journals of `root`. Call with the index's
/// exclusive lock held.
pub fn catch_up(root: &Root, place: &Place) -> Result<Updated> {
    catch_up_cached(root, place, &mut None)
}

/// `catch_up`, with the index taken from `cache` when it is still the one on disk, and left
/// there opened for the search after it (None after a rebuild: the next use opens the new
/// one).
pub fn catch_up_cached(root: &Root, place: &Place, cache: &mut index::Cache) -> Result<Updated> {
    let _umask = index::PrivateUmask::set();
    let dir = place.index();
    let opened = match index::Opened::get(cache, &dir, true) {
        Ok(o) => o,
        Err(e) => {
            *cache = None;
            return Err(e);
        }
    };
    let Some(meta) = opened.meta.as_mut() else {
        let why = if opened.index.load_metas().map_err(ix_err)?.payload.is_some() {
            "the index was built by another version of sjournal, or its cursors' file is \
             missing or not the one committed"
        } else {
            "there was no index yet"
        };
        *cache = None;
        return rebuild(root, place, why);
    };
    let (_, fields) = index::schema();
    let mut sink = Sink::new(&opened.index, fields, 1, 64 << 20);
    let mut out = Updated::default();
    match scan(root, meta, &mut sink, &mut out) {
        Ok(changed) => {
            let done = if changed {
                sink.commit(meta, &dir).and_then(|()| sink.finish())
            } else {
                sink.finish()
            };
            if let Err(e) = done {
                *cache = None;
                return Err(e);
            }
            if changed {
                tighten(&dir);
                opened.committed(&dir);
            }
            Ok(out)
        }
        Err(Rebuild(why)) => {
            drop(sink);
            *cache = None;
            rebuild(root, place, &why)
        }
    }
}

/// Builds the whole index again from the journals, into a fresh directory swapped in when
/// complete (a crash on the way leaves the old index as it was). Call with the exclusive lock.
pub fn rebuild(root: &Root, place: &Place, why: &str) -> Result<Updated> {
    let _umask = index::PrivateUmask::set();
    let staging = place.staging();
    remove_dir(&staging)?;
    let ix = index::open_or_create(&staging)?;
    let (_, fields) = index::schema();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let mut sink = Sink::new(&ix, fields, threads, 256 << 20);
    let mut meta = Meta::new();
    let mut out = Updated::default();
    if let Err(Rebuild(again)) = scan(root, &mut meta, &mut sink, &mut out) {
        // A journal changed while it was read: what was read of it stands; the next
        // catch-up sees the change and rebuilds again.
        out.problems.push(again);
    }
    sink.commit(&meta, &staging)?;
    sink.finish()?;
    drop(ix);
    tighten(&staging);
    let current = place.index();
    let retired = place.retired();
    remove_dir(&retired)?;
    if current.exists() {
        std::fs::rename(&current, &retired).map_err(|e| Error::io("rename", &current, e))?;
    }
    std::fs::rename(&staging, &current).map_err(|e| Error::io("rename", &staging, e))?;
    remove_dir(&retired)?;
    out.rebuilt = Some(why.to_owned());
    Ok(out)
}

fn remove_dir(p: &Path) -> Result<()> {
    match std::fs::remove_dir_all(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", p, e)),
    }
}

/// Files 0600 and directories 0700 under `dir`, whatever created them.
fn tighten(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(m) = e.path().symlink_metadata() else {
            continue;
        };
        let want = if m.is_dir() {
            0o700
        } else if m.is_file() {
            0o600
        } else {
            continue;
        };
        if m.permissions().mode() & 0o777 != want {
            let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(want));
        }
    }
}

/// Where documents go: a writer opened on the first one.
struct Sink<'a> {
    ix: &'a tantivy::Index,
    fields: Fields,
    threads: usize,
    heap: usize,
    writer: Option<IndexWriter>,
}

impl<'a> Sink<'a> {
    fn new(ix: &'a tantivy::Index, fields: Fields, threads: usize, heap: usize) -> Sink<'a> {
        Sink {
            ix,
            fields,
            threads,
            heap,
            writer: None,
        }
    }

    fn writer(&mut self) -> Result<&mut IndexWriter> {
        if self.writer.is_none() {
            let w = self
                .ix
                .writer_with_num_threads(self.threads, self.heap)
                .map_err(ix_err)?;
            self.writer = Some(w);
        }
        Ok(self.writer.as_mut().unwrap())
    }

    fn add(&mut self, d: TantivyDocument) -> Result<()> {
        self.writer()?.add_document(d).map_err(ix_err)?;
        Ok(())
    }

    /// Commits the documents with `meta`'s cursors (their file written into `dir`, the
    /// index's directory, first; the older ones removed after).
    fn commit(&mut self, meta: &Meta, dir: &Path) -> Result<()> {
        let payload = meta.write_cursors(dir)?;
        let w = self.writer()?;
        let mut p = w.prepare_commit().map_err(ix_err)?;
        p.set_payload(&payload);
        p.commit().map_err(ix_err)?;
        Meta::remove_other_cursors(dir, &payload);
        Ok(())
    }

    /// Waits for the merges the commit started (so that no file is written after the umask
    /// is restored, and the process does not exit in the middle of one).
    fn finish(mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            w.wait_merging_threads().map_err(ix_err)?;
        }
        Ok(())
    }
}

/// Reads every journal of the root past its cursor into `sink`, updating `meta`. True if
/// anything changed.
fn scan(
    root: &Root,
    meta: &mut Meta,
    sink: &mut Sink<'_>,
    out: &mut Updated,
) -> std::result::Result<bool, Rebuild> {
    let journals = root
        .journals()
        .map_err(|e| Rebuild(format!("the journals could not be listed: {e}")))?;
    let mut names = std::collections::HashSet::new();
    let mut changed = false;
    for path in journals {
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let Ok(md) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !md.is_file() {
            continue;
        }
        names.insert(name.clone());
        let seen = seen_as(&md);
        let cursor = meta.journals.get(&name);
        if cursor.is_some_and(|c| (c.len, c.mtime_ns, c.ino) == seen) {
            continue;
        }
        // A journal rewritten whole (renamed over: `erase`, `migrate`, `repair`) may no longer
        // hold what was indexed of it, even where its records keep their hashes (an erased
        // payload): its documents cannot stay.
        if cursor.is_some_and(|c| c.ino != seen.2) {
            return Err(Rebuild(format!("{name} was rewritten")));
        }
        if cursor.is_some_and(|c| c.damaged) {
            return Err(Rebuild(format!(
                "{name} changed after its damage was indexed"
            )));
        }
        match read_journal(&path, &name, cursor, seen, sink) {
            Ok(Some((c, docs))) => {
                out.journals += 1;
                out.docs += docs;
                meta.journals.insert(name, c);
                changed = true;
            }
            Ok(None) => {}
            Err(Step::Rebuild(why)) => return Err(Rebuild(why)),
            Err(Step::Skip(why)) => out.problems.push(format!("{}: {why}", path.display())),
        }
    }
    if let Some(gone) = meta.journals.keys().find(|k| !names.contains(*k)) {
        return Err(Rebuild(format!("{gone} is gone")));
    }
    Ok(changed)
}

fn seen_as(md: &std::fs::Metadata) -> (u64, i64, u64) {
    use std::os::unix::fs::MetadataExt;
    (
        md.len(),
        md.mtime() * 1_000_000_000 + md.mtime_nsec(),
        md.ino(),
    )
}

enum Step {
    Rebuild(String),
    Skip(String),
}

/// Reads one journal past `cursor`: its new cursor and the documents added; None if it
/// gained nothing.
fn read_journal(
    path: &Path,
    name: &str,
    cursor: Option<&Cursor>,
    seen: (u64, i64, u64),
    sink: &mut Sink<'_>,
) -> std::result::Result<Option<(Cursor, u64)>, Step> {
    let reader = JournalReader::open(path, Some(Instant::now() + JOURNAL_WAIT))
        .map_err(|e| Step::Skip(e.to_string()))?;
    let (header, hlen, genesis) = reader
        .header()
        .map_err(|e| Step::Skip(format!("its header does not decode ({e})")))?;
    let bytes = reader.bytes();
    let mut c = match cursor {
        Some(c) if c.session != header.session_id => {
            return Err(Step::Rebuild(format!("{name} names another session now")))
        }
        Some(c) => c.clone(),
        None => Cursor {
            session: header.session_id.clone(),
            rescue: name.ends_with(&format!(".rescue.{}", crate::journal::paths::JOURNAL_EXT)),
            scope: crate::memory::is_scope_journal(&header.session_id),
            next_offset: hlen as u64,
            ..Default::default()
        },
    };
    if (bytes.len() as u64) < c.next_offset {
        return Err(Step::Rebuild(format!(
            "{name} is shorter than when it was indexed"
        )));
    }
    let (start, chain, mut revisit) = match &c.last {
        Some(l) => {
            let prev = Hash::from_hex(&l.prev)
                .ok_or_else(|| Step::Rebuild(format!("{name}: its cursor is damaged")))?;
            (
                l.offset as usize,
                Chain {
                    next_seq: l.seq,
                    prev_hash: prev,
                },
                Some(l.hash.clone()),
            )
        }
        None => (hlen, Chain::genesis(genesis), None),
    };
    let status = if c.rescue {
        Status::Rescued
    } else {
        Status::Journal
    };
    let mut docs = 0;
    let mut records = reader.records_from(start, chain);
    let mut stopped = None;
    for r in records.by_ref() {
        let rec = match r {
            Ok(rec) => rec,
            Err(stop) => {
                stopped = Some(stop);
                break;
            }
        };
        if let Some(h) = revisit.take() {
            if rec.hash.to_hex() != h {
                return Err(Step::Rebuild(format!(
                    "{name}: record seq {} has another hash than when it was indexed",
                    rec.seq
                )));
            }
            continue;
        }
        docs += take(&mut c, &rec.frame, status, sink)?;
        c.last = Some(Last {
            offset: rec.offset,
            seq: rec.seq,
            prev: rec.prev_hash.to_hex(),
            hash: rec.hash.to_hex(),
        });
        c.next_offset = rec.offset + rec.len() as u64;
    }
    if revisit.is_some() {
        return Err(Step::Rebuild(format!(
            "{name}: the record its cursor names is not there any more"
        )));
    }
    if let Some(stop) = stopped {
        // Damage with a valid record after it: the journal stays as it is until `repair`;
        // what can be read past the damage is indexed, marked damaged. A torn tail with
        // nothing valid after it (a crashed append, which the next writer cuts) is not
        // indexed: it is not part of the journal.
        let at = stop.offset as usize;
        if find_any_frame_after(&bytes[at..]).is_some() {
            for frame in salvage(bytes, at) {
                docs += take(&mut c, &frame, Status::Damaged, sink)?;
            }
            c.damaged = true;
        }
    }
    (c.len, c.mtime_ns, c.ino) = seen;
    c.docs += docs;
    Ok(Some((c, docs)))
}

/// Indexes one record (or, in a scope journal, notes the session it lists). Returns the
/// documents added.
fn take(
    c: &mut Cursor,
    frame: &FrameRef<'_>,
    status: Status,
    sink: &mut Sink<'_>,
) -> std::result::Result<u64, Step> {
    if c.scope {
        if frame.kind == payload::KIND_MEMORY {
            if let Ok(op) = payload::decode_system::<MemoryOp>(frame.seq, frame.payload) {
                if let (true, Some(s)) = (op.op == "session", op.session) {
                    if !c.listed.contains(&s) {
                        c.listed.push(s);
                    }
                }
            }
        }
        return Ok(0);
    }
    if c.first_ts == 0 {
        c.first_ts = frame.ts_unix_ns;
    }
    c.last_ts = c.last_ts.max(frame.ts_unix_ns);
    let content = doc::content(frame.seq, frame.kind, frame.payload);
    if c.first_cwd.is_none() {
        if let Some(cwd) = content.cwd.as_deref().filter(|d| !d.is_empty()) {
            c.first_cwd = Some(cwd.to_owned());
            c.cwd_project = crate::memory::project_dir(None, Some(Path::new(cwd)))
                .map(|p| p.to_string_lossy().into_owned());
        }
    }
    let Some(kind) = content.kind else {
        return Ok(0);
    };
    let f = sink.fields;
    let mut d = TantivyDocument::default();
    d.add_text(f.body, &content.text);
    for p in &content.files {
        d.add_text(f.file, p);
    }
    if let Some(t) = &content.tool {
        d.add_text(f.tool, t.to_lowercase());
        d.add_text(f.tool_name, t);
    }
    d.add_text(f.failed, if content.failed { "yes" } else { "no" });
    d.add_text(f.kind, kind.as_str());
    d.add_text(f.status, status.as_str());
    d.add_text(f.session, &c.session);
    d.add_u64(f.seq, frame.seq);
    d.add_i64(f.ts, frame.ts_unix_ns);
    d.add_u64(f.tie, index::tie(&c.session));
    d.add_u64(f.order, index::order(frame.seq, c.rescue));
    d.add_text(f.hash, frame.hash().to_hex());
    d.add_text(f.record_kind, frame.kind);
    sink.add(d).map_err(|e| Step::Skip(e.to_string()))?;
    Ok(1)
}

/// What can be read from `at` (where a scan stopped at damage) to the end: the damaged frame
/// itself when its fields read (its CRC does not match: its bytes are as found), then every
/// CRC-valid frame after it, resynchronizing past further damage.
fn salvage(bytes: &[u8], at: usize) -> Vec<FrameRef<'_>> {
    let mut out = Vec::new();
    if let Some(f) = unchecked_frame(&bytes[at..]) {
        out.push(f);
    }
    let mut at = match find_any_frame_after(&bytes[at..]) {
        Some(rel) => at + rel,
        None => return out,
    };
    while at < bytes.len() {
        match record::parse(&bytes[at..]) {
            Ok(f) => {
                let len = f.len();
                out.push(f);
                at += len;
            }
            Err(_) => match find_any_frame_after(&bytes[at..]) {
                Some(rel) => at += rel,
                None => break,
            },
        }
    }
    out
}

/// A frame's fields read without checking its CRC (the layout of journal-format.md,
/// "Records"): for a damaged record whose length and kind still read.
fn unchecked_frame(b: &[u8]) -> Option<FrameRef<'_>> {
    let len = record::peek_len(b)? as usize;
    if len < FRAME_MIN_BYTES || len > FRAME_MAX_BYTES as usize || len > b.len() {
        return None;
    }
    let bytes = &b[..len];
    let seq = u64::from_le_bytes(bytes[4..12].try_into().ok()?);
    let ts = i64::from_le_bytes(bytes[12..20].try_into().ok()?);
    let kind_len = u16::from_le_bytes(bytes[20..22].try_into().ok()?) as usize;
    let prev: [u8; 32] = bytes[24..56].try_into().ok()?;
    // The flags as stored say where the kind starts (they may be damaged too: then no kind).
    let flags = u16::from_le_bytes(bytes[22..24].try_into().ok()?);
    let fixed = record::fixed_len_for_flags(flags)?;
    if kind_len == 0 || fixed + kind_len > len - 4 {
        return None;
    }
    let kind = std::str::from_utf8(&bytes[fixed..fixed + kind_len]).ok()?;
    if !kind
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
    {
        return None;
    }
    Some(FrameRef {
        bytes,
        seq,
        ts_unix_ns: ts,
        kind,
        prev_hash: Hash(prev),
        payload: &bytes[fixed + kind_len..len - 4],
        flags,
        payload_digest: Hash::ZERO,
        salt: [0; 16],
    })
}
