//! DBRefs: references stored as `{$ref: collection, $id: id}` (and `$db` when the target lives
//! in another database), the convention MongoDB's drivers and tools share. A polymorphic
//! reference (`#[derive(PolyRef)]` on an enum of `Ref<T>` variants) is always stored as one,
//! since its target's collection is part of the value; a plain `Ref<T>` is when asked with
//! `#[serde(with = "odm::dbref")]`.
//!
//! odm writes `$ref` then `$id`, never `$db`. It reads the fields in any order and ignores
//! fields other than those three. A DBRef naming a database is not loaded (references are
//! loaded from the database odm is connected to): it is a decoding error, or goes to a
//! polymorphic reference's catch-all ([`DbRef`]) when there is one.
//!
//! One stored DBRef is matched by its fields (`{path.$ref: c, path.$id: id}`, in any order);
//! an element of an array of DBRefs by equality with the whole DBRef as odm writes it, which
//! compares fields in order (two conditions on the dotted fields could be met by two
//! different elements).

use std::fmt;

use bson::{Bson, Document};
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::Model;
use crate::reference::Ref;

mod fast;

pub use fast::{deserialize as poly_deserialize, PolyDecode};

/// A DBRef of any collection, as stored: what a polymorphic reference's catch-all variant
/// (`Other(DbRef)`) holds for a collection none of its targets uses.
#[derive(Debug, Clone, PartialEq)]
pub struct DbRef {
    /// `$ref`: the collection.
    pub collection: String,
    /// `$id`: the referenced document's `_id`.
    pub id: Bson,
    /// `$db`: the database, when the reference names one.
    pub database: Option<String>,
}

impl DbRef {
    /// The stored document: `{$ref, $id}`, then `$db` when set (the order the DBRef
    /// convention fixes, and which a whole-value match compares).
    pub fn to_document(&self) -> Document {
        let mut d = Document::new();
        d.insert("$ref", self.collection.clone());
        d.insert("$id", self.id.clone());
        if let Some(db) = &self.database {
            d.insert("$db", db.clone());
        }
        d
    }

    /// The typed reference this DBRef holds, when it names `T`'s collection (and no other
    /// database).
    pub fn to_ref<T: Model>(&self) -> Option<Ref<T>> {
        if self.collection != T::COLLECTION || self.is_elsewhere() {
            return None;
        }
        bson::deserialize_from_bson(self.id.clone())
            .ok()
            .map(Ref::new)
    }
}

impl Serialize for DbRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("DBRef", 2 + usize::from(self.database.is_some()))?;
        m.serialize_field("$ref", &self.collection)?;
        m.serialize_field("$id", &self.id)?;
        if let Some(db) = &self.database {
            m.serialize_field("$db", db)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for DbRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(DbRefVisitor)
    }
}

struct DbRefVisitor;

impl<'de> Visitor<'de> for DbRefVisitor {
    type Value = DbRef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a DBRef: a document {$ref: collection, $id: id}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DbRef, A::Error> {
        let (mut collection, mut id, mut database) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "$ref" => collection = Some(map.next_value::<String>()?),
                // As raw BSON: an ObjectId read as `Bson` goes through its hex form.
                "$id" => {
                    let raw = map.next_value::<bson::RawBson>()?;
                    id = Some(Bson::try_from(raw).map_err(de::Error::custom)?);
                }
                "$db" => database = Some(map.next_value::<String>()?),
                // Other fields are allowed by the convention and kept by nobody here.
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        Ok(DbRef {
            collection: collection.ok_or_else(|| de::Error::missing_field("$ref"))?,
            id: id.ok_or_else(|| de::Error::missing_field("$id"))?,
            database,
        })
    }
}

use crate::decode::UNKNOWN_PREFIX;

/// Used by the generated code: the error for a DBRef naming none of `targets`.
#[doc(hidden)]
pub fn unknown_collection<E: de::Error>(found: &DbRef, targets: &[&str]) -> E {
    E::custom(format!(
        "{UNKNOWN_PREFIX}{}\0{}",
        targets.join(", "),
        found.collection
    ))
}

impl DbRef {
    /// Whether the DBRef names another database than the one its document was read from. (Read
    /// outside odm, where the database is not known, a `$db` is taken as this database.)
    pub fn is_elsewhere(&self) -> bool {
        let Some(db) = &self.database else {
            return false;
        };
        crate::decode::reading_elsewhere(db)
    }
}

/// Used by the generated code: the typed reference of a DBRef that names `T`'s collection.
#[doc(hidden)]
pub fn typed<T: Model, E: de::Error>(found: DbRef) -> Result<Ref<T>, E> {
    if found.is_elsewhere() {
        let db = found.database.unwrap_or_default();
        return Err(E::custom(format!(
            "the DBRef names the database `{db}`: references are loaded from the database odm is connected to"
        )));
    }
    bson::deserialize_from_bson::<T::Id>(found.id)
        .map(Ref::new)
        .map_err(|e| E::custom(format!("`$id` of a DBRef to `{}`: {e}", T::COLLECTION)))
}

/// Used by the generated code: the DBRef of `r`.
#[doc(hidden)]
pub fn dbref_of<T: Model>(r: &Ref<T>) -> DbRef {
    DbRef {
        collection: T::COLLECTION.to_owned(),
        id: crate::path::encode_value(r.id()).unwrap_or(Bson::Null),
        database: None,
    }
}

/// Used by the generated code: writes `r` as a DBRef to `T`'s collection.
#[doc(hidden)]
pub fn serialize_ref<T: Model, S: Serializer>(r: &Ref<T>, s: S) -> Result<S::Ok, S::Error> {
    if let Some(doc) = r.get().filter(|_| super::expanding()) {
        return doc.serialize(s);
    }
    let mut m = s.serialize_struct("DBRef", 2)?;
    m.serialize_field("$ref", T::COLLECTION)?;
    m.serialize_field("$id", r.id())?;
    m.end()
}

/// `Ref<T>`, `Option<Ref<T>>` and `Vec<Ref<T>>` stored as DBRefs:
/// `#[serde(with = "odm::dbref")]` on a `#[reference]` field. The field's typed path, its index,
/// its delete rule and populate then use `field.$id` (and `$ref`), and other drivers and tools
/// read it as the standard DBRef.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored as a DBRef",
    label = "`odm::dbref` stores a `#[reference]`: `Ref<T>`, `Option<Ref<T>>` or `Vec<Ref<T>>`"
)]
pub trait DbRefField: Sized {
    #[doc(hidden)]
    fn serialize_dbref<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
    #[doc(hidden)]
    fn deserialize_dbref<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

/// A `Ref<T>` as a DBRef, for serde's `serialize_with`.
struct AsDbRef<'a, T: Model>(&'a Ref<T>);

impl<T: Model> Serialize for AsDbRef<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_ref(self.0, s)
    }
}

/// A DBRef read as a `Ref<T>`, refusing another collection.
struct FromDbRef<T: Model>(Ref<T>);

impl<'de, T: Model> Deserialize<'de> for FromDbRef<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let found = DbRef::deserialize(d)?;
        if found.collection != T::COLLECTION {
            return Err(unknown_collection(&found, &[T::COLLECTION]));
        }
        typed::<T, D::Error>(found).map(FromDbRef)
    }
}

impl<T: Model> DbRefField for Ref<T> {
    fn serialize_dbref<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_ref(self, s)
    }
    fn deserialize_dbref<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FromDbRef::<T>::deserialize(d).map(|r| r.0)
    }
}

impl<T: Model> DbRefField for Option<Ref<T>> {
    fn serialize_dbref<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_ref().map(AsDbRef).serialize(s)
    }
    fn deserialize_dbref<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<FromDbRef<T>>::deserialize(d).map(|o| o.map(|r| r.0))
    }
}

impl<T: Model> DbRefField for Vec<Ref<T>> {
    fn serialize_dbref<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(AsDbRef))
    }
    fn deserialize_dbref<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<FromDbRef<T>>::deserialize(d).map(|v| v.into_iter().map(|r| r.0).collect())
    }
}

/// `serialize_with` of `#[serde(with = "odm::dbref")]`.
pub fn serialize<R: DbRefField, S: Serializer>(value: &R, s: S) -> Result<S::Ok, S::Error> {
    value.serialize_dbref(s)
}

/// `deserialize_with` of `#[serde(with = "odm::dbref")]`.
pub fn deserialize<'de, R: DbRefField, D: Deserializer<'de>>(d: D) -> Result<R, D::Error> {
    R::deserialize_dbref(d)
}

/// An enum of references to several models, stored as DBRefs: `#[derive(PolyRef)]` on an enum
/// whose variants each hold a `Ref<T>` (and at most one `DbRef`, the catch-all). Implemented by
/// the derive, with the serde impls.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a polymorphic reference",
    label = "`#[reference(poly)]` holds an enum deriving `PolyRef` (or an `Option`/`Vec` of one)",
    note = "declare the targets as an enum: `#[derive(PolyRef)] enum Subject {{ Book(Ref<Book>), Author(Ref<Author>) }}`"
)]
pub trait PolyRef: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The enum's name, for messages.
    const NAME: &'static str;
    /// The collection of each target, in the order of the variants.
    const TARGETS: &'static [&'static str];

    /// The stored DBRef, for filters.
    #[doc(hidden)]
    fn to_dbref(&self) -> DbRef;
}

/// The target of the variant `I` of a polymorphic reference, a model; implemented by the
/// derive, so that a target that is not a model is reported once, at the variant.
#[doc(hidden)]
pub trait PolyTarget<const I: usize> {
    type Model: Model;
}

/// The model of the variant `I` of `E`.
#[doc(hidden)]
pub type TargetOf<E, const I: usize> = <E as PolyTarget<I>>::Model;

/// Used by the generated code: [`serialize_ref`] of the variant `I`. (Generic over the
/// variant rather than the model, so that a target that is not a model is reported once.)
#[doc(hidden)]
pub fn serialize_target<E: PolyTarget<I>, const I: usize, S: Serializer>(
    r: &Ref<TargetOf<E, I>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    serialize_ref(r, s)
}

/// Used by the generated code: [`typed`] of the variant `I`.
#[doc(hidden)]
pub fn typed_target<E: PolyTarget<I>, const I: usize, Er: de::Error>(
    found: DbRef,
) -> Result<Ref<TargetOf<E, I>>, Er> {
    typed::<TargetOf<E, I>, Er>(found)
}

/// Used by the generated code: the reference of the variant `I`, its id read from `d`.
#[doc(hidden)]
pub fn read_target<'de, E: PolyTarget<I>, const I: usize, D: Deserializer<'de>>(
    d: D,
) -> Result<Ref<TargetOf<E, I>>, D::Error> {
    <<TargetOf<E, I> as Model>::Id as Deserialize>::deserialize(d).map(Ref::new)
}

/// Used by the generated code: [`dbref_of`] of the variant `I`.
#[doc(hidden)]
pub fn dbref_of_target<E: PolyTarget<I>, const I: usize>(r: &Ref<TargetOf<E, I>>) -> DbRef {
    dbref_of(r)
}

/// Used by the generated code: the collection of the variant `I`'s model.
#[doc(hidden)]
pub const fn target_collection<E: PolyTarget<I>, const I: usize>() -> &'static str {
    <TargetOf<E, I> as Model>::COLLECTION
}

/// `T` is one of the targets of the polymorphic reference `Self`; implemented by the derive.
#[diagnostic::on_unimplemented(
    message = "`{T}` is not a target of `{Self}`",
    label = "`{Self}` has no variant holding `Ref<{T}>`",
    note = "the targets of a polymorphic reference are the models its variants hold"
)]
pub trait PolyHas<T> {}

/// The type a DBRef-stored reference field's typed path holds instead of `Ref<T>`
/// (`Option<Stored<Ref<T>>>`, `Vec<Stored<Ref<T>>>` for the other shapes): a `Ref<T>` given
/// to its filters and updates is encoded as the DBRef `{$ref, $id}`, as stored.
#[derive(Debug, Clone)]
pub struct Stored<R>(pub R);

impl<T: Model> Serialize for Stored<Ref<T>> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_ref(&self.0, s)
    }
}

fn dbref_bson<T: Model>(r: &Ref<T>) -> Result<Bson, bson::error::Error> {
    bson::serialize_to_bson(&Stored(r.clone()))
}

impl<T: Model> crate::path::Value<Stored<Ref<T>>> for Ref<T> {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        dbref_bson(self)
    }
}

impl<T: Model> crate::path::Value<Stored<Ref<T>>> for &Ref<T> {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        dbref_bson(self)
    }
}

impl<T: Model> crate::path::Value<Option<Stored<Ref<T>>>> for Ref<T> {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        dbref_bson(self)
    }
}

impl<T: Model> crate::path::Value<Option<Stored<Ref<T>>>> for Option<Ref<T>> {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        match self {
            Some(r) => dbref_bson(r),
            None => Ok(Bson::Null),
        }
    }
}

impl<T: Model> crate::path::Value<Vec<Stored<Ref<T>>>> for Vec<Ref<T>> {
    fn to_bson(&self) -> Result<Bson, bson::error::Error> {
        self.iter()
            .map(dbref_bson)
            .collect::<Result<Vec<_>, _>>()
            .map(Bson::Array)
    }
}

/// The filter that finds the documents whose DBRef at `path` (to `collection`) names `id`:
/// `{path.$ref, path.$id}` for one reference; for an array, an element that is such a DBRef
/// (see [`array_holds`]). Either way the DBRef's fields may come in any order, with others.
pub(crate) fn refers_to_filter(path: &str, many: bool, collection: &str, id: Bson) -> Document {
    if many {
        return array_holds(path, collection, vec![id], None);
    }
    let mut d = crate::literal::eq(&format!("{path}.$ref"), collection.into());
    d.extend(crate::literal::eq(&format!("{path}.$id"), id));
    d
}

/// The aggregation expression that holds when `$$e` is a DBRef to `collection` naming one of
/// `ids` (and, with `database`, whose `$db` is absent or names it), whatever the order of its
/// fields and whatever other fields it has; false for an element that is not a document.
/// Every value goes through `$literal`: an id such as `"$x"` is a value, not a field path.
pub(crate) fn element_is(collection: &str, ids: Vec<Bson>, database: Option<&str>) -> Document {
    let get = |f: &str| bson::doc! { "$getField": { "field": { "$literal": f }, "input": "$$e" } };
    let mut all = vec![
        Bson::Document(bson::doc! { "$eq": [get("$ref"), { "$literal": collection }] }),
        Bson::Document(bson::doc! { "$in": [get("$id"), { "$literal": ids }] }),
    ];
    if let Some(db) = database {
        all.push(Bson::Document(bson::doc! {
            "$in": [{ "$ifNull": [get("$db"), null] }, { "$literal": [null, db] }]
        }));
    }
    bson::doc! { "$cond": [{ "$eq": [{ "$type": "$$e" }, "object"] }, { "$and": all }, false] }
}

/// The documents whose array of DBRefs at `path` holds an element naming one of `ids` in
/// `collection` ([`element_is`]): the dotted fields first (`{path.$ref, path.$id: {$in}}`,
/// which the index on them serves but which two different elements could meet together),
/// then `$expr` testing each element whole. MongoDB compares an element with a document field
/// by field in order, so an equality with the DBRef odm writes would miss one written by
/// another tool with `$id` first or with more fields; and `$elemMatch: {$ref: ..}` is refused
/// by some servers as an unknown operator.
pub(crate) fn array_holds(
    path: &str,
    collection: &str,
    ids: Vec<Bson>,
    database: Option<&str>,
) -> Document {
    let mut d = crate::literal::eq(&format!("{path}.$ref"), collection.into());
    d.extend(crate::literal::is_in(&format!("{path}.$id"), ids.clone()));
    let field = format!("${path}");
    let items = bson::doc! { "$cond": [{ "$isArray": field.as_str() }, field.as_str(), []] };
    d.insert(
        "$expr",
        bson::doc! { "$anyElementTrue": [{ "$map": {
            "input": items,
            "as": "e",
            "in": element_is(collection, ids, database),
        } }] },
    );
    d
}

/// The pipeline update that removes from the array at `path` every element naming one of
/// `ids` in `collection` ([`element_is`]), whatever its fields' order: a `$pull` cannot name
/// `$ref` in its condition (an unknown top-level operator on MongoDB), and a `$pullAll` of the
/// DBRef odm writes would miss the others. One `$set` stage, to which the holder's version and
/// `updated_at` are added when it keeps them.
pub(crate) fn pull_pipeline(
    path: &str,
    collection: &str,
    ids: Vec<Bson>,
    database: Option<&str>,
) -> Vec<Document> {
    let field = format!("${path}");
    let mut set = Document::new();
    set.insert(
        path,
        bson::doc! { "$filter": {
            "input": field.as_str(),
            "as": "e",
            "cond": { "$not": [element_is(collection, ids, database)] },
        } },
    );
    vec![bson::doc! { "$set": set }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{reading_from, DbName};

    fn elsewhere_ref(db: &str) -> DbRef {
        DbRef {
            collection: "books".to_owned(),
            id: Bson::Int32(1),
            database: Some(db.to_owned()),
        }
    }

    #[test]
    fn the_database_read_from_counts_only_while_odm_decodes() {
        let here = elsewhere_ref("library");
        let there = elsewhere_ref("archive");
        let (library, archive) = (DbName::of("library"), DbName::of("archive"));
        assert_eq!(DbName::of("library"), library, "numbered once");
        reading_from(library, || {
            assert!(!here.is_elsewhere());
            assert!(there.is_elsewhere());
        });
        // Outside odm's decoding the database is not known: no `$db` is elsewhere.
        assert!(!there.is_elsewhere());
        reading_from(archive, || {
            assert!(!there.is_elsewhere());
            assert!(here.is_elsewhere());
            // A decoding inside a decoding leaves the outer one under way.
            reading_from(library, || assert!(there.is_elsewhere()));
            assert!(here.is_elsewhere());
        });
        assert!(!here.is_elsewhere());
    }

    #[test]
    fn a_decoding_that_panics_leaves_the_outer_one_under_way() {
        let here = elsewhere_ref("library");
        reading_from(DbName::of("archive"), || {
            let inner = std::panic::catch_unwind(|| {
                reading_from(DbName::of("library"), || {
                    panic!("a Deserialize impl panicked")
                })
            });
            assert!(inner.is_err());
            assert!(here.is_elsewhere(), "the outer decoding's database is back");
        });
        assert!(!here.is_elsewhere());
    }
}
