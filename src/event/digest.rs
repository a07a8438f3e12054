//! The fold digest: the facts of an [`Event`] the fold reads, pre-parsed at append time and
//! stored beside the raw JSON in the event's payload (see "Event digests" in
//! `journal-format.md`), so that a fold reads MessagePack instead of parsing JSON.
//!
//! The digest is a pure function of the record's kind and JSON text ([`derive`]): the same
//! lenient pre-pass and [`Event::parse`] the fold runs on an event without one. It keeps
//! every field of the event the fold reads, and of the raw JSON parts only those the fold
//! looks into: the tool input, the tool response where the fold reads it (a failed call's
//! error, `TaskCreate`'s new id, a file change's patch), bulk tool calls, background tasks and
//! a model request's messages. It leaves out what no fold reads (a successful `Read`'s or
//! shell call's output, `turn_id`, `outcome_unknown`), which is most of an
//! event's bytes.
//!
//! A digest carries its version ([`DIGEST_VERSION`]) and the fold version of the build that
//! wrote it ([`FOLD_VERSION`]); the fold uses only digests of the current pair and derives
//! the event from the JSON otherwise, so journals without digests, or with digests of
//! another build, fold to the same state. What a digest holds depends on more than this
//! file (the host adapters, the lenient pre-pass, `tools::file_op`), and any change there
//! that changes a state already bumps `FOLD_VERSION`, which retires every stored digest with
//! it. Change what is kept here and bump `DIGEST_VERSION`. `tests/digests.rs` folds a
//! checked-in journal with digests against the same journal with them cut off.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Event, EventKind, FileOp, Host, Tool};

/// Version of the digest's schema and of what it keeps.
pub const DIGEST_VERSION: u32 = 1;

use crate::fold::FOLD_VERSION;

#[derive(Serialize, Deserialize)]
struct WireTool<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(borrow)]
    use_id: Option<&'a str>,
    #[serde(borrow)]
    input: Option<&'a str>,
    #[serde(borrow)]
    response: Option<&'a str>,
    failed: bool,
    duration_ms: Option<u64>,
    #[serde(borrow)]
    detail: Option<&'a str>,
    exit_code: Option<i64>,
    interrupted: bool,
}

/// The digest body: a MessagePack array, fields in this order.
#[derive(Serialize, Deserialize)]
struct Wire<'a> {
    #[serde(borrow)]
    host: &'a str,
    #[serde(borrow)]
    kind: &'a str,
    #[serde(borrow)]
    name: &'a str,
    parsed: bool,
    #[serde(borrow)]
    session_id: Option<&'a str>,
    #[serde(borrow)]
    cwd: Option<&'a str>,
    #[serde(borrow)]
    model: Option<&'a str>,
    #[serde(borrow)]
    permission_mode: Option<&'a str>,
    #[serde(borrow)]
    prompt_id: Option<&'a str>,
    #[serde(borrow)]
    agent_id: Option<&'a str>,
    #[serde(borrow)]
    agent_type: Option<&'a str>,
    #[serde(borrow)]
    tool: Option<WireTool<'a>>,
    #[serde(borrow)]
    prompt: Option<&'a str>,
    #[serde(borrow)]
    source: Option<&'a str>,
    #[serde(borrow)]
    trigger: Option<&'a str>,
    #[serde(borrow)]
    reason: Option<&'a str>,
    #[serde(borrow)]
    error: Option<&'a str>,
    #[serde(borrow)]
    message: Option<&'a str>,
    #[serde(borrow)]
    file_path: Option<&'a str>,
    #[serde(borrow)]
    file_touch: Option<(u8, &'a str)>,
    #[serde(borrow)]
    new_cwd: Option<&'a str>,
    #[serde(borrow)]
    summary: Option<&'a str>,
    #[serde(borrow)]
    custom_instructions: Option<&'a str>,
    #[serde(borrow)]
    session_kind: Option<&'a str>,
    #[serde(borrow)]
    parent_session: Option<&'a str>,
    session_duration_ms: Option<u64>,
    context_usage_percent: Option<f64>,
    message_count: Option<u64>,
    #[serde(borrow)]
    turn_tool_calls: Option<&'a str>,
    #[serde(borrow)]
    background_tasks: Option<&'a str>,
    #[serde(borrow)]
    task_id: Option<&'a str>,
    #[serde(borrow)]
    task_subject: Option<&'a str>,
    #[serde(borrow)]
    model_messages: Option<Vec<&'a str>>,
}

/// The digest as stored: `[version, fold version, body]`, the body (a [`Wire`]) as
/// MessagePack bin, so a reader can tell the versions before it reads a body of a schema it
/// may not know.
#[derive(Serialize, Deserialize)]
struct Stored<'a>(u32, u32, #[serde(borrow, with = "serde_bytes")] &'a [u8]);

/// The versions a digest of this build carries: `(DIGEST_VERSION, FOLD_VERSION)`.
pub const CURRENT: (u32, u32) = (DIGEST_VERSION, FOLD_VERSION);

fn op_code(op: FileOp) -> u8 {
    match op {
        FileOp::Read => 0,
        FileOp::Write => 1,
        FileOp::Edit => 2,
    }
}

fn op_from(code: u8) -> Option<FileOp> {
    Some(match code {
        0 => FileOp::Read,
        1 => FileOp::Write,
        2 => FileOp::Edit,
        _ => return None,
    })
}

/// True if the fold reads this call's response (keep it in sync with `fold::recovery`): a
/// failed call's error text, the id a `TaskCreate` got, the patch of a file change.
fn response_read(t: &Tool<'_>) -> bool {
    t.failed
        || t.name == "TaskCreate"
        || super::tools::file_op(&t.name).is_some_and(|op| op != FileOp::Read)
}

fn cow<'a>(c: &'a Option<Cow<'_, str>>) -> Option<&'a str> {
    c.as_deref()
}

fn b(s: Option<&str>) -> Option<Cow<'_, str>> {
    s.map(Cow::Borrowed)
}

/// The digest of an event record: `record_kind` is the record's kind, `raw_json` its JSON
/// text as journaled. Read the way the fold reads an event without a digest.
pub fn derive(record_kind: &str, raw_json: &str) -> Vec<u8> {
    let raw = super::lenient_json::text(raw_json);
    encode(&Event::parse(record_kind, &raw))
}

/// Encodes what the fold reads of `e`.
pub fn encode(e: &Event<'_>) -> Vec<u8> {
    // Every field of `Event` and `Tool` is named here, so a new field does not compile until
    // it is kept below or marked as one no fold reads (then bump DIGEST_VERSION if kept).
    #[rustfmt::skip]
    let Event {
        host: _, kind: _, name: _, parsed: _, session_id: _, cwd: _, model: _,
        permission_mode: _, prompt_id: _, agent_id: _, agent_type: _, tool: _, prompt: _,
        source: _, trigger: _, reason: _, error: _, message: _, file_path: _, file_touch: _,
        new_cwd: _, summary: _, custom_instructions: _, session_kind: _, parent_session: _,
        session_duration_ms: _, context_usage_percent: _, message_count: _,
        turn_tool_calls: _, background_tasks: _, task_id: _, task_subject: _,
        model_messages: _,
        // Not kept: read by host detection on the raw JSON only.
        turn_id: _,
    } = e;
    if let Some(t) = &e.tool {
        #[rustfmt::skip]
        let Tool {
            name: _, use_id: _, input: _, response: _, failed: _, duration_ms: _, detail: _,
            exit_code: _, interrupted: _,
            // Not kept: no fold reads it.
            outcome_unknown: _,
        } = t;
    }
    let tool = e.tool.as_ref().map(|t| WireTool {
        name: &t.name,
        use_id: cow(&t.use_id),
        input: t.input.map(RawValue::get),
        response: t.response.filter(|_| response_read(t)).map(RawValue::get),
        failed: t.failed,
        duration_ms: t.duration_ms,
        detail: cow(&t.detail),
        exit_code: t.exit_code,
        interrupted: t.interrupted,
    });
    let w = Wire {
        host: e.host.as_str(),
        kind: e.kind.as_str(),
        name: &e.name,
        parsed: e.parsed,
        session_id: cow(&e.session_id),
        cwd: cow(&e.cwd),
        model: cow(&e.model),
        permission_mode: cow(&e.permission_mode),
        prompt_id: cow(&e.prompt_id),
        agent_id: cow(&e.agent_id),
        agent_type: cow(&e.agent_type),
        tool,
        prompt: cow(&e.prompt),
        source: cow(&e.source),
        trigger: cow(&e.trigger),
        reason: cow(&e.reason),
        error: cow(&e.error),
        message: cow(&e.message),
        file_path: cow(&e.file_path),
        file_touch: e
            .file_touch
            .as_ref()
            .map(|(op, p)| (op_code(*op), p.as_ref())),
        new_cwd: cow(&e.new_cwd),
        summary: cow(&e.summary),
        custom_instructions: cow(&e.custom_instructions),
        session_kind: cow(&e.session_kind),
        parent_session: cow(&e.parent_session),
        session_duration_ms: e.session_duration_ms,
        context_usage_percent: e.context_usage_percent,
        message_count: e.message_count,
        turn_tool_calls: e.turn_tool_calls.map(RawValue::get),
        background_tasks: e.background_tasks.map(RawValue::get),
        task_id: cow(&e.task_id),
        task_subject: cow(&e.task_subject),
        model_messages: e
            .model_messages
            .as_ref()
            .map(|m| m.iter().map(|r| r.get()).collect()),
    };
    let body = rmp_serde::to_vec(&w).expect("a digest always encodes");
    rmp_serde::to_vec(&Stored(DIGEST_VERSION, FOLD_VERSION, &body))
        .expect("a digest always encodes")
}

/// The versions of a stored digest, `(digest version, fold version)`, if it reads as one.
pub fn version(digest: &[u8]) -> Option<(u32, u32)> {
    rmp_serde::from_slice::<Stored>(digest)
        .ok()
        .map(|s| (s.0, s.1))
}

fn raw(s: Option<&str>) -> Option<Option<&RawValue>> {
    match s {
        None => Some(None),
        Some(s) => serde_json::from_str::<&RawValue>(s).ok().map(Some),
    }
}

/// The event a digest of the current version describes, as the fold reads it; None for a
/// digest of another version or one that does not decode (the fold then reads the JSON).
pub fn decode(digest: &[u8]) -> Option<Event<'_>> {
    let Stored(version, fold_version, body) = rmp_serde::from_slice(digest).ok()?;
    if (version, fold_version) != CURRENT {
        return None;
    }
    let w: Wire = rmp_serde::from_slice(body).ok()?;
    let kind = EventKind::from_claude(w.kind);
    if kind.as_str() != w.kind {
        return None;
    }
    let tool = match w.tool {
        None => None,
        Some(t) => Some(Tool {
            name: Cow::Borrowed(t.name),
            use_id: b(t.use_id),
            input: raw(t.input)?,
            response: raw(t.response)?,
            failed: t.failed,
            outcome_unknown: false,
            duration_ms: t.duration_ms,
            detail: b(t.detail),
            exit_code: t.exit_code,
            interrupted: t.interrupted,
        }),
    };
    let file_touch = match w.file_touch {
        None => None,
        Some((op, p)) => Some((op_from(op)?, Cow::Borrowed(p))),
    };
    let model_messages = match w.model_messages {
        None => None,
        Some(m) => Some(
            m.into_iter()
                .map(|s| serde_json::from_str::<&RawValue>(s).ok())
                .collect::<Option<Vec<_>>>()?,
        ),
    };
    let mut e = Event::bare(Host::from_name(w.host)?, kind, Cow::Borrowed(w.name));
    e.parsed = w.parsed;
    e.session_id = b(w.session_id);
    e.cwd = b(w.cwd);
    e.model = b(w.model);
    e.permission_mode = b(w.permission_mode);
    e.prompt_id = b(w.prompt_id);
    e.agent_id = b(w.agent_id);
    e.agent_type = b(w.agent_type);
    e.tool = tool;
    e.prompt = b(w.prompt);
    e.source = b(w.source);
    e.trigger = b(w.trigger);
    e.reason = b(w.reason);
    e.error = b(w.error);
    e.message = b(w.message);
    e.file_path = b(w.file_path);
    e.file_touch = file_touch;
    e.new_cwd = b(w.new_cwd);
    e.summary = b(w.summary);
    e.custom_instructions = b(w.custom_instructions);
    e.session_kind = b(w.session_kind);
    e.parent_session = b(w.parent_session);
    e.session_duration_ms = w.session_duration_ms;
    e.context_usage_percent = w.context_usage_percent;
    e.message_count = w.message_count;
    e.turn_tool_calls = raw(w.turn_tool_calls)?;
    e.background_tasks = raw(w.background_tasks)?;
    e.task_id = b(w.task_id);
    e.task_subject = b(w.task_subject);
    e.model_messages = model_messages;
    Some(e)
}
