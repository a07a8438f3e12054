//! The standing-instruction scan is part of the fold, so its fast form must give exactly the
//! answers of the rule as first written: split the prompt into sentences walking its
//! characters, lowercase each sentence into single-spaced words, then look for each marker
//! between spaces. That first implementation is kept verbatim as the reference
//! (`support::instruction_oracle`, also measured against in `benches/fold.rs`); the scan is
//! compared with it on generated text (marker words in every case, split by punctuation,
//! curly apostrophes, characters whose lowercase is ASCII or longer than one character,
//! questions) and on every string of the recorded host payloads, sentence by sentence and
//! prompt by prompt.

use crate::support::instruction_oracle::{oracle, oracle_instructions, oracle_sentences};
use proptest::prelude::*;
use sjournal::fold::instructions::{instructions, is_instruction, sentences, MARKERS};

fn check(text: &str) {
    assert_eq!(sentences(text), oracle_sentences(text), "{text:?}");
    assert_eq!(is_instruction(text), oracle(text), "{text:?}");
    for s in sentences(text) {
        assert_eq!(is_instruction(s), oracle(s), "{s:?}");
    }
    assert_eq!(instructions(text), oracle_instructions(text), "{text:?}");
}

/// A piece of prompt text: marker words and their fragments, other words, separators, and
/// characters whose lowercasing is unusual.
fn piece() -> impl Strategy<Value = String> {
    let markers: Vec<String> = MARKERS.iter().map(|m| m.to_string()).collect();
    let odd = [
        "K", // Kelvin sign: lowercases to ASCII `k`
        "İ", // lowercases to `i` and a combining dot
        "ß", "Σ", "é", "\u{307}", "\u{a0}", "\u{2019}", "\u{2018}", "'", "`", "\t", "ǅ", "Ⅷ",
    ];
    let words = [
        "run", "tests", "the", "a", "mus", "t", "n", "don", "do", "not", "now", "on", "from",
        "make", "sure", "you", "before", "of", "instead", "should", "stopper", "nonstop",
        "mustache", "42", "v1.2", "src/a.rs",
    ];
    let seps = [
        " ", "  ", ", ", ". ", "! ", "? ", "?", ".", "\n", "- ", "* ", "1. ", "(", ")", "/", "-",
    ];
    prop_oneof![
        3 => proptest::sample::select(markers.clone()),
        3 => (proptest::sample::select(markers), any::<u64>()).prop_map(|(m, bits)| respell(&m, bits)),
        3 => proptest::sample::select(words.map(String::from).to_vec()),
        3 => proptest::sample::select(seps.map(String::from).to_vec()),
        1 => proptest::sample::select(odd.map(String::from).to_vec()),
        1 => any::<char>().prop_map(String::from),
    ]
}

/// The marker with some characters spelled otherwise (chosen by `bits`): upper case, the
/// Kelvin sign for `k`, a curly apostrophe, a dotted capital I, a space doubled or made
/// punctuation.
fn respell(marker: &str, bits: u64) -> String {
    let mut out = String::new();
    for (i, c) in marker.chars().enumerate() {
        let b = (bits >> ((i * 3) % 61)) & 7;
        match (c, b) {
            ('k', 1 | 2) => out.push('\u{212a}'),
            ('i', 1) => out.push('\u{130}'),
            ('\'', 1) => out.push('\u{2019}'),
            ('\'', 2) => out.push('\u{2018}'),
            (' ', 1) => out.push_str(", "),
            (' ', 2) => out.push_str(" - "),
            (c, 3 | 4) => out.extend(c.to_uppercase()),
            (c, _) => out.push(c),
        }
    }
    out
}

/// The piece in a random case: lower, upper, or capitalized.
fn cased() -> impl Strategy<Value = String> {
    (piece(), 0..4u8).prop_map(|(p, case)| match case {
        0 => p.to_uppercase(),
        1 => {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        }
        _ => p,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn the_scan_answers_as_the_first_rule_on_generated_prompts(
        parts in proptest::collection::vec(cased(), 0..24)
    ) {
        check(&parts.concat());
    }

    #[test]
    fn the_scan_answers_as_the_first_rule_on_arbitrary_strings(s in any::<String>()) {
        check(&s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn long_prompts_split_as_with_the_first_rule(
        parts in proptest::collection::vec(cased(), 100..400)
    ) {
        // Past `INSTRUCTION_SENTENCES_MAX` sentences the split stops where the first one did.
        check(&parts.concat());
    }
}

#[test]
fn the_scan_answers_as_the_first_rule_on_recorded_host_payloads() {
    fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = vec![dir];
    let (mut checked, mut rules) = (0, 0);
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if p.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let mut all = Vec::new();
            strings(&v, &mut all);
            for s in all {
                check(s);
                checked += 1;
                rules += instructions(s).len();
            }
        }
    }
    assert!(checked > 1000, "only {checked} strings in the fixtures");
    assert!(
        rules > 0,
        "no fixture string states a rule: the comparison is too weak"
    );
}

#[test]
fn lowercasing_is_unicode_aware_as_in_the_first_rule() {
    // The Kelvin sign lowercases to ASCII `k`: "MAKE" spelled with it is the marker "make".
    let kelvin = "Ma\u{212a}e sure it builds";
    assert!(oracle(kelvin));
    assert!(is_instruction(kelvin));
    // A curly apostrophe is an apostrophe; a dotted capital I is not an ASCII `i`.
    assert!(is_instruction("Don\u{2019}t touch vendor"));
    // "İNSTEAD" lowercases to "i̇nstead" (with a combining dot), not to "instead".
    let dotted = "\u{130}NSTEAD OF tabs use spaces";
    assert!(!oracle(dotted));
    assert!(!is_instruction(dotted));
    assert!(is_instruction("INSTEAD OF tabs use spaces"));
}
