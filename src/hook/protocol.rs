//! The hosts' hook protocols, as the hook's modules name them: defined in [`crate::host`] (one
//! module per host, one detector shared with the fold).

pub use crate::host::{HostFlag, Protocol};
