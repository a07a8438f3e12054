//! The standing-instruction rule (`fold::instructions`) as first written, before the one-pass
//! scan: the reference the scan is tested against (`tests/instruction_scan.rs`) and measured
//! against (`benches/fold.rs`, group `instructions`).

use sjournal::fold::instructions::{MARKERS, MIN_WORDS};
use sjournal::limits::INSTRUCTION_SENTENCES_MAX;

/// The rule's first implementation (before the one-pass scan), the reference.
pub fn oracle(sentence: &str) -> bool {
    fn words(sentence: &str) -> String {
        let mut w = String::with_capacity(sentence.len() + 2);
        w.push(' ');
        let mut space = true;
        for c in sentence.chars() {
            let c = match c {
                '\u{2019}' | '\u{2018}' => '\'',
                c => c,
            };
            if c.is_alphanumeric() || c == '\'' {
                w.extend(c.to_lowercase());
                space = false;
            } else if !space {
                w.push(' ');
                space = true;
            }
        }
        if !space {
            w.push(' ');
        }
        w
    }
    if sentence.trim_end().ends_with('?') {
        return false;
    }
    let w = words(sentence);
    if w.split_whitespace().count() < MIN_WORDS {
        return false;
    }
    MARKERS.iter().any(|m| w.contains(&format!(" {m} ")))
}

/// The sentence split's first implementation (a walk over the characters), the reference.
pub fn oracle_sentences(text: &str) -> Vec<&str> {
    fn push<'a>(out: &mut Vec<&'a str>, s: &'a str) {
        let s = s.trim();
        if !s.is_empty() {
            out.push(s);
        }
    }
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, c) in line.char_indices() {
            if matches!(c, '.' | '!' | '?') {
                let next = bytes.get(i + 1).copied();
                if next.is_none_or(|b| b.is_ascii_whitespace()) {
                    push(&mut out, &line[start..=i]);
                    start = i + 1;
                }
            }
        }
        push(&mut out, &line[start..]);
        if out.len() >= INSTRUCTION_SENTENCES_MAX {
            out.truncate(INSTRUCTION_SENTENCES_MAX);
            break;
        }
    }
    out
}

pub fn oracle_instructions(prompt: &str) -> Vec<&str> {
    oracle_sentences(prompt)
        .into_iter()
        .filter(|s| oracle(s))
        .collect()
}
