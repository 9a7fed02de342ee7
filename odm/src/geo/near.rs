//! [`Odm::nearest`]: the documents nearest a point, with their distance.

use bson::{doc, Document, RawDocument};
use mongodb::options::AggregateOptions;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;

use super::{GeoIndexed, Located, Point};
use crate::decode::Reading;
use crate::path::Field;
use crate::query::Filter;
use crate::{Error, Odm, Result};

/// The field `$geoNear` writes the distance into, taken out of each document before it is
/// decoded (a model's own field of that name would be hidden by it).
const DISTANCE: &str = "_odm_distance";

/// A document and how far its place is from the point asked, in meters.
#[derive(Debug, Clone, PartialEq)]
pub struct Near<T> {
    /// The document.
    pub document: T,
    /// The distance from the point to the document's place, in meters on the sphere.
    pub meters: f64,
}

/// Builder returned by [`Odm::nearest`]. Sends one `aggregate`: `$geoNear` (with the filter
/// as its `query`, the model's kind and soft-delete scope included) then `$limit`. Takes the
/// options of every read (`comment`, `max_time`, `read_concern`, `read_preference`) and
/// `collation`.
#[must_use = "the query runs when awaited"]
pub struct Nearest<'a, T> {
    odm: &'a Odm,
    path: String,
    point: Point,
    filter: Filter<T>,
    min: Option<f64>,
    max: Option<f64>,
    limit: i64,
    options: AggregateOptions,
    session: Option<&'a mut ClientSession>,
}

impl<T> std::fmt::Debug for Nearest<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nearest")
            .field("key", &self.path)
            .field("point", &self.point)
            .field("filter", &self.filter)
            .finish()
    }
}

impl Odm {
    /// The documents of `T` nearest `point` by `field`, nearest first, each with its
    /// distance in meters: at most 100 unless [`limit`](Nearest::limit) says otherwise. The
    /// field needs a 2dsphere index (a compile error for a model without one; a field without
    /// one is refused before anything is sent).
    pub fn nearest<T: GeoIndexed, G: Located, M>(
        &self,
        field: Field<T, G, M>,
        point: Point,
    ) -> Nearest<'_, T> {
        Nearest {
            odm: self,
            path: field.path().to_owned(),
            point,
            filter: Filter::all(),
            min: None,
            max: None,
            limit: 100,
            options: AggregateOptions::default(),
            session: None,
        }
    }
}

impl<'a, T: GeoIndexed> Nearest<'a, T> {
    /// Only the documents matching `filter`.
    pub fn filter(mut self, filter: Filter<T>) -> Self {
        self.filter = filter;
        self
    }

    /// Only the documents at most `meters` away.
    pub fn max_distance(mut self, meters: f64) -> Self {
        self.max = Some(meters);
        self
    }

    /// Only the documents at least `meters` away.
    pub fn min_distance(mut self, meters: f64) -> Self {
        self.min = Some(meters);
        self
    }

    /// At most `n` documents (100 by default).
    pub fn limit(mut self, n: u32) -> Self {
        self.limit = i64::from(n);
        self
    }

    /// Runs inside the caller's session.
    pub fn session(mut self, session: &'a mut ClientSession) -> Self {
        self.session = Some(session);
        self
    }

    /// The stages sent: `$geoNear` then `$limit`.
    fn pipeline(&mut self) -> Result<[Document; 2]> {
        if let Some(refused) = super::unindexed::<T>(&self.path) {
            return Err(refused.into_error(T::COLLECTION));
        }
        for m in [self.min, self.max].into_iter().flatten() {
            if !(m.is_finite() && m >= 0.0) {
                return Err(Error::Encode {
                    collection: T::COLLECTION.to_owned(),
                    what: format!("`$geoNear` on `{}`", self.path),
                    message: format!("{m} is not a distance in meters"),
                });
            }
        }
        let filter = std::mem::take(&mut self.filter);
        let mut near = doc! {
            "near": bson::serialize_to_bson(&self.point).map_err(|e| Error::Encode {
                collection: T::COLLECTION.to_owned(),
                what: "the point of `$geoNear`".to_owned(),
                message: e.to_string(),
            })?,
            "key": &self.path,
            "distanceField": DISTANCE,
            "spherical": true,
            "query": crate::engine::model_filter(filter)?,
        };
        if let Some(min) = self.min {
            near.insert("minDistance", min);
        }
        if let Some(max) = self.max {
            near.insert("maxDistance", max);
        }
        Ok([doc! { "$geoNear": near }, doc! { "$limit": self.limit }])
    }
}

impl<'a, T: GeoIndexed + DeserializeOwned + Send + 'a> Nearest<'a, T> {
    async fn run(mut self) -> Result<Vec<Near<T>>> {
        let pipeline = self.pipeline()?;
        let coll = self.odm.raw_collection::<T>();
        let action = coll.aggregate(pipeline).with_options(self.options);
        let from = Reading::of::<T>(self.odm);
        crate::engine::decoded!(@each action, self.session, |raw: &RawDocument| measured(&from, raw), T)
    }
}

/// The document `raw` returned by `$geoNear`, decoded without the distance, and the distance.
fn measured<T: DeserializeOwned>(from: &Reading<'_>, raw: &RawDocument) -> Result<Near<T>> {
    let (document, meters) = crate::decode::with_number(from, raw, DISTANCE)?;
    Ok(Near { document, meters })
}

impl<'a, T: GeoIndexed + DeserializeOwned + Send + 'a> std::future::IntoFuture for Nearest<'a, T> {
    type Output = Result<Vec<Near<T>>>;
    type IntoFuture =
        std::pin::Pin<Box<dyn std::future::Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

crate::engine::read_options!(@every Nearest, options);

impl<T: GeoIndexed> Nearest<'_, T> {
    /// Compares the filter's strings by `collation`.
    pub fn collation(mut self, collation: crate::options::Collation) -> Self {
        self.options.collation = Some(collation);
        self
    }
}
