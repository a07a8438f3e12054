//! `sjournal context show|set|clear --session ID`: the session's context channels.
//!
//! `show` prints exactly the text the hook would inject now (nothing at all when it is empty);
//! `--json` prints `{"text", "truncated", "dropped": [..], "chars", "budget_chars", "seq"}`.
//! `set` writes an entry (`--channel persistent|ephemeral|at-stop`, default persistent) with
//! the text given as an argument or on stdin; `clear` removes one key, one channel or all.

use std::io::Write;

use serde_json::json;

use crate::cli::commands::{append::read_stdin, state::load};
use crate::cli::{output, Outcome};
use crate::context::{render, Channel, RenderOptions};
use crate::error::{Error, Result};
use crate::journal::Root;
use crate::limits::CONTEXT_BUDGET_DEFAULT_CHARS;
use crate::primitives;

/// Show or change a session's context channels
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Print exactly the context that would be injected now
    Show {
        #[arg(long)]
        session: String,
        /// Most characters to inject
        #[arg(long, default_value_t = CONTEXT_BUDGET_DEFAULT_CHARS)]
        budget: usize,
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
    let opts = crate::cli::writer_options(root);
    match args.action {
        Action::Show {
            session,
            budget,
            json,
        } => {
            let (state, _) = load(root, &session, None, true)?;
            let r = render(
                &state,
                &RenderOptions {
                    budget_chars: budget,
                },
            );
            if json {
                let v = json!({
                    "text": r.text, "truncated": r.truncated, "dropped": r.dropped,
                    "chars": r.chars, "budget_chars": budget, "seq": state.seq,
                });
                output::line(&mut out, &v.to_string())?;
            } else {
                out.write_all(r.text.as_bytes())
                    .map_err(output::write_err)?;
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
            return crate::cli::print_landed(&mut out, root, &session, &landed, seq_line);
        }
        Action::Clear {
            session,
            key,
            channel,
        } => {
            let landed = primitives::context_clear(root, &session, channel, key.as_deref(), &opts)?;
            return crate::cli::print_landed(&mut out, root, &session, &landed, seq_line);
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}

fn seq_line(a: &crate::journal::Appended) -> String {
    json!({"seq": a.seq}).to_string()
}
