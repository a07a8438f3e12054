//! The security suite: every attack found on sjournal is kept here as a test, one file per
//! trust boundary (see SECURITY.md). Tests that need a second local user set it up themselves
//! (`setpriv`/`unshare`, when the test runs as root) and say so when they skip.

mod disk;
mod fifo;
mod injection;
mod rollback;
mod spool;

use std::path::Path;

/// Makes a FIFO (named pipe) at `path`, mode 0600.
pub(crate) fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(
        r,
        0,
        "mkfifo {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
}
