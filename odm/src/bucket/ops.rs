//! Adding, removing and reading the items of buckets.

use std::cmp::Ordering;
use std::marker::PhantomData;

use bson::oid::ObjectId;
use bson::{doc, Bson, DateTime, Document, RawDocumentBuf};
use mongodb::options::FindOptions;
use mongodb::ClientSession;
use serde::Serialize;

use super::{show, Bucket, BucketSpec};
use crate::decode::{decode, Reading};
use crate::engine::{find_decoded, Effect, InSession, Own};
use crate::path::Value;
use crate::{Error, Odm, Result};

/// A value encoded when the operation is built, its error returned when it runs.
type EncodeResult = std::result::Result<Bson, bson::error::Error>;

/// The most buckets one round of [`Buckets::newest`] asks for.
const MAX_ROUND: i64 = 100;

/// Bucket operations on the handle.
impl Odm {
    /// The items of the bucket model `B` (`#[odm(bucket(...))]`): [`Buckets::add`],
    /// [`Buckets::remove`], [`Buckets::newest`]. Sends nothing.
    pub fn buckets<B: Bucket>(&self) -> Buckets<'_, B> {
        Buckets {
            odm: self,
            _bucket: PhantomData,
        }
    }
}

/// The bucket operations of the model `B`, from [`Odm::buckets`]. A copyable handle: each
/// operation takes it by value, so that its future borrows only the [`Odm`]. Each returns an
/// [`InSession`]: `.await` it, or `.session(&mut session).await` to run its commands in the
/// caller's session and transaction.
#[derive(Debug)]
pub struct Buckets<'a, B> {
    odm: &'a Odm,
    _bucket: PhantomData<fn() -> B>,
}

impl<B> Clone for Buckets<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for Buckets<'_, B> {}

/// What [`Buckets::add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// The first instant of the item's period: the bucket's `period` field.
    pub period: DateTime,
    /// The `_id` of the bucket the add opened, when no bucket of the key and period had room.
    pub opened: Option<ObjectId>,
}

/// One bucket read by [`Buckets::newest`].
struct Read<I> {
    id: Bson,
    period: DateTime,
    entries: Vec<Entry<I>>,
}

/// One item read by [`Buckets::newest`], with what orders it.
struct Entry<I> {
    period: DateTime,
    time: DateTime,
    id: Bson,
    item: I,
}

impl<'a, B: Bucket> Buckets<'a, B> {
    /// The declared buckets: stored paths, period, bound.
    pub fn spec(self) -> BucketSpec {
        B::bucket()
    }

    /// Adds `item` to the bucket of `key` for the item's period. Sends one `update` with
    /// `upsert: true`:
    ///
    /// ```text
    /// update reviews {q: {user: {$eq: "bob"}, month: {$eq: 2012-10-01}},
    ///                 u: {$push: {reviews: {$each: [item], $sort: {created_at: -1, id: -1}}},
    ///                     $inc: {count: 1}, $setOnInsert: {user: "bob", month: 2012-10-01}},
    ///                 upsert: true}
    /// ```
    ///
    /// The bucket is created by the same command when it does not exist yet, and its items stay
    /// sorted newest first (what [`Buckets::newest`] relies on). With `max = N` the filter also
    /// holds `count: {$lt: N}`: a full bucket does not match, so the upsert opens another
    /// bucket for the same key and period. Two adds racing for the last slot of a bucket are
    /// serialized by the server on that document: one takes the slot, the other finds the
    /// bucket full and opens a new one; no item is lost and no bucket passes `max`.
    ///
    /// Without `max` there is one bucket per key and period (a unique index): when two adds
    /// open the same bucket at once, the server refuses one with a duplicate key, and that one
    /// is sent once more (a second `update`), which finds the bucket.
    ///
    /// Keys of the item starting with `$` or holding `.` are refused before anything is sent. A
    /// bucket already in the collection whose count or items the server cannot update (a
    /// string count, items that are not an array) is reported as [`Error::Decode`] naming it,
    /// after one `find` of the key's buckets for the period.
    pub fn add(self, key: impl Value<B::Key>, item: &B::Item) -> InSession<'a, Added> {
        let (key, item) = (key.to_bson(), bson::serialize_to_bson(item));
        InSession::new(
            crate::trace::operation_span!("bucket_add", B::COLLECTION),
            move |session| Box::pin(self.add_in(key, item, session)),
        )
    }

    async fn add_in(
        self,
        key: EncodeResult,
        item: EncodeResult,
        mut session: Option<&'a mut ClientSession>,
    ) -> Result<Added> {
        let spec = &B::bucket();
        let key = self.encode(key, "bucket key")?;
        let item = self.encode(item, "item")?;
        crate::key_check::check_value(B::COLLECTION, &spec.items, &item)?;
        let time = match item.as_document().and_then(|d| d.get(&spec.item_time)) {
            Some(Bson::DateTime(t)) => *t,
            _ => {
                return Err(self.invalid_item(format!(
                    "the item has no date at `{}`, which gives its period",
                    spec.item_time
                )))
            }
        };
        if item
            .as_document()
            .and_then(|d| d.get(&spec.item_id))
            .is_none()
        {
            return Err(self.invalid_item(format!(
                "the item has no id at `{}`, by which it is removed",
                spec.item_id
            )));
        }
        let period = spec.every.start(time);
        let mut filter = self.bucket_filter(&key, period);
        if let Some(max) = spec.max {
            filter.insert(&spec.count, doc! { "$lt": i64::from(max) });
        }
        let update = doc! {
            "$push": { &spec.items: { "$each": [item], "$sort": spec.item_order() } },
            "$inc": { &spec.count: 1 },
            "$setOnInsert": { &spec.key: key.clone(), &spec.period: period },
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            // The bucket's own fields (items, count): no writer's version moves.
            let write = Own::update(
                B::COLLECTION,
                filter.clone(),
                update.clone(),
                Effect::Derived,
                "bucket add",
            );
            let write = write.of::<B>().one().upsert();
            match self.odm.write_own(write, session.as_deref_mut()).await {
                Ok(result) => {
                    return Ok(Added {
                        period,
                        opened: result.upserted_id.and_then(|id| id.as_object_id()),
                    })
                }
                // Another add opened the bucket between our filter and our insert.
                Err(Error::DuplicateKey { .. }) if spec.max.is_none() && attempt == 1 => continue,
                Err(e) if e.driver_error().is_some_and(is_type_error) => {
                    return Err(self.malformed(&key, period, session).await?.unwrap_or(e))
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Removes the item whose id is `id` from the buckets of `key`. Sends one `update`:
    ///
    /// ```text
    /// update reviews {q: {user: {$eq: "bob"}, month: {$eq: 2012-10-01}, reviews.id: {$eq: id}},
    ///                 u: {$pull: {reviews: {id: {$eq: id}}}, $inc: {count: -1}}}
    /// ```
    ///
    /// `time` is the item's time (any instant of its period does): the filter then names the
    /// one bucket (or, with `max`, the buckets of that period) through the index on key and
    /// period. Without it (`None`) the command is the same without the period, and the server
    /// looks through every bucket of the key for the id: still one command, reading as many
    /// buckets as the key has. Returns whether an item was removed. An emptied bucket stays,
    /// with `count: 0`; reads skip it.
    pub fn remove(
        self,
        key: impl Value<B::Key>,
        id: impl Serialize,
        time: Option<DateTime>,
    ) -> InSession<'a, bool> {
        let (key, id) = (key.to_bson(), bson::serialize_to_bson(&id));
        InSession::new(
            crate::trace::operation_span!("bucket_remove", B::COLLECTION),
            move |session| Box::pin(self.remove_in(key, id, time, session)),
        )
    }

    async fn remove_in(
        self,
        key: EncodeResult,
        id: EncodeResult,
        time: Option<DateTime>,
        session: Option<&'a mut ClientSession>,
    ) -> Result<bool> {
        let spec = &B::bucket();
        let key = self.encode(key, "bucket key")?;
        let id = self.encode(id, "item id")?;
        let mut filter = doc! { &spec.key: { "$eq": key } };
        if let Some(time) = time {
            filter.insert(&spec.period, doc! { "$eq": spec.every.start(time) });
        }
        filter.insert(
            format!("{}.{}", spec.items, spec.item_id),
            doc! { "$eq": id.clone() },
        );
        let update = doc! {
            "$pull": { &spec.items: { &spec.item_id: { "$eq": id } } },
            "$inc": { &spec.count: -1 },
        };
        let write = Own::update(
            B::COLLECTION,
            filter,
            update,
            Effect::Derived,
            "bucket remove",
        );
        let result = self.odm.write_own(write.of::<B>().one(), session).await?;
        Ok(result.modified > 0)
    }

    /// The newest `n` items of `key`, newest first (by time, then by id), across as many
    /// buckets as it takes. Reads buckets newest period first, each cut to its first `n` items
    /// (`$slice`, the items being stored newest first), in rounds of one `find` each:
    ///
    /// ```text
    /// find reviews {filter: {user: {$eq: "bob"}, count: {$gt: 0}}, sort: {month: -1},
    ///               projection: {reviews: {$slice: 10}}, limit: 1}
    /// find reviews {filter: {user: {$eq: "bob"}, count: {$gt: 0}, month: {$lt: 2012-10-01}},
    ///               sort: {month: -1}, projection: {reviews: {$slice: 7}}, limit: 3}
    /// ```
    ///
    /// The first round asks for one bucket (with `max = M`, for ⌈n / M⌉); each next round for
    /// as many buckets as the items still missing divided by the mean number of items per
    /// bucket read so far (at most 100), so one `find` when the newest bucket holds `n` items,
    /// and usually two or three otherwise. Each round's cursor ends with its batch (no
    /// `getMore`, no `killCursors`). With `max`, a period may have several buckets, read newest
    /// opened first (`sort: {month: -1, _id: -1}`, later rounds skipping those read): when the
    /// last bucket read could hide, in another bucket of its period, items newer than the n-th,
    /// one more `find` reads the rest of that period. Empty buckets are skipped. Nothing is
    /// sent for `n = 0`.
    ///
    /// A bucket that does not decode as `B` is [`Error::Decode`] naming it and the field.
    pub fn newest(self, key: impl Value<B::Key>, n: usize) -> InSession<'a, Vec<B::Item>> {
        let key = key.to_bson();
        InSession::new(
            crate::trace::operation_span!("bucket_newest", B::COLLECTION),
            move |session| Box::pin(self.newest_in(key, n, session)),
        )
    }

    async fn newest_in(
        self,
        key: EncodeResult,
        n: usize,
        mut session: Option<&'a mut ClientSession>,
    ) -> Result<Vec<B::Item>> {
        let key = self.encode(key, "bucket key")?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let spec = &B::bucket();
        let base = doc! { &spec.key: { "$eq": key }, &spec.count: { "$gt": 0 } };
        let slice = i64::try_from(n).unwrap_or(i64::MAX);
        let mut limit = match spec.max {
            Some(max) => slice.saturating_add(i64::from(max) - 1) / i64::from(max.max(1)),
            None => 1,
        }
        .min(MAX_ROUND);
        let mut filter = base.clone();
        let mut entries: Vec<Entry<B::Item>> = Vec::new();
        let mut buckets = 0;
        let mut ids: Vec<Bson> = Vec::new();
        let mut last_period = None;
        loop {
            let batch = self
                .read(filter, slice, Some(limit), session.as_deref_mut())
                .await?;
            let full = batch.len() as i64 == limit;
            buckets += batch.len();
            let Some(last) = batch.last().map(|b| b.period) else {
                break;
            };
            // With `max`, the buckets of the last period read so far (by this round and, when
            // it read that period only, by the rounds before), which a next round skips.
            if last_period != Some(last) {
                ids.clear();
                last_period = Some(last);
            }
            ids.extend(
                batch
                    .iter()
                    .filter(|b| b.period == last)
                    .map(|b| b.id.clone()),
            );
            for b in batch {
                entries.extend(b.entries);
            }
            if !full {
                break;
            }
            if entries.len() >= n {
                if spec.max.is_none() {
                    break;
                }
                sort_newest(&mut entries);
                if entries[n - 1].period > last {
                    break;
                }
                // Other buckets of the last period may hold items newer than the n-th.
                let mut rest = base.clone();
                rest.insert(&spec.period, doc! { "$eq": last });
                rest.insert("_id", doc! { "$nin": ids.clone() });
                for b in self.read(rest, slice, None, session).await? {
                    entries.extend(b.entries);
                }
                break;
            }
            let mean = (entries.len() / buckets).max(1);
            limit = ((n - entries.len()).div_ceil(mean) as i64).clamp(1, MAX_ROUND);
            filter = base.clone();
            match spec.max {
                None => {
                    filter.insert(&spec.period, doc! { "$lt": last });
                }
                Some(_) => {
                    filter.insert(&spec.period, doc! { "$lte": last });
                    filter.insert("_id", doc! { "$nin": ids.clone() });
                }
            }
        }
        sort_newest(&mut entries);
        entries.truncate(n);
        Ok(entries.into_iter().map(|e| e.item).collect())
    }

    /// One round of [`Buckets::newest`]: one `find`, the buckets decoded, each with its items
    /// and their period, time and id.
    async fn read(
        &self,
        filter: Document,
        slice: i64,
        limit: Option<i64>,
        session: Option<&mut ClientSession>,
    ) -> Result<Vec<Read<B::Item>>> {
        let spec = &B::bucket();
        let options = FindOptions::builder()
            .sort(spec.bucket_order())
            .projection(doc! { &spec.items: { "$slice": slice } })
            .limit(limit)
            .build();
        let docs: Vec<RawDocumentBuf> =
            find_decoded::<B, RawDocumentBuf>(self.odm, filter, options, session).await?;
        let reading = Reading::of::<B>(self.odm);
        let mut out = Vec::with_capacity(docs.len());
        for raw in docs {
            let bucket: B = decode(&reading, &raw)?;
            let period = bucket.period_start();
            let stored = Document::try_from(raw.as_ref()).map_err(|e| Error::Decode {
                collection: B::COLLECTION.to_owned(),
                id: crate::error::show_id(
                    raw.get("_id")
                        .ok()
                        .flatten()
                        .and_then(|v| Bson::try_from(v).ok())
                        .as_ref(),
                ),
                path: ".".to_owned(),
                message: e.to_string(),
            })?;
            let keys: Vec<(DateTime, Bson)> = stored
                .get_array(&spec.items)
                .map(|items| {
                    items
                        .iter()
                        .map(|i| {
                            let d = i.as_document();
                            let time = d.and_then(|d| d.get_datetime(&spec.item_time).ok());
                            let id = d.and_then(|d| d.get(&spec.item_id)).cloned();
                            (time.copied().unwrap_or(period), id.unwrap_or(Bson::Null))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let items = bucket.into_items();
            let entries = items
                .into_iter()
                .zip(keys)
                .map(|(item, (time, id))| Entry {
                    period,
                    time,
                    id,
                    item,
                })
                .collect();
            out.push(Read {
                id: stored.get("_id").cloned().unwrap_or(Bson::Null),
                period,
                entries,
            });
        }
        Ok(out)
    }

    /// `{key: {$eq: key}, period: {$eq: period}}`: the values matched literally.
    fn bucket_filter(&self, key: &Bson, period: DateTime) -> Document {
        let spec = B::bucket();
        doc! {
            &spec.key: { "$eq": key.clone() },
            &spec.period: { "$eq": period },
        }
    }

    fn encode(&self, value: EncodeResult, what: &str) -> Result<Bson> {
        value.map_err(|e| Error::Encode {
            collection: B::COLLECTION.to_owned(),
            what: what.to_owned(),
            message: e.to_string(),
        })
    }

    fn invalid_item(&self, message: String) -> Error {
        let spec = B::bucket();
        Error::Encode {
            collection: B::COLLECTION.to_owned(),
            what: format!("item for `{}`", spec.items),
            message,
        }
    }

    /// After the server refused an add with a type error: the first bucket of the key and
    /// period that does not decode as `B`, as its decode error. One `find`.
    async fn malformed(
        &self,
        key: &Bson,
        period: DateTime,
        session: Option<&mut ClientSession>,
    ) -> Result<Option<Error>> {
        let filter = self.bucket_filter(key, period);
        let docs: Vec<RawDocumentBuf> =
            find_decoded::<B, RawDocumentBuf>(self.odm, filter, FindOptions::default(), session)
                .await?;
        let reading = Reading::of::<B>(self.odm);
        Ok(docs.iter().find_map(|raw| decode::<B>(&reading, raw).err()))
    }
}

/// Newest first: by time, then by id, both descending (the order of each bucket's items).
fn sort_newest<I>(entries: &mut [Entry<I>]) {
    entries.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| compare(&b.id, &a.id)));
}

/// The order of two item ids, as the server sorts values of one type.
fn compare(a: &Bson, b: &Bson) -> Ordering {
    match (a, b) {
        (Bson::ObjectId(a), Bson::ObjectId(b)) => a.bytes().cmp(&b.bytes()),
        (Bson::String(a), Bson::String(b)) => a.cmp(b),
        _ => match (number(a), number(b)) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            _ => show(a).cmp(&show(b)),
        },
    }
}

fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

/// A write refused because a stored value has the wrong type (`$inc` on a string, `$push` onto
/// something that is not an array): the server's `TypeMismatch` (14) or `BadValue` (2).
fn is_type_error(e: &mongodb::error::Error) -> bool {
    use mongodb::error::{ErrorKind, WriteFailure};
    let code = match &*e.kind {
        ErrorKind::Write(WriteFailure::WriteError(we)) => we.code,
        ErrorKind::Command(ce) => ce.code,
        _ => return false,
    };
    matches!(code, 2 | 14)
}
