//! Redaction inside JSON: every string value is scanned as the text it holds (after its
//! escapes are undone), a string that itself holds JSON is walked in turn, and a changed
//! string is written back with serde_json's escaping, so the document stays valid JSON and
//! every byte outside the changed strings stays as it came.
//!
//! The walk reads the document with serde_json (`RawValue` slices of the text, never a
//! parser of ours) and goes only into values whose bytes, or whose member name, hold a
//! keyword of some rule: a document without any keyword is not walked at all.

use std::collections::BTreeMap;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{Finding, Redactor};

/// How deep strings holding JSON are followed into.
const NESTED_MAX: usize = 8;

/// An object's members, in order, the values as slices of the text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    out.push((k, m.next_value::<&'de RawValue>()?));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// One walk: the redactor, what it found, and where it is.
pub(super) struct Walk<'r> {
    pub red: &'r Redactor,
    pub found: Vec<Finding>,
    /// JSON Pointer of the value being walked; `#` starts the pointer inside a string that
    /// holds JSON (`/tool_response/stdout#/token`).
    pub path: String,
    nested: usize,
}

impl<'r> Walk<'r> {
    pub fn new(red: &'r Redactor) -> Walk<'r> {
        Walk {
            red,
            found: Vec::new(),
            path: String::new(),
            nested: 0,
        }
    }

    /// `text` (one JSON document) with its secrets replaced; None if nothing changed (or it
    /// is not JSON).
    pub fn document(&mut self, text: &str) -> Option<String> {
        let mut hits = Vec::new();
        self.red.keyword_positions(text.as_bytes(), &mut hits);
        if hits.is_empty() {
            return None;
        }
        hits.sort_unstable();
        let root: &RawValue = serde_json::from_str(text).ok()?;
        let mut edits = BTreeMap::new();
        self.value(text, root, None, &hits, &mut edits);
        if edits.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, (end, with)) in edits {
            out.push_str(&text[at..start]);
            out.push_str(&with);
            at = end;
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    /// Walks one value of `base` (a slice of it); `key` is its member name, if it has one.
    fn value(
        &mut self,
        base: &str,
        raw: &RawValue,
        key: Option<&str>,
        hits: &[usize],
        edits: &mut BTreeMap<usize, (usize, String)>,
    ) {
        let s = raw.get();
        let start = offset(base, s);
        match s.as_bytes().first() {
            Some(b'{') => {
                let Ok(Members(members)) = serde_json::from_str::<Members>(s) else {
                    return;
                };
                // A member's region starts after the previous value, so its name counts.
                let mut from = start + 1;
                for (k, v) in members {
                    let vs = offset(base, v.get());
                    let ve = vs + v.get().len();
                    if any_between(hits, from, ve) {
                        let len = self.path.len();
                        push_token(&mut self.path, &k);
                        self.value(base, v, Some(&k), hits, edits);
                        self.path.truncate(len);
                    }
                    from = ve;
                }
            }
            Some(b'[') => {
                let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(s) else {
                    return;
                };
                for (i, v) in items.into_iter().enumerate() {
                    let vs = offset(base, v.get());
                    if any_between(hits, vs, vs + v.get().len()) {
                        let len = self.path.len();
                        self.path.push('/');
                        self.path.push_str(&i.to_string());
                        self.value(base, v, None, hits, edits);
                        self.path.truncate(len);
                    }
                }
            }
            Some(b'"') => {
                let Ok(text) = serde_json::from_str::<String>(s) else {
                    return;
                };
                if let Some(new) = self.string(&text, key) {
                    let lit = serde_json::to_string(&new).expect("a string serializes");
                    edits.insert(start, (start + s.len(), lit));
                }
            }
            _ => {}
        }
    }

    /// A string's text with its secrets replaced (None: unchanged). Text that is itself a
    /// JSON object or array is walked as a document.
    pub fn string(&mut self, text: &str, key: Option<&str>) -> Option<String> {
        let t = text.trim_start();
        if (t.starts_with('{') || t.starts_with('['))
            && self.nested < NESTED_MAX
            && serde_json::from_str::<IgnoredAny>(text).is_ok()
        {
            let len = self.path.len();
            self.path.push('#');
            self.nested += 1;
            let r = self.document(text);
            self.nested -= 1;
            self.path.truncate(len);
            return r;
        }
        self.red.text(text, key, &self.path, &mut self.found)
    }
}

/// Where `part` (a slice of `base`) starts in it.
fn offset(base: &str, part: &str) -> usize {
    part.as_ptr() as usize - base.as_ptr() as usize
}

/// True if a keyword starts in `[from, to)` (`hits` sorted).
fn any_between(hits: &[usize], from: usize, to: usize) -> bool {
    let i = hits.partition_point(|&h| h < from);
    hits.get(i).is_some_and(|&h| h < to)
}

/// Appends `/token` to a JSON Pointer (RFC 6901: `~` as `~0`, `/` as `~1`).
fn push_token(path: &mut String, token: &str) {
    path.push('/');
    path.push_str(&token.replace('~', "~0").replace('/', "~1"));
}
