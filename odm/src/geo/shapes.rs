//! The GeoJSON values: a point, a line, a polygon, and any of them. Each is valid once made
//! (coordinates in range, rings closed), whether built by the program or read from a document.

use std::fmt;

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why coordinates do not make a place: a longitude or latitude out of range or not a number,
/// a position without two coordinates, a ring of fewer than three distinct points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeoError(String);

impl fmt::Display for GeoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GeoError {}

/// A point on the Earth: a longitude and a latitude in degrees (WGS 84, GeoJSON's order:
/// longitude first). Stored as `{type: "Point", coordinates: [lon, lat]}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    lon: f64,
    lat: f64,
}

impl Point {
    /// The point at longitude `lon` (−180..=180) and latitude `lat` (−90..=90); a value out of
    /// range, infinite or NaN is a [`GeoError`].
    pub fn new(lon: f64, lat: f64) -> Result<Self, GeoError> {
        if !(lon.is_finite() && (-180.0..=180.0).contains(&lon)) {
            return Err(GeoError(format!(
                "longitude {lon} is not in -180..=180 degrees"
            )));
        }
        if !(lat.is_finite() && (-90.0..=90.0).contains(&lat)) {
            return Err(GeoError(format!(
                "latitude {lat} is not in -90..=90 degrees"
            )));
        }
        Ok(Point { lon, lat })
    }

    /// Its longitude, in degrees.
    pub fn lon(&self) -> f64 {
        self.lon
    }

    /// Its latitude, in degrees.
    pub fn lat(&self) -> f64 {
        self.lat
    }

    /// A GeoJSON position (`[lon, lat]`; a third coordinate, an altitude, is refused rather
    /// than dropped).
    fn from_position(position: &[f64]) -> Result<Self, GeoError> {
        match position {
            [lon, lat] => Point::new(*lon, *lat),
            [_, _, _] => Err(GeoError(
                "a position with an altitude: only longitude and latitude are kept".into(),
            )),
            other => Err(GeoError(format!(
                "a position has two coordinates, not {}",
                other.len()
            ))),
        }
    }

    fn position(&self) -> [f64; 2] {
        [self.lon, self.lat]
    }
}

/// A line through two or more points. Stored as `{type: "LineString", coordinates: [...]}`.
#[derive(Debug, Clone, PartialEq)]
pub struct LineString {
    points: Vec<Point>,
}

impl LineString {
    /// The line through `points`, at least two of them.
    pub fn new(points: impl IntoIterator<Item = Point>) -> Result<Self, GeoError> {
        let points: Vec<Point> = points.into_iter().collect();
        if points.len() < 2 {
            return Err(GeoError(format!(
                "a line has at least two points, not {}",
                points.len()
            )));
        }
        Ok(LineString { points })
    }

    /// Its points, in order.
    pub fn points(&self) -> &[Point] {
        &self.points
    }
}

/// An area bounded by a ring of points, with holes bounded by other rings. Stored as
/// `{type: "Polygon", coordinates: [[exterior...], [hole...], ...]}`, each ring closed (its
/// last position its first).
#[derive(Debug, Clone, PartialEq)]
pub struct Polygon {
    rings: Vec<Vec<Point>>,
}

impl Polygon {
    /// The area bounded by `exterior`, at least three distinct points in order; the ring is
    /// closed here when its last point is not its first.
    pub fn new(exterior: impl IntoIterator<Item = Point>) -> Result<Self, GeoError> {
        Ok(Polygon {
            rings: vec![ring(exterior.into_iter().collect())?],
        })
    }

    /// The same area without the inside of `hole` (a ring as [`Polygon::new`] takes).
    pub fn with_hole(mut self, hole: impl IntoIterator<Item = Point>) -> Result<Self, GeoError> {
        self.rings.push(ring(hole.into_iter().collect())?);
        Ok(self)
    }

    /// Its rings, the exterior first, each closed.
    pub fn rings(&self) -> &[Vec<Point>] {
        &self.rings
    }
}

/// `points` as a closed ring of at least three distinct points.
fn ring(mut points: Vec<Point>) -> Result<Vec<Point>, GeoError> {
    if points.first() != points.last() || points.len() == 1 {
        points.push(points[0]);
    }
    if points.len() < 4 {
        return Err(GeoError(format!(
            "a ring has at least three distinct points, not {}",
            points.len().saturating_sub(1)
        )));
    }
    Ok(points)
}

/// Any of the shapes, for a field that may hold either and for [`intersects`](crate::Field::intersects).
#[derive(Debug, Clone, PartialEq)]
pub enum Geometry {
    /// A point.
    Point(Point),
    /// A line.
    LineString(LineString),
    /// A polygon.
    Polygon(Polygon),
}

impl From<Point> for Geometry {
    fn from(p: Point) -> Self {
        Geometry::Point(p)
    }
}

impl From<LineString> for Geometry {
    fn from(l: LineString) -> Self {
        Geometry::LineString(l)
    }
}

impl From<Polygon> for Geometry {
    fn from(p: Polygon) -> Self {
        Geometry::Polygon(p)
    }
}

/// `{type: kind, coordinates}`.
fn geojson<S: Serializer, C: Serialize>(
    s: S,
    kind: &str,
    coordinates: C,
) -> Result<S::Ok, S::Error> {
    let mut out = s.serialize_struct("GeoJson", 2)?;
    out.serialize_field("type", kind)?;
    out.serialize_field("coordinates", &coordinates)?;
    out.end()
}

fn positions(points: &[Point]) -> Vec<[f64; 2]> {
    points.iter().map(Point::position).collect()
}

impl Serialize for Point {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        geojson(s, "Point", self.position())
    }
}

impl Serialize for LineString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        geojson(s, "LineString", positions(&self.points))
    }
}

impl Serialize for Polygon {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rings: Vec<Vec<[f64; 2]>> = self.rings.iter().map(|r| positions(r)).collect();
        geojson(s, "Polygon", rings)
    }
}

impl Serialize for Geometry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Geometry::Point(p) => p.serialize(s),
            Geometry::LineString(l) => l.serialize(s),
            Geometry::Polygon(p) => p.serialize(s),
        }
    }
}

/// GeoJSON as stored, by its `type`: the shapes odm reads.
#[derive(Deserialize)]
#[serde(tag = "type")]
enum Wire {
    Point { coordinates: Vec<f64> },
    LineString { coordinates: Vec<Vec<f64>> },
    Polygon { coordinates: Vec<Vec<Vec<f64>>> },
}

impl Wire {
    fn into_geometry(self) -> Result<Geometry, GeoError> {
        let points = |ps: Vec<Vec<f64>>| -> Result<Vec<Point>, GeoError> {
            ps.iter().map(|p| Point::from_position(p)).collect()
        };
        Ok(match self {
            Wire::Point { coordinates } => Geometry::Point(Point::from_position(&coordinates)?),
            Wire::LineString { coordinates } => {
                Geometry::LineString(LineString::new(points(coordinates)?)?)
            }
            Wire::Polygon { coordinates } => {
                let mut rings = Vec::with_capacity(coordinates.len());
                for r in coordinates {
                    let r = points(r)?;
                    if r.first() != r.last() {
                        return Err(GeoError("a polygon's ring is not closed".into()));
                    }
                    rings.push(ring(r)?);
                }
                if rings.is_empty() {
                    return Err(GeoError("a polygon without a ring".into()));
                }
                Geometry::Polygon(Polygon { rings })
            }
        })
    }
}

impl<'de> Deserialize<'de> for Geometry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Wire::deserialize(d)?
            .into_geometry()
            .map_err(D::Error::custom)
    }
}

/// `Deserialize` for one shape: read as any, refused when of another kind.
macro_rules! one_shape {
    ($ty:ident) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                match Geometry::deserialize(d)? {
                    Geometry::$ty(shape) => Ok(shape),
                    other => Err(D::Error::custom(format!(
                        "a GeoJSON {} where a {} is expected",
                        other.kind(),
                        stringify!($ty)
                    ))),
                }
            }
        }
    };
}
one_shape!(Point);
one_shape!(LineString);
one_shape!(Polygon);

impl Geometry {
    fn kind(&self) -> &'static str {
        match self {
            Geometry::Point(_) => "Point",
            Geometry::LineString(_) => "LineString",
            Geometry::Polygon(_) => "Polygon",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_out_of_range_or_nan_are_refused() {
        assert!(Point::new(2.35, 48.85).is_ok());
        assert!(Point::new(181.0, 0.0).is_err());
        assert!(Point::new(0.0, -90.5).is_err());
        assert!(Point::new(f64::NAN, 0.0).is_err());
        assert!(Point::new(0.0, f64::INFINITY).is_err());
    }

    #[test]
    fn shapes_round_trip_as_geojson_and_bad_stored_values_are_errors() {
        let p = Point::new(2.35, 48.85).unwrap();
        let stored = bson::serialize_to_bson(&p).unwrap();
        assert_eq!(
            stored,
            bson::bson!({ "type": "Point", "coordinates": [2.35, 48.85] })
        );
        assert_eq!(bson::deserialize_from_bson::<Point>(stored).unwrap(), p);
        // Integers as another program may store them.
        let ints = bson::bson!({ "type": "Point", "coordinates": [2, 48] });
        assert_eq!(
            bson::deserialize_from_bson::<Point>(ints).unwrap(),
            Point::new(2.0, 48.0).unwrap()
        );
        let square = Polygon::new([
            Point::new(0.0, 0.0).unwrap(),
            Point::new(1.0, 0.0).unwrap(),
            Point::new(1.0, 1.0).unwrap(),
            Point::new(0.0, 1.0).unwrap(),
        ])
        .unwrap();
        assert_eq!(square.rings()[0].len(), 5, "closed");
        let stored = bson::serialize_to_bson(&square).unwrap();
        assert_eq!(
            bson::deserialize_from_bson::<Polygon>(stored).unwrap(),
            square
        );
        for bad in [
            bson::bson!({ "type": "Point", "coordinates": [200, 0] }),
            bson::bson!({ "type": "Point", "coordinates": [1] }),
            bson::bson!({ "type": "Point", "coordinates": [1, 2, 3] }),
            bson::bson!({ "type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]] }),
            bson::bson!({ "type": "Circle", "coordinates": [0, 0] }),
            bson::bson!({ "coordinates": [0, 0] }),
        ] {
            assert!(
                bson::deserialize_from_bson::<Geometry>(bad.clone()).is_err(),
                "{bad}"
            );
        }
        let line = bson::bson!({ "type": "LineString", "coordinates": [[0, 0], [1, 1]] });
        assert!(bson::deserialize_from_bson::<Point>(line).is_err());
        assert!(Polygon::new([Point::new(0.0, 0.0).unwrap()]).is_err());
    }
}
