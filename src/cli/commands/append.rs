//! `sjournal append --session ID [--kind NAME]`: one JSON value on stdin becomes one record.
//! Prints `{"seq":N,"hash":"<hex>"}` once the record is durable in the journal (exit 0). If the
//! journal cannot take it, it goes where the session's policy puts it (`journal::session`),
//! stdout says where, and the exit code is 1: the rescue journal when the journal is damaged
//! (`"rescued":true`), else the spool (`"spooled":true`, with `"fallback":true` when it is
//! outside the root and less durable), merged later. Exit 2 only if it was kept nowhere.

use crate::cli::error::Result;
use crate::cli::shared::{parse_json, read_stdin};
use crate::cli::{output, Outcome};
use sjournal::audit::jsonl::event_kind;
use sjournal::journal::Root;
use sjournal::session::{self, Batch};

/// Append one JSON value from stdin to a session's journal
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// Session id (any string; unsafe characters are mapped, the id is kept in the header)
    #[arg(long)]
    pub session: String,
    /// Record kind [default: the payload's hook_event_name, else "event"]
    #[arg(long, value_name = "NAME")]
    pub kind: Option<String>,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let input = read_stdin()?;
    let (text, value) = parse_json(&input)?;
    let kind = event_kind(args.kind.as_deref(), &value)?;
    let mut batch = Batch::new();
    let red = crate::cli::shared::redactor(root);
    let report = sjournal::redact::ingest::push_event(&mut batch, &red, &kind, text);
    crate::cli::shared::note_redacted(report.found.len(), &args.session);
    let landed = session::write(
        root,
        &args.session,
        &batch,
        &crate::cli::shared::writer_options(root),
    )?;
    let mut out = output::stdout();
    Ok(crate::cli::shared::print_landed(
        &mut out,
        root,
        &args.session,
        &landed,
        |a| sjournal::report::line(&sjournal::report::AppendedLine::from(a)),
    )?)
}
