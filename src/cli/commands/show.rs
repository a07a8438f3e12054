//! `sjournal show --session ID [prompts|todos|failures|files|agents]... [--json]`: the full
//! lists the injected context points to when it had to leave things out (every prompt with
//! the standing instructions picked from it, the todo list and plan, failures with their
//! error lines and fixes, every changed file with its line counts, subagents and background
//! work). No list named: all of them, and last what redaction at ingest replaced in the
//! session's events, if anything (`sjournal redact --session ID` lists each).
//!
//! `--json` prints one object: `{"session", "seq", "prompts"?: [..], "todos"?: {..},
//! "failures"?: [..], "files"?: {..}, "agents"?: {..}, "redacted"?: {..}}`, each list in
//! the form `context::lists` defines.
//!
//! `sjournal show --session ID --seq N [--context K] [--rescue] [--json]` prints the record
//! seq N (a search hit's) and K records either side (`show_record`).

use std::io::Write;

use crate::cli::shared::load;
use crate::cli::{output, Outcome};
use sjournal::context::lists::{self, List};
use sjournal::context::text::{code, one_line};
use sjournal::error::Result;
use sjournal::journal::{JournalReader, Root};

/// Print a session's full lists: prompts, todos, failures, files, agents
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// The lists to print (default: all)
    #[arg(value_enum)]
    pub lists: Vec<ListArg>,
    /// Print JSON (one object per line) instead of text
    #[arg(long)]
    pub json: bool,
    /// Print the record with this seq and its neighbours instead of lists
    #[arg(long, value_name = "N", conflicts_with = "lists")]
    pub seq: Option<u64>,
    /// With --seq: how many records either side
    #[arg(long, value_name = "K", default_value_t = 3, requires = "seq")]
    pub context: u64,
    /// With --seq: the session's rescue journal
    #[arg(long, requires = "seq")]
    pub rescue: bool,
}

/// [`List`] on the command line (the library's types carry no clap derives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListArg {
    Prompts,
    Todos,
    Failures,
    Files,
    Agents,
}

impl From<ListArg> for List {
    fn from(l: ListArg) -> List {
        match l {
            ListArg::Prompts => List::Prompts,
            ListArg::Todos => List::Todos,
            ListArg::Failures => List::Failures,
            ListArg::Files => List::Files,
            ListArg::Agents => List::Agents,
        }
    }
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    if let Some(seq) = args.seq {
        return super::show_record::run(root, &args, seq);
    }
    // Loading merges the session's pending spool first (see `cli::pending`).
    let (state, _) = load(root, &args.session, None, true)?;
    let paths = root.existing_session(&args.session)?;
    let mut wanted: Vec<List> = args.lists.iter().copied().map(List::from).collect();
    let all = wanted.is_empty();
    if wanted.is_empty() {
        wanted = List::ALL.to_vec();
    }
    wanted.sort();
    wanted.dedup();
    let prompts = if wanted.contains(&List::Prompts) {
        // The reader holds a shared lock while it lives: only for this scan.
        let reader = JournalReader::open(&paths.journal, None)?;
        lists::prompts(&reader)?
    } else {
        Vec::new()
    };
    let redacted = all
        .then(|| sjournal::redact::Summary::of_state(&state))
        .flatten();
    let mut out = output::stdout();
    if args.json {
        // `wanted` is sorted: the lists come in the order `ShowLists` declares them.
        let has = |l: List| wanted.contains(&l);
        let v = sjournal::report::ShowLists {
            session: &args.session,
            seq: state.seq,
            prompts: has(List::Prompts).then_some(&prompts[..]),
            todos: has(List::Todos).then(|| lists::todos(&state)),
            failures: has(List::Failures).then(|| lists::failures(&state)),
            files: has(List::Files).then(|| lists::files(&state)),
            agents: has(List::Agents).then(|| lists::agents(&state)),
            redacted: redacted.clone(),
        };
        output::json_line(&mut out, &sjournal::report::line(&v))?;
    } else {
        let mut first = true;
        for l in &wanted {
            if !first {
                output::line(&mut out, "")?;
            }
            first = false;
            let lines = match l {
                List::Prompts => prompt_lines(&prompts),
                List::Todos => todo_lines(&state),
                List::Failures => failure_lines(&state),
                List::Files => file_lines(&state),
                List::Agents => agent_lines(&state),
            };
            for line in lines {
                output::line(&mut out, &line)?;
            }
        }
        if let Some(r) = &redacted {
            output::line(&mut out, "")?;
            output::line(
                &mut out,
                &format!(
                    "Redacted ({}; `{}` lists them)",
                    r.counts(),
                    sjournal::redact::redact_command(&args.session)
                ),
            )?;
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}

fn prompt_lines(prompts: &[lists::PromptEntry]) -> Vec<String> {
    let mut v = vec![format!("Prompts ({})", prompts.len())];
    for p in prompts {
        v.push(format!("  turn {} (seq {}):", p.turn, p.seq));
        v.extend(p.text.lines().map(|l| format!("    {l}")));
        for i in &p.instructions {
            v.push(format!("    standing instruction: {}", one_line(i)));
        }
    }
    v
}

fn todo_lines(state: &sjournal::fold::State) -> Vec<String> {
    let t = lists::todos(state);
    let mut v = vec![match &t.todos.tool {
        Some(tool) => format!(
            "Todos ({}, last changed by {tool} at turn {}, seq {})",
            t.todos.items.len(),
            t.todos.turn,
            t.todos.seq
        ),
        None => "Todos (none)".to_owned(),
    }];
    for i in &t.todos.items {
        let mark = match i.status.as_str() {
            "completed" => "[x]",
            "in_progress" => "[>]",
            "cancelled" => "[-]",
            _ => "[ ]",
        };
        let id =
            i.id.as_deref()
                .map(|i| format!("#{i} "))
                .unwrap_or_default();
        v.push(format!("  {mark} {id}{}", one_line(&i.text)));
    }
    if let Some(p) = t.plan {
        let answer = match p.approved {
            Some(true) => "approved",
            Some(false) => "refused",
            None => "not answered",
        };
        v.push(format!("Plan (turn {}, seq {}, {answer}):", p.turn, p.seq));
        v.extend(p.head.lines().map(|l| format!("    {l}")));
    }
    v
}

fn failure_lines(state: &sjournal::fold::State) -> Vec<String> {
    let all = lists::failures(state);
    let open = all.iter().filter(|f| f.resolved.is_none()).count();
    let mut v = vec![format!(
        "Failures ({open} unresolved, {} fixed{})",
        all.len() - open,
        if state.failures.forgotten > 0 {
            format!(", {} older forgotten", state.failures.forgotten)
        } else {
            String::new()
        }
    )];
    for f in all {
        let exit = f
            .exit_code
            .map(|c| format!("exit {c}"))
            .unwrap_or_else(|| "failed".into());
        v.push(format!(
            "  {} {} → {exit}, {}× (first seq {}, last seq {}, turn {})",
            one_line(&f.tool),
            code(&f.detail, 400),
            f.count,
            f.first_seq,
            f.seq,
            f.turn
        ));
        for l in &f.error_tail {
            v.push(format!("      {}", one_line(l)));
        }
        if let Some(r) = &f.resolved {
            let with = r
                .variant
                .as_deref()
                .map(|x| format!(" with {}", code(x, 400)))
                .unwrap_or_default();
            v.push(format!(
                "      fixed: passed at turn {} (seq {}){with}",
                r.turn, r.seq
            ));
        }
    }
    v
}

fn file_lines(state: &sjournal::fold::State) -> Vec<String> {
    let f = lists::files(state);
    let mut v = vec![format!(
        "Files changed ({}; {} only read{})",
        f.changed.len(),
        f.only_read,
        if f.forgotten > 0 {
            format!("; {} forgotten", f.forgotten)
        } else {
            String::new()
        }
    )];
    for e in &f.changed {
        let s = e.stats;
        let size = if s.unsized_changes > 0 {
            format!(
                "+{} -{} (+ {} of unknown size)",
                s.added, s.removed, s.unsized_changes
            )
        } else {
            format!("+{} -{}", s.added, s.removed)
        };
        v.push(format!(
            "  {}  {}, {} edits, {} writes, {size}, last change seq {}",
            e.path,
            if s.created { "created" } else { "modified" },
            s.edits,
            s.writes,
            s.last_change_seq
        ));
    }
    if f.shell_mutations > 0 {
        v.push(format!(
            "  (+ {} shell commands changed files in ways not tracked here)",
            f.shell_mutations
        ));
    }
    v
}

fn agent_lines(state: &sjournal::fold::State) -> Vec<String> {
    let a = lists::agents(state);
    let mut v = vec![format!("Subagents ({})", a.subagents.len())];
    for e in &a.subagents {
        let ag = e.agent;
        v.push(format!(
            "  {} {} {}{} (turn {}, {} tool calls)",
            if e.running { "running " } else { "finished" },
            ag.agent_type.as_deref().unwrap_or("agent"),
            e.id,
            ag.description
                .as_deref()
                .map(|d| format!(": {}", one_line(d)))
                .unwrap_or_default(),
            ag.turn,
            ag.tool_calls
        ));
        if let Some(r) = &ag.result {
            v.push(format!("      result: {}", one_line(r)));
        }
    }
    if !a.background.is_empty() {
        v.push(format!(
            "Background tasks at the last stop ({})",
            a.background.len()
        ));
        for b in a.background {
            v.push(format!(
                "  {} {} {}: {}",
                b.status,
                b.kind,
                b.id,
                one_line(&b.description)
            ));
        }
    }
    v
}
