//! The remote commands as a user runs them: `ship`, `verify --remote`, `fetch` and `index`
//! through the binary, on a directory destination and on the real S3 server (credentials and
//! endpoint through the standard AWS environment variables). The fetched root works with
//! `verify`, `replay`, `report` and `export` unchanged, giving what the original gives. A
//! config with `ship_on_session_end` makes the hook start a detached `ship` after SessionEnd
//! (and the hook's stdout is still only the host's JSON); a spooled SessionEnd is merged and
//! shipped with its journal. Exit codes: 0 clean, 1 findings.
#![cfg(feature = "remote")]

use crate::support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use support::remote::*;

fn sj(root: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut c = support::spawnable(root);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn hook(root: &Path, json: &str) -> Output {
    support::run(root, &["hook"], json.as_bytes())
}

/// Destinations with the environment their commands need.
async fn destinations(dir: &Path) -> Vec<(String, Vec<(&'static str, String)>)> {
    let mut v = vec![(format!("file://{}", dir.join("bucket").display()), vec![])];
    if let (Some((url, k, s)), Some(remote)) = (s3_env(), s3_remote("cli").await) {
        let env = vec![
            ("AWS_ACCESS_KEY_ID", k),
            ("AWS_SECRET_ACCESS_KEY", s),
            ("AWS_ENDPOINT_URL", url),
            ("AWS_REGION", "us-east-1".to_string()),
        ];
        v.push((remote.url().to_owned(), env));
    }
    v
}

#[tokio::test]
async fn ship_verify_fetch_then_the_usual_tools_work_on_the_copy() {
    let d = tempfile::tempdir().unwrap();
    for (n, (url, env)) in destinations(d.path()).await.into_iter().enumerate() {
        let root = d.path().join(format!("root{n}"));
        let r = sjournal::journal::Root::new(&root);
        append(&r, "sess-a", 0, 30, 500);
        append(&r, "sess-b", 0, 5, 500);
        let o = sj(&root, &["ship", "--all", "--to", &url], &env);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("remote has seq 1..=30"),
            "{}",
            text(&o)
        );
        let host = std::fs::read_to_string(root.join("remote/host-id")).unwrap();
        let host = host.trim();
        let pubkey = root.join("remote/host.key.pub");
        assert!(pubkey.exists());

        let o = sj(
            &root,
            &[
                "verify",
                "--remote",
                &url,
                "--pubkey",
                pubkey.to_str().unwrap(),
            ],
            &env,
        );
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("[local: in sync]"),
            "{}",
            text(&o)
        );

        let into = d.path().join(format!("fetched{n}"));
        let o = sj(
            &root,
            &["fetch", &url, "--into", into.to_str().unwrap()],
            &env,
        );
        assert!(o.status.success(), "{}", text(&o));
        for s in ["sess-a", "sess-b"] {
            let a = std::fs::read(root.join(format!("sessions/{s}.sjl"))).unwrap();
            let b = std::fs::read(into.join(format!("sessions/{s}.sjl"))).unwrap();
            assert!(a == b, "{s} differs after fetch");
        }
        for args in [
            vec!["verify", "--all"],
            vec!["replay", "--session", "sess-a", "--json"],
            vec!["export", "--session", "sess-a"],
        ] {
            let here = sj(&root, &args, &[]);
            let there = sj(&into, &args, &[]);
            assert!(there.status.success(), "{}", text(&there));
            let norm = |o: &Output, p: &Path| {
                String::from_utf8_lossy(&o.stdout).replace(p.to_str().unwrap(), "ROOT")
            };
            assert_eq!(norm(&here, &root), norm(&there, &into), "{args:?}");
        }
        let html = d.path().join(format!("r{n}.html"));
        let o = sj(
            &into,
            &[
                "report",
                "--session",
                "sess-a",
                "--html",
                html.to_str().unwrap(),
            ],
            &[],
        );
        assert!(o.status.success() && html.exists(), "{}", text(&o));

        // A scope down to one session.
        let one = format!("{url}/v1/hosts/{host}/sessions/sess-b");
        let o = sj(&root, &["verify", "--remote", &one], &env);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("1 remote journal(s) verified"),
            "{}",
            text(&o)
        );

        // Bit rot locally: ship exits 1 with DIVERGED; verify --remote names it too.
        let p = root.join("sessions/sess-b.sjl");
        let mut b = std::fs::read(&p).unwrap();
        let at = b.len() / 2;
        b[at] ^= 0x40;
        std::fs::write(&p, &b).unwrap();
        let o = sj(&root, &["ship", "--session", "sess-b", "--to", &url], &env);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("DIVERGED"),
            "{}",
            text(&o)
        );
        let o = sj(&root, &["verify", "--remote", &url], &env);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("diverged at seq"),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn errors_are_exit_2_with_a_clear_message() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    append(&sjournal::journal::Root::new(&root), "s", 0, 2, 100);
    let o = sj(&root, &["ship", "--session", "s"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no destination"),
        "{}",
        text(&o)
    );
    let o = sj(&root, &["ship", "--session", "s", "--to", "ftp://x"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("s3://BUCKET/PREFIX"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_hook_ships_after_session_end_when_configured() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    let bucket = d.path().join("bucket");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("config.toml"),
        format!(
            "[remote]\nto = \"file://{}\"\nship_on_session_end = true\nhost_id = \"ci-host\"\n",
            bucket.display()
        ),
    )
    .unwrap();
    let o = hook(
        &root,
        r#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !bucket.exists(),
        "nothing is shipped before the session ends"
    );
    let o = hook(
        &root,
        r#"{"session_id":"s1","hook_event_name":"SessionEnd","reason":"exit"}"#,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("started `sjournal ship`"),
        "{}",
        text(&o)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.trim().is_empty() || stdout.trim().starts_with('{'),
        "{stdout}"
    );
    // The detached shipper runs on its own; wait (bounded) for its segment.
    let seg = bucket.join("v1/hosts/ci-host/sessions/s1/seg/00000000000000000001");
    let until = Instant::now() + Duration::from_secs(60);
    while !seg.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        seg.exists(),
        "the detached ship did not run: {:?}",
        std::fs::read_to_string(root.join("remote/ship.log"))
    );
    let journal = std::fs::read(root.join("sessions/s1.sjl")).unwrap();
    let mut shipped = std::fs::read(bucket.join("v1/hosts/ci-host/sessions/s1/header")).unwrap();
    shipped.extend(std::fs::read(&seg).unwrap());
    assert_eq!(shipped, journal);
}

#[test]
fn without_the_setting_the_hook_never_ships() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("config.toml"),
        "[remote]\nto = \"file:///nonexistent-sj\"\n",
    )
    .unwrap();
    let o = hook(
        &root,
        r#"{"session_id":"s1","hook_event_name":"SessionEnd","reason":"exit"}"#,
    );
    assert!(o.status.success());
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("ship"),
        "{}",
        text(&o)
    );
    assert!(!root.join("remote").exists());
}

/// A SessionEnd spooled because the session's lock was held is shipped all the same: `ship`
/// merges the pending spool into the journal first, as every reader does.
#[test]
fn ship_merges_spooled_events_first() {
    use sjournal::format::payload::encode_event_json;
    use sjournal::journal::{Root, WriterOptions};
    use sjournal::session::{keep_elsewhere, Landed};
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    let bucket = d.path().join("bucket");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("config.toml"),
        "[remote]\nhost_id = \"ci-host\"\n",
    )
    .unwrap();
    let o = hook(
        &root,
        r#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#,
    );
    assert!(o.status.success(), "{}", text(&o));
    let end =
        encode_event_json(r#"{"session_id":"s1","hook_event_name":"SessionEnd","reason":"exit"}"#);
    let landed = keep_elsewhere(
        &Root::new(&root),
        "s1",
        &[("SessionEnd", &end)],
        &[],
        "the session's lock was held",
        None,
        &WriterOptions::default(),
    )
    .unwrap();
    assert!(matches!(landed, Landed::Spooled { .. }), "{landed:?}");
    let url = format!("file://{}", bucket.display());
    let o = sj(&root, &["ship", "--session", "s1", "--to", &url], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let kinds: Vec<String> = support::records(&root, "s1")
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert!(
        kinds.ends_with(&["sjournal.spool-merge".into(), "SessionEnd".into()]),
        "{kinds:?}"
    );
    // One segment: the whole journal, the merged SessionEnd included.
    let dir = bucket.join("v1/hosts/ci-host/sessions/s1");
    let mut shipped = std::fs::read(dir.join("header")).unwrap();
    shipped.extend(std::fs::read(dir.join("seg/00000000000000000001")).unwrap());
    let journal = std::fs::read(root.join("sessions/s1.sjl")).unwrap();
    assert!(
        shipped == journal,
        "shipped {} bytes of {}",
        shipped.len(),
        journal.len()
    );
}
