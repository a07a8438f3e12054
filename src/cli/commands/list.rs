//! `sjournal list push|show|clear --session ID NAME`: bounded lists of JSON items.
//!
//! `push NAME VALUE [--max N]` appends one JSON value; the list keeps its last N items
//! (default 100, at most 1000). `show` prints the items oldest first, one JSON value per line
//! (`--json`: `{"name", "max", "pushed", "items": [{"seq", "value"}]}`).

use crate::cli::shared::load;
use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::Root;
use sjournal::primitives;
use sjournal::report::ListShow;

/// Push to, show or clear a bounded list
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    Push {
        #[command(flatten)]
        target: crate::cli::target::Target,
        /// The list's name
        name: String,
        /// One JSON value
        value: String,
        /// Keep at most this many items
        #[arg(long)]
        max: Option<u32>,
    },
    Show {
        #[command(flatten)]
        target: crate::cli::target::Target,
        /// The list's name
        name: String,
        /// Print JSON (one object per line) instead of text
        #[arg(long)]
        json: bool,
    },
    Clear {
        #[command(flatten)]
        target: crate::cli::target::Target,
        /// The list's name
        name: String,
    },
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let mut out = output::stdout();
    let opts = crate::cli::shared::writer_options(root);
    match args.action {
        Action::Push {
            target,
            name,
            value,
            max,
        } => {
            let session = target.id()?;
            let landed = primitives::list_push(root, &session, &name, &value, max, &opts)?;
            return crate::cli::shared::print_landed(&mut out, root, &session, &landed, seq_line);
        }
        Action::Clear { target, name } => {
            let session = target.id()?;
            let landed = primitives::list_clear(root, &session, &name, &opts)?;
            return crate::cli::shared::print_landed(&mut out, root, &session, &landed, seq_line);
        }
        Action::Show { target, name, json } => {
            let session = target.id()?;
            let (state, _) = load(root, &session, None, true)?;
            let Some(list) = ListShow::of(&state, &name) else {
                output::warn(&format!(
                    "sjournal: list {name:?} of session {session:?} is empty"
                ));
                return Ok(Outcome::Findings);
            };
            if json {
                output::json_line(&mut out, &sjournal::report::line(&list))?;
            } else {
                // The values as they were stored.
                for i in &state.primitives.lists[&name].items {
                    output::json_line(&mut out, &i.value)?;
                }
            }
        }
    }
    Ok(Outcome::Ok)
}

fn seq_line(a: &sjournal::journal::Appended) -> String {
    sjournal::report::line(&sjournal::report::SeqLine { seq: a.seq })
}
