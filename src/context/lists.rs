//! The full lists the recovery block points to (`sjournal show --session ID [prompts|todos|
//! failures|files|agents]`): what the block had to leave out or cut, in full, for the agent
//! to fetch on demand. Everything but the prompts comes from the folded state; the prompts
//! are read from the journal itself (the state keeps only the latest few). The JSON form of
//! each list is its type here.

use serde::Serialize;

use super::text::{clean, relative};
use crate::error::Result;
use crate::event::Event;
use crate::fold::{instructions, Failure, State};
use crate::format::payload::{decode_event, is_system_kind};
use crate::journal::JournalReader;

/// The lists `show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum List {
    Prompts,
    Todos,
    Failures,
    Files,
    Agents,
}

impl List {
    pub const ALL: [List; 5] = [
        List::Prompts,
        List::Todos,
        List::Failures,
        List::Files,
        List::Agents,
    ];
}

/// A prompt of the session, with the sentences the instruction rule picks from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptEntry {
    pub seq: u64,
    /// 1 for the session's first prompt.
    pub turn: u64,
    pub text: String,
    pub instructions: Vec<String>,
}

/// Every prompt of the journal `reader` reads, in order: the prompts that opened a turn of the
/// session as the fold counts them (the same events, the same turn numbers as `state`: a
/// Gemini CLI AfterAgent repeats its prompt and opens none; a prompt the host generated, or a
/// subagent's task, is none), each as its user wrote it, in full.
pub fn prompts(reader: &JournalReader) -> Result<Vec<PromptEntry>> {
    let mut out = Vec::new();
    let mut state = State::new();
    for rec in reader.records()? {
        let Ok(rec) = rec else { break };
        let view = crate::fold::RecordView::from(&rec);
        if is_system_kind(rec.kind) {
            state.apply(&view);
            continue;
        }
        // The prompt as the state before the event reads it (the fold's own rule).
        let text = decode_event(rec.seq, rec.payload).ok().and_then(|raw| {
            let raw = crate::event::lenient::text(raw);
            let e = Event::parse(rec.kind, &raw);
            state.user_prompt(&e).map(clean)
        });
        state.apply(&view);
        let (Some(text), true) = (text, state.turns.last_prompt_seq == Some(rec.seq)) else {
            continue;
        };
        out.push(PromptEntry {
            seq: rec.seq,
            turn: state.turns.count,
            instructions: instructions::instructions(&text)
                .into_iter()
                .map(str::to_owned)
                .collect(),
            text,
        });
    }
    Ok(out)
}

/// The todo list and the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Todos<'a> {
    pub todos: &'a crate::fold::Todos,
    pub plan: Option<&'a crate::fold::Plan>,
}

pub fn todos(state: &State) -> Todos<'_> {
    Todos {
        todos: &state.todos,
        plan: state.plan.as_ref(),
    }
}

/// Failures, newest first.
pub fn failures(state: &State) -> Vec<&Failure> {
    state.failures.items.iter().rev().collect()
}

/// A changed file, its path relative to the project.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileEntry<'a> {
    pub path: &'a str,
    #[serde(flatten)]
    pub stats: &'a crate::fold::FileStats,
}

/// Changed files, most recent change first; and how many were only read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Files<'a> {
    pub changed: Vec<FileEntry<'a>>,
    pub only_read: usize,
    /// Files the state forgot to stay bounded.
    pub forgotten: u64,
    pub shell_mutations: u64,
}

pub fn files(state: &State) -> Files<'_> {
    let project = state.identity.project_dir.as_deref();
    let mut changed: Vec<FileEntry> = state
        .files
        .by_path
        .iter()
        .filter(|(_, f)| f.changed())
        .map(|(p, f)| FileEntry {
            path: relative(p, project),
            stats: f,
        })
        .collect();
    changed.sort_by(|a, b| {
        b.stats
            .last_change_seq
            .cmp(&a.stats.last_change_seq)
            .then(a.path.cmp(b.path))
    });
    Files {
        only_read: state.files.by_path.len() - changed.len(),
        changed,
        forgotten: state.files.forgotten,
        shell_mutations: state.files.shell_mutations,
    }
}

/// A subagent by id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentEntry<'a> {
    pub id: &'a str,
    pub running: bool,
    #[serde(flatten)]
    pub agent: &'a crate::fold::Subagent,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agents<'a> {
    pub subagents: Vec<AgentEntry<'a>>,
    pub background: &'a [crate::fold::Background],
}

pub fn agents(state: &State) -> Agents<'_> {
    let mut subagents: Vec<AgentEntry> = state
        .subagents
        .by_id
        .iter()
        .map(|(id, a)| AgentEntry {
            id,
            running: a.start_seq.is_some() && a.stop_seq.is_none(),
            agent: a,
        })
        .collect();
    subagents.sort_by_key(|a| (a.agent.start_seq.or(a.agent.stop_seq), a.id));
    Agents {
        subagents,
        background: &state.background,
    }
}
