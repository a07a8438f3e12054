//! Advisory locks (flock, through std's `File::lock`), taken with an optional deadline.
//!
//! Besides the files others lock with it (a host's settings file, a snapshot, a webhook
//! cursor), two locks guard a journal session:
//! - `<stem>.lock`, exclusive: held by the one writer appending (or recovering) at a time;
//!   readers only try it shared, never waiting, to learn whether an append may be in flight
//!   (see `journal::reader`);
//! - the journal file itself: shared by every reader holding a memory map of it, exclusive
//!   only while recovery truncates a torn tail, so no mapped page ever disappears under a
//!   reader.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::limits::LOCK_POLL_MICROS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Shared,
    Exclusive,
}

/// Locks `file`; with a deadline, gives up with `LockTimeout` once it passes.
pub fn lock(file: &File, path: &Path, mode: Mode, deadline: Option<Instant>) -> Result<()> {
    let Some(deadline) = deadline else {
        return match mode {
            Mode::Shared => file.lock_shared(),
            Mode::Exclusive => file.lock(),
        }
        .map_err(|e| Error::io("lock", path, e));
    };
    let start = Instant::now();
    loop {
        let r = match mode {
            Mode::Shared => file.try_lock_shared(),
            Mode::Exclusive => file.try_lock(),
        };
        match r {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::LockTimeout {
                path: path.into(),
                waited_ms: now.duration_since(start).as_millis() as u64,
            });
        }
        let pause = Duration::from_micros(LOCK_POLL_MICROS).min(deadline - now);
        std::thread::sleep(pause);
    }
}
