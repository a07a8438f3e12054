//! The injection policy: per event, what the model already has and
//! what is worth adding. One pure function, [`inject`], from (state after the event's batch,
//! the event, the policy, the caller's extra sections) to the text and its items; the hook,
//! `replay`, `context show` and the demo all call it.
//!
//! | event (source) | mode | injects | budget |
//! |---|---|---|---|
//! | SessionStart `compact` | recovery | the full block, gap-aware against the host's summary | `budget_chars` (4000) |
//! | SessionStart `resume` / `fork` | resume | an interrupted last turn, new or changed notes | 600 |
//! | SessionStart `startup` | startup | notes, the caller's handoff and memory | 1500 |
//! | SessionStart `clear` | clear | notes, the caller's memory and pointer | 400 |
//! | UserPromptSubmit | prompt | this turn's and new or changed notes; never the prompt | 800 |
//! | SubagentStart (opt-in) | subagent | the standing instructions | 500 |
//! | PostToolUseFailure (opt-in) | failure | the same call failed before, and what fixed it | 300 |
//! | PreCompact, PostCompact, Stop, StopFailure, SubagentStop, SessionEnd | nothing | | 0 |
//! | any other event configured | notes | like prompt | 800 |
//!
//! Fallback: a compaction journaled (PreCompact, PostCompact, the compactor's stop) with no
//! recovery block injected after it turns a resume, a startup or a prompt into the full
//! recovery block, once (hosts with no SessionStart after compacting: Gemini CLI, the bridges).
//! A SessionStart(compact) for a compaction already answered that way gives only what is new.
//! Injected text stays in the host's transcript until the next compaction, so nothing is
//! injected twice in between: every mode leaves out items the `seen` set has with the same
//! hash (for the recovery block: those seen since the compaction, e.g. an earlier block a
//! compressed history still holds).

use super::block::{self, Ctx};
use super::fit::{self, Class, Line, Section};
use super::text::normalise;
use super::{Injection, RENDER_VERSION};
use crate::config::Config;
use crate::event::{Event, EventKind, Host};
use crate::fold::State;
use crate::limits::{
    CLEAR_BUDGET_CHARS, CONTEXT_BUDGET_DEFAULT_CHARS, CONTEXT_BUDGET_MAX_CHARS,
    FAILURE_NUDGE_BUDGET_CHARS, PROMPT_BUDGET_CHARS, RESUME_BUDGET_CHARS, STARTUP_BUDGET_CHARS,
    SUBAGENT_BUDGET_CHARS,
};

/// Which rule of the policy an injection follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Nothing to inject at this event.
    #[default]
    Nothing,
    Recovery,
    Resume,
    Startup,
    Clear,
    Prompt,
    Subagent,
    Failure,
    Notes,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Nothing => "nothing",
            Mode::Recovery => "recovery",
            Mode::Resume => "resume",
            Mode::Startup => "startup",
            Mode::Clear => "clear",
            Mode::Prompt => "prompt",
            Mode::Subagent => "subagent",
            Mode::Failure => "failure",
            Mode::Notes => "notes",
        }
    }

    /// Whether the model sees the text in the session's own transcript (a subagent's
    /// context is its own: what it is shown is not seen by the main model).
    pub fn main_transcript(self) -> bool {
        self != Mode::Subagent
    }
}

/// What the policy is configured with: `config.toml`'s `[hook]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The recovery block's budget; every other mode's budget is at most this.
    pub budget_chars: usize,
    /// Events that get context besides the host's defaults.
    pub context_events: Vec<String>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            budget_chars: CONTEXT_BUDGET_DEFAULT_CHARS,
            context_events: Vec::new(),
        }
    }
}

impl Policy {
    pub fn from_config(config: &Config) -> Policy {
        Policy {
            budget_chars: config.hook.context_budget_chars,
            context_events: config.hook.context_events.clone(),
        }
    }

    /// The budget of a mode, in characters (never past `CONTEXT_BUDGET_MAX_CHARS`).
    pub fn budget(&self, mode: Mode) -> usize {
        let own = match mode {
            Mode::Nothing => 0,
            Mode::Recovery => self.budget_chars,
            Mode::Resume => RESUME_BUDGET_CHARS,
            Mode::Startup => STARTUP_BUDGET_CHARS,
            Mode::Clear => CLEAR_BUDGET_CHARS,
            Mode::Prompt | Mode::Notes => PROMPT_BUDGET_CHARS,
            Mode::Subagent => SUBAGENT_BUDGET_CHARS,
            Mode::Failure => FAILURE_NUDGE_BUDGET_CHARS,
        };
        own.min(self.budget_chars).min(CONTEXT_BUDGET_MAX_CHARS)
    }

    /// Whether the hook asks for context at `event` (the host's name for it): the host's
    /// default context events, and the configured ones the host accepts context for.
    pub fn wants(&self, protocol: Host, event: &str) -> bool {
        protocol.default_context_event(event)
            || (protocol.accepts_context(event) && self.context_events.iter().any(|c| c == event))
    }
}

/// The event an injection answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectionPoint {
    /// The event's seq (its record's, or the one it will get).
    pub event_seq: u64,
    pub kind: EventKind,
    /// SessionStart's source: startup, resume, clear, compact, fork.
    pub source: Option<String>,
    pub host: Host,
}

impl InjectionPoint {
    pub fn of_event(e: &Event<'_>, event_seq: u64) -> InjectionPoint {
        InjectionPoint {
            event_seq,
            kind: e.kind,
            source: e.source.as_deref().map(str::to_owned),
            host: e.host,
        }
    }

    /// The injection point of a journaled event: its record kind and JSON text (read
    /// leniently, as the fold reads it).
    pub fn of_record(record_kind: &str, raw_json: &str, event_seq: u64) -> InjectionPoint {
        let raw = crate::event::lenient::text(raw_json);
        InjectionPoint::of_event(&Event::parse(record_kind, &raw), event_seq)
    }
}

/// A section the caller adds: the handoff from the project's last unfinished session and
/// reviewed project memory (the project-memory work builds these). Lines are shown as given,
/// under `title`; the section is one item, keyed `key`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraSection {
    pub key: String,
    pub title: String,
    pub lines: Vec<String>,
}

/// The caller's sections. `memory` is shown at startup, clear and in the recovery block;
/// `handoff` at startup and clear only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    pub memory: Vec<ExtraSection>,
    pub handoff: Vec<ExtraSection>,
    /// The instruction files read to leave out what they already say (journaled with the
    /// sections; not rendered).
    pub read: Vec<crate::format::payload::FileRead>,
}

/// The compaction the block answers, when one is journaled and no recovery block followed it
/// — and the host's view after it is known, where the session's requests show it: Gemini CLI
/// sends its compressed history only with the first request after the prompt that would carry
/// the block, and that history may still hold an earlier block, whose items the next one
/// leaves out (`fold::model_view`).
fn unanswered(state: &State) -> bool {
    let v = &state.model_view;
    state.compactions.last.as_ref().is_some_and(|c| {
        c.recovered_seq.is_none() && v.last_request_seq.is_none_or(|seq| seq >= c.seq)
    })
}

/// `at` is the SessionStart(compact) of a compaction whose recovery block an earlier event
/// already carried (the fallback).
fn answered_before(state: &State, at: &InjectionPoint) -> bool {
    state
        .compactions
        .last
        .as_ref()
        .is_some_and(|c| c.recovered_seq.is_some() && c.resumed_seq == Some(at.event_seq))
}

/// The policy's mode for an event.
pub fn decide(state: &State, at: &InjectionPoint) -> Mode {
    let pending = unanswered(state);
    match at.kind {
        EventKind::SessionStart => match at.source.as_deref() {
            Some("compact") => Mode::Recovery,
            _ if pending => Mode::Recovery,
            Some("resume" | "fork") => Mode::Resume,
            Some("clear") => Mode::Clear,
            _ => Mode::Startup,
        },
        EventKind::UserPromptSubmit if pending => Mode::Recovery,
        EventKind::UserPromptSubmit => Mode::Prompt,
        EventKind::SubagentStart => Mode::Subagent,
        EventKind::PostToolUseFailure => Mode::Failure,
        EventKind::PreCompact
        | EventKind::PostCompact
        | EventKind::Stop
        | EventKind::StopFailure
        | EventKind::SubagentStop
        | EventKind::SessionEnd => Mode::Nothing,
        _ => Mode::Notes,
    }
}

fn extra(sections: &[ExtraSection]) -> Vec<Section> {
    sections
        .iter()
        .map(|x| {
            let mut s = Section::new("extra", Some(&x.title), None);
            for l in &x.lines {
                s.lines.push(Line::new(
                    Class::Extra,
                    Some(x.key.clone()),
                    x.key.clone(),
                    l.clone(),
                ));
            }
            s
        })
        .collect()
}

/// Leaves out the items the model has already seen unchanged (key and hash in `seen`).
fn unseen(mut secs: Vec<Section>, state: &State) -> Vec<Section> {
    let seen = &state.seen.items;
    if seen.is_empty() {
        return secs;
    }
    // An item's hash is over all its lines, as `fit` computes it.
    let mut groups: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for s in &secs {
        for l in &s.lines {
            if let Some(k) = &l.key {
                groups.entry(k).or_default().push(l.text());
            }
        }
    }
    let known: std::collections::BTreeSet<String> = groups
        .into_iter()
        .filter(|(k, lines)| {
            seen.get(*k)
                .is_some_and(|h| *h == fit::item_hash(&lines.join("\n")))
        })
        .map(|(k, _)| k.to_owned())
        .collect();
    for s in &mut secs {
        s.lines
            .retain(|l| l.key.as_ref().is_none_or(|k| !known.contains(k)));
    }
    secs
}

/// What to inject for the event `at`, given the state after the event and the records that
/// come with it (its exec outputs) were folded. Pure: the same state, event, policy and
/// extras give the same bytes.
pub fn inject(state: &State, at: &InjectionPoint, policy: &Policy, extras: &Extras) -> Injection {
    let mode = decide(state, at);
    let budget = policy.budget(mode);
    if mode == Mode::Nothing || budget == 0 {
        return Injection {
            mode,
            budget_chars: budget,
            ..Default::default()
        };
    }
    let session = state.identity.session_id.as_deref().unwrap_or("<session>");
    let summary = match mode {
        Mode::Recovery if unanswered(state) => state
            .compactions
            .last
            .as_ref()
            .and_then(|c| c.summary.as_deref())
            .map(normalise),
        _ => None,
    };
    let mut c = Ctx {
        state,
        session,
        project: state.identity.project_dir.as_deref(),
        summary,
        answering: (at.kind == EventKind::UserPromptSubmit).then_some(at.event_seq),
        deduped: Vec::new(),
        in_files: extras
            .read
            .iter()
            .flat_map(|r| r.instructions.iter().map(String::as_str))
            .collect(),
    };
    let mut secs = Vec::new();
    match mode {
        Mode::Recovery => {
            secs.push(block::recovery_header(&c));
            secs.extend(block::notes(&c));
            secs.extend(extra(&extras.memory));
            secs.push(block::instructions(&mut c, true));
            secs.push(block::todos(&c));
            secs.push(block::left_off(&mut c, false));
            secs.push(block::failures(&mut c));
            secs.push(block::files(&c));
            secs.push(block::agents(&c));
            secs.push(block::mode(&c));
            secs.push(block::pointer(&c));
            // Only what the model has not seen since the compaction: what was injected after
            // it, or what the host's compressed history still holds (`fold::model_view`).
            let since = state
                .compactions
                .last
                .as_ref()
                .is_some_and(|c| state.seen.since_seq >= c.seq);
            if since {
                secs = unseen(secs, state);
            }
            if answered_before(state, at)
                && !secs.iter().any(|s| s.lines.iter().any(|l| l.key.is_some()))
            {
                // The compaction was answered already, by the fallback at an earlier event
                // (Codex sends SessionStart(compact) after the next run's SessionStart(resume)),
                // and nothing is new since.
                return Injection::nothing(mode, budget);
            }
        }
        Mode::Resume => {
            secs.push(block::left_off(&mut c, true));
            secs.extend(block::notes(&c));
            secs = unseen(secs, state);
            if secs.iter().all(|s| s.lines.is_empty()) {
                return Injection::nothing(mode, budget);
            }
            secs.insert(0, block::resume_header(&c));
        }
        Mode::Startup | Mode::Clear => {
            secs.extend(block::notes(&c));
            secs.extend(extra(&extras.memory));
            secs.extend(extra(&extras.handoff));
            secs = unseen(secs, state);
        }
        Mode::Prompt | Mode::Notes => secs = unseen(block::notes(&c), state),
        Mode::Subagent => secs.push(block::instructions(&mut c, false)),
        Mode::Failure => secs = unseen(vec![block::failure_nudge(&c, at.event_seq)], state),
        Mode::Nothing => unreachable!("returned above"),
    }
    if secs.iter().all(|s| s.lines.is_empty()) {
        return Injection::nothing(mode, budget);
    }
    let f = fit::fit(secs, budget, session);
    Injection {
        mode,
        chars: super::text::chars(&f.text),
        text: f.text,
        budget_chars: budget,
        truncated: !f.dropped.is_empty(),
        items: f.items,
        dropped: f.dropped,
        deduped: c.deduped,
        render_version: RENDER_VERSION,
    }
}
