//! Search over fixture journals (feature `search`). Two projects: `proj` (a git work tree)
//! with two sessions, and `other` with one. Every query form finds its record and cites it
//! with the seq and hash the journal itself has; the default scope is the current project,
//! `--all` every session, `--session` one; a session the project's memory journal lists
//! belongs to the project wherever its cwd was. An index caught up record by record ranks
//! exactly like one rebuilt; damaged, rescued and pending (spooled) records are found and
//! marked; a journal that changed other than by growing rebuilds the index; only reviewed
//! memory is searched, never a pending proposal; the index's files are the user's alone; and
//! the hook keeps an existing index current after a Stop.
#![cfg(feature = "search")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support;
use serde_json::{json, Value};
use sjournal::format::payload::MemoryOp;
use sjournal::journal::{JournalReader, Root, Writer, WriterOptions};
use sjournal::memory::Scope as MemScope;
use sjournal::search::{self, DocKind, Hit, Request, Scope, Status};

const T0: i64 = 1_780_000_000_000_000_000;

struct World {
    _dir: tempfile::TempDir,
    root: Root,
    proj: String,
    other: String,
}

fn ev(v: Value) -> (String, Vec<u8>) {
    support::event(&v.to_string())
}

fn world() -> World {
    let (dir, root) = support::temp_root();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::create_dir_all(proj.join("src")).unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    let (proj, other) = (canon(&proj), canon(&other));
    let p = proj.as_str();
    support::write_journal(
        &root,
        "s1",
        &[
            ev(
                json!({"hook_event_name":"SessionStart","session_id":"s1","cwd":p,"source":"startup"}),
            ),
            ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":"s1","cwd":p,"prompt":"fix the flaky migration in the loader"}),
            ),
            ev(
                json!({"hook_event_name":"PostToolUseFailure","session_id":"s1","cwd":p,"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"cargo test migration_seven"},"error":"Exit code 101\nthread 'main' panicked: migration seven failed: duplicate column"}),
            ),
            ev(
                json!({"hook_event_name":"PostToolUse","session_id":"s1","cwd":p,"tool_name":"Edit","tool_use_id":"t2","tool_input":{"file_path":format!("{p}/src/loader.rs"),"old_string":"a","new_string":"b"},"tool_response":{"filePath":format!("{p}/src/loader.rs")}}),
            ),
            ev(
                json!({"hook_event_name":"PostToolUse","session_id":"s1","cwd":p,"tool_name":"Bash","tool_use_id":"t3","tool_input":{"command":"cargo test migration_seven"},"tool_response":{"stdout":"test result: ok. 12 passed","stderr":"","interrupted":false}}),
            ),
            ev(
                json!({"hook_event_name":"Stop","session_id":"s1","cwd":p,"last_assistant_message":"The migration now drops the duplicate column before it runs."}),
            ),
        ],
        T0,
    );
    support::write_journal(
        &root,
        "s2",
        &[
            ev(
                json!({"hook_event_name":"SessionStart","session_id":"s2","cwd":p,"source":"startup"}),
            ),
            ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":"s2","cwd":p,"prompt":"write the changelog for the loader release"}),
            ),
            ev(
                json!({"hook_event_name":"PostToolUse","session_id":"s2","cwd":p,"tool_name":"TodoWrite","tool_use_id":"t4","tool_input":{"todos":[{"content":"draft the changelog","status":"in_progress","activeForm":"x"},{"content":"tag the release","status":"pending","activeForm":"y"}]},"tool_response":{}}),
            ),
            ev(
                json!({"hook_event_name":"PostCompact","session_id":"s2","cwd":p,"trigger":"auto","compact_summary":"The user wants a changelog; the loader release is next."}),
            ),
        ],
        T0 + 100 * 1_000_000_000,
    );
    let o = other.as_str();
    support::write_journal(
        &root,
        "x1",
        &[
            ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":"x1","cwd":o,"prompt":"the migration of another project"}),
            ),
            ev(
                json!({"hook_event_name":"PostToolUse","session_id":"x1","cwd":o,"tool_name":"Edit","tool_use_id":"t9","tool_input":{"file_path":format!("{o}/src/loader.rs"),"old_string":"a","new_string":"b"},"tool_response":{}}),
            ),
        ],
        T0 + 200 * 1_000_000_000,
    );
    World {
        _dir: dir,
        root,
        proj,
        other,
    }
}

fn req(w: &World, q: &str) -> Request {
    Request {
        query: q.into(),
        scope: Scope::Project(w.proj.clone()),
        session: None,
        kinds: Vec::new(),
        since: None,
        until: None,
        limit: 20,
    }
}

fn run(w: &World, r: &Request) -> Vec<Hit> {
    search::search(&w.root, r, &search::Options::default())
        .unwrap()
        .hits
}

fn find(w: &World, q: &str) -> Vec<(String, u64)> {
    run(w, &req(w, q))
        .into_iter()
        .map(|h| (h.session, h.seq.unwrap_or(0)))
        .collect()
}

/// Seq → hash of a journal, as the journal itself has them.
fn hashes(path: &Path) -> BTreeMap<u64, String> {
    let r = JournalReader::open(path, None).unwrap();
    r.records()
        .unwrap()
        .flatten()
        .map(|rec| (rec.seq, rec.hash.to_hex()))
        .collect()
}

fn sorted(mut v: Vec<(String, u64)>) -> Vec<(String, u64)> {
    v.sort();
    v
}

fn s(session: &str, seq: u64) -> (String, u64) {
    (session.to_owned(), seq)
}

#[test]
fn every_query_form_finds_its_record() {
    let w = world();
    // A word; ranked: the failure says it twice.
    let m = find(&w, "migration");
    assert_eq!(m.first(), Some(&s("s1", 3)), "{m:?}");
    assert!(m.contains(&s("s1", 2)) && m.contains(&s("s1", 6)), "{m:?}");
    // Every word must match.
    assert_eq!(
        sorted(find(&w, "migration duplicate")),
        vec![s("s1", 3), s("s1", 6)]
    );
    // A phrase (and a snake_case word is one).
    assert_eq!(
        sorted(find(&w, "\"duplicate column\"")),
        vec![s("s1", 3), s("s1", 6)]
    );
    assert_eq!(find(&w, "\"column duplicate\""), vec![]);
    assert_eq!(find(&w, "migration_seven failed:no"), vec![s("s1", 5)]);
    // Not.
    assert_eq!(find(&w, "migration -duplicate -seven"), vec![s("s1", 2)]);
    // A project-relative path matches the absolute one the journal holds, so does the
    // absolute one; and a path in a prompt is found as text.
    assert_eq!(find(&w, "file:src/loader.rs"), vec![s("s1", 4)]);
    assert_eq!(
        find(&w, &format!("file:{}/src/loader.rs", w.proj)),
        vec![s("s1", 4)]
    );
    assert_eq!(find(&w, "file:loader.rs"), vec![s("s1", 4)]);
    assert_eq!(find(&w, "file:src/main.rs"), vec![]);
    // Tool (any case), failed, kind, status.
    assert_eq!(sorted(find(&w, "tool:bash")), vec![s("s1", 3), s("s1", 5)]);
    assert_eq!(find(&w, "tool:Bash failed:yes"), vec![s("s1", 3)]);
    assert_eq!(find(&w, "kind:failure"), vec![s("s1", 3)]);
    assert_eq!(find(&w, "changelog kind:todo"), vec![s("s2", 3)]);
    assert_eq!(find(&w, "changelog kind:compact"), vec![s("s2", 4)]);
    assert_eq!(find(&w, "status:damaged"), vec![]);
    // Filters only: newest first.
    assert_eq!(find(&w, "kind:prompt"), vec![s("s2", 2), s("s1", 2)]);
    // --kind, --session, --since/--until.
    let mut r = req(&w, "changelog");
    r.kinds = vec![DocKind::Prompt];
    assert_eq!(run(&w, &r).len(), 1);
    let mut r = req(&w, "loader");
    r.session = Some("s2".into());
    assert!(run(&w, &r).iter().all(|h| h.session == "s2"));
    let mut r = req(&w, "loader");
    r.since = Some(T0 + 50 * 1_000_000_000);
    assert!(run(&w, &r).iter().all(|h| h.session == "s2"), "since");
    let mut r = req(&w, "loader");
    r.until = Some(T0 + 50 * 1_000_000_000);
    assert!(run(&w, &r).iter().all(|h| h.session == "s1"), "until");
    // A mistake is named.
    let e = search::search(&w.root, &req(&w, "failed:maybe"), &Default::default()).unwrap_err();
    assert!(e.to_string().contains("failed: takes yes or no"), "{e}");
}

#[test]
fn every_hit_cites_the_record_the_journal_has() {
    let w = world();
    let mut r = req(&w, "loader");
    r.scope = Scope::All;
    let hits = run(&w, &r);
    assert!(hits.len() >= 4, "{hits:?}");
    for h in &hits {
        let path = w.root.session(&h.session).unwrap().journal;
        let journal = hashes(&path);
        let seq = h.seq.expect("a journal record has a seq");
        assert_eq!(h.hash.as_ref(), journal.get(&seq), "{h:?}");
        assert_eq!(h.status, Status::Journal);
        assert!(h.ts_unix_ns >= T0);
        assert!(!h.snippet.is_empty());
        for &(a, b) in &h.highlights {
            assert_eq!(h.snippet[a..b].to_lowercase(), "loader", "{h:?}");
        }
    }
    let failure = run(&w, &req(&w, "panicked")).remove(0);
    assert_eq!(failure.kind, DocKind::Failure);
    assert_eq!(failure.record_kind, "PostToolUseFailure");
    assert_eq!(failure.tool.as_deref(), Some("Bash"));
    assert!(failure.failed);
}

#[test]
fn the_default_scope_is_the_project_all_is_every_session() {
    let w = world();
    let sessions = |r: &Request| -> Vec<String> {
        let mut v: Vec<String> = run(&w, r).into_iter().map(|h| h.session).collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(sessions(&req(&w, "migration")), vec!["s1"]);
    let mut all = req(&w, "migration");
    all.scope = Scope::All;
    assert_eq!(sessions(&all), vec!["s1", "x1"]);
    let mut other = req(&w, "migration");
    other.scope = Scope::Project(w.other.clone());
    assert_eq!(sessions(&other), vec!["x1"]);
    // A session of the other project is not found by naming it from this one.
    let mut named = req(&w, "migration");
    named.session = Some("x1".into());
    assert!(run(&w, &named).is_empty());
}

#[test]
fn a_session_the_project_memory_journal_lists_is_the_projects() {
    let w = world();
    // x1 ran in `other`, but the hook (with the host's project dir) filed it under `proj`.
    let op = MemoryOp {
        op: "session".into(),
        session: Some("x1".into()),
        ..Default::default()
    };
    sjournal::memory::ops::apply(
        &w.root,
        &MemScope::Project(w.proj.clone()),
        &[op],
        &WriterOptions::default(),
    )
    .unwrap();
    let got: Vec<String> = run(&w, &req(&w, "another project"))
        .into_iter()
        .map(|h| h.session)
        .collect();
    assert_eq!(got, vec!["x1"]);
}

/// The index filters a project scope by its sessions, or by the sessions it leaves out when
/// those are fewer (and the default kinds by the one left out, `call`): the same hits either
/// way, whichever project has more sessions.
#[test]
fn a_scope_finds_the_same_whether_its_sessions_or_the_others_are_fewer() {
    let w = world();
    let sessions = |r: &Request| -> Vec<String> {
        let mut v: Vec<String> = run(&w, r).into_iter().map(|h| h.session).collect();
        v.sort();
        v.dedup();
        v
    };
    let mut other = req(&w, "migration");
    other.scope = Scope::Project(w.other.clone());
    // `proj` has two sessions, `other` one: each scope is filtered by the sessions it leaves
    // out.
    assert_eq!(sessions(&req(&w, "migration")), vec!["s1"]);
    assert_eq!(sessions(&other), vec!["x1"]);
    // `other` gets four: `proj`'s scope is now filtered by its own sessions.
    for (i, id) in ["x2", "x3", "x4"].into_iter().enumerate() {
        support::write_journal(
            &w.root,
            id,
            &[ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":id,"cwd":w.other,"prompt":"one more migration over there"}),
            )],
            T0 + (300 + i as i64) * 1_000_000_000,
        );
    }
    assert_eq!(sessions(&req(&w, "migration")), vec!["s1"]);
    assert_eq!(sessions(&other), vec!["x1", "x2", "x3", "x4"]);
    // A tool call as it started (kind `call`) is found only when asked for.
    let p = w.proj.as_str();
    support::write_journal(
        &w.root,
        "s3",
        &[ev(
            json!({"hook_event_name":"PreToolUse","session_id":"s3","cwd":p,"tool_name":"Bash","tool_use_id":"t7","tool_input":{"command":"cargo run --bin wombat"}}),
        )],
        T0 + 400 * 1_000_000_000,
    );
    let kinds = |kinds: Vec<DocKind>| -> Vec<DocKind> {
        let mut r = req(&w, "wombat");
        r.kinds = kinds;
        run(&w, &r).into_iter().map(|h| h.kind).collect()
    };
    assert_eq!(kinds(Vec::new()), vec![]);
    assert_eq!(kinds(vec![DocKind::Call]), vec![DocKind::Call]);
    assert_eq!(
        kinds(vec![DocKind::Call, DocKind::Tool, DocKind::Prompt]),
        vec![DocKind::Call]
    );
    assert_eq!(kinds(DocKind::ALL.to_vec()), vec![DocKind::Call]);
}

fn json_of(hits: &[Hit]) -> String {
    serde_json::to_string(hits).unwrap()
}

#[test]
fn an_index_caught_up_record_by_record_ranks_exactly_like_a_rebuilt_one() {
    let w = world();
    let queries = [
        "migration",
        "loader",
        "the",
        "kind:prompt",
        "file:loader.rs",
        "changelog release",
        "\"the loader\"",
    ];
    let mut all: Vec<Request> = queries.iter().map(|q| req(&w, q)).collect();
    all.extend(queries.iter().map(|q| {
        let mut r = req(&w, q);
        r.scope = Scope::All;
        r
    }));
    // Catch up after every few records: many small segments.
    for i in 0..12u64 {
        let p = w.proj.as_str();
        let mut wr = Writer::open(&w.root, "s3", &WriterOptions::default()).unwrap();
        let recs: Vec<(String, Vec<u8>)> = (0..3)
            .map(|k| {
                ev(
                    json!({"hook_event_name":"UserPromptSubmit","session_id":"s3","cwd":p,
                    "prompt": format!("round {i} step {k}: the loader migration again")}),
                )
            })
            .collect();
        let items: Vec<(&str, &[u8])> = recs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect();
        wr.append_batch_at(T0 + (300 + i as i64) * 1_000_000_000, &items)
            .unwrap();
        drop(wr);
        search::update(&w.root, false, None).unwrap();
    }
    let before: Vec<String> = all.iter().map(|r| json_of(&run(&w, r))).collect();
    let u = search::update(&w.root, true, None).unwrap();
    assert!(u.rebuilt.is_some());
    let after: Vec<String> = all.iter().map(|r| json_of(&run(&w, r))).collect();
    assert_eq!(before, after);
    // And again from nothing at all.
    std::fs::remove_dir_all(w.root.dir().join("search")).unwrap();
    let fresh: Vec<String> = all.iter().map(|r| json_of(&run(&w, r))).collect();
    assert_eq!(before, fresh);
}

#[test]
fn damaged_rescued_and_pending_records_are_found_and_marked() {
    let w = world();
    search::update(&w.root, false, None).unwrap();
    let p = w.proj.as_str();
    support::write_journal(
        &w.root,
        "d",
        &[
            ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":"d","cwd":p,"prompt":"alpha before the damage"}),
            ),
            ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":"d","cwd":p,"prompt":"bravo is the damaged one"}),
            ),
            ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":"d","cwd":p,"prompt":"charlie after the damage"}),
            ),
        ],
        T0 + 400 * 1_000_000_000,
    );
    // A bit flipped in bravo's text: its CRC fails, charlie follows.
    let journal = w.root.session("d").unwrap().journal;
    let before = hashes(&journal);
    let mut bytes = std::fs::read(&journal).unwrap();
    let at = bytes
        .windows(5)
        .position(|x| x == b"bravo")
        .expect("bravo in the journal");
    bytes[at + 4] ^= 0x01; // "bravo" -> "bravn"
    std::fs::write(&journal, &bytes).unwrap();
    // A rescued record, and a spooled one.
    let mut rescue = Writer::open_rescue(&w.root, "d", &WriterOptions::default()).unwrap();
    let (k, v) = ev(
        json!({"hook_event_name":"UserPromptSubmit","session_id":"d","cwd":p,"prompt":"delta went to the rescue journal"}),
    );
    rescue
        .append_batch_at(T0 + 401 * 1_000_000_000, &[(&k, &v)])
        .unwrap();
    drop(rescue);
    let (k, v) = ev(
        json!({"hook_event_name":"UserPromptSubmit","session_id":"d","cwd":p,"prompt":"echo is still spooled"}),
    );
    sjournal::session::keep_elsewhere(
        &w.root,
        "d",
        &[(&k, &v)],
        &[Some(T0 + 402 * 1_000_000_000)],
        "test",
        None,
        &WriterOptions::default(),
    )
    .unwrap();

    let one = |q: &str| -> Hit {
        let h = run(&w, &req(&w, q));
        assert_eq!(h.len(), 1, "{q}: {h:?}");
        h.into_iter().next().unwrap()
    };
    let alpha = one("alpha");
    assert_eq!(alpha.status, Status::Journal);
    let bravo = one("bravn");
    assert_eq!(bravo.status, Status::Damaged);
    assert_eq!(bravo.seq, Some(2));
    let charlie = one("charlie");
    assert_eq!(charlie.status, Status::Damaged);
    assert_eq!(charlie.seq, Some(3));
    assert_eq!(
        charlie.hash.as_ref(),
        before.get(&3),
        "charlie's frame is intact"
    );
    let delta = one("delta");
    assert_eq!(delta.status, Status::Rescued);
    assert_eq!(delta.journal, Some("rescue"));
    let rescue_path = w.root.session("d").unwrap().rescue;
    assert_eq!(
        delta.hash.as_ref(),
        hashes(&rescue_path).get(&delta.seq.unwrap())
    );
    let echo = one("echo");
    assert_eq!(echo.status, Status::Pending);
    assert_eq!((echo.seq, echo.hash.as_deref()), (None, None));
    assert!(echo.spool_file.is_some());
    assert_eq!(echo.ts_unix_ns, T0 + 402 * 1_000_000_000);
    assert_eq!(
        run(&w, &req(&w, "status:damaged")).len(),
        2,
        "status: selects them"
    );
}

#[test]
fn a_journal_that_changed_other_than_by_growing_rebuilds_the_index() {
    let w = world();
    search::update(&w.root, false, None).unwrap();
    assert_eq!(find(&w, "changelog kind:prompt"), vec![s("s2", 2)]);
    // s2 replaced by another history, shorter (a copy of another journal put in its place).
    let journal = w.root.session("s2").unwrap().journal;
    let (_elsewhere, other_root) = support::temp_root();
    support::write_journal(
        &other_root,
        "s2",
        &[ev(
            json!({"hook_event_name":"UserPromptSubmit","session_id":"s2","cwd":w.proj,"prompt":"a wholly different history"}),
        )],
        T0,
    );
    std::fs::copy(other_root.session("s2").unwrap().journal, &journal).unwrap();
    let u = search::update(&w.root, false, None).unwrap();
    assert!(u.rebuilt.is_some(), "{u:?}");
    assert_eq!(find(&w, "changelog kind:prompt"), vec![]);
    assert_eq!(find(&w, "wholly"), vec![s("s2", 1)]);
    // Gone altogether.
    std::fs::remove_file(&journal).unwrap();
    let u = search::update(&w.root, false, None).unwrap();
    assert!(
        u.rebuilt.as_deref().is_some_and(|r| r.contains("gone")),
        "{u:?}"
    );
    assert_eq!(find(&w, "wholly"), vec![]);
}

#[test]
fn only_reviewed_memory_is_searched() {
    let w = world();
    let scope = MemScope::Project(w.proj.clone());
    let opts = WriterOptions::default();
    let accepted =
        sjournal::memory::ops::propose("always run the zebra check", "explicit", None, None, None);
    let id = accepted.id.clone();
    let pending =
        sjournal::memory::ops::propose("pending giraffe rule", "relayed", None, None, None);
    sjournal::memory::ops::apply(&w.root, &scope, &[accepted, pending], &opts).unwrap();
    sjournal::memory::ops::apply_one(
        &w.root,
        &scope,
        sjournal::memory::ops::on_item("accept", &id, None, None),
        &opts,
    )
    .unwrap();
    let hits = run(&w, &req(&w, "zebra"));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].kind, DocKind::Memory);
    assert_eq!(hits[0].session, scope.journal_id());
    let journal = w.root.session(&scope.journal_id()).unwrap().journal;
    assert_eq!(
        hits[0].hash.as_ref(),
        hashes(&journal).get(&hits[0].seq.unwrap())
    );
    assert!(run(&w, &req(&w, "giraffe")).is_empty());
    let mut all = req(&w, "giraffe");
    all.scope = Scope::All;
    assert!(run(&w, &all).is_empty());
}

#[test]
fn the_index_is_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let w = world();
    search::update(&w.root, false, None).unwrap();
    search::update(&w.root, true, None).unwrap();
    let dir = w.root.dir().join("search");
    let mut seen = 0;
    let mut stack: Vec<PathBuf> = vec![dir];
    while let Some(d) = stack.pop() {
        let m = std::fs::symlink_metadata(&d).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o700, "{}", d.display());
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                seen += 1;
                assert_eq!(m.permissions().mode() & 0o777, 0o600, "{}", p.display());
            }
        }
    }
    assert!(seen > 3);
}

#[test]
fn concurrent_catch_ups_do_not_corrupt_the_index() {
    let w = world();
    let p = w.proj.clone();
    let root = w.root.clone();
    let writer = std::thread::spawn(move || {
        for i in 0..20 {
            let (k, v) = ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":"c","cwd":p,"prompt":format!("concurrent prompt {i}")}),
            );
            let mut wr = Writer::open(&root, "c", &WriterOptions::default()).unwrap();
            wr.append(&k, &v).unwrap();
        }
    });
    let searchers: Vec<_> = (0..3)
        .map(|_| {
            let root = w.root.clone();
            std::thread::spawn(move || {
                for _ in 0..5 {
                    search::update(&root, false, None).unwrap();
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for s in searchers {
        s.join().unwrap();
    }
    let mut r = req(&w, "concurrent");
    r.limit = 100;
    let mut seqs: Vec<u64> = run(&w, &r).into_iter().map(|h| h.seq.unwrap()).collect();
    seqs.sort();
    assert_eq!(seqs, (1..=20).collect::<Vec<_>>());
    let caught_up = json_of(&run(&w, &r));
    search::update(&w.root, true, None).unwrap();
    assert_eq!(caught_up, json_of(&run(&w, &r)));
}

#[test]
fn the_command_line_search_and_show() {
    let w = world();
    let cmd = |args: &[&str]| {
        let mut c = support::sjournal(w.root.dir());
        c.current_dir(&w.proj).args(args);
        c.output().unwrap()
    };
    let out = cmd(&["search", "panicked", "column"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("failure Bash"), "{text}");
    assert!(text.contains("session s1 seq 3"), "{text}");
    assert!(!text.contains('\x1b'), "no colour off a terminal: {text}");
    assert!(
        text.contains("sjournal show --session s1 --seq 3"),
        "{text}"
    );
    // --json: the hit with its full hash and time.
    let out = cmd(&["search", "--json", "kind:failure"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let journal = hashes(&w.root.session("s1").unwrap().journal);
    assert_eq!(v["hash"].as_str(), journal.get(&3).map(String::as_str));
    assert_eq!(v["seq"], 3);
    assert_eq!(v["kind"], "failure");
    assert_eq!(v["status"], "journal");
    assert!(v["ts"].as_str().unwrap().starts_with("2026-"));
    // The project from --project; --all; nothing found: exit 1.
    let out = cmd(&["search", "--project", &w.other, "migration", "--json"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    let out = cmd(&["search", "--all", "--kind", "prompt", "migration", "--json"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    let out = cmd(&["search", "nothingmatchesthis"]);
    assert_eq!(out.status.code(), Some(1));
    let out = cmd(&["search", "kind:nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("kind:nope is not a kind"));
    let out = cmd(&["search", "--since", "yesterdayish", "x"]);
    assert_eq!(out.status.code(), Some(2));
    // show --seq: the record and its neighbours, the record marked.
    let out = cmd(&["show", "--session", "s1", "--seq", "3", "--context", "1"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[1].starts_with('>') && lines[1].contains("PostToolUseFailure"),
        "{text}"
    );
    assert!(lines[0].contains("UserPromptSubmit") && lines[2].contains("PostToolUse"));
    let out = cmd(&[
        "show",
        "--session",
        "s1",
        "--seq",
        "3",
        "--context",
        "0",
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["shown"], true);
    assert_eq!(v["hash"].as_str(), journal.get(&3).map(String::as_str));
    let out = cmd(&["show", "--session", "s1", "--seq", "99"]);
    assert_eq!(out.status.code(), Some(2));
    // --reindex alone rebuilds.
    let out = cmd(&["search", "--reindex"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("index rebuilt"));
}

#[test]
fn the_hook_keeps_an_existing_index_current_after_a_stop() {
    let w = world();
    let hook = |v: Value| {
        let mut c = support::sjournal(w.root.dir());
        c.args([
            "hook",
            "--host",
            "claude",
            "--deadline-ms",
            support::PATIENT_MS,
        ])
        .write_stdin(v.to_string());
        let out = c.output().unwrap();
        assert!(out.status.success());
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let p = w.proj.clone();
    // No index yet: a Stop starts nothing.
    hook(
        json!({"hook_event_name":"Stop","session_id":"h","cwd":p,"last_assistant_message":"first wombat"}),
    );
    assert!(!search::index_exists(&w.root));
    search::update(&w.root, false, None).unwrap();
    hook(
        json!({"hook_event_name":"Stop","session_id":"h","cwd":p,"last_assistant_message":"second quokka"}),
    );
    // The detached update indexes it without any search catching up.
    let mut found = false;
    for _ in 0..600 {
        let r = Request {
            query: "quokka".into(),
            ..req(&w, "")
        };
        let opts = search::Options {
            no_update: true,
            ..Default::default()
        };
        if !search::search(&w.root, &r, &opts).unwrap().hits.is_empty() {
            found = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(found, "the detached update never indexed the Stop");
}

/// A Stop starts the detached update only when none waits for the index's lock already (the
/// waiting one reads the journals after it gets the lock, so it sees the Stop): a turn's end
/// while an update is queued costs the hook no process start.
#[test]
fn a_stop_starts_no_update_while_one_waits_for_the_index() {
    use std::os::unix::fs::PermissionsExt;
    let w = world();
    search::update(&w.root, false, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Stand-ins for the sjournal binary: each says it was started by writing its own file.
    let program = |name: &str| {
        let script = dir.path().join(name);
        let mark = dir.path().join(format!("{name}.started"));
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho \"$@\" > '{}'\n", mark.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700)).unwrap();
        (script, mark)
    };
    let stop = json!({"hook_event_name":"Stop","session_id":"s1","last_assistant_message":"done"})
        .to_string();
    let started = |mark: &Path| {
        (0..600).any(|_| {
            if mark.exists() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            false
        })
    };
    let after =
        |script: &Path| search::spawn::after_event(&w.root, Some(script), "Stop", Some(&stop));
    // Nothing queued: the update is started.
    let (first, first_mark) = program("first");
    assert_eq!(after(&first), None);
    assert!(started(&first_mark), "no update was started");
    assert!(
        std::fs::read_to_string(&first_mark)
            .unwrap()
            .contains("search --update --detached"),
        "{:?}",
        std::fs::read_to_string(&first_mark)
    );
    // An update waits in the queue (the test holds its place): none is started.
    let queue = std::fs::OpenOptions::new()
        .write(true)
        .open(w.root.dir().join("search").join("queue"))
        .unwrap_or_else(|_| {
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(w.root.dir().join("search").join("queue"))
                .unwrap()
        });
    queue.lock().unwrap();
    let (second, second_mark) = program("second");
    assert_eq!(after(&second), None);
    // The queue free again: the next Stop starts one; once it has run, the one above
    // would have too.
    drop(queue);
    let (third, third_mark) = program("third");
    assert_eq!(after(&third), None);
    assert!(
        started(&third_mark),
        "no update was started once the queue was free"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        !second_mark.exists(),
        "an update was started while another waited for the index"
    );
}

/// Every file under `dir` with its length and modification time.
fn files_of(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                out.insert(p, (m.len(), m.modified().unwrap()));
            }
        }
    }
    out
}

#[test]
fn the_hook_never_writes_the_index_itself() {
    let w = world();
    let p = w.proj.clone();
    let hook = |v: Value| {
        let mut c = support::sjournal(w.root.dir());
        c.args([
            "hook",
            "--host",
            "claude",
            "--deadline-ms",
            support::PATIENT_MS,
        ])
        .write_stdin(v.to_string());
        let out = c.output().unwrap();
        assert!(out.status.success());
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // A root nobody searched: the hook creates no index, whatever the event.
    hook(json!({"hook_event_name":"UserPromptSubmit","session_id":"k","cwd":p,"prompt":"kiwi"}));
    hook(
        json!({"hook_event_name":"Stop","session_id":"k","cwd":p,"last_assistant_message":"kiwi done"}),
    );
    assert!(!w.root.dir().join("search").exists());

    // With an index, and its lock held the whole time (as an update holds it): every event,
    // a Stop too, is answered, and no file of the index changes. The Stop's update waits
    // for the lock in its own process, and indexes the event once the lock is free.
    search::update(&w.root, false, None).unwrap();
    let index_dir = w.root.dir().join("search").join("index");
    let before = files_of(&index_dir);
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(w.root.dir().join("search").join("lock"))
        .unwrap();
    lock.lock().unwrap();
    hook(
        json!({"hook_event_name":"UserPromptSubmit","session_id":"k","cwd":p,"prompt":"the numbat question"}),
    );
    hook(
        json!({"hook_event_name":"Stop","session_id":"k","cwd":p,"last_assistant_message":"the numbat answer"}),
    );
    assert_eq!(files_of(&index_dir), before, "the hook wrote the index");
    let quiet = search::Options {
        no_update: true,
        ..Default::default()
    };
    drop(lock);
    let mut found = false;
    for _ in 0..600 {
        let r = Request {
            query: "numbat".into(),
            ..req(&w, "")
        };
        if search::search(&w.root, &r, &quiet).unwrap().hits.len() == 2 {
            found = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(found, "the Stop's detached update never indexed the turn");
}

/// A client of `sjournal mcp` over its stdin and stdout: newline-delimited JSON-RPC, as the
/// MCP stdio transport has it.
struct Mcp {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl Mcp {
    fn start(w: &World, args: &[&str]) -> Mcp {
        use std::process::Stdio;
        let mut c = support::spawnable(w.root.dir());
        c.arg("mcp")
            .args(args)
            .current_dir(&w.proj)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = c.spawn().unwrap();
        let to = child.stdin.take().unwrap();
        let from = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut m = Mcp {
            child,
            to,
            from,
            next_id: 1,
        };
        let init = m.request(
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":{},
                   "clientInfo":{"name":"sjournal-test","version":"0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "sjournal", "{init}");
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        m.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        m
    }

    fn send(&mut self, v: Value) {
        use std::io::Write;
        writeln!(self.to, "{v}").unwrap();
        self.to.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        use std::io::BufRead;
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        loop {
            let mut line = String::new();
            let n = self.from.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed stdout before answering {method}");
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line:?}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// `tools/call`: (text, structured content, is_error).
    fn call(&mut self, tool: &str, args: Value) -> (String, Value, bool) {
        let r = self.request("tools/call", json!({"name":tool,"arguments":args}));
        let res = &r["result"];
        assert!(res.is_object(), "{r}");
        let text = res["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (
            text,
            res["structuredContent"].clone(),
            res["isError"].as_bool().unwrap_or(false),
        )
    }

    fn close(mut self) {
        drop(self.to);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
    }
}

#[test]
fn the_mcp_server_answers_over_stdio_and_cites_every_record() {
    let w = world();
    let s1 = hashes(&w.root.session("s1").unwrap().journal);
    let mut m = Mcp::start(&w, &[]);

    let tools = m.request("tools/list", json!({}));
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "memory",
            "propose_memory",
            "recover",
            "search",
            "session_lists",
            "show"
        ]
    );
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        let read_only = t["annotations"]["readOnlyHint"].as_bool();
        assert_eq!(read_only, Some(t["name"] != "propose_memory"), "{t}");
    }

    // search: the hit cites the journal's own seq and hash, in the text and the JSON.
    let (text, s, err) = m.call("search", json!({"query":"panicked"}));
    assert!(!err, "{text}");
    let hit = &s["hits"][0];
    assert_eq!(
        (hit["session"].as_str(), hit["seq"].as_u64()),
        (Some("s1"), Some(3)),
        "{s}"
    );
    assert_eq!(hit["hash"].as_str(), s1.get(&3).map(String::as_str));
    assert!(
        text.contains(&format!("session s1, seq 3, hash {}", s1[&3])),
        "{text}"
    );
    // The project's sessions only: x1 ran elsewhere.
    let (_, s, _) = m.call("search", json!({"query":"migration","limit":50}));
    let sessions: Vec<&str> = s["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["session"].as_str().unwrap())
        .collect();
    assert!(
        !sessions.is_empty() && sessions.iter().all(|s| *s == "s1"),
        "{sessions:?}"
    );

    // show: the record behind the hit, its neighbours, each cited.
    let (text, s, err) = m.call("show", json!({"session":"s1","seq":3,"before":1,"after":1}));
    assert!(!err, "{text}");
    let recs = s["records"].as_array().unwrap();
    assert_eq!(recs.len(), 3, "{s}");
    for r in recs {
        let seq = r["seq"].as_u64().unwrap();
        assert_eq!(r["hash"].as_str(), s1.get(&seq).map(String::as_str));
        assert!(
            text.contains(&format!("session s1, seq {seq}, hash {}", s1[&seq])),
            "{text}"
        );
    }
    assert_eq!(recs[1]["shown"], true);
    assert!(text.contains("duplicate column"), "{text}");
    // Another project's session is refused, by name too.
    let (text, _, err) = m.call("show", json!({"session":"x1","seq":1}));
    assert!(err && text.contains("not a session of"), "{text}");

    // recover: s1's recovery block, cited with its last record.
    let (text, s, err) = m.call("recover", json!({"session":"s1"}));
    assert!(!err, "{text}");
    assert_eq!(s["seq"], 6);
    assert_eq!(s["hash"].as_str(), s1.get(&6).map(String::as_str));
    assert!(text.contains("fix the flaky migration"), "{text}");
    // "previous": the session that started before the newest (s2).
    let (_, s, _) = m.call("recover", json!({"session":"previous"}));
    assert_eq!(s["session"], "s1");

    // session_lists: the failure, cited.
    let (text, s, err) = m.call("session_lists", json!({"session":"s1","list":"failures"}));
    assert!(!err, "{text}");
    let e = &s["entries"][0];
    let seq = e["seq"].as_u64().unwrap();
    assert_eq!(e["hash"].as_str(), s1.get(&seq).map(String::as_str), "{s}");
    assert!(text.contains("migration_seven"), "{text}");

    // propose_memory: a proposal, never an accepted item; the memory tool does not show it.
    let (text, s, err) = m.call(
        "propose_memory",
        json!({"text":"always run the okapi check","session":"s2"}),
    );
    assert!(!err, "{text}");
    assert_eq!(s["written"], true);
    assert_eq!(s["status"], "proposed");
    let id = s["id"].as_str().unwrap().to_owned();
    let (text, s, _) = m.call("memory", json!({}));
    assert!(!text.contains("okapi"), "{text}");
    assert_eq!(s["items"], json!([]));
    // Bad arguments are a tool error the model reads, not a protocol failure.
    let (text, _, err) = m.call("search", json!({"query":"x","bogus":1}));
    assert!(err && text.contains("do not match its schema"), "{text}");
    m.close();
    let state = sjournal::memory::ops::load(
        &w.root,
        &MemScope::Project(w.proj.clone()),
        &sjournal::snapshot::LoadOptions::latest(),
    )
    .unwrap();
    let item = &state.memory.items[&id];
    assert_eq!(item.status, "proposed");
    assert_eq!(state.memory.items.len(), 1);

    // With --all, the other project's session is searched too.
    let mut m = Mcp::start(&w, &["--all"]);
    let (_, s, _) = m.call("search", json!({"query":"another project"}));
    assert_eq!(s["hits"][0]["session"], "x1", "{s}");
    m.close();
}

/// The demo ends by asking its journal: a search whose best hit is the failing `cargo test`
/// (cited by seq and hash), then `show --seq` of that hit printing the same record, then the
/// same search over MCP citing the same record.
#[test]
fn the_demo_ends_with_a_search_and_the_record_behind_its_hit() {
    let dir = support::scratch();
    let keep = dir.path().join("demo");
    let out = support::run(dir.path(), &["demo", "--keep", keep.to_str().unwrap()], b"");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let tail = &text[text.find("10. Ask the journal").expect("the search step")..];
    assert!(tail.contains("sjournal search --all"), "{tail}");
    assert!(tail.contains("torn_write_is_quarantined"), "{tail}");
    let seq: u64 = tail
        .split("--seq ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a show --seq line: {tail}"));
    let journal = Root::new(&keep)
        .session("5e551011-de30-4a11-8000-00000000demo")
        .unwrap()
        .journal;
    let reader = JournalReader::open(&journal, None).unwrap();
    let rec = reader
        .records()
        .unwrap()
        .map(Result::unwrap)
        .find(|r| r.seq == seq)
        .expect("the hit's record");
    assert_eq!(rec.kind, "PostToolUseFailure", "{tail}");
    let hash = hashes(&journal)[&seq].clone();
    let (search, mcp) = tail
        .split_once("11. The agent asks it too, over MCP")
        .unwrap_or_else(|| panic!("the MCP step: {tail}"));
    assert!(
        search.contains(&hash[..12]),
        "the hit's hash {hash}: {search}"
    );
    // The same hit, as the MCP server cites it: session, seq and the whole hash.
    assert!(
        mcp.contains(&format!(
            "session 5e551011-de30-4a11-8000-00000000demo, seq {seq}, hash {hash}"
        )),
        "{mcp}"
    );
}

/// A root another user could write is not read for the model: every MCP tool answers with the
/// reason and the fix instead of the journals' content; private again, it answers.
#[test]
fn the_mcp_server_reads_nothing_from_a_root_others_can_write() {
    use std::os::unix::fs::PermissionsExt;
    let w = world();
    let mut m = Mcp::start(&w, &[]);
    let (text, _, err) = m.call("search", json!({"query":"panicked"}));
    assert!(!err && text.contains("session s1"), "{text}");
    for dir in [w.root.dir().to_owned(), w.root.sessions_dir()] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        for (tool, args) in [
            ("search", json!({"query":"panicked"})),
            ("recover", json!({"session":"s1"})),
            ("show", json!({"session":"s1","seq":3})),
        ] {
            let (text, _, err) = m.call(tool, args);
            assert!(err, "{tool} answered from {dir:?}: {text}");
            assert!(text.contains("other users can write"), "{text}");
            assert!(!text.contains("panicked"), "{text}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let (text, _, err) = m.call("search", json!({"query":"panicked"}));
    assert!(!err && text.contains("session s1"), "{text}");
    m.close();
}

/// Appends prompts to `session` (a journal of its own per call: one more segment per catch-up).
fn prompts(w: &World, session: &str, at: i64, texts: &[String]) {
    let p = w.proj.as_str();
    let mut wr = Writer::open(&w.root, session, &WriterOptions::default()).unwrap();
    let recs: Vec<(String, Vec<u8>)> = texts
        .iter()
        .map(|t| {
            ev(
                json!({"hook_event_name":"UserPromptSubmit","session_id":session,"cwd":p,
                      "prompt": t}),
            )
        })
        .collect();
    let items: Vec<(&str, &[u8])> = recs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    wr.append_batch_at(at, &items).unwrap();
}

#[test]
fn an_index_kept_open_sees_every_commit_and_every_rebuild() {
    let w = world();
    let mut cache: search::index::Cache = None;
    let opts = search::Options::default();
    let kept = |cache: &mut search::index::Cache, q: &str| -> String {
        json_of(
            &search::search_cached(&w.root, &req(&w, q), &opts, cache)
                .unwrap()
                .hits,
        )
    };
    let fresh = |q: &str| json_of(&run(&w, &req(&w, q)));
    assert_eq!(kept(&mut cache, "wombat"), fresh("wombat"));
    assert_eq!(kept(&mut cache, "wombat"), "[]");
    // A record appended: the kept index's catch-up commits it, and the search after it reads
    // the new segment.
    prompts(
        &w,
        "s1",
        T0 + 500 * 1_000_000_000,
        &["where is the wombat".into()],
    );
    let one = kept(&mut cache, "wombat");
    assert!(one.contains("where is the wombat"), "{one}");
    assert_eq!(one, fresh("wombat"));
    // Another process's catch-up commits (this cache did not see the commit).
    prompts(
        &w,
        "s2",
        T0 + 600 * 1_000_000_000,
        &["a second wombat".into()],
    );
    search::update(&w.root, false, None).unwrap();
    let no_update = search::Options {
        no_update: true,
        ..Default::default()
    };
    let two = json_of(
        &search::search_cached(&w.root, &req(&w, "wombat"), &no_update, &mut cache)
            .unwrap()
            .hits,
    );
    assert!(two.contains("a second wombat"), "{two}");
    // Another process rebuilds: the directory is swapped under the kept index.
    prompts(
        &w,
        "s1",
        T0 + 700 * 1_000_000_000,
        &["a third wombat".into()],
    );
    assert!(search::update(&w.root, true, None)
        .unwrap()
        .rebuilt
        .is_some());
    let three = kept(&mut cache, "wombat");
    assert!(three.contains("a third wombat"), "{three}");
    assert_eq!(three, fresh("wombat"));
    // The sessions and projects it knows follow too.
    prompts(
        &w,
        "s9",
        T0 + 800 * 1_000_000_000,
        &["a new session".into()],
    );
    let m = search::meta_cached(&w.root, &mut cache).unwrap();
    assert!(m.sessions().contains(&"s9".to_owned()), "{m:?}");
}

#[test]
fn the_first_hits_of_a_short_list_are_those_of_a_long_one() {
    let w = world();
    // Many records of the same score in several sessions and segments (one per catch-up):
    // the order among them is the tie-break alone, whatever the scorer skips.
    for (i, session) in ["t1", "t2", "t3", "t4"].iter().enumerate() {
        for round in 0..3 {
            let texts: Vec<String> = (0..15)
                .map(|k| match k % 3 {
                    0 => "okapi".to_owned(),
                    1 => "okapi okapi".to_owned(),
                    _ => format!("an okapi in a long sentence number {k}"),
                })
                .collect();
            prompts(
                &w,
                session,
                T0 + ((i * 10 + round) as i64 + 900) * 1_000_000_000,
                &texts,
            );
            search::update(&w.root, false, None).unwrap();
        }
    }
    let mut long = req(&w, "okapi");
    long.limit = search::LIMIT_MAX;
    let all = run(&w, &long);
    assert_eq!(all.len(), 4 * 3 * 15);
    // The order is (score, then the session's tie-break key, then the seq).
    let key = |h: &Hit| {
        (
            std::cmp::Reverse((h.score * 10_000.0).round() as u64),
            search::index::tie(&h.session),
            h.seq.unwrap(),
        )
    };
    let mut want = all.clone();
    want.sort_by_key(key);
    assert_eq!(json_of(&all), json_of(&want));
    for limit in [1, 2, 5, 7, 20, 33] {
        let mut r = req(&w, "okapi");
        r.limit = limit;
        assert_eq!(
            json_of(&run(&w, &r)),
            json_of(&all[..limit]),
            "limit {limit}"
        );
    }
}

/// The cursors are a file of their own in the index directory, which the commit's payload
/// names with its blake3: one such file after each commit (the older ones removed), a small
/// `meta.json`, and a cursors' file that is missing or not the one committed makes the next
/// update rebuild the index (never read cursors that do not match), with the same results.
#[test]
fn the_cursors_file_is_checked_and_one_is_kept() {
    let w = world();
    let r = req(&w, "migration");
    let before = json_of(&run(&w, &r));
    let dir = w.root.dir().join("search/index");
    let cursors = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("sjournal-cursors-")
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(cursors().len(), 1, "{:?}", cursors());
    let meta_len = std::fs::metadata(dir.join("meta.json")).unwrap().len();
    assert!(meta_len < 4096, "meta.json is {meta_len} bytes");
    // A new record, a commit: still one file, another one.
    let first = cursors();
    let p = w.proj.as_str();
    let mut wr = Writer::open(&w.root, "s3", &WriterOptions::default()).unwrap();
    let (k, v) = ev(
        json!({"hook_event_name":"UserPromptSubmit","session_id":"s3","cwd":p,
        "prompt":"one more migration"}),
    );
    wr.append_batch_at(T0 + 900 * 1_000_000_000, &[(k.as_str(), v.as_slice())])
        .unwrap();
    drop(wr);
    let u = search::update(&w.root, false, None).unwrap();
    assert!(u.rebuilt.is_none(), "{:?}", u.rebuilt);
    assert_eq!(cursors().len(), 1);
    assert_ne!(cursors(), first);
    let grown = json_of(&run(&w, &r));
    assert_ne!(grown, before);
    // A changed cursors' file: the next update rebuilds, and finds the same.
    let file = cursors().pop().unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let u = search::update(&w.root, false, None).unwrap();
    assert!(u.rebuilt.is_some(), "a changed cursors' file was read");
    assert_eq!(json_of(&run(&w, &r)), grown);
    // A missing one: the same.
    std::fs::remove_file(cursors().pop().unwrap()).unwrap();
    let u = search::update(&w.root, false, None).unwrap();
    assert!(
        u.rebuilt.is_some(),
        "a missing cursors' file was not noticed"
    );
    assert_eq!(json_of(&run(&w, &r)), grown);
    assert_eq!(cursors().len(), 1);
}
