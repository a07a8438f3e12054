//! The integration tests, one binary (`autotests = false` in Cargo.toml): one module per
//! concern, each opening with the scenario it checks, and one support module. One binary links
//! once instead of once per file (about 4x less wall time to rebuild the tests after a change
//! to the library on the project's 2-core machine: 25-31 s instead of 112-120 s). The
//! `remote_*` modules compile only with the `remote` feature (each says so in its first
//! line). `tests/real_hosts/` is a binary of its own (`cargo test --test real_hosts`): it is
//! slow and drives the real hosts.

mod support;

/// The fuzz targets' bodies, shared with the libFuzzer harnesses (`fuzz/`).
#[path = "../fuzz/targets.rs"]
mod fuzz_targets;

mod checkpoint;
mod cli;
mod cli_edges;
mod cli_fold;
mod compaction;
mod concurrency;
mod config_file;
mod context_budget;
mod context_channels;
mod context_fold;
mod context_recovery;
mod crash_loop;
mod digests;
mod doctor;
mod erase;
mod events;
mod export_import;
mod fallback;
mod faults;
mod fold_props;
mod fuzz_smoke;
mod golden;
mod hook_command_line;
mod hook_concurrency;
mod hook_context;
mod hook_damage;
mod hook_digests;
mod hook_exec;
mod hook_failopen;
mod hook_hosts;
mod hook_input;
mod hook_stress;
mod hook_watchdog;
mod inspect;
mod install;
mod install_cline;
mod instruction_scan;
mod json_outputs;
mod lenient_input;
mod memory;
mod memory_sources;
mod migrate;
mod primitives;
mod quarantine;
mod recovery;
mod redaction;
mod relative_root;
mod remote_cli;
mod remote_crash;
mod remote_erase;
mod remote_index;
mod remote_ship;
mod remote_tamper;
mod repair;
mod replay;
mod report;
mod rollback;
mod search;
mod security;
mod session;
mod sessions;
mod snapshot;
mod spool;
mod spool_backlog;
mod spool_readers;
mod tail;
mod tamper;
mod terminal_escapes;
mod unreadable_entries;
mod verify_parallel;
// The local viewer (`sjournal serve`): only with the `viewer` feature.
#[cfg(feature = "viewer")]
mod viewer;

/// Without the feature the viewer's tests are not compiled: the skip ledger says so.
#[cfg(not(feature = "viewer"))]
#[test]
fn viewer_needs_its_feature() {
    support::skip::whole(
        "tests/viewer.rs (sjournal serve) is not built without the `viewer` feature",
        "cargo test --features viewer (tools/test.sh does)",
    );
}
mod webhook_delivery;
mod webhook_safety;

/// A test file that is not declared above would never be compiled or run: every file of
/// `tests/` must be a module of this binary, and every directory of `tests/` with a `main.rs`
/// a `[[test]]` of Cargo.toml (with `autotests = false` nothing else finds it).
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let main = include_str!("main.rs");
    let manifest = include_str!("../Cargo.toml");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().join("main.rs").is_file() {
            assert!(
                manifest.contains(&format!("path = \"tests/{name}/main.rs\"")),
                "tests/{name}/main.rs is not a [[test]] in Cargo.toml: add one"
            );
            continue;
        }
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        if stem != "main" {
            assert!(
                main.contains(&format!("\nmod {stem};\n")),
                "tests/{name} is not declared in tests/main.rs: add `mod {stem};`"
            );
        }
    }
}
