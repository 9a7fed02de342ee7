//! Documents written behind the ODM's back with values their model cannot hold: a copy never
//! takes such a value (the operation names the source collection, `_id` and field, and writes
//! nothing malformed), the sweeps report each bad document and go on, and the delete rules and
//! the repair leave copies of deleted sources in the same shape.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use common::{stored, stored_one};
use denorm::books::{Author, AuthorName, Book};
use denorm::parts::Part;
use denorm::products::{PartSummary, Product};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::TransactionMode;

fn author(id: i32, first: &str) -> Author {
    Author {
        id,
        first_name: first.into(),
        last_name: "Austen".into(),
    }
}

fn book(id: i32, author: &Author) -> Book {
    Book {
        id,
        title: format!("book {id}"),
        author: AuthorName {
            id: Ref::new(author.id),
            first_name: String::new(),
            last_name: String::new(),
        },
        co_author: None,
    }
}

fn part(n: i64, product: Option<ObjectId>) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("{n:03}"),
        name: format!("part {n}"),
        qty: 1,
        product: product.map(Ref::new),
        product_name: String::new(),
        product_catalog_number: 0,
    }
}

/// Sets `field` of the document `id` of `collection` to `value` with the raw driver.
async fn corrupt(db: &TestDb, collection: &str, id: impl Into<Bson>, field: &str, value: Bson) {
    db.raw()
        .collection::<Document>(collection)
        .update_one(doc! { "_id": id.into() }, doc! { "$set": { field: value } })
        .await
        .expect("raw update");
}

/// Asserts that `err` is a decode error naming this document and field, or several, one per
/// copy of the field.
fn assert_names(err: &odm::Error, collection: &str, id: &str, path: &str) {
    match err {
        odm::Error::Incomplete(errors) => {
            assert!(!errors.is_empty());
            for e in errors {
                assert_names(e, collection, id, path);
            }
        }
        odm::Error::Decode {
            collection: c,
            id: i,
            path: p,
            ..
        } => {
            assert_eq!(
                (c.as_str(), i.as_str(), p.as_str()),
                (collection, id, path),
                "{err}"
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

/// Product 1, listing `part`, stored just under the 16 MiB document limit (written around the
/// ODM): a longer copied name does not fit in it.
async fn insert_product_near_16_mb(db: &TestDb, part: &Part) -> odm::Result<()> {
    let mut big = doc! {
        "_id": 1, "name": "product 1", "manufacturer": "ACME", "catalog_number": 1,
        "parts": [{ "id": part.id, "name": part.name.as_str() }],
    };
    big.insert("blob", "x".repeat(16 * 1024 * 1024 - 4 * 1024));
    db.raw()
        .collection::<Document>("products")
        .insert_one(big)
        .await?;
    Ok(())
}

#[tokio::test]
async fn an_insert_never_copies_a_malformed_source_value() -> odm::Result<()> {
    let db = common::db().await?;
    let jane = author(1, "Jane");
    db.odm().insert_one(&jane).await?;
    corrupt(&db, "authors", 1, "first_name", Bson::Int32(17)).await;

    let err = db.odm().insert_one(&book(10, &jane)).await.unwrap_err();

    assert_names(&err, "authors", "{ _id: 1 }", "first_name");
    assert!(stored(&db, "books").await.is_empty(), "nothing written");
    Ok(())
}

#[tokio::test]
async fn an_update_writing_a_summary_never_copies_a_malformed_value() -> odm::Result<()> {
    let db = common::db().await?;
    let good = part(1, None);
    let bad = part(2, None);
    db.odm().insert_many(&[good.clone(), bad.clone()]).await?;
    let product = Product {
        id: ObjectId::new(),
        name: "shifter".into(),
        manufacturer: "Acme".into(),
        catalog_number: 1,
        parts: vec![PartSummary {
            id: Ref::new(good.id),
            name: String::new(),
        }],
    };
    db.odm().insert_one(&product).await?;
    corrupt(
        &db,
        "parts",
        bad.id,
        "name",
        Bson::Document(doc! { "x": 1 }),
    )
    .await;

    let err = db
        .odm()
        .update_by_id::<Product>(
            product.id,
            Product::parts().push(PartSummary {
                id: Ref::new(bad.id),
                name: String::new(),
            }),
        )
        .await
        .unwrap_err();

    assert_names(
        &err,
        "parts",
        &format!("{{ _id: ObjectId(\"{}\") }}", bad.id),
        "name",
    );
    let raw = stored_one(&db, "products", product.id).await.unwrap();
    assert_eq!(
        raw.get_array("parts").unwrap().len(),
        1,
        "nothing written: {raw}"
    );
    Ok(())
}

#[tokio::test]
async fn a_cascade_skips_a_malformed_source_and_updates_the_others() -> odm::Result<()> {
    let db = common::db().await?;
    let (jane, anne) = (author(1, "Jane"), author(2, "Anne"));
    db.odm().insert_many(&[jane.clone(), anne.clone()]).await?;
    db.odm()
        .insert_many(&[book(10, &jane), book(20, &anne)])
        .await?;
    corrupt(&db, "authors", 1, "first_name", Bson::Int32(17)).await;

    let err = db
        .odm()
        .update_many(Filter::<Author>::all(), Author::last_name().set("Brontë"))
        .transaction(TransactionMode::Never)
        .await
        .unwrap_err();

    assert_names(&err, "authors", "{ _id: 1 }", "first_name");
    // Jane's book keeps what it held (readable); Anne's follows her new name.
    let jane_book = stored_one(&db, "books", 10).await.unwrap();
    assert_eq!(
        jane_book.get_document("author").unwrap(),
        &doc! { "id": 1, "first_name": "Jane", "last_name": "Austen" }
    );
    let anne_book = stored_one(&db, "books", 20).await.unwrap();
    assert_eq!(
        anne_book.get_document("author").unwrap(),
        &doc! { "id": 2, "first_name": "Anne", "last_name": "Brontë" }
    );
    assert!(db.odm().find::<Book>(Filter::all()).await.is_ok());
    Ok(())
}

#[tokio::test]
async fn a_transactional_cascade_of_a_malformed_source_writes_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    let jane = author(1, "Jane");
    db.odm().insert_one(&jane).await?;
    db.odm().insert_one(&book(10, &jane)).await?;
    corrupt(&db, "authors", 1, "first_name", Bson::Int32(17)).await;

    let err = db
        .odm()
        .update_by_id::<Author>(1, Author::last_name().set("Brontë"))
        .transaction(TransactionMode::Always)
        .await
        .unwrap_err();

    assert_names(&err, "authors", "{ _id: 1 }", "first_name");
    let raw = stored_one(&db, "authors", 1).await.unwrap();
    assert_eq!(raw.get_str("last_name").unwrap(), "Austen", "rolled back");
    let book = stored_one(&db, "books", 10).await.unwrap();
    assert_eq!(
        book.get_document("author")
            .unwrap()
            .get_str("first_name")
            .unwrap(),
        "Jane"
    );
    Ok(())
}

#[tokio::test]
async fn a_sweep_reports_every_bad_document_and_repairs_the_rest() -> odm::Result<()> {
    let db = common::db().await?;
    let (jane, anne) = (author(1, "Jane"), author(2, "Anne"));
    db.odm().insert_many(&[jane.clone(), anne.clone()]).await?;
    db.odm()
        .insert_many(&[book(10, &jane), book(20, &anne), book(30, &anne)])
        .await?;
    // A source its copies cannot hold, a copy of the wrong shape, a stale copy.
    corrupt(&db, "authors", 1, "first_name", Bson::Int32(17)).await;
    corrupt(
        &db,
        "books",
        20,
        "author",
        Bson::Array(vec![Bson::Int32(2)]),
    )
    .await;
    corrupt(
        &db,
        "books",
        30,
        "author.first_name",
        Bson::String("stale".into()),
    )
    .await;

    let report = db.odm().verify_copies().of::<Book>().repair(true).await?;

    let mut bad: Vec<(&str, Bson)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection, b.id.clone()))
        .collect();
    bad.sort_by_key(|(c, _)| *c);
    assert_eq!(
        bad,
        [("authors", Bson::Int32(1)), ("books", Bson::Int32(20))],
        "{report}"
    );
    assert_eq!(report.repairs, 1, "{report}");
    let book10 = stored_one(&db, "books", 10).await.unwrap();
    assert_eq!(
        book10
            .get_document("author")
            .unwrap()
            .get_str("first_name")
            .unwrap(),
        "Jane"
    );
    let book30 = stored_one(&db, "books", 30).await.unwrap();
    assert_eq!(
        book30
            .get_document("author")
            .unwrap()
            .get_str("first_name")
            .unwrap(),
        "Anne"
    );
    Ok(())
}

#[tokio::test]
async fn the_nullify_rule_and_the_repair_leave_the_same_shape() -> odm::Result<()> {
    let db = common::db().await?;
    let (kept, lost) = (ObjectId::new(), ObjectId::new());
    for id in [kept, lost] {
        db.odm()
            .insert_one(&Product {
                id,
                name: "shifter".into(),
                manufacturer: "Acme".into(),
                catalog_number: 1,
                parts: vec![],
            })
            .await?;
    }
    let by_rule = part(1, Some(kept));
    let by_repair = part(2, Some(lost));
    db.odm()
        .insert_many(&[by_rule.clone(), by_repair.clone()])
        .await?;

    db.odm().delete_one(Product::id().eq(kept)).await?;
    db.raw()
        .collection::<Document>("products")
        .delete_one(doc! { "_id": lost })
        .await
        .expect("raw delete");
    db.odm().verify_copies().of::<Part>().repair(true).await?;

    let ruled = stored_one(&db, "parts", by_rule.id).await.unwrap();
    let repaired = stored_one(&db, "parts", by_repair.id).await.unwrap();
    for raw in [&ruled, &repaired] {
        assert!(!raw.contains_key("product_name"), "{raw}");
        assert!(!raw.contains_key("product_catalog_number"), "{raw}");
    }
    Ok(())
}

/// A dependent the server refuses to update (the copy would take it past 16 MB) does not stop
/// the cascade: every other copy is updated, and the error names the one left.
#[tokio::test]
async fn a_dependent_past_16_mb_is_reported_and_the_others_are_updated() -> odm::Result<()> {
    let db = common::db().await?;
    let p1 = part(1, None);
    db.odm().insert_one(&p1).await?;
    let summary = doc! { "id": p1.id, "name": "part 1" };
    let (small, big) = (ObjectId::new(), ObjectId::new());
    let product = |id: ObjectId, n: i64| {
        doc! {
            "_id": id, "name": format!("product {n}"), "manufacturer": "ACME",
            "catalog_number": n, "parts": [summary.clone()],
        }
    };
    let mut big_doc = product(big, 2);
    // Just under the 16 MiB document limit: a longer copied name does not fit.
    big_doc.insert("blob", "x".repeat(16 * 1024 * 1024 - 4 * 1024));
    let raw = db.raw().collection::<Document>("products");
    raw.insert_one(product(small, 1)).await?;
    raw.insert_one(big_doc).await?;

    let long_name = "n".repeat(8 * 1024);
    let err = db
        .odm()
        .update_by_id::<Part>(p1.id, Part::name().set(long_name.clone()))
        .transaction(TransactionMode::Never)
        .await
        .expect_err("the big product cannot take the longer name");

    let message = err.to_string();
    assert!(
        matches!(&err, odm::Error::CopiesNotUpdated { collection, path, .. } if collection == "products" && path == "parts"),
        "{message}"
    );
    // The source and the other dependent hold the new name; the big one keeps the old.
    let stored_part = stored_one(&db, "parts", p1.id).await.unwrap();
    assert_eq!(stored_part.get_str("name").unwrap(), long_name);
    let name_in = |d: Document| {
        d.get_array("parts").unwrap()[0]
            .as_document()
            .unwrap()
            .get_str("name")
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        name_in(stored_one(&db, "products", small).await.unwrap()),
        long_name
    );
    assert_eq!(
        name_in(stored_one(&db, "products", big).await.unwrap()),
        "part 1"
    );

    // The sweep reports the big product and goes on: a second small product, left stale by
    // a write behind the ODM's back, is repaired.
    let other = ObjectId::new();
    raw.insert_one(product(other, 3)).await?;
    let report = db.odm().verify_copies().repair(true).await?;
    assert_eq!(
        name_in(stored_one(&db, "products", other).await.unwrap()),
        long_name,
        "{report}"
    );
    assert_eq!(
        name_in(stored_one(&db, "products", big).await.unwrap()),
        "part 1"
    );
    let bad: Vec<_> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection, b.id.clone()))
        .collect();
    assert_eq!(bad, [("products", Bson::ObjectId(big))], "{report}");
    assert!(!report.is_consistent());
    Ok(())
}

/// In a transaction, a dependent the server refuses ends the cascade: nothing is written, and
/// the error names the collection and the filter of the refused update.
#[tokio::test]
async fn a_refused_dependent_in_a_transaction_is_named_and_nothing_is_written() -> odm::Result<()> {
    let db = common::db().await?;
    let p1 = part(1, None);
    db.odm().insert_one(&p1).await?;
    insert_product_near_16_mb(&db, &p1).await?;

    let err = db
        .odm()
        .update_by_id::<Part>(p1.id, Part::name().set("n".repeat(8 * 1024)))
        .transaction(TransactionMode::Always)
        .await
        .expect_err("the product cannot take the longer name");
    match &err {
        odm::Error::Write {
            collection, target, ..
        } => {
            assert_eq!(collection, "products", "{err}");
            assert!(
                target.contains("parts.id") && target.contains(&p1.id.to_hex()),
                "{err}"
            );
        }
        other => panic!("expected a write error naming the products, got {other:?}"),
    }
    let stored_part = stored_one(&db, "parts", p1.id).await.unwrap();
    assert_eq!(
        stored_part.get_str("name").unwrap(),
        "part 1",
        "rolled back"
    );
    Ok(())
}

/// A summary whose stored id is operator-shaped names no source: the repair pulls that one
/// summary by value, not every summary its id would match as a condition.
#[tokio::test]
async fn repairing_an_operator_shaped_summary_id_pulls_only_it() -> odm::Result<()> {
    let db = common::db().await?;
    let p1 = part(1, None);
    db.odm().insert_one(&p1).await?;
    let product = ObjectId::new();
    db.raw()
        .collection::<Document>("products")
        .insert_one(doc! {
            "_id": product, "name": "product", "manufacturer": "ACME", "catalog_number": 1,
            "parts": [
                { "id": p1.id, "name": "part 1" },
                { "id": { "$exists": true }, "name": "ghost" },
            ],
        })
        .await?;

    db.odm()
        .verify_copies()
        .of::<Product>()
        .repair(true)
        .await?;
    let stored = stored_one(&db, "products", product).await.unwrap();
    assert_eq!(
        stored.get_array("parts").unwrap(),
        &vec![Bson::Document(doc! { "id": p1.id, "name": "part 1" })],
        "only the ghost is pulled"
    );
    Ok(())
}

/// With `TransactionMode::Auto`, a dependent the server refuses is not mistaken for a
/// transaction too large: nothing is written, as with `Always`, and no second attempt runs
/// without a transaction.
#[tokio::test]
async fn auto_does_not_fall_back_on_a_refused_dependent() -> odm::Result<()> {
    let db = common::db().await?;
    let p1 = part(1, None);
    db.odm().insert_one(&p1).await?;
    insert_product_near_16_mb(&db, &p1).await?;

    db.commands().clear();
    db.odm()
        .update_by_id::<Part>(p1.id, Part::name().set("n".repeat(8 * 1024)))
        .transaction(TransactionMode::Auto)
        .await
        .expect_err("the product cannot take the longer name");
    let sent: Vec<String> = db.commands().take().into_iter().map(|c| c.name).collect();
    assert_eq!(
        sent.iter().filter(|n| *n == "findAndModify").count(),
        1,
        "{sent:?}"
    );
    let stored_part = stored_one(&db, "parts", p1.id).await.unwrap();
    assert_eq!(
        stored_part.get_str("name").unwrap(),
        "part 1",
        "rolled back"
    );
    Ok(())
}
