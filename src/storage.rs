//! The storage seam. The writer does every journal-file operation through [`Storage`], so
//! tests can fail the n-th write, sync or truncate ([`Faulty`]) or simulate a crash that
//! loses, keeps or tears whatever was not yet synced ([`SimDisk`]) without touching the code
//! under test.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};

/// The operations the writer performs on a journal file.
#[allow(clippy::len_without_is_empty)]
pub trait Storage {
    fn len(&self) -> io::Result<u64>;
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes every byte written so far durable (`fdatasync` on Linux).
    fn sync_data(&mut self) -> io::Result<()>;
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

impl Storage for File {
    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(self, buf, offset)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
}

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

/// What becomes of each write that was not synced when a simulated crash happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingFate {
    Lost,
    Kept,
    /// Only the first n bytes reached the disk.
    Torn(usize),
    /// Kept, but one 512-byte sector of it reads back as zeros.
    ZeroedSector(usize),
}

#[derive(Debug)]
enum Pending {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

#[derive(Debug, Default)]
struct SimInner {
    /// What survives a crash.
    durable: Vec<u8>,
    /// What the running process sees.
    visible: Vec<u8>,
    /// Operations since the last sync, in order.
    pending: Vec<Pending>,
    syncs: u64,
}

/// An in-memory disk that remembers which bytes were synced, so a test can crash it and
/// choose the fate of every unsynced write. Clones share the same disk.
#[derive(Debug, Clone, Default)]
pub struct SimDisk(Arc<Mutex<SimInner>>);

impl SimDisk {
    pub fn new() -> Self {
        Self::default()
    }

    fn inner(&self) -> MutexGuard<'_, SimInner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes the running process would read now.
    pub fn visible(&self) -> Vec<u8> {
        self.inner().visible.clone()
    }

    pub fn durable(&self) -> Vec<u8> {
        self.inner().durable.clone()
    }

    pub fn pending_writes(&self) -> usize {
        self.inner().pending.len()
    }

    pub fn syncs(&self) -> u64 {
        self.inner().syncs
    }

    /// Crashes: the disk keeps what was synced, and each pending write meets `fate(i, len)`.
    /// The disk then holds exactly what a process restarted after the crash would read.
    pub fn crash(&self, mut fate: impl FnMut(usize, usize) -> PendingFate) {
        let mut g = self.inner();
        let mut disk = g.durable.clone();
        let pending = std::mem::take(&mut g.pending);
        for (i, op) in pending.iter().enumerate() {
            let (off, bytes) = match op {
                Pending::Write(off, bytes) => (off, bytes),
                Pending::SetLen(len) => {
                    // A truncate that was not synced may or may not have happened.
                    if fate(i, 0) != PendingFate::Lost {
                        disk.resize(*len as usize, 0);
                    }
                    continue;
                }
            };
            let keep: Vec<u8> = match fate(i, bytes.len()) {
                PendingFate::Lost => continue,
                PendingFate::Kept => bytes.clone(),
                PendingFate::Torn(n) => bytes[..n.min(bytes.len())].to_vec(),
                PendingFate::ZeroedSector(s) => {
                    let mut b = bytes.clone();
                    let start = (s * 512).min(b.len());
                    let end = (start + 512).min(b.len());
                    b[start..end].fill(0);
                    b
                }
            };
            let end = *off as usize + keep.len();
            if disk.len() < end {
                disk.resize(end, 0);
            }
            disk[*off as usize..end].copy_from_slice(&keep);
        }
        g.durable = disk.clone();
        g.visible = disk;
    }
}

impl Storage for SimDisk {
    fn len(&self) -> io::Result<u64> {
        Ok(self.inner().visible.len() as u64)
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let g = self.inner();
        let off = offset as usize;
        let src = g
            .visible
            .get(off..off + buf.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut g = self.inner();
        let end = offset as usize + buf.len();
        if g.visible.len() < end {
            g.visible.resize(end, 0);
        }
        g.visible[offset as usize..end].copy_from_slice(buf);
        g.pending.push(Pending::Write(offset, buf.to_vec()));
        Ok(())
    }
    fn sync_data(&mut self) -> io::Result<()> {
        // Replays the pending operations onto the durable image (cheaper than copying the
        // whole visible image, so long simulations and benches stay linear).
        let mut g = self.inner();
        let g = &mut *g;
        for op in g.pending.drain(..) {
            match op {
                Pending::Write(off, bytes) => {
                    let end = off as usize + bytes.len();
                    if g.durable.len() < end {
                        g.durable.resize(end, 0);
                    }
                    g.durable[off as usize..end].copy_from_slice(&bytes);
                }
                Pending::SetLen(len) => g.durable.resize(len as usize, 0),
            }
        }
        g.syncs += 1;
        Ok(())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let mut g = self.inner();
        g.visible.resize(len as usize, 0);
        g.pending.push(Pending::SetLen(len));
        Ok(())
    }
}
