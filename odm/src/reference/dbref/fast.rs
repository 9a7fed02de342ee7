//! Reading a polymorphic reference without buffering: when `$ref` comes first (as the DBRef
//! convention orders it, and as odm and the drivers write it), `$id` is read straight into the
//! id type of the target `$ref` names. Any other shape (`$id` first, `$db`, a collection no
//! target uses) is read as a [`DbRef`] and handed to the reference's own rules.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserializer;

use super::DbRef;

/// What `#[derive(PolyRef)]` generates for reading a polymorphic reference.
#[doc(hidden)]
pub trait PolyDecode: Sized {
    /// The variant whose target is stored in `collection`.
    fn variant_of(collection: &str) -> Option<usize>;
    /// The collection of `variant`'s target.
    fn collection_of(variant: usize) -> &'static str;
    /// The reference of `variant`, its id read from `d`.
    fn read_id<'de, D: Deserializer<'de>>(variant: usize, d: D) -> Result<Self, D::Error>;
    /// A DBRef read whole, by the reference's rules (targets, catch-all, `$db`).
    fn from_dbref<E: de::Error>(found: DbRef) -> Result<Self, E>;
    /// The DBRef of a reference, for a `$db` read after its id.
    fn dbref(&self) -> DbRef;
}

/// Used by the generated code: deserializes a polymorphic reference.
#[doc(hidden)]
pub fn deserialize<'de, E: PolyDecode, D: Deserializer<'de>>(d: D) -> Result<E, D::Error> {
    d.deserialize_map(PolyVisitor(PhantomData))
}

/// A DBRef's key, read without allocating.
enum Key {
    Ref,
    Id,
    Db,
    Other,
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a DBRef field")
            }
            fn visit_str<Er: de::Error>(self, v: &str) -> Result<Key, Er> {
                Ok(match v {
                    "$ref" => Key::Ref,
                    "$id" => Key::Id,
                    "$db" => Key::Db,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// `$ref`: the variant it names, or the collection when none does.
struct Collection<E>(PhantomData<E>);

impl<'de, E: PolyDecode> DeserializeSeed<'de> for Collection<E> {
    type Value = Result<usize, String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<E: PolyDecode> Visitor<'_> for Collection<E> {
    type Value = Result<usize, String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a collection name")
    }
    fn visit_str<Er: de::Error>(self, v: &str) -> Result<Self::Value, Er> {
        Ok(E::variant_of(v).ok_or_else(|| v.to_owned()))
    }
}

/// `$id`, read as the id of `variant`'s target.
struct Id<E>(usize, PhantomData<E>);

impl<'de, E: PolyDecode> DeserializeSeed<'de> for Id<E> {
    type Value = E;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<E, D::Error> {
        E::read_id(self.0, d)
    }
}

struct PolyVisitor<E>(PhantomData<E>);

impl<'de, E: PolyDecode> Visitor<'de> for PolyVisitor<E> {
    type Value = E;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a DBRef: a document {$ref: collection, $id: id}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<E, A::Error> {
        let mut target: Option<Result<usize, String>> = None;
        // The reference, when its id was read after `$ref` named a target; else the id as read.
        let mut value: Option<E> = None;
        let mut id: Option<bson::RawBson> = None;
        let mut database: Option<String> = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Ref if target.is_some() => return Err(de::Error::duplicate_field("$ref")),
                Key::Ref => target = Some(map.next_value_seed(Collection::<E>(PhantomData))?),
                Key::Id if value.is_some() || id.is_some() => {
                    return Err(de::Error::duplicate_field("$id"))
                }
                Key::Id => match target {
                    Some(Ok(variant)) => {
                        value = Some(map.next_value_seed(Id::<E>(variant, PhantomData))?);
                    }
                    _ => id = Some(map.next_value::<bson::RawBson>()?),
                },
                Key::Db => database = Some(map.next_value::<String>()?),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let target = target.ok_or_else(|| de::Error::missing_field("$ref"))?;
        if let Some(value) = value {
            return match database {
                None => Ok(value),
                // A `$db` after the id: the reference's rules say whether it is this database.
                Some(db) => E::from_dbref(DbRef {
                    database: Some(db),
                    ..value.dbref()
                }),
            };
        }
        let id = id.ok_or_else(|| de::Error::missing_field("$id"))?;
        E::from_dbref(DbRef {
            collection: match target {
                Ok(variant) => E::collection_of(variant).to_owned(),
                Err(collection) => collection,
            },
            id: bson::Bson::try_from(id).map_err(de::Error::custom)?,
            database,
        })
    }
}
