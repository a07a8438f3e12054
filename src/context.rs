//! Session context: channels of text that hook authors set, and the renderer that turns the
//! folded state into the text injected into the model's context.
//!
//! Channels follow the OpenCode lifecycle-hook proposal (anomalyco/opencode#28695):
//!
//! - `persistent` entries are keyed, stay until cleared and survive compaction;
//! - `at-stop` entries are what a hook produces for the end of the turn: when the turn ends
//!   (Stop), each replaces the persistent entry of the same key;
//! - `ephemeral` entries hold for this turn only: they are dropped when the turn ends (Stop,
//!   StopFailure, SessionEnd).
//!
//! [`render`] is a pure function of the state: the same state always gives the same text.
//! Sections, most important first: persistent entries, this turn's entries, the current task
//! (the latest prompt), the files changed this session, open tool calls, and a line of counts
//! (turns, compactions, tool calls). When the text exceeds the budget, parts are left out
//! from the least important up: open tool calls (oldest first), the counts, files (least
//! recently changed first), the task (cut, then left out), ephemeral then persistent entries
//! (last key first; the last one left is cut rather than dropped). What was left out is
//! listed in [`Rendered::dropped`] and a closing line says the text was shortened.

use crate::fold::State;
use crate::limits::CONTEXT_BUDGET_DEFAULT_CHARS;

/// A context channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    Persistent,
    Ephemeral,
    AtStop,
}

impl Channel {
    pub const ALL: [Channel; 3] = [Channel::Persistent, Channel::Ephemeral, Channel::AtStop];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Persistent => "persistent",
            Channel::Ephemeral => "ephemeral",
            Channel::AtStop => "at-stop",
        }
    }

    pub fn from_name(s: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Most characters (Unicode scalar values) the text may have.
    pub budget_chars: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            budget_chars: CONTEXT_BUDGET_DEFAULT_CHARS,
        }
    }
}

/// The text to inject, and what was left out to fit the budget.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Rendered {
    pub text: String,
    /// Parts were left out or cut.
    pub truncated: bool,
    /// What was left out or cut, in the order it happened (`files: src/a.rs`, `task: cut`).
    pub dropped: Vec<String>,
    /// Length of `text` in characters.
    pub chars: usize,
}

/// Files and open calls listed at most; the rest are summed up in one line.
const FILES_SHOWN_MAX: usize = 40;
const OPEN_CALLS_SHOWN_MAX: usize = 20;
/// A part is cut rather than dropped only if at least this much of it fits.
const MIN_CUT_CHARS: usize = 40;

struct Section {
    id: &'static str,
    title: &'static str,
    /// Most important first; dropping pops from the end.
    items: Vec<(String, String)>,
    /// Items may be cut to fit instead of dropped.
    cuttable: bool,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn sections(state: &State) -> Vec<Section> {
    let entries = |m: &std::collections::BTreeMap<String, crate::fold::Entry>| {
        m.iter()
            .map(|(k, e)| (k.clone(), format!("[{k}] {}", e.text.trim_end())))
            .collect::<Vec<_>>()
    };
    let task = state
        .prompts
        .back()
        .map(|p| vec![("task".to_owned(), p.text.trim().to_owned())])
        .unwrap_or_default();
    let mut changed: Vec<(&String, &crate::fold::FileStats)> = state
        .files
        .by_path
        .iter()
        .filter(|(_, f)| f.changed())
        .collect();
    changed.sort_by(|a, b| {
        b.1.last_change_seq
            .cmp(&a.1.last_change_seq)
            .then(a.0.cmp(b.0))
    });
    let mut files: Vec<(String, String)> = changed
        .iter()
        .take(FILES_SHOWN_MAX)
        .map(|(p, f)| {
            let mut what = Vec::new();
            if f.edits > 0 {
                what.push(format!(
                    "{} edit{}",
                    f.edits,
                    if f.edits == 1 { "" } else { "s" }
                ));
            }
            if f.writes > 0 {
                what.push(format!(
                    "{} write{}",
                    f.writes,
                    if f.writes == 1 { "" } else { "s" }
                ));
            }
            ((*p).clone(), format!("- {p} ({})", what.join(", ")))
        })
        .collect();
    if changed.len() > FILES_SHOWN_MAX {
        let more = changed.len() - FILES_SHOWN_MAX;
        files.push(("more".to_owned(), format!("- and {more} more")));
    }
    let mut open: Vec<&crate::fold::OpenCall> = state.tools.open.values().collect();
    open.sort_by_key(|c| std::cmp::Reverse(c.seq));
    let calls = open
        .iter()
        .take(OPEN_CALLS_SHOWN_MAX)
        .map(|c| {
            let line = match &c.detail {
                Some(d) => format!("- {}: {d}", c.tool),
                None => format!("- {}", c.tool),
            };
            (c.tool.clone(), line)
        })
        .collect();
    vec![
        Section {
            id: "persistent",
            title: "## Session notes",
            items: entries(&state.context.persistent),
            cuttable: true,
        },
        Section {
            id: "ephemeral",
            title: "## This turn",
            items: entries(&state.context.ephemeral),
            cuttable: true,
        },
        Section {
            id: "task",
            title: "## Current task",
            items: task,
            cuttable: true,
        },
        Section {
            id: "files",
            title: "## Files changed this session",
            items: files,
            cuttable: false,
        },
        Section {
            id: "open-tool-calls",
            title: "## Tool calls in progress",
            items: calls,
            cuttable: false,
        },
        Section {
            id: "counts",
            title: "## Session",
            items: counts(state),
            cuttable: false,
        },
    ]
}

fn counts(state: &State) -> Vec<(String, String)> {
    if state.counts.events == 0 {
        return Vec::new();
    }
    let mut line = format!("turns: {}", state.turns.count);
    line.push_str(&format!(", compactions: {}", state.compactions.count));
    if let Some(t) = state
        .compactions
        .last
        .as_ref()
        .and_then(|c| c.trigger.as_ref())
    {
        line.push_str(&format!(" (last {t})"));
    }
    line.push_str(&format!(", tool calls: {}", state.tools.calls));
    if state.tools.failures > 0 {
        line.push_str(&format!(" ({} failed)", state.tools.failures));
    }
    if state.subagents.started > 0 {
        line.push_str(&format!(", subagents: {}", state.subagents.started));
    }
    vec![("counts".to_owned(), line)]
}

/// Order in which sections give up items when over budget.
const DROP_ORDER: [&str; 6] = [
    "open-tool-calls",
    "counts",
    "files",
    "task",
    "ephemeral",
    "persistent",
];

fn section_len(s: &Section) -> usize {
    if s.items.is_empty() {
        return 0;
    }
    chars(s.title) + s.items.iter().map(|(_, t)| 1 + chars(t)).sum::<usize>()
}

fn marker(budget: usize, dropped: usize) -> String {
    format!("[sjournal: {dropped} part(s) left out or cut to fit {budget} characters]")
}

fn total_len(lens: &[usize], marker: Option<&str>) -> usize {
    let parts: Vec<usize> = lens
        .iter()
        .copied()
        .filter(|&l| l > 0)
        .chain(marker.map(chars))
        .collect();
    parts.iter().sum::<usize>() + 2 * parts.len().saturating_sub(1)
}

/// Renders the context to inject for `state`.
pub fn render(state: &State, opts: &RenderOptions) -> Rendered {
    let budget = opts.budget_chars;
    let mut secs = sections(state);
    let mut lens: Vec<usize> = secs.iter().map(section_len).collect();
    let mut dropped = Vec::new();
    if total_len(&lens, None) > budget {
        'shrink: for id in DROP_ORDER {
            let i = secs.iter().position(|s| s.id == id).expect("known id");
            while !secs[i].items.is_empty() {
                if !dropped.is_empty()
                    && total_len(&lens, Some(&marker(budget, dropped.len()))) <= budget
                {
                    break 'shrink;
                }
                // Over budget even with the marker as it will read after this step.
                let total = total_len(&lens, Some(&marker(budget, dropped.len() + 1)));
                let s = &mut secs[i];
                let (name, text) = s.items.last().cloned().expect("not empty");
                let over = total.saturating_sub(budget);
                let keep = chars(&text).saturating_sub(over + 1);
                let what = if name == id {
                    id.to_owned()
                } else {
                    format!("{id}: {name}")
                };
                if s.cuttable && keep >= MIN_CUT_CHARS {
                    let cut: String = text.chars().take(keep).collect();
                    s.items.last_mut().expect("not empty").1 = format!("{cut}…");
                    dropped.push(format!("{what} (cut)"));
                } else {
                    s.items.pop();
                    dropped.push(what);
                }
                lens[i] = section_len(&secs[i]);
            }
        }
    }
    let mut parts: Vec<String> = secs
        .iter()
        .filter(|s| !s.items.is_empty())
        .map(|s| {
            let mut t = s.title.to_owned();
            for (_, item) in &s.items {
                t.push('\n');
                t.push_str(item);
            }
            t
        })
        .collect();
    if !dropped.is_empty() {
        parts.push(marker(budget, dropped.len()));
    }
    let mut text = parts.join("\n\n");
    if chars(&text) > budget {
        // Only when the budget cannot hold even the marker.
        text = text.chars().take(budget).collect();
        dropped.push("all: cut to the budget".to_owned());
    }
    Rendered {
        chars: chars(&text),
        truncated: !dropped.is_empty(),
        dropped,
        text,
    }
}
