//! What the hook does with memory: before the event is committed, the sections it adds to
//! the injection (reviewed memory at startup, clear and compact; the handoff at startup) and
//! the notice the user gets about pending proposals; after the reply, the writes to the
//! project journal (this session started; standing instructions proposed at Stop and
//! SessionEnd; the user's own "remember: …" accepted as said).
//!
//! Only the human user's own prompt in a main session, as the host tells it
//! (`Host::prompt_author`), is accepted as said. A "remember: …" in any other prompt (a
//! subagent's task, a scheduled job's, another sender's, one the host generated) is at most a
//! proposal for review, in the project's scope ([`RELAYED`]).
//!
//! Pending proposals are only counted, to the user; their text never reaches an injection.

use std::path::Path;

use std::borrow::Cow;

use super::ops::{self, load};
use super::state::Effect;
use super::Scope;
use super::{handoff, known};
use crate::context::{ExtraSection, Extras};
use crate::event::{Event, EventKind, Host};
use crate::fold::State;
use crate::format::payload::{ExtrasRecord, FileRead, MemoryOp};
use crate::host::Author;
use crate::journal::{Root, WriterOptions};
use crate::limits::{
    HANDOFF_SESSIONS, HANDOFF_SESSIONS_MAX, MEMORY_INJECT_CHARS, MEMORY_TEXT_MAX_BYTES,
};
use crate::snapshot::LoadOptions;

/// What is left for after the reply: the write to a scope journal, and the session's state
/// as the commit folded it (when it was loaded).
#[derive(Debug)]
pub struct AfterReply {
    pub job: After,
    pub state: Option<State>,
}

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
    /// A prompt said `remember: <text>` (or `remember globally: <text>`).
    Remember(RememberAsk),
}

/// The source of a proposal from a "remember: …" in a prompt the user did not type (a
/// subagent's task, a scheduled job's, another sender's, the host's): never accepted as said.
pub const RELAYED: &str = "relayed";

/// A "remember" a prompt asks for, and who wrote the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberAsk {
    /// "remember globally:".
    pub global: bool,
    pub text: String,
    pub author: Author,
}

impl RememberAsk {
    /// Accepted as said: only the human user's own prompt in a main session.
    pub fn accepted(&self) -> bool {
        self.author == Author::User
    }

    /// The scope it is written to: the one asked for, when accepted; a relayed proposal waits
    /// in the project's scope (never in every project's).
    pub fn scope(&self, project: Option<Scope>) -> Option<Scope> {
        if self.global && self.accepted() {
            Some(Scope::Global)
        } else {
            project
        }
    }
}

/// What the prompt event `e` asks of memory: a "remember" in `prompt` (the event's prompt as
/// its user wrote it: `own_prompt`), with who wrote it as the host tells it. None: not a
/// prompt submission, or not a "remember". Pure: the rule the fuzz target checks.
pub fn remember_ask(e: &Event<'_>, prompt: &str) -> Option<RememberAsk> {
    let author = e.host.prompt_author(e)?;
    let (global, text) = remember(prompt)?;
    Some(RememberAsk {
        global,
        text: text.to_owned(),
        author,
    })
}

/// The prompt of `e` as its user wrote it. Gemini CLI puts the context a SessionStart hook gave
/// before the first prompt, in a `<hook_context>` block: only that exact block, as the session
/// journaled it, is taken off (`fold::model_view::user_prompt`), which needs the session's
/// state; it is loaded only when the rest of the prompt could be a "remember" at all. None
/// when that state could not be read in time (then no "remember" is taken from the prompt).
pub(crate) fn own_prompt<'e>(
    root: &Root,
    e: &'e Event<'_>,
    session: &str,
    deadline: Option<std::time::Instant>,
) -> Option<Cow<'e, str>> {
    use crate::fold::model_view::{user_prompt, HOOK_CONTEXT_CLOSE, HOOK_CONTEXT_OPEN};
    let p = e.prompt.as_deref()?;
    if e.host != Host::Gemini || !p.starts_with(HOOK_CONTEXT_OPEN) {
        return Some(Cow::Borrowed(p));
    }
    let could = p.match_indices(HOOK_CONTEXT_CLOSE).any(|(at, _)| {
        remember(p[at + HOOK_CONTEXT_CLOSE.len()..].trim_start_matches(['\n', '\r'])).is_some()
    });
    if !could {
        return Some(Cow::Borrowed(p));
    }
    let opts = LoadOptions {
        deadline,
        ..LoadOptions::latest()
    };
    let (st, _) = crate::snapshot::load_state(root, session, &opts).ok()?;
    Some(Cow::Owned(user_prompt(&st.model_view, p).to_owned()))
}

/// A prompt that is the user's own "remember": the text after `remember:` (project scope)
/// or `remember globally:` (global scope). Any case; spaces may stand around the words and
/// before the colon (`Remember :`, `REMEMBER GLOBALLY:`); empty text is not a remember.
pub fn remember(prompt: &str) -> Option<(bool, &str)> {
    fn word<'a>(s: &'a str, w: &str) -> Option<&'a str> {
        let s = s.trim_start();
        let head = s.get(..w.len())?;
        head.eq_ignore_ascii_case(w).then(|| &s[w.len()..])
    }
    let rest = word(prompt, "remember")?;
    let (global, rest) = match word(rest, "globally") {
        Some(r) if rest.starts_with(char::is_whitespace) => (true, r),
        _ => (false, rest),
    };
    let text = word(rest, ":")?.trim();
    (!text.is_empty()).then_some((global, text))
}

/// The text of a "remember: …" or "remember globally: …" prompt (see [`remember`]).
pub(crate) fn remember_text(prompt: &str) -> Option<&str> {
    remember(prompt).map(|(_, t)| t)
}

/// Whether the host's event `name` may be one memory acts on (a session's start or end, a
/// prompt, a turn's end): a cheap test on the name that spares parsing large tool payloads
/// again where the event is not parsed yet. `Event::parse` decides. Every host event name
/// that parses as SessionStart, UserPromptSubmit, Stop or SessionEnd passes
/// (`tests/memory_sources.rs` checks it over every fixture payload).
pub fn may_concern(name: Option<&str>) -> bool {
    let Some(n) = name else { return false };
    let n = n.to_ascii_lowercase();
    [
        "start", "stop", "end", "prompt", "agent", "turn", "complete", "shutdown", "cancel",
        "abort", "error", "resume",
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

/// What memory does for one event: prepared before the commit, and the write after the
/// reply. The event is parsed once, here.
#[derive(Debug, Default)]
pub struct Plan {
    pub prepared: Prepared,
    pub after: Option<After>,
}

impl Plan {
    /// Whether the write after the reply reads the session's state (it proposes the
    /// session's standing instructions and passing variants): the commit then loads it, so
    /// that the state folded with the event is handed over rather than loaded again.
    pub fn needs_state(&self) -> bool {
        matches!(
            self.after,
            Some(After {
                what: AfterWhat::Ended,
                ..
            })
        )
    }
}

/// Says what memory does with the event `e` (read as the fold reads it: the hook parses it
/// once, [`plan_json`] here): at SessionStart, reviewed memory and the handoff to inject and
/// the notice of pending proposals (reads the project's and the global journal; only with
/// `settings`: None when there is no time left to inject); after the reply, the write to a
/// scope journal, if any.
pub fn plan(
    root: &Root,
    e: &Event<'_>,
    session: &str,
    host_project: Option<&Path>,
    settings: Option<&Settings>,
) -> Plan {
    let what = match e.kind {
        EventKind::SessionStart => AfterWhat::Started,
        EventKind::Stop | EventKind::SessionEnd => AfterWhat::Ended,
        // A prompt submission (one the fold counts as no turn too: a subagent's, the host's).
        _ if e.host.prompt_author(e).is_some() => {
            let deadline = settings.and_then(|s| s.deadline);
            let ask = own_prompt(root, e, session, deadline).and_then(|p| remember_ask(e, &p));
            match ask {
                Some(ask) => AfterWhat::Remember(ask),
                None => return Plan::default(),
            }
        }
        _ => return Plan::default(),
    };
    let project = scope_of(e, host_project);
    let scope = match (&what, project.clone()) {
        (AfterWhat::Remember(ask), p) => match ask.scope(p) {
            Some(s) => s,
            None => return Plan::default(),
        },
        (_, Some(p)) => p,
        (_, None) => return Plan::default(),
    };
    let prepared = match (&project, e.kind, settings) {
        (Some(p), EventKind::SessionStart, Some(set)) => {
            let source = e.source.as_deref().unwrap_or("startup");
            prepare(root, source, p, session, set)
        }
        _ => Prepared::default(),
    };
    Plan {
        prepared,
        after: Some(After {
            scope,
            session: session.to_owned(),
            what,
        }),
    }
}

/// [`plan`] for a journaled event's record kind and JSON text, parsed here (read as the fold
/// reads it: a lone surrogate escape in a prompt is still a prompt).
pub fn plan_json(
    root: &Root,
    kind: &str,
    raw_json: &str,
    session: &str,
    host_project: Option<&Path>,
    settings: Option<&Settings>,
) -> Plan {
    let raw = crate::event::lenient::text(raw_json);
    plan(
        root,
        &Event::parse(kind, &raw),
        session,
        host_project,
        settings,
    )
}

/// How the hook's memory behaves (`[memory]` in config.toml).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The handoff comes from one of the project's last this-many sessions (0: no handoff).
    pub handoff_sessions: usize,
    /// Stop waiting for a journal's shared lock at this instant (the hook's render deadline;
    /// not from config.toml): a journal not read in time contributes nothing.
    pub deadline: Option<std::time::Instant>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            handoff_sessions: HANDOFF_SESSIONS,
            deadline: None,
        }
    }
}

/// The settings of a `[memory]` section, without a deadline (the hook sets its own).
impl From<&crate::config::MemorySection> for Settings {
    fn from(section: &crate::config::MemorySection) -> Settings {
        Settings {
            handoff_sessions: section.handoff_sessions,
            deadline: None,
        }
    }
}

/// At a SessionStart of `source` (startup, resume, clear, compact) in `session` of the project
/// `scope`: reviewed memory and the handoff to inject, and the notice of pending proposals for
/// the user. Reads the project's and the global journal (snapshot + tail), and at compact the
/// session's own state. The hook calls it for the event it answers; `sjournal context show`
/// for the one it shows, so that both inject the same.
pub fn prepare(
    root: &Root,
    source: &str,
    scope: &Scope,
    session: &str,
    settings: &Settings,
) -> Prepared {
    let opts = LoadOptions {
        deadline: settings.deadline,
        ..LoadOptions::latest()
    };
    let project = load(root, scope, &opts).unwrap_or_default();
    let global = load(root, &Scope::Global, &opts).unwrap_or_default();
    let mut out = Prepared::default();
    if matches!(source, "startup" | "clear") {
        out.extras.memory = memory_section(&project, &global, &mut |_| false)
            .into_iter()
            .collect();
    }
    if source == "compact" {
        // The instruction files the host loaded are back in the model's context after a
        // compaction: what they already say is not injected again. What was read, and what
        // it left out, is journaled with the injection (`FileRead`).
        let st = crate::snapshot::load_state(root, session, &opts)
            .map(|(s, _)| s)
            .unwrap_or_default();
        let mut read: Vec<(FileRead, String)> =
            st.requests.files.iter().map(|f| known::read(f)).collect();
        for i in &st.requests.instructions {
            let t = known::squash(&i.text);
            let found = read
                .iter_mut()
                .find(|(_, body)| !t.is_empty() && body.contains(&t));
            if let Some((r, _)) = found {
                if !r.instructions.contains(&i.text) {
                    r.instructions.push(i.text.clone());
                }
            }
        }
        let mut known = |text: &str| {
            let t = known::squash(text);
            match read
                .iter_mut()
                .find(|(_, body)| !t.is_empty() && body.contains(&t))
            {
                Some((r, _)) => {
                    r.omitted.push(text.to_owned());
                    true
                }
                None => false,
            }
        };
        out.extras.memory = memory_section(&project, &global, &mut known)
            .into_iter()
            .collect();
        out.extras.read = read.into_iter().map(|(r, _)| r).collect();
    }
    if source == "startup" {
        out.extras.handoff =
            handoff_from(root, &project, session, settings.handoff_sessions, &opts)
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
/// `limits::MEMORY_INJECT_CHARS`; those `known` says the model already has are left out.
pub(crate) fn memory_section(
    project: &State,
    global: &State,
    known: &mut dyn FnMut(&str) -> bool,
) -> Option<ExtraSection> {
    let title = "## Project memory (reviewed)".to_owned();
    let mut total = title.chars().count() + 1;
    let mut lines = Vec::new();
    for i in project
        .memory
        .accepted()
        .into_iter()
        .chain(global.memory.accepted())
    {
        if known(&i.text) {
            continue;
        }
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

/// The handoff. Of the project's last `n` sessions other than
/// this one (newest first, in the order their SessionStart reached the project journal), the
/// newest that left something unfinished hands off. A session that was cleared (`/clear`)
/// ends the search: what it held was cleared away, and so was everything before it. A
/// session whose state cannot be loaded is passed over.
fn handoff_from(
    root: &Root,
    project: &State,
    session: &str,
    n: usize,
    opts: &LoadOptions,
) -> Option<ExtraSection> {
    let recent = project
        .memory
        .sessions
        .iter()
        .rev()
        .filter(|s| s.session != session)
        .take(n.min(HANDOFF_SESSIONS_MAX));
    for prev in recent {
        let Ok((state, _)) = crate::snapshot::load_state(root, &prev.session, opts) else {
            continue;
        };
        if handoff::cleared(&state) {
            return None;
        }
        if let Some(s) = handoff::section(&state) {
            return Some(s);
        }
    }
    None
}

/// The `sjournal.extras` record for an event at `event_seq`, when there is anything extra.
pub fn extras_record(extras: &Extras, event_seq: u64) -> Option<ExtrasRecord> {
    if extras.memory.is_empty() && extras.handoff.is_empty() && extras.read.is_empty() {
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
        read: extras.read.clone(),
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
        read: x.read.clone(),
    }
}

/// The writes to the scope journal after the reply. `session_state` is the session's state
/// with the event folded in, as the commit left it (None: the event was not folded, e.g. it
/// was spooled; it is then loaded here). The scope journal is locked only when there is
/// something to write. Nothing waits past `opts.deadline` (the hook's): not a read, and not
/// the scope journal's lock, past which the write is spooled (`ops::apply`).
pub fn after(
    root: &Root,
    job: &After,
    session_state: Option<&State>,
    opts: &WriterOptions,
) -> crate::error::Result<()> {
    let read = LoadOptions {
        deadline: opts.deadline,
        ..LoadOptions::latest()
    };
    let ops: Vec<MemoryOp> = match &job.what {
        AfterWhat::Started => vec![MemoryOp {
            op: "session".into(),
            session: Some(job.session.clone()),
            ..Default::default()
        }],
        AfterWhat::Remember(ask) => vec![ops::propose(
            &ask.text,
            if ask.accepted() { "remember" } else { RELAYED },
            Some(&job.session),
            None,
            Some(&ask.text),
        )],
        AfterWhat::Ended => {
            let loaded;
            let st = match session_state {
                Some(s) => s,
                None => match crate::snapshot::load_state(root, &job.session, &read) {
                    Ok((s, _)) => {
                        loaded = s;
                        &loaded
                    }
                    Err(_) => return Ok(()),
                },
            };
            let dir = match &job.scope {
                Scope::Project(p) => Some(Path::new(p)),
                Scope::Global => None,
            };
            // Checked first against the scope as read (no lock): at most Stops, everything
            // was proposed before and nothing is written, so the journal is not locked.
            // `apply` checks again under the lock.
            let scope = ops::load(root, &job.scope, &read)?;
            let mut new = proposals(st, &job.session);
            new.extend(verify_proposals(st, &job.session));
            new.extend(stale(&scope, st, &job.session, dir, &|p| p.exists()));
            new.retain(|op| {
                matches!(
                    scope.memory.check(op),
                    Ok(Effect::New | Effect::Again | Effect::Change)
                )
            });
            new
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

/// The source of "how to verify/build" proposals.
pub const VERIFY: &str = "verify";

/// A failing shell command later followed, in the same session, by a passing variant (the
/// fold's failures, resolved by a command of the same family, `fold::progress_rules`) as a "how to
/// verify/build" proposal: "`make check -j1` passes where `make check` fails". Its
/// provenance: the session, the seq of the passing call, the two commands verbatim. A
/// command that failed again after its variant passed still counts (the variant passed).
pub(crate) fn verify_proposals(st: &State, session: &str) -> Vec<MemoryOp> {
    let mut out: Vec<MemoryOp> = Vec::new();
    for f in &st.failures.items {
        if !crate::event::tool_effects::is_shell_tool(&f.tool) {
            continue;
        }
        let Some(r) = f.resolved.as_ref().or(f.fixed_before.as_ref()) else {
            continue;
        };
        let Some(variant) = r.variant.as_deref() else {
            continue;
        };
        let (failed, passed) = (f.detail.trim(), variant.trim());
        if failed.is_empty() || passed.is_empty() || failed.contains('`') || passed.contains('`') {
            continue;
        }
        let text = format!("`{passed}` passes where `{failed}` fails");
        if text.len() > MEMORY_TEXT_MAX_BYTES {
            continue;
        }
        let status = f
            .exit_code
            .map_or("failed".to_owned(), |n| format!("exit {n}"));
        let quote = format!("failed: {failed} ({status}); passed: {passed}");
        let op = ops::propose(&text, VERIFY, Some(session), Some(r.seq), Some(&quote));
        if out.iter().all(|o| o.id != op.id) {
            out.push(op);
        }
    }
    out
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
        let spans = code_spans(&item.text);
        // A "how to verify" item names the command that passes first, then the one that
        // fails: only the first is expected to work.
        let keep = if item.source == VERIFY {
            1
        } else {
            spans.len()
        };
        for span in spans.into_iter().take(keep) {
            let failed = session.failures.items.iter().find(|f| {
                f.resolved.is_none()
                    && crate::event::tool_effects::is_shell_tool(&f.tool)
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
