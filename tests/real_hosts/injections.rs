//! What sjournal injected in a real host's session, read back from the journal, and the checks
//! of the injection policy (`context::policy`) every host's test makes on it: after a
//! compaction the recovery block exactly once, prompts otherwise get nothing or only what is
//! new, no item twice between two compactions, and never the prompt being answered.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::mock::Logged;
use crate::support::World;

/// One `sjournal.injected` record and the event it answered.
#[derive(Debug, Clone)]
pub struct Injection {
    /// The seq of the event it answered.
    pub seq: u64,
    /// The event's record kind (the host's name for it).
    pub kind: String,
    pub event: Value,
    /// The policy's rule: recovery, resume, startup, clear, prompt, ...
    pub mode: String,
    pub text: String,
    /// (key, hash) of each item the text carries.
    pub items: Vec<(String, String)>,
    /// What the recovery block left out because the host's summary says it.
    pub deduped: Vec<String>,
    /// The session's compaction count once the event was folded.
    pub compactions: u64,
}

impl Injection {
    /// The event's SessionStart source (or the bridge's), if any.
    pub fn source(&self) -> &str {
        self.event["source"].as_str().unwrap_or("")
    }
}

/// `t` escaped as inside a JSON string.
pub fn json_text(t: &str) -> String {
    serde_json::to_string(t)
        .unwrap()
        .trim_matches('"')
        .to_owned()
}

/// Every injection of a session, in order.
pub fn of(w: &World, session: &str) -> Vec<Injection> {
    let log: Vec<Value> = w
        .sj(&["log", "--json", "--session", session])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    log.iter()
        .filter(|r| r["kind"] == "sjournal.injected")
        .map(|r| {
            let p = &r["payload"];
            let seq = p["event_seq"].as_u64().unwrap();
            let event = log
                .iter()
                .find(|e| e["seq"] == seq)
                .expect("the injected event");
            let state: Value = serde_json::from_str(&w.sj(&[
                "state",
                "--json",
                "--session",
                session,
                "--at",
                &seq.to_string(),
            ]))
            .unwrap();
            Injection {
                seq,
                kind: event["kind"].as_str().unwrap_or("").to_owned(),
                event: event["payload"].clone(),
                mode: p["mode"].as_str().unwrap_or("").to_owned(),
                text: p["text"].as_str().unwrap_or("").to_owned(),
                items: p["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| {
                        (
                            i["key"].as_str().unwrap_or("").to_owned(),
                            i["hash"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .collect(),
                deduped: p["deduped"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d.as_str().map(str::to_owned))
                    .collect(),
                compactions: state["state"]["compactions"]["count"].as_u64().unwrap_or(0),
            }
        })
        .collect()
}

/// The injections, one paragraph each (for failure messages).
pub fn show(all: &[Injection]) -> String {
    all.iter()
        .map(|i| {
            format!(
                "--- seq {} {} source={:?} mode={} compactions={}\n{}\n",
                i.seq,
                i.kind,
                i.source(),
                i.mode,
                i.compactions,
                i.text
            )
        })
        .collect()
}

/// The policy's invariants over a session's injections:
/// - exactly one recovery block per compaction, the first injection after it;
/// - no item (key and hash) twice between two compactions (or a startup/clear, which reset
///   the model's view too);
/// - no injection at a prompt echoes the prompt being answered (`prompt_of` reads it).
#[track_caller]
pub fn assert_policy(
    all: &[Injection],
    compactions: u64,
    prompt_of: impl Fn(&Injection) -> Option<String>,
) {
    let recoveries: Vec<&Injection> = all.iter().filter(|i| i.mode == "recovery").collect();
    assert_eq!(
        recoveries.len() as u64,
        compactions,
        "one recovery block per compaction:\n{}",
        show(all)
    );
    for r in &recoveries {
        let first_after = all.iter().find(|i| i.compactions == r.compactions).unwrap();
        assert_eq!(
            first_after.seq,
            r.seq,
            "the recovery block is the first injection after compaction #{}:\n{}",
            r.compactions,
            show(all)
        );
    }
    let mut window: BTreeSet<(String, String)> = BTreeSet::new();
    let mut epoch = None;
    for i in all {
        let resets = matches!(i.source(), "startup" | "clear");
        if epoch != Some(i.compactions) || resets {
            window.clear();
            epoch = Some(i.compactions);
        }
        if i.mode == "subagent" {
            continue;
        }
        for item in &i.items {
            assert!(
                window.insert(item.clone()),
                "{} injected twice unchanged between two compactions (seq {}):\n{}",
                item.0,
                i.seq,
                show(all)
            );
        }
    }
    for i in all {
        if let Some(p) = prompt_of(i).filter(|p| !p.trim().is_empty()) {
            assert!(
                !i.text.contains(p.trim()),
                "the prompt {p:?} echoed at seq {}:\n{}",
                i.seq,
                show(all)
            );
        }
    }
}

/// The prompt of a Claude-shaped prompt event (UserPromptSubmit, the bridges', BeforeAgent's
/// without the `<hook_context>` Gemini CLI put before it).
pub fn prompt(i: &Injection) -> Option<String> {
    let p = i.event["prompt"].as_str()?;
    let p = match p.rfind("</hook_context>") {
        Some(at) => &p[at + "</hook_context>".len()..],
        None => p,
    };
    Some(p.to_owned())
}

/// Where each injection was made: (event kind, source, mode), in journal order.
pub fn points(all: &[Injection]) -> Vec<(&str, &str, &str)> {
    all.iter()
        .map(|i| (i.kind.as_str(), i.source(), i.mode.as_str()))
        .collect()
}

/// The index of the first compaction request, after checking that no request up to and
/// including it carries anything of sjournal's.
pub fn quiet_until_compaction(reqs: &[Logged]) -> usize {
    let ci = reqs
        .iter()
        .position(|r| r.answer.starts_with("special:"))
        .expect("a compaction request");
    for r in &reqs[..=ci] {
        assert!(!r.body.contains("sjournal: "), "{}: {}", r.answer, r.body);
    }
    ci
}
