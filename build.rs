//! Links the `sjournal` binary as a position-dependent executable (`-no-pie`) on x86_64 Linux
//! with glibc. Agent hosts start `sjournal hook` on every event of a session, so its start-up
//! is on their path: as a PIE, the dynamic loader first applies about 9,000 relative
//! relocations to the binary, copying the pages they touch; linked at a fixed address it
//! applies none (BENCHMARKS.md, "Hook start-up"). Shared libraries stay position independent
//! and randomized; the binary's own image is then at a fixed address (no ASLR for it). Set
//! `SJOURNAL_PIE=1` when building to keep a PIE. Other targets are linked as their defaults.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SJOURNAL_PIE");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let measured = var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("CARGO_CFG_TARGET_ARCH") == "x86_64";
    let keep_pie = !matches!(var("SJOURNAL_PIE").as_str(), "" | "0");
    if measured && !keep_pie {
        println!("cargo:rustc-link-arg-bin=sjournal=-no-pie");
    }
}
