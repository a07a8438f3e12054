//! `sjournal erase --session ID --seq N [--field PATH] --reason TEXT`: removes a record's
//! payload, or one field of its JSON (PATH a JSON pointer such as `/tool_input/command`), from
//! a version-2 or -3 journal for good, and records the erasure in a chained `sjournal.erased` record,
//! so `verify` still checks the whole journal and reports the erasure (see
//! [`sjournal::journal::erase`]). Only this file's bytes are rewritten: copies elsewhere
//! (backups, shipped segments) keep what they hold. Exit 0 when erased, 2 if refused (nothing
//! was changed then).

use crate::cli::error::{CliError, Result};
use crate::cli::{output, Outcome};
use sjournal::journal::erase::{erase, EraseError, Request};
use sjournal::journal::writer::WriterOptions;
use sjournal::journal::Root;

/// Erase a record's payload, or one field of it, keeping the journal verifiable
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// The record to erase
    #[arg(long)]
    pub seq: u64,
    /// Erase only this field of the event's JSON: a JSON pointer, e.g. /tool_input/command
    #[arg(long, value_name = "PATH")]
    pub field: Option<String>,
    /// Why (kept in the journal, shown by verify)
    #[arg(long)]
    pub reason: String,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let req = Request {
        seq: args.seq,
        field: args.field,
        reason: args.reason,
    };
    let done =
        erase(root, &args.session, &req, &WriterOptions::default()).map_err(|e| match e {
            EraseError::Refused(_) => CliError::Usage {
                message: e.to_string(),
            },
            EraseError::Journal(e) => CliError::Lib(e),
        })?;
    crate::cli::shared::refresh_search_index(root);
    let what = done
        .erased
        .field
        .as_deref()
        .map_or("the payload".to_owned(), |f| format!("field {f}"));
    output::line(
        &mut output::stdout(),
        &format!(
            "session {}: erased {what} of seq {} (digest {}), recorded at seq {}; backups and \
             shipped copies are not changed",
            sjournal::escape::text(&args.session),
            done.seq,
            done.erased.erased_digest,
            done.recorded_at
        ),
    )?;
    Ok(Outcome::Ok)
}
