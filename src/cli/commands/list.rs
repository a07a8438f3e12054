//! `sjournal list push|show|clear --session ID NAME`: bounded lists of JSON items.
//!
//! `push NAME VALUE [--max N]` appends one JSON value; the list keeps its last N items
//! (default 100, at most 1000). `show` prints the items oldest first, one JSON value per line
//! (`--json`: `{"name", "max", "pushed", "items": [{"seq", "value"}]}`).

use serde_json::json;

use crate::cli::commands::state::load;
use crate::cli::{output, Outcome};
use crate::error::Result;
use crate::journal::Root;
use crate::primitives;

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
        name: String,
        #[arg(long)]
        json: bool,
    },
    Clear {
        #[command(flatten)]
        target: crate::cli::target::Target,
        name: String,
    },
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let mut out = output::stdout();
    let opts = crate::cli::writer_options(root);
    match args.action {
        Action::Push {
            target,
            name,
            value,
            max,
        } => {
            let session = target.id()?;
            let landed = primitives::list_push(root, &session, &name, &value, max, &opts)?;
            return crate::cli::print_landed(&mut out, root, &session, &landed, seq_line);
        }
        Action::Clear { target, name } => {
            let session = target.id()?;
            let landed = primitives::list_clear(root, &session, &name, &opts)?;
            return crate::cli::print_landed(&mut out, root, &session, &landed, seq_line);
        }
        Action::Show { target, name, json } => {
            let session = target.id()?;
            let (state, _) = load(root, &session, None, true)?;
            let Some(list) = state.primitives.lists.get(&name) else {
                output::warn(&format!(
                    "sjournal: list {name:?} of session {session:?} is empty"
                ));
                return Ok(Outcome::Findings);
            };
            let value = |t: &str| serde_json::from_str(t).unwrap_or(serde_json::Value::Null);
            if json {
                let items: Vec<_> = list
                    .items
                    .iter()
                    .map(|i| json!({"seq": i.seq, "value": value(&i.value)}))
                    .collect();
                let v =
                    json!({"name": name, "max": list.max, "pushed": list.pushed, "items": items});
                output::json_line(&mut out, &v.to_string())?;
            } else {
                for i in &list.items {
                    output::json_line(&mut out, &i.value)?;
                }
            }
        }
    }
    Ok(Outcome::Ok)
}

fn seq_line(a: &crate::journal::Appended) -> String {
    json!({"seq": a.seq}).to_string()
}
