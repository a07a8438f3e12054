//! A session's timeline, derived from its raw events: turns (a prompt until Stop), tool calls
//! (Pre to Post, with durations and failures), compactions, subagents, what was injected and
//! when, and the session's start and end. This reads the host's fields directly (Claude Code
//! names: `hook_event_name`, `tool_name`, `tool_use_id`, `duration_ms`, `prompt`, `source`,
//! `trigger`, `reason`, `error`); other hosts' events show up as plain events.
//!
//! Times are the records' append times (the journal's clock), so durations between records
//! are what the journal saw; a tool call's own `duration_ms`, when the host gives it, is used
//! for its duration.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::audit::sessions::Identity;
use crate::format::payload;
use crate::journal::scan::Stop;
use crate::journal::{JournalReader, Record};

const KIND_INJECTED: &str = "sjournal.injected";

/// How many characters of prompts and errors are kept (injected text is kept whole).
const TEXT_CHARS: usize = 400;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    pub session_id: String,
    #[serde(flatten)]
    pub identity: Identity,
    pub start_ns: i64,
    pub end_ns: i64,
    pub records: u64,
    pub kinds: BTreeMap<String, u64>,
    pub turns: Vec<Turn>,
    pub tools: Vec<ToolCall>,
    pub compactions: Vec<Compaction>,
    pub injections: Vec<InjectionRecord>,
    /// Everything else worth a mark: session start and end, subagents, errors, system records.
    pub marks: Vec<Mark>,
    /// Why the journal could not be read to its end, if it could not.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Turn {
    pub seq: u64,
    pub start_ns: i64,
    /// None while the turn is still open at the end of the journal.
    pub end_ns: Option<i64>,
    pub prompt: String,
    /// The error of a StopFailure that ended it.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolCall {
    pub name: String,
    pub id: Option<String>,
    pub seq: u64,
    pub start_ns: i64,
    /// None while the call is open (a Pre without its Post).
    pub end_ns: Option<i64>,
    pub duration_ms: Option<u64>,
    pub failed: bool,
    pub error: Option<String>,
    /// The subagent that made the call, if one did.
    pub agent: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Compaction {
    pub seq: u64,
    pub start_ns: i64,
    pub end_ns: Option<i64>,
    pub trigger: String,
}

/// One `sjournal.injected` record on the timeline, with the text it kept.
#[derive(Debug, Clone, Serialize)]
pub struct InjectionRecord {
    pub seq: u64,
    pub ts_ns: i64,
    /// The seq of the event the context was printed for.
    pub event_seq: Option<u64>,
    pub event: Option<String>,
    pub bytes: Option<u64>,
    pub truncated: bool,
    /// The text injected, whole, as its record keeps it (line breaks included).
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Mark {
    pub seq: u64,
    pub ts_ns: i64,
    pub kind: String,
    pub label: String,
    /// True for errors and damage.
    pub bad: bool,
}

/// Reads the whole journal into a timeline.
pub fn build(reader: &JournalReader) -> crate::error::Result<Timeline> {
    let (header, _, _) = reader
        .header()
        .map_err(|e| crate::error::Error::BadHeader {
            path: reader.path().to_owned(),
            reason: e.to_string(),
        })?;
    let mut b = Builder::default();
    b.t.session_id = header.session_id;
    let mut state = crate::fold::State::new();
    for r in reader.records()? {
        match r {
            Ok(rec) => {
                b.apply(&rec);
                state.apply(&crate::fold::RecordView::from(&rec));
            }
            Err(Stop { offset, problem }) => {
                b.t.problem = Some(format!(
                    "the journal is damaged at offset {offset}: {problem}"
                ));
            }
        }
    }
    b.t.identity = Identity::of(&state);
    Ok(b.finish())
}

/// The timeline of some records only (a window of a long journal, as the viewer pages it):
/// no identity, and a call or turn that began before the first record shows as if it began
/// at its end (a call) or is left out (a turn). The first problem ends the window.
pub fn of_records<'a>(
    records: impl IntoIterator<Item = std::result::Result<Record<'a>, Stop>>,
) -> Timeline {
    let mut b = Builder::default();
    for r in records {
        match r {
            Ok(rec) => b.apply(&rec),
            Err(Stop { offset, problem }) => {
                b.t.problem = Some(format!(
                    "the journal is damaged at offset {offset}: {problem}"
                ));
                break;
            }
        }
    }
    b.finish()
}

#[derive(Default)]
struct Builder {
    t: Timeline,
    /// Open tool calls by tool_use_id: index into `t.tools`.
    open_tools: BTreeMap<String, usize>,
    open_turn: Option<usize>,
    open_compaction: Option<usize>,
    /// Event kinds by seq, to name what an injection was for.
    kind_at: BTreeMap<u64, String>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(crate::audit::one_line(s, TEXT_CHARS)),
        Value::Null => None,
        other => Some(crate::audit::one_line(&other.to_string(), TEXT_CHARS)),
    }
}

impl Builder {
    fn apply(&mut self, rec: &Record<'_>) {
        let ts = rec.ts_unix_ns;
        let t = &mut self.t;
        if t.records == 0 {
            t.start_ns = ts;
        }
        t.records += 1;
        t.end_ns = ts;
        *t.kinds.entry(rec.kind.to_owned()).or_default() += 1;
        self.kind_at.insert(rec.seq, rec.kind.to_owned());
        if payload::is_system_kind(rec.kind) {
            return self.system(rec);
        }
        let v: Value = payload::decode_event(rec.seq, rec.payload)
            .ok()
            .and_then(|s| crate::event::lenient::value(s.as_bytes()).ok())
            .unwrap_or(Value::Null);
        let mark = |label: String, bad: bool| Mark {
            seq: rec.seq,
            ts_ns: ts,
            kind: rec.kind.to_owned(),
            label,
            bad,
        };
        match rec.kind {
            "UserPromptSubmit" => {
                self.close_turn(ts, None);
                self.open_turn = Some(self.t.turns.len());
                self.t.turns.push(Turn {
                    seq: rec.seq,
                    start_ns: ts,
                    end_ns: None,
                    prompt: text(&v, "prompt").unwrap_or_default(),
                    error: None,
                });
            }
            "Stop" => self.close_turn(ts, None),
            "StopFailure" => {
                let e = text(&v, "error").unwrap_or_else(|| "failed".into());
                self.close_turn(ts, Some(e.clone()));
                self.t.marks.push(mark(format!("turn failed: {e}"), true));
            }
            "PreToolUse" => {
                let call = self.call(rec, &v, ts);
                if let Some(id) = call.id.clone() {
                    self.open_tools.insert(id, self.t.tools.len());
                }
                self.t.tools.push(call);
            }
            "PostToolUse" | "PostToolUseFailure" => self.finish_call(rec, &v, ts),
            "PreCompact" => {
                self.open_compaction = Some(self.t.compactions.len());
                self.t.compactions.push(Compaction {
                    seq: rec.seq,
                    start_ns: ts,
                    end_ns: None,
                    trigger: text(&v, "trigger").unwrap_or_else(|| "?".into()),
                });
            }
            "PostCompact" => {
                if let Some(i) = self.open_compaction.take() {
                    self.t.compactions[i].end_ns = Some(ts);
                }
            }
            "SessionStart" => {
                let source = text(&v, "source").unwrap_or_else(|| "start".into());
                self.t
                    .marks
                    .push(mark(format!("session start ({source})"), false));
            }
            "SessionEnd" => {
                self.close_turn(ts, None);
                let reason = text(&v, "reason").unwrap_or_else(|| "end".into());
                self.t
                    .marks
                    .push(mark(format!("session end ({reason})"), false));
            }
            "SubagentStart" | "SubagentStop" => {
                let who = text(&v, "agent_type")
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "subagent".into());
                let what = if rec.kind == "SubagentStart" {
                    "start"
                } else {
                    "stop"
                };
                self.t.marks.push(mark(format!("{who} {what}"), false));
            }
            _ => {}
        }
    }

    fn call(&self, rec: &Record<'_>, v: &Value, ts: i64) -> ToolCall {
        ToolCall {
            name: text(v, "tool_name").unwrap_or_else(|| "?".into()),
            id: text(v, "tool_use_id"),
            seq: rec.seq,
            start_ns: ts,
            end_ns: None,
            duration_ms: None,
            failed: false,
            error: None,
            agent: text(v, "agent_type").filter(|s| !s.is_empty()),
        }
    }

    fn finish_call(&mut self, rec: &Record<'_>, v: &Value, ts: i64) {
        let duration_ms = v.get("duration_ms").and_then(Value::as_u64);
        let id = text(v, "tool_use_id");
        let i = match id.as_ref().and_then(|id| self.open_tools.remove(id)) {
            Some(i) => i,
            None => {
                // A Post without its Pre: it started `duration_ms` before it ended.
                let mut call = self.call(rec, v, ts);
                call.start_ns = ts - duration_ms.unwrap_or(0) as i64 * 1_000_000;
                self.t.tools.push(call);
                self.t.tools.len() - 1
            }
        };
        let call = &mut self.t.tools[i];
        call.end_ns = Some(ts);
        call.duration_ms =
            duration_ms.or_else(|| u64::try_from((ts - call.start_ns) / 1_000_000).ok());
        if rec.kind == "PostToolUseFailure" {
            call.failed = true;
            call.error = text(v, "error");
        }
    }

    fn close_turn(&mut self, ts: i64, error: Option<String>) {
        if let Some(i) = self.open_turn.take() {
            self.t.turns[i].end_ns = Some(ts);
            self.t.turns[i].error = error;
        }
    }

    fn system(&mut self, rec: &Record<'_>) {
        let fields: Value = payload::to_json(rec.seq, rec.kind, rec.payload)
            .ok()
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or(Value::Null);
        if rec.kind == KIND_INJECTED {
            let event_seq = fields.get("event_seq").and_then(Value::as_u64);
            self.t.injections.push(InjectionRecord {
                seq: rec.seq,
                ts_ns: rec.ts_unix_ns,
                event_seq,
                event: event_seq.and_then(|s| self.kind_at.get(&s).cloned()),
                bytes: fields.get("len").and_then(Value::as_u64),
                truncated: fields.get("truncated").and_then(Value::as_bool) == Some(true),
                text: fields
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            });
            return;
        }
        let label = match rec.kind {
            payload::KIND_RECOVERED => format!(
                "recovered: {} torn bytes quarantined",
                fields.get("length").and_then(Value::as_u64).unwrap_or(0)
            ),
            payload::KIND_UNPARSED => "input that was not JSON (kept raw)".to_owned(),
            other => other.trim_start_matches(payload::SYSTEM_PREFIX).to_owned(),
        };
        self.t.marks.push(Mark {
            seq: rec.seq,
            ts_ns: rec.ts_unix_ns,
            kind: rec.kind.to_owned(),
            label,
            bad: matches!(rec.kind, payload::KIND_RECOVERED | payload::KIND_UNPARSED),
        });
    }

    fn finish(self) -> Timeline {
        self.t
    }
}
