//! `sjournal replay --session ID [--from SEQ] [--to SEQ] [--json]`: the session's records one
//! by one, each with what it changed in the state and the context that would have been
//! injected after it; last, the final state hash (equal to `sjournal state`'s at that seq).
//!
//! `--json` prints one [`Step`](crate::replay::Step) per line, then
//! `{"final":true,"last_seq":N,"state_hash":"<hex>","steps":K}`. Exit 1 if the journal stops
//! being valid before `--to` (the steps before the problem are printed).

use std::io::Write;

use crate::cli::{output, Outcome};
use crate::error::{Error, Result};
use crate::journal::{JournalReader, Root};
use crate::replay::{diff, replay, Range, Step};

/// Replay a session record by record: state changes and the injected context at each step
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[arg(long)]
    pub session: String,
    /// First record to show (earlier ones are folded silently)
    #[arg(long, value_name = "SEQ", default_value_t = 1)]
    pub from: u64,
    /// Last record to fold and show
    #[arg(long, value_name = "SEQ")]
    pub to: Option<u64>,
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    if args.to.is_some_and(|to| to < args.from) {
        return Err(Error::Fold {
            seq: args.from,
            reason: format!(
                "--to {} is before --from {}",
                args.to.unwrap_or(0),
                args.from
            ),
        });
    }
    // Pending events are not in the journal yet: merged first if possible, else left out
    // with a warning on stderr (which names them).
    let _pending = crate::cli::pending::settle(root, &args.session)?;
    let paths = crate::cli::existing_session(root, &args.session)?;
    let reader = JournalReader::open(&paths.journal, None)?;
    let mut fold = crate::replay::session::SessionFold::default();
    let mut out = output::stdout();
    let mut last_context: Option<String> = None;
    let range = Range {
        from: args.from,
        to: args.to,
    };
    let quiet = crate::replay::Fold::bookkeeping(&fold);
    let end = replay(&reader, &mut fold, range, |step| {
        if args.json {
            output::line(
                &mut out,
                &serde_json::to_string(&step).expect("serializable"),
            )
        } else {
            render(&mut out, &step, quiet, &mut last_context)
        }
    })?;
    let fin = serde_json::json!({
        "final": true,
        "last_seq": end.last_seq,
        "state_hash": end.state_hash,
        "steps": end.steps,
    });
    if args.json {
        output::line(&mut out, &fin.to_string())?;
    } else {
        output::line(
            &mut out,
            &format!(
                "final state after seq {}: {} ({} step(s) shown)",
                end.last_seq, end.state_hash, end.steps
            ),
        )?;
    }
    out.flush().map_err(output::write_err)?;
    match end.stop {
        None => Ok(Outcome::Ok),
        Some(stop) => {
            eprintln!(
                "sjournal: {}: replay stopped at offset {}: {} (run `sjournal inspect` on it)",
                paths.journal.display(),
                stop.offset,
                stop.problem
            );
            Ok(Outcome::Findings)
        }
    }
}

fn render(
    out: &mut impl Write,
    step: &Step,
    quiet: &[&str],
    last_context: &mut Option<String>,
) -> Result<()> {
    output::line(
        out,
        &format!(
            "seq {:<6} {}  {:<20} state {}",
            step.seq,
            output::rfc3339(step.ts_unix_ns),
            step.kind,
            &step.state_hash[..16]
        ),
    )?;
    let shown: Vec<_> = step
        .changes
        .iter()
        .filter(|c| !quiet.contains(&c.path.as_str()))
        .cloned()
        .collect();
    for line in diff::render(&shown, 100) {
        output::line(out, &format!("    {line}"))?;
    }
    if let Some(ctx) = &step.context {
        if last_context.as_ref() == Some(ctx) {
            output::line(
                out,
                &format!("    context: unchanged ({} chars)", ctx.chars().count()),
            )?;
        } else {
            output::line(
                out,
                &format!("    context ({} chars):", ctx.chars().count()),
            )?;
            for l in ctx.lines() {
                output::line(out, &format!("    | {l}"))?;
            }
            *last_context = Some(ctx.clone());
        }
    }
    Ok(())
}
