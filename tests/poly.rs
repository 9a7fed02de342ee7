//! Polymorphic references and DBRefs against a real server: the stored shape, populate with
//! one query per target collection, DBRefs written by other tools, unknown collections, delete
//! rules per target, and hostile parts.

mod common;
#[path = "common/feed.rs"]
mod feed;

use common::{last_command, listed_indexes, sent, stored, stored_one};
use feed::*;
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;

async fn library(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    odm.insert_many(&[
        Author {
            id: 1,
            name: "F. Scott Fitzgerald".into(),
        },
        Author {
            id: 2,
            name: "Dave Duncan".into(),
        },
    ])
    .await?;
    odm.insert_many(&[
        User {
            id: 1,
            username: "bob".into(),
        },
        User {
            id: 2,
            username: "alice".into(),
        },
    ])
    .await?;
    odm.insert_many(&[
        Book {
            id: 1,
            title: "The Great Gatsby".into(),
            author: Ref::new(1),
        },
        Book {
            id: 2,
            title: "The Wizard Chase".into(),
            author: Ref::new(2),
        },
    ])
    .await?;
    Ok(())
}

async fn raw_insert(db: &TestDb, collection: &str, doc: Document) {
    db.raw()
        .collection::<Document>(collection)
        .insert_one(doc)
        .await
        .expect("raw insert");
}

#[tokio::test]
async fn a_polymorphic_reference_is_stored_as_a_standard_dbref() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    let mut e = entry(1, Subject::Book(Ref::new(1)));
    e.mentions = vec![Subject::Author(Ref::new(1)), Subject::User(Ref::new(2))];
    db.odm().insert_one(&e).await?;
    let raw = stored_one(&db, "feed", 1).await.expect("stored");
    let subject = raw.get_document("subject").unwrap();
    assert_eq!(subject, &doc! {"$ref": "books", "$id": 1});
    assert_eq!(
        subject.keys().collect::<Vec<_>>(),
        ["$ref", "$id"],
        "DBRef field order"
    );
    assert_eq!(
        raw.get_array("mentions").unwrap(),
        &vec![
            Bson::Document(doc! {"$ref": "authors", "$id": 1}),
            Bson::Document(doc! {"$ref": "users", "$id": 2}),
        ]
    );
    assert_eq!(raw.get("via"), Some(&Bson::Null));
    let back: FeedEntry = db.odm().get(1).await?.expect("found");
    assert_eq!(back, e);
    Ok(())
}

#[tokio::test]
async fn populate_sends_one_query_per_target_collection() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    let odm = db.odm();
    // 60 entries over books and authors only, each mentioning a user or a book.
    let entries: Vec<FeedEntry> = (0..60)
        .map(|i| {
            let subject = match i % 2 {
                0 => Subject::Book(Ref::new(1 + i % 4 / 2)),
                _ => Subject::Author(Ref::new(1 + i % 4 / 2)),
            };
            let mut e = entry(i, subject);
            e.mentions = vec![
                Subject::User(Ref::new(1 + i % 2)),
                Subject::Book(Ref::new(2)),
            ];
            e
        })
        .collect();
    odm.insert_many(&entries).await?;
    db.commands().clear();
    let feed = odm
        .find::<FeedEntry>(Filter::all())
        .populate(FeedEntry::subject())
        .await?;
    // The entries, then books and authors: no query of users, which no subject names.
    common::assert_populate_sent(&db, &["find", "find", "find"]);
    assert_eq!(feed.len(), 60);
    for e in &feed {
        match &e.subject {
            Subject::Book(b) => assert!(b.loaded()?.title.starts_with("The")),
            Subject::Author(a) => assert!(!a.loaded()?.name.is_empty()),
            Subject::User(_) => unreachable!(),
        }
    }
    // Two paths and a second level: entries, then books + authors (subjects) and users +
    // books (mentions) concurrently, then the authors of the books.
    db.commands().clear();
    let feed = odm
        .find::<FeedEntry>(Filter::all())
        .populate(
            FeedEntry::subject()
                .populate()
                .with::<Book>(|p| p.then(Book::author())),
        )
        .populate(
            FeedEntry::mentions()
                .populate()
                .with::<User>(|p| p.select(odm::Projection::include(&User::username()))),
        )
        .await?;
    if common::lookup_plan() {
        let mut into: Vec<String> = common::last_lookups(&db)
            .into_iter()
            .map(|(from, _)| from)
            .collect();
        into.sort();
        // One `$lookup` per target of each path (the server finds nothing for a target no
        // document names), and the authors of the books inside the books' one.
        assert_eq!(
            into,
            ["authors", "authors", "authors", "books", "books", "users", "users"]
        );
    }
    let log = db.commands().take();
    let finds: Vec<String> = log
        .iter()
        .filter(|c| c.name == "find")
        .filter_map(|c| c.command.as_ref()?.get_str("find").ok().map(str::to_owned))
        .collect();
    let mut sorted = finds.clone();
    sorted.sort();
    if !common::lookup_plan() {
        assert_eq!(
            sorted,
            ["authors", "authors", "books", "books", "feed", "users"],
            "{finds:?}"
        );
    }
    let Subject::Book(b) = &feed[0].subject else {
        panic!("entry 0 is about a book")
    };
    assert_eq!(b.loaded()?.author.loaded()?.id, 1);
    let Subject::User(u) = &feed[1].mentions[0] else {
        panic!("a user")
    };
    assert_eq!(u.loaded()?.username, "alice");
    Ok(())
}

#[tokio::test]
async fn dbrefs_written_by_other_tools_are_read() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    // `$id` before `$ref`, and an extra field: both allowed by the convention.
    raw_insert(
        &db,
        "feed",
        doc! {"_id": 7, "verb": "read", "subject": {"$id": 2, "$ref": "books", "note": "x"}, "mentions": [], "via": null},
    )
    .await;
    let e = db
        .odm()
        .find_one(FeedEntry::id_field().eq(7))
        .populate(FeedEntry::subject())
        .await?
        .expect("found");
    let Subject::Book(b) = &e.subject else {
        panic!("a book")
    };
    assert_eq!(b.loaded()?.title, "The Wizard Chase");
    Ok(())
}

#[tokio::test]
async fn a_dbref_to_an_unknown_collection_is_a_typed_error() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    raw_insert(
        &db,
        "feed",
        doc! {"_id": 8, "verb": "liked", "subject": {"$ref": "photos", "$id": 3}, "mentions": [], "via": null},
    )
    .await;
    let err = db
        .odm()
        .find::<FeedEntry>(Filter::all())
        .populate(FeedEntry::subject())
        .await
        .expect_err("unknown collection");
    match &err {
        odm::Error::UnknownReference {
            collection,
            id,
            path,
            found,
            targets,
        } => {
            assert_eq!(collection, "feed");
            assert!(id.contains('8'), "{id}");
            assert_eq!(path, "subject");
            assert_eq!(found, "photos");
            assert_eq!(targets.as_ref(), ["books", "authors", "users"]);
        }
        other => panic!("{other:?}"),
    }
    // In an array, the path names the element.
    raw_insert(
        &db,
        "feed",
        doc! {"_id": 9, "verb": "liked", "subject": {"$ref": "books", "$id": 1}, "mentions": [{"$ref": "users", "$id": 1}, {"$ref": "films", "$id": 1}], "via": null},
    )
    .await;
    let err = db
        .odm()
        .find::<FeedEntry>(FeedEntry::id_field().eq(9))
        .await
        .expect_err("unknown collection");
    assert!(
        matches!(&err, odm::Error::UnknownReference { path, found, .. } if path == "mentions.1" && found == "films"),
        "{err:?}"
    );
    // A reader with a catch-all takes them.
    let views = db
        .odm()
        .find::<FeedEntry>(Filter::all())
        .into_type::<EntryView>()
        .await?;
    let photo = views.iter().find(|v| v.id == 8).expect("entry 8");
    assert!(
        matches!(&photo.subject, BookOrOther::Other(r) if r.collection == "photos" && r.id == Bson::Int32(3))
    );
    Ok(())
}

#[tokio::test]
async fn filters_on_polymorphic_references_match_collection_and_id() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    let odm = db.odm();
    let mut a = entry(1, Subject::Book(Ref::new(1)));
    a.mentions = vec![Subject::User(Ref::new(1))];
    odm.insert_many(&[
        a,
        entry(2, Subject::Author(Ref::new(1))),
        entry(3, Subject::User(Ref::new(1))),
    ])
    .await?;
    // Book 1 and author 1 share an id: the collection tells them apart.
    let about_author = odm
        .find(FeedEntry::subject().refers_to(&Subject::Author(Ref::new(1))))
        .await?;
    assert_eq!(about_author.iter().map(|e| e.id).collect::<Vec<_>>(), [2]);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! {"subject.$ref": "authors", "subject.$id": 1}
    );
    let mentioning = odm
        .find(FeedEntry::mentions().refers_to(&Subject::User(Ref::new(1))))
        .await?;
    assert_eq!(mentioning.iter().map(|e| e.id).collect::<Vec<_>>(), [1]);
    let books = odm
        .count(FeedEntry::subject().refers_to_kind::<Book>())
        .await?;
    assert_eq!(books, 1);
    Ok(())
}

#[tokio::test]
async fn delete_rules_apply_per_target() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    let odm = db.odm();
    let mut a = entry(1, Subject::Book(Ref::new(1)));
    a.mentions = vec![
        Subject::User(Ref::new(1)),
        Subject::Book(Ref::new(1)),
        Subject::Author(Ref::new(1)),
    ];
    a.via = Some(Subject::User(Ref::new(1)));
    let mut b = entry(2, Subject::User(Ref::new(1)));
    b.via = Some(Subject::Book(Ref::new(1)));
    let c = entry(3, Subject::User(Ref::new(2)));
    odm.insert_many(&[a, b, c]).await?;
    // Deleting user 1: the entry about it goes (cascade), the mention is pulled, `via` is
    // cleared; book 1 and author 1, which share the id, are untouched.
    odm.delete_one(User::id_field().eq(1)).await?;
    let feed = stored(&db, "feed").await;
    assert_eq!(
        feed.iter()
            .map(|d| d.get_i32("_id").unwrap())
            .collect::<Vec<_>>(),
        [1, 3]
    );
    let first = &feed[0];
    assert_eq!(
        first.get_array("mentions").unwrap(),
        &vec![
            Bson::Document(doc! {"$ref": "books", "$id": 1}),
            Bson::Document(doc! {"$ref": "authors", "$id": 1}),
        ]
    );
    assert_eq!(first.get("via"), Some(&Bson::Null));
    // Deleting author 1 cascades to book 1 (its author), and from both to the entries.
    odm.delete_one(Author::id_field().eq(1)).await?;
    let feed = stored(&db, "feed").await;
    assert_eq!(
        feed.iter()
            .map(|d| d.get_i32("_id").unwrap())
            .collect::<Vec<_>>(),
        [3]
    );
    Ok(())
}

#[tokio::test]
async fn references_get_indexes_on_their_dbref_fields() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .sync_indexes_of::<FeedEntry>()
        .and::<Shelf>()
        .await?;
    let names: Vec<String> = listed_indexes(&db, "feed")
        .await
        .iter()
        .map(|i| i.get_str("name").unwrap().to_owned())
        .collect();
    assert!(
        names.contains(&"subject.$ref_1_subject.$id_1".to_owned()),
        "{names:?}"
    );
    // An array of DBRefs by the same two fields: its elements' fields come in any order.
    assert!(
        names.contains(&"mentions.$ref_1_mentions.$id_1".to_owned()),
        "{names:?}"
    );
    let names: Vec<String> = listed_indexes(&db, "shelves")
        .await
        .iter()
        .map(|i| i.get_str("name").unwrap().to_owned())
        .collect();
    assert!(
        names.contains(&"favourite.$ref_1_favourite.$id_1".to_owned()),
        "{names:?}"
    );
    assert!(
        names.contains(&"books.$ref_1_books.$id_1".to_owned()),
        "{names:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_plain_reference_can_be_stored_as_a_dbref() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    let odm = db.odm();
    odm.insert_one(&Shelf {
        id: 1,
        favourite: Some(Ref::new(1)),
        books: vec![Ref::new(1), Ref::new(2)],
    })
    .await?;
    let raw = stored_one(&db, "shelves", 1).await.expect("stored");
    assert_eq!(
        raw.get_document("favourite").unwrap(),
        &doc! {"$ref": "books", "$id": 1}
    );
    assert_eq!(
        raw.get_array("books").unwrap()[1],
        Bson::Document(doc! {"$ref": "books", "$id": 2})
    );
    // Typed filters and updates take `Ref`s and send DBRefs.
    let found = odm.find(Shelf::books().contains(Ref::new(2))).await?;
    assert_eq!(found.len(), 1);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! {"books": {"$eq": {"$ref": "books", "$id": 2}}}
    );
    assert_eq!(odm.count(Shelf::favourite().eq(Ref::new(1))).await?, 1);
    assert_eq!(odm.count(Shelf::favourite().refers_to(1)).await?, 1);
    odm.update_by_id::<Shelf>(1, Shelf::favourite().set(Ref::new(2)))
        .await?;
    let raw = stored_one(&db, "shelves", 1).await.expect("stored");
    assert_eq!(
        raw.get_document("favourite").unwrap(),
        &doc! {"$ref": "books", "$id": 2}
    );
    // Populate reads the DBRefs.
    let shelf = odm
        .find_one(Shelf::id_field().eq(1))
        .populate(Shelf::books())
        .populate(Shelf::favourite())
        .await?
        .expect("found");
    assert_eq!(shelf.books[1].loaded()?.title, "The Wizard Chase");
    assert_eq!(shelf.favourite.as_ref().unwrap().loaded()?.id, 2);
    // Delete rules: book 2 is pulled from the array and cleared from `favourite`.
    odm.delete_one(Book::id_field().eq(2)).await?;
    let raw = stored_one(&db, "shelves", 1).await.expect("stored");
    assert_eq!(raw.get("favourite"), Some(&Bson::Null));
    assert_eq!(
        raw.get_array("books").unwrap(),
        &vec![Bson::Document(doc! {"$ref": "books", "$id": 1})]
    );
    Ok(())
}

#[tokio::test]
async fn hostile_dbref_parts_are_values() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    let odm = db.odm();
    odm.insert_one(&Note {
        id: 1,
        about: BookOrOther::Book(Ref::new(1)),
    })
    .await?;
    // An operator-shaped `$id` is refused before anything is sent, naming the key.
    db.commands().clear();
    let hostile = |id: Bson, collection: &str| {
        BookOrOther::Other(DbRef {
            collection: collection.into(),
            id,
            database: None,
        })
    };
    let err = odm
        .insert_one(&Note {
            id: 2,
            about: hostile(Bson::Document(doc! {"$gt": 0}), "books"),
        })
        .await
        .expect_err("operator in $id");
    assert!(
        matches!(&err, odm::Error::InvalidKey { path, key, .. } if path == "about.$id" && key == "$gt"),
        "{err:?}"
    );
    assert!(sent(&db).is_empty());
    // In a filter, the parts are matched as values: nothing matches an operator-shaped id or
    // collection, though a note about book 1 exists.
    for about in [
        hostile(Bson::Document(doc! {"$gt": 0}), "books"),
        hostile(Bson::Int32(1), "$where"),
        hostile(Bson::Document(doc! {"$ne": null}), "books"),
    ] {
        assert_eq!(
            odm.count(Note::about().refers_to(&about)).await?,
            0,
            "{about:?}"
        );
    }
    assert_eq!(
        odm.count(Note::about().refers_to(&BookOrOther::Book(Ref::new(1))))
            .await?,
        1
    );
    // The catch-all's DBRefs are never populated nor followed by delete rules on other
    // collections: deleting book 1 removes the note about it only.
    raw_insert(
        &db,
        "notes",
        doc! {"_id": 3, "about": {"$ref": "photos", "$id": 1}},
    )
    .await;
    odm.delete_one(Book::id_field().eq(1)).await?;
    let notes = stored(&db, "notes").await;
    assert_eq!(
        notes
            .iter()
            .map(|d| d.get_i32("_id").unwrap())
            .collect::<Vec<_>>(),
        [3]
    );
    Ok(())
}

#[tokio::test]
async fn malformed_dbrefs_are_decode_errors_naming_the_field() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    for (id, subject) in [
        (20, Bson::Document(doc! {"$ref": 5, "$id": 1})),
        (21, Bson::String("books".into())),
        (22, Bson::Document(doc! {"$id": 1})),
        (23, Bson::Document(doc! {"$ref": "books"})),
        (
            24,
            Bson::Document(doc! {"$ref": "books", "$id": "not an int"}),
        ),
        (
            25,
            Bson::Document(doc! {"$ref": "books", "$id": 1, "$db": "elsewhere"}),
        ),
    ] {
        raw_insert(
            &db,
            "feed",
            doc! {"_id": id, "verb": "x", "subject": subject.clone(), "mentions": [], "via": null},
        )
        .await;
        let err = db
            .odm()
            .find::<FeedEntry>(FeedEntry::id_field().eq(id))
            .await
            .expect_err("malformed DBRef");
        match &err {
            odm::Error::Decode {
                collection, path, ..
            } => {
                assert_eq!(collection, "feed");
                assert!(path.starts_with("subject"), "{subject}: {err}");
                assert!(
                    err.to_string().contains(&format!("{{ _id: {id} }}")),
                    "{err}"
                );
            }
            other => panic!("{subject}: {other:?}"),
        }
    }
    Ok(())
}

async fn one_book(db: &TestDb) -> odm::Result<()> {
    db.odm()
        .insert_one(&Author {
            id: 1,
            name: "F. Scott Fitzgerald".into(),
        })
        .await?;
    db.odm()
        .insert_one(&Book {
            id: 1,
            title: "The Great Gatsby".into(),
            author: Ref::new(1),
        })
        .await?;
    Ok(())
}

/// Drivers write `$db` with the name of the database the reference lives in, often the very
/// one odm is connected to: such a DBRef names a document odm can load.
#[tokio::test]
async fn a_dbref_naming_this_database_is_read() -> odm::Result<()> {
    let db = common::db().await?;
    one_book(&db).await?;
    db.raw()
        .collection::<Document>("feed")
        .insert_one(doc! {
            "_id": 1, "verb": "liked",
            "subject": { "$ref": "books", "$id": 1, "$db": db.name() },
            "mentions": [], "via": null,
        })
        .await?;
    let entry = db
        .odm()
        .get::<FeedEntry>(1)
        .populate(FeedEntry::subject())
        .await?
        .expect("inserted");
    let Subject::Book(book) = &entry.subject else {
        panic!("a book: {:?}", entry.subject)
    };
    assert_eq!(book.loaded()?.title, "The Great Gatsby");
    Ok(())
}

/// A DBRef to a document of another database is read as the catch-all's (it is not a
/// reference to this database's book), so deleting this database's book must leave it.
#[tokio::test]
async fn a_delete_rule_leaves_a_dbref_to_another_database() -> odm::Result<()> {
    let db = common::db().await?;
    one_book(&db).await?;
    db.raw()
        .collection::<Document>("notes")
        .insert_one(doc! { "_id": 1, "about": { "$ref": "books", "$id": 1, "$db": "archive" } })
        .await?;
    let note = db.odm().get::<Note>(1).await?.expect("inserted");
    assert!(
        matches!(&note.about, BookOrOther::Other(r) if r.database.as_deref() == Some("archive")),
        "{note:?}"
    );
    db.odm().delete_one(Book::id_field().eq(1)).await?;
    assert_eq!(
        stored(&db, "notes").await.len(),
        1,
        "the note about archive's book 1 was deleted with this database's book 1"
    );
    Ok(())
}

/// Elements of arrays of DBRefs written by other tools: `$id` before `$ref`, extra fields, a
/// `$db` naming this database, next to odm's own form and to elements that must not match
/// (another collection, another database, the same id under another `$ref`, a value that is
/// not a document). `refers_to` counts them, populate reads them, and the `pull` rules of a
/// polymorphic array and of a plain reference stored as DBRefs remove exactly them.
#[tokio::test]
async fn dbrefs_in_arrays_match_in_any_field_order_and_with_extra_fields() -> odm::Result<()> {
    let db = common::db().await?;
    library(&db).await?;
    let odm = db.odm();
    let name = db.name().to_owned();
    raw_insert(
        &db,
        "feed",
        doc! { "_id": 91, "verb": "reviewed", "subject": { "$ref": "books", "$id": 2 },
        "mentions": [
            { "$id": 1, "$ref": "users" },
            { "$ref": "users", "$id": 1, "source": "import" },
            { "$ref": "users", "$id": 1, "$db": name.clone() },
            { "$ref": "users", "$id": 2 },
            { "$ref": "books", "$id": 1 },
            { "$id": 1, "$ref": "authors", "source": "import" },
        ], "via": null },
    )
    .await;
    // Matched by two different elements only: user 2's `$ref` with book 1's `$id`.
    raw_insert(
        &db,
        "feed",
        doc! { "_id": 92, "verb": "read", "subject": { "$ref": "books", "$id": 2 },
        "mentions": [{ "$id": 2, "$ref": "users" }, { "$ref": "books", "$id": 1 }], "via": null },
    )
    .await;
    // Another database's user 1 is not this database's.
    raw_insert(
        &db,
        "feed",
        doc! { "_id": 93, "verb": "read", "subject": { "$ref": "books", "$id": 2 },
        "mentions": [{ "$ref": "users", "$id": 1, "$db": "archive" }], "via": null },
    )
    .await;
    let count = |s: Subject| odm.count(FeedEntry::mentions().refers_to(&s));
    assert_eq!(
        count(Subject::User(Ref::new(1))).await?,
        2,
        "91 and 93 (any database)"
    );
    assert_eq!(count(Subject::Author(Ref::new(1))).await?, 1, "91");
    assert_eq!(count(Subject::User(Ref::new(2))).await?, 2, "91 and 92");
    assert_eq!(count(Subject::Author(Ref::new(2))).await?, 0);
    assert_eq!(count(Subject::User(Ref::new(7))).await?, 0);
    let filter = FeedEntry::mentions().refers_to(&Subject::Book(Ref::new(2)));
    assert_eq!(odm.count(filter).await?, 0, "no element is book 2");

    // Populate reads every form.
    let mut entry = odm
        .get::<FeedEntry>(91)
        .populate(FeedEntry::mentions())
        .await?
        .expect("stored");
    let users = entry
        .mentions
        .iter_mut()
        .filter(|m| matches!(m, Subject::User(u) if u.loaded().is_ok()))
        .count();
    assert_eq!(users, 4);

    // Deleting user 1 pulls its three forms from 91 (this database's), and nothing else.
    odm.delete_one(User::id_field().eq(1)).await?;
    let left = stored_one(&db, "feed", 91).await.expect("91 stays");
    assert_eq!(
        left.get_array("mentions").unwrap(),
        &vec![
            Bson::Document(doc! { "$ref": "users", "$id": 2 }),
            Bson::Document(doc! { "$ref": "books", "$id": 1 }),
            Bson::Document(doc! { "$id": 1, "$ref": "authors", "source": "import" }),
        ]
    );
    let other_db = stored_one(&db, "feed", 93).await.expect("93 stays");
    assert_eq!(
        other_db.get_array("mentions").unwrap().len(),
        1,
        "another database's user"
    );
    let two = stored_one(&db, "feed", 92).await.expect("92 stays");
    assert_eq!(two.get_array("mentions").unwrap().len(), 2);

    // A plain reference stored as DBRefs: the same for its `pull` rule.
    raw_insert(
        &db,
        "shelves",
        doc! { "_id": "s", "favourite": null, "books": [
            { "$id": 2, "$ref": "books", "shelved_by": "import" },
            { "$ref": "books", "$id": 1 },
            "not a reference",
        ] },
    )
    .await;
    assert_eq!(odm.count(Shelf::books().refers_to(2)).await?, 1);
    odm.delete_one(Book::id_field().eq(2)).await?;
    let shelf = stored_one(&db, "shelves", "s").await.expect("the shelf");
    assert_eq!(
        shelf.get_array("books").unwrap(),
        &vec![
            Bson::Document(doc! { "$ref": "books", "$id": 1 }),
            Bson::String("not a reference".into()),
        ]
    );
    Ok(())
}
