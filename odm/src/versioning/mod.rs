//! Optimistic concurrency and timestamps: the fields `#[odm(version)]`, `#[odm(created_at)]`
//! and `#[odm(updated_at)]` of a model, kept by every write of the ODM.
//!
//! - An insert stores version 0 and both timestamps (the client's clock, one value for both).
//! - An update (`update_one`, `update_many`, `update_by_id`, `update_document`,
//!   `find_one_and_update`, and the child's side of `reassign`) adds `$inc: {version: 1}` and `$set: {updated_at: now}`, and with
//!   `upsert` `$setOnInsert: {created_at: now}` (an upserted document starts at version 1:
//!   the update that created it counts).
//! - A write of a *loaded* document (`replace_one`, `update_document`) also requires the
//!   stored version to be the loaded one: the filter names it, and a write that matches
//!   nothing is told apart from a missing document by one `find` of the stored version:
//!   [`Error::VersionConflict`] when it differs, nothing written. A replacement stores the
//!   loaded version + 1 and `updated_at: now`, and keeps the stored `created_at` whatever the
//!   struct holds: the filter names the struct's, and when that is not the stored one the
//!   write matches nothing, one `find` reads the stored one and the replacement is sent again
//!   with it (now when nothing is stored: an upsert inserting).
//! - A delete rule that nullifies or pulls a reference (`on_delete = "nullify"`, `"pull"`)
//!   increments the holder's version and sets its `updated_at`: it changes a field the holder's
//!   writers own, and a stale replacement of the holder must be a conflict, not a write that
//!   brings back a reference to a deleted document.
//!   (Every write the ODM sends for itself says whether it changes a field the document's
//!   writers own; this module stamps those, whichever feature sends them.)
//! - The other follow-up writes of the ODM (copies cascaded from their sources, latest-N
//!   arrays recomputed, summaries of deleted documents pulled, a tree's descendants moved,
//!   inverse arrays) change neither the version nor `updated_at`: they keep data derived from
//!   other documents in line, which a writer of the document does not race with (a
//!   replacement retakes its copies from their sources, and a tree's fields are guarded).
//!
//! Timestamps are the writing client's clock (`bson::DateTime::now()`), not the server's: an
//! insert has no `$currentDate`, and one clock for every write keeps `created_at <=
//! updated_at` on one client. The version is stored as a 64-bit integer.

mod maintain;

use bson::{Bson, Document, RawDocumentBuf};
use mongodb::ClientSession;

use crate::{Error, Model, Odm, Result};

pub(crate) use maintain::Kept;

pub use crate::catalog::Stamps;

/// The integer types a version field may have.
#[diagnostic::on_unimplemented(
    message = "a `#[odm(version)]` field is an integer, not `{Self}`",
    label = "not `i32`, `i64`, `u32` or `u64`",
    note = "the version counts the writes of the document: declare it `version: u64` (or `i64`, `i32`, `u32`)"
)]
pub trait VersionNumber {
    /// The value as stored.
    fn to_i64(&self) -> i64;
}

macro_rules! version_number {
    ($($t:ty),*) => { $(
        impl VersionNumber for $t {
            fn to_i64(&self) -> i64 {
                // A version past i64::MAX is never reached by counting writes.
                i64::try_from(*self).unwrap_or(i64::MAX)
            }
        }
    )* };
}
version_number!(i32, i64, u32, u64);

/// The types a `#[odm(created_at)]` or `#[odm(updated_at)]` field may have.
#[diagnostic::on_unimplemented(
    message = "a timestamp field is a `bson::DateTime`, not `{Self}`",
    label = "not `bson::DateTime` or `Option<bson::DateTime>`",
    note = "`#[odm(created_at)]` and `#[odm(updated_at)]` hold BSON dates: declare the field `bson::DateTime` (or `Option<bson::DateTime>`)"
)]
pub trait StampDate {}
impl StampDate for bson::DateTime {}
impl StampDate for Option<bson::DateTime> {}

fn encode_error<T: Model>(e: bson::error::Error) -> Error {
    Error::Encode {
        collection: T::COLLECTION.to_owned(),
        what: "document".to_owned(),
        message: e.to_string(),
    }
}

/// Sets `key` in `doc`, in place when it is there (serde wrote every field), so that the
/// document keeps its order.
fn put(doc: &mut Document, key: &str, value: Bson) {
    doc.insert(key, value);
}

fn rebuild<T: Model>(raw: &mut RawDocumentBuf, edit: impl FnOnce(&mut Document)) -> Result<()> {
    let mut doc = Document::try_from(raw.as_ref()).map_err(encode_error::<T>)?;
    edit(&mut doc);
    *raw = RawDocumentBuf::try_from(&doc).map_err(encode_error::<T>)?;
    Ok(())
}

/// An inserted document: version 0, both timestamps now. Nothing for a model without kept
/// fields (the document is not touched).
pub(crate) fn stamp_insert<T: Model>(doc: &T, raw: &mut RawDocumentBuf) -> Result<()> {
    let stamps = doc.stamps();
    if stamps.is_none() {
        return Ok(());
    }
    let now = Bson::DateTime(bson::DateTime::now());
    rebuild::<T>(raw, |doc| {
        if let Some(v) = stamps.version {
            put(doc, v, Bson::Int64(0));
        }
        for at in [stamps.created_at, stamps.updated_at].into_iter().flatten() {
            put(doc, at, now.clone());
        }
    })
}

/// What a replacement of a loaded document requires of the stored one (see [`stamp_replace`]).
#[derive(Debug, Default)]
pub(crate) struct Replacing {
    /// The loaded version, which the filter names.
    pub(crate) expected: Option<i64>,
    /// The path of `created_at` and the value the filter names: the struct's (null when it
    /// holds none), or the stored one on a second attempt.
    pub(crate) created: Option<(&'static str, Bson)>,
}

/// A replacement of a loaded document: the filter requires the loaded version and the
/// `created_at` the replacement keeps (returned, for the check of a write that missed), the
/// replacement stores the next version, `updated_at: now`, and `created_at` as it is stored:
/// `keep` when given (the stored value, read after a first attempt missed), else the struct's,
/// and now when it holds none (an upsert inserting).
///
/// `created_at` cannot change: a struct whose `created_at` differs from the stored one misses,
/// and [`check_missed_replace`] reads the stored value for a second attempt that keeps it.
pub(crate) fn stamp_replace<T: Model>(
    doc: &T,
    filter: &mut Document,
    raw: &mut RawDocumentBuf,
    keep: Option<Bson>,
) -> Result<Replacing> {
    let stamps = doc.stamps();
    if stamps.is_none() {
        return Ok(Replacing::default());
    }
    let expected = stamps.version.and(doc.document_version());
    if let (Some(path), Some(v)) = (stamps.version, expected) {
        filter.insert(path, Bson::Int64(v));
    }
    let created = match stamps.created_at {
        Some(at) => {
            let given = keep.unwrap_or_else(|| match raw.get(at) {
                Ok(Some(bson::RawBsonRef::DateTime(d))) => Bson::DateTime(d),
                _ => Bson::Null,
            });
            // A date or null: never an operator.
            filter.insert(at, given.clone());
            Some((at, given))
        }
        None => None,
    };
    let now = Bson::DateTime(bson::DateTime::now());
    rebuild::<T>(raw, |doc| {
        if let (Some(path), Some(v)) = (stamps.version, expected) {
            put(doc, path, Bson::Int64(v.saturating_add(1)));
        }
        if let Some(at) = stamps.updated_at {
            put(doc, at, now.clone());
        }
        if let Some((at, given)) = &created {
            let value = match given {
                Bson::Null => now.clone(),
                kept => kept.clone(),
            };
            put(doc, at, value);
        }
    })?;
    Ok(Replacing { expected, created })
}

/// After a replacement that matched nothing: one `find` (by `_id`) of the stored version and
/// `created_at`. [`Error::VersionConflict`] when the version is another; the stored
/// `created_at` when it is not the one the filter named (the replacement is then sent again,
/// keeping it); `None` when the document is gone or something else did not match. Nothing is
/// sent for a model that keeps neither.
pub(crate) async fn check_missed_replace<T: Model>(
    odm: &Odm,
    version: Option<&'static str>,
    replacing: &Replacing,
    id: &Bson,
    session: Option<&mut ClientSession>,
) -> Result<Option<Bson>> {
    let version = version.zip(replacing.expected);
    if version.is_none() && replacing.created.is_none() {
        return Ok(None);
    }
    let mut projection = Document::new();
    if let Some((path, _)) = version {
        projection.insert(path, 1);
    }
    if let Some((at, _)) = &replacing.created {
        projection.insert(*at, 1);
    }
    let coll = odm.own_collection::<T>();
    let action = coll
        .find_one(crate::literal::eq("_id", id.clone()))
        .projection(projection);
    let stored = crate::engine::send!(action, session).map_err(Odm::driver_error::<T>)?;
    let Some(stored) = stored else {
        return Ok(None);
    };
    if let Some((path, expected)) = version {
        let found = stored_version::<T>(&stored, path, id)?;
        if found != expected {
            return Err(Error::VersionConflict {
                collection: T::COLLECTION.to_owned(),
                id: crate::error::show_id(Some(id)),
                expected,
                found,
            });
        }
    }
    if let Some((at, given)) = &replacing.created {
        let kept = match stored.get(at) {
            Ok(Some(bson::RawBsonRef::DateTime(d))) => Bson::DateTime(d),
            _ => Bson::Null,
        };
        if kept != *given {
            return Ok(Some(kept));
        }
    }
    Ok(None)
}

/// An update: refused when it writes a kept field itself (a raw update: typed ones cannot),
/// then `$inc` of the version, `$set` of `updated_at` and, for an upsert, `$setOnInsert` of
/// `created_at`.
pub(crate) fn stamp_update<T: Model>(update: &mut Document, upsert: bool) -> Result<()> {
    let stamps = T::STAMPS;
    // A document an upsert inserts is written in the current schema: it says so, or the next
    // read would take it for version 1 and upgrade it again.
    let schema = T::SCHEMA_VERSION.filter(|_| upsert);
    if stamps.is_none() && schema.is_none() {
        return Ok(());
    }
    if stamps.mixed {
        return Err(Error::Unsupported(format!(
            "this update through the enum of kinds of `{}` may match kinds that keep different version or timestamp fields, which each write must update: update through each kind instead; nothing was written",
            T::COLLECTION
        )));
    }
    let schema_field = schema.map(|_| crate::catalog::VERSION_FIELD);
    for (op, fields) in update.iter() {
        let Bson::Document(fields) = fields else {
            continue;
        };
        for path in fields.keys() {
            let kept = stamps.paths().chain(schema_field).find(|k| {
                path == k
                    || path
                        .strip_prefix(k)
                        .is_some_and(|rest| rest.starts_with('.'))
            });
            if let Some(kept) = kept {
                return Err(Error::Unsupported(format!(
                    "this update of `{}` writes `{path}` with `{op}`, but `{kept}` is kept by odm (a version, timestamp or schema version field): every write updates it; nothing was written",
                    T::COLLECTION
                )));
            }
        }
    }
    let now = Bson::DateTime(bson::DateTime::now());
    let mut add = |op: &str, path: &str, value: Bson| -> Result<()> {
        add_under(update, op, path, value).map_err(|other| {
            Error::Unsupported(format!(
                "this update of `{}` holds `{op}: {other}`, not a document of fields",
                T::COLLECTION
            ))
        })
    };
    if let (Some(v), Some(field)) = (schema, schema_field) {
        add("$setOnInsert", field, Bson::Int32(v.current as i32))?;
    }
    if let Some(v) = stamps.version {
        add("$inc", v, Bson::Int64(1))?;
    }
    if let Some(at) = stamps.updated_at {
        add("$set", at, now.clone())?;
    }
    if let (true, Some(at)) = (upsert, stamps.created_at) {
        add("$setOnInsert", at, now)?;
    }
    Ok(())
}

/// `path: value` under the operator `op` of `update`; `Err` with what `op` holds when that is
/// not a document of fields.
fn add_under(
    update: &mut Document,
    op: &str,
    path: &str,
    value: Bson,
) -> std::result::Result<(), Bson> {
    match update
        .entry(op.to_owned())
        .or_insert_with(|| Document::new().into())
    {
        Bson::Document(d) => {
            d.insert(path, value);
            Ok(())
        }
        other => Err(other.clone()),
    }
}

/// A delete rule's write of the references its holders keep (`stamps`): `$inc` of the version
/// and `$set` of `updated_at`, merged into `update`'s operators (which the rule builds, each a
/// document of fields).
pub(crate) fn stamp_follow_up(update: &mut Document, stamps: Stamps) {
    if let Some(v) = stamps.version {
        let _ = add_under(update, "$inc", v, Bson::Int64(1));
    }
    if let Some(at) = stamps.updated_at {
        let _ = add_under(update, "$set", at, Bson::DateTime(bson::DateTime::now()));
    }
}

/// [`stamp_follow_up`] of a pipeline update: the version incremented and `updated_at` set in
/// its last `$set` stage (one added when it ends with another stage), so that the pipeline
/// stays one command.
pub(crate) fn stamp_pipeline(stages: &mut Vec<Document>, stamps: Stamps) {
    if stamps.version.is_none() && stamps.updated_at.is_none() {
        return;
    }
    if !stages
        .last()
        .is_some_and(|s| s.len() == 1 && s.contains_key("$set"))
    {
        stages.push(bson::doc! { "$set": {} });
    }
    let Some(Ok(set)) = stages.last_mut().map(|s| s.get_document_mut("$set")) else {
        return;
    };
    if let Some(v) = stamps.version {
        set.insert(
            v,
            bson::doc! { "$add": [{ "$ifNull": [format!("${v}"), 0] }, { "$literal": 1_i64 }] },
        );
    }
    if let Some(at) = stamps.updated_at {
        set.insert(
            at,
            bson::doc! { "$literal": Bson::DateTime(bson::DateTime::now()) },
        );
    }
}

/// Whether a write of a loaded document may have met a newer version: it matched nothing, or,
/// upserting, its insert met the stored `_id`.
pub(crate) fn missed(written: &Result<mongodb::results::UpdateResult>, upsert: bool) -> bool {
    match written {
        Ok(r) => r.matched_count == 0 && r.upserted_id.is_none(),
        Err(e) => upsert && e.is_duplicate_key(),
    }
}

/// Requires the loaded version in an update's filter (`update_document`).
pub(crate) fn expect_version<T: Model>(filter: &mut Document, expected: Option<i64>) {
    if let (Some(path), Some(v)) = (T::STAMPS.version, expected) {
        filter.insert(path, Bson::Int64(v));
    }
}

/// After a write of a loaded document at version `expected` matched nothing: one `find` of the
/// stored version (by `_id`), and [`Error::VersionConflict`] when it is another. `Ok` when the
/// document is gone (the write matched nothing, as for an unversioned model) or is at the
/// expected version (something else in the filter did not match).
pub(crate) async fn check_conflict<T: Model>(
    odm: &Odm,
    id: &Bson,
    expected: i64,
    session: Option<&mut ClientSession>,
) -> Result<()> {
    let replacing = Replacing {
        expected: Some(expected),
        created: None,
    };
    check_missed_replace::<T>(odm, T::STAMPS.version, &replacing, id, session)
        .await
        .map(|_| ())
}

/// The version stored at `path` of a document read back: a whole number, or a decode error.
fn stored_version<T: Model>(stored: &bson::RawDocumentBuf, path: &str, id: &Bson) -> Result<i64> {
    match stored.get(path) {
        Ok(Some(bson::RawBsonRef::Int64(v))) => Ok(v),
        Ok(Some(bson::RawBsonRef::Int32(v))) => Ok(i64::from(v)),
        Ok(Some(bson::RawBsonRef::Double(v))) if v.fract() == 0.0 => Ok(v as i64),
        other => Err(Error::Decode {
            collection: T::COLLECTION.to_owned(),
            id: crate::error::show_id(Some(id)),
            path: path.to_owned(),
            message: format!(
                "the version is not an integer: {:?}",
                other.ok().flatten().and_then(|v| Bson::try_from(v).ok())
            ),
        }),
    }
}
