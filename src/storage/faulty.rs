//! Test backends that fail operations: [`Faulty`] wraps one journal file's [`Storage`] and
//! fails its n-th write, sync or truncate; [`FaultyFs`] wraps the whole [`Fs`] and fails the
//! operations its rules pick (ENOSPC for everything under a root, EROFS, the n-th removal of
//! a spool file...), so every step of the write path can be failed without a switch in
//! production code.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Fs, Op, RealFs, Storage};

/// Which operation of a workload to fail, counting from 1. `enospc_after_bytes` makes writes
/// fail with ENOSPC once that many bytes were written, after writing what still fits.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    pub fail_write: Option<u64>,
    pub fail_sync: Option<u64>,
    pub fail_set_len: Option<u64>,
    /// When a write fails, write this many bytes of it first (a torn write).
    pub torn_write_bytes: usize,
    pub enospc_after_bytes: Option<u64>,
}

/// Counts of operations seen, shared with the test that set the plan.
#[derive(Debug, Default, Clone)]
pub struct FaultCounts {
    pub writes: u64,
    pub syncs: u64,
    pub set_lens: u64,
    pub bytes_written: u64,
    pub injected: u64,
}

/// Wraps a storage and fails operations as its plan says.
pub struct Faulty<S> {
    inner: S,
    plan: FaultPlan,
    counts: Arc<Mutex<FaultCounts>>,
}

impl<S: Storage> Faulty<S> {
    pub fn new(inner: S, plan: FaultPlan) -> (Self, Arc<Mutex<FaultCounts>>) {
        let counts = Arc::new(Mutex::new(FaultCounts::default()));
        (Self::with_counts(inner, plan, counts.clone()), counts)
    }

    /// Like [`Faulty::new`], but counting into `counts`, so that one plan spans a workload
    /// that opens the journal several times ("fail the 5th write of the whole workload").
    pub fn with_counts(inner: S, plan: FaultPlan, counts: Arc<Mutex<FaultCounts>>) -> Self {
        Faulty {
            inner,
            plan,
            counts,
        }
    }

    fn counts(&self) -> MutexGuard<'_, FaultCounts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn injected(what: &str) -> io::Error {
    io::Error::other(format!("injected {what} failure"))
}

impl<S: Storage> Storage for Faulty<S> {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let (n, written) = {
            let mut c = self.counts();
            c.writes += 1;
            (c.writes, c.bytes_written)
        };
        if let Some(limit) = self.plan.enospc_after_bytes {
            let room = limit.saturating_sub(written) as usize;
            if buf.len() > room {
                self.inner.write_all_at(&buf[..room], offset)?;
                let mut c = self.counts();
                c.bytes_written += room as u64;
                c.injected += 1;
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
        }
        if self.plan.fail_write == Some(n) {
            let torn = self.plan.torn_write_bytes.min(buf.len());
            self.inner.write_all_at(&buf[..torn], offset)?;
            self.counts().injected += 1;
            return Err(injected("write"));
        }
        self.inner.write_all_at(buf, offset)?;
        self.counts().bytes_written += buf.len() as u64;
        Ok(())
    }
    fn sync_data(&mut self) -> io::Result<()> {
        let n = {
            let mut c = self.counts();
            c.syncs += 1;
            c.syncs
        };
        if self.plan.fail_sync == Some(n) {
            self.counts().injected += 1;
            return Err(injected("fsync"));
        }
        self.inner.sync_data()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let n = {
            let mut c = self.counts();
            c.set_lens += 1;
            c.set_lens
        };
        if self.plan.fail_set_len == Some(n) {
            self.counts().injected += 1;
            return Err(injected("set_len"));
        }
        self.inner.set_len(len)
    }
}

type Pick = dyn Fn(Op, &Path) -> bool + Send + Sync;

struct Rule {
    pick: Box<Pick>,
    errno: i32,
    /// Fail only the n-th operation the rule picks (from 1); None: every one.
    nth: Option<u64>,
    seen: AtomicU64,
}

#[derive(Default)]
struct FsInner {
    rules: Mutex<Vec<Rule>>,
    journal: Option<Box<super::WrapJournal>>,
    log: Mutex<Vec<(Op, PathBuf)>>,
    injected: AtomicU64,
}

/// An [`Fs`] that does the real operations except those its rules fail. Clones share the
/// rules and the log, so a test keeps a clone to change the rules or to read what happened.
///
/// ```
/// use sjournal::testing::FaultyFs;
/// let fs = FaultyFs::new();
/// // The disk under the root is full: every operation that needs room fails.
/// fs.fail(libc::ENOSPC, |op, path| op.mutates() && path.starts_with("/some/root"));
/// ```
#[derive(Clone, Default)]
pub struct FaultyFs(Arc<FsInner>);

impl std::fmt::Debug for FaultyFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultyFs")
            .field("rules", &self.0.rules.lock().map(|r| r.len()).unwrap_or(0))
            .finish()
    }
}

impl FaultyFs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Like [`FaultyFs::new`], with every journal file's operations going through the storage
    /// `wrap` makes of it (a [`Faulty`] or a [`SimDisk`](super::sim::SimDisk)); the rules apply on top.
    pub fn with_journal(
        wrap: impl Fn(&Path, File) -> Box<dyn Storage> + Send + Sync + 'static,
    ) -> Self {
        FaultyFs(Arc::new(FsInner {
            journal: Some(Box::new(wrap)),
            ..FsInner::default()
        }))
    }

    /// Fails every operation `pick` selects with the OS error `errno`.
    pub fn fail(
        &self,
        errno: i32,
        pick: impl Fn(Op, &Path) -> bool + Send + Sync + 'static,
    ) -> &Self {
        self.add(None, errno, Box::new(pick))
    }

    /// Fails only the `n`-th operation (counting from 1) that `pick` selects.
    pub fn fail_nth(
        &self,
        n: u64,
        errno: i32,
        pick: impl Fn(Op, &Path) -> bool + Send + Sync + 'static,
    ) -> &Self {
        self.add(Some(n), errno, Box::new(pick))
    }

    fn add(&self, nth: Option<u64>, errno: i32, pick: Box<Pick>) -> &Self {
        lock(&self.0.rules).push(Rule {
            pick,
            errno,
            nth,
            seen: AtomicU64::new(0),
        });
        self
    }

    /// Drops every rule: the disk works again.
    pub fn clear(&self) {
        lock(&self.0.rules).clear();
    }

    /// Every operation seen, in order (failed ones included).
    pub fn log(&self) -> Vec<(Op, PathBuf)> {
        lock(&self.0.log).clone()
    }

    /// How many operations were failed.
    pub fn injected(&self) -> u64 {
        self.0.injected.load(Ordering::Relaxed)
    }

    /// Logs the operation and returns the error a rule assigns it, if any.
    fn check(&self, op: Op, path: &Path) -> io::Result<()> {
        lock(&self.0.log).push((op, path.to_owned()));
        for rule in lock(&self.0.rules).iter() {
            if !(rule.pick)(op, path) {
                continue;
            }
            let n = rule.seen.fetch_add(1, Ordering::Relaxed) + 1;
            if rule.nth.is_none_or(|want| want == n) {
                self.0.injected.fetch_add(1, Ordering::Relaxed);
                return Err(io::Error::from_raw_os_error(rule.errno));
            }
        }
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Fs for FaultyFs {
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Op::CreateDir, path)?;
        RealFs.create_dir(path)
    }
    fn open(&self, path: &Path, write: bool, create: bool) -> io::Result<File> {
        self.check(Op::Open { write, create }, path)?;
        RealFs.open(path, write, create)
    }
    fn journal(&self, path: &Path, file: File) -> Box<dyn Storage> {
        let inner = match &self.0.journal {
            Some(wrap) => wrap(path, file),
            None => Box::new(file),
        };
        Box::new(Ruled {
            fs: self.clone(),
            path: path.to_owned(),
            inner,
        })
    }
    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.check(Op::WriteNew, path)?;
        RealFs.write_new(path, bytes)
    }
    fn write_at(&self, path: &Path, file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
        self.check(Op::WriteAt, path)?;
        RealFs.write_at(path, file, bytes, offset)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Op::SyncDir, path)?;
        RealFs.sync_dir(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(Op::Link, to)?;
        RealFs.hard_link(from, to)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(Op::Rename, to)?;
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(Op::Remove, path)?;
        RealFs.remove_file(path)
    }
}

/// A journal file's storage under a [`FaultyFs`]'s rules.
struct Ruled {
    fs: FaultyFs,
    path: PathBuf,
    inner: Box<dyn Storage>,
}

impl Storage for Ruled {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.fs.check(Op::Write, &self.path)?;
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.fs.check(Op::Sync, &self.path)?;
        self.inner.sync_data()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.fs.check(Op::SetLen, &self.path)?;
        self.inner.set_len(len)
    }
}
