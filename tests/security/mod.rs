//! The security suite: every attack found on sjournal is kept here as a test, one file per
//! trust boundary (see SECURITY.md). Tests that need a second local user set it up themselves
//! (`setpriv`/`unshare`, when the test runs as root) and say so when they skip.

mod disk;
mod injection;
