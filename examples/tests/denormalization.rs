//! The tests shown in the guide's "Denormalization" and "Consistency" chapters: all of the
//! "one" side embedded in the "squillions" side, the workshop's author name cached in books,
//! concurrent renames that leave no copy behind, the commands of an `update_many` that
//! cascades, and the sweep that checks copies and two-way references together. Each test gets
//! a database of its own.

use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::TransactionMode;

// ANCHOR: all_of_the_one
/// Everything the application knows about a host, copied into each message: there is no
/// `hosts` collection, so nothing to keep up to date.
#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct HostInfo {
    ipaddr: String,
    hostname: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "logmsg", index(keys = "host.ipaddr, -time"))]
struct LogEntry {
    #[serde(rename = "_id")]
    id: ObjectId,
    time: DateTime,
    message: String,
    #[embed]
    host: HostInfo,
}
// ANCHOR_END: all_of_the_one

// ANCHOR: cached_author
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    first_name: String,
    last_name: String,
}

/// The workshop's "cache the author name in an embedded document": the author's id and name.
#[derive(Embed, Serialize, Deserialize, Debug)]
struct AuthorName {
    id: Ref<Author>,
    first_name: String,
    last_name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    /// One summary, not an array: copied from the author on insert and on every rename.
    #[denormalize(from = "Author", fields = "first_name, last_name")]
    author: AuthorName,
}
// ANCHOR_END: cached_author

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    qty: i64,
}

#[derive(Embed, Serialize, Deserialize, Debug)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[denormalize(from = "Part", fields = "name", max = 200)]
    parts: Vec<PartSummary>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "people")]
struct Person {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[reference(many, max = 1000, inverse = "owner", on_delete = "pull")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "tasks")]
struct Task {
    #[serde(rename = "_id")]
    id: ObjectId,
    description: String,
    #[parent(inverse = "tasks")]
    owner: Ref<Person>,
}

fn part(name: &str) -> Part {
    Part {
        id: ObjectId::new(),
        name: name.into(),
        qty: 10,
    }
}

fn product(name: &str, parts: &[&Part]) -> Product {
    Product {
        id: ObjectId::new(),
        name: name.into(),
        parts: parts
            .iter()
            .map(|p| PartSummary {
                id: Ref::new(p.id),
                name: String::new(),
            })
            .collect(),
    }
}

/// The names each stored product lists, read with the driver.
async fn listed_names(db: &TestDb) -> odm::Result<Vec<Vec<String>>> {
    let mut out = Vec::new();
    let mut cursor = db
        .raw()
        .collection::<Document>("products")
        .find(doc! {})
        .sort(doc! { "name": 1 })
        .await?;
    while cursor.advance().await? {
        let product = cursor.deserialize_current()?;
        let names = product
            .get_array("parts")
            .expect("an array")
            .iter()
            .filter_map(|s| s.as_document()?.get_str("name").ok())
            .map(str::to_owned)
            .collect();
        out.push(names);
    }
    Ok(out)
}

// ANCHOR: all_of_the_one_test
#[tokio::test]
async fn all_of_the_one_side_in_each_message() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm();
    let goofy = HostInfo {
        ipaddr: "127.66.66.66".into(),
        hostname: "goofy.example.com".into(),
    };
    odm.insert_one(&LogEntry {
        id: ObjectId::new(),
        time: DateTime::now(),
        message: "cpu is on fire!".into(),
        host: goofy.clone(),
    })
    .await?;
    db.commands().clear();

    // The messages of a host, by address: one find, on the index `host.ipaddr_1_time_-1`.
    let on_fire = odm
        .find(LogEntry::host().ipaddr().eq("127.66.66.66"))
        .sort(LogEntry::time().desc())
        .await?;

    assert_eq!(on_fire[0].host.hostname, "goofy.example.com");
    assert_eq!(db.commands().names(), ["find"]);
    Ok(())
}
// ANCHOR_END: all_of_the_one_test

// ANCHOR: cached_author_test
#[tokio::test]
async fn the_author_name_is_cached_in_each_book() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm();
    odm.insert_one(&Author {
        id: 1,
        first_name: "F. Scott".into(),
        last_name: "Fitzgerald".into(),
    })
    .await?;
    // The book names its author by id; the ODM copies the name in (one `find` on authors).
    odm.insert_one(&Book {
        id: 1,
        title: "The Great Gatsby".into(),
        author: AuthorName {
            id: Ref::new(1),
            first_name: String::new(),
            last_name: String::new(),
        },
    })
    .await?;
    db.commands().clear();

    // "Queries are now one step": `db.books.find({"author.first_name": ...})`.
    let by_first_name = odm.find(Book::author().first_name().eq("F. Scott")).await?;
    assert_eq!(by_first_name[0].author.last_name, "Fitzgerald");
    assert_eq!(db.commands().names(), ["find"]);

    // Renaming the author rewrites the name in every book of the author.
    odm.update_by_id::<Author>(1, Author::first_name().set("Francis Scott"))
        .await?;
    let gatsby = odm.get::<Book>(1).await?.expect("inserted");
    assert_eq!(gatsby.author.first_name, "Francis Scott");
    Ok(())
}
// ANCHOR_END: cached_author_test

// ANCHOR: concurrent
/// Fifty renames of one part at the same time, each cascading into 20 products: whatever
/// order they land in, every copy ends equal to the part's final name, with or without a
/// transaction.
#[tokio::test]
async fn concurrent_renames_leave_no_copy_behind() -> odm::Result<()> {
    for mode in [TransactionMode::Never, TransactionMode::Auto] {
        let db = TestDb::new().await?;
        let grommet = part("#4 grommet");
        db.odm().insert_one(&grommet).await?;
        let products: Vec<Product> = (0..20)
            .map(|i| product(&format!("smoke shifter {i}"), &[&grommet]))
            .collect();
        db.odm().insert_many(&products).await?;

        let mut renames = tokio::task::JoinSet::new();
        for i in 0..50 {
            let odm = db.odm().clone();
            renames.spawn(async move {
                odm.update_by_id::<Part>(grommet.id, Part::name().set(format!("grommet {i}")))
                    .transaction(mode)
                    .await
            });
        }
        while let Some(done) = renames.join_next().await {
            done.expect("the task ran")?;
        }

        let last = db.odm().get::<Part>(grommet.id).await?.expect("inserted");
        for names in listed_names(&db).await? {
            assert_eq!(names, std::slice::from_ref(&last.name), "{mode:?}");
        }
        assert!(db.odm().verify_copies().await?.is_consistent());
    }
    Ok(())
}
// ANCHOR_END: concurrent

// ANCHOR: update_many
#[tokio::test]
async fn an_update_of_many_sources_cascades_once_per_new_value() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let (fan, blade, switch) = (part("fan"), part("blade"), part("switch"));
    db.odm().insert_many([&fan, &blade, &switch]).await?;
    db.odm()
        .insert_many([
            &product("left-handed smoke shifter", &[&fan, &switch]),
            &product("right-handed smoke shifter", &[&blade, &switch]),
        ])
        .await?;
    db.commands().clear();

    // Two parts get the same new name: one cascade update serves both.
    db.odm()
        .update_many(
            Part::id().is_in([fan.id, blade.id]),
            Part::name().set("fan blade assembly"),
        )
        .await?;

    assert_eq!(
        db.commands().names(),
        [
            "find",   // the ids of the parts the filter matches
            "update", // the parts, by those ids
            "find",   // their new names
            "update", // the products, one command per copy and distinct new value
            "find",   // the names re-read: unchanged, so the copies hold them
        ]
    );
    assert_eq!(
        listed_names(&db).await?,
        [
            ["fan blade assembly", "switch"],
            ["fan blade assembly", "switch"]
        ]
    );
    Ok(())
}
// ANCHOR_END: update_many

// ANCHOR: sweep
#[tokio::test]
async fn the_sweep_checks_copies_and_two_way_references() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm();
    let fan = part("fan blade assembly");
    odm.insert_one(&fan).await?;
    odm.insert_one(&product("left-handed smoke shifter", &[&fan]))
        .await?;
    let kate = Person {
        id: ObjectId::new(),
        name: "Kate Monster".into(),
        tasks: Vec::new(),
    };
    odm.insert_one(&kate).await?;
    let lesson = Task {
        id: ObjectId::new(),
        description: "Write lesson plan".into(),
        owner: Ref::new(kate.id),
    };
    odm.insert_one(&lesson).await?;
    odm.update_by_id::<Person>(kate.id, Person::tasks().push(Ref::new(lesson.id)))
        .await?;

    // Another program breaks a copy, and one side of the two-way reference.
    db.raw()
        .collection::<Document>("products")
        .update_many(doc! {}, doc! { "$set": { "parts.0.name": "fan" } })
        .await?;
    db.raw()
        .collection::<Document>("people")
        .update_many(doc! {}, doc! { "$set": { "tasks": [] } })
        .await?;

    let found = odm.verify_copies().await?;
    assert_eq!(found.issues.len(), 1, "{found}");
    assert!(!found.is_consistent());

    let repaired = odm.verify_copies().repair(true).await?;
    assert_eq!(repaired.repairs, 2, "{repaired}");
    assert!(odm.verify_copies().await?.is_consistent());
    Ok(())
}
// ANCHOR_END: sweep
