//! Indexing shipped journals into a real PostgreSQL (`SJOURNAL_TEST_PG`; started by
//! tools/test.sh and `.ci/run`, and required in CI). Each test works in its own schema. Two
//! sessions are shipped (one across several ship runs), indexed, indexed again (nothing
//! changes: idempotent), then the schema is dropped and everything indexed again: every row of
//! every table is identical. The README's example queries return the right sessions, and a
//! tampered segment is not indexed.
#![cfg(feature = "remote")]

use crate::support;

use sjournal::journal::Root;
use sjournal::remote::index::{self, Options};
use sjournal::remote::ship::{ship_journal, NoFaults};
use sjournal::remote::{cursor, Remote};
use support::remote::*;

pub(crate) fn pg() -> Option<String> {
    match std::env::var("SJOURNAL_TEST_PG") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            assert!(
                !in_ci(),
                "CI must provide PostgreSQL (SJOURNAL_TEST_PG): see tools/servers.sh"
            );
            support::skip::whole(
                "SJOURNAL_TEST_PG is not set (no PostgreSQL test server)",
                "as root: tools/servers.sh install (PostgreSQL 15), then tools/test.sh",
            );
            None
        }
    }
}

/// The statements of the README's `sql` block, comments left out.
fn readme_sql() -> Vec<String> {
    let readme = include_str!("../README.md");
    let block = readme
        .split("```sql\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("README.md has an sql block");
    let text: String = block
        .lines()
        .map(|l| l.split("--").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    text.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

pub(crate) fn schema(tag: &str) -> String {
    bucket_name(tag).replace('-', "_")
}

/// Every row of every table, as text, in key order.
pub(crate) async fn dump(pg: &str, s: &str) -> Vec<String> {
    let c = index::connect(pg).await.unwrap();
    let mut out = Vec::new();
    for (t, cols) in [
        ("record", "host, stem, stream, seq"),
        ("session", "host, stem"),
        ("file_touch", "host, stem, stream, seq, path, op"),
        ("command", "host, stem, stream, seq"),
        ("prompt", "host, stem, stream, seq"),
        ("segment", "host, stem, stream, first_seq"),
        ("stream", "host, stem, stream"),
        ("erasure", "host, stem, stream, seq"),
    ] {
        let q = format!("SELECT t::text FROM {s}.{t} AS t ORDER BY {cols}");
        for r in c.query(&q, &[]).await.unwrap() {
            out.push(format!("{t}: {}", r.get::<_, String>(0)));
        }
    }
    out
}

async fn ship_two_sessions(remote: &Remote, dir: &std::path::Path) -> Root {
    let root = Root::new(dir.join("root"));
    let id = identity(dir);
    let cursors = cursor::dir_for(&root, remote.url());
    append(&root, "alpha", 0, 12, 300);
    ship_journal(remote, &journal(&root, "alpha"), &id, &cursors, &NoFaults)
        .await
        .unwrap();
    append(&root, "alpha", 12, 20, 300);
    ship_journal(remote, &journal(&root, "alpha"), &id, &cursors, &NoFaults)
        .await
        .unwrap();
    let mut w = sjournal::journal::Writer::open(&root, "beta", &Default::default()).unwrap();
    w.append("SessionStart", &sjournal::fold::digest::encode_event("SessionStart", r#"{"session_id":"beta","hook_event_name":"SessionStart","cwd":"/home/dev/web","source":"startup"}"#)).unwrap();
    w.append("UserPromptSubmit", &sjournal::fold::digest::encode_event("UserPromptSubmit", r#"{"session_id":"beta","hook_event_name":"UserPromptSubmit","prompt":"fix the login page styles"}"#)).unwrap();
    // Paths as a real host sends them: absolute.
    w.append("PostToolUse", &sjournal::fold::digest::encode_event("PostToolUse", r#"{"session_id":"beta","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/home/dev/web/src/main.rs","old_string":"a","new_string":"b"},"tool_use_id":"r1"}"#)).unwrap();
    w.append(
        "SessionEnd",
        &sjournal::fold::digest::encode_event(
            "SessionEnd",
            r#"{"session_id":"beta","hook_event_name":"SessionEnd","reason":"logout"}"#,
        ),
    )
    .unwrap();
    drop(w);
    ship_journal(remote, &journal(&root, "beta"), &id, &cursors, &NoFaults)
        .await
        .unwrap();
    root
}

#[tokio::test]
async fn idempotent_and_rebuilt_identically_with_working_queries() {
    let Some(pg) = pg() else { return };
    let d = tempfile::tempdir().unwrap();
    let remote = Remote::open(&format!("file://{}", d.path().join("bucket").display())).unwrap();
    let root = ship_two_sessions(&remote, d.path()).await;
    let s = schema("ix");
    let mut opts = Options {
        schema: s.clone(),
        rebuild: false,
        keys: vec![verifier_key(d.path())],
    };
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!((r.streams, r.segments_indexed, r.records), (2, 3, 24));
    let first = dump(&pg, &s).await;
    assert!(first.len() > 24);

    // Again: nothing new, nothing changes.
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert_eq!((r.segments_indexed, r.segments_already), (0, 3));
    assert_eq!(dump(&pg, &s).await, first);

    // More records, shipped and indexed incrementally, equal a rebuild from scratch.
    append(&root, "alpha", 20, 26, 300);
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert_eq!(r.segments_indexed, 0, "not shipped yet");
    opts.rebuild = true;
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert_eq!(r.segments_indexed, 3);
    assert_eq!(
        dump(&pg, &s).await,
        first,
        "drop and rebuild gives identical rows"
    );

    // The README's example queries, as the README has them: each runs; the first finds the
    // session that touched src/main.rs by its absolute path.
    let c = index::connect(&pg).await.unwrap();
    let q = |sql: &str| sql.replace("sjournal.", &format!("{s}."));
    let readme = readme_sql();
    assert!(readme.len() >= 2, "{readme:?}");
    for sql in &readme {
        c.query(&q(sql), &[])
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let rows = c.query(&q(&readme[0]), &[]).await.unwrap();
    let sessions: Vec<String> = rows.iter().map(|r| r.get(1)).collect();
    assert_eq!(sessions, vec!["beta".to_string()], "{}", readme[0]);
    let rows = c
        .query(&q("SELECT stem, seq, command, exit_code FROM sjournal.command WHERE command LIKE 'curl %' ORDER BY stem, seq"), &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r.get::<_, Option<i32>>(3) == Some(6)));
    let rows = c
        .query(&q("SELECT DISTINCT stem FROM sjournal.prompt WHERE tsv @@ plainto_tsquery('english', 'login page')"), &[])
        .await
        .unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>(),
        vec!["beta"]
    );
    let rows = c
        .query(&q("SELECT stem, cwd, end_reason, records, state_hash FROM sjournal.session WHERE ended IS NOT NULL"), &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].get::<_, Option<String>>(1).as_deref(),
        Some("/home/dev/web")
    );
    assert_eq!(
        rows[0].get::<_, Option<String>>(2).as_deref(),
        Some("logout")
    );
    // The session row's state hash is the fold's, as `sjournal state` computes it locally.
    let reader = sjournal::journal::JournalReader::open(&journal(&root, "beta"), None).unwrap();
    let state = sjournal::fold::fold(
        reader
            .records()
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| sjournal::fold::RecordView::from(&r)),
    );
    assert_eq!(rows[0].get::<_, String>(4), state.state_hash().to_hex());
    c.batch_execute(&format!("DROP SCHEMA {s} CASCADE"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_tampered_segment_is_not_indexed() {
    let Some(pg) = pg() else { return };
    let d = tempfile::tempdir().unwrap();
    let remote = Remote::with_store(
        std::sync::Arc::new(object_store::memory::InMemory::new()),
        "p",
    );
    ship_two_sessions(&remote, d.path()).await;
    let key = main_loc("alpha").segment_key(13);
    let o = remote.get(&key).await.unwrap().unwrap();
    let mut b = o.bytes.to_vec();
    b[70] ^= 1;
    let path = remote.path(&key);
    use object_store::ObjectStoreExt;
    remote.store().put(&path, b.into()).await.unwrap();
    let s = schema("tamper");
    let opts = Options {
        schema: s.clone(),
        rebuild: false,
        keys: vec![],
    };
    let r = index::index(&remote, &pg, &opts).await.unwrap();
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert!(
        r.findings[0].contains("seg/00000000000000000013"),
        "{:?}",
        r.findings
    );
    assert_eq!(r.segments_indexed, 2, "alpha's first segment and beta's");
    let c = index::connect(&pg).await.unwrap();
    let n: i64 = c
        .query_one(
            &format!("SELECT count(*) FROM {s}.record WHERE stem = 'alpha'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 12);
    c.batch_execute(&format!("DROP SCHEMA {s} CASCADE"))
        .await
        .unwrap();
}
