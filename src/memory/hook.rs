//! What the hook does with memory: before the event is committed, the sections it adds to
//! the injection (reviewed memory at startup, clear and compact; the handoff at startup) and
//! the notice the user gets about pending proposals; after the reply, the writes to the
//! project journal (this session started; standing instructions proposed at Stop and
//! SessionEnd; the user's own "remember: …" accepted as said).
//!
//! Pending proposals are only counted, to the user; their text never reaches an injection.

use std::path::Path;

use super::handoff;
use super::ops::{self, load};
use super::Scope;
use crate::context::{ExtraSection, Extras};
use crate::event::{Event, EventKind};
use crate::fold::State;
use crate::format::payload::{ExtrasRecord, MemoryOp};
use crate::journal::{Root, WriterOptions};
use crate::limits::{HANDOFF_SESSIONS, MEMORY_INJECT_CHARS};
use crate::snapshot::LoadOptions;

/// Prepared before the commit.
#[derive(Debug, Default)]
pub struct Prepared {
    pub extras: Extras,
    /// For the user only: pending proposals await review.
    pub notice: Option<String>,
}

/// A write to the project journal, done after the reply.
#[derive(Debug, Clone)]
pub struct After {
    pub scope: Scope,
    pub session: String,
    pub what: AfterWhat,
}

#[derive(Debug, Clone)]
pub enum AfterWhat {
    /// A session of the project started (or resumed).
    Started,
    /// The session's turn or the session ended: propose its standing instructions.
    Ended,
    /// The user said "remember: <text>" in the prompt.
    Remember(String),
}

/// The text after a leading "remember:" (any case), if the prompt is one.
pub fn remember_text(prompt: &str) -> Option<&str> {
    let p = prompt.trim_start();
    let head = p.get(..9)?;
    if !head.eq_ignore_ascii_case("remember:") {
        return None;
    }
    Some(p[9..].trim()).filter(|t| !t.is_empty())
}

/// Whether the host's event `name` may be one memory acts on (a session's start or end, a
/// prompt, a turn's end): a cheap test on the name that spares parsing large tool payloads
/// again. `Event::parse` decides.
pub fn may_concern(name: Option<&str>) -> bool {
    let Some(n) = name else { return false };
    let n = n.to_ascii_lowercase();
    [
        "start", "stop", "end", "prompt", "agent", "turn", "complete",
    ]
    .iter()
    .any(|w| n.contains(w))
        && !n.contains("tool")
}

/// The project scope of an event (None without a project dir or cwd).
fn scope_of(e: &Event<'_>, host_project: Option<&Path>) -> Option<Scope> {
    let cwd = e.cwd.as_deref().map(Path::new);
    let dir = super::project_dir(host_project, cwd)?;
    Some(Scope::Project(dir.to_string_lossy().into_owned()))
}

/// The write to the project journal an event asks for after the reply, if any.
pub fn after_job(
    kind: &str,
    raw_json: &str,
    session: &str,
    host_project: Option<&Path>,
) -> Option<After> {
    let e = Event::parse(kind, raw_json);
    let what = match e.kind {
        EventKind::SessionStart => AfterWhat::Started,
        EventKind::Stop | EventKind::SessionEnd => AfterWhat::Ended,
        EventKind::UserPromptSubmit => {
            AfterWhat::Remember(e.prompt.as_deref().and_then(remember_text)?.to_owned())
        }
        _ => return None,
    };
    Some(After {
        scope: scope_of(&e, host_project)?,
        session: session.to_owned(),
        what,
    })
}

/// At SessionStart: reviewed memory and the handoff to inject, and the notice of pending
/// proposals for the user. Reads the project's and the global journal (snapshot + tail).
pub fn prepare(
    root: &Root,
    kind: &str,
    raw_json: &str,
    session: &str,
    host_project: Option<&Path>,
) -> Prepared {
    let e = Event::parse(kind, raw_json);
    if e.kind != EventKind::SessionStart {
        return Prepared::default();
    }
    let Some(scope) = scope_of(&e, host_project) else {
        return Prepared::default();
    };
    let source = e.source.as_deref().unwrap_or("startup");
    let opts = LoadOptions::latest();
    let project = load(root, &scope, &opts).unwrap_or_default();
    let global = load(root, &Scope::Global, &opts).unwrap_or_default();
    let mut out = Prepared::default();
    if matches!(source, "startup" | "clear" | "compact") {
        out.extras.memory = memory_section(&project, &global).into_iter().collect();
    }
    if source == "startup" {
        out.extras.handoff = last_unfinished(root, &project, session)
            .into_iter()
            .collect();
    }
    let pending = project.memory.pending() + global.memory.pending();
    if pending > 0 && source != "compact" {
        let s = if pending == 1 { "" } else { "s" };
        out.notice = Some(format!(
            "sjournal: {pending} memory proposal{s} await{} review (sjournal memory review)",
            if pending == 1 { "s" } else { "" }
        ));
    }
    out
}

/// Accepted items (project first, then global), newest first, within
/// `limits::MEMORY_INJECT_CHARS`.
pub fn memory_section(project: &State, global: &State) -> Option<ExtraSection> {
    let title = "## Project memory (reviewed)".to_owned();
    let mut total = title.chars().count() + 1;
    let mut lines = Vec::new();
    for i in project
        .memory
        .accepted()
        .into_iter()
        .chain(global.memory.accepted())
    {
        let line = format!("- {}", crate::context::text::one_line(&i.text));
        let n = line.chars().count() + 1;
        if total + n > MEMORY_INJECT_CHARS {
            continue;
        }
        total += n;
        lines.push(line);
    }
    (!lines.is_empty()).then(|| ExtraSection {
        key: "memory".into(),
        title,
        lines,
    })
}

/// The handoff from the project's newest earlier session, if it is one of the last
/// `HANDOFF_SESSIONS`, was not cleared away, and left something unfinished.
fn last_unfinished(root: &Root, project: &State, session: &str) -> Option<ExtraSection> {
    let prev = project
        .memory
        .sessions
        .iter()
        .rev()
        .filter(|s| s.session != session)
        .take(HANDOFF_SESSIONS)
        .next()?;
    let (state, _) =
        crate::snapshot::load_state(root, &prev.session, &LoadOptions::latest()).ok()?;
    if handoff::cleared(&state) {
        return None;
    }
    handoff::section(&state)
}

/// The `sjournal.extras` record for an event at `event_seq`, when there is anything extra.
pub fn extras_record(extras: &Extras, event_seq: u64) -> Option<ExtrasRecord> {
    if extras.memory.is_empty() && extras.handoff.is_empty() {
        return None;
    }
    let conv = |v: &[ExtraSection]| {
        v.iter()
            .map(|x| (x.key.clone(), x.title.clone(), x.lines.clone()))
            .collect()
    };
    Some(ExtrasRecord {
        event_seq,
        memory: conv(&extras.memory),
        handoff: conv(&extras.handoff),
    })
}

/// The extras journaled with the event last folded (what a replay passes to the policy):
/// the fold forgets them at the next event.
pub fn extras_of(state: &State) -> Extras {
    let Some(x) = state.extras.as_ref() else {
        return Extras::default();
    };
    let conv = |v: &[(String, String, Vec<String>)]| {
        v.iter()
            .map(|(key, title, lines)| ExtraSection {
                key: key.clone(),
                title: title.clone(),
                lines: lines.clone(),
            })
            .collect()
    };
    Extras {
        memory: conv(&x.memory),
        handoff: conv(&x.handoff),
    }
}

/// The writes to the project journal after the reply. `session_state` is loaded only for
/// `Ended`.
pub fn after(root: &Root, job: &After, opts: &WriterOptions) -> crate::error::Result<()> {
    let ops: Vec<MemoryOp> = match &job.what {
        AfterWhat::Started => vec![MemoryOp {
            op: "session".into(),
            session: Some(job.session.clone()),
            ..Default::default()
        }],
        AfterWhat::Remember(text) => vec![ops::propose(
            text,
            "remember",
            Some(&job.session),
            None,
            Some(text),
        )],
        AfterWhat::Ended => {
            let st = match crate::snapshot::load_state(root, &job.session, &LoadOptions::latest()) {
                Ok((s, _)) => s,
                Err(_) => return Ok(()),
            };
            let mut ops = proposals(&st, &job.session);
            let scope = ops::load(root, &job.scope, &LoadOptions::latest()).unwrap_or_default();
            let dir = match &job.scope {
                Scope::Project(p) => Some(Path::new(p)),
                Scope::Global => None,
            };
            ops.extend(stale(&scope, &st, &job.session, dir, &|p| p.exists()));
            ops
        }
    };
    if ops.is_empty() {
        return Ok(());
    }
    ops::apply(root, &job.scope, &ops, opts).map(|_| ())
}

/// The session's standing instructions (the fold's selector) as proposals, oldest first;
/// "remember: …" prompts are left out (accepted as said when they were given).
pub fn proposals(st: &State, session: &str) -> Vec<MemoryOp> {
    st.requests
        .instructions
        .iter()
        .filter(|i| i.source == "prompt" && remember_text(&i.text).is_none())
        .map(|i| ops::propose(&i.text, "rule", Some(session), Some(i.seq), Some(&i.text)))
        .collect()
}

/// The `code` spans of a text (between single backticks).
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Accepted items that the session proved stale, as `stale` ops: one that names a command
/// (in backticks) which failed in the session and was not fixed; one that names a relative
/// path (in backticks, with a `/` or a `.`) that no longer exists under the project.
pub fn stale(
    scope: &State,
    session: &State,
    session_id: &str,
    project: Option<&Path>,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<MemoryOp> {
    let mut out = Vec::new();
    for item in scope.memory.accepted() {
        let mut reason = None;
        for span in code_spans(&item.text) {
            let failed = session.failures.items.iter().find(|f| {
                f.resolved.is_none()
                    && crate::event::work::is_shell_tool(&f.tool)
                    && f.detail.trim() == span
            });
            if let Some(f) = failed {
                let status = f
                    .exit_code
                    .map_or("failed".to_owned(), |n| format!("exit {n}"));
                reason = Some(format!(
                    "`{span}` failed in session {session_id} ({status}) and was not fixed"
                ));
                break;
            }
            let looks_like_path = !span.contains(char::is_whitespace)
                && !span.starts_with('/')
                && !span.starts_with('-')
                && (span.contains('/') || span.contains('.'))
                && !span.contains("..");
            if let (true, Some(dir)) = (looks_like_path, project) {
                if !exists(&dir.join(span)) {
                    reason = Some(format!("`{span}` no longer exists in the project"));
                    break;
                }
            }
        }
        if let Some(r) = reason {
            out.push(ops::on_item("stale", &item.id, None, Some(&r)));
        }
    }
    out
}
