//! Typed paths to array elements: the positional `$` (`matched()`), `$[]` (`each()`), `$[e0]`
//! with generated array filters (`each_where(...)`), and `$elemMatch` filters (`any(...)`),
//! read back with the raw driver. Writes into copies odm keeps through these paths are refused
//! before anything is sent.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use common::{last_command, sent, stored_one};
use denorm::parts::Part;
use denorm::products::{PartSummary, Product};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Referrer {
    domain: String,
    count: i64,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Edition {
    year: i32,
    tags: Vec<String>,
    #[embed(max = 2)]
    printings: Vec<Printing>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Printing {
    copies: i64,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "book_refs")]
struct BookRefs {
    #[serde(rename = "_id")]
    id: i64,
    #[embed(max = 50)]
    referrers: Vec<Referrer>,
    tags: Vec<String>,
    #[embed(max = 5)]
    editions: Vec<Edition>,
}

fn referrer(domain: &str, count: i64) -> Referrer {
    Referrer {
        domain: domain.to_owned(),
        count,
    }
}

/// The seed's document (exercise 7, solution A), with tags and editions to reach into.
fn seed(id: i64) -> BookRefs {
    BookRefs {
        id,
        referrers: vec![referrer("google.com", 4), referrer("yahoo.com", 1)],
        tags: vec!["jazz".into(), "draft".into(), "draft".into()],
        editions: vec![
            Edition {
                year: 1925,
                tags: vec!["draft".into(), "first".into()],
                printings: vec![],
            },
            Edition {
                year: 2004,
                tags: vec!["draft".into()],
                printings: vec![],
            },
        ],
    }
}

fn counts(stored: &Document) -> Vec<(String, i64)> {
    stored
        .get_array("referrers")
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_document().unwrap();
            (
                r.get_str("domain").unwrap().to_owned(),
                r.get_i64("count").unwrap(),
            )
        })
        .collect()
}

/// The update statement of the last `update` command: `(q, u, arrayFilters)`.
fn last_update(db: &TestDb) -> (Document, Document, Option<Vec<Bson>>) {
    let cmd = last_command(db, "update");
    let statement = cmd.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    (
        statement.get_document("q").unwrap().clone(),
        statement.get_document("u").unwrap().clone(),
        statement.get_array("arrayFilters").ok().cloned(),
    )
}

#[tokio::test]
async fn matched_increments_the_element_the_filter_matched() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&[seed(1), seed(2)]).await?;
    sent(&db);
    let update = BookRefs::referrers().matched().count().inc(1);
    assert_eq!(
        update.as_document(),
        &doc! { "$inc": { "referrers.$.count": 1_i64 } }
    );
    let result = db
        .odm()
        .update_one(
            BookRefs::id_field().eq(1) & BookRefs::referrers().domain().eq("google.com"),
            update,
        )
        .await?;
    assert_eq!(result.modified_count, 1);
    assert_eq!(sent(&db), ["update"]);
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    assert_eq!(
        counts(&one),
        [("google.com".into(), 5), ("yahoo.com".into(), 1)]
    );
    // The other book is untouched.
    let two = stored_one(&db, "book_refs", 2_i64).await.unwrap();
    assert_eq!(counts(&two)[0].1, 4);
    Ok(())
}

#[tokio::test]
async fn matched_follows_an_elem_match_filter() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    let filter = BookRefs::referrers().any(|r| r.domain().eq("yahoo.com") & r.count().lt(3));
    assert_eq!(
        filter.as_document(),
        &doc! { "referrers": { "$elemMatch": {
            "domain": "yahoo.com",
            "count": { "$lt": 3_i64 },
        } } }
    );
    db.odm()
        .update_one(filter, BookRefs::referrers().matched().count().set(10))
        .await?;
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    assert_eq!(
        counts(&one),
        [("google.com".into(), 4), ("yahoo.com".into(), 10)]
    );
    Ok(())
}

#[tokio::test]
async fn any_needs_one_element_to_meet_every_condition() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    // google.com has 4, yahoo.com has 1: no element is both yahoo.com and above 3 ...
    let one_element = BookRefs::referrers().any(|r| r.domain().eq("yahoo.com") & r.count().gt(3));
    assert_eq!(db.odm().count(one_element).await?, 0);
    // ... while two different elements meet the two halves.
    let two_elements =
        BookRefs::referrers().domain().eq("yahoo.com") & BookRefs::referrers().count().gt(3);
    assert_eq!(db.odm().count(two_elements).await?, 1);
    // Scalars: the element's own operators.
    let draft = BookRefs::tags().any(|t| t.eq("draft"));
    assert_eq!(
        draft.as_document(),
        &doc! { "tags": { "$elemMatch": { "$eq": "draft" } } }
    );
    assert_eq!(db.odm().count(draft).await?, 1);
    Ok(())
}

#[tokio::test]
async fn each_where_sends_generated_array_filters() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    sent(&db);
    let update = BookRefs::referrers()
        .each_where(|r| r.domain().eq("google.com"))
        .count()
        .inc(3);
    assert_eq!(
        update.as_document(),
        &doc! { "$inc": { "referrers.$[e0].count": 3_i64 } }
    );
    assert_eq!(update.array_filters(), [doc! { "e0.domain": "google.com" }]);
    db.odm().update_by_id::<BookRefs>(1, update).await?;
    let (_, u, filters) = last_update(&db);
    assert_eq!(u, doc! { "$inc": { "referrers.$[e0].count": 3_i64 } });
    assert_eq!(
        filters,
        Some(vec![Bson::Document(doc! { "e0.domain": "google.com" })])
    );
    assert_eq!(sent(&db), Vec::<String>::new());
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    assert_eq!(
        counts(&one),
        [("google.com".into(), 7), ("yahoo.com".into(), 1)]
    );
    Ok(())
}

#[tokio::test]
async fn each_writes_every_element() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    // Conditions on several fields of one element.
    let update = BookRefs::referrers()
        .each_where(|r| r.domain().ne("google.com") & r.count().gte(1) & r.count().lt(2))
        .count()
        .inc(1);
    assert_eq!(
        update.array_filters(),
        [
            doc! { "e0.domain": { "$ne": "google.com" }, "e0.count": { "$gte": 1_i64, "$lt": 2_i64 } }
        ]
    );
    db.odm().update_by_id::<BookRefs>(1, update).await?;
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    assert_eq!(
        counts(&one),
        [("google.com".into(), 4), ("yahoo.com".into(), 2)]
    );
    let update = BookRefs::referrers().each().count().set(0);
    assert_eq!(
        update.as_document(),
        &doc! { "$set": { "referrers.$[].count": 0_i64 } }
    );
    assert!(update.array_filters().is_empty());
    db.odm().update_by_id::<BookRefs>(1, update).await?;
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    assert_eq!(
        counts(&one),
        [("google.com".into(), 0), ("yahoo.com".into(), 0)]
    );
    Ok(())
}

#[tokio::test]
async fn combined_conditions_get_their_own_identifiers() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    let google = BookRefs::referrers().each_where(|r| r.domain().eq("google.com"));
    let yahoo = BookRefs::referrers().each_where(|r| r.domain().eq("yahoo.com"));
    // Both paths picked `e0`: the second condition is renamed, a shared one sent once.
    let update = google
        .count()
        .inc(1)
        .and(yahoo.count().inc(10))
        .and(google.domain().set("www.google.com"));
    assert_eq!(
        update.as_document(),
        &doc! {
            "$inc": { "referrers.$[e0].count": 1_i64, "referrers.$[e1].count": 10_i64 },
            "$set": { "referrers.$[e0].domain": "www.google.com" },
        }
    );
    assert_eq!(
        update.array_filters(),
        [
            doc! { "e0.domain": "google.com" },
            doc! { "e1.domain": "yahoo.com" },
        ]
    );
    db.odm().update_by_id::<BookRefs>(1, update).await?;
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    assert_eq!(
        counts(&one),
        [("www.google.com".into(), 5), ("yahoo.com".into(), 11)]
    );
    Ok(())
}

#[tokio::test]
async fn nested_arrays_and_scalar_elements() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    // `editions.$[e0].tags.$[e1]`: the drafts of the editions after 2000.
    let update = BookRefs::editions()
        .each_where(|e| e.year().gt(2000))
        .tags()
        .each_where(|t| t.eq("draft"))
        .set("final");
    assert_eq!(
        update.as_document(),
        &doc! { "$set": { "editions.$[e0].tags.$[e1]": "final" } }
    );
    assert_eq!(
        update.array_filters(),
        [doc! { "e0.year": { "$gt": 2000 } }, doc! { "e1": "draft" }]
    );
    db.odm().update_by_id::<BookRefs>(1, update).await?;
    // The positional `$` on an array of strings: the first `draft` of the top-level tags.
    db.odm()
        .update_one(
            BookRefs::tags().contains("draft"),
            BookRefs::tags().matched().set("edited"),
        )
        .await?;
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    let tags = |e: &Bson| -> Vec<String> {
        e.as_document()
            .unwrap()
            .get_array("tags")
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect()
    };
    let editions = one.get_array("editions").unwrap();
    assert_eq!(tags(&editions[0]), ["draft", "first"]);
    assert_eq!(tags(&editions[1]), ["final"]);
    assert_eq!(
        tags(&Bson::Document(one.clone())),
        ["jazz", "edited", "draft"]
    );
    Ok(())
}

#[tokio::test]
async fn element_conditions_match_values_literally() -> odm::Result<()> {
    let db = common::db().await?;
    let mut book = seed(1);
    book.referrers.push(referrer("$where", 1));
    book.referrers.push(referrer("referrers.$[e0]", 1));
    db.odm().insert_one(&book).await?;
    for hostile in ["$where", "referrers.$[e0]", "{\"$gt\": \"\"}"] {
        db.odm()
            .update_by_id::<BookRefs>(
                1,
                BookRefs::referrers()
                    .each_where(|r| r.domain().eq(hostile))
                    .count()
                    .inc(100),
            )
            .await?;
        db.odm()
            .update_one(
                BookRefs::referrers().any(|r| r.domain().eq(hostile)),
                BookRefs::referrers().matched().count().inc(1000),
            )
            .await?;
    }
    let one = stored_one(&db, "book_refs", 1_i64).await.unwrap();
    assert_eq!(
        counts(&one),
        [
            ("google.com".into(), 4),
            ("yahoo.com".into(), 1),
            ("$where".into(), 1101),
            ("referrers.$[e0]".into(), 1101),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn find_one_and_update_sends_array_filters() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    let after = db
        .odm()
        .find_one_and_update(
            BookRefs::id_field().eq(1),
            BookRefs::referrers()
                .each_where(|r| r.count().lt(2))
                .count()
                .inc(1),
        )
        .return_new()
        .await?
        .unwrap();
    assert_eq!(after.referrers[1], referrer("yahoo.com", 2));
    let cmd = last_command(&db, "findAndModify");
    assert_eq!(
        cmd.get_array("arrayFilters").unwrap(),
        &vec![Bson::Document(doc! { "e0.count": { "$lt": 2_i64 } })]
    );
    Ok(())
}

#[tokio::test]
async fn a_push_onto_a_bounded_array_through_an_element_path_is_refused() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&seed(1)).await?;
    sent(&db);
    let err = db
        .odm()
        .update_by_id::<BookRefs>(
            1,
            BookRefs::editions()
                .each()
                .printings()
                .push(Printing { copies: 1 }),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::Encode { collection, what, .. }
            if collection == "book_refs" && what.contains("editions.$[].printings")),
        "{err}"
    );
    assert_eq!(sent(&db), Vec::<String>::new());
    Ok(())
}

#[tokio::test]
async fn element_paths_into_copies_are_refused_before_sending() -> odm::Result<()> {
    let db = common::db().await?;
    let part = Part {
        id: ObjectId::new(),
        partno: "123-aff-456".into(),
        name: "#4 grommet".into(),
        qty: 94,
        product: None,
        product_name: String::new(),
        product_catalog_number: 0,
    };
    db.odm().insert_one(&part).await?;
    let product = Product {
        id: ObjectId::new(),
        name: "left-handed smoke shifter".into(),
        manufacturer: "Acme Corp".into(),
        catalog_number: 1234,
        parts: vec![PartSummary {
            id: Ref::new(part.id),
            name: part.name.clone(),
        }],
    };
    db.odm().insert_one(&product).await?;
    sent(&db);
    let updates = [
        Product::parts().matched().name().set("renamed"),
        Product::parts().each().name().set("renamed"),
        Product::parts()
            .each_where(|p| p.id().eq(Ref::new(part.id)))
            .name()
            .set("renamed"),
        Product::parts()
            .each_where(|p| p.name().eq("#4 grommet"))
            .id()
            .set(Ref::new(ObjectId::new())),
    ];
    for update in updates {
        let shown = format!("{update:?}");
        let err = db
            .odm()
            .update_one(
                Product::parts().any(|p| p.id().eq(Ref::new(part.id))),
                update,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&err, odm::Error::CopyWrite { collection, copied_from, .. }
                if collection == "products" && copied_from == "parts"),
            "{shown}: {err}"
        );
    }
    assert_eq!(sent(&db), Vec::<String>::new());
    let stored = stored_one(&db, "products", product.id).await.unwrap();
    assert_eq!(
        stored.get_array("parts").unwrap()[0]
            .as_document()
            .unwrap()
            .get_str("name")
            .unwrap(),
        "#4 grommet"
    );
    Ok(())
}
