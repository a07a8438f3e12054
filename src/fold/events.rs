//! Folding host events.

use std::cell::OnceCell;

use serde::Deserialize;

use super::bounded::{bump, cut, evict_oldest, key, set};
use super::{tally, Compaction, Ending, Link, OpenCall, Prompt, RecordView, State, Subagent};
use crate::event::lenient::{Obj, Str};
use crate::event::tools::ToolInput;
use crate::event::{Event, EventKind, FileOp, Host};
use crate::limits::{
    DETAIL_MAX_BYTES, FILES_TRACKED_MAX, INSTRUCTION_FILES_KEPT, LINKS_MAX, OPEN_CALLS_MAX,
    OTHER_NAMES_MAX, PROMPTS_KEPT, STATE_TEXT_MAX_BYTES, SUBAGENTS_TRACKED_MAX, SUMMARY_MAX_BYTES,
    TOOLS_TRACKED_MAX,
};

/// Statistics of tools beyond `TOOLS_TRACKED_MAX` distinct names are kept under this name.
pub const OTHER_TOOLS: &str = "(other tools)";

fn text(s: Option<&str>) -> Option<String> {
    s.map(|s| cut(s, STATE_TEXT_MAX_BYTES).0)
}

/// An event's tool input, parsed at most once per event: a Post's tool bookkeeping and its
/// recovery bookkeeping (`work_after`) both read it.
pub(super) struct Input<'e, 'a> {
    e: &'e Event<'a>,
    parsed: OnceCell<ToolInput<'a>>,
}

impl<'e, 'a> Input<'e, 'a> {
    fn new(e: &'e Event<'a>) -> Self {
        Input {
            e,
            parsed: OnceCell::new(),
        }
    }

    pub(super) fn get(&self) -> &ToolInput<'a> {
        self.parsed.get_or_init(|| self.e.tool_input())
    }
}

impl State {
    pub(super) fn apply_event(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        let input = Input::new(e);
        self.counts.events += 1;
        self.counts.by_kind.bump_slot(tally::kind_slot(e.kind));
        self.counts.by_host.bump_slot(tally::host_slot(e.host));
        if e.kind == EventKind::Other
            && (self.counts.other_names.len() < OTHER_NAMES_MAX
                || self.counts.other_names.contains_key(e.name.as_ref()))
        {
            bump(&mut self.counts.other_names, &e.name);
        }
        self.identify(e, rec.seq);
        self.work_before(e, rec);
        let compactions = self.compactions.count;
        self.model_view_event(e, rec);
        match e.kind {
            EventKind::SessionStart => self.session_start(e, rec),
            EventKind::UserPromptSubmit => self.turn_start(e, rec),
            EventKind::PreToolUse => self.tool_pre(e, rec),
            EventKind::PostToolUse | EventKind::PostToolUseFailure => {
                self.tool_post(e, &input, rec)
            }
            EventKind::PermissionRequest => self.tools.permission_requests += 1,
            EventKind::PermissionDenied => self.tool_denied(e),
            EventKind::PostToolBatch => self.tools.batches += 1,
            EventKind::SubagentStart | EventKind::SubagentStop => self.subagent(e, rec),
            EventKind::Stop => {
                if !self.turns.open && e.prompt.is_some() {
                    // A turn reported only once it ended (OpenClaw onPostTurn).
                    self.turn_start(e, rec);
                }
                self.turn_tool_calls(e);
                self.turn_end(false, rec.seq);
            }
            EventKind::StopFailure => self.turn_end(true, rec.seq),
            EventKind::PreCompact | EventKind::PostCompact => self.compaction(e, rec),
            EventKind::CwdChanged => set(&mut self.identity.cwd, e.new_cwd.as_deref()),
            EventKind::SessionEnd => self.session_end(e, rec),
            EventKind::InstructionsLoaded => self.instructions_loaded(e),
            _ => {}
        }
        if let Some((op, path)) = &e.file_touch {
            self.touch_file(*op, path, rec.seq);
        }
        self.work_after(e, &input, rec, compactions);
        self.model_view_after(e);
    }

    /// The event's prompt as its user wrote it: Gemini CLI's, without the exact context block
    /// a SessionStart of the session was given (`model_view::user_prompt`).
    pub fn user_prompt<'e>(&self, e: &'e Event<'_>) -> Option<&'e str> {
        let p = e.prompt.as_deref()?;
        Some(match e.host {
            Host::Gemini => super::model_view::user_prompt(&self.model_view, p),
            _ => p,
        })
    }

    fn instructions_loaded(&mut self, e: &Event<'_>) {
        let files = &mut self.requests.files;
        if let Some(p) = e.file_path.as_deref() {
            let fits = !p.is_empty() && p.len() <= DETAIL_MAX_BYTES;
            if fits && !files.iter().any(|f| f == p) && files.len() < INSTRUCTION_FILES_KEPT {
                files.push(p.to_owned());
            }
        }
    }

    fn identify(&mut self, e: &Event<'_>, seq: u64) {
        let id = &mut self.identity;
        if e.host != Host::Unknown {
            set(&mut id.host, Some(e.host.as_str()));
        }
        if let Some(sid) = e.session_id.as_deref() {
            match id.session_id.as_deref() {
                None => id.session_id = Some(key(sid)),
                Some(mine) if mine != sid => self.link("event", Some(sid), seq),
                _ => {}
            }
        }
        let id = &mut self.identity;
        set(&mut id.cwd, e.cwd.as_deref());
        set(&mut id.model, e.model.as_deref());
        set(&mut id.permission_mode, e.permission_mode.as_deref());
    }

    /// Remembers a link once per (relation, session).
    fn link(&mut self, relation: &str, session: Option<&str>, seq: u64) {
        let links = &mut self.identity.links;
        let known = links
            .iter()
            .any(|l| l.relation == relation && l.session.as_deref() == session);
        // Links without the other id (resume, clear...) are kept each time they happen.
        if (known && session.is_some()) || links.len() >= LINKS_MAX {
            return;
        }
        links.push(Link {
            relation: key(relation),
            session: session.map(key),
            seq,
        });
    }

    fn session_start(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        let id = &mut self.identity;
        id.starts += 1;
        set(&mut id.start_source, e.source.as_deref());
        set(&mut id.session_kind, e.session_kind.as_deref());
        set(&mut id.agent_type, e.agent_type.as_deref());
        self.ended = None;
        let source = e.source.as_deref();
        if let Some(rel @ ("resume" | "clear" | "fork" | "compact")) = source {
            self.link(rel, None, rec.seq);
        }
        if let Some(parent) = e.parent_session.as_deref() {
            self.link("parent", Some(parent), rec.seq);
        }
        if source == Some("compact") {
            let c = self.compaction_for(|c| c.resumed_seq.is_none(), rec);
            c.resumed_seq = Some(rec.seq);
        }
    }

    fn turn_start(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        self.turns.count += 1;
        self.turns.open = true;
        self.turns.last_prompt_seq = Some(rec.seq);
        if let Some(p) = self.user_prompt(e) {
            let (text, was_cut) = cut(p, STATE_TEXT_MAX_BYTES);
            if self.prompts.len() >= PROMPTS_KEPT {
                self.prompts.pop_front();
            }
            self.prompts.push_back(Prompt {
                seq: rec.seq,
                ts_unix_ns: rec.ts_unix_ns,
                prompt_id: e.prompt_id.as_deref().map(key),
                text,
                cut: was_cut,
            });
        }
    }

    /// A turn ended: at-stop context entries replace the persistent ones of the same key,
    /// ephemeral entries are dropped.
    fn turn_end(&mut self, failed: bool, seq: u64) {
        self.turns.open = false;
        self.turns.last_stop_seq = Some(seq);
        if failed {
            self.turns.stop_failures += 1;
        } else {
            self.turns.stops += 1;
        }
        self.abandon_open_calls();
        let ctx = &mut self.context;
        let staged = std::mem::take(&mut ctx.at_stop);
        ctx.persistent.extend(staged);
        ctx.ephemeral.clear();
    }

    fn session_end(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        self.ended = Some(Ending {
            seq: rec.seq,
            ts_unix_ns: rec.ts_unix_ns,
            event: key(&e.name),
            reason: e.reason.as_deref().map(key),
            duration_ms: e.session_duration_ms,
        });
        self.turns.open = false;
        self.abandon_open_calls();
        self.context.ephemeral.clear();
    }

    /// A call still open when its turn or session ends will not complete (denied at a prompt,
    /// interrupted): it is no longer in progress.
    fn abandon_open_calls(&mut self) {
        self.tools.open_dropped += self.tools.open.len() as u64;
        self.tools.open.clear();
    }

    fn tool_stats(&mut self, tool: &str) -> &mut super::ToolStats {
        let by = &mut self.tools.by_tool;
        let name = if by.contains_key(tool) || by.len() < TOOLS_TRACKED_MAX {
            tool
        } else {
            OTHER_TOOLS
        };
        if !by.contains_key(name) {
            by.insert(key(name), Default::default());
        }
        by.get_mut(name).expect("inserted above")
    }

    fn tool_pre(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        let Some(t) = &e.tool else { return };
        let Some(id) = t.use_id.as_deref() else {
            return;
        };
        let detail = t
            .detail
            .clone()
            .or_else(|| e.tool_input().detail())
            .map(|d| cut(d.lines().next().unwrap_or(""), DETAIL_MAX_BYTES).0);
        self.tools.open.insert(
            key(id),
            OpenCall {
                tool: key(&t.name),
                seq: rec.seq,
                ts_unix_ns: rec.ts_unix_ns,
                detail,
                agent_id: e.agent_id.as_deref().map(key),
            },
        );
        self.tools.open_dropped += evict_oldest(&mut self.tools.open, OPEN_CALLS_MAX, |c| c.seq);
    }

    fn tool_post(&mut self, e: &Event<'_>, input: &Input<'_, '_>, rec: &RecordView<'_>) {
        let Some(t) = &e.tool else { return };
        let opened = t
            .use_id
            .as_deref()
            .and_then(|id| self.tools.open.remove(id));
        let duration = t.duration_ms.or_else(|| {
            opened
                .as_ref()
                .map(|o| (rec.ts_unix_ns.saturating_sub(o.ts_unix_ns).max(0) / 1_000_000) as u64)
        });
        self.tools.calls += 1;
        if t.failed {
            self.tools.failures += 1;
        }
        let stats = self.tool_stats(&t.name);
        stats.calls += 1;
        if t.failed {
            stats.failures += 1;
        }
        if let Some(ms) = duration {
            stats.timed += 1;
            stats.total_ms = stats.total_ms.saturating_add(ms);
            stats.max_ms = stats.max_ms.max(ms);
        }
        if let Some(agent) = e.agent_id.as_deref() {
            if let Some(s) = self.subagents.by_id.get_mut(agent) {
                s.tool_calls += 1;
                s.last_seq = rec.seq;
            }
        }
        if !t.failed && crate::event::tools::file_op(&t.name).is_some() {
            for (op, path) in input.get().touched(&t.name) {
                self.touch_file(op, path, rec.seq);
            }
        }
    }

    fn tool_denied(&mut self, e: &Event<'_>) {
        self.tools.denied += 1;
        let Some(t) = &e.tool else { return };
        if let Some(id) = t.use_id.as_deref() {
            self.tools.open.remove(id);
        }
        self.tool_stats(&t.name).denied += 1;
    }

    /// Tool calls reported in bulk at turn end (OpenClaw `toolCalls: [{name}]`).
    fn turn_tool_calls(&mut self, e: &Event<'_>) {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Call<'a> {
            #[serde(borrow)]
            name: Str<'a>,
            #[serde(borrow, rename = "toolName")]
            tool_name: Str<'a>,
        }
        let Some(raw) = e.turn_tool_calls else { return };
        let Ok(calls) = serde_json::from_str::<Vec<Obj<Call>>>(raw.get()) else {
            return;
        };
        for c in calls.into_iter().filter_map(|c| c.0) {
            let name = c.name.0.or(c.tool_name.0);
            let name = name.as_deref().unwrap_or("(unnamed)");
            self.tools.calls += 1;
            self.tool_stats(name).calls += 1;
        }
    }

    pub(super) fn touch_file(&mut self, op: FileOp, path: &str, seq: u64) {
        let files = &mut self.files.by_path;
        if !files.contains_key(path) {
            files.insert(
                key(path),
                super::FileStats {
                    first_seq: seq,
                    ..Default::default()
                },
            );
        }
        let f = files.get_mut(path).expect("inserted above");
        f.last_seq = seq;
        match op {
            FileOp::Read => f.reads += 1,
            FileOp::Write => f.writes += 1,
            FileOp::Edit => f.edits += 1,
        }
        if op != FileOp::Read {
            f.last_change_seq = seq;
        }
        self.files.forgotten += evict_oldest(files, FILES_TRACKED_MAX, |f| f.last_seq);
    }

    fn subagent(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        if e.agent_type.as_deref() == Some("") {
            // The host's own agent (Claude Code's compactor), not a subagent of the session.
            return self.internal_agent(e, rec);
        }
        let id = e.agent_id.as_deref().unwrap_or("");
        let subs = &mut self.subagents;
        if !subs.by_id.contains_key(id) {
            subs.by_id.insert(key(id), Subagent::default());
        }
        let s = subs.by_id.get_mut(id).expect("inserted above");
        set(&mut s.agent_type, e.agent_type.as_deref());
        s.last_seq = rec.seq;
        if e.kind == EventKind::SubagentStart {
            subs.started += 1;
            s.start_seq = Some(rec.seq);
        } else {
            subs.stopped += 1;
            s.stop_seq = Some(rec.seq);
        }
        subs.forgotten += evict_oldest(&mut subs.by_id, SUBAGENTS_TRACKED_MAX, |s| s.last_seq);
    }

    /// The compaction an event belongs to: the last one if `fits` it, else a new one.
    pub(super) fn compaction_for(
        &mut self,
        fits: impl Fn(&Compaction) -> bool,
        rec: &RecordView<'_>,
    ) -> &mut Compaction {
        let c = &mut self.compactions;
        if !c.last.as_ref().is_some_and(fits) {
            c.count += 1;
            c.last = Some(Compaction {
                seq: rec.seq,
                ts_unix_ns: rec.ts_unix_ns,
                ..Default::default()
            });
        }
        c.last.as_mut().expect("set above")
    }

    fn compaction(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        let c = if e.kind == EventKind::PreCompact {
            // A PreCompact always opens a compaction.
            self.compaction_for(|_| false, rec)
        } else {
            self.compaction_for(|c| c.post_seq.is_none(), rec)
        };
        if e.kind == EventKind::PreCompact {
            c.pre_seq = Some(rec.seq);
        } else {
            c.post_seq = Some(rec.seq);
        }
        set(&mut c.trigger, e.trigger.as_deref());
        if let Some(s) = e.summary.as_deref() {
            c.summary = Some(cut(s, SUMMARY_MAX_BYTES).0);
            c.summary_seq = Some(rec.seq);
        }
        if let Some(s) = text(e.custom_instructions.as_deref()) {
            c.custom_instructions = Some(s);
        }
        c.context_usage_percent = e.context_usage_percent.or(c.context_usage_percent);
        c.message_count = e.message_count.or(c.message_count);
    }
}
