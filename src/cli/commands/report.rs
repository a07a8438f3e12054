//! `sjournal report --session ID --html OUT [--json]`: writes one self-contained HTML page
//! with the session's timeline (turns, tool calls with durations and failures, compactions,
//! injected context) and tables of the same; see [`sjournal::audit::html`]. Prints what it
//! wrote (`--json`: `{"out","bytes","records","turns","tool_calls","failed_tool_calls",
//! "compactions","injections"}`). Exit 1 if the journal is damaged (the report covers the
//! records before the damage and says so).

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{output, Outcome};
use sjournal::audit::{html, timeline};
use sjournal::error::{Error, Result};
use sjournal::journal::{JournalReader, Root};

/// Write a self-contained HTML timeline of a session
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// Where to write the page (replaced if it exists)
    #[arg(long, value_name = "OUT")]
    pub html: PathBuf,
    /// Print the summary as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    // Pending events are not in the journal yet: merged first if possible, else left out
    // with a warning on stderr (which names them).
    let _pending = crate::cli::pending::settle(root, &args.session)?;
    let paths = root.existing_session(&args.session)?;
    let reader = JournalReader::open(&paths.journal, None)?;
    let t = timeline::build(&reader)?;
    drop(reader);
    let page = html::render(&t);
    write_atomically(&args.html, page.as_bytes())?;
    let failed = t.tools.iter().filter(|c| c.failed).count();
    let mut out = output::stdout();
    let line = if args.json {
        sjournal::report::line(&sjournal::report::ReportSummary {
            out: &args.html,
            bytes: page.len(),
            records: t.records,
            turns: t.turns.len(),
            tool_calls: t.tools.len(),
            failed_tool_calls: failed,
            compactions: t.compactions.len(),
            injections: t.injections.len(),
        })
    } else {
        format!(
            "wrote {}: {} records, {} turns, {} tool calls ({failed} failed), {} compactions, {} injections",
            args.html.display(),
            t.records,
            t.turns.len(),
            t.tools.len(),
            t.compactions.len(),
            t.injections.len()
        )
    };
    output::emit(&mut out, &line, args.json)?;
    out.flush().map_err(output::write_err)?;
    match &t.problem {
        None => Ok(Outcome::Ok),
        Some(p) => {
            output::warn(&format!("sjournal: {}: {p}", paths.journal.display()));
            Ok(Outcome::Findings)
        }
    }
}

/// Writes through a temporary file in the same directory, renamed over `path`: a reader
/// never sees half a page, and a symlink at `path` is replaced, not followed. Anything else
/// that is not a regular file (a device such as /dev/null, a FIFO, a socket, a directory) is
/// refused: the rename would put the page in its place.
fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let t = m.file_type();
        if !t.is_file() && !t.is_symlink() {
            return Err(Error::InvalidInput {
                reason: format!(
                    "--html {}: a {} is there, not a regular file; the page replaces only a \
                     regular file (or a symlink): give the path of a file to write",
                    sjournal::escape::path(path),
                    sjournal::storage::file_type_name(&t)
                ),
            });
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io("create", dir, e))?;
    tmp.write_all(bytes)
        .map_err(|e| Error::io("write", tmp.path().to_owned(), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("rename", path, e.error))?;
    Ok(())
}
