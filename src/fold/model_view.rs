//! Compressions the host reports no event for. Gemini CLI fires PreCompress(auto) before every
//! model request, whether or not it then compresses, and nothing after; only its requests
//! (BeforeModel, which carries the conversation as `llm_request.messages`) show that the
//! history was rewritten. Within one process the conversation only grows, so:
//!
//! - a request whose messages do not begin with the previous request's messages (all but the
//!   last, which a retry may extend with a nudge) is a rewritten history: a compression; so is
//!   one whose second message newly is Gemini CLI's acknowledgement of a compressed history
//!   (a compression in a first turn of tool calls, whose requests all hold one text message);
//! - only the session's own requests count: none made while a tool call is under way (a
//!   subagent's chat runs inside its tool call; the compressor's requests fire no
//!   BeforeModel);
//! - a SessionStart (another process, the history reloaded from its record) starts over;
//! - a rewrite after a compaction journaled since the previous request (`/compress`:
//!   PreCompress(manual)) is that compaction, not another.
//!
//! The compressed history's first message holds the summary, after the session context: it
//! becomes the compaction's summary (the recovery block is gap-aware against it). Messages are
//! compared by digests of their bytes as journaled, so the rule is a function of the records.
//!
//! The requests also show what of sjournal's own text the history still holds. Gemini CLI puts
//! hook output in the conversation as `<hook_context>…</hook_context>` (`<` and `>` escaped),
//! and a compression keeps the latest turns as they were: a recovery block injected before it
//! may still be there after it. The session remembers what it injected (`injected`), and every
//! request of its own conversation marks the items of the injections it still holds as seen
//! again, so the next block leaves them out. A compaction's recovery block waits for the first
//! request after it (the host shows its compressed history only then, after the prompt that
//! would carry the block).
//!
//! The same record gives the prompt as its user wrote it: Gemini CLI puts the context a
//! SessionStart hook gave before the first prompt of a process; exactly that block, when it is
//! one sjournal journaled as injected, is taken off, and nothing else ([`user_prompt`]).

use crate::event::RawJson;
use serde::Deserialize;

use super::bounded::{cut, key, set};
use super::{InjectedBlock, ModelView, RecordView, State, ViewedRequest};
use crate::event::lenient::Str;
use crate::event::{Event, EventKind, Host};
use crate::format::hash::content_hash;
use crate::format::payload::Injected;
use crate::limits::{INJECTED_BLOCKS_KEPT, INJECTED_BLOCK_ITEMS_MAX, SEEN_MAX, SUMMARY_MAX_BYTES};

/// How Gemini CLI wraps the context a hook gives (in a user turn).
pub const HOOK_CONTEXT_OPEN: &str = "<hook_context>";
pub const HOOK_CONTEXT_CLOSE: &str = "</hook_context>";

/// `text` as Gemini CLI puts a hook's context in the conversation (`<` `>` escaped).
pub(crate) fn gemini_escaped(text: &str) -> String {
    text.replace('<', "&lt;").replace('>', "&gt;")
}

impl ModelView {
    /// The injection whose text (as injected, or as Gemini CLI escapes it) is `content`.
    fn block(&self, content: &str, at_start: bool) -> Option<&InjectedBlock> {
        if self.injected.is_empty() {
            return None;
        }
        let d = digest(content.as_bytes());
        self.injected
            .iter()
            .rev()
            .filter(|b| !at_start || b.event_kind == "SessionStart")
            .find(|b| b.digest == d || b.escaped == d)
    }

    /// The injections whose exact block a request's messages hold.
    fn held(&self, msgs: &[RawJson<'_>]) -> Vec<&InjectedBlock> {
        let mut out: Vec<&InjectedBlock> = Vec::new();
        if self.injected.is_empty() {
            return out;
        }
        for m in msgs {
            if !m.get().contains("hook_context") {
                continue;
            }
            let m = message(*m);
            let Some(text) = m.content.as_deref() else {
                continue;
            };
            let mut rest = text;
            while let Some(at) = rest.find(HOOK_CONTEXT_OPEN) {
                rest = &rest[at + HOOK_CONTEXT_OPEN.len()..];
                let Some(end) = rest.find(HOOK_CONTEXT_CLOSE) else {
                    break;
                };
                if let Some(b) = self.block(&rest[..end], false) {
                    if !out.iter().any(|o| o.seq == b.seq) {
                        out.push(b);
                    }
                }
                rest = &rest[end + HOOK_CONTEXT_CLOSE.len()..];
            }
        }
        out
    }
}

/// The prompt of a Gemini CLI BeforeAgent as its user wrote it: without the
/// `<hook_context>…</hook_context>` block Gemini CLI put before it, when that block is exactly
/// the context a SessionStart of the session was given (`view.injected`); else the prompt as
/// it is. The block is found by its content, not cut at the first closing tag.
pub fn user_prompt<'p>(view: &ModelView, prompt: &'p str) -> &'p str {
    let Some(rest) = prompt.strip_prefix(HOOK_CONTEXT_OPEN) else {
        return prompt;
    };
    for (at, _) in rest.match_indices(HOOK_CONTEXT_CLOSE) {
        if view.block(&rest[..at], true).is_some() {
            return rest[at + HOOK_CONTEXT_CLOSE.len()..].trim_start_matches(['\n', '\r']);
        }
    }
    prompt
}

/// What Gemini CLI (0.61) puts as the model's turn right after a compressed history's summary.
pub(crate) const GEMINI_COMPRESSION_ACK: &str = "Got it. Thanks for the additional context!";
const SESSION_CONTEXT_END: &str = "</session_context>";

pub(crate) fn digest(bytes: &[u8]) -> u64 {
    let h = content_hash(bytes);
    u64::from_le_bytes(h.0[..8].try_into().expect("8 bytes"))
}

/// Digest of a run of messages.
pub fn prefix(messages: &[RawJson<'_>]) -> u64 {
    let mut buf = Vec::with_capacity(messages.len() * 8);
    for m in messages {
        buf.extend_from_slice(&digest(m.get().as_bytes()).to_le_bytes());
    }
    digest(&buf)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    role: Str<'a>,
    #[serde(borrow)]
    content: Str<'a>,
}

fn message(raw: RawJson<'_>) -> Message<'_> {
    serde_json::from_str(raw.get()).unwrap_or_default()
}

fn compressed_head(messages: &[RawJson<'_>]) -> bool {
    messages.get(1).is_some_and(|m| {
        let m = message(*m);
        m.role.as_deref() == Some("model") && m.content.as_deref() == Some(GEMINI_COMPRESSION_ACK)
    })
}

/// The summary in a compressed history's first message: what follows the session context.
fn summary(first: RawJson<'_>) -> Option<String> {
    let m = message(first);
    let text = m.content.as_deref()?;
    let after = match text.rfind(SESSION_CONTEXT_END) {
        Some(at) => &text[at + SESSION_CONTEXT_END.len()..],
        None => text,
    };
    let after = after.trim();
    (!after.is_empty()).then(|| cut(after, SUMMARY_MAX_BYTES).0)
}

impl State {
    /// Gemini CLI's events: tracks the tool calls under way and the session's requests, and
    /// opens a compaction (trigger `auto`) for a rewritten history.
    pub(super) fn model_view_event(&mut self, e: &Event<'_>, rec: &RecordView<'_>) {
        if e.host != Host::Gemini {
            return;
        }
        let v = &mut self.model_view;
        match e.kind {
            // Another process: its requests start over (what was injected stays known).
            EventKind::SessionStart => {
                v.tools_running = 0;
                v.last = None;
            }
            EventKind::PreToolUse => v.tools_running += 1,
            EventKind::PostToolUse | EventKind::PostToolUseFailure => {
                v.tools_running = v.tools_running.saturating_sub(1)
            }
            EventKind::Stop | EventKind::StopFailure | EventKind::SessionEnd => v.tools_running = 0,
            _ => {}
        }
        let Some(msgs) = e.model_messages.as_deref() else {
            return;
        };
        if v.tools_running > 0 {
            return;
        }
        v.last_request_seq = Some(rec.seq);
        let head = compressed_head(msgs);
        let rewritten = v.last.as_ref().is_some_and(|p| {
            let k = p.messages.saturating_sub(1) as usize;
            let continues = k == 0 || (msgs.len() >= k && prefix(&msgs[..k]) == p.prefix);
            !continues || (head && !p.compressed_head)
        });
        let previous = v.last.as_ref().map(|p| p.seq);
        v.last = Some(ViewedRequest {
            seq: rec.seq,
            messages: msgs.len() as u64,
            prefix: prefix(&msgs[..msgs.len().saturating_sub(1)]),
            compressed_head: head,
        });
        if !rewritten {
            // The first request of a process after a compaction it did not see happen
            // (`/compress`, then a new `gemini -p`): a compressed history's summary is that
            // compaction's.
            let unanswered = self
                .compactions
                .last
                .as_ref()
                .is_some_and(|c| c.recovered_seq.is_none() && c.summary.is_none());
            if previous.is_none() && head && unanswered {
                if let Some(s) = msgs.first().and_then(|m| summary(*m)) {
                    let c = self.compactions.last.as_mut().expect("checked above");
                    c.summary = Some(s);
                    c.summary_seq = Some(rec.seq);
                }
            }
            return;
        }
        let journaled = self
            .compactions
            .last
            .as_ref()
            .is_some_and(|c| previous.is_some_and(|p| c.seq > p));
        let c = if journaled {
            self.compactions.last.as_mut().expect("checked above")
        } else {
            let c = self.compaction_for(|_| false, rec);
            set(&mut c.trigger, Some("auto"));
            c
        };
        if c.summary.is_none() {
            if let Some(s) = msgs.first().and_then(|m| summary(*m)) {
                c.summary = Some(s);
                c.summary_seq = Some(rec.seq);
            }
        }
    }
}

impl State {
    /// After the event's bookkeeping (a compaction opened by it has reset `seen`): the items
    /// of the injections a request of the session's own conversation still holds are seen.
    pub(super) fn model_view_after(&mut self, e: &Event<'_>) {
        let v = &self.model_view;
        if e.host != Host::Gemini || v.tools_running > 0 {
            return;
        }
        let Some(msgs) = e.model_messages.as_deref() else {
            return;
        };
        let held: Vec<(String, String)> = self
            .model_view
            .held(msgs)
            .into_iter()
            .flat_map(|b| b.items.iter().cloned())
            .collect();
        let seen = &mut self.seen.items;
        for (k, h) in held {
            if !seen.contains_key(&k) && seen.len() < SEEN_MAX {
                seen.insert(k, h);
            }
        }
    }

    /// An `sjournal.injected` record of a session whose requests show its history (Gemini
    /// CLI): how it will read in them.
    pub(super) fn note_injected_block(&mut self, i: &Injected, rec: &RecordView<'_>) {
        if self.identity.host.as_deref() != Some(Host::Gemini.as_str()) || i.text.is_empty() {
            return;
        }
        let v = &mut self.model_view.injected;
        if v.len() >= INJECTED_BLOCKS_KEPT {
            v.pop_front();
        }
        v.push_back(InjectedBlock {
            seq: rec.seq,
            event_seq: i.event_seq,
            event_kind: key(&i.event_kind),
            digest: digest(i.text.as_bytes()),
            escaped: digest(gemini_escaped(&i.text).as_bytes()),
            items: i
                .items
                .iter()
                .take(INJECTED_BLOCK_ITEMS_MAX)
                .map(|it| (key(&it.key), key(&it.hash)))
                .collect(),
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::GEMINI_COMPRESSION_ACK as ACK;
    use crate::fold::digest::encode_event;
    use crate::fold::{RecordView, State};

    const CTX: &str = "<session_context>\nThis is the Gemini CLI.\n</session_context>";

    /// Plays Gemini CLI 0.61.0-shaped events (their fields as the real payloads carry them).
    struct Run {
        state: State,
        seq: u64,
    }

    impl Run {
        fn new() -> Run {
            let mut r = Run {
                state: State::new(),
                seq: 0,
            };
            r.ev("SessionStart", json!({"source": "startup"}));
            r
        }
        fn ev(&mut self, name: &str, extra: Value) {
            let mut v = json!({"session_id": "g", "cwd": "/p", "hook_event_name": name,
                               "timestamp": "2026-12-01T06:35:42.379Z"});
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            self.seq += 1;
            let payload = encode_event(name, &v.to_string());
            self.state.apply(&RecordView {
                seq: self.seq,
                ts_unix_ns: self.seq as i64,
                kind: name,
                payload: &payload,
            });
        }
        /// BeforeModel with these (role, text) messages, after PreCompress(auto) as always.
        fn request(&mut self, msgs: &[(&str, &str)]) {
            self.ev("PreCompress", json!({"trigger": "auto"}));
            let messages: Vec<Value> = msgs
                .iter()
                .map(|(r, c)| json!({"role": r, "content": c}))
                .collect();
            self.ev(
                "BeforeModel",
                json!({"llm_request": {"model": "gemini-2.5-flash", "messages": messages,
                                       "config": {"temperature": 1}}}),
            );
        }
        fn tool(&mut self, f: impl FnOnce(&mut Run)) {
            let input = json!({"command": "echo hi"});
            self.ev(
                "BeforeTool",
                json!({"tool_name": "run_shell_command", "tool_input": input}),
            );
            f(self);
            self.ev(
                "AfterTool",
                json!({"tool_name": "run_shell_command", "tool_input": input,
                    "tool_response": {"llmContent": "hi\nExit Code: 0"}}),
            );
        }
        fn count(&self) -> u64 {
            self.state.compactions.count
        }
    }

    fn first(prompt: &str) -> String {
        format!("{CTX}{prompt}")
    }

    #[test]
    fn a_growing_history_is_no_compression() {
        let mut r = Run::new();
        let p1 = first("one");
        r.request(&[("user", &p1)]);
        r.tool(|_| {});
        r.request(&[("user", &p1)]);
        r.request(&[("user", &p1), ("model", "done"), ("user", "two")]);
        // A retry's nudge extends the last message only.
        r.request(&[
            ("user", &p1),
            ("model", "done"),
            ("user", "two\nPlease answer."),
        ]);
        r.request(&[("user", &p1), ("model", "done"), ("user", "two")]);
        assert_eq!(r.count(), 0);
    }

    #[test]
    fn a_rewritten_history_is_an_automatic_compression_with_its_summary() {
        let mut r = Run::new();
        let p1 = first("one");
        let msgs = [("user", p1.as_str()), ("model", "done"), ("user", "two")];
        r.request(&msgs);
        let summary = first("<state_snapshot>S1</state_snapshot>");
        r.request(&[("user", &summary), ("model", ACK), ("user", "two")]);
        assert_eq!(r.count(), 1);
        let c = r.state.compactions.last.clone().unwrap();
        assert_eq!(c.trigger.as_deref(), Some("auto"));
        assert_eq!(
            c.summary.as_deref(),
            Some("<state_snapshot>S1</state_snapshot>")
        );
        // It goes on from the compressed history; a second compression is seen too, even
        // with the same summary (what follows it changed).
        r.request(&[
            ("user", &summary),
            ("model", ACK),
            ("user", "two"),
            ("model", "ok"),
            ("user", "three"),
        ]);
        assert_eq!(r.count(), 1);
        r.request(&[("user", &summary), ("model", ACK), ("user", "three")]);
        assert_eq!(r.count(), 2);
    }

    #[test]
    fn a_compression_in_a_first_turn_of_tool_calls() {
        let mut r = Run::new();
        let p1 = first("one");
        r.request(&[("user", &p1)]);
        r.tool(|_| {});
        r.request(&[("user", &p1)]);
        r.tool(|_| {});
        let summary = first("<state_snapshot>S</state_snapshot>");
        r.request(&[("user", &summary), ("model", ACK)]);
        assert_eq!(r.count(), 1);
    }

    #[test]
    fn requests_inside_a_tool_call_and_other_processes_are_not_compared() {
        let mut r = Run::new();
        let p1 = first("one");
        r.request(&[("user", &p1), ("model", "done"), ("user", "two")]);
        // A subagent's chat, inside its tool call.
        r.tool(|r| r.request(&[("user", "investigate"), ("model", "looking")]));
        r.request(&[("user", &p1), ("model", "done"), ("user", "two")]);
        assert_eq!(r.count(), 0);
        // Resumed: the history is reloaded, whatever it was before.
        r.ev("SessionEnd", json!({"reason": "exit"}));
        r.ev("SessionStart", json!({"source": "resume"}));
        r.request(&[
            ("user", &first("<state_snapshot>S</state_snapshot>")),
            ("model", ACK),
            ("user", "two"),
        ]);
        assert_eq!(r.count(), 0);
    }

    #[test]
    fn a_manual_compress_is_counted_once() {
        let mut r = Run::new();
        let p1 = first("one");
        r.request(&[("user", &p1), ("model", "done"), ("user", "two")]);
        r.ev("PreCompress", json!({"trigger": "manual"}));
        assert_eq!(r.count(), 1);
        let summary = first("<state_snapshot>M</state_snapshot>");
        r.request(&[("user", &summary), ("model", ACK), ("user", "three")]);
        assert_eq!(r.count(), 1);
        let c = r.state.compactions.last.clone().unwrap();
        assert_eq!(c.trigger.as_deref(), Some("manual"));
        assert_eq!(
            c.summary.as_deref(),
            Some("<state_snapshot>M</state_snapshot>")
        );
    }
}
