//! Places on the Earth: GeoJSON points, lines and polygons as typed values, and the queries a
//! 2dsphere index answers.
//!
//! A field of type [`Point`] (or [`LineString`], [`Polygon`], [`Geometry`], or an `Option` of
//! one) is stored as GeoJSON (`{type: "Point", coordinates: [lon, lat]}`), the form a
//! `#[index(kind = "2dsphere")]` indexes. Its path then has the geospatial filters:
//!
//! - [`near`](crate::Field::near) and [`near_sphere`](crate::Field::near_sphere) (`$near`,
//!   `$nearSphere`): the documents within a range of meters of a point, nearest first. Both
//!   need a 2dsphere index on the field: a model that declares none does not compile, and a
//!   field without one (when another field has it) is refused before anything is sent;
//! - [`within`](crate::Field::within) and [`within_circle`](crate::Field::within_circle)
//!   (`$geoWithin`): inside a polygon, or within meters of a point;
//! - [`intersects`](crate::Field::intersects) (`$geoIntersects`): sharing a point with a shape.
//!
//! [`Odm::nearest`](crate::Odm::nearest) gives the distance of each document too (one
//! `aggregate` with `$geoNear`).
//!
//! Coordinates are checked where a value is made: a longitude in −180..=180 and a latitude in
//! −90..=90, both finite (a NaN from a user's form is a [`GeoError`], not a query), and a
//! stored value that is not such GeoJSON is an [`Error::Decode`](crate::Error::Decode) naming
//! the document and the field.

mod filters;
mod near;
mod shapes;

pub use near::{Near, Nearest};
pub use shapes::{GeoError, Geometry, LineString, Point, Polygon};

/// Values stored as a GeoJSON object: [`Point`], [`LineString`], [`Polygon`] and
/// [`Geometry`].
pub trait GeoJson: serde::Serialize {}
impl GeoJson for Point {}
impl GeoJson for LineString {}
impl GeoJson for Polygon {}
impl GeoJson for Geometry {}

/// Field types that hold a place: the [`GeoJson`] values, and `Option`s of them (a `None`
/// matches no geospatial filter).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a place: geospatial filters are for GeoJSON fields",
    label = "not a GeoJSON field",
    note = "declare the field as `odm::geo::Point` (or `LineString`, `Polygon`, `Geometry`, or an `Option` of one)"
)]
pub trait Located {}
impl<G: GeoJson> Located for G {}
impl<G: GeoJson> Located for Option<G> {}

/// Models with a 2dsphere index (`#[index(kind = "2dsphere")]`), which `$near`,
/// `$nearSphere` and `$geoNear` need; `#[derive(Model)]` implements it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no 2dsphere index, which a nearness query needs",
    label = "a model without a 2dsphere index",
    note = "declare one on the field: `#[index(kind = \"2dsphere\")]`; the server refuses `$near` and `$geoNear` without it"
)]
pub trait GeoIndexed: crate::Model {}

/// Meters of the Earth's radius by which `$centerSphere` reads a distance as an angle.
pub(crate) const EARTH_RADIUS_M: f64 = 6_378_100.0;

/// Whether `path` of `T` has a 2dsphere index of its own (alone or as a key of a compound one).
pub(crate) fn indexed<T: crate::Model>(path: &str) -> bool {
    (T::entry().indexes)().iter().any(|spec| {
        spec.keys()
            .iter()
            .any(|(p, key)| p == path && *key == crate::catalog::IndexKey::Sphere)
    })
}

/// Why a nearness query on `path` of `T` cannot be sent, when its field has no 2dsphere index.
pub(crate) fn unindexed<T: crate::Model>(path: &str) -> Option<crate::query::Deferred> {
    (!indexed::<T>(path)).then(|| {
        crate::query::Deferred::new(
            format!("nearness query on `{path}`"),
            format!(
                "`{path}` of {} has no 2dsphere index: declare `#[index(kind = \"2dsphere\")]` on it",
                std::any::type_name::<T>().rsplit("::").next().unwrap_or("the model")
            ),
        )
    })
}
