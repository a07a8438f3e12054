//! `sjournal webhook deliver [--session ID | --all] [--attempts N] [--json]` and
//! `sjournal webhook status [--session ID] [--json]`: the webhook deliverer (what the hook
//! starts, detached, when an event matches a `[[webhook]]`; also for a person or cron) and
//! what is owed to each webhook. See `sjournal::webhook`.
//!
//! `deliver --json` prints one [`WebhookRun`] per session and webhook, with `session_id`;
//! `status --json` one [`WebhookStatus`] per line. Exit 1 when events are still owed after
//! `deliver`; `status` exits 0 whatever it shows.

use std::io::Write;

use crate::cli::{output, Outcome};
use sjournal::config::Config;
use sjournal::error::{Error, Result};
use sjournal::journal::Root;
use sjournal::webhook::deliver::{self, DeliverOptions, SessionRun, WebhookRun};
use sjournal::webhook::status::{self, WebhookStatus};
use sjournal::webhook::{self, WebhookHandler};

/// Deliver journaled events to the webhooks of config.toml, and show what is owed
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Webhooks are configured in <root>/config.toml ([[webhook]], example in the README). The hook
starts `webhook deliver` by itself when an event matches; run it by hand or from cron to
retry deliveries that are still pending (e.g. `sjournal webhook deliver --all --attempts 1`).")]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    Deliver(DeliverArgs),
    Status(StatusArgs),
}

/// Send every owed event of a session (or of every subscribed session), with retries
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct DeliverArgs {
    /// The session to deliver
    #[arg(long, value_name = "ID", required_unless_present = "all")]
    pub session: Option<String>,
    /// Every session a hook subscribed (sessions with webhook state)
    #[arg(long, conflicts_with = "session")]
    pub all: bool,
    /// Tries per event in this run, instead of each webhook's retry.attempts
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub attempts: Option<u32>,
    /// One JSON object per session and webhook
    #[arg(long)]
    pub json: bool,
    /// Run as the hook's detached deliverer (a session of its own, nothing printed)
    #[arg(long, hide = true)]
    pub detached: bool,
}

/// Per session and webhook: delivered, pending, last attempt and last failure
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Only this session
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// One JSON object per session and webhook, one per line
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    match args.command {
        Sub::Deliver(a) => run_deliver(root, a),
        Sub::Status(a) => run_status(root, a),
    }
}

fn load_hooks(root: &Root) -> Result<Vec<WebhookHandler>> {
    let config = Config::load(root).map_err(|e| Error::InvalidConfig {
        path: e.path,
        message: e.message,
    })?;
    if config.webhook.is_empty() {
        output::warn(&format!(
            "sjournal webhook: no [[webhook]] in {}; nothing to do",
            Config::path(root).display()
        ));
    }
    Ok(config.webhook)
}

fn run_deliver(root: &Root, a: DeliverArgs) -> Result<Outcome> {
    if a.detached {
        webhook::detach();
    }
    let hooks = load_hooks(root)?;
    if hooks.is_empty() {
        return Ok(Outcome::Ok);
    }
    let opts = DeliverOptions {
        attempts: a.attempts,
        ..DeliverOptions::default()
    };
    let sessions: Vec<String> = match &a.session {
        Some(s) => vec![s.clone()],
        None => status::subscribed(root)?
            .into_iter()
            .map(|p| p.session_id)
            .collect(),
    };
    let mut out = output::stdout();
    let mut owed = false;
    for s in &sessions {
        let run = deliver::deliver_session(root, &hooks, s, &opts);
        if a.detached {
            continue;
        }
        match run {
            Ok(SessionRun::Busy) => {
                if a.json {
                    let busy = sjournal::report::WebhookBusy {
                        session_id: s,
                        busy: true,
                    };
                    output::json_line(&mut out, &sjournal::report::line(&busy))?;
                } else {
                    output::line(
                        &mut out,
                        &format!("session {s}: a deliverer is already running; it delivers"),
                    )?;
                }
            }
            Ok(SessionRun::Ran(runs)) => {
                for r in &runs {
                    owed |= r.pending > 0;
                    output::emit(&mut out, &describe_run(s, r, a.json), a.json)?;
                }
            }
            Err(e) if a.session.is_some() => return Err(e),
            Err(e) => {
                owed = true;
                output::warn(&format!("sjournal webhook: session {s}: {e}"));
            }
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(if owed { Outcome::Findings } else { Outcome::Ok })
}

fn describe_run(session: &str, r: &WebhookRun, json: bool) -> String {
    if json {
        let mut v = serde_json::to_value(r).expect("serializable");
        v["session_id"] = session.into();
        return v.to_string();
    }
    let mut line = format!(
        "session {session}: webhook {}: delivered {}, {} pending",
        r.webhook, r.delivered, r.pending
    );
    if r.failed_attempts > 0 {
        line.push_str(&format!(", {} failed attempt(s)", r.failed_attempts));
    }
    if let Some(e) = &r.error {
        line.push_str(&format!("; last error: {e}"));
    }
    if r.stopped && r.pending > 0 {
        line.push_str("; stopped retrying for this run (the events stay pending)");
    }
    line
}

fn run_status(root: &Root, a: StatusArgs) -> Result<Outcome> {
    let hooks = load_hooks(root)?;
    let rows = status::status(root, &hooks, a.session.as_deref())?;
    let mut out = output::stdout();
    if a.json {
        for r in &rows {
            output::json_line(&mut out, &serde_json::to_string(r).expect("serializable"))?;
        }
    } else {
        output::line(
            &mut out,
            &format!(
                "{:<38} {:<16} {:>9} {:>7} {:>7}  DELIVERER",
                "SESSION", "WEBHOOK", "DELIVERED", "PENDING", "OLDEST"
            ),
        )?;
        for r in &rows {
            for l in status_lines(r) {
                output::line(&mut out, &l)?;
            }
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}

fn status_lines(r: &WebhookStatus) -> Vec<String> {
    let oldest = r
        .oldest_pending_seq
        .map_or("-".to_owned(), |s| s.to_string());
    let deliverer = r
        .deliverer_pid
        .map_or("-".to_owned(), |p| format!("running (pid {p})"));
    let mut v = vec![format!(
        "{:<38} {:<16} {:>9} {:>7} {:>7}  {deliverer}",
        r.session_id, r.webhook, r.delivered, r.pending, oldest
    )];
    let attempt = |a: &webhook::outbox::LastAttempt| {
        let status = a.status.map_or(String::new(), |s| format!(", HTTP {s}"));
        let error = a
            .error
            .as_deref()
            .map_or(String::new(), |e| format!(": {e}"));
        format!(
            "{} event seq {} attempt {} {}{status}{error}",
            output::rfc3339(a.ts_unix_ns),
            a.event_seq,
            a.attempt,
            a.outcome.as_str()
        )
    };
    if let Some(a) = &r.last_attempt {
        v.push(format!("    last attempt: {}", attempt(a)));
    }
    if let Some(a) = r
        .last_failure
        .as_ref()
        .filter(|f| Some(*f) != r.last_attempt.as_ref())
    {
        v.push(format!("    last failure: {}", attempt(a)));
    }
    if let Some(p) = &r.problem {
        v.push(format!("    problem: {p}"));
    }
    v
}
