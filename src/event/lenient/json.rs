//! Lenient JSON text: what a host sends that looks valid but that `serde_json` refuses. Two
//! things, both common:
//!
//! - a **lone surrogate escape** such as `\ud83d`: JavaScript strings are UTF-16, and a host
//!   that cuts a string in the middle of an emoji, then `JSON.stringify`s it, writes half of
//!   the pair as an escape. JSON (RFC 8259) allows it; it names no Unicode scalar value.
//! - a **number out of `f64` range** such as `1e400`: JSON sets no limit on numbers.
//!
//! [`text`] is the one function that deals with them: it rewrites a lone surrogate escape to
//! `\ufffd` (the replacement character, same length) and an out-of-range number to a string
//! holding its text (`1e400` → `"1e400"`), and leaves every other byte as it was (so invalid
//! JSON stays invalid). The journal keeps the host's bytes exactly as they came; this
//! rewrite is only what the hook and the fold parse. Numbers whose magnitude is 1e308 or more
//! count as out of range (right at the limit `serde_json`'s fast float parsing and an exact
//! one can disagree).

use std::borrow::Cow;

/// `json` with lone surrogate escapes replaced by `\ufffd` and out-of-range numbers turned into
/// strings; borrowed (unchanged) when there is neither.
pub fn text(json: &str) -> Cow<'_, str> {
    let b = json.as_bytes();
    let mut out = Rewrite {
        src: json,
        out: None,
        copied: 0,
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = string_end(b, i + 1, &mut out),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let token = &json[start..i];
                if may_overflow(token)
                    && token
                        .parse::<f64>()
                        .is_ok_and(|v| v.is_infinite() || v.abs() >= 1e308)
                {
                    out.replace(start, i, &format!("\"{token}\""));
                }
            }
            _ => i += 1,
        }
    }
    out.finish()
}

/// Parses `raw` (UTF-8 JSON) into a value through [`text`]. The hook's capture uses it.
pub fn value(raw: &[u8]) -> Result<serde_json::Value, String> {
    let t = std::str::from_utf8(raw).map_err(|e| format!("not UTF-8: {e}"))?;
    serde_json::from_str(&text(t)).map_err(|e| e.to_string())
}

/// True if a number token can be 1e308 or more: at least 309 digits before any exponent, or
/// an exponent of three digits or more. Cheap, so most numbers are never parsed here.
fn may_overflow(token: &str) -> bool {
    match token.find(['e', 'E']) {
        None => token.len() >= 309,
        Some(at) => {
            let exp = token[at + 1..].trim_start_matches(['+', '-']);
            at >= 309 || exp.len() >= 3
        }
    }
}

/// Scans a string body from `i` (just after its opening quote); returns the index after the
/// closing quote (or the end of the input). Runs of plain characters are skipped with
/// `memchr`, so long strings (tool output) cost little.
fn string_end(b: &[u8], mut i: usize, out: &mut Rewrite<'_>) -> usize {
    while i < b.len() {
        match memchr::memchr2(b'"', b'\\', &b[i..]) {
            Some(n) => i += n,
            None => return b.len(),
        }
        match b[i] {
            b'"' => return i + 1,
            b'\\' if b.get(i + 1) == Some(&b'u') => {
                let Some(v) = hex4(b, i + 2) else {
                    i += 2; // not an escape serde accepts: left for it to refuse
                    continue;
                };
                if (0xd800..0xdc00).contains(&v) {
                    let pair = b.get(i + 6) == Some(&b'\\')
                        && b.get(i + 7) == Some(&b'u')
                        && hex4(b, i + 8).is_some_and(|w| (0xdc00..0xe000).contains(&w));
                    if pair {
                        i += 12;
                        continue;
                    }
                    out.replace(i, i + 6, "\\ufffd");
                } else if (0xdc00..0xe000).contains(&v) {
                    out.replace(i, i + 6, "\\ufffd");
                }
                i += 6;
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    i
}

fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let h = b.get(at..at + 4)?;
    let s = std::str::from_utf8(h).ok()?;
    if !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

/// The rewritten text, built only once something changes.
struct Rewrite<'a> {
    src: &'a str,
    out: Option<String>,
    copied: usize,
}

impl<'a> Rewrite<'a> {
    fn replace(&mut self, start: usize, end: usize, with: &str) {
        let out = self
            .out
            .get_or_insert_with(|| String::with_capacity(self.src.len() + 16));
        out.push_str(&self.src[self.copied..start]);
        out.push_str(with);
        self.copied = end;
    }

    fn finish(self) -> Cow<'a, str> {
        match self.out {
            None => Cow::Borrowed(self.src),
            Some(mut out) => {
                out.push_str(&self.src[self.copied..]);
                Cow::Owned(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn parsed(s: &str) -> Value {
        serde_json::from_str(&text(s)).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert!(serde_json::from_str::<Value>(r#"{"p":"cut \ud83d"}"#).is_err());
        assert_eq!(parsed(r#"{"p":"cut \ud83d"}"#)["p"], "cut \u{fffd}");
        assert_eq!(parsed(r#"{"p":"\ude00 x"}"#)["p"], "\u{fffd} x");
        assert_eq!(parsed(r#"{"p":"\uD83D\uD83D\uDE00"}"#)["p"], "\u{fffd}😀");
        assert_eq!(parsed(r#"{"p":"\ud83d\u0041"}"#)["p"], "\u{fffd}A");
        // A whole pair, an escaped backslash before "ud83d", and keys are left alone.
        assert!(matches!(text(r#"{"p":"\ud83d\ude00"}"#), Cow::Borrowed(_)));
        assert!(matches!(text(r#"{"p":"\\ud83d"}"#), Cow::Borrowed(_)));
        assert_eq!(parsed(r#"{"\ud83d":1}"#)["\u{fffd}"], 1);
    }

    #[test]
    fn out_of_range_numbers_are_kept_as_text() {
        assert!(serde_json::from_str::<Value>(r#"{"n":1e400}"#).is_err());
        assert_eq!(parsed(r#"{"n":1e400,"m":-2E+999}"#)["n"], "1e400");
        assert_eq!(parsed(r#"[-2E+999]"#)[0], "-2E+999");
        assert_eq!(
            parsed(&format!("[{}]", "9".repeat(400)))[0],
            "9".repeat(400)
        );
        for fine in [
            r#"{"n":1e300}"#,
            r#"{"n":1e-400}"#,
            r#"[0e999, 12, -0.5, 1E2]"#,
        ] {
            assert!(matches!(text(fine), Cow::Borrowed(_)), "{fine}");
            assert!(serde_json::from_str::<Value>(fine).is_ok(), "{fine}");
        }
        // Digits inside strings are not numbers.
        assert!(matches!(text(r#"{"s":"1e400"}"#), Cow::Borrowed(_)));
    }

    #[test]
    fn invalid_json_stays_invalid() {
        for bad in [
            "{",
            r#"{"a":}"#,
            r#""\u12""#,
            "[1e400",
            r#"{"a":"\ud83d"#,
            "nul",
        ] {
            assert!(serde_json::from_str::<Value>(&text(bad)).is_err(), "{bad}");
        }
    }
}
