//! `sjournal memory propose|list|show|accept|reject|edit|forget|review`: reviewable memory
//! across sessions, kept in the project's or the global scope journal (`sjournal::memory`).
//!
//! Only accepted items are ever injected (at startup, clear and compact, ≤ 600 chars under
//! "## Project memory (reviewed)"); proposals wait here for a person.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use crate::cli::{output, Outcome};
use sjournal::error::{Error, Result};
use sjournal::fold::State;
use sjournal::journal::Root;
use sjournal::limits::MEMORY_TEXT_MAX_BYTES;
use sjournal::memory::ops::{self, Applied};
use sjournal::memory::{Item, Scope};
use sjournal::report::MemoryItem;
use sjournal::snapshot::LoadOptions;

/// Reviewable memory across sessions: propose, review, accept, reject, edit, forget
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Items live in the project's scope journal (project = --project, else $CLAUDE_PROJECT_DIR, else
the git root above the current directory, else the current directory) or the global one
(--scope global). Ids may be shortened to any unique prefix.

Only ACCEPTED items reach the model: at SessionStart (startup, clear, compact), newest first,
at most 600 characters under \"## Project memory (reviewed)\". Proposals (from the standing
instructions a session gave, a failing command a session then got to pass with another variant,
or `memory propose`) are never injected; the user is told at
session start how many await review; `review` shows the ones seen in the most sessions first.
A prompt the user typed in a main session that starts with \"remember:\" is accepted as said
into the project, \"remember globally:\" into the global scope; the same words in a prompt the
user did not type (a subagent's task, a scheduled job, another sender, the host's own) are only
proposed, in the project (source \"relayed\"). Rejected or forgotten text is never proposed again.

Exit codes: 0 done; 1 refused by an item's state (text rejected or forgotten before, an item
that cannot take the change) or the write was kept aside (spooled) instead of journaled; 2 bad
input (an empty, unknown or ambiguous id, empty or too long text, an unknown --status or
--scope): nothing was changed.")]
pub struct Args {
    /// project or global
    #[arg(long, global = true, default_value = "project")]
    pub scope: String,
    /// The project directory [default: $CLAUDE_PROJECT_DIR, else the git root of the cwd]
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print JSON
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Propose an item for review (agents, hooks, the at-stop channel)
    Propose {
        /// The text of the item
        text: String,
        /// The session it comes from
        #[arg(long)]
        session: Option<String>,
        /// The seq of the record it comes from in that session
        #[arg(long, requires = "session")]
        seq: Option<u64>,
        /// The verbatim quote it comes from [default: the text]
        #[arg(long)]
        quote: Option<String>,
    },
    /// List items (pending and accepted; --all for every status)
    List {
        /// Every item, whatever its status
        #[arg(long)]
        all: bool,
        /// Only items of this status
        #[arg(long, value_parser = STATUSES)]
        status: Option<String>,
    },
    /// Show one item with its provenance
    Show {
        /// The item's id (a unique prefix will do)
        id: String,
    },
    /// Accept items: they are injected from the next session start on
    Accept {
        /// The items' ids (unique prefixes will do)
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Reject items: never injected, never proposed again
    Reject {
        /// The items' ids (unique prefixes will do)
        #[arg(required = true)]
        ids: Vec<String>,
        /// Why: kept with the rejection
        #[arg(long)]
        reason: Option<String>,
    },
    /// Replace an item's text (accepting it)
    Edit {
        /// The item's id (a unique prefix will do)
        id: String,
        /// The item's new text
        text: String,
    },
    /// Forget items: no longer injected, never proposed again
    Forget {
        /// The items' ids (unique prefixes will do)
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Review pending items one by one (a/r/e/s/q); without a terminal, list them with the
    /// commands that settle each
    Review,
}

/// Every status an item can have (`--status`).
const STATUSES: [&str; 5] = ["proposed", "accepted", "rejected", "forgotten", "stale"];

/// An op the memory's rules refused (the item's state, not the input): exit 1, said on stderr.
struct Refused(String);

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let flag = args.project.clone();
    let scope = Scope::parse(&args.scope, || crate::cli::target::project_dir(flag))?;
    let opts = crate::cli::shared::writer_options(root);
    let state = || ops::load(root, &scope, &LoadOptions::latest());
    let mut out = output::stdout();
    let json = args.json;
    let r = (|| -> Result<std::result::Result<Outcome, Refused>> {
        let mut outcome = Outcome::Ok;
        match args.action {
            Action::Propose {
                text,
                session,
                seq,
                quote,
            } => {
                check_text(&text, "the text to propose")?;
                if session.as_deref().is_some_and(|s| s.trim().is_empty()) {
                    return Err(bad_input(
                        "--session is empty: pass the id of the session the item comes from, or \
                         leave --session out",
                    ));
                }
                let quote = quote.unwrap_or_else(|| text.clone());
                let op = ops::propose(&text, "explicit", session.as_deref(), seq, Some(&quote));
                let id = op.id.clone();
                let a = match refusal(ops::apply_one(root, &scope, op, &opts))? {
                    Ok(a) => a,
                    Err(r) => return Ok(Err(r)),
                };
                let status = a.state.memory.items.get(&id).map(|i| i.status.as_str());
                let written = a.landed.is_some();
                if json {
                    let v = sjournal::report::MemoryProposed {
                        id: &id,
                        status,
                        written,
                        scope: scope.name(),
                    };
                    output::json_line(&mut out, &sjournal::report::line(&v))?;
                } else {
                    let how = if written { "proposed" } else { "already known" };
                    output::line(
                        &mut out,
                        &format!("{id} {how} ({})", status.unwrap_or_default()),
                    )?;
                }
                outcome = warn_landed(&a);
            }
            Action::List { all, status } => {
                let st = state()?;
                let items: Vec<&Item> = st
                    .memory
                    .items
                    .values()
                    .filter(|i| match &status {
                        Some(s) => &i.status == s,
                        None => {
                            all || matches!(i.status.as_str(), "proposed" | "stale" | "accepted")
                        }
                    })
                    .collect();
                if json {
                    let v = sjournal::report::MemoryList {
                        scope: scope.name(),
                        journal: scope.journal_id(),
                        pending: st.memory.pending(),
                        items: items.into_iter().map(MemoryItem::from).collect(),
                    };
                    output::json_line(&mut out, &sjournal::report::line(&v))?;
                } else if items.is_empty() {
                    output::line(&mut out, &format!("no {} memory items", scope.name()))?;
                } else {
                    for i in items {
                        output::line(&mut out, &summary(i))?;
                    }
                }
            }
            Action::Show { id } => {
                let st = state()?;
                let i = find(&st, &id)?;
                if json {
                    output::json_line(&mut out, &sjournal::report::line(&MemoryItem::from(i)))?;
                } else {
                    output::line(&mut out, &evidence(i))?;
                }
            }
            Action::Accept { ids } => {
                return settle(root, &scope, &opts, "accept", &ids, None, json, &mut out)
            }
            Action::Reject { ids, reason } => {
                return settle(
                    root,
                    &scope,
                    &opts,
                    "reject",
                    &ids,
                    reason.as_deref(),
                    json,
                    &mut out,
                )
            }
            Action::Forget { ids } => {
                return settle(root, &scope, &opts, "forget", &ids, None, json, &mut out)
            }
            Action::Edit { id, text } => {
                check_text(&text, "the new text")?;
                let full = find(&state()?, &id)?.id.clone();
                let op = ops::on_item("edit", &full, Some(&text), None);
                let a = match refusal(ops::apply_one(root, &scope, op, &opts))? {
                    Ok(a) => a,
                    Err(r) => return Ok(Err(r)),
                };
                let i = a.state.memory.items.get(&full);
                if json {
                    if let Some(i) = i {
                        output::json_line(&mut out, &sjournal::report::line(&MemoryItem::from(i)))?;
                    }
                } else if let Some(i) = i {
                    output::line(&mut out, &summary(i))?;
                }
                outcome = warn_landed(&a);
            }
            Action::Review => return review(root, &scope, &opts, json, &mut out).map(Ok),
        }
        Ok(Ok(outcome))
    })();
    // Bad input is an error (exit 2, nothing changed); a refusal by the memory's rules is
    // exit 1, said on stderr.
    match r? {
        Ok(outcome) => Ok(outcome),
        Err(Refused(reason)) => {
            output::warn(&format!("sjournal: refused: {reason}"));
            Ok(Outcome::Findings)
        }
    }
}

fn bad_input(reason: impl Into<String>) -> Error {
    Error::InvalidInput {
        reason: reason.into(),
    }
}

/// An op's result: the refusals of the memory's rules (an `InvalidInput` from `ops::apply_one`,
/// whose inputs were checked before) apart from real errors.
fn refusal(r: Result<Applied>) -> Result<std::result::Result<Applied, Refused>> {
    match r {
        Ok(a) => Ok(Ok(a)),
        Err(Error::InvalidInput { reason }) => Ok(Err(Refused(reason))),
        Err(e) => Err(e),
    }
}

/// An item's text must say something and fit the limit: bad input otherwise.
fn check_text(text: &str, what: &str) -> Result<()> {
    let t = text.trim();
    if t.is_empty() {
        return Err(bad_input(format!(
            "{what} is empty: pass the text of the item, e.g. \
             `sjournal memory propose \"run make check before finishing\"`"
        )));
    }
    if t.len() > MEMORY_TEXT_MAX_BYTES {
        return Err(bad_input(format!(
            "{what} is {} bytes; an item holds at most {MEMORY_TEXT_MAX_BYTES}: shorten it",
            t.len()
        )));
    }
    Ok(())
}

/// The item whose id is `prefix` or starts with it (exactly one). An empty selector, one that
/// names no item or several is bad input: nothing is done with a guess.
fn find<'a>(st: &'a State, prefix: &str) -> Result<&'a Item> {
    if prefix.trim().is_empty() {
        return Err(bad_input(
            "an empty id selects nothing: pass an item's id, or a unique prefix of it, as \
             `sjournal memory list --all` shows it",
        ));
    }
    let hits: Vec<&Item> = st
        .memory
        .items
        .values()
        .filter(|i| i.id.starts_with(prefix))
        .collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(bad_input(format!(
            "no memory item {prefix:?} (see `sjournal memory list --all`, and --scope)"
        ))),
        _ => {
            let ids: Vec<&str> = hits.iter().take(5).map(|i| i.id.as_str()).collect();
            Err(bad_input(format!(
                "{prefix:?} names {} items ({}{}): give more of the id",
                hits.len(),
                ids.join(", "),
                if hits.len() > ids.len() { ", ..." } else { "" }
            )))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn settle(
    root: &Root,
    scope: &Scope,
    opts: &sjournal::journal::WriterOptions,
    op: &str,
    ids: &[String],
    reason: Option<&str>,
    json: bool,
    out: &mut impl Write,
) -> Result<std::result::Result<Outcome, Refused>> {
    let st = ops::load(root, scope, &LoadOptions::latest())?;
    let full: Vec<String> = ids
        .iter()
        .map(|p| find(&st, p).map(|i| i.id.clone()))
        .collect::<Result<_>>()?;
    let list: Vec<_> = full
        .iter()
        .map(|id| ops::on_item(op, id, None, reason))
        .collect();
    let a = ops::apply(root, scope, &list, opts)?;
    for (id, r) in full.iter().zip(&a.results) {
        if let Err(reason) = r {
            return Ok(Err(Refused(format!("{id}: {reason}"))));
        }
    }
    for id in &full {
        let status = a.state.memory.items.get(id).map(|i| i.status.as_str());
        if json {
            let v = sjournal::report::MemoryStatus { id, status };
            output::json_line(out, &sjournal::report::line(&v))?;
        } else {
            output::line(out, &format!("{id} {}", status.unwrap_or("?")))?;
        }
    }
    Ok(Ok(warn_landed(&a)))
}

/// Exit 1 (and a note) when the write went to the spool instead of the journal, as for every
/// write command.
fn warn_landed(a: &Applied) -> Outcome {
    if let Some(l) = &a.landed {
        if !matches!(l, sjournal::session::Landed::Journal { .. }) {
            output::warn("sjournal: the memory journal could not take the write now; it was kept aside and is merged by the next writer");
            return Outcome::Findings;
        }
    }
    Outcome::Ok
}

/// An item as JSON, with `seen_in_sessions`: in how many sessions it was given (its
/// confidence).
/// Pending items, the most confident first (seen in the most sessions), then oldest first.
fn pending_by_confidence(st: &State) -> Vec<&Item> {
    let mut v: Vec<&Item> = st
        .memory
        .items
        .values()
        .filter(|i| matches!(i.status.as_str(), "proposed" | "stale"))
        .collect();
    v.sort_by(|a, b| {
        b.sessions()
            .cmp(&a.sessions())
            .then(a.proposed_seq.cmp(&b.proposed_seq))
            .then(a.id.cmp(&b.id))
    });
    v
}

/// One line per item: id, status, text.
fn summary(i: &Item) -> String {
    let edited = if i.original.is_some() { ", edited" } else { "" };
    let n = i.sessions();
    let seen = if n > 1 {
        format!(", seen in {n} sessions")
    } else {
        String::new()
    };
    format!(
        "{}  {:<9} [{}{edited}{seen}]  {}",
        i.id, i.status, i.source, i.text
    )
}

/// An item with its evidence: where it was said, verbatim.
fn evidence(i: &Item) -> String {
    let mut s = summary(i);
    if let Some(o) = &i.original {
        s.push_str(&format!("\n    first proposed as: {o}"));
    }
    if let Some(r) = &i.reason {
        s.push_str(&format!("\n    reason: {r}"));
    }
    for p in &i.provenance {
        let at = match (&p.session, p.seq) {
            (Some(sess), Some(seq)) => format!("session {sess} seq {seq}"),
            (Some(sess), None) => format!("session {sess}"),
            _ => "given directly".into(),
        };
        match &p.quote {
            Some(q) => s.push_str(&format!("\n    {at}: \"{q}\"")),
            None => s.push_str(&format!("\n    {at}")),
        }
    }
    s
}

fn review(
    root: &Root,
    scope: &Scope,
    opts: &sjournal::journal::WriterOptions,
    json: bool,
    out: &mut impl Write,
) -> Result<Outcome> {
    let st = ops::load(root, scope, &LoadOptions::latest())?;
    let pending = pending_by_confidence(&st);
    if json {
        // Exactly as serialized: JSON is not terminal text to escape.
        let v = sjournal::report::MemoryReview {
            scope: scope.name(),
            pending: pending.into_iter().map(MemoryItem::from).collect(),
        };
        output::json_line(out, &sjournal::report::line(&v))?;
        return Ok(Outcome::Ok);
    }
    if pending.is_empty() {
        output::line(
            out,
            &format!("no {} memory proposals await review", scope.name()),
        )?;
        return Ok(Outcome::Ok);
    }
    let tty = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !tty {
        for i in &pending {
            output::line(out, &evidence(i))?;
            output::line(
                out,
                &format!(
                    "    sjournal memory accept {0} | reject {0} | edit {0} \"<text>\"",
                    i.id
                ),
            )?;
        }
        return Ok(Outcome::Ok);
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    for i in pending {
        output::line(out, &evidence(i))?;
        write!(out, "  [a]ccept [r]eject [e]dit [s]kip [q]uit > ")
            .map_err(|e| Error::io("write", "stdout", e))?;
        out.flush().map_err(|e| Error::io("write", "stdout", e))?;
        let Some(Ok(answer)) = lines.next() else {
            break;
        };
        let op = match answer.trim() {
            "a" => ops::on_item("accept", &i.id, None, None),
            "r" => ops::on_item("reject", &i.id, None, Some("rejected in review")),
            "e" => {
                write!(out, "  new text > ").map_err(|e| Error::io("write", "stdout", e))?;
                out.flush().map_err(|e| Error::io("write", "stdout", e))?;
                let Some(Ok(text)) = lines.next() else { break };
                ops::on_item("edit", &i.id, Some(text.trim()), None)
            }
            "q" => break,
            _ => continue,
        };
        match ops::apply_one(root, scope, op, opts) {
            Ok(a) => {
                let s = a.state.memory.items.get(&i.id).map(|x| x.status.clone());
                output::line(out, &format!("  → {}", s.unwrap_or_default()))?;
            }
            Err(e) => output::line(out, &format!("  not done: {e}"))?,
        }
    }
    Ok(Outcome::Ok)
}
