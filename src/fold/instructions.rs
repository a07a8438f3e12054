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
//! English only: other languages fall back to the original and latest requests, which the
//! block always shows.

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
        // The ends are ASCII, so never inside a longer character: a byte search finds
        // exactly the characters a walk over them would.
        for i in memchr::memchr3_iter(b'.', b'!', b'?', bytes) {
            let next = bytes.get(i + 1).copied();
            if next.is_none_or(|b| b.is_ascii_whitespace()) {
                push(&mut out, &line[start..=i]);
                start = i + 1;
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

/// Whether a sentence states a standing instruction (rule version 1, see the module docs).
///
/// One pass over the sentence's words, no allocation for ASCII text: each word (a run of
/// alphanumeric characters and apostrophes, curly ones read as `'`) is classified as one of
/// the marker words or none, and a marker matches when its words follow each other. This is
/// exactly "the lowercased words, single-spaced, contain the padded marker"
/// (`tests/support/instruction_oracle.rs` keeps that literal reading, and property tests in
/// `tests/instruction_scan.rs` hold the two equal).
pub fn is_instruction(sentence: &str) -> bool {
    if sentence.trim_end().ends_with('?') {
        return false;
    }
    if sentence.is_ascii() {
        // Every character is one byte, and only ASCII letters and digits are alphanumeric.
        let words = sentence
            .as_bytes()
            .split(|b| !(b.is_ascii_alphanumeric() || *b == b'\''))
            .filter(|w| !w.is_empty());
        return states_rule(words.map(ascii_class));
    }
    let mut lower = String::new();
    let words = sentence
        .split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty());
    states_rule(words.map(|w| classify(w, &mut lower)))
}

/// Whether the words (as [`WORDS`] indices) are at least [`MIN_WORDS`] and hold a marker.
fn states_rule(classes: impl Iterator<Item = u8>) -> bool {
    let mut count = 0usize;
    let mut matched = false;
    // The classes of the last three words, most recent last (`NONE`: not a marker word).
    let mut last = [NONE; 3];
    for class in classes {
        count += 1;
        last = [last[1], last[2], class];
        if !matched && class != NONE {
            matched = SEQUENCES.iter().any(|m| ends_with(&last, m));
        }
        if matched && count >= MIN_WORDS {
            return true;
        }
    }
    false
}

/// A character that belongs to a word: alphanumeric, or an apostrophe (straight or curly).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '\'' | '\u{2019}' | '\u{2018}')
}

/// The distinct words of [`MARKERS`]; a word's class is its index here.
const WORDS: &[&str] = &[
    "never",
    "don't",
    "dont",
    "do",
    "not",
    "always",
    "must",
    "mustn't",
    "should",
    "shouldn't",
    "only",
    "instead",
    "of",
    "stop",
    "from",
    "now",
    "on",
    "make",
    "sure",
    "remember",
    "prefer",
    "avoid",
    "before",
    "you",
];

/// Not a marker word.
const NONE: u8 = u8::MAX;

/// [`MARKERS`] as sequences of [`WORDS`] indices, built once.
static SEQUENCES: std::sync::LazyLock<Vec<Vec<u8>>> = std::sync::LazyLock::new(|| {
    MARKERS
        .iter()
        .map(|m| {
            m.split(' ')
                .map(|w| {
                    let i = WORDS.iter().position(|x| *x == w);
                    i.expect("every marker word is in WORDS") as u8
                })
                .collect()
        })
        .collect()
});

/// Whether the last words (most recent last) end with the marker's words.
fn ends_with(last: &[u8; 3], marker: &[u8]) -> bool {
    marker.len() <= last.len() && last[last.len() - marker.len()..] == *marker
}

/// The word's index in [`WORDS`] once lowercased (curly apostrophes read as `'`), or `NONE`.
/// ASCII words are lowercased on the stack; others into `buf` first (a non-ASCII letter can
/// lowercase to an ASCII one: the Kelvin sign to `k`).
fn classify(word: &str, buf: &mut String) -> u8 {
    if word.is_ascii() {
        return ascii_class(word.as_bytes());
    }
    buf.clear();
    for c in word.chars() {
        match c {
            '\u{2019}' | '\u{2018}' => buf.push('\''),
            c => buf.extend(c.to_lowercase()),
        }
    }
    ascii_class(buf.as_bytes())
}

/// [`classify`] of an ASCII word (any other word is `NONE`): one `match` on its lowercase
/// bytes, which compiles to a switch on the length and a few compares.
fn ascii_class(word: &[u8]) -> u8 {
    let mut lower = [0u8; 9];
    let Some(l) = lower.get_mut(..word.len()) else {
        return NONE;
    };
    l.copy_from_slice(word);
    l.make_ascii_lowercase();
    match &*l {
        b"never" => 0,
        b"don't" => 1,
        b"dont" => 2,
        b"do" => 3,
        b"not" => 4,
        b"always" => 5,
        b"must" => 6,
        b"mustn't" => 7,
        b"should" => 8,
        b"shouldn't" => 9,
        b"only" => 10,
        b"instead" => 11,
        b"of" => 12,
        b"stop" => 13,
        b"from" => 14,
        b"now" => 15,
        b"on" => 16,
        b"make" => 17,
        b"sure" => 18,
        b"remember" => 19,
        b"prefer" => 20,
        b"avoid" => 21,
        b"before" => 22,
        b"you" => 23,
        _ => NONE,
    }
}

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
    fn the_word_match_follows_the_marker_table() {
        for (i, w) in WORDS.iter().enumerate() {
            assert_eq!(ascii_class(w.as_bytes()) as usize, i, "{w}");
            assert_eq!(ascii_class(w.to_uppercase().as_bytes()) as usize, i, "{w}");
        }
        assert_eq!(ascii_class(b"nevermore"), NONE);
        assert_eq!(ascii_class(b"shouldn'ts"), NONE);
        assert_eq!(ascii_class("n\u{e9}ver".as_bytes()), NONE);
        // Every marker is words of the table, no longer than the words the scan remembers.
        for (m, seq) in MARKERS.iter().zip(SEQUENCES.iter()) {
            assert_eq!(seq.len(), m.split(' ').count(), "{m}");
            assert!(seq.len() <= 3, "{m}: the scan keeps the last 3 words");
        }
    }

    #[test]
    fn sentence_split_keeps_paths_and_versions() {
        assert_eq!(
            sentences("Edit src/a.rs to use v1.2 now. Then stop"),
            ["Edit src/a.rs to use v1.2 now.", "Then stop"]
        );
    }
}
