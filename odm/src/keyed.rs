//! Maps whose keys are data (a book's referring domains → counts), stored as documents whose
//! field names are the keys, escaped so that any string is a legal field name and comes back
//! as it was.
//!
//! A key becomes a field name, and a field name is also a path: `google.com` would be stored
//! as `{google: {com: 1}}` by `$inc: {"referrers.google.com": 1}`, and a key starting with `$`
//! would be read as an operator. The seed replaces dots with underscores (`google_com`), which
//! loses the key: `google.com` and `google_com` land on the same counter, and nothing tells
//! which one a stored `google_com` was. [`Keyed`] escapes instead, reversibly: `%` is written
//! `%25`, `.` `%2E`, `$` `%24`, a NUL byte `%00`, and the empty key `%` (which no other key
//! escapes to, since every other `%` is followed by two digits). Every string has exactly one
//! stored form, and reading a stored key that is not such a form is a decode error, so two
//! stored keys never read back as one.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::path::Field;

/// A map stored with its keys escaped: `Keyed<HashMap<String, i64>>` or
/// `Keyed<BTreeMap<String, i64>>`, whose keys are any strings (or types implementing
/// [`MapKey`]). It dereferences to the map; serde writes and reads the keys escaped (see the
/// [module](self)), so inserts, replaces, finds and typed updates of the whole map agree with
/// the path of one entry, [`Field::key`].
///
/// ```
/// # use std::collections::HashMap;
/// let mut referrers = odm::keyed::Keyed::<HashMap<String, i64>>::default();
/// referrers.insert("google.com".to_owned(), 4);
/// let stored = odm::bson::serialize_to_document(&referrers).unwrap();
/// assert_eq!(stored, odm::bson::doc! { "google%2Ecom": 4_i64 });
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keyed<M>(pub M);

impl<M> Keyed<M> {
    /// The map itself.
    pub fn into_inner(self) -> M {
        self.0
    }
}

impl<M> From<M> for Keyed<M> {
    fn from(map: M) -> Self {
        Keyed(map)
    }
}

impl<M> Deref for Keyed<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.0
    }
}

impl<M> DerefMut for Keyed<M> {
    fn deref_mut(&mut self) -> &mut M {
        &mut self.0
    }
}

/// A map type [`Keyed`] can hold: `HashMap` and `BTreeMap`.
pub trait KeyedMap: Default {
    /// The key type.
    type Key;
    /// The value type.
    type Value;
    /// The entries, in the map's order.
    fn entries(&self) -> impl Iterator<Item = (&Self::Key, &Self::Value)>;
    /// Adds an entry.
    fn put(&mut self, key: Self::Key, value: Self::Value);
    /// The number of entries.
    fn count(&self) -> usize;
}

impl<K: Eq + Hash, V, S: BuildHasher + Default> KeyedMap for HashMap<K, V, S> {
    type Key = K;
    type Value = V;
    fn entries(&self) -> impl Iterator<Item = (&K, &V)> {
        self.iter()
    }
    fn put(&mut self, key: K, value: V) {
        self.insert(key, value);
    }
    fn count(&self) -> usize {
        self.len()
    }
}

impl<K: Ord, V> KeyedMap for BTreeMap<K, V> {
    type Key = K;
    type Value = V;
    fn entries(&self) -> impl Iterator<Item = (&K, &V)> {
        self.iter()
    }
    fn put(&mut self, key: K, value: V) {
        self.insert(key, value);
    }
    fn count(&self) -> usize {
        self.len()
    }
}

/// A string-like map key: `String`, `Box<str>`, `Arc<str>`, or a type of yours around a
/// string.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a string-like map key",
    label = "the keys of a map stored as a document become field names",
    note = "a map field addressed by key (`Keyed<HashMap<String, V>>`) has string-like keys: `String`, `Box<str>`, `Arc<str>`, or a type implementing `odm::keyed::MapKey`; store other keys as an array of `{{key, value}}` documents"
)]
pub trait MapKey: Sized {
    /// The key as a string.
    fn as_key(&self) -> &str;
    /// The key from its string.
    fn from_key(key: String) -> Self;
}

impl MapKey for String {
    fn as_key(&self) -> &str {
        self
    }
    fn from_key(key: String) -> Self {
        key
    }
}

impl MapKey for Box<str> {
    fn as_key(&self) -> &str {
        self
    }
    fn from_key(key: String) -> Self {
        key.into_boxed_str()
    }
}

impl MapKey for std::sync::Arc<str> {
    fn as_key(&self) -> &str {
        self
    }
    fn from_key(key: String) -> Self {
        key.into()
    }
}

/// The stored field name of `key`.
pub fn escape_key(key: &str) -> String {
    if key.is_empty() {
        return "%".to_owned();
    }
    let mut out = String::with_capacity(key.len());
    for c in key.chars() {
        match c {
            '%' => out.push_str("%25"),
            '.' => out.push_str("%2E"),
            '$' => out.push_str("%24"),
            '\0' => out.push_str("%00"),
            c => out.push(c),
        }
    }
    out
}

/// The key stored as the field name `stored`; an error for a name [`escape_key`] never
/// writes.
pub fn unescape_key(stored: &str) -> Result<String, String> {
    if stored == "%" {
        return Ok(String::new());
    }
    let mut out = String::with_capacity(stored.len());
    let mut rest = stored;
    while let Some(i) = rest.find(['%', '.', '$', '\0']) {
        out.push_str(&rest[..i]);
        let c = match rest.get(i..i + 3) {
            Some("%25") => '%',
            Some("%2E") => '.',
            Some("%24") => '$',
            Some("%00") => '\0',
            _ => {
                return Err(format!(
                    "the stored key `{stored}` is not an escaped map key (`%` is followed by 25, 2E, 24 or 00; `.`, `$` and NUL are escaped)"
                ))
            }
        };
        out.push(c);
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

impl<M> Serialize for Keyed<M>
where
    M: KeyedMap,
    M::Key: MapKey,
    M::Value: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.count()))?;
        for (k, v) in self.0.entries() {
            map.serialize_entry(&escape_key(k.as_key()), v)?;
        }
        map.end()
    }
}

impl<'de, M> Deserialize<'de> for Keyed<M>
where
    M: KeyedMap,
    M::Key: MapKey,
    M::Value: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<M>(PhantomData<M>);
        impl<'de, M> Visitor<'de> for Entries<M>
        where
            M: KeyedMap,
            M::Key: MapKey,
            M::Value: Deserialize<'de>,
        {
            type Value = Keyed<M>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a document of escaped keys")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Keyed<M>, A::Error> {
                let mut map = M::default();
                while let Some(stored) = access.next_key::<String>()? {
                    let key = unescape_key(&stored).map_err(de::Error::custom)?;
                    map.put(M::Key::from_key(key), access.next_value()?);
                }
                Ok(Keyed(map))
            }
        }
        deserializer.deserialize_map(Entries(PhantomData))
    }
}

impl<Root, M: KeyedMap, Mk> Field<Root, Keyed<M>, Mk> {
    /// The entry of one key, stored at `referrers.<escaped key>`:
    /// `Book::referrers().key("google.com").inc(1)` is `{$inc: {"referrers.google%2Ecom": 1}}`
    /// (with [`UpdateOp::upsert`](crate::ops::UpdateOp::upsert), the seed's counter that adds
    /// the key on first use); `Book::referrers().key("google.com").gt(3)` is
    /// `{"referrers.google%2Ecom": {$gt: 3}}`. The key is escaped, never read as a path or an
    /// operator: any string is a key. Nothing is sent by this call.
    pub fn key<Q>(&self, key: &Q) -> Field<Root, M::Value, Mk>
    where
        M::Key: MapKey + Borrow<Q>,
        Q: AsRef<str> + ?Sized,
    {
        self.below(format!("{}.{}", self.path(), escape_key(key.as_ref())))
    }
}

/// The keys of a plain map are stored as they are: not a path.
impl<Root, K, V, S, Mk> Field<Root, HashMap<K, V, S>, Mk> {
    /// Not available: the keys of a plain `HashMap` are stored as written, so a key holding
    /// `.` or starting with `$` would be a path or an operator. Declare the field
    /// `Keyed<HashMap<..>>`.
    pub fn key<Q: ?Sized>(&self, _key: &Q) -> Field<Root, V, Mk>
    where
        HashMap<K, V, S>: EscapedKeys,
    {
        self.below(String::new())
    }
}

/// The keys of a plain map are stored as they are: not a path.
impl<Root, K, V, Mk> Field<Root, BTreeMap<K, V>, Mk> {
    /// Not available: see the `HashMap` case; declare the field `Keyed<BTreeMap<..>>`.
    pub fn key<Q: ?Sized>(&self, _key: &Q) -> Field<Root, V, Mk>
    where
        BTreeMap<K, V>: EscapedKeys,
    {
        self.below(String::new())
    }
}

/// Implemented by no plain map: the bound that explains why a plain map's entries have no
/// path.
#[diagnostic::on_unimplemented(
    message = "the keys of a plain `{Self}` are stored as written: they are not paths",
    label = "not a map whose entries have paths",
    note = "a key such as `google.com` or `$where` would be read as a path or an operator; declare the field `odm::keyed::Keyed<HashMap<String, V>>` (or `Keyed<BTreeMap<..>>`, with string-like keys): it stores keys escaped (`google%2Ecom`), reads them back as they were, and gives `key(...)` paths",
    note = "keys that are not strings (numbers, dates) are no field names: store such a map as an array of `{{key, value}}` documents"
)]
pub trait EscapedKeys {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_round_trips() {
        for key in [
            "google.com",
            "$where",
            "..",
            "%2E",
            "%",
            "",
            "a\0b",
            "日本.jp",
            "100%",
            "$",
        ] {
            let stored = escape_key(key);
            assert!(!stored.contains('.') && !stored.starts_with('$') && !stored.is_empty());
            assert!(!stored.contains('\0'));
            assert_eq!(unescape_key(&stored).as_deref(), Ok(key), "{stored}");
        }
        assert_eq!(escape_key("google.com"), "google%2Ecom");
        assert_eq!(escape_key("%2E"), "%252E");
    }

    #[test]
    fn stored_keys_that_no_key_escapes_to_are_refused() {
        for stored in ["a.b", "$x", "%2e", "%zz", "50%", "%%"] {
            assert!(unescape_key(stored).is_err(), "{stored}");
        }
    }
}
