//! Golden state hashes: the checked-in journals of tests/fixtures/journals (real Claude Code
//! payloads, every other host's constructed payloads, and a scripted session with context,
//! compaction and primitives) must fold to exactly these states. A change to the record
//! format, the fold, the `State` types or rmp-serde's encoding that moves any of them fails
//! here, and must come with a new `FOLD_VERSION` (so old snapshots are rebuilt).

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
    for (_, file, records, golden) in rows {
        let path = dir.join(file);
        let report = verify_file(&path, None).unwrap();
        assert!(report.ok, "{file} does not verify: {report:?}");
        let reader = JournalReader::open(&path, None).unwrap();
        let recs: Vec<_> = reader.records().unwrap().map(|r| r.unwrap()).collect();
        let state = fold(recs.iter().map(RecordView::from));
        assert_eq!(state.seq, *records, "{file}");
        let hash = state.state_hash().to_hex();
        assert_eq!(
            hash, *golden,
            "\n{file} now folds to state hash {hash}, not the golden {golden} of fold version \
             {FOLD_VERSION}.\nIf the change is intended: bump FOLD_VERSION in src/fold/mod.rs and \
             add rows for the new version to GOLDEN (keep the old rows). Never edit the hash of an \
             existing version: snapshots written under it would be trusted with a different fold.\n"
        );
    }
}
