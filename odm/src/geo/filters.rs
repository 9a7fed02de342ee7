//! The geospatial filters of a field holding a place.

use std::ops::{Bound, RangeBounds};

use bson::{doc, Bson, Document};

use super::{GeoIndexed, GeoJson, Located, Point, Polygon, EARTH_RADIUS_M};
use crate::path::Field;
use crate::query::{Deferred, Filter};

/// `{$geometry: shape}`, or the filter's error when the shape does not encode.
fn geometry(shape: &impl GeoJson) -> Result<Bson, String> {
    bson::serialize_to_bson(shape).map_err(|e| e.to_string())
}

/// The bounds of `range` in meters, checked: finite and not below zero.
fn meters(range: &impl RangeBounds<f64>) -> Result<(Option<f64>, Option<f64>), String> {
    let bound = |b: Bound<&f64>| match b {
        Bound::Included(m) | Bound::Excluded(m) => Some(*m),
        Bound::Unbounded => None,
    };
    let (min, max) = (bound(range.start_bound()), bound(range.end_bound()));
    for m in [min, max].into_iter().flatten() {
        if !(m.is_finite() && m >= 0.0) {
            return Err(format!("{m} is not a distance in meters"));
        }
    }
    Ok((min, max))
}

impl<Root, T, M> Field<Root, T, M> {
    fn geo(&self, what: &str, built: Result<Document, String>) -> Filter<Root> {
        match built {
            Ok(condition) => Filter::from_parts(doc! { self.path(): condition }, None),
            Err(message) => Filter::from_parts(
                Document::new(),
                Some(Deferred::new(
                    format!("{what} on `{}`", self.path()),
                    message,
                )),
            ),
        }
    }

    /// Inside `area`, its border included (`{path: {$geoWithin: {$geometry: area}}}`).
    /// Answered from a 2dsphere index on the field when there is one, by reading every
    /// document otherwise.
    pub fn within(&self, area: &Polygon) -> Filter<Root>
    where
        T: Located,
    {
        self.geo(
            "`$geoWithin`",
            geometry(area).map(|g| doc! { "$geoWithin": { "$geometry": g } }),
        )
    }

    /// Within `meters` of `center`, on the sphere (`{$geoWithin: {$centerSphere: [[lon, lat],
    /// radians]}}`, the distance divided by the Earth's radius of 6,378.1 km).
    pub fn within_circle(&self, center: Point, meters: f64) -> Filter<Root>
    where
        T: Located,
    {
        let built = match meters.is_finite() && meters >= 0.0 {
            true => Ok(doc! { "$geoWithin": { "$centerSphere": [
                [center.lon(), center.lat()], meters / EARTH_RADIUS_M
            ] } }),
            false => Err(format!("{meters} is not a distance in meters")),
        };
        self.geo("`$geoWithin`", built)
    }

    /// Sharing at least one point with `shape` (`{$geoIntersects: {$geometry: shape}}`).
    pub fn intersects(&self, shape: &impl GeoJson) -> Filter<Root>
    where
        T: Located,
    {
        self.geo(
            "`$geoIntersects`",
            geometry(shape).map(|g| doc! { "$geoIntersects": { "$geometry": g } }),
        )
    }

    /// Within `range` meters of `point` (`..=5000.0`, `100.0..=5000.0`, `..` for any
    /// distance), nearest first (`{$near: {$geometry: point, $minDistance, $maxDistance}}`):
    /// a find with it returns the documents in distance order unless it sorts them otherwise.
    /// The server counts both ends of the range in.
    ///
    /// The field needs a 2dsphere index: a model that declares none does not compile; a field
    /// without one is refused before anything is sent. The server refuses `$near` in a count
    /// and inside `$or`.
    pub fn near(&self, point: Point, range: impl RangeBounds<f64>) -> Filter<Root>
    where
        Root: GeoIndexed,
        T: Located,
    {
        self.nearness("$near", point, range)
    }

    /// As [`near`](Self::near), with `$nearSphere`: on a 2dsphere index the same distances
    /// on the sphere, in meters.
    pub fn near_sphere(&self, point: Point, range: impl RangeBounds<f64>) -> Filter<Root>
    where
        Root: GeoIndexed,
        T: Located,
    {
        self.nearness("$nearSphere", point, range)
    }

    fn nearness(&self, op: &str, point: Point, range: impl RangeBounds<f64>) -> Filter<Root>
    where
        Root: GeoIndexed,
    {
        if let Some(refused) = super::unindexed::<Root>(self.path()) {
            return Filter::from_parts(Document::new(), Some(refused));
        }
        let built = meters(&range).and_then(|(min, max)| {
            let mut near = doc! { "$geometry": geometry(&point)? };
            if let Some(min) = min {
                near.insert("$minDistance", min);
            }
            if let Some(max) = max {
                near.insert("$maxDistance", max);
            }
            Ok(doc! { op: near })
        });
        self.geo(&format!("`{op}`"), built)
    }
}
