//! Decoding stored documents with errors that name collection, `_id` and field path.

use bson::raw::{RawBsonRef, RawDocument};
use bson::{Bson, Document, RawDocumentBuf};
use serde::de::DeserializeOwned;

use crate::error::show_id;
use crate::kind::Kinds;
use crate::Error;

mod upgrade;

/// Decodes one stored document. The fast path decodes straight from the raw bytes; only when
/// that fails is the document decoded again, tracking the path, to say where it went wrong.
///
/// `kinds` are those of a polymorphic model: a document whose discriminator names none of them
/// is reported as [`Error::UnknownKind`] rather than as serde's unknown variant.
#[inline(always)]
pub(crate) fn decode<T: DeserializeOwned>(
    from: &Reading<'_>,
    raw: &RawDocument,
) -> crate::Result<T> {
    if let Some(version) = from.version {
        if let Some(current) = upgrade::upgraded(from.collection, version, raw)? {
            let from = Reading {
                version: None,
                ..*from
            };
            return decode(&from, &current);
        }
    }
    reading_from(from.database, || {
        match bson::deserialize_from_slice::<T>(raw.as_bytes()) {
            Ok(v) => Ok(v),
            Err(first) => Err(from
                .kinds
                .and_then(|k| unknown_kind(from.collection, k, raw))
                .unwrap_or_else(|| explain::<T>(from.collection, raw, first))),
        }
    })
}

/// Where the documents being decoded come from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading<'a> {
    /// The collection, named by errors.
    pub(crate) collection: &'a str,
    /// The database, which a DBRef's `$db` may name.
    pub(crate) database: DbName,
    /// The kinds of a polymorphic model, whose discriminator names one of them.
    pub(crate) kinds: Option<Kinds>,
    /// The model's schema version, whose upgrade an older document goes through first.
    pub(crate) version: Option<crate::catalog::SchemaVersion>,
}

impl<'a> Reading<'a> {
    pub(crate) fn of<T: crate::Model>(odm: &'a crate::Odm) -> Self {
        Reading {
            collection: T::COLLECTION,
            database: odm.database_name,
            kinds: T::entry().kinds,
            version: T::SCHEMA_VERSION,
        }
    }
}

/// The `_id` of a stored document, when it has one that converts.
pub(crate) fn id_of(raw: &RawDocument) -> Option<Bson> {
    raw.get("_id")
        .ok()
        .flatten()
        .and_then(|v| Bson::try_from(v).ok())
}

/// A document a server stage returned with a number of its own added at `key` (a distance, a
/// text score), decoded as `T` without it, and the number: a typed error naming the
/// collection and the document when the number is missing.
pub(crate) fn with_number<T: DeserializeOwned>(
    from: &Reading<'_>,
    raw: &RawDocument,
    key: &str,
) -> crate::Result<(T, f64)> {
    let fail = |path: &str, message: String| Error::Decode {
        collection: from.collection.to_owned(),
        id: show_id(id_of(raw).as_ref()),
        path: path.to_owned(),
        message,
    };
    let mut stripped = RawDocumentBuf::new();
    let mut number = None;
    for element in raw {
        let (name, value) = element.map_err(|e| fail("", e.to_string()))?;
        match name.as_str() == key {
            true => number = Bson::try_from(value).ok().and_then(|v| v.as_f64()),
            false => stripped.append(name, value),
        }
    }
    let document = decode(from, &stripped)?;
    let number = number.ok_or_else(|| fail(key, "the server returned no number here".into()))?;
    Ok((document, number))
}

/// The error for a document whose discriminator names no kind; `None` when it names one (the
/// document is wrong elsewhere).
#[cold]
#[inline(never)]
fn unknown_kind(collection: &str, kinds: Kinds, raw: &RawDocument) -> Option<Error> {
    let value = match raw.get(kinds.field) {
        Ok(Some(RawBsonRef::String(v))) if kinds.knows(v) => return None,
        Ok(Some(v)) => Bson::try_from(v).map_or_else(|_| "?".to_owned(), |b| b.to_string()),
        _ => "<missing>".to_owned(),
    };
    Some(Error::UnknownKind {
        collection: collection.to_owned(),
        id: show_id(id_of(raw).as_ref()),
        field: kinds.field.to_owned(),
        value,
        known: kinds.values.iter().map(|v| (*v).to_owned()).collect(),
    })
}

#[cold]
#[inline(never)]
fn explain<T: DeserializeOwned>(
    collection: &str,
    raw: &RawDocument,
    first: bson::error::Error,
) -> Error {
    let id = id_of(raw);
    let doc = Document::try_from(raw).ok();
    let retried = doc.map(|d| {
        serde_path_to_error::deserialize::<_, T>(bson::de::Deserializer::new(Bson::Document(d)))
            .map_err(Box::new)
    });
    let (path, message) = match retried {
        Some(Err(e)) => {
            let mut segments: Vec<String> = e
                .path()
                .iter()
                .filter_map(|seg| match seg {
                    serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                    serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                    serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                    serde_path_to_error::Segment::Unknown => None,
                })
                .collect();
            let message = plain_message(&e.into_inner());
            // serde reports a missing field at the struct that lacks it; name the field itself.
            if let Some(field) = missing_field(&message) {
                segments.push(field.to_owned());
            }
            let path = if segments.is_empty() {
                ".".to_owned()
            } else {
                segments.join(".")
            };
            (path, message)
        }
        _ => (
            first.key.clone().unwrap_or_else(|| ".".to_owned()),
            plain_message(&first),
        ),
    };
    if let Some((targets, found)) = parse_unknown(&message) {
        return Error::UnknownReference {
            collection: collection.to_owned(),
            id: show_id(id.as_ref()),
            path,
            found,
            targets: targets.into(),
        };
    }
    Error::Decode {
        collection: collection.to_owned(),
        id: show_id(id.as_ref()),
        path,
        message,
    }
}

/// The field named by serde's "missing field `x`" message.
fn missing_field(message: &str) -> Option<&str> {
    let rest = message.split_once("missing field `")?.1;
    rest.split_once('`').map(|(field, _)| field)
}

/// The decoder's own words, without the `BSON error. Kind: ...` wrapping.
fn plain_message(e: &bson::error::Error) -> String {
    e.message.clone().unwrap_or_else(|| e.kind.to_string())
}

/// A database name as decoding knows it: a number standing for the name, so that marking each
/// document's decoding costs two thread-local stores and no comparison of names. Names are
/// numbered once, when a handle is made ([`DbName::of`]), and kept for the life of the process:
/// an application reads from a handful of databases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DbName(std::num::NonZeroU32);

/// The names numbered so far; `DbName(n)` is `NAMES[n - 1]`.
static NAMES: std::sync::Mutex<Vec<Box<str>>> = std::sync::Mutex::new(Vec::new());

fn names() -> std::sync::MutexGuard<'static, Vec<Box<str>>> {
    NAMES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl DbName {
    /// The number of `name`, given it the first time.
    pub(crate) fn of(name: &str) -> DbName {
        let mut names = names();
        let at = match names.iter().position(|n| **n == *name) {
            Some(at) => at,
            None => {
                names.push(name.into());
                names.len() - 1
            }
        };
        let n = u32::try_from(at + 1).expect("fewer than 2^32 database names");
        DbName(std::num::NonZeroU32::new(n).expect("one or more"))
    }

    fn is(self, name: &str) -> bool {
        names()
            .get(self.0.get() as usize - 1)
            .is_some_and(|n| **n == *name)
    }
}

thread_local! {
    /// The database of the document odm is decoding on this thread; `None` outside odm's
    /// decoding.
    static READING_FROM: std::cell::Cell<Option<DbName>> = const { std::cell::Cell::new(None) };
}

/// Puts back the database of an outer decoding, also when the inner one panics.
struct Restore(Option<DbName>);

impl Drop for Restore {
    #[inline(always)]
    fn drop(&mut self) {
        READING_FROM.set(self.0);
    }
}

/// Runs `decode` knowing that the document comes from `database`, so that a DBRef whose `$db`
/// names that database is read as a reference like one without `$db`.
#[inline(always)]
pub(crate) fn reading_from<R>(database: DbName, decode: impl FnOnce() -> R) -> R {
    let _outer = Restore(READING_FROM.replace(Some(database)));
    decode()
}

/// Whether the document being decoded on this thread was read from another database than
/// `name` (`false` outside odm's decoding, where the database is not known).
pub(crate) fn reading_elsewhere(name: &str) -> bool {
    READING_FROM.get().is_some_and(|from| !from.is(name))
}

/// The start of the message of a DBRef to a collection none of the targets uses (made by the
/// generated code through `reference::dbref::unknown_collection`), which decoding turns into
/// [`Error::UnknownReference`](crate::Error::UnknownReference): the targets (collection names,
/// which hold no NUL), a NUL, the collection found.
pub(crate) const UNKNOWN_PREFIX: &str = "odm: DBRef to an unknown collection; targets: ";

/// `(targets, collection found)` of a message made by `unknown_collection`.
pub(crate) fn parse_unknown(message: &str) -> Option<(Vec<String>, String)> {
    let rest = message.strip_prefix(UNKNOWN_PREFIX)?;
    let (targets, found) = rest.split_once('\0')?;
    Some((
        targets.split(", ").map(str::to_owned).collect(),
        found.to_owned(),
    ))
}
