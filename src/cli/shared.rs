//! What the commands share: reading stdin, loading a session's state with its warnings,
//! the injection policy, a record as a line, where a write landed, and the error chain.
//! Commands import from here, never from each other.

use std::io::Read;

use crate::cli::error::CliError;
use crate::cli::{output, Outcome};
use sjournal::config::Config;
use sjournal::context::Policy;
use sjournal::error::{Error, Result};
use sjournal::fold::State;
use sjournal::format::payload;
use sjournal::journal::{Record, Root};
use sjournal::limits::INPUT_MAX_BYTES;
use sjournal::report;
use sjournal::snapshot::{load_state, LoadInfo, LoadOptions};

/// The `sjournal-hook` beside this binary, as `install` and `doctor` judge it.
pub enum HookBinary {
    /// From this build: hosts are pointed at it.
    Same(std::path::PathBuf),
    /// None there.
    Absent,
    /// One there that does not report this build's stamp (stale, or someone else's).
    Other(std::path::PathBuf),
    /// One there that is not run at all: why (see [`sjournal::storage::check_program_trusted`]).
    Untrusted(std::path::PathBuf, String),
}

/// Finds and judges the `sjournal-hook` beside this binary: it is run (`--version`) only if
/// no other user could have planted or changed it, and it is this build's only if that says
/// exactly this build's name, version and source stamp.
pub fn hook_binary() -> Result<HookBinary> {
    use crate::cli::commands::hook::{HOOK_BINARY, HOOK_BINARY_VERSION};
    let exe = std::env::current_exe().map_err(|e| Error::io("find", "this executable", e))?;
    let lean = exe.with_file_name(HOOK_BINARY);
    if std::fs::symlink_metadata(&lean).is_err() {
        return Ok(HookBinary::Absent);
    }
    if let Err(why) = sjournal::storage::check_program_trusted(&lean) {
        return Ok(HookBinary::Untrusted(lean, why));
    }
    let same = version_of(&lean).is_some_and(|v| v.trim_ascii() == HOOK_BINARY_VERSION.as_bytes())
        && (!HOOK_BINARY_VERSION.ends_with("(build debug)") || linked_together(&exe, &lean));
    Ok(if same {
        HookBinary::Same(lean)
    } else {
        HookBinary::Other(lean)
    })
}

/// What `program --version` prints, if it answers within 5 seconds.
fn version_of(program: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut child = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(None) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = Vec::new();
    child.stdout.take()?.read_to_end(&mut out).ok()?;
    Some(out)
}

/// Builds without a source stamp (not release): two binaries are taken as one build's if
/// they were written within a minute of each other (cargo links them in one run).
fn linked_together(a: &std::path::Path, b: &std::path::Path) -> bool {
    let time = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (time(a), time(b)) {
        (Some(x), Some(y)) => {
            let gap = x.duration_since(y).or_else(|_| y.duration_since(x));
            gap.is_ok_and(|d| d <= std::time::Duration::from_secs(60))
        }
        _ => false,
    }
}

/// How commands open sessions: the fallback spool configured in `<root>/config.toml` (the
/// defaults if it has none, or cannot be read).
pub fn writer_options(root: &Root) -> sjournal::journal::WriterOptions {
    sjournal::config::Config::load(root)
        .map(|c| c.writer_options())
        .unwrap_or_default()
}

/// The redactor of events a command writes: `[redact]` of `<root>/config.toml` (on, with the
/// built-in rules, if it has none or cannot be read).
pub fn redactor(root: &Root) -> sjournal::redact::Redactor {
    let section = Config::load(root).map(|c| c.redact).unwrap_or_default();
    sjournal::redact::ingest::for_root(root, &section)
}

/// Tells the user on stderr that secrets were redacted from what a command wrote.
pub fn note_redacted(count: usize, session: &str) {
    if count > 0 {
        output::warn(&format!(
            "sjournal: redacted {count} secret{} before writing (markers [REDACTED:rule:tag] \
             replace them; `{}` lists them)",
            if count == 1 { "" } else { "s" },
            sjournal::redact::redact_command(session)
        ));
    }
}

/// Prints where a write landed. In the journal: `ok_line` of its first record, and `Ok`.
/// Elsewhere — the rescue journal (the journal is damaged) or the spool (merged later; maybe
/// the fallback spool, outside the root) — a JSON line saying where, a note on stderr, and
/// `Findings` (exit 1).
pub fn print_landed(
    out: &mut impl std::io::Write,
    root: &Root,
    session: &str,
    landed: &sjournal::session::Landed,
    ok_line: impl Fn(&sjournal::journal::Appended) -> String,
) -> Result<Outcome, Error> {
    use sjournal::session::Landed;
    let outcome = match landed {
        Landed::Journal { appended } => {
            if let Some(a) = appended.first() {
                output::json_line(out, &ok_line(a))?;
            }
            Ok(Outcome::Ok)
        }
        Landed::Rescue { appended, cause } => {
            let a = appended.first();
            let rescue = root.session(session)?.rescue;
            output::json_line(out, &report::line(&report::RescuedLine::new(a, &rescue)))?;
            report_error(cause);
            output::warn(&format!(
                "sjournal: the record was NOT added to the session's journal; it is kept durably as seq {} of {}",
                a.map_or(0, |a| a.seq),
                rescue.display()
            ));
            Ok(Outcome::Findings)
        }
        Landed::Spooled {
            files,
            reason,
            fallback,
            ..
        } => {
            let line = report::SpooledLine {
                spooled: true,
                spool_file: files.first().map(|f| f.as_path()),
                fallback: *fallback,
                reason,
            };
            output::json_line(out, &report::line(&line))?;
            output::warn(&format!(
                "sjournal: the journal could not take the record now ({reason}); it is spooled to {}{} \
                 and will be merged by the next writer, reader or `sjournal flush`",
                files.first().map(|f| f.display().to_string()).unwrap_or_default(),
                if *fallback {
                    ", OUTSIDE the root and less durable there (lost if the machine restarts first)"
                } else {
                    ""
                }
            ));
            Ok(Outcome::Findings)
        }
    };
    out.flush().map_err(output::write_err)?;
    outcome
}

/// Prints an error and its chain of causes to stderr.
pub fn report_error(e: &dyn std::error::Error) {
    let mut msg = format!("sjournal: error: {e}");
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(&format!("\n  caused by: {s}"));
        src = s.source();
    }
    output::warn(&msg);
}

/// Reads all of stdin, up to the input limit.
pub fn read_stdin() -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(INPUT_MAX_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", "<stdin>", e))?;
    if buf.len() > INPUT_MAX_BYTES {
        return Err(Error::TooLarge {
            len: buf.len() as u64,
            max: INPUT_MAX_BYTES as u64,
        });
    }
    Ok(buf)
}

/// Checks that `bytes` hold exactly one JSON value; returns it as text and as a value.
pub fn parse_json(bytes: &[u8]) -> crate::cli::error::Result<(&str, serde_json::Value)> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(CliError::InvalidJson {
            message: "stdin is empty; expected one JSON value".into(),
            line: 1,
            column: 0,
        });
    }
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        // A lone surrogate escape or an out-of-range number is valid JSON text that
        // serde_json refuses: read it leniently (the text is kept as it came).
        Err(e) => sjournal::event::lenient::value(bytes).map_err(|_| CliError::InvalidJson {
            message: e.to_string(),
            line: e.line(),
            column: e.column(),
        })?,
    };
    // serde_json accepted it, so it is UTF-8 (JSON text outside strings is ASCII).
    let text = std::str::from_utf8(bytes).expect("valid JSON is UTF-8");
    Ok((text, value))
}

/// Loads a session's state as the CLI does: warnings go to stderr. The session's pending
/// spool is merged first if it can be; events still pending are folded in on top of the
/// latest state (not with `at`), and counted in `LoadInfo::pending`.
pub fn load(
    root: &Root,
    session: &str,
    at: Option<u64>,
    snapshot: bool,
) -> Result<(State, LoadInfo)> {
    let pending = crate::cli::pending::settle(root, session)?;
    let opts = LoadOptions {
        at,
        use_snapshot: snapshot,
        deadline: None,
    };
    let (mut state, mut info) = match load_state(root, session, &opts) {
        Err(Error::NoSuchSession { .. }) if !pending.waiting.is_empty() => {
            (State::new(), LoadInfo::default())
        }
        r => r?,
    };
    for w in &info.warnings {
        output::warn(&format!("sjournal: warning: {w}"));
    }
    if at.is_none() {
        info.pending = sjournal::session::fold_pending(&mut state, &pending.waiting);
    }
    Ok((state, info))
}

/// The injection policy of `root` (its config.toml); a broken configuration is reported on
/// stderr and the defaults are used, as the hook does.
pub fn load_policy(root: &Root) -> Policy {
    let config = Config::load(root).unwrap_or_else(|e| {
        output::warn(&format!("sjournal: {e}"));
        Config::default()
    });
    Policy::from_config(&config)
}

/// One record as `log` prints it: a line of text, or with `json` the JSON object above.
/// `tail` prints records the same way.
pub fn render(rec: &Record<'_>, json: bool) -> Result<String> {
    let payload = payload::to_json(rec.seq, rec.kind, rec.payload)?;
    if json {
        let line = report::LogLine {
            seq: rec.seq,
            ts: output::rfc3339(rec.ts_unix_ns),
            ts_unix_ns: rec.ts_unix_ns,
            kind: rec.kind,
            hash: rec.hash.to_hex(),
            offset: rec.offset,
            payload,
            erased: rec.erased(),
        };
        return Ok(sjournal::report::line(&line));
    }
    // One line per record: a line break in the payload (pretty-printed JSON) is escaped too.
    let mut p = sjournal::escape::text(payload.get()).into_owned();
    if rec.erased() {
        p = format!("[ERASED] {p}");
    }
    if rec.kind == payload::KIND_UNPARSED {
        // An input longer than a record holds keeps only its first bytes: say so up front.
        if let Ok(u) = payload::decode_system::<payload::Unparsed>(rec.seq, rec.payload) {
            if u.bytes_left_out() > 0 {
                p = format!(
                    "[CUT: {} of {} input bytes kept, {} left out] {p}",
                    u.raw.len(),
                    u.input_len.unwrap_or(0),
                    u.bytes_left_out()
                );
            }
        }
    }
    if p.len() > 160 {
        let cut = (0..=157)
            .rev()
            .find(|&i| p.is_char_boundary(i))
            .unwrap_or(0);
        p.truncate(cut);
        p.push_str("...");
    }
    Ok(format!(
        "{:>6}  {}  {:<20} {}  {}",
        rec.seq,
        output::rfc3339(rec.ts_unix_ns),
        rec.kind,
        &rec.hash.to_hex()[..12],
        p
    ))
}

/// A remote error as the library's: journal errors as they are, the rest as `Remote`.
#[cfg(feature = "remote")]
pub fn remote_err(e: sjournal::remote::RemoteError) -> Error {
    match e {
        sjournal::remote::RemoteError::Journal(e) => e,
        other => Error::Remote {
            reason: other.to_string(),
        },
    }
}

/// Reads verifier key files (one key per line, several lines allowed).
#[cfg(feature = "remote")]
pub fn load_keys(
    paths: &[std::path::PathBuf],
) -> Result<Vec<sjournal::remote::verify::Key>, sjournal::audit::checkpoint::Error> {
    let mut keys = Vec::new();
    for p in paths {
        let text =
            sjournal::storage::read_regular_text(p, sjournal::storage::Owner::Anyone, 1 << 20)?;
        keys.extend(
            sjournal::remote::verify::Key::parse_all(&text).map_err(|reason| {
                sjournal::audit::checkpoint::Error::Key {
                    path: p.clone(),
                    reason,
                }
            })?,
        );
    }
    Ok(keys)
}

/// After `erase` or `migrate` rewrote journals: the search index (when this build has one and
/// the root has an index) forgets what they no longer hold and cites their new hashes. A
/// failure is a warning on stderr: the journal was rewritten, and the next search catches up.
pub fn refresh_search_index(root: &Root) {
    #[cfg(feature = "search")]
    if let Err(e) = sjournal::search::after_rewrite(root) {
        eprintln!(
            "sjournal: warning: the search index was not updated ({e}); the next `sjournal \
             search` catches up"
        );
    }
    #[cfg(not(feature = "search"))]
    let _ = root;
}
