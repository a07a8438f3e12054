//! Redaction of webhook secrets from text that will be journaled or printed (an error, the
//! start of a failed answer).
//!
//! An endpoint that echoes a credential rarely echoes it byte for byte: it lower-cases or
//! upper-cases it, puts it in a `Basic` header as base64, logs it as hex, or URL-encodes it
//! in a redirect. So every secret is looked for in each of these forms:
//!
//! - as it is, in any letter case, each byte also as a `%XX` escape (either case of hex
//!   digits), a space also as `+`, each ASCII byte also as a JSON escape (`\u00XX`, `\/`): this
//!   covers lower-case, upper-case and URL-encoded echoes, and JSON bodies;
//! - as hex of the secret and of its lower- and upper-cased forms, in either case;
//! - as base64 (the standard and the URL-safe alphabet, padded or not) of the secret and of its
//!   lower- and upper-cased forms, at each of the three alignments it can have inside a longer
//!   encoded text (`Basic base64(user:secret)`): the characters that depend on the secret's
//!   bytes alone are matched, and, where the secret ends the encoded data, its last character
//!   and the padding, with the same `%XX` escapes.
//!
//! A form cut off by the end of the text (an answer is kept only up to its first 256 bytes)
//! is redacted as well once at least `WEBHOOK_SECRET_MIN_BYTES` of it are there.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;

use crate::limits::WEBHOOK_SECRET_MIN_BYTES;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Replaces every secret (expanded variable or configured header value), in any of the forms
/// above, in a text that will be journaled or printed.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    patterns: Vec<Pattern>,
}

/// One form of a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    bytes: Vec<u8>,
    /// Letters match in either case (the secret as it is, hex); base64 is case-sensitive.
    fold_case: bool,
}

impl Redactor {
    pub fn new(mut secrets: Vec<String>) -> Redactor {
        secrets.retain(|s| s.len() >= WEBHOOK_SECRET_MIN_BYTES);
        secrets.sort();
        secrets.dedup();
        let mut patterns = Vec::new();
        for s in &secrets {
            patterns.extend(forms(s.as_bytes()));
        }
        patterns.retain(|p| p.bytes.len() >= WEBHOOK_SECRET_MIN_BYTES);
        patterns.sort_by(|a, b| a.bytes.cmp(&b.bytes).then(a.fold_case.cmp(&b.fold_case)));
        patterns.dedup();
        Redactor { patterns }
    }

    /// `text` with every form of every secret replaced by `[redacted]`.
    pub fn clean(&self, text: &str) -> String {
        let b = text.as_bytes();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for p in &self.patterns {
            let mut i = 0;
            while i < b.len() {
                match p.match_at(b, i) {
                    Some(end) => {
                        spans.push((i, end));
                        i = end;
                    }
                    None => i += 1,
                }
            }
        }
        if spans.is_empty() {
            return text.to_owned();
        }
        spans.sort();
        let mut out = Vec::with_capacity(b.len());
        let mut at = 0;
        for (start, end) in spans {
            if end <= at {
                continue;
            }
            if start >= at {
                out.extend_from_slice(&b[at..start]);
                out.extend_from_slice(REDACTED.as_bytes());
            }
            // An overlapping span widens the one already replaced.
            at = end;
        }
        out.extend_from_slice(&b[at..]);
        // Spans start and end on ASCII bytes or on the secret's own character boundaries;
        // lossy decoding only guards against a secret that is not itself text.
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Every form a secret is looked for in.
fn forms(secret: &[u8]) -> Vec<Pattern> {
    let mut cased = vec![
        secret.to_vec(),
        secret.to_ascii_lowercase(),
        secret.to_ascii_uppercase(),
    ];
    cased.dedup();
    let mut out = vec![Pattern {
        bytes: secret.to_vec(),
        fold_case: true,
    }];
    for c in &cased {
        out.push(Pattern {
            bytes: hex(c).into_bytes(),
            fold_case: true,
        });
        for (bare, padded) in [(&STANDARD_NO_PAD, &STANDARD), (&URL_SAFE_NO_PAD, &URL_SAFE)] {
            for align in 0..3 {
                out.push(Pattern {
                    bytes: base64_core(bare, c, align),
                    fold_case: false,
                });
                // When the secret ends the encoded data, its last character (the secret's last
                // bits and zero fill) and the padding go too.
                for engine in [bare, padded] {
                    out.push(Pattern {
                        bytes: base64_to_end(engine, c, align),
                        fold_case: false,
                    });
                }
            }
        }
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The base64 characters that depend on `secret`'s bits alone when it starts `align` bytes
/// into the encoded data: character `i` holds bits `6i..6i+6`, the secret bits
/// `8·align..8·(align+n)`.
fn base64_core(engine: &impl Engine, secret: &[u8], align: usize) -> Vec<u8> {
    let mut data = vec![0u8; align];
    data.extend_from_slice(secret);
    let enc = engine.encode(&data).into_bytes();
    let first = (8 * align).div_ceil(6);
    let end = (8 * (align + secret.len())) / 6;
    enc[first.min(enc.len())..end.min(enc.len())].to_vec()
}

/// The base64 of `secret` from its first whole character to the end of the encoding, when it
/// starts `align` bytes into the encoded data and ends it.
fn base64_to_end(engine: &impl Engine, secret: &[u8], align: usize) -> Vec<u8> {
    let mut data = vec![0u8; align];
    data.extend_from_slice(secret);
    let enc = engine.encode(&data).into_bytes();
    let first = (8 * align).div_ceil(6);
    enc[first.min(enc.len())..].to_vec()
}

fn hex_digit(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

impl Pattern {
    fn same(&self, a: u8, b: u8) -> bool {
        a == b || (self.fold_case && a.eq_ignore_ascii_case(&b))
    }

    /// Where a match of this form starting at `text[i]` ends, if one does. Each byte of the
    /// form may appear as itself or escaped, so the text positions reached after each byte are
    /// a set (kept small: only escapes fork it).
    fn match_at(&self, text: &[u8], i: usize) -> Option<usize> {
        let mut at = vec![i];
        let mut next = Vec::new();
        for (k, &p) in self.bytes.iter().enumerate() {
            next.clear();
            for &j in &at {
                if j == text.len() {
                    // The text ends inside the form: a cut-off echo still leaks what it holds.
                    if k >= WEBHOOK_SECRET_MIN_BYTES {
                        return Some(j);
                    }
                    continue;
                }
                self.step(text, j, p, &mut next);
            }
            if next.is_empty() {
                return None;
            }
            next.sort_unstable();
            next.dedup();
            std::mem::swap(&mut at, &mut next);
        }
        at.into_iter().max()
    }

    /// Pushes every position after one occurrence of byte `p` at `text[j]`.
    fn step(&self, text: &[u8], j: usize, p: u8, next: &mut Vec<usize>) {
        let c = text[j];
        if self.same(c, p) {
            next.push(j + 1);
        }
        if p == b' ' && c == b'+' {
            next.push(j + 1);
        }
        if c == b'%' && j + 2 < text.len() {
            if let (Some(h), Some(l)) = (hex_digit(text[j + 1]), hex_digit(text[j + 2])) {
                if self.same(h << 4 | l, p) {
                    next.push(j + 3);
                }
            }
        }
        if c == b'\\' && j + 1 < text.len() {
            if text[j + 1] == b'/' && p == b'/' {
                next.push(j + 2);
            }
            if text[j + 1] == b'u' && j + 5 < text.len() {
                let v = text[j + 2..j + 6]
                    .iter()
                    .try_fold(0u32, |v, &d| hex_digit(d).map(|d| v << 4 | u32::from(d)));
                if let Some(v) = v.filter(|v| *v < 0x80) {
                    if self.same(v as u8, p) {
                        next.push(j + 6);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_of_each_alignment_is_inside_the_encoding_of_a_longer_text() {
        let secret = b"tok-5f1e9a7c";
        for prefix in ["", "a", "ab", "abc", "user:", "Bearer "] {
            let mut data = prefix.as_bytes().to_vec();
            data.extend_from_slice(secret);
            data.extend_from_slice(b" and more");
            let enc = STANDARD_NO_PAD.encode(&data);
            let core = base64_core(&STANDARD_NO_PAD, secret, prefix.len() % 3);
            let core = String::from_utf8(core).unwrap();
            assert!(core.len() >= 12, "{core}");
            assert!(enc.contains(&core), "{prefix:?}: {core} not in {enc}");
        }
    }

    #[test]
    fn an_overlap_of_two_forms_is_one_redaction() {
        let r = Redactor::new(vec!["abcdef".into(), "defghi".into()]);
        assert_eq!(r.clean("x abcdefghi y"), "x [redacted] y");
    }

    #[test]
    fn redaction_replaces_every_secret() {
        let r = Redactor::new(vec!["tok".into(), "s3cret-value".into(), "s3cret".into()]);
        assert_eq!(
            r.clean("GET https://h/?k=s3cret-value said s3cret, tok"),
            "GET https://h/?k=[redacted] said [redacted], tok"
        );
    }
}
