//! The CLI of the journal layer, as hosts and users run it. `append` turns one JSON value on
//! stdin into one record and prints `{"seq":N,"hash":"<hex>"}` once it is durable; malformed
//! JSON, empty stdin and bad `--kind` names exit 2 with a clear message and leave the journal
//! byte for byte as it was (or not created at all). `log --json` prints one object per record
//! whose `payload` is the appended JSON text exactly as it came in, with the seq, hash and
//! kind that `append` reported. `verify` exits 0 on a clean journal, 1 on a damaged one, 2
//! when it cannot run. When the journal is damaged mid-log, `append` still keeps the event
//! durably in the session's rescue journal, says so on stderr and in its output, and exits 1.

use crate::support;

use std::fs;
use std::path::Path;
use std::process::Output;

use sjournal::journal::{JournalReader, Root};

fn run(root: &Path, args: &[&str], stdin: &[u8]) -> Output {
    support::run(root, args, stdin)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn append(root: &Path, session: &str, json: &str) -> serde_json::Value {
    let o = run(root, &["append", "--session", session], json.as_bytes());
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn append_prints_seq_and_hash_once_durable() {
    let dir = support::scratch();
    for n in 1..=3u64 {
        let v = append(dir.path(), "s", &format!(r#"{{"n":{n}}}"#));
        assert_eq!(v["seq"], n);
        let hash = v["hash"].as_str().unwrap();
        assert!(hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(v.as_object().unwrap().len(), 2, "{v}");
    }
}

#[test]
fn malformed_json_exits_2_and_leaves_the_journal_untouched() {
    let dir = support::scratch();
    let root = dir.path();
    // No journal yet: a bad first event creates nothing.
    let o = run(root, &["append", "--session", "s"], b"{\"a\":");
    assert_eq!(o.status.code(), Some(2));
    assert!(!Root::new(root).session("s").unwrap().journal.exists());

    append(root, "s", r#"{"a":1}"#);
    let journal = Root::new(root).session("s").unwrap().journal;
    let before = support::read(&journal);
    let bad: [&[u8]; 7] = [
        b"{\"a\":",
        b"not json",
        b"{\"a\":1} {\"b\":2}",
        b"{\"a\":1}garbage",
        b"{'a':1}",
        b"\"unterminated",
        b"{\"a\":\"\xff\xfe\"}",
    ];
    for input in bad {
        let o = run(root, &["append", "--session", "s"], input);
        let what = String::from_utf8_lossy(input);
        assert_eq!(o.status.code(), Some(2), "{what}: {o:?}");
        let err = stderr(&o);
        assert!(err.contains("not valid JSON"), "{what}: {err}");
        assert!(err.contains("nothing was appended"), "{what}: {err}");
        assert!(o.stdout.is_empty(), "{what}");
        assert_eq!(support::read(&journal), before, "{what}: journal changed");
    }
    // The position helps: serde's "line L column C" is in the message.
    let o = run(
        root,
        &["append", "--session", "s"],
        b"{\n  \"a\": 1,\n  \"b\": ]\n}",
    );
    assert!(stderr(&o).contains("line 3 column 8"), "{}", stderr(&o));
}

#[test]
fn empty_stdin_exits_2() {
    let dir = support::scratch();
    for input in [&b""[..], b"   \n\t\n"] {
        let o = run(dir.path(), &["append", "--session", "s"], input);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        assert!(stderr(&o).contains("stdin is empty"), "{}", stderr(&o));
    }
    assert!(!Root::new(dir.path()).session("s").unwrap().journal.exists());
}

#[test]
fn kind_is_validated_and_defaults_sensibly() {
    let dir = support::scratch();
    let root = dir.path();
    let long = "k".repeat(65);
    for bad in [
        "has space",
        "",
        long.as_str(),
        "sjournal.recovered",
        "ünï",
        "a/b",
    ] {
        let o = run(root, &["append", "--session", "s", "--kind", bad], b"{}");
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {o:?}");
        assert!(
            stderr(&o).contains("invalid record kind"),
            "{bad:?}: {}",
            stderr(&o)
        );
    }
    assert!(!Root::new(root).session("s").unwrap().journal.exists());
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &["--kind", "My.Kind_1-x"],
            r#"{"hook_event_name":"Stop"}"#,
            "My.Kind_1-x",
        ),
        (&[], r#"{"hook_event_name":"PreToolUse"}"#, "PreToolUse"),
        // Cline names its events `hookName`, as the hook reads them.
        (&[], r#"{"hookName":"TaskStart","taskId":"t"}"#, "TaskStart"),
        (&[], r#"{"hook_event_name":"not a kind!"}"#, "event"),
        (&[], r#"[1,2]"#, "event"),
    ];
    for (flags, json, _) in cases {
        let mut args = vec!["append", "--session", "s"];
        args.extend_from_slice(flags);
        assert!(run(root, &args, json.as_bytes()).status.success());
    }
    let kinds: Vec<String> = log_json(root, "s")
        .iter()
        .map(|v| v["kind"].as_str().unwrap().to_owned())
        .collect();
    let want: Vec<&str> = cases.iter().map(|c| c.2).collect();
    assert_eq!(kinds, want);
}

/// `append` files an event under the kind the hook would give it: one rule, the detected
/// host's (OpenClaw names its event in `event`, with no `hook_event_name`).
#[test]
fn append_kind_is_the_hooks_kind() {
    let dir = support::scratch();
    let root = dir.path();
    let openclaw = r#"{"event":"session_start","sessionKey":"agent:main:k","sessionId":"s"}"#;
    let o = run(root, &["append", "--session", "s"], openclaw.as_bytes());
    assert!(o.status.success(), "{o:?}");
    let kinds: Vec<String> = log_json(root, "s")
        .iter()
        .map(|v| v["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["session_start"]);
}

fn log_json(root: &Path, session: &str) -> Vec<serde_json::Value> {
    let o = run(root, &["log", "--json", "--session", session], b"");
    assert!(o.status.success(), "{o:?}");
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn log_json_gives_back_what_was_appended() {
    let dir = support::scratch();
    let root = dir.path();
    let inputs = [
        r#"{"b":1,  "a" : [1.50, "\u00e9", null]}"#,
        r#"{"hook_event_name":"UserPromptSubmit","prompt":"héllo\nworld"}"#,
        r#""just a string""#,
        "42",
        "\n  {\"padded\": true}  \n",
    ];
    let acks: Vec<serde_json::Value> = inputs.iter().map(|j| append(root, "s", j)).collect();
    let o = run(root, &["log", "--json", "--session", "s"], b"");
    assert!(o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), inputs.len());
    for ((line, input), ack) in lines.iter().zip(inputs).zip(&acks) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["seq"], ack["seq"]);
        assert_eq!(v["hash"], ack["hash"]);
        assert!(v["kind"].is_string());
        let ts = v["ts"].as_str().unwrap();
        assert!(humantime::parse_rfc3339(ts).is_ok(), "{ts}");
        // The payload is the appended text itself, byte for byte (trimmed of surrounding
        // whitespace), not a re-serialization.
        let raw = format!(r#""payload":{}"#, input.trim());
        assert!(line.contains(&raw), "{line} lacks {raw}");
        let parsed: serde_json::Value = serde_json::from_str(input).unwrap();
        assert_eq!(v["payload"], parsed);
    }
    // Plain log: one line per record.
    let o = run(root, &["log", "--session", "s"], b"");
    assert!(o.status.success());
    assert_eq!(stdout(&o).lines().count(), inputs.len());
}

#[test]
fn verify_exit_codes() {
    let dir = support::scratch();
    let root = dir.path();
    // 2: nothing to verify.
    let o = run(root, &["verify", "--session", "nope"], b"");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stderr(&o).contains("no journal for session"),
        "{}",
        stderr(&o)
    );
    let o = run(root, &["verify"], b"");
    assert_eq!(o.status.code(), Some(2), "neither --session nor --all");
    // 0: clean.
    for n in 0..3 {
        append(root, "s", &format!(r#"{{"n":{n}}}"#));
    }
    append(root, "t", "{}");
    let o = run(root, &["verify", "--session", "s"], b"");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = run(root, &["verify", "--all", "--json"], b"");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let reports: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    assert!(reports.iter().all(|r| r["ok"] == true));
    assert_eq!(reports[0]["records"], 3);
    // 1: damaged.
    let journal = Root::new(root).session("s").unwrap().journal;
    let mut b = support::read(&journal);
    let n = b.len();
    b[n - 10] ^= 0x20;
    support::overwrite(&journal, &b);
    let o = run(root, &["verify", "--session", "s"], b"");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stdout(&o).contains("BAD"), "{}", stdout(&o));
    let o = run(root, &["verify", "--all"], b"");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    // log stops at the damage, says where, exits 1.
    let o = run(root, &["log", "--session", "s"], b"");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(stdout(&o).lines().count(), 2);
    assert!(stderr(&o).contains("stopped at offset"), "{}", stderr(&o));
}

#[test]
fn damaged_journal_sends_the_event_to_the_rescue_journal() {
    let dir = support::scratch();
    let root = dir.path();
    for n in 0..3 {
        append(root, "s", &format!(r#"{{"n":{n}}}"#));
    }
    let paths = Root::new(root).session("s").unwrap();
    let mut b = support::read(&paths.journal);
    let first = support::parse(&b).records[0].offset as usize;
    b[first + 70] ^= 0x01;
    support::overwrite(&paths.journal, &b);
    fs::write(&paths.lock, b"").unwrap(); // no tail hint: the writer scans from the start

    let event = r#"{"hook_event_name":"Stop","important":true}"#;
    let o = run(root, &["append", "--session", "s"], event.as_bytes());
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["rescued"], true);
    assert_eq!(v["seq"], 1);
    assert_eq!(
        Path::new(v["rescue_journal"].as_str().unwrap()),
        paths.rescue.as_path()
    );
    let err = stderr(&o);
    assert!(err.contains("is corrupt at offset"), "{err}");
    assert!(err.contains("NOT added"), "{err}");
    assert!(err.contains(&paths.rescue.display().to_string()), "{err}");
    assert_eq!(
        support::read(&paths.journal),
        b,
        "the damaged journal was changed"
    );

    let reader = JournalReader::open(&paths.rescue, None).unwrap();
    let recs: Vec<_> = reader.records().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].kind, "Stop");
    let text = sjournal::format::payload::decode_event(1, recs[0].payload).unwrap();
    assert_eq!(text, event);
    assert_eq!(reader.header().unwrap().0.session_id, "s");

    // verify --session covers both: the journal is bad, the rescue journal fine.
    let o = run(root, &["verify", "--json", "--session", "s"], b"");
    assert_eq!(o.status.code(), Some(1));
    let reports: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    assert_eq!(
        (&reports[0]["ok"], &reports[1]["ok"]),
        (&false.into(), &true.into())
    );
    assert_eq!(reports[0]["problem"]["offset"], first as u64);
}
