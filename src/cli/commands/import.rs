//! `sjournal import --session ID FILE|-`: appends the events of a JSON Lines file, for users
//! moving from a jq-based log or re-importing an `sjournal export`.
//!
//! Each non-blank line is one of:
//! - an `sjournal export` line (it has `seq`, `kind`, `hash` and `payload`): the record is
//!   appended with its kind, its time (`ts_unix_ns`) and its payload byte for byte (`raw` when
//!   present). System records (`sjournal.*`: context, primitives, injections, recoveries) are
//!   written back from their exact bytes (`payload_base64`) when the session is empty, so a
//!   session exported and imported into a new session folds to the same state (the same
//!   `state_hash`). Into a session that already has records they are skipped: they refer to
//!   records by seq (a slot's expected seq, the event an injection answered), and their seqs
//!   would no longer line up;
//! - any other JSON value: one event, the line's text byte for byte (without its line break);
//!   its kind is `--kind`, else its `hook_event_name`, else "event".
//!
//! Nothing is imported twice. An export line whose record the session already holds (the same
//! time, kind and payload bytes: an import of the same export before, or the session's own
//! export) is skipped, and the summary counts it (`already_present`), so importing an export
//! again only adds what is new in it. Plain events have no identity of their own: if the
//! session already holds every one of them, in order, one after the other, the import is
//! refused (exit 2) unless `--allow-duplicates` says to append them again.
//!
//! Every line is checked before anything is written: a bad line is an error naming its line
//! number, and nothing is appended. The events are then appended in as few batches as the
//! per-write bound allows (`BATCH_MAX_BYTES`, 64 MiB), each batch one write and one sync, so a
//! typical import costs one fsync. The bound is what lets recovery tell a torn batch from
//! mid-log corruption, so a bigger import is split rather than written in one go.

use std::collections::HashSet;
use std::io::Read;
use std::path::PathBuf;

use crate::cli::error::CliError;
use crate::cli::{output, Outcome};
use sjournal::audit::jsonl::{chunks, plan, ImportFormat, ImportItem};
use sjournal::error::{Error, Result};
use sjournal::journal::writer::now_unix_ns;
use sjournal::journal::Root;
use sjournal::session::{keep_elsewhere, Batch, Landed, Session};

/// Append the events of a JSON Lines file (or stdin) with one sync
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it (a new one, or one to add to)
    #[arg(long)]
    pub session: String,
    /// JSONL file, or - for stdin
    pub file: PathBuf,
    /// How to read lines [default: auto, by the shape of each line]
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Kind for plain events [default: hook_event_name, else "event"]
    #[arg(long, value_name = "NAME")]
    pub kind: Option<String>,
    /// Print the summary as JSON
    #[arg(long)]
    pub json: bool,
    /// Append plain events even when the session already holds every one of them, in order
    /// (without it such an import is refused as a repeat)
    #[arg(long)]
    pub allow_duplicates: bool,
    /// Leave out records erased after they were written (export marks them "erased": true),
    /// the sjournal.erased records binding them, and every system record after the first of
    /// them (system records refer to records by seq, which move); without it an export
    /// holding one is refused: the erased content is gone
    #[arg(long)]
    pub skip_erased: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Export lines where they look like one, plain events otherwise
    Auto,
    /// Only `sjournal export` lines
    Export,
    /// Every line is one event, taken as it is
    Events,
}

impl From<Format> for ImportFormat {
    fn from(f: Format) -> ImportFormat {
        match f {
            Format::Auto => ImportFormat::Auto,
            Format::Export => ImportFormat::Export,
            Format::Events => ImportFormat::Events,
        }
    }
}

/// A record as the duplicate check compares it: time, kind and a digest of its payload, and
/// its seq.
type Held = (i64, String, blake3::Hash, u64);

/// The records of a session's journal and rescue journal, in order (as far as they can be
/// read: a damaged record ends the list).
fn held(root: &Root, session: &str) -> Result<Vec<Held>> {
    let paths = root.session(session)?;
    let mut out = Vec::new();
    for path in [&paths.journal, &paths.rescue] {
        if std::fs::symlink_metadata(path).is_err() {
            continue;
        }
        let reader = sjournal::journal::JournalReader::open(path, None)?;
        for rec in reader.records()? {
            let Ok(rec) = rec else { break };
            out.push((
                rec.ts_unix_ns,
                rec.kind.to_owned(),
                blake3::hash(rec.payload),
                rec.seq,
            ));
        }
    }
    Ok(out)
}

/// Where the session already holds `plain` (kinds and payloads), one after the other: the
/// index in `held` of the first.
fn repeated_run(held: &[Held], plain: &[&ImportItem]) -> Option<usize> {
    let want: Vec<(&str, blake3::Hash)> = plain
        .iter()
        .map(|i| (i.kind.as_str(), blake3::hash(&i.payload)))
        .collect();
    if want.is_empty() || want.len() > held.len() {
        return None;
    }
    (0..=held.len() - want.len()).find(|&at| {
        want.iter()
            .zip(&held[at..])
            .all(|((k, h), (_, hk, hh, _))| k == hk && h == hh)
    })
}

pub fn run(root: &Root, args: Args) -> crate::cli::error::Result<Outcome> {
    let (name, input) = read_input(&args.file)?;
    let mut plan = plan(
        &name,
        &input,
        args.format.into(),
        args.kind.as_deref(),
        args.skip_erased,
    )?;
    // Nothing twice: export lines already in the session are skipped; plain events the
    // session already holds, every one in order, are refused as a repeat.
    let mut already = 0u64;
    if !plan.items.is_empty() {
        let held = held(root, &args.session)?;
        let plain: Vec<&ImportItem> = plan.items.iter().filter(|i| i.ts.is_none()).collect();
        if !args.allow_duplicates {
            if let Some(at) = repeated_run(&held, &plain) {
                return Err(CliError::Usage {
                    message: format!(
                        "session {} already holds every event of {} (all {}, in order, as seq \
                         {}..={}): it was imported before; nothing was imported (pass \
                         --allow-duplicates to append them again)",
                        sjournal::escape::text(&format!("{:?}", args.session)),
                        sjournal::escape::text(&name),
                        plain.len(),
                        held[at].3,
                        held[at + plain.len() - 1].3,
                    ),
                });
            }
        }
        let present: HashSet<(i64, &str, blake3::Hash)> = held
            .iter()
            .map(|(ts, kind, h, _)| (*ts, kind.as_str(), *h))
            .collect();
        let before = plan.items.len();
        plan.items.retain(|i| {
            i.ts.is_none_or(|ts| {
                !present.contains(&(ts, i.kind.as_str(), blake3::hash(&i.payload)))
            })
        });
        already = (before - plan.items.len()) as u64;
    }
    let mut syncs = 0;
    let mut range = None;
    let (mut events, mut system, mut not_empty) = (0u64, 0u64, 0u64);
    let mut landed = None;
    let mut unopened = false;
    if !plan.items.is_empty() {
        let opts = crate::cli::shared::writer_options(root);
        let (session, open_err) = match Session::open(root, &args.session, &opts) {
            Ok(s) => (Some(s), None),
            Err(e @ (Error::InvalidSessionId { .. } | Error::InvalidKind { .. })) => {
                return Err(e.into())
            }
            Err(e) => (None, Some(e)),
        };
        // System records refer to records by seq: they are copied only into an empty
        // session (one that cannot be opened now may not be: they are left out).
        unopened = session.is_none();
        let copy = session.as_ref().is_some_and(|s| s.writer().is_empty());
        let total = plan.items.len();
        let kept: Vec<ImportItem> = plan
            .items
            .into_iter()
            .filter(|i| copy || !i.system)
            .collect();
        not_empty = (total - kept.len()) as u64;
        let (kept, redacted) =
            sjournal::redact::ingest::import(&crate::cli::shared::redactor(root), kept);
        if !args.json {
            crate::cli::shared::note_redacted(redacted, &args.session);
        }
        let items: Vec<&ImportItem> = kept.iter().collect();
        if !items.is_empty() {
            syncs = chunks(&items).len();
            let batch = Batch {
                ts_unix_ns: now_unix_ns(),
                records: items
                    .iter()
                    .map(|i| (i.kind.clone(), i.payload.clone()))
                    .collect(),
                times: items.iter().map(|i| i.ts).collect(),
            };
            let l = match (session, open_err) {
                (Some(s), _) => {
                    let mut c = s.commit(&batch)?;
                    let _ = c.write_snapshot();
                    c.landed
                }
                (None, e) => keep_elsewhere(
                    root,
                    &args.session,
                    &batch.items(),
                    &batch.times,
                    &e.map(|e| e.to_string()).unwrap_or_default(),
                    None,
                    &opts,
                )?,
            };
            if let (Some(first), Some(last)) = (l.appended().first(), l.appended().last()) {
                range = Some((first.seq, last.seq, last.hash));
            }
            landed = Some(l);
        }
        system = items.iter().filter(|i| i.system).count() as u64;
        events = items.len() as u64 - system;
    }
    let skipped = plan.without_bytes + not_empty;
    if not_empty > 0 && !args.json {
        let why = match unopened {
            true => "could not be opened to check that it is new",
            false => "already had records",
        };
        output::warn(&format!(
            "sjournal: {not_empty} system record(s) not imported: session {} {why}, and system \
             records refer to records by seq; import into a new session to copy a session whole",
            sjournal::escape::text(&args.session)
        ));
    }
    let mut out = output::stdout();
    let line = match (args.json, range) {
        (true, _) => sjournal::report::line(&sjournal::report::ImportSummary {
            session: &args.session,
            appended: events + system,
            events,
            system,
            first_seq: range.map(|r| r.0),
            last_seq: range.map(|r| r.1),
            head: range.map(|r| r.2.to_hex()),
            skipped_system: skipped,
            already_present: already,
            skipped_erased: plan.erased_skipped + plan.system_after_skip,
            syncs,
        }),
        (false, Some((first, last, head))) => format!(
            "imported {events} event(s) and {system} system record(s) into session {} as seq \
             {first}..={last} (head {head}) with {syncs} sync(s); {skipped} system record(s) \
             skipped; {already} already in the session{}",
            sjournal::escape::text(&format!("{:?}", args.session)),
            erased_note(plan.erased_skipped, plan.system_after_skip),
        ),
        (false, None) => format!(
            "nothing to import from {}: {already} record(s) already in session {}; {skipped} \
             system record(s) skipped{}",
            sjournal::escape::text(&name),
            sjournal::escape::text(&format!("{:?}", args.session)),
            erased_note(plan.erased_skipped, plan.system_after_skip),
        ),
    };
    output::emit(&mut out, &line, args.json)?;
    match landed {
        None | Some(Landed::Journal { .. }) => Ok(Outcome::Ok),
        // Not (all) in the journal: say where the rest is, exit 1.
        Some(other) => Ok(crate::cli::shared::print_landed(
            &mut out,
            root,
            &args.session,
            &other,
            |_| String::new(),
        )?),
    }
}

fn erased_note(n: u64, system_after: u64) -> String {
    match n {
        0 => String::new(),
        n => format!(
            "; {n} erased record(s) and the records binding them left out (--skip-erased), and \
             the {system_after} system record(s) after the first of them (they refer to records \
             by seq, and those seqs moved)"
        ),
    }
}

fn read_input(file: &std::path::Path) -> Result<(String, Vec<u8>)> {
    if file.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| Error::io("read", "<stdin>", e))?;
        return Ok(("<stdin>".into(), buf));
    }
    // Opened without waiting: a named pipe is refused at once rather than read until its
    // writer closes it (stdin, `-`, is the way to import from a pipe).
    let buf = sjournal::storage::read_regular(file, sjournal::storage::Owner::Anyone, u64::MAX)
        .map_err(|e| match e {
            Error::NotRegular { path, found } => Error::InvalidInput {
                reason: format!(
                    "{} is a {found}, not a regular file; to import from a pipe, pass `-` and \
                     give the export on stdin",
                    path.display()
                ),
            },
            e => e,
        })?;
    Ok((file.display().to_string(), buf))
}
