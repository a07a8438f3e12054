//! Counts by name, where almost every name is known in advance: `Counts::by_kind` (the
//! event kinds and the system kinds) and `Counts::by_host` (the hosts). The fold bumps both
//! on every event, so a string-keyed tree search per bump would be paid twice an event. A
//! [`Tally`] keeps the count of each known name in an array slot (the fold indexes it by the
//! enum: [`Tally::bump_slot`]), and any other name (a `sjournal.host` record may name
//! anything) in a map beside it (BENCHMARKS.md, "Speed mechanisms": `fold::tally`).
//!
//! It is the same value as a `BTreeMap<String, u64>` of the names present, and encodes to the
//! same bytes: a map of the names present, in string order, each once. It decodes from
//! whatever that map decodes from (duplicates: the last wins; a zero count is kept as a
//! present name), so the state's encoding and its hash are the map's; a proptest holds the
//! two equal.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use super::bounded::bump;
use crate::event::EventKind;
use crate::format::payload::SYSTEM_KINDS;
use crate::host::Host;

/// The known names of a [`Tally`], in slot order, and the slots in name order. Both are
/// constants, computed at compile time: a hook process pays nothing to set them up.
pub struct Slots {
    names: &'static [&'static str],
    /// Slot numbers sorted by their names (the order a `BTreeMap<String, _>` keeps).
    sorted: &'static [u8],
}

impl Slots {
    /// The slot of `name`, if it is a known name.
    fn slot(&self, name: &str) -> Option<usize> {
        self.sorted
            .binary_search_by(|&i| self.names[i as usize].cmp(name))
            .ok()
            .map(|i| self.sorted[i] as usize)
    }
}

/// `a < b`, as `str`'s `Ord` orders them (bytewise), in a `const fn`.
const fn less(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

/// The slots of `names` sorted by name; fails to compile if two names are equal, or if there
/// are more than a `u64` of presence bits can mark.
const fn sorted<const N: usize>(names: &[&str; N]) -> [u8; N] {
    assert!(N <= 64, "a Tally marks its slots in one u64");
    let mut order = [0u8; N];
    let mut i = 0;
    while i < N {
        order[i] = i as u8;
        i += 1;
    }
    // Insertion sort: a few dozen names, once, at compile time.
    let mut i = 1;
    while i < N {
        let mut j = i;
        while j > 0 && less(names[order[j] as usize], names[order[j - 1] as usize]) {
            let t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    let mut i = 1;
    while i < N {
        assert!(
            less(names[order[i - 1] as usize], names[order[i] as usize]),
            "known names are distinct"
        );
        i += 1;
    }
    order
}

/// The known names of one kind of tally.
pub trait Names: 'static {
    const SLOTS: Slots;
}

/// `Counts::by_kind`'s names: every [`EventKind`] (slot `kind as usize`, `Other` as
/// "other"), then every system kind (slot `EVENT_KINDS + i` for `SYSTEM_KINDS[i]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindNames;

/// `Counts::by_host`'s names: every [`Host`] (slot `host as usize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostNames;

/// Event kinds, `Other` included.
const EVENT_KINDS: usize = EventKind::KNOWN.len() + 1;

pub(crate) const KIND_SLOTS: usize = EVENT_KINDS + SYSTEM_KINDS.len();
pub(crate) const HOST_SLOTS: usize = Host::ALL.len();

const KIND_NAMES: [&str; KIND_SLOTS] = {
    let mut names = [""; KIND_SLOTS];
    let mut i = 0;
    while i < EventKind::KNOWN.len() {
        let k = EventKind::KNOWN[i];
        assert!(k as usize == i, "EventKind's slots follow its declaration");
        names[i] = k.as_str();
        i += 1;
    }
    assert!(EventKind::Other as usize == EVENT_KINDS - 1);
    names[EVENT_KINDS - 1] = EventKind::Other.as_str();
    let mut i = 0;
    while i < SYSTEM_KINDS.len() {
        names[EVENT_KINDS + i] = SYSTEM_KINDS[i];
        i += 1;
    }
    names
};
const KIND_ORDER: [u8; KIND_SLOTS] = sorted(&KIND_NAMES);

const HOST_NAMES: [&str; HOST_SLOTS] = {
    let mut names = [""; HOST_SLOTS];
    let mut i = 0;
    while i < HOST_SLOTS {
        assert!(Host::ALL[i] as usize == i, "Host's slots follow Host::ALL");
        names[i] = Host::ALL[i].as_str();
        i += 1;
    }
    names
};
const HOST_ORDER: [u8; HOST_SLOTS] = sorted(&HOST_NAMES);

impl Names for KindNames {
    const SLOTS: Slots = Slots {
        names: &KIND_NAMES,
        sorted: &KIND_ORDER,
    };
}

impl Names for HostNames {
    const SLOTS: Slots = Slots {
        names: &HOST_NAMES,
        sorted: &HOST_ORDER,
    };
}

/// The slot of an event kind in `Counts::by_kind`.
pub fn kind_slot(kind: EventKind) -> usize {
    kind as usize
}

/// The slot of a system kind (one of `SYSTEM_KINDS`) in `Counts::by_kind`.
pub fn system_slot(kind: &str) -> Option<usize> {
    SYSTEM_KINDS
        .iter()
        .position(|k| *k == kind)
        .map(|i| EVENT_KINDS + i)
}

/// The slot of a host in `Counts::by_host`.
pub fn host_slot(host: Host) -> usize {
    host as usize
}

/// Counts by name: `N` known names in slots, others in a map (see the module's docs).
///
/// Invariants: a known name is never a key of `other`; a slot whose bit in `present` is
/// clear holds 0.
pub struct Tally<K, const N: usize> {
    present: u64,
    counts: [u64; N],
    other: BTreeMap<String, u64>,
    names: PhantomData<K>,
}

pub type KindTally = Tally<KindNames, KIND_SLOTS>;
pub type HostTally = Tally<HostNames, HOST_SLOTS>;

impl<K, const N: usize> Clone for Tally<K, N> {
    fn clone(&self) -> Self {
        Tally {
            present: self.present,
            counts: self.counts,
            other: self.other.clone(),
            names: PhantomData,
        }
    }
}

/// The invariants make equal tallies equal field by field.
impl<K, const N: usize> PartialEq for Tally<K, N> {
    fn eq(&self, o: &Self) -> bool {
        self.present == o.present && self.counts == o.counts && self.other == o.other
    }
}

impl<K: Names, const N: usize> Default for Tally<K, N> {
    fn default() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::SIZED;
        Tally {
            present: 0,
            counts: [0; N],
            other: BTreeMap::new(),
            names: PhantomData,
        }
    }
}

impl<K: Names, const N: usize> Tally<K, N> {
    /// A tally has a slot for each of its names (checked at compile time).
    const SIZED: () = assert!(K::SLOTS.names.len() == N && K::SLOTS.sorted.len() == N);

    /// Adds one to the count of the known name in `slot`.
    #[inline]
    pub fn bump_slot(&mut self, slot: usize) {
        self.counts[slot] += 1;
        self.present |= 1 << slot;
    }

    /// Adds one to `name`'s count (what `bounded::bump` did to the map: a name not yet
    /// counted is kept cut to `NAME_MAX_BYTES`).
    pub fn bump(&mut self, name: &str) {
        match K::SLOTS.slot(name) {
            Some(slot) => self.bump_slot(slot),
            None => bump(&mut self.other, name),
        }
    }

    /// Takes one from `name`'s count, forgetting the name when it reaches 0; nothing if the
    /// name is not counted.
    pub fn take_one(&mut self, name: &str) {
        match K::SLOTS.slot(name) {
            Some(slot) => {
                if self.present & (1 << slot) != 0 {
                    // A count of 0 (only a snapshot written by hand holds one) is forgotten,
                    // not wrapped.
                    let n = &mut self.counts[slot];
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.present &= !(1 << slot);
                    }
                }
            }
            None => {
                if let Some(n) = self.other.get_mut(name) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.other.remove(name);
                    }
                }
            }
        }
    }

    /// `name`'s count, if it is counted.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.entry(name).copied()
    }

    fn entry(&self, name: &str) -> Option<&u64> {
        match K::SLOTS.slot(name) {
            Some(slot) => (self.present & (1 << slot) != 0).then(|| &self.counts[slot]),
            None => self.other.get(name),
        }
    }

    /// Names counted.
    pub fn len(&self) -> usize {
        self.present.count_ones() as usize + self.other.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names counted and their counts, in name order (as the map iterated).
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        let slots = K::SLOTS;
        let mut known = slots
            .sorted
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| self.present & (1 << i) != 0)
            .map(|i| (slots.names[i], self.counts[i]))
            .peekable();
        let mut other = self.other.iter().map(|(k, n)| (k.as_str(), *n)).peekable();
        std::iter::from_fn(move || match (known.peek(), other.peek()) {
            (Some(a), Some(b)) if b.0 < a.0 => other.next(),
            (Some(_), _) => known.next(),
            (None, _) => other.next(),
        })
    }

    /// The counts, in name order.
    pub fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(_, n)| n)
    }

    /// Sets `name`'s count, as inserting it into the map did.
    fn insert(&mut self, name: Key, n: u64) {
        match name {
            Key::Known(slot) => {
                self.counts[slot] = n;
                self.present |= 1 << slot;
            }
            Key::Other(name) => {
                self.other.insert(name, n);
            }
        }
    }
}

impl<K: Names, const N: usize> std::ops::Index<&str> for Tally<K, N> {
    type Output = u64;

    fn index(&self, name: &str) -> &u64 {
        self.entry(name).expect("no count for that name")
    }
}

impl<K: Names, const N: usize> fmt::Debug for Tally<K, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Names, const N: usize> FromIterator<(String, u64)> for Tally<K, N> {
    fn from_iter<I: IntoIterator<Item = (String, u64)>>(entries: I) -> Self {
        let mut t = Tally::default();
        for (name, n) in entries {
            let key = match K::SLOTS.slot(&name) {
                Some(slot) => Key::Known(slot),
                None => Key::Other(name),
            };
            t.insert(key, n);
        }
        t
    }
}

impl<K: Names, const N: usize> Serialize for Tally<K, N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len()))?;
        for (name, n) in self.iter() {
            m.serialize_entry(name, &n)?;
        }
        m.end()
    }
}

/// A key as decoded: a known name's slot, or another name.
enum Key {
    Known(usize),
    Other(String),
}

/// Decodes a key from what a `String` decodes from, allocating only for an unknown name.
struct KeySeed<K>(PhantomData<K>);

impl<K: Names> KeySeed<K> {
    fn key(name: &str) -> Key {
        match K::SLOTS.slot(name) {
            Some(slot) => Key::Known(slot),
            None => Key::Other(name.to_owned()),
        }
    }
}

impl<'de, K: Names> DeserializeSeed<'de> for KeySeed<K> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_string(self)
    }
}

impl<K: Names> Visitor<'_> for KeySeed<K> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(Self::key(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
        Ok(match K::SLOTS.slot(&v) {
            Some(slot) => Key::Known(slot),
            None => Key::Other(v),
        })
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Key, E> {
        match std::str::from_utf8(v) {
            Ok(s) => Ok(Self::key(s)),
            Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(v), &self)),
        }
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Key, E> {
        match String::from_utf8(v) {
            Ok(s) => self.visit_string(s),
            Err(e) => Err(E::invalid_value(
                de::Unexpected::Bytes(&e.into_bytes()),
                &self,
            )),
        }
    }
}

impl<'de, K: Names, const N: usize> Deserialize<'de> for Tally<K, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<K, const N: usize>(PhantomData<K>);

        impl<'de, K: Names, const N: usize> Visitor<'de> for Entries<K, N> {
            type Value = Tally<K, N>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut t = Tally::default();
                while let Some(key) = m.next_key_seed(KeySeed::<K>(PhantomData))? {
                    let n: u64 = m.next_value()?;
                    t.insert(key, n);
                }
                Ok(t)
            }
        }

        d.deserialize_map(Entries(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    //! A `Tally` is checked against the map it replaced, kept here as the oracle: the same
    //! operations (the fold's bumps, a `sjournal.host` record's move of one count) from the
    //! same decoded start must give the same encodings (MessagePack, as snapshots and state
    //! hashes see them; JSON, as `--json` prints them), the same iteration and lookups, and
    //! decode back to the same value.

    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::limits::NAME_MAX_BYTES;

    /// The old representation and its operations, verbatim.
    #[derive(serde::Deserialize)]
    struct Oracle(#[serde(deserialize_with = "crate::fold::bulk::map")] BTreeMap<String, u64>);

    fn oracle_take_one(by_host: &mut BTreeMap<String, u64>, detected: &str) {
        if let Some(n) = by_host.get_mut(detected) {
            *n -= 1;
            if *n == 0 {
                by_host.remove(detected);
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Slot(usize),
        Bump(String),
        TakeOne(String),
    }

    fn known<K: Names>() -> Vec<String> {
        K::SLOTS.names.iter().map(|s| s.to_string()).collect()
    }

    /// Names: known ones, near misses, arbitrary short ones, and ones longer than a key may
    /// be (the map kept them cut, and never found them again).
    fn name<K: Names>() -> impl Strategy<Value = String> {
        let known = known::<K>();
        prop_oneof![
            4 => proptest::sample::select(known.clone()),
            1 => proptest::sample::select(known.clone()).prop_map(|s| format!("{s}x")),
            1 => proptest::sample::select(known).prop_map(|s| s.to_uppercase()),
            2 => "[a-zA-Z.]{0,12}",
            1 => "[a-c]{1,2}".prop_map(|s| s.repeat(NAME_MAX_BYTES)),
        ]
    }

    fn ops<K: Names>(n: usize) -> impl Strategy<Value = Vec<Op>> {
        let slots = K::SLOTS.names.len();
        proptest::collection::vec(
            prop_oneof![
                4 => (0..slots).prop_map(Op::Slot),
                2 => name::<K>().prop_map(Op::Bump),
                1 => name::<K>().prop_map(Op::TakeOne),
            ],
            0..n,
        )
    }

    /// A decoded start: any entries, in any order, duplicates and zero counts included.
    fn start<K: Names>() -> impl Strategy<Value = Vec<(String, u64)>> {
        proptest::collection::vec((name::<K>(), prop_oneof![Just(0u64), 1..5u64]), 0..12)
    }

    /// The entries as a MessagePack map, in the order given (rmp-serde writes what it's given).
    fn msgpack_map(entries: &[(String, u64)]) -> Vec<u8> {
        let mut out = Vec::new();
        rmp::encode::write_map_len(&mut out, entries.len() as u32).unwrap();
        for (k, v) in entries {
            rmp::encode::write_str(&mut out, k).unwrap();
            rmp::encode::write_uint(&mut out, *v).unwrap();
        }
        out
    }

    fn same<K: Names, const N: usize>(t: &Tally<K, N>, m: &BTreeMap<String, u64>) {
        assert_eq!(rmp_serde::to_vec(t).unwrap(), rmp_serde::to_vec(m).unwrap());
        assert_eq!(
            serde_json::to_string(t).unwrap(),
            serde_json::to_string(m).unwrap()
        );
        assert_eq!(format!("{t:?}"), format!("{m:?}"));
        let pairs: Vec<(&str, u64)> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(t.iter().collect::<Vec<_>>(), pairs);
        assert_eq!(t.len(), m.len());
        assert_eq!(t.is_empty(), m.is_empty());
        for (k, v) in m {
            assert_eq!(t.get(k), Some(*v));
            assert_eq!(t[k.as_str()], *v);
        }
        let back: Tally<K, N> = rmp_serde::from_slice(&rmp_serde::to_vec(t).unwrap()).unwrap();
        assert_eq!(&back, t);
        let back: Tally<K, N> = serde_json::from_str(&serde_json::to_string(t).unwrap()).unwrap();
        assert_eq!(&back, t);
    }

    fn run<K: Names, const N: usize>(start: &[(String, u64)], ops: &[Op]) {
        let bytes = msgpack_map(start);
        let mut t: Tally<K, N> = rmp_serde::from_slice(&bytes).unwrap();
        let mut m = rmp_serde::from_slice::<Oracle>(&bytes).unwrap().0;
        same(&t, &m);
        let json = serde_json::to_string(&start.iter().cloned().collect::<BTreeMap<_, _>>());
        let from_json: Tally<K, N> = serde_json::from_str(&json.unwrap()).unwrap();
        assert_eq!(
            from_json,
            start.iter().cloned().collect::<Tally<K, N>>(),
            "JSON decodes as the entries collect"
        );
        for op in ops {
            match op {
                Op::Slot(i) => {
                    t.bump_slot(*i);
                    crate::fold::bounded::bump(&mut m, K::SLOTS.names[*i]);
                }
                Op::Bump(name) => {
                    t.bump(name);
                    crate::fold::bounded::bump(&mut m, name);
                }
                // A count decoded as 0 would underflow in both (as it did in the map).
                Op::TakeOne(name) if m.get(name) == Some(&0) => continue,
                Op::TakeOne(name) => {
                    t.take_one(name);
                    oracle_take_one(&mut m, name);
                }
            }
            same(&t, &m);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn kinds_behave_as_the_map_did(start in start::<KindNames>(), ops in ops::<KindNames>(40)) {
            run::<KindNames, KIND_SLOTS>(&start, &ops);
        }

        #[test]
        fn hosts_behave_as_the_map_did(start in start::<HostNames>(), ops in ops::<HostNames>(40)) {
            run::<HostNames, HOST_SLOTS>(&start, &ops);
        }
    }

    #[test]
    fn slots_are_the_enums_names() {
        for k in EventKind::KNOWN.iter().chain([&EventKind::Other]) {
            assert_eq!(KindNames::SLOTS.slot(k.as_str()), Some(kind_slot(*k)));
        }
        for s in SYSTEM_KINDS {
            assert_eq!(KindNames::SLOTS.slot(s), system_slot(s));
            assert!(system_slot(s).is_some());
        }
        assert_eq!(system_slot("sjournal.nope"), None);
        for h in Host::ALL {
            assert_eq!(HostNames::SLOTS.slot(h.as_str()), Some(host_slot(h)));
        }
        assert_eq!(KindNames::SLOTS.names.len(), KIND_SLOTS);
        assert_eq!(HostNames::SLOTS.names.len(), HOST_SLOTS);
    }

    #[test]
    fn rejects_what_the_map_rejected() {
        // A map with an integer key, a string count, and not a map at all.
        let mut int_key = Vec::new();
        rmp::encode::write_map_len(&mut int_key, 1).unwrap();
        rmp::encode::write_uint(&mut int_key, 1).unwrap();
        rmp::encode::write_uint(&mut int_key, 1).unwrap();
        let mut str_count = Vec::new();
        rmp::encode::write_map_len(&mut str_count, 1).unwrap();
        rmp::encode::write_str(&mut str_count, "claude").unwrap();
        rmp::encode::write_str(&mut str_count, "1").unwrap();
        let array = rmp_serde::to_vec(&[1u8, 2]).unwrap();
        for bytes in [int_key, str_count, array] {
            let old = rmp_serde::from_slice::<Oracle>(&bytes)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let new = rmp_serde::from_slice::<HostTally>(&bytes)
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert!(old.is_err());
            assert_eq!(new, old);
        }
    }
}
