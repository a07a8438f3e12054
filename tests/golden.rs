//! Golden state hashes: the checked-in journals of tests/fixtures/journals (real Claude Code
//! payloads, every other host's constructed payloads, and a scripted session with context,
//! compaction and primitives, and the recovery scenario with its injections) must fold to
//! exactly these states. A change to the record format, the fold, the `State` types or
//! rmp-serde's encoding that moves any of them fails here, and must come with a new
//! `FOLD_VERSION` (so old snapshots are rebuilt). And every injection journaled in
//! `recovery.sjl` must re-derive byte for byte: a change to what the renderer makes of a
//! state must come with a new `context::RENDER_VERSION` (and the journal regenerated).

use crate::support;

use sjournal::fold::{fold, RecordView, FOLD_VERSION};
use sjournal::journal::{verify_file, JournalReader};

/// (fold version, journal, records, state hash). Add rows for a new version; never edit the
/// rows of an existing one.
const GOLDEN: &[(u32, &str, u64, &str)] = &[
    (
        1,
        "claude-real.sjl",
        37,
        "aaaea6c8d9d3eb174abeb789cec92e205ed1977b8a67d10fbe89c4ee6b05c845",
    ),
    (
        1,
        "hosts.sjl",
        71,
        "8ed12f78ad5255b98d5c279048a9cf24e2f0c88e666eaa5471d7621b7c84316a",
    ),
    (
        1,
        "session.sjl",
        121,
        "bd902715781bec00f83499ba3a837e8ad1712326a5629e6f7f86a3e0d8cef594",
    ),
    // Version 2 folds `sjournal.exec` records into context (these journals have none); the
    // constructed payloads' paths were rewritten when these journals were regenerated.
    (
        2,
        "claude-real.sjl",
        37,
        "aaaea6c8d9d3eb174abeb789cec92e205ed1977b8a67d10fbe89c4ee6b05c845",
    ),
    (
        2,
        "hosts.sjl",
        71,
        "d4f56962b015d8cbaf86a9fd4016e15c523f486251e6ce079795f88dba250086",
    ),
    (
        2,
        "session.sjl",
        121,
        "39a5d45fb85b4803fae5a997f1df9660eff2ede98b77738e5fdbdcebbb47e870",
    ),
    // Version 3: events are read leniently (a lone surrogate escape reads as U+FFFD, an
    // out-of-range number as its text; these journals have neither); `sjournal.repaired` and
    // `sjournal.lost` are known system kinds; the host adapters read the real hosts' payloads
    // (Gemini's automatic PreCompress is no compaction, OpenClaw's events come from its
    // plugin, Codex's subagent prompts are no turns, a forced host is recorded), and the fold
    // keeps what recovery needs (requests, todos, plan, failures, where the work left off,
    // file line counts, subagent descriptions, the seen set). The same journals, unchanged,
    // and `recovery.sjl`: the recovery scenario as the hook journals it, with the
    // `sjournal.injected` records of render version 1.
    (
        3,
        "claude-real.sjl",
        37,
        "c41f91d51ec3ea9de492d82135bc2dcf41d0e4a3ffd0c08902da70e6d93d4935",
    ),
    (
        3,
        "hosts.sjl",
        71,
        "f27191c3e32d589ee95a4796fdfe50f413384a33362d20164a752521cdf3fc4e",
    ),
    (
        3,
        "recovery.sjl",
        22,
        "e5adb30a8409d34799a18343a59fc169c37a22f07a0be0009ce1686aa53f48c4",
    ),
    (
        3,
        "session.sjl",
        121,
        "d8614a04127efd9e8a1f2667329e8ed85806534986a39cfa1ab4de3a8abdd04b",
    ),
    // Version 4: the state has a `model_view` (Gemini CLI's model requests: a rewritten
    // history is an automatic compression). The same journals, unchanged.
    (
        4,
        "claude-real.sjl",
        37,
        "dfdd3a04af9b9ff8599e059962aa8f3ca48d56e6cd756e2b8efee222bb31e64f",
    ),
    (
        4,
        "hosts.sjl",
        71,
        "62c9f53a4b28fa15aa38af738df659de4c3509592363f6c6732733c7babec6d2",
    ),
    (
        4,
        "recovery.sjl",
        22,
        "63178d726d369900202743cba7381c82c4927da498da6142043c3f47e89c3c69",
    ),
    (
        4,
        "session.sjl",
        121,
        "8fbd56324f64af40787bc6626aa0f5c90b8e53ec3c80a5152618fc6e37c46fc2",
    ),
    // Version 5 folds `sjournal.memory` (scope journals' memory) and `sjournal.extras` (what
    // the hook added from outside the session) into two new fields. The same journals.
    (
        5,
        "claude-real.sjl",
        37,
        "9f2a2384525db398fd92dc8fbfd85ae5c598b55bdac9e69455f017a8c7206d21",
    ),
    (
        5,
        "hosts.sjl",
        71,
        "48dc7032edb718376b506a4d213ac98dc040b38453eaff062f9120c804a9917e",
    ),
    (
        5,
        "recovery.sjl",
        22,
        "2548b50d23846cbb8e79ef2362d178d695262a3c26bf65bb457a5fe8aeaf3aff",
    ),
    (
        5,
        "session.sjl",
        121,
        "5dab4a9cc36aca55f8664097278f91a7a2a541bb3bdc5baec6acc653c7353f23",
    ),
    // Version 6 keeps the instruction files the host loaded (`InstructionsLoaded.file_path`,
    // `requests.files`), counts the sessions that gave a memory item (`seen_in`), and the
    // extras record says which instruction files it read. The same journals.
    // The same events written with digests (tests/digests.rs): the same state.
    (
        6,
        "claude-real-digests.sjl",
        37,
        "1a78681a0e399617b6ede09ed69826e3b91823b6a2a59d9c6e7dcb311a02e359",
    ),
    (
        6,
        "claude-real.sjl",
        37,
        "1a78681a0e399617b6ede09ed69826e3b91823b6a2a59d9c6e7dcb311a02e359",
    ),
    (
        6,
        "hosts.sjl",
        71,
        "35324fd044ae18e20fdbf6d992b06248f3842c2b04776677ab37da84f7ed85ec",
    ),
    (
        6,
        "recovery.sjl",
        22,
        "d0a30dd50a4de3d7c74aaf55310f81e999ed0a67aff403f34ec1316059ce1c6f",
    ),
    (
        6,
        "session.sjl",
        121,
        "52b2abc93d0d73ad6501f4baeceea9e6473b80d051439d9881892bb3f1744613",
    ),
    // Version 7: the Cline CLI (the Cline SDK's hook names, `sessionContext.rootSessionId`,
    // failed items of `tool_result.output`, a subagent's run as SubagentStart/SubagentStop,
    // the SDK's `editor` as a write or an edit). These journals' states are unchanged; the
    // journal with digests is rewritten with digests of version 7. Digest version 2 (its
    // strs in one block) adds the same journal with digests of that version; the one with
    // digests of version 1 stays as it was written, and both fold to the same state. Digest
    // version 3 (a fixed head, codes for host and kind, a bitmap of the fields set) adds the
    // same journal with digests of version 3; all three fold to the same state.
    (
        7,
        "claude-real-digests-v2.sjl",
        37,
        "1a78681a0e399617b6ede09ed69826e3b91823b6a2a59d9c6e7dcb311a02e359",
    ),
    (
        7,
        "claude-real-digests-v3.sjl",
        37,
        "1a78681a0e399617b6ede09ed69826e3b91823b6a2a59d9c6e7dcb311a02e359",
    ),
    (
        7,
        "claude-real-digests.sjl",
        37,
        "1a78681a0e399617b6ede09ed69826e3b91823b6a2a59d9c6e7dcb311a02e359",
    ),
    (
        7,
        "claude-real.sjl",
        37,
        "1a78681a0e399617b6ede09ed69826e3b91823b6a2a59d9c6e7dcb311a02e359",
    ),
    (
        7,
        "hosts.sjl",
        71,
        "35324fd044ae18e20fdbf6d992b06248f3842c2b04776677ab37da84f7ed85ec",
    ),
    (
        7,
        "recovery.sjl",
        22,
        "d0a30dd50a4de3d7c74aaf55310f81e999ed0a67aff403f34ec1316059ce1c6f",
    ),
    (
        7,
        "session.sjl",
        121,
        "52b2abc93d0d73ad6501f4baeceea9e6473b80d051439d9881892bb3f1744613",
    ), // Version 8: who wrote a prompt (`Host::prompt_author`): a prompt the host generated
    // (Claude Code's `<task-notification>`) or a subagent's task in its parent's session is no
    // turn; Gemini CLI's prompt loses exactly the SessionStart block journaled as injected; the
    // view of a session's requests remembers what sjournal injected (`model_view.injected`).
    // The digest versions 1 and 2 are no longer read (their fixtures removed); the journal
    // with digests is rewritten with digests of version 8, and recovery.sjl with injections
    // of render version 2.
    (
        8,
        "claude-real-digests-v3.sjl",
        37,
        "d77d19434e97632c0213603a3da383b547600a4b5fe2ac296965ae54ff205544",
    ),
    (
        8,
        "claude-real.sjl",
        37,
        "d77d19434e97632c0213603a3da383b547600a4b5fe2ac296965ae54ff205544",
    ),
    (
        8,
        "hosts.sjl",
        71,
        "495ca8c5720aa67a8406231487bb8164c5e8d886280dad9184e95dafe30dab4e",
    ),
    (
        8,
        "recovery.sjl",
        22,
        "14f58c926d6964d3da2aa2f702746ad2c9b0981143918c5d4d30d4015dbaa56f",
    ),
    (
        8,
        "session.sjl",
        121,
        "0485f50d4219746d4e357e6a43ff5d2606534813ba5931820a0526e49f12e226",
    ),
    // Version 9: `sjournal.redacted` is a known system kind (counted in `journal.redacted` and
    // `journal.redactions` by rule, no longer in `journal.unknown_system`), and a name longer
    // than a key counts under its cut form; `claude-real-digests-v3.sjl` is rewritten with
    // digests of fold version 9.
    (
        9,
        "claude-real-digests-v3.sjl",
        37,
        "092a188a3555809cbdb948a6b8dff4ec5e4529030f7707366de29e3529bdf379",
    ),
    (
        9,
        "claude-real.sjl",
        37,
        "092a188a3555809cbdb948a6b8dff4ec5e4529030f7707366de29e3529bdf379",
    ),
    (
        9,
        "hosts.sjl",
        71,
        "0812423aea19c51c3882cc4b727d692e80be3cfbe6a6877aa427e20d31d3dd8c",
    ),
    (
        9,
        "recovery.sjl",
        22,
        "baedc1ff38267c947ed1e88351724bd994985a9bbacb2a9661d7becb0b005178",
    ),
    (
        9,
        "session.sjl",
        121,
        "e7c4a2371e38ca12276bd30c236ced8712b7ad2994d0baac5e62ea7315be7807",
    ),
    // Version 10: `sjournal.erased` known (`State.journal.erased`); these journals have none,
    // and (format 1) none is erased: the new field alone moves the hashes.
    (
        10,
        "claude-real-digests-v3.sjl",
        37,
        "bd88051660d905e02cc6e986769233827bc4e1ebe939efb72707f3973d03a52c",
    ),
    // Format 2 (written by the build of 2026-12-04, before format 3), with a field of seq 11
    // and the whole of seq 15 erased (seq 38, 39): read, verified and folded unchanged.
    (
        10,
        "claude-real-format2-erased-digests.sjl",
        39,
        "32535cc366f3ec0a0e3968b69f66c8d7840620f00435ee791cdb373e54d7bd31",
    ),
    (
        10,
        "claude-real.sjl",
        37,
        "bd88051660d905e02cc6e986769233827bc4e1ebe939efb72707f3973d03a52c",
    ),
    (
        10,
        "hosts.sjl",
        71,
        "7ba95b88bd98d572794278c1549e6095d651a4b5b1760fd889eec86464ad459d",
    ),
    (
        10,
        "recovery.sjl",
        22,
        "43514598bedacccad5d6c2b7a10589e903c0d6522d3b46e81683eb4056f8a0ab",
    ),
    (
        10,
        "session.sjl",
        121,
        "291f0eb3d28038408832f64ac943b10908d86e3610aa0da8ef33a90ff064afdf",
    ),
];

#[test]
fn fixture_journals_fold_to_their_golden_state() {
    let dir = support::fixtures_dir().join("journals");
    let rows: Vec<_> = GOLDEN.iter().filter(|r| r.0 == FOLD_VERSION).collect();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sjl"))
        .collect();
    files.sort();
    assert_eq!(
        rows.iter().map(|r| r.1.to_owned()).collect::<Vec<_>>(),
        files,
        "every fixture journal needs a golden hash for fold version {FOLD_VERSION}"
    );
    let mut wrong = Vec::new();
    for (_, file, records, golden) in rows {
        let path = dir.join(file);
        let report = verify_file(&path, None).unwrap();
        assert!(report.ok, "{file} does not verify: {report:?}");
        let reader = JournalReader::open(&path, None).unwrap();
        let recs: Vec<_> = reader.records().unwrap().map(|r| r.unwrap()).collect();
        let state = fold(recs.iter().map(RecordView::from));
        assert_eq!(state.seq, *records, "{file}");
        let hash = state.state_hash().to_hex();
        if hash != *golden {
            wrong.push(format!("{file}: now {hash}, golden {golden}"));
        }
    }
    // All of them at once, so that a new version's rows are recorded in one run.
    assert!(
        wrong.is_empty(),
        "\n{}\nThese journals no longer fold to their golden state hash of fold version \
         {FOLD_VERSION}.\nIf the change is intended: bump FOLD_VERSION in src/fold/mod.rs and add \
         rows for the new version to GOLDEN (keep the old rows). Never edit the hash of an \
         existing version: snapshots written under it would be trusted with a different fold.\n",
        wrong.join("\n")
    );
}

#[test]
fn checked_in_injections_re_derive_byte_for_byte() {
    use sjournal::context::RENDER_VERSION;
    use sjournal::replay::{replay, session::SessionFold, CheckStatus};
    let path = support::fixtures_dir().join("journals/recovery.sjl");
    let reader = JournalReader::open(&path, None).unwrap();
    let mut fold = SessionFold::default();
    let mut checks = Vec::new();
    replay(&reader, &mut fold, Default::default(), |s| {
        checks.extend(s.injection);
        Ok(())
    })
    .unwrap();
    let journaled: Vec<_> = checks.iter().filter(|c| c.journaled.is_some()).collect();
    assert!(!journaled.is_empty());
    for c in journaled {
        assert_eq!(
            c.render_version,
            Some(RENDER_VERSION),
            "recovery.sjl was written by render version {:?}: regenerate it with \
             `cargo run --example gen_fixture_journals` and add golden rows",
            c.render_version
        );
        assert_eq!(
            c.status,
            CheckStatus::Match,
            "the injection for seq {} no longer re-derives: a renderer change needs a new \
             context::RENDER_VERSION (then regenerate recovery.sjl)\njournaled:\n{}\nnow:\n{}",
            c.event_seq,
            c.journaled.as_deref().unwrap_or(""),
            c.derived.as_deref().unwrap_or("")
        );
    }
}
