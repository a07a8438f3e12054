//! `sjournal slot get|set --session ID NAME`: typed JSON slots with compare-and-set.
//!
//! `get` prints `{"name", "value": <JSON>, "type", "seq"}` (exit 1 if the slot is empty).
//! `set NAME VALUE [--expect-seq N] [--type T]` writes VALUE (one JSON value); with
//! `--expect-seq` only if the slot was last set by record N (0: the slot must be empty),
//! checked under the session's lock. A conflict exits 1 and says what the slot's seq is.
//! Prints `{"seq": N}`: the seq to expect next time.

use crate::cli::shared::load;
use crate::cli::{output, Outcome};
use sjournal::error::{Error, Result};
use sjournal::journal::Root;
use sjournal::primitives;
use sjournal::report::SlotValue;

/// Read or write a typed JSON slot (compare-and-set on the seq that last set it)
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    Get {
        #[command(flatten)]
        target: crate::cli::target::Target,
        /// The slot's name
        name: String,
    },
    Set {
        #[command(flatten)]
        target: crate::cli::target::Target,
        /// The slot's name
        name: String,
        /// One JSON value, e.g. '{"step":2}', '"text"', 3
        value: String,
        /// Write only if the slot was last set by this seq (0: only if empty)
        #[arg(long, value_name = "SEQ")]
        expect_seq: Option<u64>,
        /// Require a JSON type: object, array, string, number, boolean, null
        #[arg(long = "type", value_name = "TYPE")]
        json_type: Option<String>,
    },
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let mut out = output::stdout();
    match args.action {
        Action::Get { target, name } => {
            let session = target.id()?;
            let (state, _) = load(root, &session, None, true)?;
            let Some(slot) = SlotValue::of(&state, &name) else {
                output::warn(&format!(
                    "sjournal: slot {name:?} of session {session:?} is empty"
                ));
                return Ok(Outcome::Findings);
            };
            output::json_line(&mut out, &sjournal::report::line(&slot))?;
        }
        Action::Set {
            target,
            name,
            value,
            expect_seq,
            json_type,
        } => {
            let session = target.id()?;
            let a = primitives::slot_set(
                root,
                &session,
                &name,
                &value,
                expect_seq,
                json_type.as_deref(),
                &crate::cli::shared::writer_options(root),
            );
            match a {
                Ok(landed) => {
                    return crate::cli::shared::print_landed(
                        &mut out,
                        root,
                        &session,
                        &landed,
                        |a| sjournal::report::line(&sjournal::report::SeqLine { seq: a.seq }),
                    )
                }
                Err(e @ Error::Conflict { .. }) => {
                    crate::cli::shared::report_error(&e);
                    return Ok(Outcome::Findings);
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(Outcome::Ok)
}
