//! Pre-aggregated counters, native time-series collections, and quotas (the library workshop's
//! exercises 5 and 6).
//!
//! A model declared with `#[odm(counters(key = "book", day = "day"))]` holds one document per
//! key and day (UTC) with a `total`, and an `hour` field of type [`Hours`] holding each hour's
//! total and, with minute granularity, the count of each minute of the day:
//!
//! ```text
//! { _id: ObjectId(..), book: 1, day: 2012-10-11T00:00:00Z, total: 148,
//!   hour: { "0": { total: 7, "0": 0, ..., "59": 2 }, ..., "23": { total: 12, ..., "1439": 3 } } }
//! ```
//!
//! [`Odm::counters`] gives the operations on it: recording an event is one `update` (an upsert
//! with `$inc` at `total`, `hour.<H>.total` and `hour.<H>.<minute of the day>`, paths computed
//! from the instant, never from a caller's string); a day, an hour and a range of days are one
//! `find` each; [`Counters::preallocate`] inserts a day's zeroed shape, once, whatever the
//! number of concurrent callers. The derive declares the unique index on `(key, day)` that
//! keeps one document per key and day under concurrent first events; [`Odm::sync_indexes`]
//! creates it.
//!
//! `#[odm(time_series(time = "at", meta = "book", granularity = "minutes"))]` declares a native
//! time-series collection instead, created by `sync_indexes` (see [`series`]); [`Quota`] is the
//! workshop's "at most 10 recommendations per user".

mod hours;
mod quota;
pub mod series;

use std::marker::PhantomData;

use bson::{doc, Bson, DateTime, Document};
use mongodb::options::FindOptions;
use mongodb::ClientSession;
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

pub use hours::{Hour, Hours};
pub use quota::{Quota, Taken};

use crate::engine::{Effect, InSession, Own};
use crate::model::Model;
use crate::path::{Field, Value};
use crate::{Error, Odm, Result};

/// A model holding pre-aggregated counters: one document per key and day. Implemented by
/// `#[derive(Model)]` for `#[odm(counters(...))]`; not meant to be implemented by hand.
pub trait Counted: Model {
    /// The type of the key field (`book`).
    type Key: serde::Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Where the counters are stored.
    const COUNTERS: CounterPaths;
}

/// The stored paths of a counters model and what it counts; written by the derive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterPaths {
    /// The key field (`book`).
    pub key: &'static str,
    /// The day field, a `bson::DateTime` at midnight UTC (`day`).
    pub day: &'static str,
    /// The day's total (`total`).
    pub total: &'static str,
    /// The [`Hours`] field (`hour`).
    pub hours: &'static str,
    /// Down to the hour or to the minute.
    pub granularity: Granularity,
}

/// How fine the counters of a day are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// The day's total and each hour's.
    Hour,
    /// Also each minute's (the seed's `hour.23.1439`).
    Minute,
}

const DAY_MS: i64 = 24 * 3600 * 1000;

/// Midnight (UTC) of the day holding `at`: the `day` of the document an event at `at` counts in.
pub fn day_start(at: DateTime) -> DateTime {
    let ms = at.timestamp_millis();
    DateTime::from_millis(ms - ms.rem_euclid(DAY_MS))
}

/// The minute of the UTC day holding `at` (0 to 1439).
pub fn minute_of_day(at: DateTime) -> u16 {
    (at.timestamp_millis().rem_euclid(DAY_MS) / 60_000) as u16
}

/// Counters on the handle.
impl Odm {
    /// The counters of the model `T` (declared with `#[odm(counters(...))]`): record events,
    /// read a day, an hour, a range of days. Sends nothing by itself.
    pub fn counters<T: Counted>(&self) -> Counters<'_, T> {
        Counters {
            odm: self,
            _model: PhantomData,
        }
    }
}

/// The operations on a counters model, from [`Odm::counters`]. Days are UTC days. A copyable
/// handle; each operation returns an [`InSession`]: `.await` it, or
/// `.session(&mut session).await` to run its commands in the caller's session and
/// transaction.
#[derive(Debug)]
pub struct Counters<'a, T> {
    odm: &'a Odm,
    _model: PhantomData<fn() -> T>,
}

impl<T> Clone for Counters<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Counters<'_, T> {}

impl<'a, T: Counted> Counters<'a, T> {
    /// Records one event for `key` at the instant `at`. See [`Counters::record_n`].
    pub fn record(self, key: impl Value<T::Key>, at: DateTime) -> InSession<'a, ()> {
        self.record_n(key, at, 1)
    }

    /// Records `n` events for `key` at the instant `at`: one `update`, an upsert of the day's
    /// document `{key: key, day: {$eq: <midnight>}}` with
    /// `$inc: {total: n, "hour.<H>.total": n, "hour.<H>.<minute of the day>": n}` (no minute
    /// with hour granularity). The document is created by the first event of its day.
    ///
    /// Two first events of a day racing each other both try to insert; the unique index on
    /// `(key, day)` refuses one, which MongoDB retries itself (and odm once more when the
    /// server does not): one more `update`, only then. Without that index (not synced) the
    /// race could leave two documents for the day.
    pub fn record_n(self, key: impl Value<T::Key>, at: DateTime, n: i64) -> InSession<'a, ()> {
        let key = key.to_bson();
        InSession::new(
            crate::trace::operation_span!("counter_record", T::COLLECTION),
            move |session| Box::pin(self.record_in(key, at, n, session)),
        )
    }

    async fn record_in(
        self,
        key: EncodeResult,
        at: DateTime,
        n: i64,
        session: Option<&'a mut ClientSession>,
    ) -> Result<()> {
        let paths = T::COUNTERS;
        let key = self.key(key)?;
        let (day, minute) = (day_start(at), minute_of_day(at));
        let hour = minute / 60;
        let by = count(n);
        let update = || {
            let mut inc = Document::new();
            inc.insert(paths.total, by.clone());
            inc.insert(format!("{}.{hour}.total", paths.hours), by.clone());
            if paths.granularity == Granularity::Minute {
                inc.insert(format!("{}.{hour}.{minute}", paths.hours), by.clone());
            }
            doc! { "$inc": inc }
        };
        self.upsert(|| Self::day_filter(key.clone(), day), update, session)
            .await
            .map(|_| ())
    }

    /// Inserts the zeroed document of `key`'s day holding `day` (every hour's total, and every
    /// minute with minute granularity, at 0), so that later events change counters in place
    /// rather than grow the document. One `update`: an upsert with `$setOnInsert`, which
    /// changes nothing when the day's document exists (also one created by an event, whose
    /// other hours then stay absent). Returns whether this call created it: under concurrent
    /// calls, exactly one does (with the unique index on `(key, day)` synced).
    pub fn preallocate(self, key: impl Value<T::Key>, day: DateTime) -> InSession<'a, bool> {
        let key = key.to_bson();
        InSession::new(
            crate::trace::operation_span!("counter_preallocate", T::COLLECTION),
            move |session| Box::pin(self.preallocate_in(key, day, session)),
        )
    }

    async fn preallocate_in(
        self,
        key: EncodeResult,
        day: DateTime,
        session: Option<&'a mut ClientSession>,
    ) -> Result<bool> {
        let paths = T::COUNTERS;
        let (key, day) = (self.key(key)?, day_start(day));
        let mut hours = Document::new();
        for hour in 0..24u16 {
            let mut h = doc! { "total": 0 };
            if paths.granularity == Granularity::Minute {
                for minute in hour * 60..hour * 60 + 60 {
                    h.insert(minute.to_string(), 0);
                }
            }
            hours.insert(hour.to_string(), h);
        }
        let mut shape = Document::new();
        shape.insert(paths.total, 0);
        shape.insert(paths.hours, hours);
        let update = doc! { "$setOnInsert": shape };
        self.upsert(
            || Self::day_filter(key.clone(), day),
            || update.clone(),
            session,
        )
        .await
    }

    /// The document of `key`'s day holding `day`, `None` when nothing was recorded that day.
    /// One `find` (`{key: key, day: {$eq: <midnight>}}`, limit 1, on the unique index).
    pub fn day(self, key: impl Value<T::Key>, day: DateTime) -> InSession<'a, Option<T>> {
        let key = key.to_bson();
        InSession::new(
            crate::trace::operation_span!("counter_day", T::COLLECTION),
            move |session| {
                Box::pin(async move {
                    let filter = Self::day_filter(self.key(key)?, day_start(day));
                    let find = self.odm.find_one(crate::Filter::raw(filter));
                    match session {
                        Some(s) => find.session(s).await,
                        None => find.await,
                    }
                })
            },
        )
    }

    /// The counters of `key`'s hour holding the instant `at` (zero when nothing was recorded
    /// then). One `find` projecting only `hour.<H>` of the day's document.
    pub fn hour(self, key: impl Value<T::Key>, at: DateTime) -> InSession<'a, Hour> {
        let key = key.to_bson();
        InSession::new(
            crate::trace::operation_span!("counter_hour", T::COLLECTION),
            move |session| Box::pin(self.hour_in(key, at, session)),
        )
    }

    async fn hour_in(
        self,
        key: EncodeResult,
        at: DateTime,
        session: Option<&'a mut ClientSession>,
    ) -> Result<Hour> {
        let paths = T::COUNTERS;
        let filter = Self::day_filter(self.key(key)?, day_start(at));
        let hour = (minute_of_day(at) / 60) as u8;
        let options = FindOptions::builder()
            .projection(doc! { format!("{}.{hour}", paths.hours): 1 })
            .limit(1)
            .build();
        let found: Vec<OneHour<T>> =
            crate::engine::find_decoded::<T, _>(self.odm, filter, options, session).await?;
        Ok(found
            .into_iter()
            .next()
            .and_then(|h| h.hours)
            .and_then(|h| h.get(hour).cloned())
            .unwrap_or_default())
    }

    /// The documents of `key`'s days from the day holding `first` to the day holding `last`,
    /// both included, in order; days without events have no document. One `find`
    /// (`{key: key, day: {$gte: first, $lte: last}}`, sorted by day, on the unique
    /// index), plus one `getMore` per further batch (past 101 days).
    pub fn days(
        self,
        key: impl Value<T::Key>,
        first: DateTime,
        last: DateTime,
    ) -> InSession<'a, Vec<T>> {
        let key = key.to_bson();
        InSession::new(
            crate::trace::operation_span!("counter_days", T::COLLECTION),
            move |session| {
                Box::pin(async move {
                    let paths = T::COUNTERS;
                    let mut filter = crate::literal::eq(paths.key, self.key(key)?);
                    filter.insert(
                        paths.day,
                        doc! { "$gte": day_start(first), "$lte": day_start(last) },
                    );
                    let day: Field<T, DateTime> = Field::trusted(paths.day);
                    let find = self.odm.find(crate::Filter::raw(filter)).sort(day.asc());
                    match session {
                        Some(s) => find.session(s).await,
                        None => find.await,
                    }
                })
            },
        )
    }

    fn key(&self, key: EncodeResult) -> Result<Bson> {
        key.map_err(|e| Error::Encode {
            collection: T::COLLECTION.to_owned(),
            what: format!("counter key for `{}`", T::COUNTERS.key),
            message: e.to_string(),
        })
    }

    /// `{key: key, day: {$eq: day}}` (`{key: {$eq: key}}` for a key that could be misread): the key is matched as a value, whatever it holds.
    fn day_filter(key: Bson, day: DateTime) -> Document {
        let paths = T::COUNTERS;
        let mut filter = crate::literal::eq(paths.key, key);
        filter.insert(paths.day, doc! { "$eq": day });
        filter
    }

    /// One upserting `update`, and a second one after a duplicate key on the unique `(key,
    /// day)` index (a concurrent first event inserted the day first). Whether it inserted.
    /// The documents are built again for the second one rather than copied for every first.
    async fn upsert(
        &self,
        filter: impl Fn() -> Document,
        update: impl Fn() -> Document,
        mut session: Option<&mut ClientSession>,
    ) -> Result<bool> {
        let mut retried = false;
        loop {
            // The counters' own fields: derived from the events, no writer's version moves.
            let write = Own::update(
                T::COLLECTION,
                filter(),
                update(),
                Effect::Derived,
                "counter upsert",
            );
            let sent = self
                .odm
                .write_own(write.of::<T>().one().upsert(), session.as_deref_mut())
                .await;
            match sent {
                Err(e) if e.is_duplicate_key() && !retried => retried = true,
                Err(e) => return Err(e),
                Ok(r) => return Ok(r.upserted_id.is_some()),
            }
        }
    }
}

/// A key encoded when the operation is built, its error returned when it runs.
type EncodeResult = std::result::Result<Bson, bson::error::Error>;

/// An increment as the shell writes it: an `int` when it fits, so that a counter created by
/// it is an `int` too.
fn count(n: i64) -> Bson {
    i32::try_from(n).map_or(Bson::Int64(n), Bson::Int32)
}

/// A day's document projected to one hour: only its [`Hours`] field is read.
struct OneHour<T> {
    hours: Option<Hours>,
    _model: PhantomData<fn() -> T>,
}

impl<'de, T: Counted> Deserialize<'de> for OneHour<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(PhantomData<fn() -> T>);
        impl<'de, T: Counted> Visitor<'de> for V<T> {
            type Value = OneHour<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a day's counters document")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<OneHour<T>, A::Error> {
                let mut hours = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == T::COUNTERS.hours {
                        hours = Some(map.next_value::<Hours>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(OneHour {
                    hours,
                    _model: PhantomData,
                })
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rfc3339: &str) -> DateTime {
        DateTime::parse_rfc3339_str(rfc3339).expect("a valid date")
    }

    #[test]
    fn an_instant_counts_in_its_utc_day_hour_and_minute() {
        let late = at("2012-10-11T23:59:42.5Z");
        assert_eq!(day_start(late), at("2012-10-11T00:00:00Z"));
        assert_eq!(minute_of_day(late), 1439);
        assert_eq!(minute_of_day(at("2012-10-11T00:00:00Z")), 0);
        // Before 1970 too: the day is the one before midnight, not after it.
        let early = at("1969-12-31T23:59:00Z");
        assert_eq!(day_start(early), at("1969-12-31T00:00:00Z"));
        assert_eq!(minute_of_day(early), 1439);
    }

    #[test]
    fn increments_are_ints_when_they_fit() {
        assert_eq!(count(1), Bson::Int32(1));
        assert_eq!(count(-3), Bson::Int32(-3));
        assert_eq!(count(1 << 40), Bson::Int64(1 << 40));
    }

    #[test]
    fn hours_round_trip_and_refuse_what_is_not_an_hour() {
        let hours: Hours = bson::deserialize_from_document(doc! {
            "23": { "total": 3, "1439": 2, "1380": 1 },
            "0": { "total": 0 },
        })
        .expect("hours");
        assert_eq!(hours.total_of(23), 3);
        assert_eq!(hours.minute(1439), 2);
        assert_eq!(hours.minute(5), 0);
        assert_eq!(
            bson::serialize_to_document(&hours).expect("encoded"),
            doc! { "0": { "total": 0i64 }, "23": { "total": 3i64, "1380": 1i64, "1439": 2i64 } }
        );
        for bad in [
            doc! { "24": { "total": 1 } },
            doc! { "07": { "total": 1 } },
            doc! { "x": { "total": 1 } },
            doc! { "1": { "total": 1, "59": 1 } },
            doc! { "1": { "total": 1, "120": 1 } },
        ] {
            assert!(
                bson::deserialize_from_document::<Hours>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
