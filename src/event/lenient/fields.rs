//! Field types that never make a payload fail to parse. Hosts change their payloads between
//! versions (a string becomes an object, a number arrives as a string); the fold must keep
//! going whatever arrives, so every typed field is read through one of these: a value of the
//! wrong type reads as absent instead of failing the whole event.
//!
//! Each deserializes with `deserialize_any` and a visitor, so nothing is buffered: strings
//! without escapes are borrowed from the journal's bytes, values of the wrong type are skipped
//! in place.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A string field; anything that is not a string reads as `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Str<'a>(pub Option<Cow<'a, str>>);

/// A number field (integer or float); strings holding a number are accepted too.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Num(pub Option<f64>);

/// A boolean field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bool(pub Option<bool>);

/// Only whether the key was present (with any value, null included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Present(pub bool);

/// An object decoded as `T`; anything else (or an object `T` rejects) reads as `None`.
#[derive(Debug, Clone, Default)]
pub struct Obj<T>(pub Option<T>);

/// The first string of an array of strings (workspace roots).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstStr<'a>(pub Option<Cow<'a, str>>);

impl<'a> Str<'a> {
    pub fn take(&mut self) -> Option<Cow<'a, str>> {
        self.0.take()
    }
    pub fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl Num {
    /// The value as a non-negative integer, when it is one (rounded toward zero).
    pub fn as_u64(&self) -> Option<u64> {
        self.0
            .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1.8e19)
            .map(|v| v as u64)
    }
}

/// Generates visitor methods that read the given JSON types as `None`, skipping arrays and
/// objects in place.
/// A string, borrowed where the input allows, as `Some(Cow)` (a visitor whose value is
/// `Option<Cow<'de, str>>`).
macro_rules! some_cow_str {
    () => {
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Borrowed(v)))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(v.to_owned())))
        }
    };
}

macro_rules! none_for {
    (bool) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> { Ok(None) }
    };
    (int) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> { Ok(None) }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> { Ok(None) }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> { Ok(None) }
    };
    (str) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> { Ok(None) }
    };
    (null) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> { Ok(None) }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> { Ok(None) }
    };
    (seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    };
    (map) => {
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    };
    ($($k:ident),+) => { $( none_for!($k); )+ };
}

fn expecting(f: &mut fmt::Formatter) -> fmt::Result {
    f.write_str("any JSON value")
}

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        expecting(f)
    }
    some_cow_str!();
    none_for!(bool, int, null, seq, map);
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor).map(Str)
    }
}

struct NumVisitor;

impl<'de> Visitor<'de> for NumVisitor {
    type Value = Option<f64>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        expecting(f)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(v).filter(|v| v.is_finite()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
    }
    none_for!(bool, null, seq, map);
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumVisitor).map(Num)
    }
}

struct BoolVisitor;

impl<'de> Visitor<'de> for BoolVisitor {
    type Value = Option<bool>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        expecting(f)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(match v {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        })
    }
    none_for!(int, null, seq, map);
}

impl<'de> Deserialize<'de> for Bool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BoolVisitor).map(Bool)
    }
}

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

struct ObjVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        expecting(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
        // `T` is made of permissive fields and ignores unknown keys, so it accepts any object.
        T::deserialize(de::value::MapAccessDeserializer::new(m)).map(Some)
    }
    none_for!(bool, int, str, null, seq);
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(PhantomData)).map(Obj)
    }
}

struct FirstStrVisitor;

impl<'de> Visitor<'de> for FirstStrVisitor {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        expecting(f)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        let first = s.next_element::<Str<'de>>()?.and_then(|v| v.0);
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(first)
    }
    none_for!(bool, int, str, null, map);
}

impl<'de: 'a, 'a> Deserialize<'de> for FirstStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FirstStrVisitor).map(FirstStr)
    }
}

/// A list named by its entries: strings (the Cline SDK's `commands: ["ls"]`) or objects
/// named by their `path` (`files: [{"path": "a"}]`); also one string, or the JSON text of
/// such a list (the SDK's `preToolUse.parameters` carry each value as JSON text). Keeps the
/// first named entry and how many entries are named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct List<'a> {
    pub first: Option<Cow<'a, str>>,
    pub len: usize,
}

impl List<'_> {
    fn one(s: Cow<'_, str>) -> List<'_> {
        List {
            first: Some(s),
            len: 1,
        }
    }

    /// A string: the JSON text of a list if it reads as one, else one entry.
    fn text(v: &str) -> List<'static> {
        if v.trim_start().starts_with('[') {
            if let Ok(l) = serde_json::from_str::<List<'_>>(v) {
                return List {
                    first: l.first.map(|f| Cow::Owned(f.into_owned())),
                    len: l.len,
                };
            }
        }
        List::one(Cow::Owned(v.to_owned()))
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = List<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        expecting(f)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        let mut l = List::default();
        while let Some(e) = s.next_element::<Entry<'de>>()? {
            if let Some(name) = e.0 {
                l.len += 1;
                l.first.get_or_insert(name);
            }
        }
        Ok(l)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(if v.trim_start().starts_with('[') {
            List::text(v)
        } else {
            List::one(Cow::Borrowed(v))
        })
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(List::text(v))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(List::default())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for List<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor)
    }
}

/// One entry of a [`List`]: a string, or an object's `path`.
struct Entry<'a>(Option<Cow<'a, str>>);

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        expecting(f)
    }
    some_cow_str!();
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut path = None;
        while let Some(k) = m.next_key::<Str<'de>>()? {
            if path.is_none() && k.as_deref() == Some("path") {
                path = m.next_value::<Str<'de>>()?.0;
            } else {
                m.next_value::<IgnoredAny>()?;
            }
        }
        Ok(path)
    }
    none_for!(bool, int, null, seq);
}

impl<'de: 'a, 'a> Deserialize<'de> for Entry<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EntryVisitor).map(Entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct T<'a> {
        #[serde(borrow)]
        s: Str<'a>,
        n: Num,
        b: Bool,
        p: Present,
        #[serde(borrow)]
        w: FirstStr<'a>,
    }

    #[test]
    fn wrong_types_read_as_absent() {
        let t: T =
            serde_json::from_str(r#"{"s":{"x":[1,2]},"n":"x","b":3,"w":"no","z":1}"#).unwrap();
        assert_eq!(
            (t.s.0, t.n.0, t.b.0, t.p.0, t.w.0),
            (None, None, None, false, None)
        );
        let t: T = serde_json::from_str(r#"{"s":"a\"b","n":"25","b":true,"p":null,"w":["/x",2]}"#)
            .unwrap();
        assert_eq!(t.s.0.as_deref(), Some("a\"b"));
        assert_eq!((t.n.0, t.b.0, t.p.0), (Some(25.0), Some(true), true));
        assert_eq!(t.w.0.as_deref(), Some("/x"));
    }

    #[test]
    fn lists_of_commands_or_files() {
        let l = |j: &str| {
            let l: List = serde_json::from_str(j).unwrap();
            (l.first.map(Cow::into_owned), l.len)
        };
        assert_eq!(l(r#"["a", "b"]"#), (Some("a".into()), 2));
        assert_eq!(l(r#"[{"path": "/x", "n": 1}, 3]"#), (Some("/x".into()), 1));
        assert_eq!(l(r#""[\"ls -l\"]""#), (Some("ls -l".into()), 1));
        assert_eq!(l(r#""ls""#), (Some("ls".into()), 1));
        assert_eq!(l(r#""[oops""#), (Some("[oops".into()), 1));
        assert_eq!(l(r#"{"a": 1}"#), (None, 0));
        assert_eq!(l("[]"), (None, 0));
    }

    #[test]
    fn plain_strings_are_borrowed() {
        let raw = r#"{"s":"plain"}"#.to_owned();
        let t: T = serde_json::from_str(&raw).unwrap();
        assert!(matches!(t.s.0, Some(Cow::Borrowed("plain"))));
    }
}
