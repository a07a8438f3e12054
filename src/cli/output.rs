//! Writing to stdout: buffered, and a closed pipe (`sjournal log | head`) ends quietly.

use std::io::{self, Write};

use crate::error::Error;

pub fn stdout() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::new(io::stdout().lock())
}

pub fn write_err(e: io::Error) -> Error {
    Error::io("write", "<stdout>", e)
}

pub fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
}

/// Writes one line to `out`.
pub fn line(out: &mut impl Write, s: &str) -> Result<(), Error> {
    out.write_all(s.as_bytes()).map_err(write_err)?;
    out.write_all(b"\n").map_err(write_err)
}

/// Unix nanoseconds as RFC 3339 UTC.
pub fn rfc3339(ts_unix_ns: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ts_unix_ns.max(0) as u64);
    humantime::format_rfc3339_nanos(t).to_string()
}
