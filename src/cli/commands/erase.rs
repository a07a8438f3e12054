//! `sjournal erase --session ID --seq N [--field PATH] --reason TEXT`: removes a record's
//! payload, or one field of its JSON (PATH a JSON pointer such as `/tool_input/command`), from
//! a version-2 or -3 journal for good, and records the erasure in a chained `sjournal.erased`
//! record, so `verify` still checks the whole journal and reports the erasure (see
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
    /// (the rest of the JSON is written again without it: its keys in sorted order, compact)
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
    // What the record says before and after, to find the memory items made from what goes.
    let before = record_text(root, &args.session, args.seq);
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
    let gone = Gone {
        session: &args.session,
        seq: done.seq,
        before: before.unwrap_or_default(),
        after: record_text(root, &args.session, done.seq).unwrap_or_default(),
    };
    for (scope, id, status) in memory_made_from(root, &gone) {
        let forget = match &scope {
            sjournal::memory::Scope::Project(dir) => format!(
                "sjournal memory forget {id} --scope project --project {}",
                sjournal::install::shell_quote(dir)
            ),
            sjournal::memory::Scope::Global => {
                format!("sjournal memory forget {id} --scope global")
            }
        };
        output::warn(&sjournal::escape::text(&format!(
            "sjournal: memory item {id} ({} scope, {status}) was made from this record and still \
             holds its text: `{forget}` stops it being injected; the text stays in that scope's \
             journal, and in the injection records of sessions given it since (memory and \
             injection records cannot be erased)",
            scope.name()
        )));
    }
    Ok(Outcome::Ok)
}

/// A record's text, as `log` shows it (None: no such record, or it does not read).
fn record_text(root: &Root, session: &str, seq: u64) -> Option<String> {
    let paths = root.session(session).ok()?;
    let reader = sjournal::journal::JournalReader::open(&paths.journal, None).ok()?;
    let rec = reader
        .records()
        .ok()?
        .map_while(|r| r.ok())
        .find(|r| r.seq == seq)?;
    sjournal::format::payload::to_json(rec.seq, rec.kind, rec.payload)
        .ok()
        .map(|j| j.get().to_owned())
}

/// What an erasure took: the record, and its text before and after.
struct Gone<'a> {
    session: &'a str,
    seq: u64,
    before: String,
    after: String,
}

/// The memory items (scope, id, status) made from what `gone` took that are not forgotten
/// or rejected: an erasure does not reach them. An item's provenance names the session and
/// the seq, or (a "remember:" proposed as its prompt is journaled) the session and the quote:
/// then it is one whose quote the record held and no longer does.
fn memory_made_from(
    root: &Root,
    gone: &Gone<'_>,
) -> Vec<(sjournal::memory::Scope, String, String)> {
    let quoted = |q: &str| {
        let q = serde_json::to_string(q).unwrap_or_default();
        let q = q.trim_matches('"');
        !q.is_empty() && gone.before.contains(q) && !gone.after.contains(q)
    };
    use sjournal::memory::{ops, Scope};
    let mut out = Vec::new();
    let Ok(journals) = root.journals() else {
        return out;
    };
    for path in journals {
        let Some(scope) = sjournal::journal::JournalReader::open(&path, None)
            .ok()
            .and_then(|r| r.header().ok().map(|(h, _, _)| h.session_id))
            .and_then(|id| Scope::of_journal_id(&id))
        else {
            continue;
        };
        let Ok(st) = ops::load(root, &scope, &sjournal::snapshot::LoadOptions::latest()) else {
            continue;
        };
        for item in st.memory.items.values() {
            let from_it = item.provenance.iter().any(|p| {
                p.session.as_deref() == Some(gone.session)
                    && match p.seq {
                        Some(seq) => seq == gone.seq,
                        None => p.quote.as_deref().is_some_and(quoted),
                    }
            });
            if from_it && !matches!(item.status.as_str(), "forgotten" | "rejected") {
                out.push((scope.clone(), item.id.clone(), item.status.clone()));
            }
        }
    }
    out
}
