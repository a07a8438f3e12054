//! The hosts' hook protocols now live in [`crate::host`] (one module per host, one detector
//! shared with the fold); these names stay for the hook's modules.

pub use crate::host::{HostFlag, Protocol};
