//! The library's subjects as a tree (the workshop's "Tree Structures" slides): "American
//! Literature" → "1920s" → "Jazz Age" → "Jazz Age in New York", each subject naming its parent
//! and listing its ancestors, root first, and books that keep a copy of their subject's name.
//!
//! The tree is declared on the model; the ODM fills the ancestors on insert, answers the
//! seed's queries in one command each, moves a subject with its whole subtree in a fixed number
//! of commands, applies the declared rule when a subject is deleted, and finds and repairs
//! ancestors that disagree with the parents. Every step prints what it did and the commands it
//! sent.
//!
//! Part of the library example (`cargo run -p odm-examples --example library`), whose steps
//! it continues, in a database of its own.

use crate::common::{list, say, say_lines, Steps};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::tree::TreeIssue;

// ANCHOR: subject
/// A subject of the library. The id is a slug and the name a field of its own: renaming
/// "Jazz Age" is then an update of one field (copied on to the books), where an id that is
/// the name would be a new document for the subject and a rewrite of every descendant.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "subjects", tree(on_delete = "lift"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    /// Kept by the ODM: `None` for a root.
    parent: Option<Ref<Subject>>,
    /// Kept by the ODM: the parent's ancestors, then the parent.
    ancestors: Vec<Ref<Subject>>,
}
// ANCHOR_END: subject

// ANCHOR: book
/// A book filed under one subject of the tree (a collection of its own: the library's `books`
/// of the first steps list their subjects by name).
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "books_by_subject")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    /// A subject with books cannot be deleted.
    #[reference(on_delete = "restrict")]
    subject: Ref<Subject>,
    /// The subject's name, shown with the book; kept equal to it by the ODM.
    #[denormalize(from = "Subject", via = "subject", fields = "name")]
    subject_name: String,
}
// ANCHOR_END: book

fn subject(id: &str, name: &str, parent: Option<&str>) -> Subject {
    Subject {
        id: id.to_owned(),
        name: name.to_owned(),
        parent: parent.map(|p| Ref::new(p.to_owned())),
        // Filled by the ODM from the parent, whatever is here.
        ancestors: Vec::new(),
    }
}

fn book(id: i32, title: &str, subject: &str) -> Book {
    Book {
        id,
        title: title.to_owned(),
        subject: Ref::new(subject.to_owned()),
        subject_name: String::new(),
    }
}

fn names(subjects: &[Subject]) -> Vec<&str> {
    subjects.iter().map(|s| s.name.as_str()).collect()
}

pub async fn run(library: &Odm, steps: &Steps) -> odm::Result<()> {
    let odm = crate::common::part(library, "subjects");
    let raw = odm.database().collection::<Document>("subjects");
    let raw_books = odm.database().collection::<Document>("books_by_subject");

    steps.start("Create the indexes: the tree's parent and the multikey ancestors, undeclared");
    let report = odm.sync_indexes_of::<Subject>().and::<Book>().await?;
    say_lines(&report);
    steps.sent();

    steps.start("Insert the seed's subjects, each under its parent");
    // ANCHOR: insert
    odm.insert_one(&subject("american-literature", "American Literature", None))
        .await?;
    odm.insert_one(&subject("1920s", "1920s", Some("american-literature")))
        .await?;
    odm.insert_one(&subject("jazz-age", "Jazz Age", Some("1920s")))
        .await?;
    odm.insert_one(&subject(
        "jazz-age-ny",
        "Jazz Age in New York",
        Some("jazz-age"),
    ))
    .await?;
    // ANCHOR_END: insert
    steps.sent();
    let jazz = raw
        .find_one(doc! { "_id": "jazz-age" })
        .await?
        .expect("inserted");
    say("as stored:");
    say(steps.show(&Bson::Document(jazz.clone())));
    assert_eq!(
        jazz,
        doc! { "_id": "jazz-age", "name": "Jazz Age", "parent": "1920s", "ancestors": ["american-literature", "1920s"] }
    );

    steps.start("Insert books, each with a copy of its subject's name");
    odm.insert_many(&[
        book(1, "The Great Gatsby", "jazz-age-ny"),
        book(2, "Tender Is the Night", "jazz-age"),
    ])
    .await?;
    steps.sent();
    let gatsby = raw_books
        .find_one(doc! { "_id": 1 })
        .await?
        .expect("inserted");
    say("as stored:");
    say(steps.show(&Bson::Document(gatsby.clone())));
    assert_eq!(
        gatsby.get_str("subject_name").ok(),
        Some("Jazz Age in New York")
    );

    steps.start("The seed's query: every subject below \"1920s\", at any depth");
    // ANCHOR: queries
    let tree = odm.tree::<Subject>();
    let below = tree
        .descendants("1920s")
        .sort(Subject::id_field().asc())
        .await?;
    // ANCHOR_END: queries
    list("below 1920s", names(&below));
    assert_eq!(names(&below), ["Jazz Age", "Jazz Age in New York"]);
    steps.sent();

    steps.start("Children, roots, the ancestor chain in order, the depth");
    // ANCHOR: more_queries
    let children = tree.children("1920s").await?;
    let roots = tree.roots().await?;
    let chain = tree.ancestors("jazz-age-ny").await?;
    let depth = tree.depth("jazz-age-ny").await?;
    // ANCHOR_END: more_queries
    list("children of 1920s", names(&children));
    list("roots", names(&roots));
    list("ancestors of Jazz Age in New York", names(&chain));
    say(format_args!("depth of Jazz Age in New York: {depth}"));
    assert_eq!(names(&chain), ["American Literature", "1920s", "Jazz Age"]);
    assert_eq!(depth, 3);
    steps.sent();

    steps.start("Rename \"Jazz Age\": one field, copied on to its books");
    odm.update_by_id("jazz-age", Subject::name().set("The Jazz Age"))
        .await?;
    steps.sent();
    let tender = raw_books
        .find_one(doc! { "_id": 2 })
        .await?
        .expect("stored");
    say("as stored:");
    say(steps.show(&Bson::Document(tender.clone())));
    assert_eq!(tender.get_str("subject_name").ok(), Some("The Jazz Age"));

    steps.start("Move \"The Jazz Age\" and its subtree to the top of the tree");
    // ANCHOR: move
    let moved = tree.move_to_root("jazz-age").await?;
    // ANCHOR_END: move
    say(format_args!(
        "moved from {:?}, {} descendant(s) rewritten, in a transaction: {}",
        moved.previous, moved.descendants, moved.in_transaction
    ));
    steps.sent();
    let ny = raw
        .find_one(doc! { "_id": "jazz-age-ny" })
        .await?
        .expect("stored");
    say("as stored:");
    say(steps.show(&Bson::Document(ny.clone())));
    assert_eq!(ny.get_array("ancestors").map(Vec::len).ok(), Some(1));

    steps.start("Move it back under \"1920s\"");
    // ANCHOR: move_back
    tree.move_under("jazz-age", "1920s").await?;
    // ANCHOR_END: move_back
    steps.sent();
    let ny = raw
        .find_one(doc! { "_id": "jazz-age-ny" })
        .await?
        .expect("stored");
    say("as stored:");
    say(steps.show(&Bson::Document(ny.clone())));
    assert_eq!(
        ny.get_array("ancestors").ok().cloned(),
        Some(vec![
            "american-literature".into(),
            "1920s".into(),
            "jazz-age".into()
        ])
    );

    steps.start("Move \"1920s\" under its own grandchild: refused, nothing changed");
    let err = tree
        .move_under("1920s", "jazz-age-ny")
        .await
        .expect_err("a cycle");
    say(&err);
    assert!(matches!(err, odm::Error::TreeCycle { .. }));
    steps.sent();

    // An interrupted move (without transactions) leaves a subject with its old ancestors.
    raw.update_one(
        doc! { "_id": "jazz-age-ny" },
        doc! { "$set": { "ancestors": ["1920s", "jazz-age"] } },
    )
    .await?;
    steps
        .start("A subject was left with ancestors its parents disagree with: the sweep repairs it");
    // ANCHOR: verify
    let report = tree.verify().repair(true).await?;
    // ANCHOR_END: verify
    say(&report);
    for issue in &report.issues {
        say(format_args!("{issue:?}"));
    }
    assert!(matches!(
        report.issues.as_slice(),
        [TreeIssue::WrongAncestors { .. }]
    ));
    steps.sent();
    assert!(tree.verify().await?.is_consistent());

    steps.start("Delete \"The Jazz Age\": refused while a book files under it");
    let err = odm
        .delete_one(Subject::id_field().eq("jazz-age"))
        .await
        .expect_err("restricted by the books");
    say(&err);
    steps.sent();

    steps.start("Delete \"1920s\": its children are lifted to \"American Literature\"");
    // ANCHOR: delete
    odm.delete_one(Subject::id_field().eq("1920s")).await?;
    // ANCHOR_END: delete
    steps.sent();
    let jazz = raw
        .find_one(doc! { "_id": "jazz-age" })
        .await?
        .expect("stored");
    say("as stored:");
    say(steps.show(&Bson::Document(jazz.clone())));
    assert_eq!(jazz.get_str("parent").ok(), Some("american-literature"));
    assert_eq!(
        jazz.get_array("ancestors").ok().cloned(),
        Some(vec!["american-literature".into()])
    );

    crate::common::drop_database(&odm).await
}
