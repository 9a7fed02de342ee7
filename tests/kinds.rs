//! Single-collection inheritance against a real server: what each kind stores, the filters
//! its operations send, partial indexes, unknown kinds, and every relation on a kind's field.

mod common;
#[path = "common/kinds.rs"]
mod kinds;

use common::{last_command, listed_indexes, sent, stored, stored_one};
use kinds::*;
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;

async fn shelf(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    odm.insert_many(&writers()).await?;
    odm.insert_one(&wizard_chase()).await?;
    odm.insert_one(&Book::Single(gatsby())).await?;
    let mut first = wizard_chase();
    first.id = 46;
    first.title = "The Wizard Hunt".into();
    first.volume = 1;
    odm.insert_one(&first).await?;
    Ok(())
}

async fn raw_insert(db: &TestDb, doc: Document) {
    db.odm()
        .database()
        .collection::<Document>("books")
        .insert_one(doc)
        .await
        .expect("raw insert");
}

#[tokio::test]
async fn each_kind_is_stored_with_its_discriminator() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let series = stored_one(&db, "books", 47i64).await.expect("stored");
    assert_eq!(series.get_str("type").unwrap(), "series");
    assert_eq!(series.get_str("writer_name").unwrap(), "Dave Duncan");
    let single = stored_one(&db, "books", 1i64).await.expect("stored");
    assert_eq!(single.get_str("type").unwrap(), "single");
    assert!(!single.contains_key("writer_name"));
    // The base decodes every kind, in one query.
    db.commands().clear();
    let all: Vec<Book> = db
        .odm()
        .find(Filter::all())
        .sort(Book::title().asc())
        .await?;
    assert_eq!(sent(&db), ["find"]);
    let ids: Vec<(i64, &str)> = all
        .iter()
        .map(|b| match b {
            Book::Single(s) => (s.id, "single"),
            Book::Series(s) => (s.id, "series"),
        })
        .collect();
    assert_eq!(ids, [(1, "single"), (47, "series"), (46, "series")]);
    Ok(())
}

#[tokio::test]
async fn a_kind_queries_its_own_documents_and_the_base_queries_common_fields() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm();
    // The seed's `db.books.find({type: "series"})`, by kind.
    db.commands().clear();
    let series: Vec<SeriesBook> = odm.find(Filter::all()).await?;
    assert_eq!(series.len(), 2);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! {"type": "series"}
    );
    // `db.books.find({volume: {$gt: 0}})` through the kind's own path.
    let later = odm.find(SeriesBook::volume().gt(1)).await?;
    assert_eq!(later.len(), 1);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! {"type": "series", "volume": {"$gt": 1}}
    );
    // A common field, once for every kind.
    let long: Vec<Book> = odm.find(Book::pages().gte(200)).await?;
    assert_eq!(long.len(), 2);
    let gatsby: Vec<Book> = odm.find(Book::title().eq("The Great Gatsby")).await?;
    assert!(matches!(&gatsby[..], [Book::Single(_)]));
    assert_eq!(odm.count(Filter::<SingleBook>::all()).await?, 1);
    assert_eq!(odm.count(Filter::<Book>::all()).await?, 3);
    // `get` of a kind by the id of another kind finds nothing.
    assert!(odm.get::<SingleBook>(47).await?.is_none());
    Ok(())
}

#[tokio::test]
async fn a_raw_filter_cannot_widen_a_kind() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm();
    let hostile = Filter::<SeriesBook>::raw(doc! {"type": {"$ne": "series"}});
    assert!(odm.find(hostile.clone()).await?.is_empty());
    let result = odm.update_many(hostile, SeriesBook::pages().set(1)).await?;
    assert_eq!(result.matched_count, 0);
    let deleted = odm
        .delete_many(Filter::<SeriesBook>::raw(
            doc! {"$or": [{"type": "single"}, {"_id": 1}]},
        ))
        .await?;
    assert_eq!(deleted, 0);
    assert_eq!(stored(&db, "books").await.len(), 3);
    Ok(())
}

#[tokio::test]
async fn writes_of_a_kind_touch_that_kind_only() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm();
    let result = odm
        .update_many(Filter::<SeriesBook>::all(), SeriesBook::pages().inc(1))
        .await?;
    assert_eq!(result.matched_count, 2);
    let single = stored_one(&db, "books", 1i64).await.expect("stored");
    assert_eq!(single.get_i32("pages").unwrap(), 180);
    // A replacement keeps the discriminator.
    let mut w = wizard_chase();
    w.volume = 3;
    odm.replace_one(&w).await?;
    let raw = stored_one(&db, "books", 47i64).await.expect("stored");
    assert_eq!(raw.get_str("type").unwrap(), "series");
    assert_eq!(raw.get_i32("volume").unwrap(), 3);
    // An upsert of a kind stores the kind.
    odm.update_one(
        SeriesBook::id_field().eq(48),
        SeriesBook::title().set("Wizard War"),
    )
    .upsert(true)
    .await?;
    let raw = stored_one(&db, "books", 48i64).await.expect("upserted");
    assert_eq!(raw.get_str("type").unwrap(), "series");
    // Deleting every single book leaves the series.
    db.commands().clear();
    assert_eq!(odm.delete_many(Filter::<SingleBook>::all()).await?, 1);
    let books = stored(&db, "books").await;
    assert!(
        books
            .iter()
            .all(|b| b.get_str("type").ok() == Some("series")),
        "{books:?}"
    );
    Ok(())
}

#[tokio::test]
async fn indexes_on_a_kinds_fields_are_partial_on_the_kind() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Book>().await?;
    let listed = listed_indexes(&db, "books").await;
    let by_name = |name: &str| {
        listed
            .iter()
            .find(|i| i.get_str("name").ok() == Some(name))
            .unwrap_or_else(|| panic!("no index {name} in {listed:?}"))
            .clone()
    };
    let series = by_name("series_title_1_type_series");
    assert_eq!(
        series.get_document("partialFilterExpression").unwrap(),
        &doc! {"type": "series"}
    );
    assert!(!series.contains_key("sparse"));
    let volume = by_name("volume_1_type_series");
    assert_eq!(
        volume.get_document("partialFilterExpression").unwrap(),
        &doc! {"type": "series", "volume": {"$exists": true}}
    );
    let isbn = by_name("isbn_1_type_single");
    assert_eq!(isbn.get_bool("unique").ok(), Some(true));
    assert_eq!(
        isbn.get_document("partialFilterExpression").unwrap(),
        &doc! {"type": "single"}
    );
    // Synced again, nothing differs.
    let report = db.odm().sync_indexes_of::<Book>().await?;
    assert!(report.created().is_empty(), "{report:?}");
    // Unique among the kind: a second single book with the same isbn is refused.
    let odm = db.odm();
    odm.insert_many(&writers()).await?;
    odm.insert_one(&gatsby()).await?;
    let mut copy = gatsby();
    copy.id = 2;
    let err = odm.insert_one(&copy).await.expect_err("duplicate isbn");
    assert!(err.to_string().contains("isbn"), "{err}");
    Ok(())
}

#[tokio::test]
async fn an_unknown_kind_is_a_typed_error_naming_the_document() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    raw_insert(
        &db,
        doc! {"_id": 99i64, "type": "ebook", "title": "Dune", "pages": 1},
    )
    .await;
    let err = db
        .odm()
        .find::<Book>(Filter::all())
        .await
        .expect_err("unknown kind");
    match &err {
        odm::Error::UnknownKind {
            collection,
            id,
            field,
            value,
            known,
        } => {
            assert_eq!(collection, "books");
            assert!(id.contains("99"), "{id}");
            assert_eq!(field, "type");
            assert_eq!(value, "\"ebook\"");
            assert_eq!(known.as_ref(), ["single", "series"]);
        }
        other => panic!("{other:?}"),
    }
    // A document without the field, or with an operator-shaped one, is named the same way.
    db.odm().delete_one(Book::id_field().eq(99i64)).await?;
    raw_insert(&db, doc! {"_id": 100i64, "title": "Untyped"}).await;
    raw_insert(
        &db,
        doc! {"_id": 101i64, "type": {"$gt": ""}, "title": "Hostile"},
    )
    .await;
    let err = db
        .odm()
        .find::<Book>(Book::id_field().eq(100i64))
        .await
        .expect_err("missing kind");
    assert!(
        matches!(&err, odm::Error::UnknownKind { value, .. } if value == "<missing>"),
        "{err}"
    );
    let err = db
        .odm()
        .find::<Book>(Book::id_field().eq(101i64))
        .await
        .expect_err("hostile kind");
    assert!(matches!(&err, odm::Error::UnknownKind { .. }), "{err}");
    // A kind's own query never sees them.
    assert_eq!(db.odm().find::<SeriesBook>(Filter::all()).await?.len(), 2);
    Ok(())
}

/// A base with a catch-all kind: documents of kinds this program does not know decode to it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books")]
#[serde(tag = "type")]
enum AnyBook {
    #[serde(rename = "series")]
    Series(SeriesPart),
    #[serde(other)]
    Other,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "AnyBook")]
struct SeriesPart {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
}

#[tokio::test]
async fn a_catch_all_kind_takes_unknown_values() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    raw_insert(&db, doc! {"_id": 99i64, "type": "ebook", "title": "Dune"}).await;
    let all: Vec<AnyBook> = db.odm().find(Filter::all()).await?;
    let others = all.iter().filter(|b| **b == AnyBook::Other).count();
    assert_eq!((all.len(), others), (4, 2), "{all:?}");
    Ok(())
}

#[tokio::test]
async fn relations_work_on_and_into_kinds() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm();
    // A reference from a kind's field, populated.
    let w = odm
        .find_one(SeriesBook::id_field().eq(47))
        .populate(SeriesBook::writer())
        .await?
        .expect("found");
    assert_eq!(w.writer.loaded()?.name, "Dave Duncan");
    // Children of a kind, with a copy out of a kind's field and latest-N into one.
    for n in 1..=5 {
        odm.insert_one(&Chapter {
            id: n,
            book: Ref::new(47),
            number: n,
            heading: format!("Chapter {n}"),
            series_title: String::new(),
        })
        .await?;
    }
    let chapters = stored(&db, "chapters").await;
    assert!(chapters
        .iter()
        .all(|c| c.get_str("series_title").ok() == Some("The Wizard's Trilogy")));
    let raw = stored_one(&db, "books", 47i64).await.expect("stored");
    let numbers: Vec<i32> = raw
        .get_array("last_chapters")
        .unwrap()
        .iter()
        .map(|c| c.as_document().unwrap().get_i32("number").unwrap())
        .collect();
    assert_eq!(numbers, [5, 4, 3]);
    let parents = odm.find::<SeriesBook>(Filter::all()).await?;
    let children = odm.children(Chapter::book(), &parents).await?;
    assert_eq!(
        children.of(&parents[0]).len() + children.of(&parents[1]).len(),
        5
    );
    // The cascade of a kind's field reaches its copies.
    odm.update_by_id::<SeriesBook>(47, SeriesBook::series_title().set("Wizard Trilogy"))
        .await?;
    assert!(stored(&db, "chapters")
        .await
        .iter()
        .all(|c| c.get_str("series_title").ok() == Some("Wizard Trilogy")));
    // A copy into a kind is cascaded to that kind only, though every kind has the reference.
    let mut single = gatsby();
    single.id = 2;
    single.isbn = "2".into();
    single.writer = Ref::new(1);
    odm.insert_one(&single).await?;
    odm.update_by_id::<Writer>(1, Writer::name().set("D. Duncan"))
        .await?;
    for id in [46i64, 47] {
        let raw = stored_one(&db, "books", id).await.expect("stored");
        assert_eq!(raw.get_str("writer_name").unwrap(), "D. Duncan");
    }
    let raw = stored_one(&db, "books", 2i64).await.expect("stored");
    assert!(!raw.contains_key("writer_name"), "{raw}");
    // Delete rules: a writer is restricted by the books of either kind; deleting a series
    // book cascades to its chapters and to the loans of the base.
    let err = odm
        .delete_one(Writer::id_field().eq(2))
        .await
        .expect_err("restricted");
    assert!(matches!(err, odm::Error::DeleteRestricted(_)), "{err}");
    odm.insert_one(&Loan {
        id: 1,
        book: Ref::new(47),
        book_title: String::new(),
    })
    .await?;
    let loan = odm
        .find_one(Loan::id_field().eq(1))
        .populate(Loan::book())
        .await?
        .expect("found");
    assert!(matches!(loan.book.loaded()?, Book::Series(s) if s.id == 47));
    odm.delete_one(SeriesBook::id_field().eq(47)).await?;
    assert!(stored(&db, "chapters").await.is_empty());
    assert!(stored(&db, "loans").await.is_empty());
    assert!(stored_one(&db, "books", 46i64).await.is_some());
    Ok(())
}

#[tokio::test]
async fn a_reference_to_a_kind_does_not_load_another_kind() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    // A chapter naming the id of a single book: dangling for `Ref<SeriesBook>`.
    db.odm()
        .database()
        .collection::<Document>("chapters")
        .insert_one(doc! {"_id": 9, "book": 1i64, "number": 1, "heading": "x", "series_title": "x"})
        .await
        .expect("raw insert");
    db.commands().clear();
    let err = db
        .odm()
        .find::<Chapter>(Filter::all())
        .populate(Chapter::book())
        .await
        .expect_err("dangling");
    assert!(matches!(err, odm::Error::DanglingReference { .. }), "{err}");
    let filter = if common::lookup_plan() {
        common::sub_stage(&common::last_lookup_into(&db, "books"), "$match")
    } else {
        last_command(&db, "find")
            .get_document("filter")
            .unwrap()
            .clone()
    };
    assert_eq!(filter.get("type"), Some(&Bson::String("series".into())));
    Ok(())
}

#[tokio::test]
async fn a_mixed_result_is_populated_through_a_common_reference() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    db.commands().clear();
    let books: Vec<Book> = db
        .odm()
        .find(Filter::all())
        .sort(Book::title().asc())
        .populate(Book::writer())
        .await?;
    // One `find` of the books of every kind, one of the writers they reference.
    common::assert_populate_sent(&db, &["find", "find"]);
    let writers: Vec<&str> = books
        .iter()
        .map(|b| match b {
            Book::Single(s) => s.writer.loaded().map(|w| w.name.as_str()),
            Book::Series(s) => s.writer.loaded().map(|w| w.name.as_str()),
        })
        .collect::<odm::Result<_>>()?;
    assert_eq!(
        writers,
        ["F. Scott Fitzgerald", "Dave Duncan", "Dave Duncan"]
    );
    // Filters on the common reference reach every kind.
    assert_eq!(db.odm().count(Book::writer().refers_to(1)).await?, 2);
    Ok(())
}

#[tokio::test]
async fn the_base_indexes_and_offers_its_common_fields() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<Book>().await?;
    let listed = listed_indexes(&db, "books").await;
    let title = listed
        .iter()
        .find(|i| i.get_str("name").ok() == Some("title_every_kind"))
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert!(!title.contains_key("partialFilterExpression"), "{title}");
    // A copy of a common field, taken from a book of either kind, follows every kind's writes.
    shelf(&db).await?;
    let odm = db.odm();
    odm.insert_many(&[
        Loan {
            id: 1,
            book: Ref::new(47),
            book_title: String::new(),
        },
        Loan {
            id: 2,
            book: Ref::new(1),
            book_title: String::new(),
        },
    ])
    .await?;
    let titles = |loans: Vec<Document>| -> Vec<String> {
        loans
            .iter()
            .map(|l| l.get_str("book_title").unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        titles(stored(&db, "loans").await),
        ["The Wizard Chase", "The Great Gatsby"]
    );
    odm.update_by_id::<SeriesBook>(47, SeriesBook::title().set("Wizard Chase"))
        .await?;
    odm.update_many(
        Book::title().eq("The Great Gatsby"),
        Book::title().set("Gatsby"),
    )
    .await?;
    assert_eq!(
        titles(stored(&db, "loans").await),
        ["Wizard Chase", "Gatsby"]
    );
    Ok(())
}

#[tokio::test]
async fn copies_into_a_kind_converge_under_concurrent_renames_and_inserts() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm().clone();
    let mut tasks = Vec::new();
    for i in 0..8i64 {
        let odm = odm.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..5 {
                let name = format!("Duncan {i}-{round}");
                odm.update_by_id::<Writer>(1, Writer::name().set(name))
                    .await?;
            }
            Ok::<_, odm::Error>(())
        }));
        let odm = db.odm().clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..5 {
                let mut book = wizard_chase();
                book.id = 1000 + i * 10 + round;
                odm.insert_one(&book).await?;
                let mut single = gatsby();
                single.id = 2000 + i * 10 + round;
                single.isbn = format!("isbn-{}", single.id);
                single.writer = Ref::new(1);
                odm.insert_one(&single).await?;
            }
            Ok::<_, odm::Error>(())
        }));
    }
    for t in tasks {
        t.await.expect("task")?;
    }
    let name = stored_one(&db, "writers", 1)
        .await
        .unwrap()
        .get_str("name")
        .unwrap()
        .to_owned();
    let books = stored(&db, "books").await;
    assert_eq!(books.len(), 3 + 80);
    for b in &books {
        match b.get_str("type").unwrap() {
            "series" if b.get_i32("writer").unwrap() == 1 => {
                assert_eq!(b.get_str("writer_name").unwrap(), name, "{b}");
            }
            "single" => assert!(!b.contains_key("writer_name"), "{b}"),
            _ => {}
        }
    }
    let report = db.odm().verify_copies().await?;
    assert!(report.is_consistent(), "{report:?}");
    Ok(())
}

#[tokio::test]
async fn moving_a_reference_takes_the_copies_of_that_kind_only() -> odm::Result<()> {
    let db = common::db().await?;
    shelf(&db).await?;
    let odm = db.odm();
    // A single book's writer moves: series books copy the writer's name, single books do not.
    odm.update_by_id::<SingleBook>(1, SingleBook::writer().set(Ref::new(1)))
        .await?;
    let single = stored_one(&db, "books", 1i64).await.expect("stored");
    assert!(!single.contains_key("writer_name"), "{single}");
    // A series book's writer moves: its copy follows.
    odm.update_by_id::<SeriesBook>(47, SeriesBook::writer().set(Ref::new(2)))
        .await?;
    let series = stored_one(&db, "books", 47i64).await.expect("stored");
    assert_eq!(
        series.get_str("writer_name").unwrap(),
        "F. Scott Fitzgerald"
    );
    // Through the base the update would reach every kind: refused, nothing written.
    db.commands().clear();
    let err = odm
        .update_many(
            Book::title().eq("The Wizard Hunt"),
            Book::writer().set(Ref::new(2)),
        )
        .await
        .expect_err("a kind's copy through the base");
    assert!(
        matches!(&err, odm::Error::Unsupported(m) if m.contains("SeriesBook")),
        "{err}"
    );
    assert!(sent(&db).is_empty());
    let hunt = stored_one(&db, "books", 46i64).await.expect("stored");
    assert_eq!(hunt.get_i32("writer").unwrap(), 1);
    Ok(())
}

#[test]
fn the_cascade_plan_shows_a_kinds_copy_on_that_kind() {
    let plan = odm::denormalize::cascade_plan_in::<Writer>(&common::catalog()).to_string();
    assert!(
        plan.contains(r#"{ type: "series", writer: { $in: <ids> } }"#),
        "{plan}"
    );
}
