//! How the `sjournal` binary is linked. Agent hosts start `sjournal hook` on every event of a
//! session, so its start-up is on their path. On x86_64 Linux with glibc the binary is linked
//! as a **static PIE**: no dynamic loader, no shared libraries to find, map and relocate, no
//! symbol lookups, and the image is still randomized by ASLR (BENCHMARKS.md, "Speed
//! mechanisms": static PIE).
//!
//! Cargo cannot give one binary `-C target-feature=+crt-static`: set for the package, it
//! reaches the proc-macro crates, which cannot be linked statically. So this script links the
//! binary the way that flag would. It passes `-static-pie`, and it makes the C libraries rustc
//! names on the link line (`-lc`, `-lm`, `-lgcc_s`, ...) resolve to their static archives:
//! a directory in `OUT_DIR`, searched first, holds one small linker script per library
//! (`libc.so` containing `GROUP ( ".../libc.a" ... )`) that stands in for the shared one. The
//! archives are found by asking the C compiler that links (`cc -print-file-name`, or the
//! linker cargo was given). Only the binaries are linked this way; tests and benches
//! are not.
//!
//! If an archive is missing (no `libc6-dev`/`glibc-static`), or with `SJOURNAL_LINK=dynamic`,
//! the binary is linked as the platform's default (a dynamic PIE), and the build says why
//! (`SJOURNAL_LINK=static` makes a missing archive an error). Only missing files are caught:
//! a C toolchain that has the archives but cannot link a static PIE (gcc before 8, sanitizer
//! builds) fails the build; set `SJOURNAL_LINK=dynamic` there.
//! `SJOURNAL_LINKED` (`static-pie` or `dynamic`) tells the package's tests what was done.
//! Other targets are linked as their defaults. The `sjournal-hook` binary is linked as
//! `sjournal` is.
//!
//! `SJOURNAL_BUILD_STAMP` names the sources a release build was made from (a hash of the `.rs`
//! files under `src/`, `Cargo.toml`, `Cargo.lock`, this file, the features and target):
//! `sjournal install` points hosts at the `sjournal-hook` beside it only if that binary
//! reports the same stamp, so a stale one left in a build directory is never installed. Other
//! profiles get `debug` (hashing the sources would rerun this script, and rebuild everything
//! after it, on every edit); `install` then also asks that the two binaries were linked
//! within a minute of each other.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries rustc puts on the link line for std on x86_64-unknown-linux-gnu, each with
/// the archives that stand in for it. libgcc_s (the unwinder, for panics) becomes libgcc_eh.
const SHADOWS: &[(&str, &[&str])] = &[
    ("c", &["libc.a", "libgcc.a", "libgcc_eh.a"]),
    ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
    ("m", &["libm.a"]),
    ("pthread", &["libpthread.a"]),
    ("dl", &["libdl.a"]),
    ("rt", &["librt.a"]),
    ("util", &["libutil.a"]),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SJOURNAL_LINK");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let measured = var("TARGET") == "x86_64-unknown-linux-gnu";
    let linked = match (measured, var("SJOURNAL_LINK").as_str()) {
        (false, "" | "dynamic") | (true, "dynamic") => "dynamic",
        (false, "static") => {
            panic!("SJOURNAL_LINK=static is built for x86_64-unknown-linux-gnu only")
        }
        (true, asked @ ("" | "static")) => {
            match static_pie(&var("RUSTC_LINKER"), &var("OUT_DIR")) {
                Ok(()) => "static-pie",
                Err(why) if asked == "static" => panic!("SJOURNAL_LINK=static, but {why}"),
                Err(why) => {
                    println!(
                        "cargo:warning=sjournal is linked dynamically: {why}. A static binary \
                     starts faster on every hook; install the C library's static archives \
                     (Debian/Ubuntu: libc6-dev; Fedora: glibc-static), then `cargo clean -p \
                     sjournal` and build again"
                    );
                    "dynamic"
                }
            }
        }
        (_, other) => panic!("SJOURNAL_LINK={other:?}: expected \"static\" or \"dynamic\""),
    };
    println!("cargo:rustc-env=SJOURNAL_LINKED={linked}");
    let stamp = match var("PROFILE").as_str() {
        "release" => format!("{:016x}", stamp()),
        _ => "debug".to_owned(),
    };
    println!("cargo:rustc-env=SJOURNAL_BUILD_STAMP={stamp}");
}

/// A hash of what the build is made from (see the module docs).
fn stamp() -> u64 {
    use std::hash::{Hash, Hasher};
    for p in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={p}");
    }
    let mut files = vec![
        PathBuf::from("Cargo.toml"),
        PathBuf::from("Cargo.lock"),
        PathBuf::from("build.rs"),
    ];
    let mut dirs = vec![PathBuf::from("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    // `DefaultHasher::new()` has fixed keys: the same sources give the same stamp.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in &files {
        f.hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("CARGO_FEATURE_") || k == "TARGET")
        .collect();
    env.sort();
    env.hash(&mut h);
    h.finish()
}

/// Writes the stand-in linker scripts and asks for a static PIE; Err says what is missing.
fn static_pie(linker: &str, out_dir: &str) -> Result<(), String> {
    let cc = if linker.is_empty() { "cc" } else { linker };
    let find = |name: &str| -> Result<PathBuf, String> {
        let out = Command::new(cc)
            .arg(format!("-print-file-name={name}"))
            .output()
            .map_err(|e| format!("could not run `{cc}` to find {name}: {e}"))?;
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        // An archive the compiler does not know comes back as the bare name.
        match path.is_absolute() && path.is_file() {
            true => Ok(path),
            false => Err(format!("`{cc}` finds no {name}")),
        }
    };
    find("rcrt1.o")?; // the start file of a static PIE
    let dir = Path::new(out_dir).join("static-link");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (lib, archives) in SHADOWS {
        let mut paths = Vec::new();
        for a in *archives {
            paths.push(format!("{:?}", find(a)?));
        }
        let script = format!("GROUP ( {} )\n", paths.join(" "));
        let file = dir.join(format!("lib{lib}.so"));
        std::fs::write(&file, script).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    for bin in ["sjournal", "sjournal-hook"] {
        println!("cargo:rustc-link-arg-bin={bin}=-static-pie");
        println!("cargo:rustc-link-arg-bin={bin}=-L{}", dir.display());
    }
    Ok(())
}
