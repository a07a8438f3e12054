//! The index on disk: where it lives, its schema, its lock, and the cursors committed with it.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};

use crate::error::{Error, Result};
use crate::journal::Root;

/// The version of the index's layout: the schema, what makes a document, how cursors are
/// kept. An index of another version is rebuilt, never read. Version 2: the cursors in a file
/// of their own, which the commit payload names (`CursorsRef`).
pub const INDEX_VERSION: u32 = 2;

/// What the commit payload holds: the version and the cursors' file in the index directory,
/// `sjournal-cursors-<blake3, 16 hex>.bin` (the `journals` of [`Meta`] as named MessagePack),
/// with the file's whole blake3. A payload of several hundred kilobytes of JSON inside
/// `meta.json`'s JSON cost every search two parses of escaped text (BENCHMARKS.md,
/// "Search").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorsRef {
    pub version: u32,
    pub cursors: String,
    pub blake3: String,
}

/// The threads that search an index's segments, one pool per process (a long-lived MCP server
/// or viewer reopens its reader after every commit): as many as there are cores, at most 4;
/// None on one core, or where the threads cannot be made (then one thread searches).
fn search_pool() -> Option<&'static tantivy::Executor> {
    static POOL: std::sync::OnceLock<Option<tantivy::Executor>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores > 1)
            .then(|| tantivy::Executor::multi_thread(cores.min(4), "sjournal-search-").ok())
            .flatten()
    })
    .as_ref()
}

/// The prefix of the cursors' files in the index directory.
pub const CURSORS_PREFIX: &str = "sjournal-cursors-";

/// The directory under the root.
pub const DIR: &str = "search";

/// The fields of a document (see the module docs of `search` for what each holds).
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    pub body: Field,
    pub file: Field,
    pub tool: Field,
    pub tool_name: Field,
    pub failed: Field,
    pub kind: Field,
    pub status: Field,
    pub session: Field,
    pub seq: Field,
    pub ts: Field,
    pub tie: Field,
    pub order: Field,
    pub hash: Field,
    pub record_kind: Field,
    pub spool_file: Field,
}

/// The schema, and its fields.
pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("default")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let f = Fields {
        body: b.add_text_field("body", text.clone()),
        file: b.add_text_field("file", text),
        tool: b.add_text_field("tool", STRING),
        tool_name: b.add_text_field("tool_name", STORED),
        failed: b.add_text_field("failed", STRING | STORED),
        kind: b.add_text_field("kind", STRING | STORED),
        status: b.add_text_field("status", STRING | STORED),
        session: b.add_text_field("session", STRING | STORED),
        seq: b.add_u64_field("seq", STORED),
        ts: b.add_i64_field("ts", INDEXED | STORED | FAST),
        tie: b.add_u64_field("tie", FAST),
        order: b.add_u64_field("order", FAST),
        hash: b.add_text_field("hash", STORED),
        record_kind: b.add_text_field("record_kind", STORED),
        spool_file: b.add_text_field("spool_file", STORED),
    };
    (b.build(), f)
}

/// The tie-break key of a session: the first 8 bytes of its id's blake3 (ties in score are
/// broken by it, then by the record's place in its journal, so that an index built in any
/// order ranks alike).
pub fn tie(session: &str) -> u64 {
    let h = blake3::hash(session.as_bytes());
    u64::from_be_bytes(h.as_bytes()[..8].try_into().unwrap())
}

/// A record's place among its session's documents: its seq, the rescue journal's after the
/// main journal's of the same seq.
pub fn order(seq: u64, rescue: bool) -> u64 {
    seq.saturating_mul(2) + u64::from(rescue)
}

/// Where the index of a root lives.
#[derive(Debug, Clone)]
pub struct Place {
    pub dir: PathBuf,
}

impl Place {
    pub fn of(root: &Root) -> Place {
        Place {
            dir: root.dir().join(DIR),
        }
    }

    pub fn index(&self) -> PathBuf {
        self.dir.join("index")
    }

    pub fn staging(&self) -> PathBuf {
        self.dir.join("index.new")
    }

    pub fn retired(&self) -> PathBuf {
        self.dir.join("index.old")
    }

    pub fn lock_path(&self) -> PathBuf {
        self.dir.join("lock")
    }

    /// The detached updates' queue: held by the one update waiting for the index's lock.
    pub fn queue_path(&self) -> PathBuf {
        self.dir.join("queue")
    }

    /// True if an index has been built here (what the hook checks before it starts an
    /// update: a root nobody searches gets no index).
    pub fn exists(&self) -> bool {
        self.index().join("meta.json").is_file()
    }

    /// Creates the directory (0700) if missing; refuses a link or anything but a directory.
    pub fn ensure(&self, root: &Root) -> Result<()> {
        root.ensure()?;
        for d in [&self.dir] {
            match std::fs::symlink_metadata(d) {
                Ok(m) if m.is_dir() => {}
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(Error::Symlink { path: d.clone() })
                }
                Ok(_) => {
                    return Err(Error::UnsafeDir {
                        path: d.clone(),
                        reason: "not a directory".into(),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    use std::os::unix::fs::DirBuilderExt;
                    std::fs::DirBuilder::new()
                        .mode(0o700)
                        .create(d)
                        .or_else(|e| match e.kind() {
                            std::io::ErrorKind::AlreadyExists => Ok(()),
                            _ => Err(e),
                        })
                        .map_err(|e| Error::io("create directory", d, e))?;
                }
                Err(e) => return Err(Error::io("stat", d, e)),
            }
        }
        Ok(())
    }
}

/// The index's lock: exclusive while the index is written (catch-up, rebuild), shared while
/// it is searched, so that a search never sees a rebuild swap the index under it and two
/// updates never run at once.
pub struct Lock {
    _file: File,
}

impl Lock {
    fn open(place: &Place) -> Result<File> {
        let p = place.lock_path();
        crate::journal::paths::open_file(&p, true, true)
    }

    /// Exclusive, waiting until `deadline` (None: as long as it takes).
    pub fn exclusive(place: &Place, deadline: Option<Instant>) -> Result<Lock> {
        let f = Self::open(place)?;
        crate::storage::lock::lock(
            &f,
            &place.lock_path(),
            crate::storage::lock::Mode::Exclusive,
            deadline,
        )?;
        Ok(Lock { _file: f })
    }

    /// The place in the detached updates' queue if nobody holds it now; None if someone
    /// does.
    pub fn try_queue(place: &Place) -> Result<Option<Lock>> {
        let p = place.queue_path();
        let f = crate::journal::paths::open_file(&p, true, true)?;
        match f.try_lock() {
            Ok(()) => Ok(Some(Lock { _file: f })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", p, e)),
        }
    }

    /// True if a detached update waits in the queue now: it reads the journals only once it
    /// has the index's lock, so it sees every record committed before this call, and the hook
    /// need not start another (a process start is most of what an index costs a Stop:
    /// BENCHMARKS.md, the hook with a search index). Never creates the file, never waits.
    /// The probe holds the queue for an instant, so an update trying to queue just then
    /// leaves (as if one waited): the caller starts one itself when this says false.
    pub fn update_queued(place: &Place) -> bool {
        let Ok(f) = crate::journal::paths::open_file(&place.queue_path(), false, false) else {
            return false;
        };
        matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock))
    }

    /// Shared, waiting until `deadline`.
    pub fn shared(place: &Place, deadline: Option<Instant>) -> Result<Lock> {
        let f = match crate::journal::paths::open_file(&place.lock_path(), false, false) {
            Ok(f) => f,
            // A reader that may not create it: the updater that creates it takes it first.
            Err(_) => Self::open(place)?,
        };
        crate::storage::lock::lock(
            &f,
            &place.lock_path(),
            crate::storage::lock::Mode::Shared,
            deadline,
        )?;
        Ok(Lock { _file: f })
    }

    /// Turns an exclusive lock into a shared one (searches may start; no update can).
    pub fn downgrade(&self) -> Result<()> {
        self._file
            .lock_shared()
            .map_err(|e| Error::io("lock", "the search index lock", e))
    }
}

/// How far one journal is indexed (kept in the index's commit, so that the documents and the
/// cursors that say which records they hold are committed together).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// The session id the journal's header names.
    pub session: String,
    /// A rescue journal (`S.rescue.sjl`).
    #[serde(default)]
    pub rescue: bool,
    /// A memory scope journal: never indexed (it holds pending proposals); only the sessions
    /// its `session` ops list are read, to tell each session's project.
    #[serde(default)]
    pub scope: bool,
    /// The file as last seen: length, modification time, inode.
    pub len: u64,
    pub mtime_ns: i64,
    pub ino: u64,
    /// Where the next record starts.
    pub next_offset: u64,
    /// The last record indexed: its offset, seq, the hash it links to, and its hash (hex).
    pub last: Option<Last>,
    /// The journal stops at damage: records after it were indexed as damaged, and the file is
    /// not read again until it changes (then the index is rebuilt).
    #[serde(default)]
    pub damaged: bool,
    /// The first `cwd` an event of the session reported, and the project it makes.
    #[serde(default)]
    pub first_cwd: Option<String>,
    #[serde(default)]
    pub cwd_project: Option<String>,
    /// Scope journals: the sessions their `session` ops list.
    #[serde(default)]
    pub listed: Vec<String>,
    /// Documents indexed from this journal.
    #[serde(default)]
    pub docs: u64,
    /// The times of its first and last record read (Unix ns; 0: none yet).
    #[serde(default)]
    pub first_ts: i64,
    #[serde(default)]
    pub last_ts: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Last {
    pub offset: u64,
    pub seq: u64,
    pub prev: String,
    pub hash: String,
}

/// What is committed with the documents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub version: u32,
    /// By journal file name.
    pub journals: BTreeMap<String, Cursor>,
}

impl Meta {
    pub fn new() -> Meta {
        Meta {
            version: INDEX_VERSION,
            journals: BTreeMap::new(),
        }
    }

    /// The committed meta of the index in `dir` (None: none committed, of another version,
    /// or its cursors' file missing or not the one committed).
    pub fn of(index: &tantivy::Index, dir: &Path) -> Result<Option<Meta>> {
        let metas = index.load_metas().map_err(ix_err)?;
        let Some(p) = metas.payload else {
            return Ok(None);
        };
        let Some(r) = serde_json::from_str::<CursorsRef>(&p).ok().filter(|r| {
            r.version == INDEX_VERSION
                && r.cursors.starts_with(CURSORS_PREFIX)
                && !r.cursors.contains('/')
                && !r.cursors.contains("..")
        }) else {
            return Ok(None);
        };
        let path = dir.join(&r.cursors);
        let Ok(bytes) = crate::storage::read_regular(&path, crate::storage::Owner::Me, 1 << 30)
        else {
            return Ok(None);
        };
        if blake3::hash(&bytes).to_hex().as_str() != r.blake3 {
            return Ok(None);
        }
        Ok(rmp_serde::from_slice::<BTreeMap<String, Cursor>>(&bytes)
            .ok()
            .map(|journals| Meta {
                version: INDEX_VERSION,
                journals,
            }))
    }

    /// Writes the cursors' file into `dir` (synced) and returns the commit payload naming it.
    pub fn write_cursors(&self, dir: &Path) -> Result<String> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let bytes = rmp_serde::to_vec_named(&self.journals).expect("the cursors serialize");
        let hash = blake3::hash(&bytes).to_hex();
        let name = format!("{CURSORS_PREFIX}{}.bin", &hash.as_str()[..16]);
        let path = dir.join(&name);
        let tmp = dir.join(format!("{name}.tmp"));
        let io = |what: &'static str, p: &Path, e: std::io::Error| Error::io(what, p, e);
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(|e| io("create", &tmp, e))?;
        f.write_all(&bytes).map_err(|e| io("write", &tmp, e))?;
        f.sync_all().map_err(|e| io("sync", &tmp, e))?;
        drop(f);
        std::fs::rename(&tmp, &path).map_err(|e| io("rename", &tmp, e))?;
        let r = CursorsRef {
            version: INDEX_VERSION,
            cursors: name,
            blake3: hash.to_string(),
        };
        Ok(serde_json::to_string(&r).expect("the payload serializes"))
    }

    /// Removes the cursors' files in `dir` other than the one `payload` names (older commits',
    /// or one written before a commit that did not happen).
    pub fn remove_other_cursors(dir: &Path, payload: &str) {
        let keep = serde_json::from_str::<CursorsRef>(payload)
            .map(|r| r.cursors)
            .unwrap_or_default();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(CURSORS_PREFIX) && name != keep.as_str() {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// The projects of every session: what the project scope journals list, else the project
    /// its first `cwd` lies in. Sorted, for a deterministic filter.
    pub fn projects(&self) -> BTreeMap<String, Vec<String>> {
        let mut listed: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in self.journals.values().filter(|c| c.scope) {
            if let Some(crate::memory::Scope::Project(p)) =
                crate::memory::Scope::of_journal_id(&c.session)
            {
                for s in &c.listed {
                    let v = listed.entry(s.clone()).or_default();
                    if !v.contains(&p) {
                        v.push(p.clone());
                    }
                }
            }
        }
        let mut out = listed.clone();
        for c in self.journals.values().filter(|c| !c.scope) {
            if listed.contains_key(&c.session) {
                continue;
            }
            if let Some(p) = &c.cwd_project {
                let v = out.entry(c.session.clone()).or_default();
                if !v.contains(p) {
                    v.push(p.clone());
                }
            }
        }
        for v in out.values_mut() {
            v.sort();
        }
        out
    }

    /// The sessions of the project `dir` (canonical).
    pub fn sessions_of(&self, dir: &str) -> Vec<String> {
        self.projects()
            .into_iter()
            .filter(|(_, ps)| ps.iter().any(|p| p == dir))
            .map(|(s, _)| s)
            .collect()
    }

    /// The session id of every journal indexed, scope journals included (the `session` of
    /// every document of the index is one of them).
    pub fn sessions_and_scopes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.journals.values().map(|c| c.session.clone()).collect();
        v.sort();
        v.dedup();
        v
    }

    /// Every session indexed (not scope journals).
    pub fn sessions(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .journals
            .values()
            .filter(|c| !c.scope)
            .map(|c| c.session.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// A tantivy error as the library's.
pub fn ix_err(e: impl std::fmt::Display) -> Error {
    Error::Search {
        reason: e.to_string(),
    }
}

/// Opens the index at `dir`, or creates it (an empty one, under this schema).
pub fn open_or_create(dir: &Path) -> Result<tantivy::Index> {
    let (schema, _) = schema();
    if dir.join("meta.json").is_file() {
        return tantivy::Index::open_in_dir(dir).map_err(ix_err);
    }
    create_dir_private(dir)?;
    tantivy::Index::create_in_dir(dir, schema).map_err(ix_err)
}

pub(crate) fn create_dir_private(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::Symlink {
            path: dir.to_owned(),
        }),
        Ok(_) => Ok(()),
        Err(_) => std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(|e| Error::io("create directory", dir, e)),
    }
}

/// Files the index writes are the user's alone: 0600 (tantivy creates them with the
/// process's umask, so the process's umask is narrowed while it writes). Directories 0700.
pub struct PrivateUmask {
    old: rustix::fs::Mode,
}

impl PrivateUmask {
    pub fn set() -> PrivateUmask {
        PrivateUmask {
            old: rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077)),
        }
    }
}

impl Drop for PrivateUmask {
    fn drop(&mut self) {
        rustix::process::umask(self.old);
    }
}

/// Which `meta.json` an index has: device, inode, length, mtime (ns). tantivy writes it whole
/// and renames it into place at every commit (and a rebuild swaps the whole directory), so
/// another file means other segments or cursors.
pub type Stamp = (u64, u64, u64, i64);

/// The stamp of the index in `dir` (None: no index there).
pub fn stamp(dir: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(dir.join("meta.json")).ok()?;
    Some((
        m.dev(),
        m.ino(),
        m.len(),
        m.mtime() * 1_000_000_000 + m.mtime_nsec(),
    ))
}

/// An index as opened, with its committed cursors and (once searched) its reader, kept for as
/// long as its `meta.json` is the same file: a catch-up that finds nothing new and the search
/// after it share one opening, and a long-lived process (the MCP server) keeps it between
/// searches instead of parsing the cursors and opening every segment again.
pub struct Opened {
    stamp: Stamp,
    pub index: tantivy::Index,
    /// None: no cursors committed, of another version, or their file missing or not the one
    /// committed (`Meta::of`).
    pub meta: Option<Meta>,
    reader: Option<tantivy::IndexReader>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("stamp", &self.stamp)
            .field("journals", &self.meta.as_ref().map(|m| m.journals.len()))
            .finish_non_exhaustive()
    }
}

/// Where an opened index is kept between uses (None: nothing opened yet).
pub type Cache = Option<Opened>;

impl Opened {
    /// The index in `dir` from `cache` if it is still the one on disk, else opened now (and
    /// created if missing when `create`). Call with the index's lock held.
    pub fn get<'a>(cache: &'a mut Cache, dir: &Path, create: bool) -> Result<&'a mut Opened> {
        let now = stamp(dir);
        if now.is_none() || cache.as_ref().map(|o| o.stamp) != now {
            *cache = None;
            let index = if create {
                open_or_create(dir)?
            } else {
                tantivy::Index::open_in_dir(dir).map_err(ix_err)?
            };
            let meta = Meta::of(&index, dir)?;
            let stamp = stamp(dir).ok_or_else(|| Error::Search {
                reason: format!("the index in {} has no meta.json", dir.display()),
            })?;
            *cache = Some(Opened {
                stamp,
                index,
                meta,
                reader: None,
            });
        }
        Ok(cache.as_mut().expect("set above"))
    }

    /// After a commit through this index: the stamp of what is on disk now, and a reader
    /// opened again when next searched.
    pub fn committed(&mut self, dir: &Path) {
        if let Some(s) = stamp(dir) {
            self.stamp = s;
        }
        self.reader = None;
    }

    /// A searcher over the committed segments (the reader is opened once). An index of several
    /// segments is searched a segment a thread, as many at once as there are cores (at most
    /// 4): a query whose words are in most documents scores them all, and two cores halve
    /// that (BENCHMARKS.md, "Search").
    pub fn searcher(&mut self) -> Result<tantivy::Searcher> {
        if self.reader.is_none() {
            let segments = self.index.searchable_segment_metas().map_or(1, |m| m.len());
            if segments > 1 {
                if let Some(pool) = search_pool() {
                    self.index.set_executor(pool.clone());
                }
            }
            let r = self
                .index
                .reader_builder()
                .reload_policy(tantivy::ReloadPolicy::Manual)
                .try_into()
                .map_err(ix_err)?;
            self.reader = Some(r);
        }
        Ok(self.reader.as_ref().expect("set above").searcher())
    }
}
