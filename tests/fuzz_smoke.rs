//! The fuzz targets on the stable toolchain, as part of every test run: each target's body
//! (`fuzz/targets.rs`, shared with the libFuzzer harnesses that `tools/fuzz.sh` runs) over its
//! seed corpus (`fuzz/seeds/<target>/`), every input a fuzzer ever crashed it with
//! (`fuzz/regressions/<target>/`: each crash found becomes a file there, so it stays fixed),
//! and a few thousand deterministic mutations of the seeds (bit flips, cuts, splices, bytes
//! a decoder treats specially). A panic is a failure; the body asserts each target's
//! invariants (a frame re-encodes to its bytes, verify and inspect agree, capture keeps the
//! input byte for byte, the lenient pre-pass never makes accepted JSON refused, ...).

use crate::fuzz_targets as targets;

use std::path::Path;

type Body = fn(&[u8]);

const TARGETS: &[(&str, Body)] = &[
    ("frame", targets::frame),
    ("header", targets::header),
    ("snapshot", targets::snapshot),
    ("journal", targets::journal),
    ("payload", targets::payload),
    ("capture", targets::capture_input),
    ("adapters", targets::adapters),
    ("lenient", targets::lenient),
    ("memory_plan", targets::memory_plan),
];

/// Mutations of each seed per target.
const MUTATIONS: usize = 300;

fn inputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = match std::fs::read_dir(dir) {
        Ok(d) => d
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

fn mutate(rng: &mut fastrand::Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..rng.usize(1..4) {
        match rng.u8(0..6) {
            0 if !b.is_empty() => {
                let i = rng.usize(..b.len());
                b[i] ^= 1 << rng.u8(0..8);
            }
            1 if !b.is_empty() => b.truncate(rng.usize(..b.len())),
            2 => {
                let at = rng.usize(..=b.len());
                let from = rng.usize(..=other.len());
                let to = (from + rng.usize(..64)).min(other.len());
                b.splice(at..at, other[from..to].iter().copied());
            }
            3 if !b.is_empty() => {
                let i = rng.usize(..b.len());
                b[i] = *rng
                    .choice(&[0u8, 0xff, b'"', b'\\', b'{', b'}', b'u', b'e', b'9', 0x80])
                    .unwrap();
            }
            4 if b.len() >= 4 => {
                // A length or count field pushed to an extreme.
                let i = rng.usize(..b.len() - 3);
                b[i..i + 4].copy_from_slice(
                    &rng.choice([u32::MAX, 0, 61, 1 << 24])
                        .unwrap()
                        .to_le_bytes(),
                );
            }
            _ => b.extend(std::iter::repeat_n(rng.u8(..), rng.usize(..16))),
        }
    }
    b
}

#[test]
fn every_target_over_its_seeds_regressions_and_mutations() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for (name, body) in TARGETS {
        let seeds = inputs(&fuzz.join("seeds").join(name));
        assert!(!seeds.is_empty(), "{name} has no seeds");
        let regressions = inputs(&fuzz.join("regressions").join(name));
        for (file, data) in seeds.iter().chain(&regressions) {
            let r = std::panic::catch_unwind(|| body(data));
            assert!(r.is_ok(), "{name}: {file} fails");
        }
        let mut rng = fastrand::Rng::with_seed(0x5eed ^ name.len() as u64);
        for (i, (file, seed)) in seeds.iter().enumerate() {
            let other = &seeds[(i + 1) % seeds.len()].1;
            for n in 0..MUTATIONS / seeds.len().max(1) + 1 {
                let m = mutate(&mut rng, seed, other);
                let r = std::panic::catch_unwind(|| body(&m));
                assert!(
                    r.is_ok(),
                    "{name}: mutation {n} of {file} fails; input (hex): {}",
                    m.iter().map(|b| format!("{b:02x}")).collect::<String>()
                );
            }
        }
    }
}
