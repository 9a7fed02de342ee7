//! `Odm::explain_shapes` on kinds sharing a collection, each with its partial index on the
//! same field: each kind's shape is matched to its own kind's index, and a collection scan
//! says what the index list holds (an index there but hidden from the planner, an index
//! missing), never "missing" for an index `listIndexes` shows.

mod common;

use odm::bson::{doc, Document};
use odm::index::{Access, ExplainedShape, IndexState, ShapeCommand, ShapeReport};
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "ek_books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
}

/// The copies of a book, printed or electronic, in one collection.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "ek_copies")]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnyCopy {
    Print(PrintCopy),
    Ebook(EbookCopy),
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "AnyCopy")]
struct PrintCopy {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade")]
    book: Ref<Book>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "AnyCopy")]
struct EbookCopy {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade")]
    book: Ref<Book>,
}

const PRINT: &str = r#"{ type: "print", book: { $in: [?] } }"#;
const EBOOK: &str = r#"{ type: "ebook", book: { $in: [?] } }"#;

fn on_copies<'r>(report: &'r ShapeReport, shape: &str) -> &'r ExplainedShape {
    report
        .shapes
        .iter()
        .find(|s| {
            s.shape.collection == "ek_copies"
                && s.shape.command == ShapeCommand::Find
                && s.shape.shape == shape
        })
        .unwrap_or_else(|| panic!("no find ek_copies {shape} in\n{report}"))
}

/// The names `listIndexes` shows on the copies.
async fn listed(db: &odm::testing::TestDb) -> Vec<String> {
    common::listed_indexes(db, "ek_copies")
        .await
        .iter()
        .filter_map(|i| i.get_str("name").ok().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn each_kind_is_served_by_its_own_partial_index_and_a_scan_says_why() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    // A few documents of each kind, so that the planner prefers an index it may use.
    let copies = db.raw().collection::<Document>("ek_copies");
    for i in 0..40 {
        let kind = if i % 2 == 0 { "print" } else { "ebook" };
        copies
            .insert_one(doc! { "_id": i, "type": kind, "book": i % 7 })
            .await?;
    }
    let names = listed(&db).await;
    for name in ["book_1_type_print", "book_1_type_ebook"] {
        assert!(names.iter().any(|n| n == name), "{names:?}");
    }

    // Each kind's shape names its own kind's index: the other's partial filter does not hold
    // the documents it reads.
    let report = odm.explain_shapes().await?;
    let print = on_copies(&report, PRINT);
    assert_eq!(
        print.declared.as_deref(),
        Some("book_1_type_print"),
        "{report}"
    );
    assert_eq!(
        print.access,
        Access::Index(vec!["book_1_type_print".into()]),
        "{report}"
    );
    let ebook = on_copies(&report, EBOOK);
    assert_eq!(
        ebook.declared.as_deref(),
        Some("book_1_type_ebook"),
        "{report}"
    );
    assert!(report.is_clean(), "{report}");
    // Nothing scans: the index list is not read.
    assert!(report.shapes.iter().all(|s| s.index.is_none()));

    // The print index hidden from the planner, the ebook one dropped: both shapes scan, and
    // the report tells the index that exists from the one that is missing, from one
    // `listIndexes` of the collection after the explains.
    db.raw()
        .run_command(doc! {
            "collMod": "ek_copies",
            "index": { "name": "book_1_type_print", "hidden": true },
        })
        .await?;
    db.raw()
        .run_command(doc! { "dropIndexes": "ek_copies", "index": "book_1_type_ebook" })
        .await?;
    assert!(listed(&db).await.iter().any(|n| n == "book_1_type_print"));
    db.commands().clear();
    let report = odm
        .explain_shapes()
        .models(["PrintCopy", "EbookCopy"])
        .await?;
    let sent = common::sent(&db);
    let explains = sent.iter().filter(|c| *c == "explain").count();
    assert_eq!(explains, report.shapes.len(), "{sent:?}");
    assert_eq!(
        sent.last().map(String::as_str),
        Some("listIndexes"),
        "{sent:?}"
    );
    assert_eq!(sent.len(), explains + 1, "{sent:?}");

    let print = on_copies(&report, PRINT);
    assert_eq!(print.access, Access::CollectionScan, "{report}");
    assert_eq!(print.declared.as_deref(), Some("book_1_type_print"));
    assert_eq!(
        print.index,
        Some(IndexState::Unchosen { hidden: true }),
        "{report}"
    );
    let ebook = on_copies(&report, EBOOK);
    assert_eq!(ebook.access, Access::CollectionScan, "{report}");
    assert_eq!(ebook.declared.as_deref(), Some("book_1_type_ebook"));
    assert_eq!(ebook.index, Some(IndexState::Missing), "{report}");

    // A sync creates the missing one; the hidden one is the database's own choice, reported
    // as it is.
    odm.sync_indexes().await?;
    let report = odm.explain_shapes().await?;
    assert_eq!(
        on_copies(&report, EBOOK).access,
        Access::Index(vec!["book_1_type_ebook".into()])
    );
    assert_eq!(
        on_copies(&report, PRINT).index,
        Some(IndexState::Unchosen { hidden: true })
    );
    Ok(())
}
