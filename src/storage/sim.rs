//! [`SimDisk`]: an in-memory journal file that remembers what was synced, so a test can crash
//! it and choose the fate of every write that was not.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use super::Storage;

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
