//! `$jsonSchema` validators generated from the models: the schema of representative models,
//! what `sync_validators` sends and stores (read back with `listCollections`), a document the
//! server refuses, and a differing validator reported, not replaced.

mod common;

use common::sent;
use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::validator::{BsonSchema, Schema, Validated, ValidatorOutcome};

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

/// Stored as strings; without a `BsonSchema` impl, its field is unconstrained.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Format {
    Hardback,
    Paperback,
}

// ANCHOR: model
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    subtitle: Option<String>,
    pages: i32,
    price: f64,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    tags: Vec<String>,
    format: Format,
    #[embed]
    publisher: Option<Publisher>,
    #[embed(max = 2)]
    reviews: Vec<Review>,
    #[reference(many, max = 3)]
    authors: Vec<Ref<Author>>,
    published: odm::bson::DateTime,
    #[serde(skip)]
    cached: u8,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Publisher {
    name: String,
    #[serde(rename = "town")]
    city: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Review {
    user: String,
    stars: u8,
}
// ANCHOR_END: model

/// Several kinds in one collection.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "items", common = "name")]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item {
    Tool(Tool),
    Part(Part),
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Item")]
struct Tool {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    weight: f64,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Item")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[serde(rename = "qty")]
    quantity: i64,
}

/// Counter documents are built by upserts: not among the validators `sync_validators` installs.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "visits", counters(key = "book", day = "day"))]
struct Visits {
    #[serde(rename = "_id")]
    id: odm::bson::oid::ObjectId,
    book: i64,
    day: odm::bson::DateTime,
    total: i64,
    hour: odm::counters::Hours,
}

// ANCHOR: own_schema
/// Stored as its variant's name; its schema, written by hand, lists them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Status {
    Open,
    Closed,
}

impl BsonSchema for Status {
    const SCHEMA: Schema = Schema::Custom(|| doc! {"enum": ["Open", "Closed"]});
}

/// Stored as a string, which is all its schema says.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Label(String);

impl BsonSchema for Label {
    const SCHEMA: Schema = Schema::Types(&["string"]);
}
// ANCHOR_END: own_schema

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "threads")]
struct Thread {
    #[serde(rename = "_id")]
    id: i32,
    status: Status,
    #[embed(max = 20)]
    comments: Vec<Comment>,
}

/// Holds comments like itself: inside itself, a comment is left unconstrained.
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Comment {
    label: Label,
    #[embed(max = 5)]
    replies: Vec<Comment>,
}

/// A model referring to itself: its references are its own ids.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "topics")]
struct Topic {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "nullify")]
    broader: Option<Ref<Topic>>,
}

fn book() -> Book {
    Book {
        id: 1,
        title: "Kim".into(),
        subtitle: None,
        pages: 368,
        price: 9.5,
        tags: vec!["india".into()],
        format: Format::Paperback,
        publisher: Some(Publisher {
            name: "Macmillan".into(),
            city: "London".into(),
        }),
        reviews: vec![],
        authors: vec![Ref::new(1)],
        published: odm::bson::DateTime::from_millis(0),
        cached: 0,
    }
}

async fn stored_validator(db: &TestDb, collection: &str) -> Option<Document> {
    let reply = db
        .raw()
        .run_command(doc! {"listCollections": 1, "filter": {"name": collection}})
        .await
        .expect("listCollections");
    let batch = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch");
    batch
        .first()
        .and_then(Bson::as_document)
        .and_then(|c| c.get_document("options").ok())
        .and_then(|o| o.get_document("validator").ok())
        .cloned()
}

#[test]
fn the_schema_of_a_model_follows_its_types() {
    let int = || doc! {"bsonType": ["int", "long"]};
    let expected = doc! {
        "bsonType": "object",
        "required": ["_id", "title", "pages", "price", "format", "reviews", "authors", "published"],
        "properties": {
            "_id": int(),
            "title": {"bsonType": "string"},
            "subtitle": {"bsonType": ["string", "null"]},
            "pages": int(),
            "price": {"bsonType": ["double", "int", "long"]},
            "tags": {"bsonType": "array", "items": {"bsonType": "string"}},
            "publisher": {"anyOf": [{"bsonType": "null"}, {
                "bsonType": "object",
                "required": ["name", "town"],
                "properties": {"name": {"bsonType": "string"}, "town": {"bsonType": "string"}},
            }]},
            "reviews": {"bsonType": "array", "items": {
                "bsonType": "object",
                "required": ["user", "stars"],
                "properties": {"user": {"bsonType": "string"}, "stars": int()},
            }, "maxItems": 2i64},
            "authors": {"bsonType": "array", "items": int(), "maxItems": 3i64},
            "published": {"bsonType": "date"},
        },
    };
    assert_eq!(Book::json_schema(), expected);
    assert_eq!(Book::validator(), doc! {"$jsonSchema": expected});
}

#[test]
fn hand_written_schemas_and_a_type_holding_itself() {
    let expected = doc! {
        "bsonType": "object",
        "required": ["_id", "status", "comments"],
        "properties": {
            "_id": {"bsonType": ["int", "long"]},
            "status": {"enum": ["Open", "Closed"]},
            "comments": {"bsonType": "array", "items": {
                "bsonType": "object",
                "required": ["label", "replies"],
                "properties": {
                    "label": {"bsonType": "string"},
                    "replies": {"bsonType": "array", "items": {}, "maxItems": 5i64},
                },
            }, "maxItems": 20i64},
        },
    };
    assert_eq!(Thread::json_schema(), expected);
    // A reference to the model itself is its id, as any reference.
    assert_eq!(
        Topic::json_schema().get_document("properties").unwrap(),
        &doc! {"_id": {"bsonType": ["int", "long"]}, "broader": {"bsonType": ["int", "long", "null"]}}
    );
    assert_eq!(Status::bson_schema(), doc! {"enum": ["Open", "Closed"]});
}

#[tokio::test]
async fn a_hand_written_schema_is_installed_and_enforced() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_validators_of::<Thread>().await?;
    assert_eq!(
        stored_validator(&db, "threads").await,
        Some(Thread::validator())
    );
    let reply = |text: &str| Comment {
        label: Label(text.into()),
        replies: vec![],
    };
    let thread = Thread {
        id: 1,
        status: Status::Open,
        comments: vec![Comment {
            label: Label("first".into()),
            replies: vec![reply("second")],
        }],
    };
    db.odm().insert_one(&thread).await?;
    // A status its schema does not list, and a label that is not a string, are refused.
    let threads = db.raw().collection::<Document>("threads");
    for bad in [
        doc! {"_id": 2, "status": "Pending", "comments": []},
        doc! {"_id": 3, "status": "Open", "comments": [{"label": 7, "replies": []}]},
    ] {
        let err = threads.insert_one(bad).await.expect_err("refused");
        assert!(
            err.to_string().contains("Document failed validation"),
            "{err}"
        );
    }
    // The replies of a reply are not checked (the schema does not recurse), their number is.
    threads
        .insert_one(doc! {"_id": 4, "status": "Closed", "comments": [
            {"label": "a", "replies": [{"label": 5}]}
        ]})
        .await
        .expect("accepted");
    let stored: Vec<i32> = threads
        .find(doc! {})
        .await
        .expect("find")
        .try_collect::<Vec<_>>()
        .await
        .expect("documents")
        .iter()
        .map(|d| d.get_i32("_id").expect("_id"))
        .collect();
    assert_eq!(stored, [1, 4]);
    Ok(())
}

#[test]
fn the_schema_of_kinds_is_one_of_them_by_discriminator() {
    let schema = Item::json_schema();
    assert_eq!(
        schema.get_document("properties").unwrap(),
        &doc! {"type": {"enum": ["tool", "part"]}}
    );
    let branches = schema.get_array("oneOf").unwrap();
    assert_eq!(branches.len(), 2);
    let part = branches[1].as_document().unwrap();
    assert_eq!(
        part.get_array("required").unwrap(),
        &vec![
            Bson::from("type"),
            "_id".into(),
            "name".into(),
            "qty".into()
        ]
    );
    assert_eq!(
        part.get_document("properties")
            .unwrap()
            .get_document("type")
            .unwrap(),
        &doc! {"enum": ["part"]}
    );
    // A kind's validator is its collection's: the enum's.
    assert_eq!(Part::validator(), Item::validator());
}

#[tokio::test]
async fn sync_creates_the_collection_with_its_validator_then_leaves_it() -> odm::Result<()> {
    let db = common::db().await?;
    db.commands().clear();
    let report = db.odm().sync_validators_of::<Book>().await?;
    assert_eq!(report.outcome("books"), Some(&ValidatorOutcome::Created));
    assert_eq!(sent(&db), ["listCollections", "create"]);
    assert_eq!(
        stored_validator(&db, "books").await,
        Some(Book::validator())
    );
    let again = db.odm().sync_validators_of::<Book>().await?;
    assert!(again.is_in_sync());
    assert_eq!(sent(&db), ["listCollections"]);
    Ok(())
}

#[tokio::test]
async fn a_collection_without_a_validator_gets_one_by_coll_mod() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&book()).await?;
    db.commands().clear();
    let report = db.odm().sync_validators_of::<Book>().await?;
    assert_eq!(report.outcome("books"), Some(&ValidatorOutcome::Installed));
    assert_eq!(sent(&db), ["listCollections", "collMod"]);
    assert_eq!(
        stored_validator(&db, "books").await,
        Some(Book::validator())
    );
    Ok(())
}

#[tokio::test]
async fn a_differing_validator_is_reported_and_replaced_only_when_asked() -> odm::Result<()> {
    let db = common::db().await?;
    let theirs = doc! {"$jsonSchema": {"bsonType": "object", "required": ["title"], "properties": {"title": {"bsonType": "int"}}}};
    db.raw()
        .run_command(doc! {"create": "books", "validator": theirs.clone()})
        .await
        .expect("create");
    db.commands().clear();
    // ANCHOR: differs
    let report = db.odm().sync_validators_of::<Book>().await?;
    println!("{report}");
    let Some(ValidatorOutcome::Differs {
        differences,
        replaced,
    }) = report.outcome("books")
    else {
        panic!("not reported as differing: {report}");
    };
    assert!(!replaced);
    // ANCHOR_END: differs
    assert!(
        differences.contains(
            &"$jsonSchema.properties.title.bsonType: declared \"string\", found \"int\"".to_owned()
        ),
        "{differences:?}"
    );
    assert_eq!(sent(&db), ["listCollections"]);
    assert_eq!(stored_validator(&db, "books").await, Some(theirs));
    let report = db
        .odm()
        .sync_validators_of::<Book>()
        .replace_differing(true)
        .await?;
    assert!(matches!(
        report.outcome("books"),
        Some(ValidatorOutcome::Differs { replaced: true, .. })
    ));
    assert_eq!(sent(&db), ["listCollections", "collMod"]);
    assert_eq!(
        stored_validator(&db, "books").await,
        Some(Book::validator())
    );
    Ok(())
}

#[tokio::test]
async fn sync_validators_covers_every_model_once_per_collection() -> odm::Result<()> {
    let db = common::db().await?;
    let report = db.odm().sync_validators().await?;
    let collections: Vec<&str> = report
        .collections
        .iter()
        .map(|c| c.collection.as_str())
        .collect();
    // Not `visits`, whose documents are built by upserts.
    assert_eq!(
        collections,
        ["authors", "books", "items", "threads", "topics"]
    );
    assert_eq!(stored_validator(&db, "visits").await, None);
    assert_eq!(
        stored_validator(&db, "items").await,
        Some(Item::validator())
    );
    Ok(())
}

#[tokio::test]
async fn a_document_the_validator_refuses_is_a_typed_error() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_validators().await?;
    db.odm().insert_one(&book()).await?;
    let err = db
        .odm()
        .update_by_id::<Book>(1, Update::raw(doc! {"$set": {"publisher.town": 7}}))
        .await
        .expect_err("refused");
    let odm::Error::DocumentInvalid {
        collection,
        id,
        path,
        reason,
        ..
    } = &err
    else {
        panic!("not DocumentInvalid: {err:?}");
    };
    assert_eq!(
        (collection.as_str(), id.as_str(), path.as_str()),
        ("books", "{ _id: 1 }", "publisher.town"),
        "{err}"
    );
    assert!(reason.contains("bsonType"), "{reason}");
    let stored = common::stored_one(&db, "books", 1i64).await.unwrap();
    assert_eq!(
        stored
            .get_document("publisher")
            .unwrap()
            .get_str("town")
            .unwrap(),
        "London"
    );
    // Kinds: a discriminator that names no kind is refused.
    let raw = db
        .raw()
        .collection::<Document>("items")
        .insert_one(doc! {"_id": 9, "type": "gadget", "name": "x"})
        .await;
    assert!(raw
        .expect_err("refused")
        .to_string()
        .contains("Document failed validation"));
    db.odm()
        .insert_one(&Tool {
            id: 1,
            name: "saw".into(),
            weight: 1.5,
        })
        .await?;
    let err = db
        .odm()
        .update_by_id::<Tool>(1, Update::raw(doc! {"$set": {"type": "gadget"}}))
        .await
        .expect_err("refused");
    assert!(matches!(err, odm::Error::DocumentInvalid { .. }), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn a_moderate_validator_lets_documents_stored_before_it_be_updated() -> odm::Result<()> {
    use odm::validator::ValidationLevel;
    let db = common::db().await?;
    let books = db.raw().collection::<Document>("books");
    books.insert_one(doc! {"_id": 5, "title": 1}).await.unwrap();
    let report = db
        .odm()
        .sync_validators_of::<Book>()
        .validation_level(ValidationLevel::Moderate)
        .await?;
    assert_eq!(report.outcome("books"), Some(&ValidatorOutcome::Installed));
    let listed = db
        .raw()
        .run_command(doc! {"listCollections": 1, "filter": {"name": "books"}})
        .await
        .unwrap();
    let options = listed
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("options")
        .unwrap()
        .clone();
    assert_eq!(options.get_str("validationLevel").unwrap(), "moderate");
    // The document stored before the validator can still be updated; a new one is checked.
    books
        .update_one(doc! {"_id": 5}, doc! {"$set": {"note": "old"}})
        .await
        .unwrap();
    assert!(books.insert_one(doc! {"_id": 6, "title": 1}).await.is_err());
    // The level is compared only when one is set.
    assert!(db.odm().sync_validators_of::<Book>().await?.is_in_sync());
    let strict = db
        .odm()
        .sync_validators_of::<Book>()
        .validation_level(ValidationLevel::Strict)
        .await?;
    let Some(ValidatorOutcome::Differs {
        differences,
        replaced: false,
    }) = strict.outcome("books")
    else {
        panic!("{strict}");
    };
    assert_eq!(
        differences,
        &["validationLevel: declared strict, found moderate"]
    );
    Ok(())
}

/// Types holding each other: each is described once, and unconstrained inside itself.
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Question {
    text: String,
    #[embed(max = 3)]
    answers: Vec<Answer>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Answer {
    text: String,
    #[embed(max = 3)]
    follow_ups: Vec<Question>,
}

#[test]
fn types_holding_each_other_are_described_once_each() {
    let answer = doc! {
        "bsonType": "object",
        "required": ["text", "follow_ups"],
        "properties": {
            "text": {"bsonType": "string"},
            "follow_ups": {"bsonType": "array", "items": {}, "maxItems": 3i64},
        },
    };
    assert_eq!(
        Question::bson_schema(),
        doc! {
            "bsonType": "object",
            "required": ["text", "answers"],
            "properties": {
                "text": {"bsonType": "string"},
                "answers": {"bsonType": "array", "items": answer, "maxItems": 3i64},
            },
        }
    );
}
