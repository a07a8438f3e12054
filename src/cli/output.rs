//! Writing to stdout: buffered, and a closed pipe (`sjournal log | head`) ends quietly.

use std::io::{self, Write};

use sjournal::error::Error;

pub fn stdout() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::new(io::stdout().lock())
}

pub fn write_err(e: io::Error) -> Error {
    Error::io("write", "<stdout>", e)
}

pub fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
}

/// Writes one line of human-facing text to `out`, with every character a terminal would act
/// on escaped ([`sjournal::escape::text`]); line breaks in `s` separate lines, each escaped on
/// its own. Untrusted fields that must stay on one line are escaped where they are
/// formatted, so a line break in them is escaped too.
pub fn line(out: &mut impl Write, s: &str) -> Result<(), Error> {
    text(out, s)?;
    out.write_all(b"\n").map_err(write_err)
}

/// Writes human-facing text as [`line()`] does, without adding a line break.
pub fn text(out: &mut impl Write, s: &str) -> Result<(), Error> {
    for (i, l) in s.split('\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n").map_err(write_err)?;
        }
        out.write_all(sjournal::escape::text(l).as_bytes())
            .map_err(write_err)?;
    }
    Ok(())
}

/// Writes one line of machine output (JSON, or values a script reads) exactly as it is.
pub fn json_line(out: &mut impl Write, s: &str) -> Result<(), Error> {
    out.write_all(s.as_bytes()).map_err(write_err)?;
    out.write_all(b"\n").map_err(write_err)
}

/// [`line()`] or [`json_line`], as the output is JSON or not.
pub fn emit(out: &mut impl Write, s: &str, json: bool) -> Result<(), Error> {
    match json {
        true => json_line(out, s),
        false => line(out, s),
    }
}

/// Prints a message to stderr, escaped as [`line()`] escapes.
pub fn warn(msg: &str) {
    let shown: Vec<String> = msg
        .split('\n')
        .map(|l| sjournal::escape::text(l).into_owned())
        .collect();
    // Not `eprintln!`, which panics when stderr is a pipe nobody reads any more: a warning
    // that cannot be shown must not turn the hook's exit 0 into a panic's 101.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", shown.join("\n"));
}

/// Unix nanoseconds as RFC 3339 UTC ([`sjournal::format::rfc3339`]).
pub fn rfc3339(ts_unix_ns: i64) -> String {
    sjournal::format::rfc3339(ts_unix_ns)
}
