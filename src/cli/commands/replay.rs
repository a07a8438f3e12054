//! `sjournal replay --session ID [--from SEQ] [--to SEQ] [--json]`: the session's records one
//! by one, each with what it changed in the state; for every event, the context the hook
//! injected (its `sjournal.injected` record) checked against what the injection policy
//! re-derives from the journal, under the root's config.toml; for an `sjournal.redacted`
//! record, each secret redacted from its event (place, rule, tag); last, the final state hash
//! (equal to `sjournal state`'s at that seq).
//!
//! `--json` prints one [`Step`](sjournal::replay::Step) per line, then
//! `{"final":true,"last_seq":N,"state_hash":"<hex>","steps":K,"differing":[seq..]}`. Exit 1
//! if the journal stops being valid before `--to` (the steps before the problem are printed),
//! or if a journaled injection differs from its re-derivation.

use std::io::Write;

use crate::cli::{output, Outcome};
use sjournal::error::{Error, Result};
use sjournal::journal::{JournalReader, Root};
use sjournal::replay::{diff, replay, CheckStatus, InjectionCheck, Range, Step};

/// Replay a session record by record: state changes and the injected context at each step
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// First record to show (earlier ones are folded silently)
    #[arg(long, value_name = "SEQ", default_value_t = 1)]
    pub from: u64,
    /// Last record to fold and show
    #[arg(long, value_name = "SEQ")]
    pub to: Option<u64>,
    /// Print JSON (one object per line) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    if args.to.is_some_and(|to| to < args.from) {
        return Err(Error::InvalidInput {
            reason: format!(
                "--to {} is before --from {}: give a range that starts before it ends",
                args.to.unwrap_or(0),
                args.from
            ),
        });
    }
    // Pending events are not in the journal yet: merged first if possible, else left out
    // with a warning on stderr (which names them).
    let _pending = crate::cli::pending::settle(root, &args.session)?;
    let paths = root.existing_session(&args.session)?;
    let reader = JournalReader::open(&paths.journal, None)?;
    let policy = crate::cli::shared::load_policy(root);
    let mut fold = sjournal::replay::session::SessionFold::new(policy);
    let mut out = output::stdout();
    let mut last_context: Option<String> = None;
    let range = Range {
        from: args.from,
        to: args.to,
    };
    let quiet = sjournal::replay::Fold::bookkeeping(&fold);
    let end = replay(&reader, &mut fold, range, |step| {
        if args.json {
            output::json_line(
                &mut out,
                &serde_json::to_string(&step).expect("serializable"),
            )
        } else {
            render(&mut out, &step, quiet, &mut last_context)
        }
    })?;
    if args.json {
        let fin = sjournal::report::ReplayFinal {
            is_final: true,
            end: &end,
        };
        output::json_line(&mut out, &sjournal::report::line(&fin))?;
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
    if end.stop.is_none() && args.from > end.last_seq.max(1) {
        output::warn(&format!(
            "sjournal: --from {} is past the session's last record (seq {}): nothing to show",
            args.from, end.last_seq
        ));
    }
    if !end.differing.is_empty() {
        output::warn(&format!(
            "sjournal: the injections for event(s) {:?} differ from what the journal re-derives \
             (same renderer version): the hook and the fold disagree; report it with the journal",
            end.differing
        ));
    }
    match end.stop {
        None if end.differing.is_empty() => Ok(Outcome::Ok),
        None => Ok(Outcome::Findings),
        Some(stop) => {
            output::warn(&format!(
                "sjournal: {}: replay stopped at offset {}: {} (run `sjournal inspect` on it)",
                paths.journal.display(),
                stop.offset,
                stop.problem
            ));
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
    if step.erased {
        output::line(
            out,
            "    erased: its payload (or a field of it) was removed after the fact; verify lists why",
        )?;
    }
    if let Some(r) = &step.redacted {
        output::line(
            out,
            &format!(
                "    redacted from the {} before it: {} secret(s)",
                r.event_kind,
                r.found.len() as u64 + r.more
            ),
        )?;
        for f in &r.found {
            let at = if f.path.is_empty() { "(text)" } else { &f.path };
            output::line(
                out,
                &format!("    - {at}  {}", sjournal::redact::marker(&f.rule, &f.tag)),
            )?;
        }
        if r.more > 0 {
            output::line(out, &format!("    - and {} more", r.more))?;
        }
    }
    if let Some(c) = &step.injection {
        injection(out, c, last_context)?;
    }
    Ok(())
}

fn text_lines(out: &mut impl Write, text: &str) -> Result<()> {
    for l in text.lines() {
        output::line(out, &format!("    | {l}"))?;
    }
    Ok(())
}

fn injection(
    out: &mut impl Write,
    c: &InjectionCheck,
    last_context: &mut Option<String>,
) -> Result<()> {
    let n = |t: &Option<String>| t.as_deref().map_or(0, |t| t.chars().count());
    let head = match c.status {
        CheckStatus::Match => format!(
            "    injected for seq {} ({} chars), re-derived identically",
            c.event_seq,
            n(&c.journaled)
        ),
        CheckStatus::Differs => format!(
            "    injected for seq {} ({} chars) DIFFERS from the re-derivation ({} chars)",
            c.event_seq,
            n(&c.journaled),
            n(&c.derived)
        ),
        CheckStatus::OtherVersion => format!(
            "    injected for seq {} ({} chars) by renderer version {} (this build: {}), not compared",
            c.event_seq,
            n(&c.journaled),
            c.render_version.unwrap_or(0),
            sjournal::context::RENDER_VERSION
        ),
        CheckStatus::NotJournaled => format!(
            "    nothing journaled for seq {}; the policy derives ({} chars):",
            c.event_seq,
            n(&c.derived)
        ),
        CheckStatus::Spooled => format!(
            "    seq {} was spooled, nothing injected; the policy derives ({} chars):",
            c.event_seq,
            n(&c.derived)
        ),
    };
    output::line(out, &head)?;
    let shown = c.journaled.as_ref().or(c.derived.as_ref());
    if let Some(text) = shown {
        if last_context.as_ref() == Some(text) {
            output::line(out, "    | (unchanged)")?;
        } else {
            text_lines(out, text)?;
            *last_context = Some(text.clone());
        }
    }
    if c.status == CheckStatus::Differs {
        output::line(out, "    re-derived:")?;
        text_lines(out, c.derived.as_deref().unwrap_or("(nothing)"))?;
    }
    Ok(())
}
