//! Standing instructions: which sentences of a prompt state a rule that should outlive the turn
//! ("Never touch vendor/", "always run `make check` before finishing"). A fixed rule, no
//! model: version `limits::INSTRUCTION_MARKERS_VERSION`, part of the fold (a change to it
//! goes with a `FOLD_VERSION` bump).
//!
//! Rule, version 1:
//!
//! 1. The prompt is split into sentences: at `.`, `!` or `?` followed by whitespace, and at
//!    line breaks. Markdown list markers (`-`, `*`, `1.`) at a line's start are kept.
//! 2. A sentence qualifies when, lowercased (curly apostrophes read as `'`), it contains one
//!    of [`MARKERS`] as whole words, has at least [`MIN_WORDS`] words, and is not a question
//!    (does not end with `?`: "why does it never finish?" states no rule).
//! 3. The sentence is kept verbatim, trimmed.
//!
//! English only (context-recovery §7): other languages fall back to the original and latest
//! requests, which the block always shows.

use crate::limits::INSTRUCTION_SENTENCES_MAX;

/// Marker words and phrases, matched as whole words in the lowercased sentence.
pub const MARKERS: &[&str] = &[
    "never",
    "don't",
    "dont",
    "do not",
    "always",
    "must",
    "mustn't",
    "must not",
    "should not",
    "shouldn't",
    "only",
    "instead of",
    "stop",
    "from now on",
    "make sure",
    "remember",
    "prefer",
    "avoid",
    "before you",
];

/// Sentences shorter than this ("Stop.", "never mind") state no standing rule.
pub const MIN_WORDS: usize = 3;

/// The prompt's sentences, trimmed, in order (at most `INSTRUCTION_SENTENCES_MAX`).
pub fn sentences(text: &str) -> Vec<&str> {
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

fn push<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s);
    }
}

/// The sentence, lowercased, with its words separated by single spaces (punctuation other
/// than apostrophes becomes a separator).
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

/// Whether a sentence states a standing instruction (rule version 1, see the module docs).
pub fn is_instruction(sentence: &str) -> bool {
    if sentence.trim_end().ends_with('?') {
        return false;
    }
    let w = words(sentence);
    if w.split_whitespace().count() < MIN_WORDS {
        return false;
    }
    PADDED.iter().any(|m| w.contains(m.as_str()))
}

/// [`MARKERS`], each between two spaces, as `words` separates them: built once, not per
/// sentence.
static PADDED: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| MARKERS.iter().map(|m| format!(" {m} ")).collect());

/// The standing instructions of a prompt, in order.
pub fn instructions(prompt: &str) -> Vec<&str> {
    sentences(prompt)
        .into_iter()
        .filter(|s| is_instruction(s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_rules_not_requests() {
        let p = "Add a greeting module. Never touch vendor/ and always run `make check` before finishing.";
        assert_eq!(
            instructions(p),
            ["Never touch vendor/ and always run `make check` before finishing."]
        );
        assert!(instructions("go on").is_empty());
        assert!(instructions("also add a farewell").is_empty());
        assert!(
            instructions("Why does it never finish?").is_empty(),
            "questions state no rule"
        );
        assert!(instructions("Stop.").is_empty(), "too short to be a rule");
        assert_eq!(
            instructions("Use tabs.\n- Don’t commit generated files\n- keep it short"),
            ["- Don’t commit generated files"]
        );
        assert_eq!(
            instructions("From now on, prefer `rg` to grep! ok."),
            ["From now on, prefer `rg` to grep!"]
        );
        // Markers match whole words only.
        assert!(instructions("Update the mustache template now").is_empty());
        assert!(instructions("Fix the nonstop loop here").is_empty());
    }

    #[test]
    fn sentence_split_keeps_paths_and_versions() {
        assert_eq!(
            sentences("Edit src/a.rs to use v1.2 now. Then stop"),
            ["Edit src/a.rs to use v1.2 now.", "Then stop"]
        );
    }
}
