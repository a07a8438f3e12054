//! What a webhook must never do to the hook or leak, through the built binary: with an
//! endpoint that accepts and never answers, every hook still returns on its own (not held by
//! the delivery it started: the deliverer is detached, with its stdio off the host's pipes)
//! and journals its event without spooling it; secrets from the environment reach the
//! endpoint but never the journal, `log`, `export` or `webhook status`, even when the
//! endpoint echoes them back in an error; a missing variable is a clear, journaled failure;
//! a mistaken `[[webhook]]` is refused with what, where and what to do, while the hook still
//! keeps the event. No durations are asserted.

use crate::support;

use std::path::Path;
use std::time::Duration;

use sjournal::format::payload::{self, Webhook, WebhookOutcome, KIND_WEBHOOK};
use sjournal::journal::Root;
use support::webhook::{run_bounded, wait_delivered, wait_until, Mode, Receiver};

const LIMIT: Duration = Duration::from_secs(120);
/// How long a hook may take in the hanging-endpoint test before it counts as held (its
/// deadline is 5 s, the webhook's timeout 600 s).
const HANG_LIMIT: Duration = Duration::from_secs(60);

fn event(session: &str, i: usize) -> String {
    format!(
        r#"{{"session_id":"{session}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"echo {i}"}},"tool_use_id":"t{i}"}}"#
    )
}

fn attempts(root: &Path, session: &str) -> Vec<Webhook> {
    support::payloads(root, session, KIND_WEBHOOK)
        .into_iter()
        .map(|(seq, _, p)| payload::decode_system(seq, &p).unwrap())
        .collect()
}

#[test]
fn a_hanging_endpoint_never_holds_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(Mode::Hang);
    // The deadline is far shorter than the webhook's timeout: a hook that waited for the
    // delivery would blow it, and say so (and spool the event).
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[hook]\ndeadline_ms = 5000\n\n[[webhook]]\nname = \"slow\"\nevents = [\"*\"]\nurl = \"{}\"\ntimeout_ms = 600000\n",
            rx.url("/hang")
        ),
    )
    .unwrap();
    let s = "wh-hang";
    let root = Root::new(dir.path());
    let mut pid = None;
    for i in 0..4 {
        // Bounded far above the deadline: a hook that waited for the delivery (or left the
        // deliverer on its pipes) would not return before the webhook's timeout.
        let out = run_bounded(dir.path(), &["hook"], event(s, i).as_bytes(), HANG_LIMIT);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.is_empty(),
            "no deadline trouble, nothing spooled: {stderr}"
        );
        if i == 0 {
            // The first hook started the deliverer, which is now stuck in its POST.
            wait_until(LIMIT, || rx.held() == 1, || format!("{:#?}", rx.posts()));
            pid = support::webhook::deliverer(&root, s);
            assert!(pid.is_some(), "the deliverer runs on, detached");
            // At the lowest CPU priority: work nobody waits for yields the cores to the host.
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.unwrap())).unwrap();
            let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
            let nice = after_comm.split(' ').nth(16).unwrap();
            assert_eq!(nice, "19", "the deliverer's nice value: {stat}");
        }
    }
    // Every event is in the journal (none spooled), and the one deliverer still hangs in
    // its first POST: the later hooks left the events to it.
    let kinds: Vec<String> = support::records(dir.path(), s)
        .into_iter()
        .map(|(_, k, _)| k)
        .collect();
    assert_eq!(kinds, ["PostToolUse"; 4], "{kinds:?}");
    let spool = Root::new(dir.path()).session(s).unwrap();
    assert!(
        sjournal::journal::spool::pending(&root, s)
            .unwrap()
            .is_empty(),
        "{spool:?}"
    );
    assert_eq!(rx.held(), 1);
    assert_eq!(support::webhook::deliverer(&root, s), pid);
    let st = support::webhook::status(dir.path(), s);
    assert_eq!(st[0]["pending"], 4, "{st:#?}");
    support::webhook::kill(pid.unwrap());
}

const TOKEN: &str = "tok-5f1e9a7c-never-journal-me";

#[test]
fn secrets_reach_the_endpoint_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    // The first answer echoes the Authorization header back, as some servers do in errors.
    let rx = Receiver::start(Mode::Status(401, "bad credentials: {auth}".into()));
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[hook]\ndeadline_ms = {}\n\n[[webhook]]\nname = \"ci\"\nevents = [\"PostToolUse\"]\nurl = \"{}?token=${{SJOURNAL_WEBHOOK_TOKEN}}\"\nheaders = {{ Authorization = \"Bearer ${{SJOURNAL_WEBHOOK_TOKEN}}\", X-Team = \"blue\" }}\n[webhook.retry]\nattempts = 50\nbackoff_ms = 20\nmax_backoff_ms = 50\n",
            support::PATIENT_MS,
            rx.url("/in")
        ),
    )
    .unwrap();
    let s = "wh-secret";
    let env = [("SJOURNAL_WEBHOOK_TOKEN", TOKEN)];
    let out = support::run_env(dir.path(), &["hook"], event(s, 0).as_bytes(), &env);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    wait_until(LIMIT, || !rx.posts().is_empty(), || "no POST".into());
    rx.set_mode(Mode::Ok);
    wait_delivered(dir.path(), s, LIMIT);

    // The endpoint got the secret, in the header and in the URL.
    let posts = rx.posts();
    let last = posts.last().unwrap();
    assert_eq!(
        last.header("Authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(last.header("X-Team"), Some("blue"));
    assert_eq!(last.path, format!("/in?token={TOKEN}"));

    // The refusal was journaled, with the echoed secret redacted.
    let recs = attempts(dir.path(), s);
    let refused = recs
        .iter()
        .find(|r| r.status == Some(401))
        .expect("the 401");
    assert_eq!(
        refused.response.as_deref(),
        Some("bad credentials: [redacted]")
    );
    assert!(
        refused.url.contains("${SJOURNAL_WEBHOOK_TOKEN}"),
        "{refused:?}"
    );

    // Nowhere on disk or in what sjournal prints.
    let mut files = vec![];
    collect(dir.path(), &mut files);
    for f in &files {
        if f.file_name().unwrap() == "config.toml" {
            continue;
        }
        let bytes = std::fs::read(f).unwrap();
        assert!(
            !bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()),
            "{} holds the secret",
            f.display()
        );
    }
    for args in [
        vec!["log", "--session", s],
        vec!["log", "--session", s, "--json"],
        vec!["export", "--session", s],
        vec!["webhook", "status"],
        vec!["webhook", "status", "--json"],
        vec!["webhook", "deliver", "--all"],
        vec!["verify", "--session", s],
    ] {
        let out = support::run_env(dir.path(), &args, b"", &env);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(!text.contains(TOKEN), "{args:?} printed the secret: {text}");
        }
    }
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn a_missing_variable_is_a_clear_journaled_failure() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(Mode::Ok);
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[[webhook]]\nname = \"ci\"\nevents = [\"*\"]\nurl = \"{}\"\nheaders = {{ Authorization = \"Bearer ${{SJOURNAL_TEST_UNSET_TOKEN}}\" }}\n",
            rx.url("/in")
        ),
    )
    .unwrap();
    let s = "wh-unset";
    let out = support::run(
        dir.path(),
        &["append", "--session", s],
        event(s, 0).as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = support::run(dir.path(), &["webhook", "deliver", "--session", s], b"");
    assert_eq!(out.status.code(), Some(1), "still owed: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 pending") && text.contains("${SJOURNAL_TEST_UNSET_TOKEN} is not set"),
        "{text}"
    );
    assert!(rx.posts().is_empty(), "nothing is sent without its header");
    let recs = attempts(dir.path(), s);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].outcome, WebhookOutcome::Failed);
    assert_eq!(recs[0].retry_in_ms, None, "a retry cannot fix it");
    // With the variable set, the next run delivers.
    let env = [("SJOURNAL_TEST_UNSET_TOKEN", "now-it-is-set")];
    let out = support::run_env(dir.path(), &["webhook", "deliver", "--all"], b"", &env);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(rx.accepted().len(), 1);
    assert_eq!(attempts(dir.path(), s)[1].attempt, 2);
}

#[test]
fn mistaken_webhook_config_is_refused_clearly_and_the_hook_still_keeps_the_event() {
    for (config, says) in [
        (
            "[[webhook]]\nname = \"ci\"\nevents = [\"Stop\"]\nurl = \"ftp://example.com/x\"\n",
            "[[webhook]] #1 (\"ci\"): url \"ftp://example.com/x\": must start with http:// or https://",
        ),
        (
            "[[webhook]]\nname = \"ci\"\nevents = [\"Stop\"]\n",
            "missing field `url`",
        ),
        (
            "[[webhook]]\nname = \"a/b\"\nevents = [\"Stop\"]\nurl = \"https://h/\"\n",
            "name must be 1 to 64 characters",
        ),
        (
            "[[webhook]]\nname = \"ci\"\nevents = [\"Stop\"]\nurl = \"https://h/\"\nheaders = { Authorization = \"Bearer $TOKEN\" }\n",
            "headers.Authorization: a '$' must start ${NAME}",
        ),
        (
            "[[webhook]]\nname = \"ci\"\nevents = [\"Stop\"]\nurl = \"https://h/\"\ntimeout_ms = 0\n",
            "timeout_ms = 0 is out of range; use 1 to 600000",
        ),
        (
            "[[webhook]]\nname = \"ci\"\nevents = [\"Stop\"]\nurl = \"https://h/\"\n[retry]\nattempts = 3\n",
            "unknown field `retry`",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let out = support::run(dir.path(), &["webhook", "status"], b"");
        assert_eq!(out.status.code(), Some(2), "{config}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let file = dir.path().join("config.toml");
        assert!(err.contains(says), "{config}\n{err}");
        assert!(err.contains(&file.display().to_string()), "names the file: {err}");
        assert!(err.contains("fix it"), "says what to do: {err}");

        let out = support::run(dir.path(), &["hook"], event("wh-bad", 0).as_bytes());
        assert_eq!(out.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&out.stderr).contains(says));
        assert_eq!(support::records(dir.path(), "wh-bad").len(), 1, "kept");
    }
}

/// A secret with bytes every encoding treats specially: `>>>` and `???` give `+` and `/` in
/// standard base64 (`-` and `_` in the URL-safe alphabet); space, `/` and `+` are escaped by
/// URL encoding; letters of both cases.
const SPICY: &str = "Tok>>>???-5f1e9A7c never/journal+me";

mod redaction {
    use super::SPICY;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use base64::Engine;
    use sjournal::webhook::redact::Redactor;

    /// The echo, redacted: none of the secret's form may remain, and the text around it must.
    fn assert_redacted(echo: &str) {
        let text = format!("401 bad credentials: {echo} (try again)");
        let clean = Redactor::new(vec![SPICY.to_owned()]).clean(&text);
        assert_eq!(
            clean, "401 bad credentials: [redacted] (try again)",
            "the echo {echo:?} was not redacted whole"
        );
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn url_encoded(s: &str, upper_hex: bool) -> String {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ if upper_hex => format!("%{b:02X}"),
                _ => format!("%{b:02x}"),
            })
            .collect()
    }

    #[test]
    fn as_it_is() {
        assert_redacted(SPICY);
    }

    #[test]
    fn lower_cased() {
        assert_redacted(&SPICY.to_lowercase());
    }

    #[test]
    fn upper_cased() {
        assert_redacted(&SPICY.to_uppercase());
    }

    #[test]
    fn base64_standard_padded_and_not() {
        let padded = STANDARD.encode(SPICY);
        assert!(padded.contains('+') && padded.contains('/') && padded.ends_with('='));
        assert_redacted(&padded);
        assert_redacted(&STANDARD_NO_PAD.encode(SPICY));
    }

    #[test]
    fn base64_url_safe_padded_and_not() {
        let padded = URL_SAFE.encode(SPICY);
        assert!(padded.contains('-') && padded.contains('_') && padded.ends_with('='));
        assert_redacted(&padded);
        assert_redacted(&URL_SAFE_NO_PAD.encode(SPICY));
    }

    #[test]
    fn base64_of_the_cased_forms() {
        assert_redacted(&STANDARD.encode(SPICY.to_lowercase()));
        assert_redacted(&URL_SAFE_NO_PAD.encode(SPICY.to_uppercase()));
    }

    /// Inside a longer encoded text (`Basic base64(user:secret)`), at each of the three byte
    /// alignments: the characters that encode the secret's bits alone are redacted, so no
    /// decodable run of the secret is left.
    #[test]
    fn base64_inside_a_longer_encoded_text_at_every_alignment() {
        for user in ["u", "us", "usr", "user", "admin"] {
            let encoded = STANDARD.encode(format!("{user}:{SPICY}"));
            let clean = Redactor::new(vec![SPICY.to_owned()]).clean(&encoded);
            assert!(clean.contains("[redacted]"), "{user}: {clean}");
            let left = clean.replace("[redacted]", "");
            // What is left is at most the user part and the boundary characters.
            assert!(
                left.len() <= 4 * (user.len() + 1).div_ceil(3) + 4,
                "{user}: {clean}"
            );
        }
    }

    #[test]
    fn hex_lower_and_upper() {
        assert_redacted(&hex(SPICY.as_bytes()));
        assert_redacted(&hex(SPICY.as_bytes()).to_uppercase());
        assert_redacted(&hex(SPICY.to_lowercase().as_bytes()));
    }

    #[test]
    fn url_encoded_with_either_case_of_hex_digits_and_plus_for_space() {
        let upper = url_encoded(SPICY, true);
        assert!(upper.contains("%2F") && upper.contains("%20"), "{upper}");
        assert_redacted(&upper);
        assert_redacted(&url_encoded(SPICY, false));
        assert_redacted(&url_encoded(SPICY, true).replace("%20", "+"));
        assert_redacted(&url_encoded(&SPICY.to_lowercase(), true));
        // base64 in a URL: its `+`, `/` and `=` escaped.
        assert_redacted(&url_encoded(&STANDARD.encode(SPICY), true));
    }

    #[test]
    fn json_escaped() {
        assert_redacted(&SPICY.replace('/', "\\/").replace('>', "\\u003e"));
    }

    /// An answer is kept only up to its first 256 bytes: a secret cut off at the end is still
    /// redacted.
    #[test]
    fn cut_off_at_the_end_of_the_kept_text() {
        let r = Redactor::new(vec![SPICY.to_owned()]);
        let cut = &SPICY[..20];
        assert_eq!(r.clean(&format!("token {cut}")), "token [redacted]");
        let cut = &hex(SPICY.as_bytes())[..30];
        assert_eq!(r.clean(&format!("token {cut}")), "token [redacted]");
    }

    #[test]
    fn unrelated_text_is_left_alone() {
        let r = Redactor::new(vec![SPICY.to_owned()]);
        let text = "the endpoint answered 503: try again later (Tok nevermind)";
        assert_eq!(r.clean(text), text);
    }
}

/// Through the binary: a receiver that echoes the Authorization header encoded gets none of
/// it journaled, in any form.
#[test]
fn an_encoded_echo_of_the_secret_is_never_journaled() {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use base64::Engine;
    let auth = format!("Bearer {TOKEN}");
    let hex: String = auth.bytes().map(|b| format!("{b:02X}")).collect();
    let forms = [
        auth.to_lowercase(),
        auth.to_uppercase(),
        STANDARD.encode(&auth),
        URL_SAFE_NO_PAD.encode(&auth),
        hex,
        auth.replace(' ', "%20"),
    ];
    // The kept start of an answer is 256 bytes: the echoes go in two bodies.
    for (n, body) in [
        "lower={auth:lower} upper={auth:upper} url={auth:url} b64={auth:b64}",
        "b64url={auth:b64url} hex={auth:hex}",
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tempfile::tempdir().unwrap();
        let rx = Receiver::start(Mode::Status(401, body.into()));
        std::fs::write(
            dir.path().join("config.toml"),
            format!(
                "[hook]\ndeadline_ms = {}\n\n[[webhook]]\nname = \"ci\"\nevents = [\"PostToolUse\"]\nurl = \"{}\"\nheaders = {{ Authorization = \"Bearer ${{SJOURNAL_WEBHOOK_TOKEN}}\" }}\n[webhook.retry]\nattempts = 50\nbackoff_ms = 20\nmax_backoff_ms = 50\n",
                support::PATIENT_MS,
                rx.url("/in")
            ),
        )
        .unwrap();
        let s = format!("wh-echo-{n}");
        let env = [("SJOURNAL_WEBHOOK_TOKEN", TOKEN)];
        let out = support::run_env(dir.path(), &["hook"], event(&s, 0).as_bytes(), &env);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        wait_until(LIMIT, || !rx.posts().is_empty(), || "no POST".into());
        rx.set_mode(Mode::Ok);
        wait_delivered(dir.path(), &s, LIMIT);
        let refused = attempts(dir.path(), &s)
            .into_iter()
            .find(|r| r.status == Some(401))
            .expect("the 401");
        let response = refused.response.unwrap();
        assert!(response.contains("[redacted]"), "{response}");
        let mut files = vec![];
        collect(dir.path(), &mut files);
        for f in files
            .iter()
            .filter(|f| f.file_name().unwrap() != "config.toml")
        {
            let bytes = std::fs::read(f).unwrap();
            for form in &forms {
                assert!(
                    !bytes.windows(form.len()).any(|w| w == form.as_bytes()),
                    "{} holds {form:?}: {response}",
                    f.display()
                );
            }
        }
    }
}
