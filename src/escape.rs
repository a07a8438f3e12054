//! Making untrusted text safe to print on a terminal. Session ids, paths, working
//! directories, prompts and payload text come from hosts, files and users; printed raw, an
//! ESC sequence can rewrite the screen or the window title, a carriage return can overwrite
//! what was printed before it, and a bidi override can make `ok` read as something else.
//!
//! [`text`] is the one function every human-facing output uses for such fields (`sessions`,
//! `state`, `log`, `tail`, `replay`, `inspect`, `verify`, `repair`, error messages). It
//! escapes control characters (C0 including tab and line breaks, DEL, C1), the bidi
//! formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the Unicode
//! line and paragraph separators, as `\x1b`, `\r`, `\n`, `\t` or `\u{202e}`; everything else
//! is kept, so ordinary non-ASCII text reads as it is. JSON output is never passed through it:
//! it stays exact (JSON escapes what it must itself).

use std::borrow::Cow;
use std::fmt::Write;
use std::path::Path;

/// True for the characters [`text`] escapes.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// `s` with every character [`is_unsafe`] calls unsafe escaped; borrowed when there is none.
pub fn text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_unsafe(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// A path as [`text`] escapes it (non-UTF-8 bytes shown as U+FFFD).
pub fn path(p: &Path) -> String {
    text(&p.to_string_lossy()).into_owned()
}

/// Quotes a path for `sh -c` (the hosts run command strings through a shell).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%=,".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_acts_on() {
        assert_eq!(text("plain é ü 日本"), "plain é ü 日本");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(text("a\x1b]0;pwned\x07b"), "a\\x1b]0;pwned\\x07b");
        assert_eq!(text("ok\rBAD\n"), "ok\\rBAD\\n");
        assert_eq!(text("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(
            text("a\u{202e}cba\u{2066}x\u{2069}"),
            "a\\u{202e}cba\\u{2066}x\\u{2069}"
        );
        assert_eq!(text("\x7f\t"), "\\x7f\\t");
        for c in (0u32..0x11_0000)
            .filter_map(char::from_u32)
            .filter(|&c| is_unsafe(c))
        {
            let mut b = [0; 4];
            let e = text(c.encode_utf8(&mut b));
            assert!(!e.chars().any(is_unsafe), "{c:?} -> {e:?}");
        }
    }
}
