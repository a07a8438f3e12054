//! Redaction at ingest (`src/redact`), end to end.
//!
//! - **Recall**: a corpus of secrets for every built-in rule, made at run time from random
//!   parts (nothing in this file is a key a scanner would flag), put in every place a host puts
//!   text (tool input, tool output, a prompt, error text, a nested JSON value, escaped JSON
//!   inside escaped JSON inside a string), is sent through the `sjournal` binary as five
//!   hosts' payloads, through `append` and through `import`: every secret is redacted, its
//!   rule named in the event's `sjournal.redacted` record, and no piece of any secret is
//!   anywhere under the root, the fallback spool or a webhook body, raw bytes, also when the
//!   event goes to the root's spool or to the fallback spool. The control (`enabled =
//!   false`) finds every secret with the same search, so the search can fail.
//! - **False positives**: every payload of every host in `tests/fixtures` and the demo
//!   session's events, and text full of hashes, UUIDs, git SHAs, base64 and integrity
//!   strings, redact nothing.
//! - **The user is told once per session**, in the host's visible channel.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use sjournal::format::payload::is_system_kind;
use sjournal::host::Host;
use sjournal::journal::{Root, WriterOptions};
use sjournal::redact::{RedactSection, RedactedRecord, Redactor, KIND_REDACTED};
use sjournal::session::Session;

/// One secret of the corpus: the rule that must find it, the secret, and the line it is in.
struct Secret {
    rule: &'static str,
    value: String,
    line: String,
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const LOWER_DIGITS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

fn pick(rng: &mut fastrand::Rng, alphabet: &[u8], n: usize) -> String {
    // Digits and both cases in every value: random, and never a word.
    loop {
        let s: String = (0..n)
            .map(|_| alphabet[rng.usize(..alphabet.len())] as char)
            .collect();
        let kinds = [
            s.bytes().any(|b| b.is_ascii_digit()),
            s.bytes().any(|b| b.is_ascii_lowercase()),
            s.bytes().any(|b| b.is_ascii_uppercase()),
        ];
        let wanted = [
            alphabet.iter().any(u8::is_ascii_digit),
            alphabet.iter().any(u8::is_ascii_lowercase),
            alphabet.iter().any(u8::is_ascii_uppercase),
        ];
        if kinds == wanted || n < 8 {
            return s;
        }
    }
}

/// The corpus: at least one secret per built-in rule, each in a line as a tool, a log or a
/// person would print it.
fn corpus(seed: u64) -> Vec<Secret> {
    let mut r = fastrand::Rng::with_seed(seed);
    let r = &mut r;
    let b64 = [ALNUM, b"+/"].concat();
    let url = [ALNUM, b"_-"].concat();
    let s = |rule, value: String, line: &dyn Fn(&str) -> String| Secret {
        rule,
        line: line(&value),
        value,
    };
    let aws = ["AK", "IA"].concat();
    let pem_kind = ["PRI", "VATE KEY"].concat();
    let pem_body: Vec<String> = (0..6).map(|_| pick(r, &b64, 64)).collect();
    vec![
        s(
            "aws-access-key",
            format!("{aws}{}", pick(r, UPPER32, 16)),
            &|v| format!("export AWS_ACCESS_KEY_ID={v}"),
        ),
        s("aws-secret-key", pick(r, &b64, 40), &|v| {
            format!("aws_secret_access_key = {v}")
        }),
        s(
            "google-api-key",
            format!("{}{}", ["AI", "za"].concat(), pick(r, &url, 35)),
            &|v| format!("GET https://maps.example.com/api?key={v} 403"),
        ),
        s(
            "gcp-oauth-client-secret",
            format!("{}{}", ["GOC", "SPX-"].concat(), pick(r, &url, 28)),
            &|v| format!("client secret is {v}"),
        ),
        s(
            "gcp-access-token",
            format!("{}{}", ["ya", "29."].concat(), pick(r, &url, 60)),
            &|v| format!("gcloud auth print-access-token -> {v}"),
        ),
        s(
            "azure-ad-client-secret",
            format!("{}8Q~{}", pick(r, ALNUM, 3), pick(r, ALNUM, 34)),
            &|v| format!("AZURE_CLIENT_SECRET='{v}'"),
        ),
        s(
            "azure-shared-access-key",
            format!("{}=", pick(r, &b64, 43)),
            &|v| {
                format!(
                    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={v}"
                )
            },
        ),
        s(
            "azure-storage-key",
            format!("{}==", pick(r, &b64, 86)),
            &|v| {
                format!(
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={v};EndpointSuffix=core.windows.net"
            )
            },
        ),
        s(
            "github-token",
            format!("{}_{}", ["gh", "p"].concat(), pick(r, ALNUM, 36)),
            &|v| format!("remote: Invalid username or token {v}"),
        ),
        s(
            "github-token",
            format!("{}_{}", ["github", "_pat"].concat(), pick(r, ALNUM, 82)),
            &|v| format!("GH_TOKEN={v} gh pr list"),
        ),
        s(
            "gitlab-token",
            format!("{}-{}", ["gl", "pat"].concat(), pick(r, &url, 20)),
            &|v| format!("git clone https://oauth2:{v}@gitlab.example.com/g/p.git"),
        ),
        s(
            "slack-token",
            format!(
                "{}-{}-{}-{}",
                ["xo", "xb"].concat(),
                r.u64(1_000_000_000_000..9_999_999_999_999),
                r.u64(1_000_000_000_000..9_999_999_999_999),
                pick(r, ALNUM, 24)
            ),
            &|v| format!("SLACK_BOT_TOKEN: {v}"),
        ),
        s(
            "slack-webhook-url",
            format!(
                "T{}/B{}/{}",
                pick(r, UPPER32, 10),
                pick(r, UPPER32, 10),
                pick(r, ALNUM, 24)
            ),
            &|v| format!("curl -X POST https://hooks.slack.com/services/{v} -d @msg.json"),
        ),
        s(
            "stripe-key",
            format!("{}_{}", ["sk", "_live"].concat(), pick(r, ALNUM, 32)),
            &|v| format!("Stripe::InvalidRequestError: key {v} expired"),
        ),
        s(
            "openai-api-key",
            format!(
                "{}{}{}{}",
                ["sk-", "proj-"].concat(),
                pick(r, &url, 74),
                ["T3Blbk", "FJ"].concat(),
                pick(r, &url, 74)
            ),
            &|v| format!("OPENAI_API_KEY={v}"),
        ),
        s(
            "anthropic-api-key",
            format!("{}{}AA", ["sk-ant-", "api03-"].concat(), pick(r, &url, 93)),
            &|v| format!("x-api-key header was {v}"),
        ),
        s(
            "npm-token",
            format!("{}_{}", ["np", "m"].concat(), pick(r, LOWER_DIGITS, 36)),
            &|v| format!("//registry.npmjs.org/:_authToken={v}"),
        ),
        s(
            "pypi-token",
            format!(
                "{}{}",
                ["pypi-AgEIcHlw", "aS5vcmc"].concat(),
                pick(r, &url, 70)
            ),
            &|v| format!("password = {v}"),
        ),
        s(
            "private-key",
            format!(
                "-----BEGIN RSA {pem_kind}-----\n{}\n-----END RSA {pem_kind}-----",
                pem_body.join("\n")
            ),
            &|v| format!("$ cat id_rsa\n{v}\n$"),
        ),
        s(
            "jwt",
            format!(
                "{}.eyJ{}.{}",
                ["eyJhbGciOiJIUzI1", "NiIsInR5cCI6IkpXVCJ9"].concat(),
                pick(r, &url, 40),
                pick(r, &url, 43)
            ),
            &|v| format!("set-cookie: session={v}; HttpOnly"),
        ),
        s("url-password", pick(r, ALNUM, 18), &|v| {
            format!("psql: connection to postgres://app_user:{v}@db.internal:5432/app failed")
        }),
        s("connection-string-password", pick(r, ALNUM, 16), &|v| {
            format!("Server=tcp:db,1433;Database=app;User Id=sa;Password={v};Encrypt=true")
        }),
        s("authorization", pick(r, &url, 40), &|v| {
            format!("curl -H \"Authorization: Bearer {v}\" https://api.example.com/v1/me")
        }),
        s(
            "generic-password",
            format!("{}!{}", pick(r, ALNUM, 9), r.u32(10..99)),
            &|v| format!("DB_PASSWORD={v}"),
        ),
        s("generic-secret", pick(r, ALNUM, 32), &|v| {
            format!("client_secret: {v}")
        }),
    ]
}

/// Every built-in rule has a secret in the corpus.
#[test]
fn the_corpus_covers_every_rule() {
    let rules: std::collections::BTreeSet<&str> = corpus(1).iter().map(|s| s.rule).collect();
    for r in sjournal::redact::rules::RULES {
        assert!(rules.contains(r.id), "no secret for rule {}", r.id);
    }
}

/// The corpus as one text, each secret on its own line, between lines of ordinary output.
fn text(c: &[Secret]) -> String {
    let mut t = String::from("running the task\n");
    for s in c {
        t.push_str(&s.line);
        t.push_str("\nok\n");
    }
    t
}

/// The pieces of a secret that must never be stored: its runs of letters and digits of 8
/// bytes or more (a piece, not the whole value, so that an escaped or re-wrapped copy of the
/// secret is found too).
fn needles(c: &[Secret]) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for s in c {
        for piece in s.value.split(|ch: char| !ch.is_ascii_alphanumeric()) {
            if piece.len() >= 8 && !piece.starts_with("eyJhbGci") {
                out.push((piece.to_owned(), s.rule));
            }
        }
        assert!(
            s.value.len() < 8 || out.iter().any(|(_, r)| *r == s.rule),
            "{}",
            s.rule
        );
    }
    out
}

/// Every file under `dirs` (not following links), as bytes.
fn files(dirs: &[&Path]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo: Vec<PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

/// Which needles occur anywhere in the files under `dirs`.
fn stored(dirs: &[&Path], needles: &[(String, &'static str)]) -> Vec<String> {
    let files = files(dirs);
    assert!(!files.is_empty(), "nothing was written under {dirs:?}");
    let mut found = Vec::new();
    for (n, rule) in needles {
        for (path, bytes) in &files {
            if bytes.windows(n.len()).any(|w| w == n.as_bytes()) {
                found.push(format!("{rule}: {n} in {}", path.display()));
            }
        }
    }
    found
}

/// The rules named by the session's `sjournal.redacted` records, one per secret, sorted.
fn redacted_rules(root: &Path, session: &str) -> Vec<String> {
    let mut rules = Vec::new();
    for (_, kind, payload) in support::records(root, session) {
        if kind == KIND_REDACTED {
            let r: RedactedRecord = serde_json::from_str(&payload).unwrap();
            assert_eq!(r.more, 0);
            rules.extend(r.found.into_iter().map(|f| f.rule));
        }
    }
    rules.sort();
    rules
}

fn expected_rules(c: &[Secret], times: usize) -> Vec<String> {
    let mut v: Vec<String> = c
        .iter()
        .flat_map(|s| std::iter::repeat_n(s.rule.to_owned(), times))
        .collect();
    v.sort();
    v
}

/// The places a host puts text, each filled with `t` in a copy of `base`.
fn placements(base: &Value, t: &str) -> Vec<(&'static str, Value)> {
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        f(&mut v);
        v
    };
    let nested = json!({"config": {"env": t}}).to_string();
    let twice = json!({"stdout": nested}).to_string();
    vec![
        (
            "tool input",
            with(&|v| v["tool_input"] = json!({"command": t})),
        ),
        (
            "tool output",
            with(&|v| v["tool_response"] = json!({"stdout": t, "interrupted": false})),
        ),
        ("prompt", with(&|v| v["prompt"] = json!(t))),
        (
            "error text",
            with(&|v| v["error"] = json!(format!("Exit code 1\n{t}"))),
        ),
        (
            "nested JSON",
            with(&|v| v["tool_input"] = json!({"edits": [{"new_string": t, "n": 1}]})),
        ),
        (
            "escaped JSON in escaped JSON",
            with(&|v| v["tool_response"] = json!(twice)),
        ),
    ]
}

/// (host flag, host, fixture, event) of a tool event of each host.
const HOSTS: &[(&str, Host, &str, &str)] = &[
    (
        "claude",
        Host::Claude,
        "claude-code/payloads-2.1.332.jsonl",
        "PostToolUse",
    ),
    (
        "codex",
        Host::Codex,
        "codex/payloads-0.171.0.jsonl",
        "PostToolUse",
    ),
    (
        "gemini",
        Host::Gemini,
        "gemini/payloads-0.61.0.jsonl",
        "AfterTool",
    ),
    (
        "cursor",
        Host::Cursor,
        "cursor/payloads-constructed.jsonl",
        "afterShellExecution",
    ),
    (
        "cline",
        Host::Cline,
        "cline/payloads-3.0.65.jsonl",
        "tool_result",
    ),
];

fn base_payload(fixture: &str, event: &str) -> Value {
    let (_, raw) = support::fixture(fixture)
        .into_iter()
        .find(|(e, _)| e == event)
        .unwrap_or_else(|| panic!("no {event} in {fixture}"));
    serde_json::from_str(&raw).unwrap()
}

fn hook(root: &Path, host: &str, payload: &Value, deadline: &str) -> std::process::Output {
    let out = support::run(
        root,
        &["hook", "--host", host, "--deadline-ms", deadline],
        payload.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    out
}

/// Every secret in every place of five hosts' payloads, through the hook binary: redacted,
/// each named in the record, the user told once per session, and no piece of any secret
/// anywhere under the root.
#[test]
fn every_secret_in_every_place_of_every_host_is_redacted_by_the_hook() {
    let c = corpus(7);
    let t = text(&c);
    let dir = support::scratch();
    let root = dir.path().join("root");
    for (host, h, fixture, event) in HOSTS {
        let base = base_payload(fixture, event);
        let session = h.session_id(&base).unwrap().to_owned();
        let places = placements(&base, &t);
        for (i, (place, payload)) in places.iter().enumerate() {
            let out = hook(&root, host, payload, support::PATIENT_MS);
            let reply = String::from_utf8_lossy(&out.stdout);
            let told = reply.contains("sjournal redacted");
            assert_eq!(
                told,
                i == 0,
                "{host} {place}: told once per session: {reply}"
            );
            if i == 0 {
                assert!(reply.contains(&format!("{} secrets", c.len())), "{reply}");
            }
        }
        assert_eq!(
            redacted_rules(&root, &session),
            expected_rules(&c, places.len()),
            "{host}: every secret of every place, by its rule"
        );
        for (_, kind, payload) in support::records(&root, &session) {
            if !is_system_kind(&kind) {
                assert!(payload.contains("[REDACTED:"), "{host}: {payload}");
            }
        }
    }
    support::verify_all(&root);
    let leaks = stored(&[&root], &needles(&c));
    assert!(leaks.is_empty(), "{leaks:#?}");
}

/// The control: with redaction off, the same search finds every secret in the journal.
#[test]
fn with_redaction_off_the_search_finds_every_secret() {
    let c = corpus(8);
    let dir = support::scratch();
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("config.toml"), "[redact]\nenabled = false\n").unwrap();
    let (host, _, fixture, event) = HOSTS[0];
    let base = base_payload(fixture, event);
    let mut p = base.clone();
    p["tool_response"] = json!({"stdout": text(&c)});
    let out = hook(&root, host, &p, support::PATIENT_MS);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("redacted"));
    let session = base["session_id"].as_str().unwrap();
    assert!(redacted_rules(&root, session).is_empty());
    let needles = needles(&c);
    let leaks = stored(&[&root], &needles);
    let rules: std::collections::BTreeSet<&str> = c.iter().map(|s| s.rule).collect();
    for r in rules {
        assert!(leaks.iter().any(|l| l.starts_with(&format!("{r}:"))), "{r}");
    }
}

/// `append` and `import` redact what they write, and say so on stderr.
#[test]
fn append_and_import_redact_too() {
    let c = corpus(9);
    let t = text(&c);
    let dir = support::scratch();
    let root = dir.path().join("root");
    let base = base_payload(HOSTS[0].2, HOSTS[0].3);
    let places = placements(&base, &t);
    let out = support::run(
        &root,
        &["append", "--session", "appended"],
        places[1].1.to_string().as_bytes(),
    );
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("redacted"));
    assert_eq!(redacted_rules(&root, "appended"), expected_rules(&c, 1));

    let lines: String = places
        .iter()
        .map(|(_, p)| format!("{p}\n"))
        .collect::<String>();
    let file = dir.path().join("events.jsonl");
    std::fs::write(&file, &lines).unwrap();
    let out = support::run(
        &root,
        &["import", "--session", "imported", file.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        redacted_rules(&root, "imported"),
        expected_rules(&c, places.len())
    );
    // Exported and imported again: nothing more to redact, the records copied as they are.
    let export = support::run(&root, &["export", "--session", "imported"], b"");
    assert!(export.status.success(), "{export:?}");
    let again = dir.path().join("export.jsonl");
    std::fs::write(&again, &export.stdout).unwrap();
    let out = support::run(
        &root,
        &["import", "--session", "again", again.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("redacted"));
    assert_eq!(
        redacted_rules(&root, "again"),
        expected_rules(&c, places.len())
    );
    support::verify_all(&root);
    std::fs::remove_file(&file).unwrap();
    let leaks = stored(&[&root, dir.path()], &needles(&c));
    assert!(leaks.is_empty(), "{leaks:#?}");
}

/// The session's lock is held past the hook's deadline: the event goes to the root's spool,
/// redacted; merged later, it is still redacted, with its record.
#[test]
fn a_spooled_event_is_redacted_in_the_spool_and_after_the_merge() {
    let c = corpus(10);
    let dir = support::scratch();
    let root_dir = dir.path().join("root");
    let root = Root::new(&root_dir);
    let base = base_payload(HOSTS[0].2, HOSTS[0].3);
    let session = base["session_id"].as_str().unwrap().to_owned();
    let mut p = base.clone();
    p["tool_response"] = json!({"stdout": text(&c)});
    // The first event makes the journal; the second waits on the lock.
    hook(&root_dir, "claude", &base, support::PATIENT_MS);
    let held = Session::open(&root, &session, &WriterOptions::default()).unwrap();
    let out = hook(&root_dir, "claude", &p, "300");
    assert!(String::from_utf8_lossy(&out.stdout).contains("sjournal redacted"));
    let spool = root.session(&session).unwrap().spool;
    assert!(
        std::fs::read_dir(&spool).unwrap().count() > 0,
        "the event was spooled"
    );
    let leaks = stored(&[&root_dir], &needles(&c));
    assert!(leaks.is_empty(), "{leaks:#?}");
    drop(held);
    let out = support::run(&root_dir, &["flush", "--session", &session], b"");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(redacted_rules(&root_dir, &session), expected_rules(&c, 1));
    let leaks = stored(&[&root_dir], &needles(&c));
    assert!(leaks.is_empty(), "{leaks:#?}");
}

/// `sessions/` is a symlink, so the root cannot take the event: it goes to the fallback
/// spool outside the root, redacted, and nothing of a secret is in the root, the fallback or
/// where the link points.
#[test]
fn an_event_in_the_fallback_spool_is_redacted() {
    let c = corpus(11);
    let dir = support::scratch();
    let root_dir = dir.path().join("root");
    std::fs::create_dir(&root_dir).unwrap();
    let root = Root::new(&root_dir);
    sjournal::journal::spool::key::ensure(&sjournal::storage::RealFs, &root).unwrap();
    let fallback = dir.path().join("fallback");
    std::fs::write(
        root_dir.join("config.toml"),
        format!("[hook]\nfallback_spool_dir = {fallback:?}\n"),
    )
    .unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.sessions_dir()).unwrap();
    let mut p = base_payload(HOSTS[0].2, HOSTS[0].3);
    p["tool_input"] = json!({"command": text(&c)});
    let out = hook(&root_dir, "claude", &p, support::PATIENT_MS);
    let reply = String::from_utf8_lossy(&out.stdout);
    assert!(reply.contains("sjournal redacted"), "{reply}");
    // The command that lists them names the session.
    let sid = p["session_id"].as_str().unwrap();
    assert!(
        reply.contains(&format!("sjournal redact --session {sid}")),
        "{reply}"
    );
    assert!(
        !files(&[&fallback]).is_empty(),
        "the event is in the fallback spool"
    );
    let leaks = stored(&[dir.path()], &needles(&c));
    assert!(leaks.is_empty(), "{leaks:#?}");
}

/// A webhook's body is the journaled event: redacted.
#[test]
fn a_webhook_body_is_redacted() {
    use support::webhook::{wait_delivered, Mode, Receiver};
    let c = corpus(12);
    let dir = support::scratch();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let rx = Receiver::start(Mode::Ok);
    std::fs::write(
        root.join("config.toml"),
        format!(
            "[[webhook]]\nname = \"ci\"\nevents = [\"PostToolUse\"]\nurl = \"{}\"\n",
            rx.url("/hook")
        ),
    )
    .unwrap();
    let base = base_payload(HOSTS[0].2, HOSTS[0].3);
    let session = base["session_id"].as_str().unwrap().to_owned();
    let mut p = base.clone();
    p["tool_response"] = json!({"stdout": text(&c)});
    hook(&root, "claude", &p, support::PATIENT_MS);
    wait_delivered(&root, &session, Duration::from_secs(120));
    let posts = rx.posts();
    assert_eq!(posts.len(), 1);
    assert!(posts[0].body.contains("[REDACTED:"), "{}", posts[0].body);
    for (n, rule) in needles(&c) {
        assert!(!posts[0].body.contains(&n), "{rule} in the webhook body");
    }
    let leaks = stored(&[&root], &needles(&c));
    assert!(leaks.is_empty(), "{leaks:#?}");
}

/// `redact --check` shows what would go, journals nothing; `redact --session` lists what
/// went.
#[test]
fn redact_check_and_session_show_what_is_replaced() {
    let c = corpus(13);
    let dir = support::scratch();
    let root = dir.path().join("root");
    let sample = dir.path().join("sample.txt");
    std::fs::write(&sample, text(&c)).unwrap();
    let out = support::run(
        &root,
        &["redact", "--check", sample.to_str().unwrap(), "--json"],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let found: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(found.len(), c.len());
    assert!(!root.join("sessions").exists(), "nothing journaled");
    let printed = support::run(
        &root,
        &["redact", "--check", sample.to_str().unwrap(), "--print"],
        b"",
    );
    let printed = String::from_utf8_lossy(&printed.stdout);
    for (n, rule) in needles(&c) {
        assert!(!printed.contains(&n), "{rule}");
    }
    let mut p = base_payload(HOSTS[0].2, HOSTS[0].3);
    p["tool_response"] = json!({"stdout": text(&c)});
    hook(&root, "claude", &p, support::PATIENT_MS);
    let session = p["session_id"].as_str().unwrap();
    let out = support::run(&root, &["redact", "--session", session], b"");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains(&format!("{} secret(s) redacted in 1 event(s)", c.len())));
    // With the root's key there now, `--check` gives the journal's tags.
    let check = support::run(&root, &["redact", "--check", sample.to_str().unwrap()], b"");
    let check = String::from_utf8_lossy(&check.stdout);
    for line in listed.lines().filter(|l| l.contains("[REDACTED:")) {
        let marker = line.split_whitespace().last().unwrap();
        assert!(check.contains(marker), "{marker} not in {check}");
    }
}

/// Nothing in any host's recorded payloads is a secret.
#[test]
fn no_fixture_payload_of_any_host_is_redacted() {
    let red = Redactor::with_key(&RedactSection::default(), [1; 32]);
    let payloads = support::all_payloads();
    assert!(payloads.len() > 100, "{}", payloads.len());
    for p in payloads {
        let (out, report) = red.json(&p.json);
        assert!(
            out.is_none() && report.found.is_empty(),
            "{} {:?}: {:?}",
            p.file.display(),
            p.event,
            report.found
        );
    }
}

/// The demo session, as the hook journals it: nothing redacted.
#[test]
fn the_demo_session_has_nothing_redacted() {
    let dir = support::scratch();
    let keep = dir.path().join("demo");
    let out = support::run(dir.path(), &["demo", "--keep", keep.to_str().unwrap()], b"");
    assert!(out.status.success(), "{out:?}");
    let mut events = 0;
    for (path, bytes) in files(&[&keep]) {
        if path.extension().is_some_and(|x| x == "sjl") {
            let r = sjournal::journal::JournalReader::open(&path, None).unwrap();
            for rec in r.records().unwrap() {
                let rec = rec.unwrap();
                assert_ne!(rec.kind, KIND_REDACTED, "{}", path.display());
                events += usize::from(!is_system_kind(rec.kind));
            }
        }
        assert!(
            !bytes.windows(10).any(|w| w == b"[REDACTED:"),
            "{}",
            path.display()
        );
    }
    assert!(events > 10, "{events}");
}

/// What looks random but is no secret: hashes, UUIDs, git SHAs and logs, base64 file
/// content, lockfile integrity strings, a key's public half.
#[test]
fn hashes_uuids_shas_and_base64_are_not_secrets() {
    let mut r = fastrand::Rng::with_seed(3);
    let hex = b"0123456789abcdef";
    let sha = |r: &mut fastrand::Rng, n| pick(r, hex, n);
    let b64: String = {
        use base64::Engine;
        let bytes: Vec<u8> = (0..6000).map(|_| r.u8(..)).collect();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    };
    let mut lines = Vec::new();
    for _ in 0..20 {
        lines.push(format!("commit {}", sha(&mut r, 40)));
        lines.push(format!("{}  src/main.rs", sha(&mut r, 64)));
        lines.push(format!(
            "{}-{}-4{}-a{}-{}",
            sha(&mut r, 8),
            sha(&mut r, 4),
            sha(&mut r, 3),
            sha(&mut r, 3),
            sha(&mut r, 12)
        ));
        lines.push(format!(
            "\"integrity\": \"sha512-{}==\"",
            pick(&mut r, ALNUM, 86)
        ));
        lines.push(format!("Merge: {} {}", sha(&mut r, 7), sha(&mut r, 7)));
        lines.push(format!(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} dev@host",
            pick(&mut r, ALNUM, 43)
        ));
    }
    let payload = json!({
        "session_id": "fp",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git log --stat; sha256sum src/*; base64 logo.png"},
        "tool_response": {"stdout": lines.join("\n"), "file": {"content": b64}},
        "tool_use_id": format!("toolu_{}", pick(&mut r, ALNUM, 24)),
        "request_id": format!("req_{}", pick(&mut r, ALNUM, 24)),
        "tokens": {"input_tokens": 1234567890, "output_tokens": 987654},
        "password_prompt": false,
        "token_count": 123456789012u64,
    });
    let red = Redactor::with_key(&RedactSection::default(), [1; 32]);
    let (out, report) = red.json(&payload.to_string());
    assert!(
        out.is_none() && report.found.is_empty(),
        "{:?}",
        report.found
    );
}

/// Input still arriving when the input time limit passes is kept as it stands, as an
/// unparsed record (the watchdog keeps it): its secrets are redacted all the same, in the
/// JSON-escaped text of the cut payload.
#[test]
fn input_cut_off_by_the_time_limit_is_redacted() {
    use std::io::Write;
    let c = corpus(14);
    let dir = support::scratch();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("config.toml"), "[hook]\ninput_timeout_ms = 300\n").unwrap();
    let full = json!({
        "session_id": "cut",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_response": {"stdout": text(&c), "more": "x".repeat(4096)},
    })
    .to_string();
    // Everything but the last 1000 bytes, then nothing, stdin held open.
    let part = &full.as_bytes()[..full.len() - 1000];
    let mut child = support::spawnable(&root)
        .args(["hook", "--host", "claude", "--deadline-ms", "50"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(part).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("input time limit"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("sjournal redacted"));
    let flushed = support::run(&root, &["flush", "--all"], b"");
    assert!(flushed.status.success(), "{flushed:?}");
    let recs = support::records(&root, "cut");
    let kinds: Vec<&str> = recs.iter().map(|r| r.1.as_str()).collect();
    assert!(
        kinds.ends_with(&["sjournal.unparsed", KIND_REDACTED]),
        "{kinds:?}"
    );
    let r: RedactedRecord = serde_json::from_str(&recs.last().unwrap().2).unwrap();
    assert_eq!(r.event_kind, "sjournal.unparsed");
    assert_eq!(redacted_rules(&root, "cut"), expected_rules(&c, 1));
    let leaks = stored(&[&root], &needles(&c));
    assert!(leaks.is_empty(), "{leaks:#?}");
}

/// `replay` lists what was redacted from an event (place, rule, tag), and the event's batch
/// goes on past its `sjournal.redacted` record: the injection journaled after it is the
/// event's, and replay re-derives and compares it.
#[test]
fn replay_shows_the_redaction_and_pairs_the_event_with_its_injection() {
    let c = corpus(16);
    let gh = c.iter().find(|s| s.rule == "github-token").unwrap();
    let dir = support::scratch();
    let root = dir.path().join("root");
    let session = "replay-redacted";
    let prompt = json!({"session_id": session, "hook_event_name": "UserPromptSubmit",
        "prompt": "Fix the build."});
    hook(&root, "claude", &prompt, support::PATIENT_MS);
    // A context event with a secret: event, sjournal.redacted, sjournal.injected.
    let start = json!({"session_id": session, "hook_event_name": "SessionStart",
        "source": "compact", "note": gh.line});
    let out = hook(&root, "claude", &start, support::PATIENT_MS);
    assert!(String::from_utf8_lossy(&out.stdout).contains("sjournal redacted"));
    let kinds: Vec<String> = support::records(&root, session)
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        kinds,
        [
            "UserPromptSubmit",
            "SessionStart",
            KIND_REDACTED,
            "sjournal.injected"
        ]
    );
    let out = support::run(&root, &["replay", "--session", session], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("injected for seq 2 (") && text.contains("re-derived identically"),
        "{text}"
    );
    assert!(!text.contains("nothing journaled for seq 2"), "{text}");
    assert!(
        text.contains("redacted from the SessionStart before it: 1 secret(s)"),
        "{text}"
    );
    assert!(text.contains("- /note  [REDACTED:github-token:"), "{text}");
    assert!(!text.contains(&gh.value));
    let out = support::run(&root, &["replay", "--session", session, "--json"], b"");
    let steps: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let r = &steps[2]["redacted"];
    assert_eq!(r["event_kind"], "SessionStart");
    assert_eq!(r["found"][0]["rule"], "github-token");
    assert_eq!(r["found"][0]["path"], "/note");
    assert!(steps[1].get("redacted").is_none());
}

/// Tags are keyed per root: the same secret gets the same tag in two sessions of a root and
/// another in another root; the key is the root's spool.key, a regular file closed to
/// everyone but its owner.
#[test]
fn tags_are_keyed_per_root_under_a_private_key_file() {
    use std::os::unix::fs::PermissionsExt;
    let c = corpus(17);
    let gh = c.iter().find(|s| s.rule == "github-token").unwrap();
    let dir = support::scratch();
    let tag = |root: &Path, session: &str| {
        let p = json!({"session_id": session, "hook_event_name": "UserPromptSubmit",
            "prompt": gh.line});
        hook(root, "claude", &p, support::PATIENT_MS);
        let (_, _, payload) = support::records(root, session)
            .into_iter()
            .find(|r| r.1 == KIND_REDACTED)
            .expect("a redaction record");
        let r: RedactedRecord = serde_json::from_str(&payload).unwrap();
        (r.found[0].tag.clone(), r.key_id.clone())
    };
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let (a1, ka1) = tag(&a, "one");
    let (a2, ka2) = tag(&a, "two");
    let (b1, kb1) = tag(&b, "one");
    assert_eq!(a1, a2);
    assert_eq!(ka1, ka2);
    assert!(ka1.is_some());
    assert_ne!(a1, b1);
    assert_ne!(ka1, kb1);
    for root in [&a, &b] {
        let meta = std::fs::symlink_metadata(root.join("spool.key")).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
}

/// `show` ends with what was redacted from the session's events (with every list), in text
/// and JSON; a session without redactions, or a list named, shows nothing of it.
#[test]
fn show_says_what_was_redacted() {
    let c = corpus(18);
    let gh = c.iter().find(|s| s.rule == "github-token").unwrap();
    let dir = support::scratch();
    let root = dir.path().join("root");
    let clean = json!({"session_id": "show-clean", "hook_event_name": "UserPromptSubmit",
        "prompt": "Fix the build."});
    hook(&root, "claude", &clean, support::PATIENT_MS);
    let out = support::run(&root, &["show", "--session", "show-clean"], b"");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Redacted"));
    for (i, prompt) in [gh.line.clone(), format!("again: {}", gh.line)]
        .iter()
        .enumerate()
    {
        let p = json!({"session_id": "show-secret", "hook_event_name": "UserPromptSubmit",
            "prompt": prompt, "prompt_id": i});
        hook(&root, "claude", &p, support::PATIENT_MS);
    }
    let out = support::run(&root, &["show", "--session", "show-secret"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Redacted (2 secret(s) in 2 event(s): github-token 2;"),
        "{text}"
    );
    assert!(!text.contains(&gh.value));
    let out = support::run(&root, &["show", "--session", "show-secret", "--json"], b"");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["redacted"]["secrets"], 2);
    assert_eq!(v["redacted"]["events"], 2);
    assert_eq!(v["redacted"]["by_rule"]["github-token"], 2);
    let out = support::run(
        &root,
        &["show", "--session", "show-secret", "prompts", "--json"],
        b"",
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("redacted").is_none());
}

/// `verify` lists what was redacted at ingest under the journal's line (counts by rule and
/// the records' seqs, which `show --seq` opens), in text and JSON, and still exits 0; a
/// journal without redactions gets no such line.
#[test]
fn verify_lists_what_was_redacted() {
    let c = corpus(19);
    let gh = c.iter().find(|s| s.rule == "github-token").unwrap();
    let dir = support::scratch();
    let root = dir.path().join("root");
    let clean = json!({"session_id": "verify-clean", "hook_event_name": "UserPromptSubmit",
        "prompt": "Fix the build."});
    hook(&root, "claude", &clean, support::PATIENT_MS);
    let p = json!({"session_id": "verify-secret", "hook_event_name": "UserPromptSubmit",
        "prompt": gh.line});
    hook(&root, "claude", &p, support::PATIENT_MS);
    let redacted_seq = support::records(&root, "verify-secret")
        .iter()
        .position(|(_, kind, _)| kind == KIND_REDACTED)
        .expect("a sjournal.redacted record") as u64
        + 1;

    let out = support::run(&root, &["verify", "--session", "verify-clean"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("redacted"));

    let out = support::run(&root, &["verify", "--session", "verify-secret"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "redacted at ingest: 1 secret(s) in 1 event(s): github-token 1; records at seq {redacted_seq}"
        )),
        "{text}"
    );
    assert!(!text.contains(&gh.value));

    let out = support::run(&root, &["verify", "--all", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let r: Vec<&Value> = lines
        .iter()
        .filter(|v| v.get("redactions").is_some())
        .collect();
    assert_eq!(r.len(), 1, "{lines:?}");
    assert_eq!(r[0]["redactions"]["by_rule"]["github-token"], 1);
    assert_eq!(r[0]["redactions"]["seqs"], json!([redacted_seq]));
}

/// `verify`'s redaction summary reads again the records the verify noted (their offsets): it
/// is of the journal verified only if the record at the last noted offset is the verified
/// head. Bytes where that record has another hash (a journal renamed over it between the
/// reads), or is cut short, are not summarised.
#[test]
fn verify_summarises_redactions_only_of_the_journal_it_verified() {
    let c = corpus(17);
    let dir = support::scratch();
    let root = dir.path().join("root");
    let mut p = base_payload(HOSTS[0].2, HOSTS[0].3);
    p["tool_response"] = json!({"stdout": text(&c)});
    hook(&root, "claude", &p, support::PATIENT_MS);
    let session = p["session_id"].as_str().unwrap();
    let path = Root::new(&root).existing_session(session).unwrap().journal;
    let report = sjournal::journal::verify_file(&path, None).unwrap();
    assert!(report.ok, "{}", report.summary());
    let head = report.head.clone().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let seen = &report.seen;
    assert_eq!(
        seen.noted.len(),
        1,
        "one sjournal.redacted record: {seen:?}"
    );
    let s = sjournal::redact::Summary::of_verified(&bytes, seen, &head).expect("the same journal");
    assert_eq!(s.events, 1);
    assert_eq!(s.secrets, c.len() as u64);
    // Another journal's head: not this one.
    let other = "0".repeat(head.len());
    assert!(sjournal::redact::Summary::of_verified(&bytes, seen, &other).is_none());
    // The head is not the record at the last offset (here: record 1).
    let mut earlier = seen.clone();
    earlier.last = Some(sjournal::format::header::Header::decode(&bytes).unwrap().1);
    assert!(report.records > 1);
    assert!(sjournal::redact::Summary::of_verified(&bytes, &earlier, &head).is_none());
    // Fewer bytes than verified.
    let cut = bytes.len() - 1;
    assert!(sjournal::redact::Summary::of_verified(&bytes[..cut], seen, &head).is_none());
}
