//! The sections of what is injected, built from the folded state, in
//! priority order: header, session notes, the user's instructions, plan and todos, where the
//! last turn left off, failures, files changed, subagents and background work, mode changes,
//! and the pointer to the full lists. Each line that carries an item has a key (`note:<key>`,
//! `instr:<seq>:<n>`, `todo:list`, `left-off:<seq>`, `fail:<call>`, `file:<path>`,
//! `agent:<id>`, `mode:<what>`); the recovery block is gap-aware: a line the host's compaction
//! summary already says is left out and named in `deduped`.

use super::fit::{Class, Line, Section};
use super::text::{clean, code, count, covers, cut, cut_head, normalise, one_line, relative};
use crate::fold::{FileStats, State};
use crate::limits::{
    ERROR_LINE_CHARS, FAILURES_SHOWN_MAX, FILES_SHOWN_MAX, INSTRUCTIONS_SHOWN_MAX,
    INSTRUCTION_SHOWN_CHARS, LATEST_REQUEST_CHARS, LEFT_OFF_CHARS, ORIGINAL_REQUEST_CHARS,
    SUBAGENT_RESULT_CHARS,
};

/// What the builders need besides the state.
pub(crate) struct Ctx<'a> {
    pub state: &'a State,
    /// The full session id (for the commands the block names).
    pub session: &'a str,
    pub project: Option<&'a str>,
    /// The host's compaction summary, normalised, when the block answers that compaction.
    pub summary: Option<String>,
    /// The seq of the prompt being answered now: never echoed.
    pub answering: Option<u64>,
    /// Lines left out because the summary has them.
    pub deduped: Vec<String>,
    /// Standing instructions an instruction file the host loaded already says (CLAUDE.md;
    /// read by the hook at compact and journaled, `memory::known`).
    pub in_files: std::collections::BTreeSet<&'a str>,
}

impl Ctx<'_> {
    /// True (and noted in `deduped` as `what`) if the summary already says `text`.
    fn covered(&mut self, text: &str, what: String) -> bool {
        let Some(summary) = &self.summary else {
            return false;
        };
        if covers(summary, &normalise(text)) {
            self.deduped.push(what);
            return true;
        }
        false
    }

    pub fn id8(&self) -> &str {
        let end = self
            .session
            .char_indices()
            .nth(8)
            .map_or(self.session.len(), |(i, _)| i);
        &self.session[..end]
    }
}

/// A frame section: one line per line of `text` (fitting drops whole lines, last first).
fn frame(id: &'static str, text: String) -> Section {
    let mut s = Section::new(id, None, None);
    for (n, l) in text.lines().enumerate() {
        let label = if n == 0 {
            id.to_owned()
        } else {
            format!("{id} {n}")
        };
        s.lines
            .push(Line::new(Class::Frame, None, label, l.to_owned()));
    }
    s
}

/// The recovery block's header: which compaction, which session, which turn, and the
/// provenance sentence.
pub(crate) fn recovery_header(c: &Ctx<'_>) -> Section {
    let st = c.state;
    let trigger = st
        .compactions
        .last
        .as_ref()
        .and_then(|c| c.trigger.as_deref())
        .map(|t| format!(" ({})", one_line(t)))
        .unwrap_or_default();
    frame(
        "frame",
        format!(
            "sjournal: recovered after compaction #{}{trigger} · session {} · turn {}\n\
             Recorded facts, not a summary; where they disagree with the summary, these are current.",
            st.compactions.count.max(1),
            c.id8(),
            st.turns.count
        ),
    )
}

pub(crate) fn resume_header(c: &Ctx<'_>) -> Section {
    frame(
        "frame",
        format!(
            "sjournal: session {} resumed · turn {}",
            c.id8(),
            c.state.turns.count
        ),
    )
}

/// The closing pointer to the full lists.
pub(crate) fn pointer(c: &Ctx<'_>) -> Section {
    let st = c.state;
    let mut lists = Vec::new();
    if !st.prompts.is_empty() {
        lists.push("prompts");
    }
    if !st.todos.items.is_empty() {
        lists.push("todos");
    }
    if !st.failures.items.is_empty() {
        lists.push("failures");
    }
    if st.files.by_path.values().any(FileStats::changed) {
        lists.push("files");
    }
    if !st.subagents.by_id.is_empty() {
        lists.push("agents");
    }
    let lists = if lists.is_empty() {
        String::new()
    } else {
        format!(" [{}]", lists.join("|"))
    };
    frame(
        "pointer",
        format!("Full record: sjournal show --session {}{lists}", c.session),
    )
}

/// Persistent entries (`notes`) and this turn's entries (`turn`).
pub(crate) fn notes(c: &Ctx<'_>) -> Vec<Section> {
    let ctx = &c.state.context;
    let mut persistent = Section::new("notes", Some("## Session notes"), None);
    for (k, e) in &ctx.persistent {
        let text = format!("[{k}] {}", clean(&e.text).trim());
        persistent.lines.push(Line::new(
            Class::Note,
            Some(format!("note:{k}")),
            k.clone(),
            text,
        ));
    }
    let mut turn = Section::new("turn", Some("## This turn"), None);
    for (k, e) in &ctx.ephemeral {
        let text = format!("[{k}] {}", clean(&e.text).trim());
        turn.lines.push(Line::new(
            Class::Note,
            Some(format!("turn:{k}")),
            k.clone(),
            text,
        ));
    }
    vec![persistent, turn]
}

/// The user's requests and standing instructions. `with_requests`: the original and latest
/// requests too (the recovery block); without, the standing instructions only (subagents).
pub(crate) fn instructions(c: &mut Ctx<'_>, with_requests: bool) -> Section {
    let mut s = Section::new(
        "instructions",
        Some("## Instructions from the user (in effect unless the user changed them later)"),
        Some("prompts"),
    );
    let st = c.state;
    let mut shown: Vec<String> = Vec::new();
    if with_requests {
        if let Some(p) = &st.requests.original {
            let text = one_line(&p.text);
            if c.answering != Some(p.seq)
                && !c.covered(&text, "instructions: original request".into())
            {
                let line = format!("- Original request: {}", cut(&text, ORIGINAL_REQUEST_CHARS));
                s.lines.push(Line::new(
                    Class::Original,
                    Some(format!("req:{}", p.seq)),
                    "original request",
                    line,
                ));
                shown.push(normalise(&cut(&text, ORIGINAL_REQUEST_CHARS)));
            }
        }
        let original = st.requests.original.as_ref().map(|p| p.seq);
        if let Some(p) = st.prompts.back() {
            let text = one_line(&p.text);
            if c.answering != Some(p.seq)
                && original != Some(p.seq)
                && !c.covered(
                    &text,
                    format!("instructions: latest request (seq {})", p.seq),
                )
            {
                let line = format!("- Latest request: {}", cut(&text, LATEST_REQUEST_CHARS));
                s.lines.push(Line::new(
                    Class::Latest,
                    Some(format!("req:{}", p.seq)),
                    "latest request",
                    line,
                ));
                shown.push(normalise(&cut(&text, LATEST_REQUEST_CHARS)));
            }
        }
    }
    let mut listed = 0;
    let mut omitted = 0;
    let mut index: std::collections::BTreeMap<u64, usize> = Default::default();
    for i in st.requests.instructions.iter().rev() {
        let n = index.entry(i.seq).or_default();
        *n += 1;
        if c.answering == Some(i.seq) {
            continue;
        }
        let text = one_line(&i.text);
        let norm = normalise(&text);
        if shown.iter().any(|s| covers(s, &norm)) {
            continue;
        }
        if with_requests && c.covered(&text, format!("instructions: seq {}", i.seq)) {
            continue;
        }
        if with_requests && c.in_files.contains(i.text.as_str()) {
            c.deduped.push(format!(
                "instructions: seq {} (an instruction file says it)",
                i.seq
            ));
            continue;
        }
        if listed == INSTRUCTIONS_SHOWN_MAX {
            omitted += 1;
            continue;
        }
        listed += 1;
        let from = if i.source == "compact" {
            " (given for the compaction)"
        } else {
            ""
        };
        s.lines.push(Line::new(
            Class::Instruction,
            Some(format!("instr:{}:{n}", i.seq)),
            format!("seq {}", i.seq),
            format!("- {}{from}", cut(&text, INSTRUCTION_SHOWN_CHARS)),
        ));
    }
    s.omit(omitted, Class::Instruction);
    // Requests first, then instructions newest first (dropping takes the oldest from the end).
    s.lines.sort_by_key(|l| match l.class {
        Class::Original => 0,
        Class::Latest => 1,
        _ => 2,
    });
    s
}

/// The plan and the todo list, verbatim in list order.
pub(crate) fn todos(c: &Ctx<'_>) -> Section {
    let st = c.state;
    let mut s = Section::new("todos", Some("## Plan and todos"), Some("todos"));
    if let Some(p) = &st.plan {
        let head: Vec<String> = p
            .head
            .lines()
            .map(one_line)
            .filter(|l| !l.is_empty())
            .take(3)
            .collect();
        let state = match p.approved {
            Some(true) => format!("Plan approved at turn {} (ExitPlanMode)", p.turn),
            Some(false) => format!("Plan proposed at turn {}, refused", p.turn),
            None => format!("Plan proposed at turn {}, not approved", p.turn),
        };
        let superseded = if !st.todos.items.is_empty() && st.todos.seq > p.seq {
            " (superseded by the todo list below)"
        } else {
            ""
        };
        let text = format!("- {state}{superseded}: {}", cut(&head.join(" / "), 300));
        s.lines.push(Line::new(
            Class::Plan,
            Some(format!("plan:{}", p.seq)),
            "plan",
            text,
        ));
    }
    for t in &st.todos.items {
        let text = cut(&one_line(&t.text), 200);
        let (class, line) = match t.status.as_str() {
            "completed" => (Class::TodoDone, format!("- [x] {text}")),
            "in_progress" => (Class::TodoOpen, format!("- [>] {text} (in progress)")),
            "cancelled" => (Class::TodoDone, format!("- [-] {text} (cancelled)")),
            _ => (Class::TodoOpen, format!("- [ ] {text}")),
        };
        s.lines
            .push(Line::new(class, Some("todo:list".into()), text, line));
    }
    s
}

fn action(a: &crate::fold::Action, project: Option<&str>) -> String {
    let detail = a
        .detail
        .as_deref()
        .map(|d| format!(" {}", code(relative(d, project), 120)))
        .unwrap_or_default();
    let outcome = match (a.outcome.as_str(), a.exit_code) {
        ("failed", Some(n)) => format!(" → exit {n}"),
        ("failed", None) => " → failed".into(),
        ("open", _) => " (no result)".into(),
        _ => String::new(),
    };
    format!("{}{detail}{outcome}", one_line(&a.tool))
}

/// Where the work left off: the turn a compaction cut (its last actions), else how the last
/// turn ended. `interrupted_only`: only an interruption (the resume delta).
pub(crate) fn left_off(c: &mut Ctx<'_>, interrupted_only: bool) -> Section {
    let lo = &c.state.left_off;
    let project = c.project;
    let mut s = Section::new("left-off", Some("## Where it left off"), None);
    if let Some(run) = lo.running.as_ref().filter(|r| !r.actions.is_empty()) {
        if !interrupted_only {
            let key = Some(format!("left-off:running:{}", run.prompt_seq));
            s.lines.push(Line::new(
                Class::LeftOff,
                key.clone(),
                "running",
                format!(
                    "- Turn {} was under way when the compaction came; its last actions:",
                    run.turn
                ),
            ));
            for a in &run.actions {
                s.lines.push(Line::new(
                    Class::Action,
                    key.clone(),
                    "action",
                    format!("- {}", action(a, project)),
                ));
            }
            return s;
        }
    }
    let Some(end) = lo.end_seq else {
        return s;
    };
    let key = Some(format!("left-off:{end}"));
    let t = lo.turn;
    match lo.outcome.as_str() {
        "stopped" if !interrupted_only => {
            let Some(m) = lo.message.as_deref() else {
                return s;
            };
            let tail = cut_head(&one_line(m), LEFT_OFF_CHARS);
            if c.covered(&tail, "left-off".into()) {
                return s;
            }
            s.lines.push(Line::new(
                Class::LeftOff,
                key,
                "last message",
                format!("- Turn {t} ended with: \"{tail}\""),
            ));
        }
        "failed" if !interrupted_only => {
            let e = lo.message.as_deref().unwrap_or("unknown error");
            s.lines.push(Line::new(
                Class::LeftOff,
                key,
                "failure",
                format!("- Turn {t} failed: {}", code(e, 200)),
            ));
        }
        "interrupted" => {
            let during = lo
                .open_calls
                .last()
                .map(|a| format!(" during {}", action(a, project)))
                .unwrap_or_default();
            s.lines.push(Line::new(
                Class::LeftOff,
                key.clone(),
                "interrupted",
                format!("- Turn {t} was interrupted{during} (no Stop came)"),
            ));
            let rest = lo.open_calls.len().saturating_sub(1);
            for a in lo.open_calls.iter().take(rest) {
                s.lines.push(Line::new(
                    Class::Action,
                    key.clone(),
                    "open call",
                    format!("- also open: {}", action(a, project)),
                ));
            }
            if lo.open_calls.is_empty() {
                for a in &lo.actions {
                    s.lines.push(Line::new(
                        Class::Action,
                        key.clone(),
                        "action",
                        format!("- before that: {}", action(a, project)),
                    ));
                }
            }
        }
        _ => {}
    }
    s
}

/// Unresolved failures (newest first), then the fixes found.
pub(crate) fn failures(c: &mut Ctx<'_>) -> Section {
    let st = c.state;
    let project = c.project;
    let open: Vec<_> = st
        .failures
        .items
        .iter()
        .rev()
        .filter(|f| f.resolved.is_none())
        .collect();
    let title = if open.is_empty() {
        "## Failures fixed"
    } else {
        "## Unresolved failures"
    };
    let mut s = Section::new("failures", Some(title), Some("failures"));
    let mut listed = 0;
    for f in open {
        let error = f.error_tail.join(" / ");
        if f.error_tail
            .last()
            .is_some_and(|last| c.covered(last, format!("failures: {}", cut(&f.detail, 80))))
        {
            continue;
        }
        if listed == FAILURES_SHOWN_MAX {
            s.omitted += 1;
            continue;
        }
        listed += 1;
        let what = if crate::event::tool_effects::is_shell_tool(&f.tool) {
            code(&f.detail, 160)
        } else {
            format!(
                "{} {}",
                one_line(&f.tool),
                code(relative(&f.detail, project), 160)
            )
        };
        let status = match f.exit_code {
            Some(n) => format!("exit {n}"),
            None => "failed".into(),
        };
        let error = if error.is_empty() {
            String::new()
        } else {
            format!(": {}", code(&error, ERROR_LINE_CHARS))
        };
        let times = if f.count > 1 {
            format!("; failed {}×", f.count)
        } else {
            String::new()
        };
        s.lines.push(Line::new(
            Class::Failure,
            Some(format!("fail:{}", f.key)),
            cut(&f.detail, 80),
            format!("- {what} → {status}{error} (turn {}{times})", f.turn),
        ));
    }
    if s.omitted > 0 {
        s.omitted_class = Class::Failure;
    }
    for f in st
        .failures
        .items
        .iter()
        .rev()
        .filter(|f| f.resolved.is_some())
        .take(FAILURES_SHOWN_MAX)
    {
        let r = f.resolved.as_ref().expect("filtered");
        let with = r
            .variant
            .as_deref()
            .map(|v| format!(" with {}", code(v, 120)))
            .unwrap_or_default();
        s.lines.push(Line::new(
            Class::Fixed,
            Some(format!("fixed:{}", f.key)),
            format!("fixed {}", cut(&f.detail, 60)),
            format!(
                "- fixed: {} failed {} then passed at turn {}{with}",
                code(&f.detail, 120),
                if f.count == 1 {
                    "once".to_owned()
                } else {
                    format!("{}×", f.count)
                },
                r.turn
            ),
        ));
    }
    s
}

fn file_line(path: &str, f: &FileStats) -> String {
    let mut parts = vec![if f.created { "created" } else { "modified" }.to_owned()];
    if f.edits > 0 {
        parts.push(count(f.edits, "edit", "edits"));
    }
    if f.writes > 0 {
        parts.push(count(f.writes, "write", "writes"));
    }
    if f.added + f.removed > 0 {
        let size = if f.removed == 0 {
            format!("+{}", count(f.added, "line", "lines"))
        } else {
            format!("+{} -{}", f.added, f.removed)
        };
        parts.push(if f.unsized_changes > 0 {
            format!("{size} and changes of unknown size")
        } else {
            size
        });
    }
    format!("- {} ({})", code(path, 160), parts.join(", "))
}

/// Files changed this session, most recent change first.
pub(crate) fn files(c: &Ctx<'_>) -> Section {
    let st = c.state;
    let mut s = Section::new(
        "files",
        Some("## Files changed this session"),
        Some("files"),
    );
    let mut changed: Vec<(&String, &FileStats)> = st
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
    for (path, f) in changed.iter().take(FILES_SHOWN_MAX) {
        let rel = relative(path, c.project);
        s.lines.push(Line::new(
            Class::File,
            Some(format!("file:{rel}")),
            rel,
            file_line(rel, f),
        ));
    }
    let more = changed.len().saturating_sub(FILES_SHOWN_MAX);
    s.omit(more, Class::File);
    if more > 0 {
        s.lines.push(Line::new(
            Class::Summary,
            None,
            "more-files",
            format!(
                "- and {more} more: `sjournal show --session {} files`",
                c.session
            ),
        ));
    }
    if !s.lines.is_empty() && st.files.shell_mutations > 0 {
        s.lines.push(Line::new(
            Class::FileNote,
            None,
            "shell",
            "- (+ changes made through shell commands are not tracked)".into(),
        ));
    }
    s
}

/// Subagents still running, those that finished in the last turn, and background work.
pub(crate) fn agents(c: &Ctx<'_>) -> Section {
    let st = c.state;
    let mut s = Section::new(
        "agents",
        Some("## Subagents and background work"),
        Some("agents"),
    );
    let mut subs: Vec<(&String, &crate::fold::Subagent)> = st.subagents.by_id.iter().collect();
    subs.sort_by_key(|(id, a)| (a.start_seq.or(a.stop_seq).unwrap_or(0), (*id).clone()));
    let last_turn = st
        .left_off
        .running
        .as_ref()
        .map_or(st.left_off.turn, |r| r.turn);
    for (id, a) in &subs {
        let ty = a
            .agent_type
            .as_deref()
            .map(one_line)
            .unwrap_or_else(|| "agent".into());
        let short: String = id.chars().take(8).collect();
        let what = a
            .description
            .as_deref()
            .map(|d| format!(": \"{}\"", cut(&one_line(d), 160)))
            .unwrap_or_default();
        let key = Some(format!("agent:{id}"));
        if a.start_seq.is_some() && a.stop_seq.is_none() {
            s.lines.push(Line::new(
                Class::AgentRunning,
                key,
                format!("{ty} {short}"),
                format!("- running: {ty} {short}{what} (since turn {})", a.turn),
            ));
        } else if a.stop_seq.is_some() && a.turn >= last_turn && last_turn > 0 {
            let result = a
                .result
                .as_deref()
                .map(|r| format!(" → \"{}\"", cut(&one_line(r), SUBAGENT_RESULT_CHARS)))
                .unwrap_or_default();
            s.lines.push(Line::new(
                Class::AgentDone,
                key,
                format!("{ty} {short}"),
                format!("- finished: {ty} {short}{what}{result}"),
            ));
        }
    }
    for b in st.background.iter().filter(|b| b.status == "running") {
        if st.subagents.by_id.contains_key(&b.id) {
            continue;
        }
        let short: String = b.id.chars().take(8).collect();
        s.lines.push(Line::new(
            Class::AgentRunning,
            Some(format!("bg:{}", b.id)),
            format!("background {short}"),
            format!(
                "- background {} {short}: \"{}\"",
                one_line(&b.kind),
                cut(&one_line(&b.description), 160)
            ),
        ));
    }
    s
}

/// Mode and environment, where they differ from how the session started.
pub(crate) fn mode(c: &Ctx<'_>) -> Section {
    let id = &c.state.identity;
    let mut s = Section::new("mode", Some("## Mode"), None);
    if let Some(m) = id.permission_mode.as_deref() {
        if m == "plan" || id.first_permission_mode.as_deref().is_some_and(|f| f != m) {
            s.lines.push(Line::new(
                Class::Mode,
                Some("mode:permission".into()),
                "permission mode",
                format!("- permission mode: {}", one_line(m)),
            ));
        }
    }
    if let (Some(m), Some(f)) = (id.model.as_deref(), id.first_model.as_deref()) {
        if m != f {
            s.lines.push(Line::new(
                Class::Mode,
                Some("mode:model".into()),
                "model",
                format!(
                    "- model: {} (the session started with {})",
                    one_line(m),
                    one_line(f)
                ),
            ));
        }
    }
    if let (Some(cwd), Some(p)) = (id.cwd.as_deref(), c.project) {
        if cwd.trim_end_matches('/') != p.trim_end_matches('/') {
            s.lines.push(Line::new(
                Class::Mode,
                Some("mode:cwd".into()),
                "working directory",
                format!("- working directory: {}", code(relative(cwd, Some(p)), 160)),
            ));
        }
    }
    s
}

/// The nudge after a failure (opt-in): the same call failed the same way before in this
/// session, or it was fixed before; and what fixed it then.
pub(crate) fn failure_nudge(c: &Ctx<'_>, event_seq: u64) -> Section {
    let mut s = Section::new("failures", None, Some("failures"));
    let Some(f) = c.state.failures.items.iter().find(|f| f.seq == event_seq) else {
        return s;
    };
    if f.identical == 0 && f.fixed_before.is_none() {
        return s;
    }
    let mut text = if f.identical > 0 {
        format!(
            "sjournal: {} failed the same way before in this session ({} in all, the first at seq {})",
            code(&f.detail, 120),
            count(f.count, "time", "times"),
            f.first_seq
        )
    } else {
        format!(
            "sjournal: {} failed before in this session ({} in all)",
            code(&f.detail, 120),
            count(f.count, "time", "times")
        )
    };
    if let Some(r) = &f.fixed_before {
        let with = r
            .variant
            .as_deref()
            .map(|v| format!(" with {}", code(v, 120)))
            .unwrap_or_default();
        text.push_str(&format!("; it passed at turn {}{with}", r.turn));
    }
    text.push('.');
    s.lines.push(Line::new(
        Class::Failure,
        Some(format!("nudge:{}", f.key)),
        cut(&f.detail, 60),
        text,
    ));
    s
}
