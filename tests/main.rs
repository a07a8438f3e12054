//! The integration tests, one binary (`autotests = false` in Cargo.toml): one module per
//! concern, each opening with the scenario it checks, and one support module. One binary links
//! once instead of once per file (about 4x less wall time to rebuild the tests after a change
//! to the library on the project's 2-core machine: 25-31 s instead of 112-120 s).

mod support;

mod checkpoint;
mod cli;
mod cli_fold;
mod compaction;
mod concurrency;
mod context_channels;
mod crash_loop;
mod events;
mod export_import;
mod fallback;
mod faults;
mod fold_props;
mod golden;
mod hook_concurrency;
mod hook_context;
mod hook_damage;
mod hook_exec;
mod hook_failopen;
mod hook_hosts;
mod hook_input;
mod hook_watchdog;
mod inspect;
mod install;
mod primitives;
mod recovery;
mod replay;
mod report;
mod security;
mod session;
mod sessions;
mod snapshot;
mod spool;
mod spool_backlog;
mod spool_readers;
mod tail;
mod tamper;

/// A test file that is not declared above would never be compiled or run: every file of
/// `tests/` must be a module of this binary.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let main = include_str!("main.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
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
