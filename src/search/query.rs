//! The query language of `sjournal search` and the MCP search tool:
//!
//! - `word` — the word, in the text or a path (every word must match: AND);
//! - `"two words"` — the words in this order;
//! - `-word`, `-"two words"` — not this;
//! - `file:src/loader.rs` — a path that contains these path segments in order, so a
//!   project-relative path matches the absolute path the journal holds (`file:loader.rs`,
//!   `file:src/loader` too); quote a path with spaces: `file:"my dir/a.rs"`;
//! - `tool:Bash` — the tool's name, any case; `failed:yes` / `failed:no`;
//! - `kind:prompt` (see `DocKind`), `status:damaged|rescued|pending|journal`,
//!   `session:ID`.
//!
//! Words are split the way the index splits text (letters and digits; `load_state` is the two
//! words `load state` in a row), lowercased.

use crate::error::{Error, Result};

use super::doc::{DocKind, Status};

/// One condition of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clause {
    /// Words in this order (one word: the word), in the text or the paths.
    Text(Vec<String>),
    /// Path segments in this order.
    File(Vec<String>),
    Tool(String),
    Failed(bool),
    Kind(DocKind),
    Status(Status),
    Session(String),
}

/// A parsed query: what must match, and what must not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub must: Vec<Clause>,
    pub must_not: Vec<Clause>,
}

impl Parsed {
    /// The words to highlight in a snippet.
    pub fn words(&self) -> Vec<String> {
        let mut w: Vec<String> = Vec::new();
        for c in &self.must {
            if let Clause::Text(t) | Clause::File(t) = c {
                for x in t {
                    if !w.contains(x) {
                        w.push(x.clone());
                    }
                }
            }
        }
        w
    }

    /// True if nothing but filters is asked for (then every document that passes them
    /// matches, newest first).
    pub fn only_filters(&self) -> bool {
        !self
            .must
            .iter()
            .any(|c| matches!(c, Clause::Text(_) | Clause::File(_)))
    }
}

/// The words of `s` as the index splits text: runs of letters and digits, lowercased (the
/// index's tokenizer drops words longer than 40 bytes, and so does this).
pub fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && w.len() < 40)
        .map(str::to_lowercase)
        .collect()
}

/// Parses a query (see the module docs).
pub fn parse(q: &str) -> Result<Parsed> {
    let mut out = Parsed::default();
    let chars: Vec<char> = q.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let negated = chars[i] == '-' && chars.get(i + 1).is_some_and(|c| !c.is_whitespace());
        if negated {
            i += 1;
        }
        // field:value, value possibly quoted
        let (field, value, next) = token(&chars, i)?;
        i = next;
        let clause = match field.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None => {
                let w = words(&value);
                if w.is_empty() {
                    continue;
                }
                Clause::Text(w)
            }
            Some("file" | "path") => {
                let w = words(&value);
                if w.is_empty() {
                    return Err(bad(format!("file:{value} names no path")));
                }
                Clause::File(w)
            }
            Some("tool") => Clause::Tool(value.to_lowercase()),
            Some("failed") => match value.to_ascii_lowercase().as_str() {
                "yes" | "true" | "1" => Clause::Failed(true),
                "no" | "false" | "0" => Clause::Failed(false),
                _ => return Err(bad(format!("failed: takes yes or no (got {value:?})"))),
            },
            Some("kind") => Clause::Kind(DocKind::parse(&value).ok_or_else(|| {
                bad(format!(
                    "kind:{value} is not a kind; use one of {}",
                    DocKind::ALL.map(DocKind::as_str).join(", ")
                ))
            })?),
            Some("status") => Clause::Status(Status::parse(&value).ok_or_else(|| {
                bad(format!(
                    "status:{value} is not a status; use journal, damaged, rescued or pending"
                ))
            })?),
            Some("session") => Clause::Session(value),
            Some(other) => {
                // Not a field we know: the words as text (a URL, `a:b` in a log line).
                let w = words(&format!("{other}:{value}"));
                if w.is_empty() {
                    continue;
                }
                Clause::Text(w)
            }
        };
        if negated {
            out.must_not.push(clause);
        } else {
            out.must.push(clause);
        }
    }
    if out.must.is_empty() && out.must_not.is_empty() {
        return Err(bad("the query is empty: give words to look for, e.g. `sjournal search migration`, or a field such as `failed:yes`".into()));
    }
    Ok(out)
}

fn bad(reason: String) -> Error {
    Error::Search {
        reason: format!("search query: {reason}"),
    }
}

/// One token from `i`: `"quoted"`, `field:value`, `field:"quoted value"` or a bare word.
fn token(c: &[char], mut i: usize) -> Result<(Option<String>, String, usize)> {
    if c[i] == '"' {
        let (v, next) = quoted(c, i)?;
        return Ok((None, v, next));
    }
    let start = i;
    while i < c.len() && !c[i].is_whitespace() && c[i] != ':' && c[i] != '"' {
        i += 1;
    }
    if i < c.len() && c[i] == ':' && i > start && i + 1 < c.len() && !c[i + 1].is_whitespace() {
        let field: String = c[start..i].iter().collect();
        if field.chars().all(|ch| ch.is_ascii_alphabetic()) {
            if c[i + 1] == '"' {
                let (v, next) = quoted(c, i + 1)?;
                return Ok((Some(field), v, next));
            }
            let vstart = i + 1;
            let mut j = vstart;
            while j < c.len() && !c[j].is_whitespace() {
                j += 1;
            }
            return Ok((Some(field), c[vstart..j].iter().collect(), j));
        }
    }
    while i < c.len() && !c[i].is_whitespace() {
        i += 1;
    }
    Ok((None, c[start..i].iter().collect(), i))
}

fn quoted(c: &[char], i: usize) -> Result<(String, usize)> {
    let mut j = i + 1;
    while j < c.len() && c[j] != '"' {
        j += 1;
    }
    if j == c.len() {
        return Err(bad("a quote is not closed".into()));
    }
    Ok((c[i + 1..j].iter().collect(), j + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form() {
        let p = parse(r#"migration "cannot find" file:src/loader.rs tool:Bash failed:yes -flaky kind:failure status:damaged session:abc"#).unwrap();
        assert_eq!(
            p.must,
            vec![
                Clause::Text(vec!["migration".into()]),
                Clause::Text(vec!["cannot".into(), "find".into()]),
                Clause::File(vec!["src".into(), "loader".into(), "rs".into()]),
                Clause::Tool("bash".into()),
                Clause::Failed(true),
                Clause::Kind(DocKind::Failure),
                Clause::Status(Status::Damaged),
                Clause::Session("abc".into()),
            ]
        );
        assert_eq!(p.must_not, vec![Clause::Text(vec!["flaky".into()])]);
        assert_eq!(
            p.words(),
            vec!["migration", "cannot", "find", "src", "loader", "rs"]
        );
    }

    #[test]
    fn snake_case_is_a_phrase_and_unknown_fields_are_text() {
        let p = parse("load_state http://x").unwrap();
        assert_eq!(
            p.must,
            vec![
                Clause::Text(vec!["load".into(), "state".into()]),
                Clause::Text(vec!["http".into(), "x".into()]),
            ]
        );
    }

    #[test]
    fn mistakes_are_named() {
        for q in ["", "   ", "failed:maybe", "kind:nope", "\"open", "status:x"] {
            assert!(parse(q).is_err(), "{q}");
        }
        let e = parse("kind:nope").unwrap_err().to_string();
        assert!(e.contains("prompt"), "{e}");
    }

    #[test]
    fn quoted_file() {
        let p = parse(r#"file:"my dir/a.rs""#).unwrap();
        assert_eq!(
            p.must,
            vec![Clause::File(vec![
                "my".into(),
                "dir".into(),
                "a".into(),
                "rs".into()
            ])]
        );
    }
}
