//! Text from journals made safe to show. The page never parses it as markup (every text goes
//! into the document as a text node, never through `innerHTML`), so this is about what a text
//! node would still act on: terminal escapes and other control characters, bidi overrides that
//! reorder what a person reads, line separators. They are shown as the command line shows
//! them, with `escape::text` (`\x1b`, `\u{202e}`), so the page and `sjournal log` read alike.

use serde_json::Value;

/// One line: every unsafe character escaped, line breaks included.
pub fn line(s: &str) -> String {
    crate::escape::text(s).into_owned()
}

/// An optional line.
pub fn opt(s: Option<&str>) -> Option<String> {
    s.map(line)
}

/// A block of lines (an injected context, a recovery block): each line escaped, the line
/// breaks kept as breaks.
pub fn block(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, l) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&crate::escape::text(l));
    }
    out
}

/// At most `max` characters of `s`, as one line, with an ellipsis where it was cut.
pub fn short(s: &str, max: usize) -> String {
    line(&crate::audit::one_line(s, max))
}

/// Every string in `v`, keys included, escaped as [`line`].
pub fn value(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(line(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(value).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (line(&k), value(v))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_shown_not_obeyed() {
        assert_eq!(line("ok\x1b[2Jgone"), "ok\\x1b[2Jgone");
        assert_eq!(line("a\u{202e}txt.exe"), "a\\u{202e}txt.exe");
        assert_eq!(block("one\ntwo\u{2066}\r"), "one\ntwo\\u{2066}\\r");
        let v = value(serde_json::json!({"k\u{202e}": ["\x07", {"x": "\u{9b}"}], "n": 1}));
        assert_eq!(
            v,
            serde_json::json!({"k\\u{202e}": ["\\x07", {"x": "\\u{9b}"}], "n": 1})
        );
        assert_eq!(short("abcdef", 3), "abc…");
    }
}
