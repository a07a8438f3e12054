//! `sjournal demo`: the main job end to end, in a temporary root. A recorded Claude Code
//! session (real payload shapes from `tests/fixtures/claude-code`) is played through the real
//! hook path — this binary spawned as `sjournal hook` once per event, as the host runs it —
//! with a context entry set early, a request with standing rules, a todo list, many tool
//! calls, a failing test run, and an automatic compaction. It shows what was injected at each
//! step (nothing where the model already has it), the recovery block after the compaction,
//! checks that every injection equals a re-derivation from the journal alone (a replay),
//! verifies the chain, simulates a crash that tears the last write and shows recovery
//! quarantining it, and finally asks the journal: a search, the record behind its hit, and the
//! same search as an agent makes it over MCP.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::cli::{output, Outcome};
use sjournal::context::Channel;
use sjournal::error::{Error, Result};
use sjournal::journal::{verify_file, JournalReader, Root, Writer, WriterOptions};
use sjournal::replay::{replay, session::SessionFold, CheckStatus};
use sjournal::snapshot::{load_state, LoadOptions};

const FIXTURE: &str = include_str!("../../../tests/fixtures/claude-code/payloads-2.1.332.jsonl");
const SESSION: &str = "5e551011-de30-4a11-8000-00000000demo";

/// Play a recorded session through the hook, across a compaction, in a temporary directory
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the demo's files in DIR instead of a temporary directory (a new or empty one)
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

/// Tool call `i` of the session: edits and reads of the journal's source files, a new test
/// file now and then.
fn tool(event: &str, i: usize) -> String {
    payload(event, None, |p| {
        p["tool_use_id"] = Value::String(format!("toolu_demo_{i:03}"));
        let file = format!("/home/dev/project/src/part{}.rs", i % 7);
        let (name, input, response) = match i % 4 {
            0 => (
                "Edit",
                json!({"file_path": file, "old_string": "let crc = 0;", "new_string": "let crc = crc32(&frame);\nassert_ne!(crc, 0);"}),
                json!({}),
            ),
            1 | 2 => ("Read", json!({"file_path": file}), json!({})),
            _ => (
                "Write",
                json!({"file_path": format!("/home/dev/project/tests/torn_{i}.rs"), "content": "#[test]\nfn torn() {}\n"}),
                json!({"type": "create"}),
            ),
        };
        p["tool_name"] = name.into();
        p["tool_input"] = input;
        if p.get("tool_response").is_some() {
            p["tool_response"] = response;
        }
    })
}

/// A tool call with its own input (and response for the PostToolUse).
fn call(event: &str, id: &str, name: &str, input: Value, extra: Value) -> String {
    payload(event, None, |p| {
        p["tool_use_id"] = id.into();
        p["tool_name"] = name.into();
        p["tool_input"] = input;
        for (k, v) in extra.as_object().expect("an object") {
            p[k] = v.clone();
        }
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

/// Checks every injection the hook journaled against a re-derivation from the journal
/// alone: (journaled, matching).
fn rebuild_check(root: &Root) -> Result<(usize, usize)> {
    let reader = JournalReader::open(&root.session(SESSION)?.journal, None)?;
    let mut fold = SessionFold::new(crate::cli::shared::load_policy(root));
    let (mut journaled, mut matching) = (0, 0);
    replay(&reader, &mut fold, Default::default(), |step| {
        if let Some(c) = step.injection.filter(|c| c.journaled.is_some()) {
            journaled += 1;
            matching += usize::from(c.status == CheckStatus::Match);
        }
        Ok(())
    })?;
    Ok((journaled, matching))
}

pub fn run(args: Args) -> crate::cli::error::Result<Outcome> {
    if let Some(dir) = &args.keep {
        keep_dir_is_free(dir)?;
    }
    Ok(play(args)?)
}

/// What the demo's last steps ask its journal (a search, then the same over MCP).
#[cfg(feature = "search")]
const QUERY: &str = "torn failed:yes";

/// This binary as `sjournal --root ROOT`, for the demo's last steps.
#[cfg(feature = "search")]
fn sjournal_at(root: &Root) -> Result<Command> {
    let exe = std::env::current_exe().map_err(|e| Error::io("locate", "the sjournal binary", e))?;
    let mut c = Command::new(exe);
    c.arg("--root").arg(root.dir());
    Ok(c)
}

/// Runs this binary as `sjournal --root ROOT ARGS...` and returns what it printed.
#[cfg(feature = "search")]
fn sjournal(root: &Root, args: &[&str]) -> Result<String> {
    let out = sjournal_at(root)?
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::io("run", "sjournal", e))?;
    if !out.status.success() {
        return Err(Error::InvalidInput {
            reason: format!("sjournal {} exited with {}", args.join(" "), out.status),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The last step: a search over the journal (the index is built by this first search) and
/// the record behind its best hit, as a person would run them.
#[cfg(feature = "search")]
fn ask_the_journal(root: &Root, say: &mut impl FnMut(&str) -> Result<()>) -> Result<()> {
    say(&format!(
        "\n10. Ask the journal: which command failed on the torn-write test?\n      sjournal search --all '{QUERY}'"
    ))?;
    let text = sjournal(root, &["search", "--all", "--limit", "3", QUERY])?;
    say(&indent(text.trim_end()))?;
    let json = sjournal(root, &["search", "--all", "--limit", "1", "--json", QUERY])?;
    let hit: Option<Value> = json
        .lines()
        .next()
        .and_then(|l| serde_json::from_str(l).ok());
    let Some(seq) = hit.as_ref().and_then(|h| h["seq"].as_u64()) else {
        say("      (no hit)")?;
        return Ok(());
    };
    let seq = seq.to_string();
    say(&format!(
        "      sjournal show --session {SESSION} --seq {seq}   (the record behind the hit)"
    ))?;
    let shown = sjournal(root, &["show", "--session", SESSION, "--seq", &seq])?;
    let lines: Vec<&str> = shown.lines().collect();
    const SHOWN_LINES: usize = 14;
    say(&indent(&lines[..lines.len().min(SHOWN_LINES)].join("\n")))?;
    if lines.len() > SHOWN_LINES {
        say(&format!(
            "      ... ({} more lines)",
            lines.len() - SHOWN_LINES
        ))?;
    }
    Ok(())
}

/// And as the agent asks it: `sjournal mcp` (the MCP server `install` registers with each
/// host), spoken to over stdio as a host does: `initialize`, then `tools/call search`. The
/// answer cites session, seq and hash, like the search above.
#[cfg(feature = "search")]
fn ask_over_mcp(root: &Root, say: &mut impl FnMut(&str) -> Result<()>) -> Result<()> {
    use std::io::{BufRead, BufReader};
    say(&format!(
        "\n11. The agent asks it too, over MCP: sjournal mcp --all, tools/call search {{\"query\": \"{QUERY}\"}}"
    ))?;
    let mut child = sjournal_at(root)?
        .args(["mcp", "--all"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::io("run", "sjournal mcp", e))?;
    let failed = |what: String| Error::InvalidInput {
        reason: format!("sjournal mcp: {what}"),
    };
    let mut to = child.stdin.take().expect("piped");
    let mut from = BufReader::new(child.stdout.take().expect("piped"));
    // A server that stops answering is killed after MCP_WAIT: its stdout then ends, and the
    // read below with it.
    let child = std::sync::Arc::new(std::sync::Mutex::new(child));
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = {
        let child = child.clone();
        std::thread::spawn(move || {
            const MCP_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(MCP_WAIT)
            {
                let _ = child.lock().map(|mut c| c.kill());
            }
        })
    };
    let answer = (move || -> Result<Value> {
        let mut send = |v: Value| {
            writeln!(to, "{v}")
                .and_then(|()| to.flush())
                .map_err(|e| Error::io("write to", "sjournal mcp", e))
        };
        let mut answer_to = |id: u64| -> Result<Value> {
            loop {
                let mut line = String::new();
                if from
                    .read_line(&mut line)
                    .map_err(|e| Error::io("read from", "sjournal mcp", e))?
                    == 0
                {
                    return Err(failed(format!(
                        "closed its output before answering request {id}"
                    )));
                }
                let v: Value = serde_json::from_str(&line)
                    .map_err(|e| failed(format!("printed a line that is not JSON ({e})")))?;
                if v["id"] == id {
                    return Ok(v);
                }
            }
        };
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "sjournal-demo", "version": env!("CARGO_PKG_VERSION")}}}),
        )?;
        answer_to(1)?;
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": QUERY, "limit": 1}}}),
        )?;
        answer_to(2)
    })();
    // Its stdin is closed now: it ends by itself; killed if it has not within a moment.
    let _ = done.send(());
    let _ = watchdog.join();
    if let Ok(mut c) = child.lock() {
        let by = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < by {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = c.kill();
        let _ = c.wait();
    }
    let answer = answer?;
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .ok_or_else(|| failed(format!("no text in its answer: {answer}")))?;
    let lines: Vec<&str> = text.lines().collect();
    const SHOWN_LINES: usize = 6;
    say(&indent(&lines[..lines.len().min(SHOWN_LINES)].join("\n")))?;
    Ok(())
}

/// `--keep DIR` must be new or empty: the demo's narration (seqs, counts, the session's
/// records) is that of one run in a fresh root, and a second run into the same root would
/// append to the first one's session.
fn keep_dir_is_free(dir: &std::path::Path) -> crate::cli::error::Result<()> {
    let refuse = |why: &str| crate::cli::error::CliError::Usage {
        message: format!(
            "--keep {}: {why}; the demo plays into a fresh root, so give it a new or empty \
             directory (nothing was written)",
            dir.display()
        ),
    };
    match std::fs::read_dir(dir) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(refuse("the directory is not empty (an earlier demo run?)")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(refuse("not a directory")),
        Err(e) => Err(Error::io("read directory", dir, e).into()),
    }
}

fn play(args: Args) -> Result<Outcome> {
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
    let shown = |c: &Option<String>| indent(c.as_deref().unwrap_or("(nothing)"));
    // Characters injected, and what the renderer before the policy would have injected: a
    // block of about the compact block's size on every SessionStart and UserPromptSubmit.
    let mut injected = 0usize;
    let mut count = |c: &Option<String>| injected += c.as_deref().map_or(0, |t| t.chars().count());

    say(&format!(
        "sjournal demo: a Claude Code session played through `sjournal hook`\nroot: {}\n",
        dir.display()
    ))?;

    say("1. SessionStart (startup): the hook journals the event; nothing to inject yet")?;
    let ctx = hook(&root, &payload("SessionStart", Some("startup"), |_| {}))?;
    count(&ctx);
    say(&shown(&ctx))?;

    say("2. A hook author pins a decision as persistent context (survives compaction)")?;
    let decision =
        "Decision: journals are append-only; never rewrite a record, append a correction.";
    sjournal::primitives::context_set(
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

    let request = "Add a checksum to every record and test torn writes. Never change the \
                   on-disk format without a version bump, and always run `cargo test` before \
                   you finish.";
    say("3. UserPromptSubmit: only what the model has not seen (the new note), never the prompt")?;
    let ctx = hook(
        &root,
        &payload("UserPromptSubmit", None, |p| p["prompt"] = request.into()),
    )?;
    count(&ctx);
    say(&shown(&ctx))?;

    let calls = 24;
    say(&format!(
        "4. A todo list, {calls} tool calls (edits, reads, new tests), `cargo test` failing, Stop"
    ))?;
    let todos = json!({"todos": [
        {"content": "Add the checksum to the frame", "status": "completed", "activeForm": "Adding the checksum"},
        {"content": "Test torn writes", "status": "in_progress", "activeForm": "Testing torn writes"},
        {"content": "Document the format change", "status": "pending", "activeForm": "Documenting"}
    ]});
    hook(
        &root,
        &call(
            "PreToolUse",
            "toolu_todo",
            "TodoWrite",
            todos.clone(),
            json!({}),
        ),
    )?;
    hook(
        &root,
        &call(
            "PostToolUse",
            "toolu_todo",
            "TodoWrite",
            todos,
            json!({"tool_response": {}}),
        ),
    )?;
    for i in 0..calls {
        hook(&root, &tool("PreToolUse", i))?;
        hook(&root, &tool("PostToolUse", i))?;
    }
    let test = json!({"command": "cargo test", "description": "Run the tests"});
    hook(
        &root,
        &call("PreToolUse", "toolu_test", "Bash", test.clone(), json!({})),
    )?;
    hook(
        &root,
        &call(
            "PostToolUseFailure",
            "toolu_test",
            "Bash",
            test,
            json!({"error": "Exit code 101\ntest torn::torn_write_is_quarantined ... FAILED\nerror: test failed, to rerun pass `--test torn`"}),
        ),
    )?;
    hook(
        &root,
        &payload("Stop", None, |p| {
            p["last_assistant_message"] =
                "The checksum is in. `cargo test` fails in torn_write_is_quarantined; next I will make recovery quarantine the torn tail.".into()
        }),
    )?;
    say("      done\n")?;

    say("5. Another prompt: the model has all of it in its transcript, so nothing is injected")?;
    let ctx = hook(
        &root,
        &payload("UserPromptSubmit", None, |p| p["prompt"] = "go on".into()),
    )?;
    count(&ctx);
    say(&shown(&ctx))?;

    say("6. The host compacts: PreCompact -> SubagentStop (the compactor) -> SessionStart(compact) -> PostCompact")?;
    hook(&root, &payload("PreCompact", Some("auto"), |_| {}))?;
    hook(&root, &payload("SubagentStop", Some("compaction"), |_| {}))?;
    let after = hook(&root, &payload("SessionStart", Some("compact"), |_| {}))?;
    count(&after);
    hook(&root, &payload("PostCompact", Some("auto"), |_| {}))?;
    say("   The recovery block injected after the compaction (what the summary may have lost):")?;
    say(&shown(&after))?;
    let after = after.unwrap_or_default();
    let kept = [
        ("the pinned decision", decision),
        ("the standing rule", "always run `cargo test`"),
        (
            "the todo in progress",
            "- [>] Test torn writes (in progress)",
        ),
        ("the failing command", "`cargo test` → exit 101"),
        ("where it left off", "next I will make recovery quarantine"),
    ];
    let mut all_kept = true;
    for (what, s) in kept {
        let yes = after.contains(s);
        all_kept &= yes;
        say(&format!(
            "   {what} present: {}",
            if yes { "yes" } else { "NO" }
        ))?;
    }

    say("\n7. The next prompt after the compaction: nothing again")?;
    let ctx = hook(
        &root,
        &payload("UserPromptSubmit", None, |p| p["prompt"] = "status?".into()),
    )?;
    count(&ctx);
    say(&shown(&ctx))?;
    let prompts_and_starts = 5;
    say(&format!(
        "   injected in all: {injected} characters; a block of this size at each of the {prompts_and_starts} \
         SessionStart/UserPromptSubmit events would be about {}",
        prompts_and_starts * after.chars().count()
    ))?;

    // Every injection, re-derived from the journal alone (a full replay, no snapshot).
    let (journaled, matching) = rebuild_check(&root)?;
    let same = journaled > 0 && journaled == matching;
    say(&format!(
        "   every injection equal to a re-derivation from the journal (replay): {} ({matching} of {journaled})\n",
        if same { "yes" } else { "NO" }
    ))?;

    say("8. SessionEnd, then verify: CRCs, contiguous seq, every blake3 chain link")?;
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

    say("9. A crash tears the next write in half; the next append quarantines the torn bytes")?;
    let torn_at = {
        // The high-water mark as it was before the write: a crash in the middle of a write
        // comes before its sync returned, so the mark never named the torn record.
        let mark_path = sjournal::journal::hwm::path_for(&path);
        let mark =
            sjournal::storage::read_regular(&mark_path, sjournal::storage::Owner::Anyone, 1 << 10)?;
        let mut w = Writer::open(&root, SESSION, &WriterOptions::default())?;
        let a = w.append(
            "Notification",
            &sjournal::fold::digest::encode_event(
                "Notification",
                r#"{"hook_event_name":"Notification","message":"torn"}"#,
            ),
        )?;
        drop(w);
        let len = std::fs::metadata(&path)
            .map_err(|e| Error::io("stat", &path, e))?
            .len();
        let cut = a.offset + (len - a.offset) / 2;
        let f = sjournal::journal::paths::open_file(&path, true, false)?;
        f.set_len(cut)
            .map_err(|e| Error::io("truncate", &path, e))?;
        // Forget the tail hint, and put the mark back, as a crash before they were written
        // would.
        let _ = std::fs::write(root.session(SESSION)?.lock, b"");
        std::fs::write(&mark_path, mark).map_err(|e| Error::io("write", &mark_path, e))?;
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
    #[cfg(feature = "search")]
    {
        ask_the_journal(&root, &mut say)?;
        ask_over_mcp(&root, &mut say)?;
    }
    if kept_dir {
        say(&format!(
            "\nExplore it: sjournal --root {} log|replay|state|show|report --session {SESSION}",
            dir.display()
        ))?;
    } else {
        say("\n(sjournal demo --keep DIR keeps the files, to explore with log, replay, state, show, report)")?;
    }
    Ok(if report.ok && all_kept && same {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
