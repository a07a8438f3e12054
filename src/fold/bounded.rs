//! Helpers that keep the state bounded, deterministically.

use std::collections::BTreeMap;

use crate::limits::NAME_MAX_BYTES;

/// `s` cut to at most `max` bytes at a character boundary; true if it was cut.
pub(crate) fn cut(s: &str, max: usize) -> (String, bool) {
    let (s, was_cut) = cut_str(s, max);
    (s.to_owned(), was_cut)
}

/// [`cut`], borrowed.
pub(crate) fn cut_str(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

/// [`cut`] in place.
pub(crate) fn cut_in_place(s: &mut String, max: usize) {
    let end = cut_str(s, max).0.len();
    s.truncate(end);
}

/// A name usable as a map key: cut to `NAME_MAX_BYTES`.
pub(crate) fn key(s: &str) -> String {
    cut(s, NAME_MAX_BYTES).0
}

/// Adds one to `map[k]`, allocating the key only the first time.
pub(crate) fn bump(map: &mut BTreeMap<String, u64>, k: &str) {
    // Looked up as stored: a name longer than a key counts under its cut form.
    let k = cut_str(k, NAME_MAX_BYTES).0;
    match map.get_mut(k) {
        Some(n) => *n = n.saturating_add(1),
        None => {
            map.insert(key(k), 1);
        }
    }
}

/// Sets `slot` to `v` (as a [`key`]) unless it already holds it: no allocation when
/// unchanged, and a changed value reuses the slot's buffer where it fits.
pub(crate) fn set(slot: &mut Option<String>, v: Option<&str>) {
    if let Some(v) = v {
        if slot.as_deref() != Some(v) {
            let v = cut_str(v, NAME_MAX_BYTES).0;
            assign_opt(slot, Some(v));
        }
    }
}

/// `*s = v.to_owned()`, in `s`'s buffer where it fits.
pub(crate) fn assign(s: &mut String, v: &str) {
    if s.capacity() < v.len() {
        // Growing a buffer costs more than allocating one of the right size.
        *s = v.to_owned();
    } else {
        s.clear();
        s.push_str(v);
    }
}

/// `*slot = v.map(str::to_owned)`, in `slot`'s buffer where it has one.
pub(crate) fn assign_opt(slot: &mut Option<String>, v: Option<&str>) {
    match (slot.as_mut(), v) {
        (Some(s), Some(v)) => assign(s, v),
        (_, v) => *slot = v.map(str::to_owned),
    }
}

/// When `map` holds more than `max` entries, removes the oldest eighth by `age` (ties by
/// key) and returns how many it removed. Removing in bulk keeps the cost amortized.
pub(crate) fn evict_oldest<V>(
    map: &mut BTreeMap<String, V>,
    max: usize,
    age: impl Fn(&V) -> u64,
) -> u64 {
    if map.len() <= max {
        return 0;
    }
    let mut by_age: Vec<(u64, &String)> = map.iter().map(|(k, v)| (age(v), k)).collect();
    by_age.sort();
    let n = map.len() - max + max / 8;
    let doomed: Vec<String> = by_age.into_iter().take(n).map(|(_, k)| k.clone()).collect();
    for k in &doomed {
        map.remove(k);
    }
    doomed.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_at_char_boundary() {
        assert_eq!(cut("héllo", 2), ("h".to_owned(), true));
        assert_eq!(cut("abc", 3), ("abc".to_owned(), false));
    }

    #[test]
    fn set_keeps_the_key_of_a_new_value() {
        let mut slot = None;
        set(&mut slot, None);
        assert_eq!(slot, None);
        set(&mut slot, Some("a long first value"));
        assert_eq!(slot.as_deref(), Some("a long first value"));
        set(&mut slot, Some("b"));
        assert_eq!(slot.as_deref(), Some("b"));
        set(&mut slot, None);
        assert_eq!(slot.as_deref(), Some("b"));
        let long = "é".repeat(NAME_MAX_BYTES);
        set(&mut slot, Some(&long));
        assert_eq!(slot, Some(key(&long)));
        assert_eq!(slot.as_ref().map(String::len), Some(NAME_MAX_BYTES));
    }

    #[test]
    fn bump_counts_a_long_name_under_its_key() {
        let mut m = BTreeMap::new();
        let long = "x".repeat(NAME_MAX_BYTES + 10);
        bump(&mut m, &long);
        bump(&mut m, &long);
        assert_eq!(m.len(), 1);
        assert_eq!(m[&key(&long)], 2);
    }

    #[test]
    fn assign_opt_is_a_copy() {
        for (old, v) in [
            (None, None),
            (None, Some("a")),
            (Some("bb"), None),
            (Some("bb"), Some("c")),
        ] {
            let mut slot = old.map(str::to_owned);
            assign_opt(&mut slot, v);
            assert_eq!(slot.as_deref(), v);
        }
    }

    #[test]
    fn cut_in_place_is_cut() {
        for (s, max) in [("héllo", 2), ("héllo", 3), ("abc", 3), ("abc", 9), ("", 0)] {
            let mut owned = s.to_owned();
            cut_in_place(&mut owned, max);
            assert_eq!(owned, cut(s, max).0);
        }
    }

    #[test]
    fn evicts_oldest() {
        let mut m: BTreeMap<String, u64> = (0..17u64).map(|i| (format!("k{i:02}"), i)).collect();
        assert_eq!(evict_oldest(&mut m, 16, |v| *v), 3);
        assert_eq!(m.len(), 14);
        assert!(!m.contains_key("k00") && !m.contains_key("k02") && m.contains_key("k03"));
    }
}
