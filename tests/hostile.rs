//! Hostile values through every public entry point that takes one: operator-shaped documents,
//! regular expressions, keys with `$` and `.`, NUL bytes, 1 MB strings, extreme numbers. Each
//! test reads the database back with the raw driver: nothing is read as an operator or a
//! pattern, other documents are untouched, lists are not emptied, and exactly the literal
//! document matches, or none.

mod common;

use common::{stored, stored_one};
use odm::bson::{doc, Bson, Document, Regex};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::{Error, TransactionMode};

/// A shelf lists its items; ids of any BSON type, so that callers can pass hostile ones.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "shelves")]
pub struct Shelf {
    #[serde(rename = "_id")]
    pub id: Bson,
    pub name: String,
    #[reference(many, max = 1000, inverse = "shelf", on_delete = "pull")]
    pub items: Vec<Ref<Item>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "items")]
pub struct Item {
    #[serde(rename = "_id")]
    pub id: Bson,
    pub label: String,
    pub n: i64,
    pub x: f64,
    pub tags: Vec<String>,
    pub data: Bson,
    #[parent(inverse = "items")]
    pub shelf: Ref<Shelf>,
    #[denormalize(from = "Shelf", via = "shelf", fields = "name")]
    #[serde(default)]
    pub shelf_name: String,
}

fn regex(pattern: &str) -> Bson {
    Bson::RegularExpression(Regex {
        pattern: pattern.try_into().unwrap(),
        options: "".try_into().unwrap(),
    })
}

/// The hostile values a caller might pass where a value is expected.
fn hostile() -> Vec<Bson> {
    vec![
        Bson::Document(doc! { "$exists": true }),
        Bson::Document(doc! { "$gt": "" }),
        Bson::Document(doc! { "$where": "1" }),
        Bson::Document(doc! { "$ne": Bson::Null }),
        Bson::Document(doc! { "$in": ["a", "b"] }),
        regex(".*"),
        Bson::String("a\0b".into()),
        Bson::String("x".repeat(1 << 20)),
        Bson::Int64(i64::MIN),
        Bson::Int64(i64::MAX),
        Bson::Double(f64::NAN),
        Bson::Double(f64::INFINITY),
        Bson::Double(f64::NEG_INFINITY),
    ]
}

fn is_where(v: &Bson) -> bool {
    v.as_document().is_some_and(|d| d.contains_key("$where"))
}

fn item(id: &str, shelf: &str) -> Item {
    Item {
        id: id.into(),
        label: format!("label {id}"),
        n: 1,
        x: 1.0,
        tags: vec!["t".into()],
        data: Bson::String(format!("data {id}")),
        shelf: Ref::new(Bson::from(shelf)),
        shelf_name: String::new(),
    }
}

/// Shelves `a` (items `i1`, `i2`) and `b` (empty), stored through the ODM.
async fn setup(db: &TestDb) -> odm::Result<()> {
    let shelves = [
        Shelf {
            id: "a".into(),
            name: "Shelf A".into(),
            items: vec![Ref::new(Bson::from("i1")), Ref::new(Bson::from("i2"))],
        },
        Shelf {
            id: "b".into(),
            name: "Shelf B".into(),
            items: vec![],
        },
    ];
    db.odm().insert_many(&shelves).await?;
    db.odm()
        .insert_many(&[item("i1", "a"), item("i2", "a")])
        .await?;
    db.commands().clear();
    Ok(())
}

/// Everything stored, both collections, to compare before and after.
async fn snapshot(db: &TestDb) -> (Vec<Document>, Vec<Document>) {
    (stored(db, "shelves").await, stored(db, "items").await)
}

#[tokio::test]
async fn reassign_with_an_operator_shaped_child_id_moves_nothing() -> odm::Result<()> {
    for mode in [TransactionMode::Always, TransactionMode::Never] {
        let db = common::db().await?;
        setup(&db).await?;
        let before = snapshot(&db).await;
        for child in hostile() {
            let result = db
                .odm()
                .reassign(Item::shelf(), child.clone(), Bson::from("b"))
                .transaction(mode)
                .await;
            assert!(result.is_err(), "{mode:?} {child}: {result:?}");
            assert_eq!(snapshot(&db).await, before, "{mode:?} {child}");
        }
        // The same as the new parent.
        for to in hostile() {
            let result = db
                .odm()
                .reassign(Item::shelf(), Bson::from("i1"), to.clone())
                .transaction(mode)
                .await;
            assert!(result.is_err(), "{mode:?} {to}: {result:?}");
            assert_eq!(snapshot(&db).await, before, "{mode:?} {to}");
        }
    }
    Ok(())
}

#[tokio::test]
async fn an_operator_shaped_id_is_refused_before_anything_is_sent() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    let err = db
        .odm()
        .reassign(
            Item::shelf(),
            Bson::Document(doc! { "$exists": true }),
            Bson::from("b"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidKey { key, .. } if key == "$exists"),
        "{err}"
    );
    assert!(db.commands().take().is_empty());
    Ok(())
}

#[tokio::test]
async fn a_document_id_still_works_as_a_literal_id() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    let doc_id = Bson::Document(doc! { "a": 1, "b": "x" });
    let mut special = item("unused", "a");
    special.id = doc_id.clone();
    db.odm().insert_one(&special).await?;
    db.raw()
        .collection::<Document>("shelves")
        .update_one(
            doc! { "_id": "a" },
            doc! { "$push": { "items": doc_id.clone() } },
        )
        .await
        .unwrap();

    let got = db.odm().get::<Item>(doc_id.clone()).await?;
    assert_eq!(got.map(|i| i.id), Some(doc_id.clone()));
    let moved = db
        .odm()
        .reassign(Item::shelf(), doc_id.clone(), Bson::from("b"))
        .await?;
    assert!(moved.changed);
    let a = stored_one(&db, "shelves", "a").await.unwrap();
    assert_eq!(
        a.get_array("items").unwrap(),
        &vec![Bson::from("i1"), Bson::from("i2")]
    );
    let b = stored_one(&db, "shelves", "b").await.unwrap();
    assert_eq!(b.get_array("items").unwrap(), &vec![doc_id.clone()]);
    let moved_item = db
        .raw()
        .collection::<Document>("items")
        .find_one(doc! { "_id": { "$eq": doc_id.clone() } })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(moved_item.get_str("shelf").unwrap(), "b");
    assert_eq!(moved_item.get_str("shelf_name").unwrap(), "Shelf B");
    Ok(())
}

#[tokio::test]
async fn reads_by_hostile_values_match_literally() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    let odm = db.odm();
    for v in hostile() {
        if is_where(&v) {
            // The server may refuse `$where` even as a value (counts are aggregations,
            // which do): an error or no match, never a match.
            assert!(matches!(
                odm.get::<Item>(v.clone()).await,
                Ok(None) | Err(_)
            ));
            let counted = odm.count(Item::data().is_in([v.clone()])).await;
            assert!(matches!(counted, Ok(0) | Err(_)), "{counted:?}");
            continue;
        }
        let literal_string = matches!(&v, Bson::String(_));
        // Ids: none of these is stored.
        assert!(odm.get::<Item>(v.clone()).await?.is_none(), "get {v}");
        assert_eq!(odm.count(Item::id_field().eq(v.clone())).await?, 0, "{v}");
        assert_eq!(
            odm.count(Item::id_field().is_in([v.clone()])).await?,
            0,
            "is_in {v}"
        );
        assert_eq!(
            odm.count(Item::id_field().is_in([v.clone(), Bson::from("i1")]))
                .await?,
            1,
            "is_in {v} + i1"
        );
        assert_eq!(
            odm.count(Item::id_field().not_in([v.clone()])).await?,
            2,
            "not_in {v}"
        );
        assert_eq!(odm.count(Item::data().ne(v.clone())).await?, 2, "ne {v}");
        assert_eq!(odm.count(Item::data().eq(v.clone())).await?, 0, "eq {v}");
        let ids = odm.find_id(Item::data().eq(v.clone())).await?;
        assert!(ids.is_none(), "find_id {v}");
        if literal_string {
            let s = v.as_str().unwrap();
            assert_eq!(odm.count(Item::label().eq(s)).await?, 0);
            assert_eq!(odm.count(Item::tags().contains(s)).await?, 0);
            assert_eq!(odm.count(Item::tags().contains_all([s, "t"])).await?, 0);
        }
    }
    // Regular expressions in lists: never a pattern.
    assert_eq!(odm.count(Item::label().is_in([".*"])).await?, 0);
    assert_eq!(odm.count(Item::data().is_in([regex(".*")])).await?, 0);
    assert_eq!(odm.count(Item::data().not_in([regex(".*")])).await?, 2);
    Ok(())
}

#[tokio::test]
async fn a_stored_regex_is_matched_as_a_value_in_lists() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    db.raw()
        .collection::<Document>("items")
        .update_one(
            doc! { "_id": "i2" },
            doc! { "$set": { "data": regex("^d") } },
        )
        .await
        .unwrap();
    let odm = db.odm();
    // `/^d/` as a pattern would match i1's "data i1" too.
    let found = odm.find::<Item>(Item::data().is_in([regex("^d")])).await?;
    assert_eq!(
        found.iter().map(|i| i.id.clone()).collect::<Vec<_>>(),
        [Bson::from("i2")]
    );
    let found = odm
        .find::<Item>(Item::data().is_in([regex("^d"), Bson::from("data i1")]))
        .await?;
    assert_eq!(found.len(), 2);
    assert_eq!(odm.count(Item::data().not_in([regex("^d")])).await?, 1);
    assert_eq!(odm.count(Item::data().ne(regex("^d"))).await?, 1);
    assert_eq!(odm.count(Item::data().eq(regex("^d"))).await?, 1);
    Ok(())
}

#[tokio::test]
async fn writes_of_hostile_values_land_as_values() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    let odm = db.odm();
    for (k, v) in hostile().into_iter().enumerate() {
        let id = format!("h{k}");
        let mut it = item(&id, "b");
        it.data = v.clone();
        if let Bson::String(s) = &v {
            it.label = s.clone();
        }
        let inserted = odm.insert_one(&it).await;
        let operator_keys = matches!(&v, Bson::Document(_));
        if operator_keys {
            // A key starting with `$` is refused before it is sent.
            assert!(
                matches!(inserted, Err(Error::InvalidKey { .. })),
                "{v}: {inserted:?}"
            );
            assert!(stored_one(&db, "items", id.as_str()).await.is_none());
            continue;
        }
        inserted?;
        let back = stored_one(&db, "items", id.as_str()).await.unwrap();
        match &v {
            Bson::Double(f) if f.is_nan() => assert!(back.get_f64("data").unwrap().is_nan()),
            _ => assert_eq!(back.get("data"), Some(&v), "{v}"),
        }
        // Read back by the literal value (NaN equals NaN in MongoDB's comparisons).
        let ids = odm
            .find::<Item>(Item::id_field().eq(Bson::from(id.as_str())) & Item::data().eq(v.clone()))
            .await?;
        assert_eq!(ids.len(), 1, "{v}");
        // Updates with the value.
        odm.update_by_id::<Item>(
            Bson::from(id.as_str()),
            Item::data().set(v.clone()).and(Item::tags().push("z")),
        )
        .await?;
        let back = stored_one(&db, "items", id.as_str()).await.unwrap();
        assert_eq!(back.get_array("tags").unwrap().len(), 2);
        // Deletes by the value take exactly this document.
        let deleted = odm
            .delete_one::<Item>(
                Item::id_field().eq(Bson::from(id.as_str())) & Item::data().eq(v.clone()),
            )
            .await?;
        assert_eq!(deleted, 1, "{v}");
    }
    // Numbers at the edges, through `inc`.
    odm.update_by_id::<Item>(Bson::from("i1"), Item::n().set(i64::MAX))
        .await?;
    odm.update_by_id::<Item>(
        Bson::from("i2"),
        Item::x().set(f64::INFINITY).and(Item::n().inc(i64::MIN)),
    )
    .await?;
    let i1 = stored_one(&db, "items", "i1").await.unwrap();
    assert_eq!(i1.get_i64("n").unwrap(), i64::MAX);
    let i2 = stored_one(&db, "items", "i2").await.unwrap();
    assert_eq!(i2.get_i64("n").unwrap(), i64::MIN + 1);
    assert_eq!(i2.get_f64("x").unwrap(), f64::INFINITY);
    // Keys with `$` and `.` inside update values are refused; nothing changes.
    let before = snapshot(&db).await;
    for bad in [
        doc! { "$gt": "" },
        doc! { "a.b": 1 },
        doc! { "ok": { "$where": "1" } },
    ] {
        let err = odm
            .update_by_id::<Item>(
                Bson::from("i1"),
                Item::data().set(Bson::Document(bad.clone())),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{bad}: {err}");
        let mut replaced = item("i1", "a");
        replaced.data = Bson::Document(bad.clone());
        let err = odm.replace_one(&replaced).await.unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{bad}: {err}");
    }
    assert_eq!(snapshot(&db).await, before);
    // The hostile documents were the only ones deleted: the others are all there.
    assert_eq!(stored(&db, "items").await.len(), 2);
    Ok(())
}

#[tokio::test]
async fn deletes_and_updates_by_hostile_filters_touch_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    let odm = db.odm();
    let before = snapshot(&db).await;
    for v in hostile() {
        assert_eq!(
            odm.delete_many::<Item>(Item::id_field().eq(v.clone()))
                .await?,
            0
        );
        assert_eq!(
            odm.delete_one::<Item>(Item::data().is_in([v.clone()]))
                .await?,
            0
        );
        let updated = odm
            .update_many::<Item>(Item::id_field().is_in([v.clone()]), Item::label().set("x"))
            .await?;
        assert_eq!(updated.matched_count, 0, "{v}");
        let by_id = odm
            .update_by_id::<Item>(v.clone(), Item::label().set("x"))
            .await?;
        assert_eq!(by_id.matched_count, 0, "{v}");
        assert_eq!(
            odm.delete_many::<Shelf>(Shelf::id_field().eq(v.clone()))
                .await?,
            0
        );
    }
    assert_eq!(snapshot(&db).await, before);
    Ok(())
}

#[tokio::test]
async fn populate_and_children_take_stored_hostile_ids_literally() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    // A reference holding a pattern, written around the ODM.
    db.raw()
        .collection::<Document>("items")
        .update_one(
            doc! { "_id": "i2" },
            doc! { "$set": { "shelf": regex(".*") } },
        )
        .await
        .unwrap();
    db.commands().clear();
    let items = db
        .odm()
        .find::<Item>(Item::id_field().eq(Bson::from("i2")))
        .populate(Item::shelf().populate().dangling(Dangling::Skip))
        .await?;
    assert_eq!(items.len(), 1);
    assert!(items[0].shelf.get().is_none(), "a pattern found a shelf");
    if common::lookup_plan() {
        // The stored value never enters the command: the server joins on the field.
        let lookup = common::last_lookup_into(&db, "shelves");
        assert_eq!(lookup.get_str("localField").unwrap(), "shelf");
    } else {
        // The pattern is sent as a value to compare with, not inside `$in`.
        let find = common::last_command(&db, "find");
        assert_eq!(
            find.get_document("filter").unwrap(),
            &doc! { "$or": [{ "_id": { "$eq": regex(".*") } }] }
        );
    }

    // Parents with hostile ids: their children are those whose reference equals the id.
    let hostile_parent = Shelf {
        id: regex(".*"),
        name: "pattern".into(),
        items: vec![],
    };
    let a = Shelf {
        id: "a".into(),
        name: "Shelf A".into(),
        items: vec![],
    };
    db.commands().clear();
    let children = db
        .odm()
        .children(Item::shelf(), &[hostile_parent.clone(), a.clone()])
        .await?;
    let find = common::last_command(&db, "find");
    assert_eq!(
        find.get_document("filter").unwrap(),
        &doc! { "$or": [{ "shelf": { "$in": ["a"] } }, { "shelf": { "$eq": regex(".*") } }] }
    );
    assert_eq!(children.of(&a).len(), 1, "only i1 is on shelf a");
    assert_eq!(
        children.of(&hostile_parent).len(),
        1,
        "i2 holds the pattern itself"
    );
    let limited = db
        .odm()
        .children(Item::shelf(), &[hostile_parent, a])
        .limit_per_parent(5)
        .await?;
    assert_eq!(limited.total(), 2);
    Ok(())
}

#[tokio::test]
async fn repairs_pull_stored_hostile_ids_as_values() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    // Shelf a lists a pattern that no item refers to: an extra entry, to be pulled alone.
    db.raw()
        .collection::<Document>("shelves")
        .update_one(
            doc! { "_id": "a" },
            doc! { "$push": { "items": regex(".*") } },
        )
        .await
        .unwrap();
    let report = db.odm().verify_inverse(Item::shelf()).repair(true).await?;
    assert_eq!(report.parents_repaired, 1, "{report:?}");
    let a = stored_one(&db, "shelves", "a").await.unwrap();
    assert_eq!(
        a.get_array("items").unwrap(),
        &vec![Bson::from("i1"), Bson::from("i2")],
        "the repair emptied the list"
    );
    // A copy following a pattern: the sweep finds no source for it, and touches no other item.
    db.raw()
        .collection::<Document>("items")
        .update_one(
            doc! { "_id": "i2" },
            doc! { "$set": { "shelf": regex(".*"), "shelf_name": "stale" } },
        )
        .await
        .unwrap();
    db.raw()
        .collection::<Document>("items")
        .update_one(
            doc! { "_id": "i1" },
            doc! { "$set": { "shelf_name": "old" } },
        )
        .await
        .unwrap();
    let report = db.odm().verify_copies().repair(true).await?;
    let i1 = stored_one(&db, "items", "i1").await.unwrap();
    assert_eq!(i1.get_str("shelf_name").unwrap(), "Shelf A", "{report:?}");
    let i2 = stored_one(&db, "items", "i2").await.unwrap();
    assert_eq!(i2.get("shelf"), Some(&regex(".*")));
    Ok(())
}

#[tokio::test]
async fn deleting_a_shelf_pulls_nothing_but_its_own_id() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    // Item i3 refers to a parent listed with a pattern among ordinary ids.
    db.raw()
        .collection::<Document>("shelves")
        .update_one(
            doc! { "_id": "b" },
            doc! { "$set": { "items": [regex(".*"), "i1"] } },
        )
        .await
        .unwrap();
    db.odm()
        .delete_many::<Item>(Item::id_field().eq(Bson::from("i2")))
        .await?;
    let b = stored_one(&db, "shelves", "b").await.unwrap();
    assert_eq!(
        b.get_array("items").unwrap(),
        &vec![regex(".*"), Bson::from("i1")]
    );
    let a = stored_one(&db, "shelves", "a").await.unwrap();
    assert_eq!(a.get_array("items").unwrap(), &vec![Bson::from("i1")]);
    Ok(())
}

#[tokio::test]
async fn at_path_refuses_operator_and_empty_segments() -> odm::Result<()> {
    for path in [
        "$where",
        "data.$gt",
        "parts.$[p].name",
        "parts.$.name",
        "a..b",
        ".a",
        "a.",
        "",
        "a\0b",
    ] {
        let path = path.replace("\\0", "\0");
        let err = Field::<Item, String>::at_path(path.clone()).unwrap_err();
        match err {
            Error::InvalidPath {
                collection,
                path: p,
                ..
            } => {
                assert_eq!(collection, "items");
                assert_eq!(p, path);
            }
            other => panic!("{path:?}: {other}"),
        }
    }
    let ok = Field::<Item, String>::at_path("data.sub_field.0")?;
    assert_eq!(ok.path(), "data.sub_field.0");
    Ok(())
}

#[tokio::test]
async fn raw_updates_are_refused_on_copies() -> odm::Result<()> {
    let db = common::db().await?;
    setup(&db).await?;
    db.odm()
        .update_by_id::<Item>(Bson::from("i1"), Item::label().set("x"))
        .await?;
    let before = snapshot(&db).await;
    db.commands().clear();
    for raw in [
        doc! { "$set": { "shelf_name": "hand-made" } },
        doc! { "$unset": { "shelf_name": "" } },
        doc! { "$rename": { "label": "shelf_name" } },
        doc! { "$rename": { "shelf_name": "kept" } },
        doc! { "$setOnInsert": { "shelf_name": "x" } },
        doc! { "$currentDate": { "shelf_name": true } },
        doc! { "$set": { "label": "fine", "shelf_name": "not fine" } },
    ] {
        let err = db
            .odm()
            .update_by_id::<Item>(Bson::from("i1"), Update::raw(raw.clone()))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::CopyWrite { .. }), "{raw}: {err}");
        let err = db
            .odm()
            .update_many::<Item>(Filter::all(), Update::raw(raw.clone()))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::CopyWrite { .. }), "{raw}: {err}");
    }
    assert!(db.commands().take().is_empty(), "nothing is sent");
    assert_eq!(snapshot(&db).await, before);
    // A raw write of the reference of a two-way child is refused (it would leave the shelves'
    // lists as they were); the move that keeps both sides takes the copy.
    db.odm()
        .update_by_id::<Item>(
            Bson::from("i1"),
            Update::raw(doc! { "$set": { "shelf": "b", "shelf_name": "ignored" } }),
        )
        .await
        .unwrap_err();
    let err = db
        .odm()
        .update_by_id::<Item>(
            Bson::from("i1"),
            Update::raw(doc! { "$set": { "shelf": "b" } }),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::TwoWayWrite { .. }), "{err}");
    assert_eq!(snapshot(&db).await, before);
    db.odm()
        .reassign(Item::shelf(), Bson::from("i1"), Bson::from("b"))
        .await?;
    let i1 = stored_one(&db, "items", "i1").await.unwrap();
    assert_eq!(i1.get_str("shelf_name").unwrap(), "Shelf B");
    Ok(())
}
