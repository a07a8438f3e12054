//! Helpers that keep the state bounded, deterministically.

use std::collections::BTreeMap;

use crate::limits::NAME_MAX_BYTES;

/// `s` cut to at most `max` bytes at a character boundary; true if it was cut.
pub(crate) fn cut(s: &str, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s.to_owned(), false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (s[..end].to_owned(), true)
}

/// A name usable as a map key: cut to `NAME_MAX_BYTES`.
pub(crate) fn key(s: &str) -> String {
    cut(s, NAME_MAX_BYTES).0
}

/// Adds one to `map[k]`, allocating the key only the first time.
pub(crate) fn bump(map: &mut BTreeMap<String, u64>, k: &str) {
    match map.get_mut(k) {
        Some(n) => *n += 1,
        None => {
            map.insert(key(k), 1);
        }
    }
}

/// Sets `slot` to `v` unless it already holds it (no allocation when unchanged).
pub(crate) fn set(slot: &mut Option<String>, v: Option<&str>) {
    if let Some(v) = v {
        if slot.as_deref() != Some(v) {
            *slot = Some(key(v));
        }
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
    fn evicts_oldest() {
        let mut m: BTreeMap<String, u64> = (0..17u64).map(|i| (format!("k{i:02}"), i)).collect();
        assert_eq!(evict_oldest(&mut m, 16, |v| *v), 3);
        assert_eq!(m.len(), 14);
        assert!(!m.contains_key("k00") && !m.contains_key("k02") && m.contains_key("k03"));
    }
}
