//! Decoding maps in bulk. A canonical encoding lists a map's keys in order, so collecting the
//! entries and building the tree once (`BTreeMap::from_iter` bulk-loads sorted input) beats
//! inserting them one by one, which compares every key against a path of the tree. Loading
//! a snapshot is on the hook's path for every event.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

pub(crate) fn map<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Entries<V>(PhantomData<V>);

    impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
        type Value = BTreeMap<String, V>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut v = Vec::with_capacity(m.size_hint().unwrap_or(0).min(4096));
            while let Some(e) = m.next_entry::<String, V>()? {
                v.push(e);
            }
            Ok(v.into_iter().collect())
        }
    }

    d.deserialize_map(Entries(PhantomData))
}
