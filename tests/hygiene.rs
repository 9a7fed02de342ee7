//! The derives' output names everything by absolute path, so it compiles, without a warning,
//! in a module with no prelude where the usual names mean something else. Every attribute is
//! used at least once, and the test checks the paths and indexes that come out.

#![deny(warnings)]

mod shadowed {
    #![no_implicit_prelude]
    #![allow(dead_code)]

    use ::odm::bson::DateTime;
    use ::odm::prelude::*;

    // The names a careless expansion would use, each meaning something else here.
    pub struct Result;
    pub type Option = ();
    pub struct Vec;
    pub type String = u8;
    pub struct Box;
    pub trait Default {}
    pub struct Some;
    pub struct None;
    pub struct Ok;
    pub struct Err;
    pub struct Field;
    pub struct PhantomData;
    pub mod std {}
    pub mod core {}
    pub mod serde {}
    pub fn indexes() {}

    // The generated paths types are generic over a root, a field type and two markers: field
    // types named like those parameters must still mean the user's types.
    #[derive(Serialize, Deserialize)]
    pub struct Root(pub i32);
    #[derive(Serialize, Deserialize)]
    pub struct W(pub i32);
    #[derive(Serialize, Deserialize)]
    pub struct M(pub i32);
    #[derive(Serialize, Deserialize)]
    pub struct S(pub i32);

    /// Field names that collide with the methods of a path.
    #[derive(Embed, Serialize, Deserialize)]
    pub struct Address {
        pub path: ::std::string::String,
        pub field: ::std::string::String,
        pub child: ::std::string::String,
        pub root: Root,
        pub w: W,
        pub m: M,
        pub s: S,
    }

    #[derive(Embed, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Publisher {
        #[serde(rename = "n")]
        pub name: ::std::string::String,
        pub founded_in: i32,
        #[embed]
        pub address: Address,
    }

    #[derive(Embed, Serialize, Deserialize)]
    pub struct Person {
        pub name: ::std::string::String,
    }

    #[derive(Embed, Serialize, Deserialize)]
    pub struct Review {
        pub user: i32,
        pub rating: i32,
    }

    #[derive(Model, Serialize, Deserialize)]
    #[odm(
        collection = "books",
        index(keys = "author, -publisher.name", unique, name = "author_publisher"),
        index(keys = "reviews.rating, -pages", sparse)
    )]
    pub struct Book {
        #[serde(rename = "_id")]
        pub id: i32,
        pub author: i32,
        #[index]
        pub slug: ::std::string::String,
        #[index(unique)]
        pub isbn: ::std::string::String,
        #[index(unique)]
        pub ean: ::std::option::Option<::std::string::String>,
        #[index(sparse)]
        pub series: ::std::option::Option<::std::string::String>,
        #[index(desc)]
        pub pages: i32,
        #[index(text)]
        pub summary: ::std::string::String,
        #[index(name = "by_language")]
        #[serde(rename = "lang")]
        pub language: ::std::string::String,
        #[index(expire_after_secs = 3600)]
        pub expires: DateTime,
        #[embed]
        pub publisher: Publisher,
        #[embed]
        pub translator: ::std::option::Option<Person>,
        #[embed(max = 20)]
        pub reviews: ::std::vec::Vec<Review>,
        #[serde(skip)]
        pub cached: i32,
    }

    /// An `Option<ObjectId>` id, `rename_all`, the default collection name, a compound text
    /// index and a frequently updated field.
    #[derive(Model, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[odm(index(keys = "due_note, return_note", text))]
    pub struct LoanRecord {
        #[serde(rename = "_id")]
        pub id: ::std::option::Option<ObjectId>,
        pub due_note: ::std::string::String,
        pub return_note: ::std::string::String,
        pub due_date: DateTime,
        /// Updated often (rule of thumb 5) and copied nowhere: no warning.
        #[frequently_updated]
        pub renewals: i32,
    }

    /// A reading of a log, in the bucket of its host and hour.
    #[derive(Embed, Serialize, Deserialize)]
    pub struct Reading {
        #[serde(rename = "n")]
        pub number: i64,
        #[serde(rename = "t")]
        pub at: DateTime,
    }

    /// Buckets with renamed fields, an item id and a count named by the attribute, and `max`.
    #[derive(Model, Serialize, Deserialize)]
    #[odm(bucket(
        key = "host",
        period = "hour",
        every = "hour",
        items = "readings",
        time = "at",
        item_id = "number",
        count = "size",
        max = 60
    ))]
    pub struct HostHour {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        #[serde(rename = "h")]
        pub host: ::std::string::String,
        pub hour: DateTime,
        pub size: u32,
        #[embed]
        pub readings: ::std::vec::Vec<Reading>,
    }

    /// Pre-aggregated counters with renamed fields and hour granularity.
    #[derive(Model, Serialize, Deserialize)]
    #[odm(counters(key = "book", day = "day", total = "count", granularity = "hour"))]
    pub struct BookRecs {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        #[serde(rename = "b")]
        pub book: i32,
        pub day: DateTime,
        pub count: i64,
        pub hour: ::odm::counters::Hours,
        pub note: ::std::option::Option<::std::string::String>,
    }

    /// A time-series collection.
    #[derive(Model, Serialize, Deserialize)]
    #[odm(time_series(time = "at", meta = "book", granularity = "minutes"))]
    pub struct RecEvent {
        #[serde(rename = "_id")]
        pub id: ::std::option::Option<ObjectId>,
        pub at: DateTime,
        pub book: i32,
    }

    /// A tree, linked by `Ref`s under other names, and by plain ids.
    #[derive(Model, Serialize, Deserialize)]
    #[odm(tree(parent = "up", ancestors = "path", on_delete = "lift"))]
    pub struct Shelf {
        #[serde(rename = "_id")]
        pub id: i32,
        #[serde(rename = "parentShelf")]
        pub up: ::std::option::Option<Ref<Shelf>>,
        pub path: ::std::vec::Vec<Ref<Shelf>>,
    }

    #[derive(Model, Serialize, Deserialize)]
    #[odm(tree)]
    pub struct Room {
        #[serde(rename = "_id")]
        pub id: ::std::string::String,
        pub parent: ::std::option::Option<::std::string::String>,
        pub ancestors: ::std::vec::Vec<::std::string::String>,
    }
}

use odm::index::IndexKey;
use odm::{Each, Field, Model, Single};
use shadowed::{Book, HostHour, LoanRecord};

#[test]
fn paths_follow_serde_names() {
    let id: Field<Book, i32, Single> = Book::id();
    assert_eq!(id.path(), "_id");
    assert_eq!(Book::language().path(), "lang");
    assert_eq!(Book::publisher().path(), "publisher");
    let name: Field<Book, String, Single> = Book::publisher().name();
    assert_eq!(name.path(), "publisher.n");
    assert_eq!(Book::publisher().founded_in().path(), "publisher.foundedIn");
    // `path`, `field` and `child` are fields of `Address`, not the methods of `Field`.
    let street = Book::publisher().address().path();
    assert_eq!(street.path(), "publisher.address.path");
    assert_eq!(
        Book::publisher().address().field().path(),
        "publisher.address.field"
    );
    assert_eq!(
        Book::publisher().address().child().path(),
        "publisher.address.child"
    );
    let w: Field<Book, shadowed::W, Single> = Book::publisher().address().w();
    assert_eq!(w.path(), "publisher.address.w");
    let _: Field<Book, shadowed::Root, Single> = Book::publisher().address().root();
    let _: Field<Book, shadowed::M, Single> = Book::publisher().address().m();
    let _: Field<Book, shadowed::S, Single> = Book::publisher().address().s();
    let translator: Field<Book, String, Single> = Book::translator().name();
    assert_eq!(translator.path(), "translator.name");
    let rating: Field<Book, i32, Each> = Book::reviews().rating();
    assert_eq!(rating.path(), "reviews.rating");

    let loan_id: Field<LoanRecord, odm::bson::oid::ObjectId, Single> = LoanRecord::id();
    assert_eq!(loan_id.path(), "_id");
    assert_eq!(LoanRecord::due_date().path(), "dueDate");
    assert_eq!(Book::COLLECTION, "books");
    assert_eq!(LoanRecord::COLLECTION, "loan_records");
}

#[test]
fn indexes_follow_the_attributes() {
    let indexes = Book::indexes();
    // (name, keys, unique) of each index, in declaration order.
    type Summary = (String, Vec<(String, IndexKey)>, bool);
    let summary: Vec<Summary> = indexes
        .iter()
        .map(|i| (i.name(), i.keys().to_vec(), i.is_unique()))
        .collect();
    let key = |p: &str, k| (p.to_owned(), k);
    assert_eq!(
        summary,
        vec![
            ("slug_1".to_owned(), vec![key("slug", IndexKey::Asc)], false),
            ("isbn_1".to_owned(), vec![key("isbn", IndexKey::Asc)], true),
            ("ean_1".to_owned(), vec![key("ean", IndexKey::Asc)], true),
            (
                "series_1".to_owned(),
                vec![key("series", IndexKey::Asc)],
                false
            ),
            (
                "pages_-1".to_owned(),
                vec![key("pages", IndexKey::Desc)],
                false
            ),
            (
                "summary_text".to_owned(),
                vec![key("summary", IndexKey::Text)],
                false
            ),
            (
                "by_language".to_owned(),
                vec![key("lang", IndexKey::Asc)],
                false
            ),
            (
                "expires_1".to_owned(),
                vec![key("expires", IndexKey::Asc)],
                false
            ),
            (
                "author_publisher".to_owned(),
                vec![
                    key("author", IndexKey::Asc),
                    key("publisher.n", IndexKey::Desc)
                ],
                true
            ),
            (
                "reviews.rating_1_pages_-1".to_owned(),
                vec![
                    key("reviews.rating", IndexKey::Asc),
                    key("pages", IndexKey::Desc)
                ],
                false
            ),
        ]
    );

    // The options that `name()`, `keys()` and `is_unique()` do not show.
    let doc = |name: &str| {
        indexes
            .iter()
            .find(|i| i.name() == name)
            .expect("declared index")
            .to_document()
    };
    assert!(doc("ean_1").contains_key("partialFilterExpression"));
    assert!(!doc("ean_1").contains_key("sparse"));
    assert_eq!(doc("series_1").get_bool("sparse").ok(), Some(true));
    assert_eq!(
        doc("expires_1").get_i64("expireAfterSeconds").ok(),
        Some(3600)
    );
    assert_eq!(
        doc("reviews.rating_1_pages_-1").get_bool("sparse").ok(),
        Some(true)
    );

    let loan: Vec<String> = LoanRecord::indexes().iter().map(|i| i.name()).collect();
    assert_eq!(loan, vec!["dueNote_text_returnNote_text".to_owned()]);

    let hours: Vec<String> = HostHour::indexes().iter().map(|i| i.name()).collect();
    assert_eq!(hours, vec!["h_1_hour_-1__id_-1".to_owned()]);
    let spec = <HostHour as odm::bucket::Bucket>::bucket();
    assert_eq!(
        (spec.key.as_str(), spec.count.as_str(), spec.items.as_str()),
        ("h", "size", "readings")
    );
    assert_eq!((spec.item_id.as_str(), spec.item_time.as_str()), ("n", "t"));
    assert_eq!(spec.every, odm::bucket::Every::Hour);
    assert_eq!(spec.max, Some(60));
    // A tree indexes its parent and ancestors, under their stored names.
    let shelf: Vec<String> = shadowed::Shelf::indexes()
        .iter()
        .map(|i| i.name())
        .collect();
    assert_eq!(shelf, ["parentShelf_1", "path_1"]);
    let room: Vec<String> = shadowed::Room::indexes().iter().map(|i| i.name()).collect();
    assert_eq!(room, ["parent_1", "ancestors_1"]);
    let info = <shadowed::Shelf as odm::tree::TreeModel>::INFO;
    assert_eq!((info.parent, info.ancestors), ("parentShelf", "path"));
    assert_eq!(info.on_delete, odm::tree::DeleteRule::Lift);
}

#[test]
fn models_register_themselves() {
    let collections: Vec<&str> = odm::Catalog::linked_in(module_path!())
        .models()
        .iter()
        .map(|m| m.collection)
        .collect();
    assert!(collections.contains(&"books"));
    assert!(collections.contains(&"loan_records"));
}

#[test]
fn counters_and_time_series_declare_their_paths_and_indexes() {
    use odm::counters::{Counted, Granularity};
    let paths = <shadowed::BookRecs as Counted>::COUNTERS;
    assert_eq!(
        (paths.key, paths.day, paths.total, paths.hours),
        ("b", "day", "count", "hour")
    );
    assert_eq!(paths.granularity, Granularity::Hour);
    let names: Vec<String> = shadowed::BookRecs::indexes()
        .iter()
        .map(|i| i.name())
        .collect();
    assert_eq!(names, vec!["b_1_day_1"]);
    let names: Vec<String> = shadowed::RecEvent::indexes()
        .iter()
        .map(|i| i.name())
        .collect();
    assert_eq!(names, vec!["book_1_at_1"]);
    let series = odm::Catalog::new()
        .with::<shadowed::RecEvent>()
        .time_series("rec_events")
        .expect("declared");
    assert_eq!(
        (series.time, series.meta, series.granularity),
        ("at", Some("book"), Some("minutes"))
    );
}
