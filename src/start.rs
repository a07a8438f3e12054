//! The process's entry point. The Rust runtime's start-up does four things before `main`;
//! this does the two the program needs and skips the two it does not:
//!
//! - **Kept:** file descriptors 0-2 that are closed are opened on `/dev/null` (or a file the
//!   hook opens would take the number and receive its reply), and SIGPIPE is ignored (a
//!   reader that went away is an `EPIPE` error, not a killed hook).
//! - **Skipped:** finding the main thread's stack guard (glibc reads and parses
//!   `/proc/self/maps` for it) and an alternate signal stack on every thread, which together
//!   only turn a stack overflow's SIGSEGV into a message. The overflow still stops at the
//!   guard page.
//!
//! That is 18 system calls fewer per hook, and the watchdog thread starts with 5 fewer
//! (BENCHMARKS.md, "Speed mechanisms": C entry point). A hook also asks glibc for one malloc arena:
//! otherwise the watchdog thread's first allocation maps and trims a 128 MiB arena of its
//! own. (Other commands keep glibc's default: `verify` and `--features remote` run threads
//! that allocate.) A panic on the main thread is reported as `thread '<unnamed>'`, not
//! `'main'`: naming the main thread is part of the skipped start-up.
//!
//! Every `unsafe` of the binary is in this file.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int};

#[no_mangle]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    standard_fds_open();
    // SAFETY: setting a signal's disposition to SIG_IGN, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // A panic must not unwind into the C runtime: report it as the runtime would (the
    // panic hook has printed it) and exit 101.
    let code = std::panic::catch_unwind(|| {
        let hook = crate::cli::lean::hook();
        #[cfg(target_env = "gnu")]
        if hook.is_some() {
            // SAFETY: a malloc tunable, set before any other thread exists.
            unsafe {
                libc::mallopt(libc::M_ARENA_MAX, 1);
            }
        }
        crate::run(hook)
    })
    .unwrap_or(101);
    // `process::exit` runs the Rust runtime's clean-up (stdout flushed, as at the end of
    // an ordinary `main`), then the C library's `exit`.
    std::process::exit(c_int::from(code))
}

/// Opens `/dev/null` on each of fds 0-2 that is closed, as the Rust runtime does; aborts
/// if that fails, as it does.
fn standard_fds_open() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `fds` is a valid array of 3 pollfd for the duration of the call.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) };
    for pfd in fds {
        // poll failing (EINTR, ENOMEM, ...) leaves revents 0: then ask each fd by fcntl.
        let closed = match polled {
            -1 => {
                // SAFETY: F_GETFD on any integer is defined; it fails with EBADF.
                let r = unsafe { libc::fcntl(pfd.fd, libc::F_GETFD) };
                r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
            }
            _ => pfd.revents & libc::POLLNVAL != 0,
        };
        if closed {
            // SAFETY: a NUL-terminated path; the new fd is the lowest free one, `pfd.fd`.
            let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
            if fd != pfd.fd {
                std::process::abort();
            }
        }
    }
}
