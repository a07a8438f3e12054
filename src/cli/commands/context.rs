//! `sjournal context show|set|clear --session ID`: the session's context channels.
//!
//! `show` prints exactly the text the hook would inject if the event `--at` (default
//! `compact`: the host compacting now) came next, under the root's config.toml: the injection
//! policy's own function, on the session's current state. Nothing at all when it is empty.
//! `--json` prints the [`Injection`](sjournal::context::Injection) with `"seq"` (the state's).
//! `set` writes an entry (`--channel persistent|ephemeral|at-stop`, default persistent) with
//! the text given as an argument or on stdin; `clear` removes one key, one channel or all.

use std::io::Write;

use crate::cli::shared::{load, load_policy, read_stdin};
use crate::cli::{output, Outcome};
use sjournal::context::{inject, Channel, Extras, InjectionPoint};
use sjournal::error::{Error, Result};
use sjournal::event::{EventKind, Host};
use sjournal::journal::Root;
use sjournal::primitives;

/// An event to show the injection for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum At {
    /// SessionStart after a compaction: the full recovery block
    Compact,
    /// SessionStart(resume)
    Resume,
    /// SessionStart(startup)
    Startup,
    /// SessionStart(clear)
    Clear,
    /// The next UserPromptSubmit
    Prompt,
}

/// Show or change a session's context channels
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Print exactly the context the hook would inject at the next event
    Show {
        #[arg(long)]
        session: String,
        /// The event (default: the host compacting now)
        #[arg(long, value_enum, default_value_t = At::Compact)]
        at: At,
        /// The recovery block's budget in characters (default: config.toml's, else 4000)
        #[arg(long)]
        budget: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Set a context entry (text from the argument, or from stdin when absent or "-")
    Set {
        #[arg(long)]
        session: String,
        #[arg(long)]
        key: String,
        /// persistent (kept, survives compaction), ephemeral (this turn), at-stop (replaces
        /// the persistent entry when the turn ends)
        #[arg(long, default_value = "persistent", value_parser = parse_channel)]
        channel: Channel,
        text: Option<String>,
    },
    /// Clear one key, one channel, or (neither given) every entry
    Clear {
        #[arg(long)]
        session: String,
        #[arg(long)]
        key: Option<String>,
        #[arg(long, value_parser = parse_channel)]
        channel: Option<Channel>,
    },
}

fn parse_channel(s: &str) -> std::result::Result<Channel, String> {
    Channel::from_name(s)
        .ok_or_else(|| format!("unknown channel {s:?}: use persistent, ephemeral or at-stop"))
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let mut out = output::stdout();
    let opts = crate::cli::shared::writer_options(root);
    match args.action {
        Action::Show {
            session,
            at,
            budget,
            json,
        } => {
            let (state, _) = load(root, &session, None, true)?;
            let mut policy = load_policy(root);
            if let Some(b) = budget {
                policy.budget_chars = b;
            }
            let (kind, source) = match at {
                At::Compact => (EventKind::SessionStart, Some("compact")),
                At::Resume => (EventKind::SessionStart, Some("resume")),
                At::Startup => (EventKind::SessionStart, Some("startup")),
                At::Clear => (EventKind::SessionStart, Some("clear")),
                At::Prompt => (EventKind::UserPromptSubmit, None),
            };
            let point = InjectionPoint {
                // The next event: no prompt of the journal is the one being answered.
                event_seq: state.seq + 1,
                kind,
                source: source.map(str::to_owned),
                host: state
                    .identity
                    .host
                    .as_deref()
                    .and_then(Host::from_name)
                    .unwrap_or(Host::Unknown),
            };
            let r = inject(&state, &point, &policy, &Extras::default());
            if json {
                let show = sjournal::json::ContextShow {
                    injection: &r,
                    seq: state.seq,
                };
                output::json_line(&mut out, &sjournal::json::line(&show))?;
            } else {
                // Escaped for the terminal (`--json` has the exact text).
                output::text(&mut out, &r.text)?;
            }
        }
        Action::Set {
            session,
            key,
            channel,
            text,
        } => {
            let text = match text.as_deref() {
                None | Some("-") => {
                    String::from_utf8(read_stdin()?).map_err(|_| Error::InvalidInput {
                        reason: "the text on stdin is not UTF-8".into(),
                    })?
                }
                Some(t) => t.to_owned(),
            };
            let landed = primitives::context_set(root, &session, channel, &key, &text, &opts)?;
            return crate::cli::shared::print_landed(&mut out, root, &session, &landed, seq_line);
        }
        Action::Clear {
            session,
            key,
            channel,
        } => {
            let landed = primitives::context_clear(root, &session, channel, key.as_deref(), &opts)?;
            return crate::cli::shared::print_landed(&mut out, root, &session, &landed, seq_line);
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}

fn seq_line(a: &sjournal::journal::Appended) -> String {
    sjournal::json::line(&sjournal::json::SeqLine { seq: a.seq })
}
