//! `sjournal state --session ID [--at SEQ] [--json] [--no-snapshot]`: the session's folded
//! state.
//!
//! `--json` prints one [`report::StateReport`](sjournal::report::StateReport) (its schema is there).

use std::io::Write;

use crate::cli::shared::load;
use crate::cli::{output, Outcome};
use sjournal::fold::State;
use sjournal::journal::Root;
use sjournal::report::StateReport;
use sjournal::snapshot::LoadInfo;

/// Print a session's folded state
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// Fold only the records up to this seq (at most the last one's)
    #[arg(long, value_name = "SEQ")]
    pub at: Option<u64>,
    /// Print the state as one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    /// Replay the whole journal instead of starting from the snapshot
    #[arg(long)]
    pub no_snapshot: bool,
}

fn human(state: &State, info: &LoadInfo) -> Vec<String> {
    let id = &state.identity;
    // Fields from payloads: escaped whole, so a line break in them cannot start a line.
    let opt = |o: &Option<String>| {
        o.as_deref()
            .map_or_else(|| "-".into(), |s| sjournal::escape::text(s).into_owned())
    };
    let mut l = vec![
        format!("session      {}", opt(&id.session_id)),
        format!("seq          {} ({} records)", state.seq, state.records),
        format!("state hash   {}", state.state_hash()),
        format!(
            "host         {}   model {}   cwd {}",
            opt(&id.host),
            opt(&id.model),
            opt(&id.cwd)
        ),
        format!(
            "turns        {}{}   compactions {}   tool calls {} ({} failed, {} open)",
            state.turns.count,
            if state.turns.open { " (one open)" } else { "" },
            state.compactions.count,
            state.tools.calls,
            state.tools.failures,
            state.tools.open.len()
        ),
        format!(
            "files        {} ({} changed)   subagents {}",
            state.files.by_path.len(),
            state.files.by_path.values().filter(|f| f.changed()).count(),
            state.subagents.started
        ),
        format!(
            "context      {} persistent, {} ephemeral, {} at-stop",
            state.context.persistent.len(),
            state.context.ephemeral.len(),
            state.context.at_stop.len()
        ),
    ];
    if let Some(e) = &state.ended {
        l.push(format!(
            "ended        {} ({}) at seq {}",
            e.event,
            sjournal::escape::text(e.reason.as_deref().unwrap_or("-")),
            e.seq
        ));
    }
    let kinds: Vec<String> = state
        .counts
        .by_kind
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    l.push(format!("events       {}", kinds.join(", ")));
    l.push(format!(
        "loaded       snapshot {}, {} records folded",
        info.snapshot.name(),
        info.tail_records
    ));
    if info.pending > 0 {
        l.push(format!(
            "pending      {} spooled event file(s) not yet in the journal are folded in above \
             (`sjournal flush` merges them)",
            info.pending
        ));
    }
    l
}

pub fn run(root: &Root, args: Args) -> crate::cli::error::Result<Outcome> {
    let (state, info) = load(root, &args.session, args.at, !args.no_snapshot)?;
    // Past the end, the state would be the last record's, shown as if it were at SEQ.
    if let Some(at) = args
        .at
        .filter(|&at| at > state.seq && info.stopped.is_none())
    {
        return Err(crate::cli::error::CliError::Usage {
            message: format!(
                "--at {at} is past the end of session {}: its last record is seq {} (nothing \
                 was shown)",
                sjournal::escape::text(&format!("{:?}", args.session)),
                state.seq
            ),
        });
    }
    let mut out = output::stdout();
    if args.json {
        let report = StateReport::new(&args.session, &state, &info);
        output::json_line(&mut out, &sjournal::report::line(&report))?;
    } else {
        for line in human(&state, &info) {
            output::line(&mut out, &line)?;
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(if info.stopped.is_some() {
        Outcome::Findings
    } else {
        Outcome::Ok
    })
}
