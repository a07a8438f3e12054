//! Fitting a block to its budget and assembling its text and items.
//!
//! A block is a list of sections; a section a title and lines; each line has a class (what the
//! truncation order acts on) and, when it carries an item, the item's key. Nothing is cut
//! while the block fits. Otherwise fitting runs in passes: each section over its hard cap is
//! shrunk toward it (so a huge note cannot push out the rest); then the truncation steps run
//! in order while the block is over budget, each stopping at its section's reserve; then the
//! same steps run without reserves; then whatever is still over goes from the least important
//! section up, whole lines; last, the frame (the header, the pointer), whole lines too. What
//! went is listed (`dropped`) and the block closes with a line that says what was left out
//! and the command that prints it (a short form when the long one does not fit). Nothing is
//! ever cut at the budget: a budget too small even for the closing line gives no text at
//! all. The text is then made safe to wrap (`text::neutralise`), in one place.

use std::collections::BTreeMap;

use super::text::{chars, cut};
use crate::format::payload::InjectedItem;
use crate::limits::{
    CONTEXT_BUDGET_DEFAULT_CHARS, INSTRUCTIONS_KEPT_NEWEST, LEFT_OFF_CUT_CHARS, NOTES_CAP_PERCENT,
    SECTION_SHARES_CHARS, TODOS_SHOWN_FULL_MAX,
};

/// What a line is, for the truncation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Header and pointer: dropped last, whole lines.
    Frame,
    Note,
    Original,
    Instruction,
    Latest,
    Plan,
    TodoDone,
    TodoOpen,
    /// "N done", "and N more todos", "and N more files": summaries made by fitting.
    Summary,
    LeftOff,
    Action,
    Failure,
    Fixed,
    File,
    /// "(+ changes made through Bash are not tracked)".
    FileNote,
    AgentRunning,
    AgentDone,
    Mode,
    /// A section the caller supplied (handoff, project memory).
    Extra,
}

#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub key: Option<String>,
    text: String,
    /// `text`'s length in characters (kept with it: fitting asks for it often).
    chars: usize,
    pub class: Class,
    /// How the line is named in `dropped` (`files: src/a.rs`).
    pub label: String,
}

impl Line {
    pub fn text(&self) -> &str {
        &self.text
    }

    fn set_text(&mut self, text: String) {
        self.chars = chars(&text);
        self.text = text;
    }

    pub fn new(class: Class, key: Option<String>, label: impl Into<String>, text: String) -> Line {
        Line {
            key,
            chars: chars(&text),
            text,
            class,
            label: label.into(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Section {
    /// `frame`, `notes`, `instructions`, `todos`, `left-off`, `failures`, `files`, `agents`,
    /// `mode`, `pointer`, `extra`.
    pub id: &'static str,
    pub title: Option<String>,
    pub lines: Vec<Line>,
    /// The list `sjournal show` prints in full for what this section leaves out.
    pub list: Option<&'static str>,
    /// Lines the builder left out already (past its own count limit), and what they are.
    pub omitted: usize,
    pub omitted_class: Class,
}

impl Section {
    pub fn new(id: &'static str, title: Option<&str>, list: Option<&'static str>) -> Section {
        Section {
            id,
            title: title.map(str::to_owned),
            lines: Vec::new(),
            list,
            omitted: 0,
            omitted_class: Class::Frame,
        }
    }

    /// Notes `n` lines of `class` left out by the builder.
    pub fn omit(&mut self, n: usize, class: Class) {
        if n > 0 {
            self.omitted += n;
            self.omitted_class = class;
        }
    }

    fn len(&self) -> usize {
        if self.lines.is_empty() {
            return 0;
        }
        let title = self.title.as_deref().map_or(0, |t| chars(t) + 1);
        title + self.lines.iter().map(|l| l.chars).sum::<usize>() + self.lines.len() - 1
    }

    fn count(&self, class: Class) -> usize {
        self.lines.iter().filter(|l| l.class == class).count()
    }
}

/// The fitted block.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fitted {
    pub text: String,
    pub items: Vec<InjectedItem>,
    pub dropped: Vec<String>,
}

/// Fitting state: the sections and what has gone.
struct Fit<'a> {
    secs: Vec<Section>,
    budget: usize,
    scale: f64,
    dropped: Vec<String>,
    /// Lines left out, by the list that has them in full, and by what they are.
    left_out: BTreeMap<(&'static str, &'static str), usize>,
    session: &'a str,
    /// During the cap pass: how far the section being capped is over its cap (a cut takes at
    /// least this much).
    cap_excess: usize,
    /// The closing marker's length, while `dropped` and `left_out` stay as they are.
    marker_len: std::cell::Cell<Option<usize>>,
    /// The closing marker in its short form (when the long one does not fit).
    short_marker: bool,
}

/// A step of the truncation order: one shrinking action, repeated while it helps.
#[derive(Debug, Clone, Copy)]
enum Step {
    DropLast(&'static str, Class),
    DropOldestFile,
    CollapseDone,
    DropInstructionsBeyondNewest,
    DropOlderFailures,
    CutLeftOff,
    DropRunningAgents,
    DropOpenTodosBeyondFirst,
    CutLongest(&'static str, &'static [Class], usize),
}

/// The truncation order, first to go first.
const ORDER: &[Step] = &[
    Step::DropLast("failures", Class::Fixed),
    Step::DropLast("mode", Class::Mode),
    Step::DropLast("agents", Class::AgentDone),
    Step::DropOldestFile,
    Step::CollapseDone,
    Step::DropInstructionsBeyondNewest,
    Step::DropOlderFailures,
    Step::CutLeftOff,
    Step::DropRunningAgents,
    Step::DropOpenTodosBeyondFirst,
    Step::CutLongest(
        "instructions",
        &[Class::Instruction, Class::Original, Class::Latest],
        80,
    ),
    Step::CutLongest("notes", &[Class::Note], 60),
    Step::CutLongest("turn", &[Class::Note], 60),
];

/// Sections emptied from the least important up when the steps were not enough.
const LAST_RESORT: &[&str] = &[
    "mode",
    "agents",
    "files",
    "failures",
    "todos",
    "left-off",
    "extra",
    "instructions",
    "turn",
    "notes",
];

fn step_section(s: Step) -> &'static str {
    match s {
        Step::DropLast(sec, _) | Step::CutLongest(sec, _, _) => sec,
        Step::DropOldestFile => "files",
        Step::CollapseDone | Step::DropOpenTodosBeyondFirst => "todos",
        Step::DropInstructionsBeyondNewest => "instructions",
        Step::DropOlderFailures => "failures",
        Step::CutLeftOff => "left-off",
        Step::DropRunningAgents => "agents",
    }
}

/// What a dropped line counts as in the closing marker.
fn what(class: Class) -> &'static str {
    match class {
        Class::TodoDone => "done todo",
        Class::TodoOpen => "todo",
        Class::Instruction | Class::Original | Class::Latest => "instruction",
        Class::Failure => "failure",
        Class::Fixed => "fixed failure",
        Class::File => "file",
        Class::AgentRunning | Class::AgentDone => "subagent",
        Class::Mode => "mode line",
        Class::Note => "note",
        Class::LeftOff | Class::Action => "left-off line",
        Class::Plan => "plan",
        Class::Extra => "extra line",
        _ => "line",
    }
}

impl Fit<'_> {
    fn sec(&mut self, id: &str) -> Option<&mut Section> {
        self.secs.iter_mut().find(|s| s.id == id)
    }

    fn sec_len(&self, id: &str) -> usize {
        self.secs
            .iter()
            .filter(|s| s.id == id)
            .map(Section::len)
            .sum()
    }

    fn body_len(&self) -> usize {
        let lens: Vec<usize> = self
            .secs
            .iter()
            .map(Section::len)
            .filter(|&l| l > 0)
            .collect();
        lens.iter().sum::<usize>() + 2 * lens.len().saturating_sub(1)
    }

    fn has_pointer(&self) -> bool {
        self.secs
            .iter()
            .any(|s| s.id == "pointer" && !s.lines.is_empty())
    }

    /// The closing marker: a suffix of the pointer line when there is one, else a line.
    fn marker(&self) -> Option<String> {
        marker(
            self.budget,
            &self.left_out,
            &self.dropped,
            self.session,
            self.has_pointer(),
            self.short_marker,
        )
    }

    fn total(&self) -> usize {
        let extra = match self.marker_len.get() {
            Some(n) => n,
            None => {
                let n = match self.marker() {
                    None => 0,
                    Some(m) if self.has_pointer() => chars(&m),
                    Some(m) => 2 + chars(&m),
                };
                self.marker_len.set(Some(n));
                n
            }
        };
        self.body_len() + extra
    }

    /// Notes that a line went (or was cut): the marker changes.
    fn gone(&mut self, what: String) {
        self.dropped.push(what);
        self.marker_len.set(None);
    }

    fn over(&self) -> usize {
        self.total().saturating_sub(self.budget)
    }

    fn share(&self, id: &str) -> (usize, usize) {
        if id == "notes" {
            return (0, self.budget * NOTES_CAP_PERCENT / 100);
        }
        SECTION_SHARES_CHARS
            .iter()
            .find(|(s, _, _)| *s == id)
            .map(|&(_, r, c)| {
                // Reserves shrink with a smaller budget; caps never go below their size at
                // the default budget (below it the truncation order does the work).
                (
                    (r as f64 * self.scale) as usize,
                    (c as f64 * self.scale.max(1.0)) as usize,
                )
            })
            .unwrap_or((0, usize::MAX))
    }

    fn note_drop(&mut self, sec: &'static str, list: Option<&'static str>, line: &Line) {
        self.gone(format!("{sec}: {}", line.label));
        *self
            .left_out
            .entry((list.unwrap_or(""), what(line.class)))
            .or_default() += 1;
    }

    /// Removes the last line of `class` in `sec`.
    fn drop_last(&mut self, sec: &'static str, class: Class) -> bool {
        let Some(s) = self.sec(sec) else { return false };
        let Some(i) = s.lines.iter().rposition(|l| l.class == class) else {
            return false;
        };
        let list = s.list;
        let line = s.lines.remove(i);
        self.note_drop(sec, list, &line);
        true
    }

    /// Sets (or adds, after the last line of `after`) the summary line `text`.
    fn summary(&mut self, sec: &'static str, tag: &str, text: String, after: Class) {
        let Some(s) = self.sec(sec) else { return };
        if let Some(l) = s
            .lines
            .iter_mut()
            .find(|l| l.class == Class::Summary && l.label == tag)
        {
            l.set_text(text);
            return;
        }
        let at = s
            .lines
            .iter()
            .rposition(|l| l.class == after)
            .map_or(s.lines.len(), |i| i + 1);
        s.lines
            .insert(at, Line::new(Class::Summary, None, tag, text));
    }

    fn apply(&mut self, step: Step) -> bool {
        let show =
            |list: &str, session: &str| format!("`sjournal show --session {session} {list}`");
        match step {
            Step::DropLast(sec, class) => self.drop_last(sec, class),
            Step::DropOldestFile => {
                if !self.drop_last("files", Class::File) {
                    return false;
                }
                let n = self.left_out.get(&("files", "file")).copied().unwrap_or(0);
                let text = format!("- and {n} more: {}", show("files", self.session));
                self.summary("files", "more-files", text, Class::File);
                true
            }
            Step::CollapseDone => {
                let Some(s) = self.sec("todos") else {
                    return false;
                };
                let n = s.count(Class::TodoDone);
                if n == 0 {
                    return false;
                }
                let list = s.list;
                let at = s.lines.iter().position(|l| l.class == Class::TodoDone);
                let gone: Vec<Line> = s
                    .lines
                    .iter()
                    .filter(|l| l.class == Class::TodoDone)
                    .cloned()
                    .collect();
                s.lines.retain(|l| l.class != Class::TodoDone);
                let key = gone.first().and_then(|l| l.key.clone());
                s.lines.insert(
                    at.unwrap_or(0).min(s.lines.len()),
                    Line::new(Class::Summary, key, "done", format!("- [x] {n} done")),
                );
                for l in &gone {
                    self.note_drop("todos", list, l);
                }
                true
            }
            Step::DropInstructionsBeyondNewest => {
                let n = self
                    .sec("instructions")
                    .map_or(0, |s| s.count(Class::Instruction));
                n > INSTRUCTIONS_KEPT_NEWEST && self.drop_last("instructions", Class::Instruction)
            }
            Step::DropOlderFailures => {
                let n = self.sec("failures").map_or(0, |s| s.count(Class::Failure));
                n > 1 && self.drop_last("failures", Class::Failure)
            }
            Step::CutLeftOff => {
                let Some(s) = self.sec("left-off") else {
                    return false;
                };
                let Some(l) = s
                    .lines
                    .iter_mut()
                    .find(|l| l.class == Class::LeftOff && l.chars > LEFT_OFF_CUT_CHARS)
                else {
                    return false;
                };
                l.set_text(cut(&l.text, LEFT_OFF_CUT_CHARS));
                self.gone("left-off: cut".into());
                true
            }
            Step::DropRunningAgents => self.drop_last("agents", Class::AgentRunning),
            Step::DropOpenTodosBeyondFirst => {
                let n = self.sec("todos").map_or(0, |s| s.count(Class::TodoOpen));
                if n <= TODOS_SHOWN_FULL_MAX || !self.drop_last("todos", Class::TodoOpen) {
                    return false;
                }
                let more = self.left_out.get(&("todos", "todo")).copied().unwrap_or(0);
                let text = format!("- and {more} more: {}", show("todos", self.session));
                self.summary("todos", "more-todos", text, Class::TodoOpen);
                true
            }
            Step::CutLongest(sec, classes, floor) => {
                let over = self.over().max(self.cap_excess).max(1);
                let Some(s) = self.sec(sec) else { return false };
                let Some(l) = s
                    .lines
                    .iter_mut()
                    .filter(|l| classes.contains(&l.class) && l.chars > floor)
                    .max_by_key(|l| l.chars)
                else {
                    return false;
                };
                let keep = l.chars.saturating_sub(over).max(floor);
                l.set_text(cut(&l.text, keep));
                let label = format!("{sec}: {} (cut)", l.label);
                self.gone(label);
                true
            }
        }
    }

    /// Runs `step` while the block is over budget and its section is above `floor`.
    fn run(&mut self, step: Step, floor: impl Fn(&Self) -> usize) {
        let sec = step_section(step);
        while self.over() > 0 && self.sec_len(sec) > floor(self) {
            if !self.apply(step) {
                break;
            }
        }
    }
}

/// The closing marker: what was left out, and the commands that print it. With a pointer
/// line (which names the command already), a suffix for it; else a line of its own.
fn marker(
    budget: usize,
    left_out: &BTreeMap<(&'static str, &'static str), usize>,
    dropped: &[String],
    session: &str,
    suffix: bool,
    short: bool,
) -> Option<String> {
    if dropped.is_empty() {
        return None;
    }
    if short {
        return Some(format!(
            "[sjournal: left out to fit {budget} chars; in full: sjournal show --session {session}]"
        ));
    }
    let mut parts: Vec<String> = left_out
        .iter()
        .map(|((_, w), n)| format!("{n} {w}{}", if *n == 1 { "" } else { "s" }))
        .collect();
    if dropped
        .iter()
        .any(|d| d.ends_with("(cut)") || d.ends_with(": cut"))
    {
        parts.push("some lines cut".into());
    }
    let mut lists: Vec<&str> = left_out
        .keys()
        .map(|(l, _)| *l)
        .filter(|l| !l.is_empty())
        .collect();
    lists.dedup();
    if suffix {
        let see = if lists.is_empty() {
            String::new()
        } else {
            format!(" (in full: {})", lists.join(", "))
        };
        return Some(format!(
            "\n[left out to fit {budget} chars: {}{see}]",
            parts.join(", ")
        ));
    }
    let fetch = if lists.is_empty() {
        format!("; in full: sjournal show --session {session}")
    } else {
        format!(
            "; in full: sjournal show --session {session} {}",
            lists.join("|")
        )
    };
    if parts.is_empty() {
        // Only the frame went (the header, the pointer).
        parts.push("the header".into());
    }
    Some(format!(
        "[sjournal: left out to fit {budget} chars: {}{fetch}]",
        parts.join(", ")
    ))
}

/// Fits `secs` into `budget` characters and assembles the text and its items.
pub(crate) fn fit(secs: Vec<Section>, budget: usize, session: &str) -> Fitted {
    let mut f = Fit {
        secs,
        budget,
        scale: budget as f64 / CONTEXT_BUDGET_DEFAULT_CHARS as f64,
        dropped: Vec::new(),
        left_out: BTreeMap::new(),
        session,
        cap_excess: 0,
        marker_len: std::cell::Cell::new(None),
        short_marker: false,
    };
    for s in &f.secs {
        if s.omitted > 0 {
            f.dropped.push(format!("{}: {} more", s.id, s.omitted));
            f.marker_len.set(None);
            *f.left_out
                .entry((s.list.unwrap_or(""), what(s.omitted_class)))
                .or_default() += s.omitted;
        }
    }
    // 1. Hard caps, section by section, with that section's own steps in order: only while
    //    the block is over budget (a section under no pressure keeps what it has).
    let ids: Vec<&'static str> = f.secs.iter().map(|s| s.id).collect();
    for id in ids {
        let cap = f.share(id).1;
        for &step in ORDER.iter().filter(|s| step_section(**s) == id) {
            while f.over() > 0 && f.sec_len(id) > cap {
                f.cap_excess = f.sec_len(id) - cap;
                if !f.apply(step) {
                    break;
                }
            }
        }
    }
    f.cap_excess = 0;
    // 2. The truncation order, keeping every section's reserve; 3. without reserves.
    for &step in ORDER {
        f.run(step, |f| f.share(step_section(step)).0);
    }
    for &step in ORDER {
        f.run(step, |_| 0);
    }
    // 4. Whole sections from the least important up.
    for &id in LAST_RESORT {
        while f.over() > 0 {
            let Some(s) = f
                .secs
                .iter_mut()
                .find(|s| s.id == id && !s.lines.is_empty())
            else {
                break;
            };
            let list = s.list;
            let line = s.lines.pop().expect("not empty");
            if !matches!(line.class, Class::Summary | Class::FileNote) {
                f.note_drop(id, list, &line);
            }
        }
    }
    // 5. The frame, whole lines last of all: the header's provenance sentence, the pointer
    //    (the closing line then names the command itself), the header's first line.
    for (id, keep) in [("frame", 1), ("pointer", 0), ("frame", 0)] {
        while f.over() > 0 {
            let Some(s) = f
                .secs
                .iter_mut()
                .find(|s| s.id == id && s.lines.len() > keep)
            else {
                break;
            };
            let line = s.lines.pop().expect("more lines than kept");
            f.gone(format!("{id}: {}", line.label));
        }
    }
    // 6. The closing line in its short form; 7. nothing at all, rather than a cut line, when
    //    even that does not fit.
    if f.over() > 0 {
        f.short_marker = true;
        f.marker_len.set(None);
    }
    if f.over() > 0 {
        let mut dropped = f.dropped;
        dropped.push("all: the budget is too small for the closing line".into());
        return Fitted {
            text: String::new(),
            items: Vec::new(),
            dropped,
        };
    }
    assemble(f)
}

fn assemble(f: Fit<'_>) -> Fitted {
    let marker = f.marker();
    let suffix = f.has_pointer();
    let mut parts: Vec<String> = Vec::new();
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for s in f.secs.iter().filter(|s| !s.lines.is_empty()) {
        let mut t = String::new();
        if let Some(title) = &s.title {
            t.push_str(title);
        }
        for l in &s.lines {
            if !t.is_empty() {
                t.push('\n');
            }
            t.push_str(&l.text);
            if let Some(k) = &l.key {
                match groups.iter_mut().find(|(g, _)| g == k) {
                    Some((_, v)) => v.push(&l.text),
                    None => groups.push((k.clone(), vec![&l.text])),
                }
            }
        }
        parts.push(t);
    }
    match marker {
        Some(m) if suffix => parts.last_mut().expect("the pointer").push_str(&m),
        Some(m) => parts.push(m),
        None => {}
    }
    // The one place injected text is made safe to wrap: no host's wrapper tag in it (same
    // length in characters, so the budget holds).
    let text = super::text::neutralise(&parts.join("\n\n")).into_owned();
    let dropped = f.dropped;
    debug_assert!(
        chars(&text) <= f.budget,
        "fitting left the block over budget"
    );
    let items = groups
        .into_iter()
        .map(|(key, lines)| InjectedItem {
            key,
            hash: item_hash(&lines.join("\n")),
        })
        .collect();
    Fitted {
        text,
        items,
        dropped,
    }
}

/// The hash an item is remembered by: blake3 of its text, the first 16 hex digits.
pub(crate) fn item_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..16].to_owned()
}
