//! `sjournal demo`: the main job end to end, in a temporary root. A recorded Claude Code
//! session (real payload shapes from `tests/fixtures/claude-code`) is played through the real
//! hook path — this binary spawned as `sjournal hook` once per event, as the host runs it —
//! with a context entry set early, many tool calls, and an automatic compaction. It shows
//! what was injected before and after the compaction, checks the re-injected context equals
//! a rebuild from the journal alone, verifies the chain, and finally simulates a crash that
//! tears the last write and shows recovery quarantining it.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::cli::{output, Outcome};
use crate::context::Channel;
use crate::context::{inject, Extras, InjectionPoint, Policy};
use crate::error::{Error, Result};
use crate::journal::{verify_file, Root, Writer, WriterOptions};
use crate::snapshot::{load_state, LoadOptions};

const FIXTURE: &str = include_str!("../../../tests/fixtures/claude-code/payloads-2.1.332.jsonl");
const SESSION: &str = "5e551011-de30-4a11-8000-00000000demo";

/// Play a recorded session through the hook, across a compaction, in a temporary directory
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the demo's files in DIR instead of a temporary directory
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// A fixture payload by event and variant, rewritten into the demo's session.
fn payload(event: &str, variant: Option<&str>, edit: impl FnOnce(&mut Value)) -> String {
    let line = FIXTURE
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("fixture is JSON"))
        .find(|v| v["event"] == event && v["variant"].as_str() == variant)
        .unwrap_or_else(|| panic!("fixture has {event} {variant:?}"));
    let mut p = line["payload"].clone();
    p["session_id"] = Value::String(SESSION.into());
    let text = p.to_string().replace("<OUTDIR>", "/home/dev");
    let mut p: Value = serde_json::from_str(&text).expect("JSON");
    edit(&mut p);
    p.to_string()
}

fn tool(event: &str, i: usize) -> String {
    payload(event, None, |p| {
        p["tool_use_id"] = Value::String(format!("toolu_demo_{i:03}"));
        p["tool_name"] = Value::String(if i.is_multiple_of(3) { "Edit" } else { "Read" }.into());
        p["tool_input"] =
            serde_json::json!({ "file_path": format!("/home/dev/project/src/part{}.rs", i % 7) });
    })
}

/// Runs `sjournal hook` on one payload; returns the additionalContext it printed, if any.
fn hook(root: &Root, raw: &str) -> Result<Option<String>> {
    let exe = std::env::current_exe().map_err(|e| Error::io("locate", "the sjournal binary", e))?;
    let mut child = Command::new(exe)
        .arg("--root")
        .arg(root.dir())
        .args(["hook", "--host", "claude", "--deadline-ms", "2000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::io("spawn", "sjournal hook", e))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(raw.as_bytes())
        .map_err(|e| Error::io("write", "sjournal hook's stdin", e))?;
    let out = child
        .wait_with_output()
        .map_err(|e| Error::io("wait", "sjournal hook", e))?;
    if !out.status.success() {
        return Err(Error::InvalidInput {
            reason: format!("sjournal hook exited with {}", out.status),
        });
    }
    if out.stdout.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| Error::InvalidInput {
        reason: format!("sjournal hook printed something that is not JSON: {e}"),
    })?;
    Ok(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_owned))
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("      | {l}\n")).collect()
}

pub fn run(args: Args) -> Result<Outcome> {
    let tmp;
    let kept_dir = args.keep.is_some();
    let dir = match args.keep {
        Some(d) => d,
        None => {
            tmp = tempfile::tempdir().map_err(|e| Error::io("create", "temporary directory", e))?;
            tmp.path().to_owned()
        }
    };
    let root = Root::new(&dir);
    let mut out = output::stdout();
    let mut say = |s: &str| -> Result<()> {
        output::line(&mut out, s)?;
        out.flush().map_err(output::write_err)
    };

    say(&format!(
        "sjournal demo: a Claude Code session played through `sjournal hook`\nroot: {}\n",
        dir.display()
    ))?;

    say(
        "1. SessionStart (startup): the hook journals the event and injects the session's context",
    )?;
    let ctx = hook(&root, &payload("SessionStart", Some("startup"), |_| {}))?;
    say(&indent(ctx.as_deref().unwrap_or("(nothing)")))?;

    say("2. A hook author pins a decision as persistent context (survives compaction)")?;
    let decision =
        "Decision: journals are append-only; never rewrite a record, append a correction.";
    crate::primitives::context_set(
        &root,
        SESSION,
        Channel::Persistent,
        "decision",
        decision,
        &WriterOptions::default(),
    )?;
    say(&format!(
        "      sjournal context set --session {SESSION} --key decision '{decision}'\n"
    ))?;

    say("3. UserPromptSubmit: the context comes back with the prompt")?;
    let ctx = hook(
        &root,
        &payload("UserPromptSubmit", None, |p| {
            p["prompt"] =
                Value::String("Add a checksum to every record and test torn writes".into())
        }),
    )?;
    say(&indent(ctx.as_deref().unwrap_or("(nothing)")))?;

    let calls = 24;
    say(&format!(
        "4. {calls} tool calls (PreToolUse + PostToolUse), one failure, then Stop"
    ))?;
    for i in 0..calls {
        hook(&root, &tool("PreToolUse", i))?;
        hook(&root, &tool("PostToolUse", i))?;
    }
    hook(&root, &payload("PostToolUseFailure", None, |_| {}))?;
    hook(&root, &payload("Stop", None, |_| {}))?;
    say("      done\n")?;

    say("5. The host compacts: PreCompact -> SubagentStop (the compactor) -> SessionStart(compact) -> PostCompact")?;
    hook(&root, &payload("PreCompact", Some("auto"), |_| {}))?;
    hook(&root, &payload("SubagentStop", Some("compaction"), |_| {}))?;
    let after = hook(&root, &payload("SessionStart", Some("compact"), |_| {}))?;
    hook(&root, &payload("PostCompact", Some("auto"), |_| {}))?;
    say("   The context re-injected after the compaction, rebuilt from the journal:")?;
    let after = after.unwrap_or_default();
    say(&indent(&after))?;
    let survived = after.contains(decision);
    say(&format!(
        "   persistent decision present after compaction: {}",
        if survived { "yes" } else { "NO" }
    ))?;

    // What a rebuild from scratch (no snapshot, the journal alone) renders at that point.
    let compact_seq = {
        // The reader holds a shared lock while it lives (recovery waits for it): keep it short.
        let reader = crate::journal::JournalReader::open(&root.session(SESSION)?.journal, None)?;
        let last = reader
            .records()?
            .filter_map(|r| r.ok())
            .filter(|r| r.kind == "SessionStart")
            .map(|r| r.seq)
            .last();
        last.unwrap_or(0)
    };
    let (at, _) = load_state(
        &root,
        SESSION,
        &LoadOptions {
            at: Some(compact_seq),
            use_snapshot: false,
            ..LoadOptions::latest()
        },
    )?;
    let point = InjectionPoint {
        event_seq: compact_seq,
        kind: crate::event::EventKind::SessionStart,
        source: Some("compact".into()),
        host: crate::event::Host::Claude,
    };
    let rebuilt = inject(&at, &point, &Policy::default(), &Extras::default()).text;
    let same = rebuilt == after;
    say(&format!(
        "   equal to a full replay of the journal up to that event (seq {compact_seq}): {}\n",
        if same { "yes" } else { "NO" }
    ))?;

    say("6. SessionEnd, then verify: CRCs, contiguous seq, every blake3 chain link")?;
    hook(&root, &payload("SessionEnd", Some("other"), |_| {}))?;
    let path = root.session(SESSION)?.journal;
    let report = verify_file(&path, None)?;
    say(&format!("      {}", report.summary()))?;
    let (state_end, _) = load_state(&root, SESSION, &LoadOptions::latest())?;
    say(&format!(
        "      {} records, {} turns, {} tool calls, {} compaction(s); state hash {}\n",
        state_end.records,
        state_end.turns.count,
        state_end.tools.calls,
        state_end.compactions.count,
        state_end.state_hash()
    ))?;

    say("7. A crash tears the next write in half; the next append quarantines the torn bytes")?;
    let torn_at = {
        let mut w = Writer::open(&root, SESSION, &WriterOptions::default())?;
        let a = w.append_event(
            "Notification",
            r#"{"hook_event_name":"Notification","message":"torn"}"#,
        )?;
        drop(w);
        let len = std::fs::metadata(&path)
            .map_err(|e| Error::io("stat", &path, e))?
            .len();
        let cut = a.offset + (len - a.offset) / 2;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        f.set_len(cut)
            .map_err(|e| Error::io("truncate", &path, e))?;
        // Forget the tail hint, as a crash before it was written would.
        let _ = std::fs::write(root.session(SESSION)?.lock, b"");
        cut
    };
    say(&format!(
        "      verify now: {}",
        verify_file(&path, None)?.summary()
    ))?;
    let w = Writer::open(&root, SESSION, &WriterOptions::default())?;
    if let Some(r) = w.recovery() {
        say(&format!(
            "      recovered: the file ended at {torn_at}; cut {} bytes at offset {}, kept in {}, recorded as seq {}",
            r.length,
            r.offset,
            r.quarantine.file_name().unwrap_or_default().to_string_lossy(),
            r.recovered_seq
        ))?;
    }
    drop(w);
    let report = verify_file(&path, None)?;
    say(&format!(
        "      verify after recovery: {}",
        report.summary()
    ))?;
    if kept_dir {
        say(&format!(
            "\nExplore it: sjournal --root {} log|replay|state|report --session {SESSION}",
            dir.display()
        ))?;
    } else {
        say("\n(sjournal demo --keep DIR keeps the files, to explore with log, replay, state, report)")?;
    }
    Ok(if report.ok && survived && same {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
