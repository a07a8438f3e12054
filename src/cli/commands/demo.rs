//! `sjournal demo`: the journal end to end in a temporary root. Plays recorded Claude Code
//! payloads into a session, shows the log, verifies the chain, simulates a crash that tears
//! the last write, recovers (quarantining the torn bytes), appends again and verifies.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use crate::cli::{output, Outcome};
use crate::error::{Error, Result};
use crate::format::payload::encode_event;
use crate::journal::{verify_file, JournalReader, Root, Writer, WriterOptions};

const FIXTURE: &str = include_str!("../../../tests/fixtures/claude-code/payloads-2.1.332.jsonl");

/// Run a short end-to-end demonstration in a temporary directory
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the demo's files in DIR instead of a temporary directory
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<Outcome> {
    let tmp;
    let dir = match args.keep {
        Some(d) => d,
        None => {
            tmp = tempfile::tempdir().map_err(|e| Error::io("create", "temporary directory", e))?;
            tmp.path().to_owned()
        }
    };
    let root = Root::new(&dir);
    let session = "demo-session";
    let mut out = output::stdout();
    let say = |out: &mut _, s: &str| output::line(out, s);

    say(&mut out, &format!("sjournal demo, root {}", dir.display()))?;
    say(&mut out, "\n1. Appending recorded Claude Code hook payloads (each one fsync'd before it is acknowledged)")?;
    let mut w = Writer::open(&root, session, &WriterOptions::default())?;
    let mut n = 0;
    for line in FIXTURE.lines().take(12) {
        let v: serde_json::Value = serde_json::from_str(line).expect("fixture is JSON");
        let payload = v["payload"].to_string();
        let kind = v["event"].as_str().unwrap_or("event");
        let a = w.append(kind, &encode_event(&payload))?;
        n += 1;
        say(
            &mut out,
            &format!(
                "   seq {:>2}  {:<22} hash {}…",
                a.seq,
                kind,
                &a.hash.to_hex()[..16]
            ),
        )?;
    }
    let end = w.len();
    drop(w);

    say(
        &mut out,
        &format!("\n2. Verifying {n} records: CRCs, contiguous seq, blake3 chain"),
    )?;
    let r = verify_file(&root.session(session)?.journal, None)?;
    say(&mut out, &format!("   {}", r.summary()))?;

    say(
        &mut out,
        "\n3. Simulating a crash in the middle of a write: half a record at the end of the file",
    )?;
    let path = root.session(session)?.journal;
    {
        let mut w = Writer::open(&root, session, &WriterOptions::default())?;
        let a = w.append_event(
            "Stop",
            r#"{"hook_event_name":"Stop","note":"this write is torn"}"#,
        )?;
        drop(w);
        let full = std::fs::read(&path).map_err(|e| Error::io("read", &path, e))?;
        let torn_len = a.offset + (full.len() as u64 - a.offset) / 2;
        let f = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        f.set_len(torn_len)
            .map_err(|e| Error::io("truncate", &path, e))?;
        // Forget the tail hint, as a crash before it was written would.
        let lock = root.session(session)?.lock;
        let _ = std::fs::write(&lock, b"");
        say(
            &mut out,
            &format!("   file cut from {} to {} bytes", full.len(), torn_len),
        )?;
    }
    let r = verify_file(&path, None)?;
    say(&mut out, &format!("   verify now says: {}", r.summary()))?;

    say(&mut out, "\n4. The next append recovers: the torn tail goes to quarantine, a `sjournal.recovered` record says so")?;
    let mut w = Writer::open(&root, session, &WriterOptions::default())?;
    if let Some(rep) = w.recovery() {
        say(
            &mut out,
            &format!(
                "   cut {} bytes at offset {} (blake3 {}…), kept in {}",
                rep.length,
                rep.offset,
                &rep.blake3.to_hex()[..16],
                rep.quarantine
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
            ),
        )?;
    }
    let a = w.append_event(
        "SessionEnd",
        r#"{"hook_event_name":"SessionEnd","reason":"other"}"#,
    )?;
    say(
        &mut out,
        &format!("   appended SessionEnd as seq {}", a.seq),
    )?;
    drop(w);
    debug_assert!(end > 0);

    say(&mut out, "\n5. The journal now")?;
    let reader = JournalReader::open(&path, None)?;
    for rec in reader.records()?.skip(n - 2) {
        let rec = rec.map_err(|s| Error::Corrupt {
            path: path.clone(),
            offset: s.offset,
            seq: 0,
            reason: s.problem.to_string(),
        })?;
        say(&mut out, &format!("   seq {:>2}  {}", rec.seq, rec.kind))?;
    }
    let r = verify_file(&path, None)?;
    say(&mut out, &format!("   {}", r.summary()))?;
    out.flush().map_err(output::write_err)?;
    Ok(if r.ok { Outcome::Ok } else { Outcome::Findings })
}
