//! The library's activity feed: each entry is about a book, an author or a user, and mentions
//! more of them. A reference that may point into one of several collections is stored as a
//! DBRef, `{$ref: collection, $id: id}` (the workshop's "what if more than one collection?").
//!
//! Also here: notes about books, whose reference keeps DBRefs to any other collection in a
//! catch-all variant; a shelf whose plain references are stored as DBRefs, for the other
//! programs that read the collection; DBRefs written by those programs; the delete rules, per
//! target. Every step prints what it did and the commands it sent.
//!
//! Run it with `cargo run -p odm-examples --example feed`: it uses `MONGODB_URI` when set, else
//! starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{list, say, say_lines};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;

// ANCHOR: library
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    first_name: String,
    last_name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique)]
    username: String,
    /// Never loaded into the feed (see `select` below), hence the default.
    #[serde(default)]
    password: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference]
    author: Ref<Author>,
    #[serde(default)]
    subjects: Vec<String>,
}
// ANCHOR_END: library

// ANCHOR: subject
/// What a feed entry is about: one of three models, each in its own collection.
#[derive(PolyRef, Debug, Clone, PartialEq)]
enum Subject {
    Book(Ref<Book>),
    Author(Ref<Author>),
    User(Ref<User>),
}
// ANCHOR_END: subject

// ANCHOR: feed_entry
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "feed")]
struct FeedEntry {
    #[serde(rename = "_id")]
    id: i32,
    verb: String,
    /// Deleting the book, author or user deletes the entries about it.
    #[reference(poly, on_delete = "cascade")]
    subject: Subject,
    /// Deleting one of them removes it from the mentions.
    #[reference(poly, many, max = 10, on_delete = "pull")]
    mentions: Vec<Subject>,
    /// Who pointed the library to it, if anyone did; cleared when that one is deleted.
    #[reference(poly, on_delete = "nullify")]
    via: Option<Subject>,
}
// ANCHOR_END: feed_entry

// ANCHOR: note
/// What a note is about: a book of the library, or whatever another program keeps notes about
/// (a DBRef to any other collection, kept as it was read).
#[derive(PolyRef, Debug, Clone, PartialEq)]
enum NoteAbout {
    Book(Ref<Book>),
    Other(DbRef),
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "notes")]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
    #[reference(poly, on_delete = "cascade")]
    about: NoteAbout,
}
// ANCHOR_END: note

// ANCHOR: shelf
/// A shelf of books, whose references are stored as DBRefs because other programs that read
/// `shelves` expect them.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: String,
    #[reference(on_delete = "nullify")]
    #[serde(with = "odm::dbref")]
    favourite: Option<Ref<Book>>,
    #[reference(many, max = 20, on_delete = "pull")]
    #[serde(with = "odm::dbref")]
    books: Vec<Ref<Book>>,
}
// ANCHOR_END: shelf

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("feed").await?;
    // The steps print the commands; this handle of the same log counts them.
    let sent = steps.log();
    let feed_raw = odm.database().collection::<Document>("feed");
    let notes_raw = odm.database().collection::<Document>("notes");
    let shelves_raw = odm.database().collection::<Document>("shelves");

    steps.start("Create the indexes: a polymorphic reference is indexed on its DBRef");
    let report = odm.sync_indexes().await?;
    say_lines(&report);
    steps.sent();

    steps.start("Insert the library's authors, users and books, then the feed");
    odm.insert_many(&[
        author(1, "F. Scott", "Fitzgerald"),
        author(2, "Arthur", "Miller"),
    ])
    .await?;
    odm.insert_many(&[user(1, "emily"), user(2, "bob"), user(3, "kate")])
        .await?;
    odm.insert_many(&[
        book(1, "The Great Gatsby", 1),
        book(3, "This Side of Paradise", 1),
        book(4, "Death of a Salesman", 2),
    ])
    .await?;
    // ANCHOR: insert
    let entries = [
        entry(1, "arrived", Subject::Book(Ref::new(1)))
            .mentioning([Subject::Author(Ref::new(1))])
            .via(Subject::User(Ref::new(1))),
        entry(2, "featured", Subject::Author(Ref::new(1)))
            .mentioning([Subject::Book(Ref::new(1)), Subject::Book(Ref::new(3))]),
        entry(3, "joined", Subject::User(Ref::new(3))),
        entry(4, "arrived", Subject::Book(Ref::new(4)))
            .mentioning([Subject::Author(Ref::new(2)), Subject::User(Ref::new(3))])
            .via(Subject::User(Ref::new(3))),
        entry(5, "recommended", Subject::Book(Ref::new(3)))
            .mentioning([Subject::User(Ref::new(2))]),
    ];
    odm.insert_many(&entries).await?;
    // ANCHOR_END: insert
    say("2 authors, 3 users, 3 books, 5 feed entries");
    steps.sent();

    steps.start("Read entry 4 back with the driver: DBRefs, `$ref` first");
    let stored = feed_raw
        .find_one(doc! { "_id": 4 })
        .await?
        .expect("inserted");
    say(steps.show(&Bson::Document(stored.clone())));
    let subject = stored.get_document("subject").expect("a DBRef");
    assert_eq!(subject, &doc! { "$ref": "books", "$id": 4 });
    assert_eq!(subject.keys().collect::<Vec<_>>(), ["$ref", "$id"]);
    steps.sent();

    steps.start("Populate the subjects: one find per collection the entries reference");
    // ANCHOR: populate
    let feed = odm
        .find::<FeedEntry>(Filter::all())
        .sort(FeedEntry::id_field().asc())
        .populate(FeedEntry::subject())
        .await?;
    // ANCHOR_END: populate
    for e in &feed {
        say(format_args!(
            "{} {}: {}",
            e.id,
            e.verb,
            describe(&e.subject)
        ));
    }
    assert!(feed.iter().all(|e| is_loaded(&e.subject)));
    assert_eq!(
        sent.count_of("find"),
        4,
        "the entries, then books, authors and users"
    );
    steps.sent();

    steps.start("Options per target, and a second path populated at the same time");
    // ANCHOR: populate_with
    let feed = odm
        .find::<FeedEntry>(Filter::all())
        .sort(FeedEntry::id_field().asc())
        .populate(
            FeedEntry::subject()
                .populate()
                .with::<Book>(|p| {
                    p.select(Projection::include(&Book::title()).and(&Book::author()))
                        .then(Book::author())
                })
                .with::<User>(|p| p.select(Projection::include(&User::username()))),
        )
        .populate(
            FeedEntry::mentions()
                .populate()
                .with::<User>(|p| p.select(Projection::include(&User::username()))),
        )
        .await?;
    // ANCHOR_END: populate_with
    for e in &feed {
        let mentions: Vec<String> = e.mentions.iter().map(describe).collect();
        say(format_args!(
            "{} {}: {} (mentions: {})",
            e.id,
            e.verb,
            describe(&e.subject),
            mentions.join(", ")
        ));
    }
    let Subject::Book(gatsby) = &feed[0].subject else {
        panic!("entry 1 is about a book");
    };
    let gatsby = gatsby.loaded()?;
    assert_eq!(gatsby.author.loaded()?.last_name, "Fitzgerald");
    assert!(gatsby.subjects.is_empty(), "not selected");
    let Subject::User(kate) = &feed[2].subject else {
        panic!("entry 3 is about a user");
    };
    assert!(kate.loaded()?.password.is_empty(), "not selected");
    assert_eq!(
        sent.count_of("find"),
        8,
        "the entries, 3 + 3 targets, the books' authors"
    );
    steps.sent();

    steps.start("Filter on a polymorphic reference: collection and id");
    // ANCHOR: filters
    let about_gatsby = odm
        .find(FeedEntry::subject().refers_to(&Subject::Book(Ref::new(1))))
        .await?;
    let about_authors = odm
        .count(FeedEntry::subject().refers_to_kind::<Author>())
        .await?;
    let mentioning_kate = odm
        .find(FeedEntry::mentions().refers_to(&Subject::User(Ref::new(3))))
        .await?;
    // ANCHOR_END: filters
    list("about book 1", about_gatsby.iter().map(|e| e.id));
    say(format_args!("about an author: {about_authors}"));
    list("mentioning user 3", mentioning_kate.iter().map(|e| e.id));
    assert_eq!(about_gatsby.len(), 1);
    assert_eq!(about_authors, 1);
    assert_eq!(mentioning_kate.len(), 1);
    steps.sent();

    steps.start("Another program stores an entry about a film: a typed error");
    // ANCHOR: unknown
    feed_raw
        .insert_one(doc! {
            "_id": 90, "verb": "screened",
            "subject": { "$ref": "films", "$id": 7 },
            "mentions": [], "via": null,
        })
        .await?;
    let err = odm
        .find::<FeedEntry>(Filter::all())
        .await
        .expect_err("no target is stored in `films`");
    assert!(matches!(&err, odm::Error::UnknownReference { found, .. } if found == "films"));
    // ANCHOR_END: unknown
    say(format_args!("refused: {err}"));
    feed_raw.delete_one(doc! { "_id": 90 }).await?;
    steps.sent();

    steps.start("DBRefs written by other tools: any field order, extra fields, `$db`");
    // ANCHOR: other_tools
    feed_raw
        .insert_one(doc! {
            "_id": 91, "verb": "reviewed",
            "subject": { "$id": 3, "$ref": "books", "source": "import" },
            "mentions": [{ "$id": 3, "$ref": "users" }], "via": null,
        })
        .await?;
    let review = odm
        .get::<FeedEntry>(91)
        .populate(FeedEntry::subject())
        .await?
        .expect("inserted");
    // A single reference is matched by its `$ref` and `$id` fields, in any order, and so is
    // an element of an array.
    let about_paradise = odm
        .count(FeedEntry::subject().refers_to(&Subject::Book(Ref::new(3))))
        .await?;
    let mentioning_kate = odm
        .count(FeedEntry::mentions().refers_to(&Subject::User(Ref::new(3))))
        .await?;
    assert_eq!((about_paradise, mentioning_kate), (2, 2));
    // ANCHOR_END: other_tools
    say(format_args!(
        "91 {}: {}",
        review.verb,
        describe(&review.subject)
    ));
    say(format_args!(
        "about book 3: {about_paradise}; mentioning user 3: {mentioning_kate} (91 among them)"
    ));
    // ANCHOR: other_database
    feed_raw
        .insert_one(doc! {
            "_id": 92, "verb": "arrived",
            "subject": { "$ref": "books", "$id": 1, "$db": "archive" },
            "mentions": [], "via": null,
        })
        .await?;
    let err = odm
        .get::<FeedEntry>(92)
        .await
        .expect_err("another database");
    // ANCHOR_END: other_database
    say(format_args!("refused: {err}"));
    assert!(matches!(&err, odm::Error::Decode { path, .. } if path == "subject"));
    feed_raw.delete_one(doc! { "_id": 92 }).await?;
    steps.sent();

    steps.start("Notes: a catch-all variant keeps DBRefs to any other collection");
    // ANCHOR: catch_all
    odm.insert_one(&Note {
        id: 1,
        text: "First edition on order".into(),
        about: NoteAbout::Book(Ref::new(1)),
    })
    .await?;
    // Another program's notes: about a film, and about a book of another database.
    notes_raw
        .insert_many([
            doc! { "_id": 2, "text": "Subtitled copy", "about": { "$ref": "films", "$id": 7 } },
            doc! { "_id": 3, "text": "Lent out", "about": { "$ref": "books", "$id": 3, "$db": "archive" } },
        ])
        .await?;
    let notes = odm
        .find::<Note>(Filter::all())
        .sort(Note::id_field().asc())
        .populate(Note::about())
        .await?;
    // ANCHOR_END: catch_all
    for n in &notes {
        let about = match &n.about {
            NoteAbout::Book(b) => format!("the book {}", b.loaded()?.title),
            NoteAbout::Other(r) => format!("kept as read: {}", steps.show(&r.to_document().into())),
        };
        say(format_args!("{} {:?}: {about}", n.id, n.text));
    }
    assert!(matches!(&notes[1].about, NoteAbout::Other(r) if r.collection == "films"));
    assert!(
        matches!(&notes[2].about, NoteAbout::Other(r) if r.database.as_deref() == Some("archive"))
    );
    // Written back, the catch-all's DBRef is stored as it was read.
    odm.replace_one(&notes[2]).await?;
    let lent = notes_raw.find_one(doc! { "_id": 3 }).await?.expect("kept");
    assert_eq!(
        lent.get_document("about").expect("a DBRef"),
        &doc! { "$ref": "books", "$id": 3, "$db": "archive" }
    );
    steps.sent();

    steps.start("A plain reference stored as a DBRef: the shelf");
    // ANCHOR: shelf_use
    odm.insert_one(&Shelf {
        id: "front-desk".into(),
        favourite: Some(Ref::new(4)),
        books: vec![Ref::new(1), Ref::new(3), Ref::new(4)],
    })
    .await?;
    let with_paradise = odm.find(Shelf::books().contains(Ref::new(3))).await?;
    let salesman_first = odm.count(Shelf::favourite().refers_to(4)).await?;
    let shelf = odm
        .get::<Shelf>("front-desk")
        .populate(Shelf::books())
        .await?
        .expect("inserted");
    // ANCHOR_END: shelf_use
    let stored = shelves_raw
        .find_one(doc! { "_id": "front-desk" })
        .await?
        .expect("inserted");
    say(steps.show(&Bson::Document(stored.clone())));
    let titles: Vec<&str> = shelf
        .books
        .iter()
        .map(|b| b.loaded().map(|b| b.title.as_str()))
        .collect::<Result<_, _>>()?;
    list("on the shelf", titles);
    assert_eq!(with_paradise.len(), 1);
    assert_eq!(salesman_first, 1);
    assert_eq!(
        stored.get_document("favourite").expect("a DBRef"),
        &doc! { "$ref": "books", "$id": 4 }
    );
    steps.sent();

    steps.start("Delete user 3: each rule of `feed` that targets users");
    // ANCHOR: delete_user
    odm.delete_one(User::id_field().eq(3)).await?;
    // ANCHOR_END: delete_user
    steps.sent();
    let mut cursor = feed_raw.find(doc! {}).sort(doc! { "_id": 1 }).await?;
    let mut ids = Vec::new();
    while cursor.advance().await? {
        ids.push(
            cursor
                .deserialize_current()?
                .get_i32("_id")
                .unwrap_or_default(),
        );
    }
    list("feed entries left", &ids);
    assert_eq!(ids, [1, 2, 4, 5, 91], "entry 3, about user 3, is gone");
    let four = feed_raw.find_one(doc! { "_id": 4 }).await?.expect("kept");
    say(format_args!(
        "entry 4: {}",
        steps.show(&Bson::Document(four.clone()))
    ));
    assert_eq!(four.get("via"), Some(&Bson::Null));
    assert_eq!(four.get_array("mentions").map(Vec::len).ok(), Some(1));
    // The element of entry 91, written `$id` first by another tool, is pulled as well.
    let review = feed_raw.find_one(doc! { "_id": 91 }).await?.expect("kept");
    say(format_args!(
        "entry 91: {}",
        steps.show(&Bson::Document(review.clone()))
    ));
    assert_eq!(review.get_array("mentions").map(Vec::len).ok(), Some(0));
    let review = odm
        .get::<FeedEntry>(91)
        .populate(FeedEntry::mentions())
        .await?
        .expect("kept");
    say(format_args!(
        "populating its mentions: {} left",
        review.mentions.len()
    ));

    steps.start("Delete book 4: the feed's, the notes' and the shelf's rules that target books");
    // ANCHOR: delete_book
    odm.delete_one(Book::id_field().eq(4)).await?;
    // ANCHOR_END: delete_book
    steps.sent();
    let shelf = shelves_raw
        .find_one(doc! { "_id": "front-desk" })
        .await?
        .expect("kept");
    say(format_args!(
        "shelf: {}",
        steps.show(&Bson::Document(shelf.clone()))
    ));
    assert_eq!(shelf.get("favourite"), Some(&Bson::Null));
    assert_eq!(shelf.get_array("books").map(Vec::len).ok(), Some(2));
    assert!(feed_raw.find_one(doc! { "_id": 4 }).await?.is_none());

    steps.start("A book deleted behind odm's back: `Dangling::Skip` keeps its reference");
    // ANCHOR: dangling
    odm.database()
        .collection::<Document>("books")
        .delete_one(doc! { "_id": 3 })
        .await?;
    let featured = odm
        .get::<FeedEntry>(2)
        .populate(FeedEntry::mentions().populate().dangling(Dangling::Skip))
        .await?
        .expect("inserted");
    // The reference to book 3 is still there, unloaded.
    assert_eq!(featured.mentions.len(), 2);
    assert!(!is_loaded(&featured.mentions[1]));
    // ANCHOR_END: dangling
    let mentions: Vec<String> = featured.mentions.iter().map(describe).collect();
    list("entry 2 mentions", mentions);
    steps.sent();

    common::drop_database(&odm).await
}

/// Builds feed entries.
trait EntryExt {
    fn mentioning<const N: usize>(self, mentions: [Subject; N]) -> Self;
    fn via(self, via: Subject) -> Self;
}

impl EntryExt for FeedEntry {
    fn mentioning<const N: usize>(mut self, mentions: [Subject; N]) -> Self {
        self.mentions = mentions.into();
        self
    }
    fn via(mut self, via: Subject) -> Self {
        self.via = Some(via);
        self
    }
}

fn entry(id: i32, verb: &str, subject: Subject) -> FeedEntry {
    FeedEntry {
        id,
        verb: verb.into(),
        subject,
        mentions: Vec::new(),
        via: None,
    }
}

fn author(id: i32, first_name: &str, last_name: &str) -> Author {
    Author {
        id,
        first_name: first_name.into(),
        last_name: last_name.into(),
    }
}

fn user(id: i32, username: &str) -> User {
    User {
        id,
        username: username.into(),
        password: "slsjfk4odk84k209dlkdj90009283d".into(),
    }
}

fn book(id: i32, title: &str, author: i32) -> Book {
    Book {
        id,
        title: title.into(),
        author: Ref::new(author),
        subjects: vec!["Fiction".into()],
    }
}

fn is_loaded(s: &Subject) -> bool {
    match s {
        Subject::Book(r) => r.is_loaded(),
        Subject::Author(r) => r.is_loaded(),
        Subject::User(r) => r.is_loaded(),
    }
}

/// `the book The Great Gatsby`, or `book 3 (not loaded)`.
fn describe(s: &Subject) -> String {
    match s {
        Subject::Book(r) => match r.get() {
            Some(b) => match b.author.get() {
                Some(a) => format!("the book {} by {}", b.title, a.last_name),
                None => format!("the book {}", b.title),
            },
            None => format!("book {} (not loaded)", r.id()),
        },
        Subject::Author(r) => match r.get() {
            Some(a) => format!("the author {} {}", a.first_name, a.last_name),
            None => format!("author {} (not loaded)", r.id()),
        },
        Subject::User(r) => match r.get() {
            Some(u) => format!("the user {}", u.username),
            None => format!("user {} (not loaded)", r.id()),
        },
    }
}
