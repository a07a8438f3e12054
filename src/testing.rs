//! Test backends, for the integration tests, the benches and the fuzz targets: a file system
//! that fails the operations its rules pick ([`FaultyFs`]), a journal file that fails its n-th
//! write, sync or truncate ([`Faulty`]), and a disk that crashes and chooses the fate of every
//! unsynced write ([`SimDisk`]). Production code never uses them; they are swapped in through
//! the storage seam (`storage::Fs`, with [`JournalWith`] for the journal file alone).

pub use crate::storage::faulty::{FaultCounts, FaultPlan, Faulty, FaultyFs};
pub use crate::storage::sim::{PendingFate, SimDisk};
pub use crate::storage::{JournalWith, Op};
