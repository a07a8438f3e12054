//! The bodies of the fuzz targets, shared by the libFuzzer harnesses in `fuzz_targets/` (run
//! by `tools/fuzz.sh`) and by `tests/fuzz_smoke.rs`, which replays the seed corpus and every
//! input a fuzzer ever crashed on (`fuzz/regressions/<target>/`) on the stable toolchain.
//!
//! Each body feeds untrusted bytes to decoders and parsers and checks what must hold whatever
//! the bytes are: no panic, no allocation beyond what the bytes justify (libFuzzer's
//! `-rss_limit_mb` and `-malloc_limit_mb` enforce it), and the invariants named below.
#![allow(dead_code)]

use std::path::Path;

use sjournal::audit::inspect::inspect;
use sjournal::event::{lenient, Event, Host};
use sjournal::fold::{RecordView, State};
use sjournal::format::header::Header;
use sjournal::format::mark::Mark;
use sjournal::format::payload::{self, SYSTEM_KINDS};
use sjournal::format::record;
use sjournal::hook::read::Received;
use sjournal::hook::route::{capture, salvage_session_id};
use sjournal::host::HostFlag;
use sjournal::journal::hint::TailHint;
use sjournal::journal::reader::Records;
use sjournal::journal::recovery::{self, Verdict};
use sjournal::journal::scan::{self, Chain, Stop};
use sjournal::journal::verify::verify_bytes;
use sjournal::snapshot::SnapshotHeader;

/// Record framing and the recovery rule over arbitrary bytes.
pub fn frame(data: &[u8]) {
    if let Ok(f) = record::parse(data) {
        assert!(f.len() <= data.len());
        assert!(record::valid_kind(f.kind));
        // A frame re-encoded from its fields is the same bytes (a digested one when its
        // digest is its payload's, or it is erased and keeps the digest it has).
        let mut b = Vec::new();
        let erased = f.erased().then_some(&f.payload_digest);
        if !f.digested() {
            record::encode(&mut b, f.seq, f.ts_unix_ns, f.kind, &f.prev_hash, f.payload);
        } else if f.erased() || f.payload_matches() {
            let h = record::encode_digested(
                &mut b,
                f.version(),
                f.seq,
                f.ts_unix_ns,
                f.kind,
                &f.prev_hash,
                f.payload,
                &f.salt,
                erased,
            );
            assert_eq!(h, f.hash());
        } else {
            b.extend_from_slice(&data[..f.len()]);
        }
        assert_eq!(b, &data[..f.len()]);
    }
    let last_seq = data.first().copied().unwrap_or(0) as u64;
    if let Some(at) = scan::find_valid_frame_after(data, last_seq) {
        assert!(at > 0 && record::parse(&data[at..]).is_ok());
    }
    if let Some(at) = scan::find_any_frame_after(data) {
        assert!(at > 0 && record::parse(&data[at..]).is_ok());
    }
    if let Err(e) = record::parse(data) {
        let stop = Stop {
            offset: 0,
            problem: scan::Problem::Frame(e),
        };
        let v = recovery::classify(Some(&stop), data.len() as u64, last_seq, None, |o, _| {
            Ok::<_, std::convert::Infallible>(&data[o as usize..])
        })
        .unwrap();
        // A torn tail never holds a frame that could follow the last record.
        if let Verdict::TornTail { tail, .. } = v {
            assert!(scan::find_valid_frame_after(tail, last_seq).is_none());
        }
    }
}

/// The fixed-layout decoders: journal header, tail hint, high-water mark.
pub fn header(data: &[u8]) {
    if let Ok((h, len)) = Header::decode(data) {
        assert!(len <= data.len());
        assert_eq!(h.encode(), &data[..len]);
    }
    let _ = recovery::is_torn_header(data, data.len() as u64);
    if let Some(h) = TailHint::decode(data) {
        assert_eq!(&h.encode()[..], &data[..sjournal::journal::hint::LEN]);
    }
    if let Some(m) = Mark::decode(data) {
        assert_eq!(&m.encode()[..], &data[..sjournal::format::mark::LEN]);
    }
}

/// The snapshot header and the state body (rmp-serde over untrusted bytes).
pub fn snapshot(data: &[u8]) {
    if let Ok(h) = SnapshotHeader::decode(data) {
        assert_eq!(&h.encode()[..], &data[..sjournal::snapshot::HEADER_LEN]);
    }
    if let Ok(s) = State::decode(data) {
        // Whatever decodes encodes again, and folding more into it does not panic.
        let mut s = s;
        let _ = s.encode();
        s.apply(&RecordView {
            seq: s.seq.saturating_add(1),
            ts_unix_ns: 0,
            kind: "Stop",
            payload: &payload::encode_event_json(r#"{"hook_event_name":"Stop"}"#),
        });
    }
}

/// A whole journal file: verify, inspect (resynchronizing past damage), the reader, and the
/// fold of what it yields.
pub fn journal(data: &[u8]) {
    // Not named like a journal, so the file-name binding is not checked.
    let path = Path::new("fuzz-input");
    let v = verify_bytes(path, data, Ok(None), |s, c| Records::new(data, s, c)).unwrap();
    let i = inspect(data);
    if v.ok {
        assert!(i.summary.clean, "verify and inspect disagree");
        assert_eq!(i.summary.records, v.records);
    }
    if let Ok((_, hlen)) = Header::decode(data) {
        let genesis = sjournal::format::hash::genesis_hash(&data[..hlen]);
        let mut state = State::new();
        let mut n = 0;
        for r in Records::new(data, hlen, Chain::genesis(genesis)).map_while(|r| r.ok()) {
            state.apply(&RecordView::from(&r));
            n += 1;
        }
        assert_eq!(n, v.records);
    }
}

/// Payload decoders for every system kind, and events.
pub fn payload(data: &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let kind = SYSTEM_KINDS
        .get(k as usize % (SYSTEM_KINDS.len() + 1))
        .copied()
        .unwrap_or("Ev");
    let _ = payload::to_json(1, kind, rest);
    let _ = payload::decode_event(1, rest);
    let mut s = State::new();
    s.apply(&RecordView {
        seq: 1,
        ts_unix_ns: 0,
        kind,
        payload: rest,
    });
    let _ = s.encode();
}

/// The hook's input: capture (lenient JSON, host detection, session and kind) and the
/// salvage of a session id from bytes that are not JSON.
pub fn capture_input(data: &[u8]) {
    let _ = salvage_session_id(data);
    let mut diag = Vec::new();
    let env = |_: &str| None;
    let mut received = Received::default();
    received.push(data);
    received.eof = true;
    let c = capture(received, HostFlag::Auto, &env, &mut diag);
    assert!(!c.session_id.is_empty());
    assert!(record::valid_kind(&c.kind));
    // An event keeps the input byte for byte.
    if let Some(raw) = &c.raw_json {
        assert_eq!(raw.as_bytes(), data);
    }
}

/// Every host adapter over the same text, and the fold of what it gives.
pub fn adapters(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let text = lenient::text(text);
    for host in Host::ALL {
        let e = Event::parse_as(Some(host), "Ev", &text);
        let _ = e.tool_input();
    }
    let e = Event::parse("Ev", &text);
    let _ = e.tool_input();
    let mut s = State::new();
    s.apply(&RecordView {
        seq: 1,
        ts_unix_ns: 1,
        kind: "Ev",
        payload: &payload::encode_event_json(&text),
    });
}

/// The lenient JSON pre-pass: total, idempotent, and never makes accepted JSON refused.
pub fn lenient(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let once = lenient::text(text);
    assert_eq!(lenient::text(&once), once, "not idempotent");
    let strict = serde_json::from_str::<serde_json::Value>(text);
    let lenient = serde_json::from_str::<serde_json::Value>(&once);
    if strict.is_ok() {
        assert!(lenient.is_ok(), "accepted JSON refused after the pre-pass");
    }
    if once != text {
        assert!(once.len() >= text.len());
    }
}

/// Memory planning over any event of any host: a "remember" is accepted as said only from a
/// main session's human prompt, as each host tells it, that starts with "remember". The body
/// reads the bytes twice: as a payload's JSON text, and as a recipe for a payload of one of the
/// hosts' prompt shapes (each marker of who wrote it switched on or off by a bit, the rest a
/// prompt), so that the fuzzer reaches the prompt events without guessing their field names.
pub fn memory_plan(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        check_remember(text);
    }
    check_remember(&recipe(data).to_string());
}

/// A hook payload of one host's prompt shape, from `data`: its first byte picks the host and
/// event, the next two switch each marker of another author on or off, the rest is the prompt.
pub fn recipe(data: &[u8]) -> serde_json::Value {
    use serde_json::json;
    let b = |i: usize| data.get(i).copied().unwrap_or(0);
    let (pick, m1, m2) = (b(0), b(1), b(2));
    let rest = data.get(3..).unwrap_or(&[]);
    let text = String::from_utf8_lossy(rest);
    let prompt = if pick & 0x80 != 0 {
        format!("remember globally: {text}")
    } else {
        text.into_owned()
    };
    let on = |byte: u8, bit: u8| byte >> bit & 1 == 1;
    let mut v = match pick % 9 {
        0 => json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": prompt}),
        1 => json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "turn_id": "t",
                    "prompt": prompt}),
        2 => json!({"hook_event_name": "BeforeAgent", "session_id": "s", "timestamp": "t",
                    "prompt": prompt}),
        3 => json!({"hook_event_name": "beforeSubmitPrompt", "conversation_id": "s",
                    "prompt": prompt}),
        4 => json!({"hookName": "UserPromptSubmit", "taskId": "s", "clineVersion": "3",
                    "userPromptSubmit": {"prompt": prompt}}),
        5 => json!({"hookName": "prompt_submit", "taskId": "s", "agent_id": "a",
                    "userPromptSubmit": {"prompt": prompt}}),
        6 => json!({"hook_event_name": "UserPromptSubmit", "sjournal_bridge": "opencode",
                    "session_id": "s", "prompt": prompt}),
        7 => json!({"hook_event_name": "UserPromptSubmit", "sjournal_bridge": "pi",
                    "session_id": "s", "prompt": prompt}),
        _ => json!({"hook_event_name": "before_prompt_build", "sjournal_bridge": "openclaw",
                    "session_id": "s", "prompt": prompt, "event": {"prompt": prompt},
                    "ctx": {}}),
    };
    let keys = [
        "agent_id",
        "parent_agent_id",
        "parent_session_id",
        "parentSession",
    ];
    for (bit, k) in keys.iter().enumerate() {
        if on(m1, bit as u8) {
            v[*k] = "p".into();
        }
    }
    if on(m1, 4) {
        v["senderIsOwner"] = on(m1, 5).into();
    }
    if on(m1, 6) {
        let source = [
            "user",
            "subagent",
            "interactive",
            "rpc",
            "extension",
            "template",
        ];
        v["prompt_source"] = source[(m2 >> 5) as usize % source.len()].into();
    }
    if on(m1, 7) {
        let kind = ["main", "spawn", "cron", "x"];
        v["sessionKind"] = kind[(m2 & 3) as usize].into();
    }
    let keys = [
        "agent:main:x",
        "agent:main:subagent:y",
        "agent:main:cron:z",
        "agent:a:acp:q",
    ];
    v["sessionKey"] = keys[(m2 >> 2 & 3) as usize].into();
    if v.get("ctx").is_some() || on(m2, 4) {
        let trigger = ["user", "cron", "heartbeat", "other"];
        let prov = ["external_user", "inter_session", "internal_system", "x"];
        let mut ctx = json!({"trigger": trigger[(m2 >> 5 & 3) as usize]});
        if on(m2, 7) {
            ctx["inputProvenance"] = json!({"kind": prov[(m2 & 3) as usize]});
            if on(m2, 2) {
                ctx["inputProvenance"]["sourceRole"] = "subagent".into();
            }
        }
        if on(m2, 3) {
            ctx["senderId"] = "someone".into();
        }
        v["ctx"] = ctx;
    }
    v
}

/// Every host's reading of `text`: a "remember" accepted as said must pass [`remember_oracle`].
pub fn check_remember(text: &str) {
    let text = lenient::text(text);
    let value: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    for host in Host::ALL.into_iter().map(Some).chain([None]) {
        let e = Event::parse_as(host, "Ev", &text);
        let Some(prompt) = e.prompt.as_deref() else {
            continue;
        };
        // Gemini CLI's prompt as the fold reads it with nothing journaled as injected: as sent.
        let prompt = sjournal::fold::model_view::user_prompt(&Default::default(), prompt);
        let Some(ask) = sjournal::memory::hook::remember_ask(&e, prompt) else {
            continue;
        };
        if ask.accepted() {
            let v = value
                .as_ref()
                .expect("an accepted prompt came from a JSON object");
            assert!(
                remember_oracle(v, e.host, prompt),
                "accepted as the user's own words ({}): {text}",
                e.host
            );
        } else {
            assert!(
                ask.scope(None).is_none(),
                "a relayed remember is proposed in the project"
            );
        }
    }
}

/// Whether a payload is a main session's human prompt, as `host` tells it, starting with
/// "remember": written against the payload's JSON, apart from the rule it checks.
pub fn remember_oracle(v: &serde_json::Value, host: Host, prompt: &str) -> bool {
    let s = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let set = |k: &str| s(v, k).is_some_and(|x| !x.is_empty());
    let name = s(v, "hook_event_name").or_else(|| s(v, "hookName"));
    let prompt_event = match host {
        Host::Gemini => name.as_deref() == Some("BeforeAgent"),
        Host::Cursor => name.as_deref() == Some("beforeSubmitPrompt"),
        Host::Cline => matches!(name.as_deref(), Some("UserPromptSubmit" | "prompt_submit")),
        Host::OpenClaw => name.as_deref() == Some("before_prompt_build"),
        Host::Unknown => false,
        _ => name.as_deref() == Some("UserPromptSubmit"),
    };
    let t = prompt.trim_start();
    let remember = t.len() >= 8 && t.as_bytes()[..8].eq_ignore_ascii_case(b"remember");
    let ctx = v.get("ctx").cloned().unwrap_or_default();
    let owner = |o: &serde_json::Value| o.get("senderIsOwner").and_then(|b| b.as_bool());
    let not_owner = owner(v) == Some(false) || owner(&ctx) == Some(false);
    // A subagent: Cline's SDK names every agent (`agent_id`), a subagent by its parent.
    let subagent = match host {
        Host::Cline => set("parent_agent_id"),
        _ => set("agent_id"),
    };
    let common = prompt_event && remember && !subagent && !not_owner;
    if !common {
        return false;
    }
    match host {
        Host::Claude | Host::Codex => !t.starts_with('<'),
        Host::Gemini | Host::Cursor | Host::Cline => true,
        Host::OpenCode => {
            s(v, "prompt_source").as_deref() == Some("user") && !set("parent_session_id")
        }
        Host::Pi => s(v, "prompt_source").as_deref() == Some("interactive"),
        Host::OpenClaw => {
            let key_ok = |k: Option<String>| {
                k.is_none_or(|k| {
                    ![":subagent:", ":spawn:", ":acp:", ":cron:"]
                        .iter()
                        .any(|m| k.contains(m))
                        && !k.starts_with("cron:")
                })
            };
            let prov = ctx.get("inputProvenance").cloned().unwrap_or_default();
            let sender = s(&ctx, "senderId").is_some_and(|x| !x.is_empty())
                || ctx
                    .get("channelContext")
                    .and_then(|c| c.get("sender"))
                    .is_some();
            key_ok(s(v, "sessionKey"))
                && key_ok(s(&ctx, "sessionKey"))
                && s(v, "sessionKind").is_none_or(|k| k == "main")
                && !set("parent_session_id")
                && !set("parentSession")
                && s(&ctx, "trigger").as_deref() == Some("user")
                && s(&prov, "kind").is_none_or(|k| k == "external_user")
                && s(&prov, "sourceRole").is_none()
                && (!sender || owner(v).or(owner(&ctx)) == Some(true))
        }
        Host::Unknown => false,
    }
}
