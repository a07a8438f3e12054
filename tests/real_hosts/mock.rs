//! A scripted model API on 127.0.0.1 (an ephemeral port) that speaks what the hosts speak:
//! Anthropic Messages (SSE and JSON, `count_tokens`), OpenAI Responses (SSE), OpenAI Chat
//! Completions (SSE and JSON, `GET /models`) and Gemini (`streamGenerateContent`,
//! `generateContent`, `countTokens`). Every request body is logged.
//!
//! The mock is stateless: it reads the conversation in the request, finds the latest scripted
//! prompt in it (prompts carry unique keys, and a request for prompt k can only mention keys up
//! to k, since context never quotes a prompt not yet sent), counts the tool results after that
//! prompt's first mention, and answers the script's step of that index (a tool call or text).
//! A request carrying one of the script's summary markers (a compaction or title request) gets
//! the summary text; anything else gets "ok".

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

/// One step of a scripted answer.
#[derive(Debug, Clone)]
pub enum Step {
    Text(&'static str),
    /// A tool call: the tool's name (`namespace/name` for a namespaced Responses tool) and its
    /// arguments.
    Tool(&'static str, Value),
    /// A tool call whose arguments are computed from the request's body (ids the host made).
    Dynamic(&'static str, fn(&str) -> Value),
}

/// A scripted prompt: the key that identifies it and the steps of the model's answer (the
/// step after the last is the text "done").
#[derive(Debug, Clone)]
pub struct Rule {
    pub key: &'static str,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, Default)]
pub struct Script {
    pub rules: Vec<Rule>,
    /// (marker, reply): a request whose last message or system prompt holds `marker` gets
    /// `reply` as text (compaction summaries, session titles).
    pub special: Vec<(&'static str, &'static str)>,
    /// Input tokens reported for every answer (hosts decide on compaction from it).
    pub input_tokens: u64,
    /// Answers to special requests wait this long (so a host can cancel one under way).
    pub special_delay_ms: u64,
    /// Input tokens reported for answers to requests holding this key (to trigger a host's
    /// automatic compaction at a chosen point).
    pub big_after: Option<(&'static str, u64)>,
}

/// Settings beyond the script, for the scenarios that need them (`Mock::start_with`).
#[derive(Debug, Clone, Default)]
pub struct Tune {
    /// (answer, input tokens): the input tokens reported for every request answered so
    /// (`KEY:STEP`, as `Logged::answer` names it), whatever the conversation holds: a host
    /// sees its context fill up at exactly that step of that prompt, each time it makes it.
    pub big_answers: Vec<(&'static str, u64)>,
}

/// The wire protocol a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    Responses,
    Chat,
    Gemini,
}

/// One logged request.
#[derive(Debug, Clone)]
pub struct Logged {
    pub api: Option<Api>,
    #[allow(dead_code)] // shown when a scenario fails
    pub path: String,
    pub body: String,
    pub json: Value,
    /// What the mock answered: a rule key and step, a special marker, or "count"/"other".
    pub answer: String,
}

pub struct Mock {
    pub port: u16,
    log: Arc<Mutex<Vec<Logged>>>,
}

impl Mock {
    pub fn start(script: Script) -> Mock {
        Mock::start_with(script, Tune::default())
    }

    pub fn start_with(script: Script, tune: Tune) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the mock model API");
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new((script, tune));
        let l2 = log.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (log, script) = (l2.clone(), script.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, &script.0, &script.1, &log);
                });
            }
        });
        Mock { port, log }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Logged> {
        self.log.lock().unwrap().clone()
    }

    /// The model requests (not token counts, not model lists), in order.
    pub fn model_requests(&self) -> Vec<Logged> {
        self.requests()
            .into_iter()
            .filter(|r| r.api.is_some() && r.answer != "count")
            .collect()
    }
}

fn serve(
    conn: TcpStream,
    script: &Script,
    tune: &Tune,
    log: &Mutex<Vec<Logged>>,
) -> std::io::Result<()> {
    let mut r = BufReader::new(conn.try_clone()?);
    let mut w = conn;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let (method, target) = (
            parts.next().unwrap_or("").to_owned(),
            parts.next().unwrap_or("").to_owned(),
        );
        let mut len = 0usize;
        let mut chunked = false;
        loop {
            let mut h = String::new();
            r.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap_or((h, ""));
            match k.trim().to_ascii_lowercase().as_str() {
                "content-length" => len = v.trim().parse().unwrap_or(0),
                "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
                _ => {}
            }
        }
        let body = if chunked {
            read_chunked(&mut r)?
        } else {
            let mut b = vec![0; len];
            r.read_exact(&mut b)?;
            b
        };
        let body = String::from_utf8_lossy(&body).into_owned();
        let (status, ctype, reply, logged) = answer(&method, &target, &body, script, tune);
        // SJOURNAL_MOCK_DUMP=DIR keeps every request body there (to study a host).
        if let Ok(dir) = std::env::var("SJOURNAL_MOCK_DUMP") {
            let mut log = log.lock().unwrap();
            let name = format!(
                "{dir}/{:03}-{}.json",
                log.len(),
                logged.answer.replace(['/', ':', ' '], "_")
            );
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(name, &logged.body);
            log.push(logged);
        } else {
            log.lock().unwrap().push(logged);
        }
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\ncache-control: no-cache\r\nconnection: keep-alive\r\n\r\n",
            reply.len()
        );
        w.write_all(head.as_bytes())?;
        w.write_all(reply.as_bytes())?;
        w.flush()?;
    }
}

fn read_chunked(r: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let mut size = String::new();
        r.read_line(&mut size)?;
        let n =
            usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        if n == 0 {
            let mut end = String::new();
            r.read_line(&mut end)?;
            return Ok(out);
        }
        let mut b = vec![0; n + 2];
        r.read_exact(&mut b)?;
        out.extend_from_slice(&b[..n]);
    }
}

/// What the model says for a request: the answer's steps decided from the conversation.
fn decide(api: Api, req: &Value, script: &Script) -> (Step, String) {
    let items = conversation(api, req);
    let last = items.last().map(|(_, t, _)| t.as_str()).unwrap_or("");
    let system = system_text(api, req);
    for (marker, reply) in &script.special {
        if last.contains(marker) || system.contains(marker) {
            return (Step::Text(reply), format!("special:{marker}"));
        }
    }
    // The latest scripted prompt the request mentions in a user message.
    let mut found = None;
    for (ri, rule) in script.rules.iter().enumerate() {
        if let Some(at) = items
            .iter()
            .position(|(user, t, _)| *user && t.contains(rule.key))
        {
            found = Some((ri, at));
        }
    }
    let Some((ri, at)) = found else {
        return (Step::Text("ok"), "none".into());
    };
    let results: usize = items[at..].iter().map(|(_, _, n)| n).sum();
    let rule = &script.rules[ri];
    let step = match rule
        .steps
        .get(results)
        .cloned()
        .unwrap_or(Step::Text("done"))
    {
        Step::Dynamic(name, f) => Step::Tool(name, f(&req.to_string())),
        s => s,
    };
    (step, format!("{}:{results}", rule.key))
}

/// The conversation as (is a user message, its text, tool results it carries).
fn conversation(api: Api, req: &Value) -> Vec<(bool, String, usize)> {
    let arr = |k: &str| {
        req.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let role = |v: &Value| {
        v.get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match api {
        Api::Anthropic => arr("messages")
            .iter()
            .map(|m| {
                let n = m
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|c| c.iter().filter(|b| b["type"] == "tool_result").count())
                    .unwrap_or(0);
                (role(m) == "user", m.to_string(), n)
            })
            .collect(),
        Api::Responses => arr("input")
            .iter()
            .map(|m| {
                let n = (m["type"] == "function_call_output"
                    || m["type"] == "custom_tool_call_output") as usize;
                (role(m) == "user", m.to_string(), n)
            })
            .collect(),
        Api::Chat => arr("messages")
            .iter()
            .map(|m| {
                let r = role(m);
                (r == "user", m.to_string(), (r == "tool") as usize)
            })
            .collect(),
        Api::Gemini => arr("contents")
            .iter()
            .map(|m| {
                let n = m
                    .get("parts")
                    .and_then(Value::as_array)
                    .map(|p| {
                        p.iter()
                            .filter(|p| p.get("functionResponse").is_some())
                            .count()
                    })
                    .unwrap_or(0);
                (role(m) == "user" && n == 0, m.to_string(), n)
            })
            .collect(),
    }
}

fn system_text(api: Api, req: &Value) -> String {
    match api {
        Api::Anthropic => req.get("system").map(Value::to_string).unwrap_or_default(),
        Api::Responses => req
            .get("instructions")
            .map(Value::to_string)
            .unwrap_or_default(),
        Api::Chat => req["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter(|m| m["role"] == "system" || m["role"] == "developer")
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
        Api::Gemini => req
            .get("systemInstruction")
            .map(Value::to_string)
            .unwrap_or_default(),
    }
}

/// Input tokens to report: `big_after`'s when the request's last user message holds its key
/// (the user's own text: not sjournal's context carried with it, which may quote an earlier
/// prompt).
fn tokens(script: &Script, api: Option<Api>, req: &Value) -> u64 {
    if let (Some((key, n)), Some(api)) = (script.big_after, api) {
        let items = conversation(api, req);
        if let Some((_, text, _)) = items.iter().rev().find(|(user, _, _)| *user) {
            let own = text.split("sjournal: ").next().unwrap_or("");
            if own.contains(key) {
                return n;
            }
        }
    }
    script.input_tokens.max(10)
}

fn answer(
    method: &str,
    target: &str,
    body: &str,
    script: &Script,
    tune: &Tune,
) -> (&'static str, &'static str, String, Logged) {
    let path = target.split('?').next().unwrap_or(target).to_owned();
    let req: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let mut logged = Logged {
        api: None,
        path: target.to_owned(),
        body: body.to_owned(),
        json: req.clone(),
        answer: "other".into(),
    };
    let stream = req.get("stream").and_then(Value::as_bool).unwrap_or(false);
    const SSE: &str = "text/event-stream";
    const JSON: &str = "application/json";
    if method == "GET" && path.ends_with("/models") {
        let models = json!({"object": "list", "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]});
        return ("200 OK", JSON, models.to_string(), logged);
    }
    let n = tokens(script, api_of(&path), &req);
    let api = if path.ends_with("/messages/count_tokens") {
        logged.api = Some(Api::Anthropic);
        logged.answer = "count".into();
        return (
            "200 OK",
            JSON,
            json!({"input_tokens": n}).to_string(),
            logged,
        );
    } else if path.ends_with("/messages") {
        Api::Anthropic
    } else if path.ends_with("/responses") {
        Api::Responses
    } else if path.ends_with("/chat/completions") {
        Api::Chat
    } else if path.contains(":countTokens") {
        logged.api = Some(Api::Gemini);
        logged.answer = "count".into();
        return (
            "200 OK",
            JSON,
            json!({"totalTokens": n}).to_string(),
            logged,
        );
    } else if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        Api::Gemini
    } else {
        return ("404 Not Found", JSON, "{}".into(), logged);
    };
    logged.api = Some(api);
    let (step, why) = decide(api, &req, script);
    let n = tune
        .big_answers
        .iter()
        .find(|(answer, _)| *answer == why)
        .map_or(n, |(_, big)| *big);
    if why.starts_with("special:") && script.special_delay_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(script.special_delay_ms));
    }
    logged.answer = why;
    let id = format!("{:x}", fastrand::u64(..));
    let reply = match api {
        Api::Anthropic if stream => ("200 OK", SSE, anthropic_sse(&step, &id, n)),
        Api::Anthropic => ("200 OK", JSON, anthropic_json(&step, &id, n).to_string()),
        Api::Responses => ("200 OK", SSE, responses_sse(&step, &id, n)),
        Api::Chat if stream => ("200 OK", SSE, chat_sse(&step, &id, n)),
        Api::Chat => ("200 OK", JSON, chat_json(&step, &id, n).to_string()),
        Api::Gemini if path.contains(":streamGenerateContent") => (
            "200 OK",
            SSE,
            format!("data: {}\r\n\r\n", gemini_json(&step, n)),
        ),
        Api::Gemini => ("200 OK", JSON, gemini_json(&step, n).to_string()),
    };
    (reply.0, reply.1, reply.2, logged)
}

fn api_of(path: &str) -> Option<Api> {
    if path.ends_with("/messages") {
        Some(Api::Anthropic)
    } else if path.ends_with("/responses") {
        Some(Api::Responses)
    } else if path.ends_with("/chat/completions") {
        Some(Api::Chat)
    } else if path.contains("GenerateContent") || path.contains("generateContent") {
        Some(Api::Gemini)
    } else {
        None
    }
}

fn sse(events: &[(Option<&str>, Value)]) -> String {
    let mut s = String::new();
    for (name, data) in events {
        if let Some(n) = name {
            s.push_str(&format!("event: {n}\n"));
        }
        s.push_str(&format!("data: {data}\n\n"));
    }
    s
}

fn anthropic_json(step: &Step, id: &str, n: u64) -> Value {
    let (content, stop) = match step {
        Step::Text(t) => (json!([{"type": "text", "text": t}]), "end_turn"),
        Step::Tool(name, args) => (
            json!([{"type": "tool_use", "id": format!("toolu_{id}"), "name": name, "input": args}]),
            "tool_use",
        ),
        Step::Dynamic(..) => unreachable!("resolved in decide"),
    };
    json!({"id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": "claude-mock",
           "content": content, "stop_reason": stop, "stop_sequence": null,
           "usage": {"input_tokens": n, "output_tokens": 5}})
}

fn anthropic_sse(step: &Step, id: &str, n: u64) -> String {
    let msg = json!({"id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": "claude-mock",
                     "content": [], "stop_reason": null, "stop_sequence": null,
                     "usage": {"input_tokens": n, "output_tokens": 1}});
    let mut ev = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": msg}),
    )];
    let stop = match step {
        Step::Text(t) => {
            ev.push((Some("content_block_start"), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
            ev.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}})));
            "end_turn"
        }
        Step::Tool(name, args) => {
            ev.push((Some("content_block_start"), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": format!("toolu_{id}"), "name": name, "input": {}}})));
            ev.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": args.to_string()}})));
            "tool_use"
        }
        Step::Dynamic(..) => unreachable!("resolved in decide"),
    };
    ev.push((
        Some("content_block_stop"),
        json!({"type": "content_block_stop", "index": 0}),
    ));
    ev.push((Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}})));
    ev.push((Some("message_stop"), json!({"type": "message_stop"})));
    sse(&ev)
}

fn responses_sse(step: &Step, id: &str, n: u64) -> String {
    let item = match step {
        Step::Text(t) => {
            json!({"type": "message", "role": "assistant", "id": format!("msg_{id}"), "status": "completed",
                                 "content": [{"type": "output_text", "text": t, "annotations": []}]})
        }
        Step::Tool(name, args) => {
            let mut call = json!({"type": "function_call", "id": format!("fc_{id}"), "status": "completed",
                                  "name": name, "arguments": args.to_string(), "call_id": format!("call_{id}")});
            if let Some((ns, n)) = name.split_once('/') {
                call["namespace"] = json!(ns);
                call["name"] = json!(n);
            }
            call
        }
        Step::Dynamic(..) => unreachable!("resolved in decide"),
    };
    let usage = json!({"input_tokens": n, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                       "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": n + 5});
    sse(&[
        (
            Some("response.created"),
            json!({"type": "response.created", "response": {"id": format!("resp_{id}")}}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "response": {"id": format!("resp_{id}"), "usage": usage}}),
        ),
    ])
}

fn chat_message(step: &Step, id: &str) -> (Value, &'static str) {
    match step {
        Step::Text(t) => (json!({"role": "assistant", "content": t}), "stop"),
        Step::Tool(name, args) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_{id}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}}]}),
            "tool_calls",
        ),
        Step::Dynamic(..) => unreachable!("resolved in decide"),
    }
}

fn chat_usage(n: u64) -> Value {
    json!({"prompt_tokens": n, "completion_tokens": 5, "total_tokens": n + 5})
}

fn chat_json(step: &Step, id: &str, n: u64) -> Value {
    let (message, finish) = chat_message(step, id);
    json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion", "created": 0, "model": "mock-model",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": chat_usage(n)})
}

fn chat_sse(step: &Step, id: &str, n: u64) -> String {
    let (delta, finish) = chat_message(step, id);
    let chunk = |choices: Value, usage: Value| {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
               "choices": choices, "usage": usage})
    };
    let mut s = sse(&[
        (
            None,
            chunk(
                json!([{"index": 0, "delta": delta, "finish_reason": null}]),
                Value::Null,
            ),
        ),
        (
            None,
            chunk(
                json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
                Value::Null,
            ),
        ),
        (None, chunk(json!([]), chat_usage(n))),
    ]);
    s.push_str("data: [DONE]\n\n");
    s
}

fn gemini_json(step: &Step, n: u64) -> Value {
    let part = match step {
        Step::Text(t) => json!({"text": t}),
        Step::Tool(name, args) => json!({"functionCall": {"name": name, "args": args}}),
        Step::Dynamic(..) => unreachable!("resolved in decide"),
    };
    json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": n, "candidatesTokenCount": 5, "totalTokenCount": n + 5},
           "modelVersion": "gemini-2.5-flash"})
}
