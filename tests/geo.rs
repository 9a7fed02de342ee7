//! Places: GeoJSON stored as the server indexes it, `$near` in distance order, `$geoNear`
//! with each distance, `$geoWithin` and `$geoIntersects`; a nearness query on a field without
//! its own 2dsphere index refused before anything is sent; bad coordinates, from a user or
//! stored by another program, are typed errors.

mod common;

use common::last_command;
use odm::bson::{doc, Document};
use odm::geo::{LineString, Point, Polygon};
use odm::prelude::*;

// ANCHOR: library
/// A branch of the library, with where it is and, for some, where its book van stops.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "branches")]
struct Branch {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[index(kind = "2dsphere")]
    at: Point,
    van_stop: Option<Point>,
}
// ANCHOR_END: library

fn point(lon: f64, lat: f64) -> Point {
    Point::new(lon, lat).expect("in range")
}

/// Notre-Dame de Paris, from which the distances are measured.
fn notre_dame() -> Point {
    point(2.3499, 48.8530)
}

/// Branches at about 0.4, 1.7, 3.9 and 340 km from Notre-Dame, inserted out of order.
async fn branches(db: &odm::testing::TestDb) -> odm::Result<()> {
    db.odm().sync_indexes_of::<Branch>().await?;
    let branch = |id: i32, name: &str, at: Point| Branch {
        id,
        name: name.into(),
        at,
        van_stop: None,
    };
    db.odm()
        .insert_many(&[
            branch(3, "Montparnasse", point(2.3210, 48.8422)),
            branch(4, "London", point(-0.1276, 51.5072)),
            branch(1, "Hôtel de Ville", point(2.3522, 48.8566)),
            branch(2, "Bastille", point(2.3691, 48.8532)),
        ])
        .await?;
    Ok(())
}

/// The great-circle distance in meters on the sphere the server uses.
fn haversine(a: Point, b: Point) -> f64 {
    let (la, lb) = (a.lat().to_radians(), b.lat().to_radians());
    let dlat = lb - la;
    let dlon = (b.lon() - a.lon()).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + la.cos() * lb.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * 6_378_100.0 * h.sqrt().asin()
}

#[tokio::test]
async fn points_are_stored_as_geojson() -> odm::Result<()> {
    let db = common::db().await?;
    branches(&db).await?;
    let raw = common::stored_one(&db, "branches", 1)
        .await
        .expect("stored");
    assert_eq!(
        raw.get_document("at").unwrap(),
        &doc! { "type": "Point", "coordinates": [2.3522, 48.8566] }
    );
    assert_eq!(raw.get("van_stop"), Some(&odm::bson::Bson::Null));
    Ok(())
}

#[tokio::test]
async fn near_returns_the_places_in_distance_order_within_the_range() -> odm::Result<()> {
    let db = common::db().await?;
    branches(&db).await?;
    // ANCHOR: near
    let close = db
        .odm()
        .find(Branch::at().near(notre_dame(), ..=5_000.0))
        .await?;
    // ANCHOR_END: near
    let ids: Vec<i32> = close.iter().map(|b| b.id).collect();
    assert_eq!(ids, [1, 2, 3], "nearest first, London out of range");
    let sent = last_command(&db, "find");
    assert_eq!(
        sent.get_document("filter").unwrap(),
        &doc! { "at": { "$near": {
            "$geometry": { "type": "Point", "coordinates": [2.3499, 48.8530] },
            "$maxDistance": 5_000.0,
        } } }
    );
    // A range with a lower bound leaves the nearest out; `$nearSphere` measures the same.
    let ring = db
        .odm()
        .find(Branch::at().near_sphere(notre_dame(), 1_000.0..=5_000.0))
        .await?;
    assert_eq!(ring.iter().map(|b| b.id).collect::<Vec<_>>(), [2, 3]);
    let filter = last_command(&db, "find")
        .get_document("filter")
        .unwrap()
        .clone();
    let near = filter
        .get_document("at")
        .unwrap()
        .get_document("$nearSphere")
        .unwrap();
    assert_eq!(near.get_f64("$minDistance").ok(), Some(1_000.0));
    Ok(())
}

#[tokio::test]
async fn nearest_gives_each_distance_in_one_aggregate() -> odm::Result<()> {
    let db = common::db().await?;
    branches(&db).await?;
    db.commands().clear();
    // ANCHOR: nearest
    let nearest = db
        .odm()
        .nearest(Branch::at(), notre_dame())
        .max_distance(5_000.0)
        .limit(2)
        .await?;
    for n in &nearest {
        println!("{} at {:.0} m", n.document.name, n.meters);
    }
    // ANCHOR_END: nearest
    assert_eq!(db.commands().count(), 1, "{:?}", common::sent(&db));
    assert_eq!(
        nearest.iter().map(|n| n.document.id).collect::<Vec<_>>(),
        [1, 2]
    );
    for n in &nearest {
        let expected = haversine(notre_dame(), n.document.at);
        assert!(
            (n.meters - expected).abs() < expected * 0.01 + 1.0,
            "{} m, expected about {expected} m",
            n.meters
        );
    }
    let sent = last_command(&db, "aggregate");
    let stage = sent.get_array("pipeline").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("$geoNear")
        .unwrap()
        .clone();
    assert_eq!(stage.get_str("key").ok(), Some("at"));
    assert_eq!(stage.get_bool("spherical").ok(), Some(true));
    // With a filter: the others among the nearest.
    let others = db
        .odm()
        .nearest(Branch::at(), notre_dame())
        .filter(Branch::name().ne("Hôtel de Ville"))
        .limit(1)
        .await?;
    assert_eq!(others[0].document.id, 2);
    Ok(())
}

#[tokio::test]
async fn within_an_area_a_circle_and_across_a_line() -> odm::Result<()> {
    let db = common::db().await?;
    branches(&db).await?;
    // The right bank around the Marais: Hôtel de Ville and Bastille.
    let marais = Polygon::new([
        point(2.340, 48.850),
        point(2.380, 48.850),
        point(2.380, 48.870),
        point(2.340, 48.870),
    ])
    .expect("a ring");
    let inside = db.odm().find(Branch::at().within(&marais)).await?;
    let mut ids: Vec<i32> = inside.iter().map(|b| b.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    // Within 2 km of Notre-Dame, as `$centerSphere` in radians.
    let mut ids: Vec<i32> = db
        .odm()
        .find(Branch::at().within_circle(notre_dame(), 2_000.0))
        .await?
        .iter()
        .map(|b| b.id)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    // A line through Bastille's point intersects it.
    let line = LineString::new([point(2.3691, 48.8500), point(2.3691, 48.8600)]).unwrap();
    let crossed = db.odm().find(Branch::at().intersects(&line)).await?;
    let filter = last_command(&db, "find")
        .get_document("filter")
        .unwrap()
        .clone();
    assert!(filter
        .get_document("at")
        .unwrap()
        .contains_key("$geoIntersects"));
    // Whether a line meets a point exactly depends on the server's arithmetic; a point on
    // itself always does.
    assert!(crossed.iter().all(|b| b.id == 2), "{crossed:?}");
    let itself = db
        .odm()
        .find(Branch::at().intersects(&point(2.3691, 48.8532)))
        .await?;
    assert_eq!(itself.iter().map(|b| b.id).collect::<Vec<_>>(), [2]);
    Ok(())
}

#[tokio::test]
async fn nearness_on_a_field_without_its_own_index_is_refused_before_sending() -> odm::Result<()> {
    let db = common::db().await?;
    branches(&db).await?;
    db.commands().clear();
    let refused = db
        .odm()
        .find(Branch::van_stop().near(notre_dame(), ..))
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("`van_stop` of Branch has no 2dsphere index"),
        "{refused}"
    );
    let refused = db
        .odm()
        .nearest(Branch::van_stop(), notre_dame())
        .await
        .unwrap_err();
    assert!(matches!(refused, odm::Error::Encode { .. }), "{refused:?}");
    // A distance that is no distance, as a form may send it.
    let refused = db
        .odm()
        .find(Branch::at().near(notre_dame(), ..=f64::NAN))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not a distance"), "{refused}");
    let refused = db
        .odm()
        .find(Branch::at().within_circle(notre_dame(), -1.0))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not a distance"), "{refused}");
    assert_eq!(db.commands().count(), 0, "{:?}", common::sent(&db));
    // Coordinates from a user are checked where the point is made.
    assert!(Point::new(f64::NAN, 0.0).is_err());
    assert!(Point::new(2.35, 91.0).is_err());
    Ok(())
}

#[tokio::test]
async fn a_stored_place_that_is_no_geojson_point_is_a_typed_error() -> odm::Result<()> {
    let db = common::db().await?;
    let raw = db.raw().collection::<Document>("branches");
    raw.insert_many([
        doc! { "_id": 7, "name": "Moon", "at": { "type": "Point", "coordinates": [500, 0] } },
        doc! { "_id": 8, "name": "Shape", "at": { "type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]] } },
    ])
    .await
    .unwrap();
    for id in [7, 8] {
        let err = db
            .odm()
            .find_one(Branch::id_field().eq(id))
            .await
            .unwrap_err();
        match &err {
            odm::Error::Decode {
                collection, path, ..
            } => {
                assert_eq!(collection, "branches");
                assert_eq!(path, "at", "{err}");
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains(&id.to_string()), "{err}");
    }
    Ok(())
}
