//! Webhook delivery guarantees, through the built binary against a real HTTP receiver on
//! 127.0.0.1: the hook journals events and starts the detached deliverer, which POSTs each
//! matching event, byte for byte as journaled, once, with an `Idempotency-Key` naming the
//! session, seq and record hash; every attempt is journaled as `sjournal.webhook`. With the
//! endpoint down for a while (connection refused, then 503) every event arrives once it is up
//! and none is accepted twice; a deliverer killed mid-POST leaves the rest to the next run,
//! which sends the interrupted event again under the same key (at-least-once). Waiting for
//! the detached process is bounded polling on outcomes; nothing asserts a duration.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use sjournal::format::payload::{self, Webhook, WebhookOutcome, KIND_WEBHOOK};
use sjournal::journal::{JournalReader, Root};
use support::webhook::{distinct, wait_delivered, wait_until, Mode, Receiver};

const LIMIT: Duration = Duration::from_secs(120);

fn configure(root: &Path, url: &str, extra: &str) {
    std::fs::write(
        root.join("config.toml"),
        format!(
            "[hook]\ndeadline_ms = {}\n\n[[webhook]]\nname = \"ci\"\nevents = [\"PostToolUse\", \"Stop\"]\nurl = \"{url}\"\n{extra}",
            support::PATIENT_MS
        ),
    )
    .unwrap();
}

fn tool_event(session: &str, i: usize) -> String {
    // Odd spacing and key order: the body must be these bytes, not a re-serialization.
    format!(
        "{{\"session_id\":\"{session}\",  \"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"echo {i}\"}},\"tool_use_id\":\"t{i}\",\"tool_response\":{{\"stdout\":\"{i}\"}} }}"
    )
}

fn hook(root: &Path, json: &str) {
    let out = support::run(root, &["hook"], json.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "the hook complained: {stderr}");
}

/// Event records of the session: seq -> (kind, JSON text exactly as journaled, key).
fn events(root: &Path, session: &str) -> BTreeMap<u64, (String, String, String)> {
    let paths = Root::new(root).session(session).unwrap();
    let r = JournalReader::open(&paths.journal, None).unwrap();
    r.records()
        .unwrap()
        .map(|rec| rec.unwrap())
        .filter(|rec| !payload::is_system_kind(rec.kind))
        .map(|rec| {
            let json = payload::decode_event(rec.seq, rec.payload)
                .unwrap()
                .to_owned();
            let key = format!("{}:{}:{}", paths.stem, rec.seq, &rec.hash.to_hex()[..32]);
            (rec.seq, (rec.kind.to_owned(), json, key))
        })
        .collect()
}

fn attempts(root: &Path, session: &str) -> Vec<Webhook> {
    support::payloads(root, session, KIND_WEBHOOK)
        .into_iter()
        .map(|(seq, _, p)| payload::decode_system(seq, &p).unwrap())
        .collect()
}

#[test]
fn each_event_is_delivered_once_with_its_idempotency_key() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(Mode::Ok);
    configure(dir.path(), &rx.url("/in"), "");
    let s = "wh-once";
    for i in 0..3 {
        hook(dir.path(), &tool_event(s, i));
    }
    hook(
        dir.path(),
        &format!(
            r#"{{"session_id":"{s}","hook_event_name":"UserPromptSubmit","prompt":"not wanted"}}"#
        ),
    );
    hook(
        dir.path(),
        &format!(r#"{{"session_id":"{s}","hook_event_name":"Stop","stop_hook_active":false}}"#),
    );
    wait_delivered(dir.path(), s, LIMIT);

    let journaled = events(dir.path(), s);
    let wanted: Vec<_> = journaled
        .iter()
        .filter(|(_, (kind, _, _))| kind != "UserPromptSubmit")
        .collect();
    let posts = rx.posts();
    assert_eq!(posts.len(), 4, "one POST per matching event: {posts:#?}");
    // In seq order, each body the journaled bytes, each key naming its event.
    for (post, (seq, (kind, json, key))) in posts.iter().zip(&wanted) {
        assert_eq!(post.path, "/in");
        assert_eq!(
            &post.body, json,
            "the body is the event exactly as journaled"
        );
        assert_eq!(post.key(), key);
        assert_eq!(
            post.header("X-Sjournal-Seq"),
            Some(seq.to_string().as_str())
        );
        assert_eq!(post.header("X-Sjournal-Event"), Some(kind.as_str()));
        assert_eq!(post.header("X-Sjournal-Attempt"), Some("1"));
        assert_eq!(post.header("Content-Type"), Some("application/json"));
    }
    assert_eq!(distinct(&posts, "Idempotency-Key").len(), 4);

    // Every attempt is journaled: here one `delivered` per event, attempt 1.
    let recs = attempts(dir.path(), s);
    assert_eq!(recs.len(), 4, "{recs:#?}");
    for (r, (seq, (kind, _, key))) in recs.iter().zip(&wanted) {
        assert_eq!((r.event_seq, &r.event_kind, &r.key), (**seq, kind, key));
        assert_eq!(
            (r.outcome, r.attempt, r.status),
            (WebhookOutcome::Delivered, 1, Some(200))
        );
        assert_eq!(r.webhook, "ci");
    }

    // A deliverer run by hand finds nothing owed: still one POST per event.
    let out = support::run(dir.path(), &["webhook", "deliver", "--session", s], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("delivered 0, 0 pending"), "{text}");
    assert_eq!(rx.posts().len(), 4);
    let st = support::webhook::status(dir.path(), s);
    assert_eq!(
        (st[0]["delivered"].as_u64(), st[0]["pending"].as_u64()),
        (Some(4), Some(0))
    );
}

#[test]
fn an_endpoint_down_for_a_while_gets_every_event_once_it_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let port = support::webhook::free_port();
    let url = format!("http://127.0.0.1:{port}/in");
    configure(
        dir.path(),
        &url,
        "timeout_ms = 2000\n[webhook.retry]\nattempts = 1000\nbackoff_ms = 20\nmax_backoff_ms = 100\n",
    );
    let s = "wh-down";
    // Down: nothing listens. The hooks return at once; the deliverer retries.
    for i in 0..6 {
        hook(dir.path(), &tool_event(s, i));
    }
    let failed = || {
        attempts(dir.path(), s)
            .iter()
            .filter(|r| r.outcome == WebhookOutcome::Failed)
            .count()
    };
    wait_until(
        LIMIT,
        || failed() >= 3,
        || format!("{:#?}", attempts(dir.path(), s)),
    );
    // Up, but refusing (503) for a few requests; then accepting.
    let rx = Receiver::start_on(port, Mode::Status(503, "busy".into()));
    wait_until(
        LIMIT,
        || rx.posts().len() >= 3,
        || format!("{:#?}", rx.posts()),
    );
    rx.set_mode(Mode::Ok);
    for i in 6..8 {
        hook(dir.path(), &tool_event(s, i));
    }
    wait_delivered(dir.path(), s, LIMIT);

    let journaled = events(dir.path(), s);
    let accepted = rx.accepted();
    let keys = distinct(&accepted, "Idempotency-Key");
    let all_keys = distinct(&rx.posts(), "Idempotency-Key");
    eprintln!(
        "endpoint down then up: {} events, {} POSTs received ({} distinct keys), {} accepted ({} distinct keys)",
        journaled.len(),
        rx.posts().len(),
        all_keys.len(),
        accepted.len(),
        keys.len()
    );
    let expected: std::collections::BTreeSet<String> =
        journaled.values().map(|(_, _, k)| k.clone()).collect();
    assert_eq!(keys, expected, "every event accepted");
    assert_eq!(accepted.len(), journaled.len(), "none accepted twice");

    let recs = attempts(dir.path(), s);
    for seq in journaled.keys() {
        let mine: Vec<&Webhook> = recs.iter().filter(|r| r.event_seq == *seq).collect();
        let delivered = mine
            .iter()
            .filter(|r| r.outcome == WebhookOutcome::Delivered);
        assert_eq!(delivered.count(), 1, "seq {seq}: {mine:#?}");
        // Attempts are numbered 1, 2, ... per event, across runs.
        let numbers: Vec<u32> = mine.iter().map(|r| r.attempt).collect();
        assert_eq!(numbers, (1..=mine.len() as u32).collect::<Vec<_>>());
    }
    // The refused attempts say why: connection refused first, then the 503.
    let first = recs
        .iter()
        .find(|r| r.outcome == WebhookOutcome::Failed)
        .unwrap();
    assert_eq!(first.status, None);
    assert!(
        first.error.as_deref().unwrap().contains("onnection"),
        "{first:?}"
    );
    assert!(first.retry_in_ms.is_some(), "{first:?}");
    assert!(recs
        .iter()
        .any(|r| r.status == Some(503) && r.response.as_deref() == Some("busy")));
}

#[test]
fn a_deliverer_killed_mid_post_leaves_the_rest_to_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(Mode::HangNth(3));
    configure(dir.path(), &rx.url("/in"), "timeout_ms = 600000\n");
    let s = "wh-crash";
    // Appended, not hooked: no deliverer starts by itself; this test runs its own.
    for i in 0..5 {
        let out = support::run(
            dir.path(),
            &["append", "--session", s],
            tool_event(s, i).as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let mut child = std::process::Command::new(support::bin())
        .arg("--root")
        .arg(dir.path())
        .args(["webhook", "deliver", "--session", s])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The third POST is received and never answered: kill the deliverer while it waits.
    wait_until(LIMIT, || rx.held() == 1, || format!("{:#?}", rx.posts()));
    child.kill().unwrap();
    child.wait().unwrap();
    let recs = attempts(dir.path(), s);
    assert_eq!(
        recs.len(),
        2,
        "the interrupted attempt left no record: {recs:#?}"
    );

    rx.set_mode(Mode::Ok);
    let out = support::run(dir.path(), &["webhook", "deliver", "--session", s], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    let journaled = events(dir.path(), s);
    let posts = rx.posts();
    let keys = distinct(&posts, "Idempotency-Key");
    eprintln!(
        "deliverer killed mid-POST: {} events, {} POSTs, {} distinct keys",
        journaled.len(),
        posts.len(),
        keys.len()
    );
    assert_eq!(keys.len(), 5, "every event delivered at least once");
    assert_eq!(posts.len(), 6, "only the interrupted one twice");
    let third = &journaled[&3].2;
    assert_eq!(posts.iter().filter(|p| p.key() == third).count(), 2);
    let recs = attempts(dir.path(), s);
    let delivered: Vec<u64> = recs
        .iter()
        .filter(|r| r.outcome == WebhookOutcome::Delivered)
        .map(|r| r.event_seq)
        .collect();
    assert_eq!(delivered, [1, 2, 3, 4, 5]);
}

/// Many hooks of one session at once (parallel tool calls), with deliverers starting and
/// finishing among them: every event arrives, and none twice, since one deliverer at a time
/// sends (a second one would repeat the first's plan) and the last one scans again after it
/// lets go of the lock (an event whose hook saw the lock held would be stranded otherwise).
#[test]
fn concurrent_hooks_strand_nothing_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(Mode::Ok);
    configure(dir.path(), &rx.url("/in"), "");
    let s = "wh-many";
    let (threads, per) = (8, 5);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let root = dir.path();
            scope.spawn(move || {
                for i in 0..per {
                    hook(root, &tool_event(s, t * per + i));
                }
            });
        }
    });
    wait_delivered(dir.path(), s, LIMIT);
    let journaled = events(dir.path(), s);
    let posts = rx.posts();
    let keys = distinct(&posts, "Idempotency-Key");
    eprintln!(
        "{threads}x{per} concurrent hooks: {} events, {} POSTs, {} distinct keys",
        journaled.len(),
        posts.len(),
        keys.len()
    );
    assert_eq!(journaled.len(), threads * per);
    let expected: std::collections::BTreeSet<String> =
        journaled.values().map(|(_, _, k)| k.clone()).collect();
    assert_eq!(keys, expected);
    assert_eq!(posts.len(), threads * per, "no event sent twice");
    // In seq order.
    let seqs: Vec<u64> = posts
        .iter()
        .map(|p| p.header("X-Sjournal-Seq").unwrap().parse().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

/// The window the re-check closes, made to happen: while the deliverer still holds the lock
/// after its last scan, a hook commits an event and finds the lock held (so starts nothing).
/// The deliverer must see that event in the scan after it lets go, and deliver it.
#[test]
fn an_event_committed_as_the_deliverer_lets_go_is_not_stranded() {
    use sjournal::journal::{Writer, WriterOptions};
    use sjournal::webhook::deliver::{deliver_session, DeliverOptions, SessionRun};
    use sjournal::webhook::outbox;
    use std::sync::{Arc, Mutex};

    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(Mode::Ok);
    configure(dir.path(), &rx.url("/in"), "");
    let config = sjournal::config::Config::load(&Root::new(dir.path())).unwrap();
    let root = Root::new(dir.path());
    let s = "wh-window";
    let append = |i: usize| {
        let mut w = Writer::open(&root, s, &WriterOptions::default()).unwrap();
        w.append(
            "PostToolUse",
            &sjournal::fold::digest::encode_event("PostToolUse", &tool_event(s, i)),
        )
        .unwrap();
    };
    append(0);
    let state = outbox::state_dir(&root.session(s).unwrap());
    let late_hook_saw_lock_free = Arc::new(Mutex::new(None));
    let once = Arc::new(Mutex::new(false));
    let (seen, done, root2) = (late_hook_saw_lock_free.clone(), once.clone(), root.clone());
    let opts = DeliverOptions {
        before_release: Some(Arc::new(move || {
            let mut done = done.lock().unwrap();
            if !*done {
                *done = true;
                let mut w = Writer::open(&root2, s, &WriterOptions::default()).unwrap();
                w.append(
                    "PostToolUse",
                    &sjournal::fold::digest::encode_event("PostToolUse", &tool_event(s, 1)),
                )
                .unwrap();
                // What the hook does next: probe the lock, and start nothing if it is held.
                *seen.lock().unwrap() = Some(outbox::lock_is_free(&state).unwrap());
            }
        })),
        ..DeliverOptions::default()
    };
    let run = deliver_session(&root, &config.webhook, s, &opts).unwrap();
    assert_eq!(*late_hook_saw_lock_free.lock().unwrap(), Some(false));
    let SessionRun::Ran(runs) = run else {
        panic!("{run:?}")
    };
    assert_eq!((runs[0].delivered, runs[0].pending), (2, 0), "{runs:?}");
    assert_eq!(rx.accepted().len(), 2);
}

/// An event erased before its delivery is sent as what is left of it: `null` for a whole
/// payload, the JSON without the field for a field; the deliverer does not stop at it, and the
/// events after it are delivered as journaled.
#[test]
fn an_event_erased_before_its_delivery_is_sent_as_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(Mode::Ok);
    configure(dir.path(), &rx.url("/in"), "");
    let s = "wh-erased";
    for i in 0..3 {
        let out = support::run(
            dir.path(),
            &["append", "--session", s],
            tool_event(s, i).as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    for args in [
        &["--seq", "1"][..],
        &["--seq", "2", "--field", "/tool_input/command"][..],
    ] {
        let mut a = vec!["erase", "--session", s, "--reason", "test"];
        a.extend_from_slice(args);
        let out = support::run(dir.path(), &a, b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let out = support::run(dir.path(), &["webhook", "deliver", "--session", s], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let posts = rx.posts();
    let bodies: Vec<(&str, &str)> = posts
        .iter()
        .map(|p| (p.header("X-Sjournal-Seq").unwrap(), p.body.as_str()))
        .collect();
    assert_eq!(bodies.len(), 3, "{bodies:#?}");
    assert_eq!(bodies[0], ("1", "null"));
    assert_eq!(bodies[1].0, "2");
    assert!(
        bodies[1].1.contains("\"tool_use_id\":\"t1\"") && !bodies[1].1.contains("echo 1"),
        "{bodies:?}"
    );
    assert_eq!(bodies[2], ("3", tool_event(s, 2).as_str()));
}
