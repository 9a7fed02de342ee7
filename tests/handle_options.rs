//! The handle's defaults (`with_read_preference`, `with_read_concern`, `with_write_concern`) and
//! a write's own `write_concern`: each on the caller's commands, on the wire; the ODM's own
//! reads for a write always on the primary, and its own writes and the commit of its
//! transactions with the write's concern.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use denorm::parts::Part;
use denorm::products::{PartSummary, Product};
use odm::bson::Document;
use odm::monitor::SentCommand;
use odm::options::{Acknowledgment, ReadConcern, ReadPreference, WriteConcern};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::TransactionMode;

fn part(n: usize) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("{n:03}-aff-456"),
        name: format!("#{n} grommet"),
        qty: 94,
        product: None,
        product_name: String::new(),
        product_catalog_number: 0,
    }
}

fn product(parts: &[Part]) -> Product {
    Product {
        id: ObjectId::new(),
        name: "left-handed smoke shifter".into(),
        manufacturer: "Acme Corp".into(),
        catalog_number: 1234,
        parts: parts
            .iter()
            .map(|p| PartSummary {
                id: Ref::new(p.id),
                name: String::new(),
            })
            .collect(),
    }
}

fn secondary_preferred() -> ReadPreference {
    ReadPreference::SecondaryPreferred {
        options: Default::default(),
    }
}

/// The mode of the read preference a command carries (`None`: it carries none, the primary).
fn mode(command: &Document) -> Option<String> {
    command
        .get_document("$readPreference")
        .ok()
        .map(|p| p.get_str("mode").unwrap().to_owned())
}

/// The `w` of the write concern a command carries, as text (`None`: it carries none).
fn w(command: &Document) -> Option<String> {
    let concern = command.get_document("writeConcern").ok()?;
    Some(match concern.get("w")? {
        odm::bson::Bson::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// The commands of `log` named `name`, with their documents.
fn named<'a>(log: &'a [SentCommand], name: &'a str) -> impl Iterator<Item = &'a Document> + 'a {
    log.iter()
        .filter(move |c| c.name == name)
        .filter_map(|c| c.command.as_ref())
}

const READS: [&str; 3] = ["find", "aggregate", "count"];

/// Parts and a product copying their names, on the handle of `db`; the log cleared.
async fn catalog(db: &TestDb) -> odm::Result<(Vec<Part>, Product)> {
    let parts: Vec<Part> = (0..3).map(part).collect();
    db.odm().insert_many(&parts).await?;
    let product = product(&parts);
    db.odm().insert_one(&product).await?;
    db.commands().clear();
    Ok((parts, product))
}

#[tokio::test]
async fn a_handles_read_preference_reaches_the_callers_reads_and_none_of_its_own() -> odm::Result<()>
{
    let db = common::db().await?;
    let (parts, _) = catalog(&db).await?;
    let reports = db.odm().clone().with_read_preference(secondary_preferred());

    let found: Vec<Part> = reports.find(Part::qty().eq(94)).await?;
    assert_eq!(found.len(), 3);
    let count = reports.count(Part::qty().eq(94)).await?;
    assert_eq!(count, 3);
    let log = db.commands().take();
    let modes: Vec<Option<String>> = READS
        .iter()
        .flat_map(|name| named(&log, name))
        .map(mode)
        .collect();
    assert_eq!(modes.len(), 2, "{log:?}");
    assert!(
        modes
            .iter()
            .all(|m| m.as_deref() == Some("secondaryPreferred")),
        "{modes:?}"
    );

    // The same handle's writes: a product filled from the parts, a part renamed (cascaded
    // into the product), a part deleted (its reference nullified): every read they feed on
    // goes to the primary.
    reports.insert_one(&product(&parts)).await?;
    reports
        .update_by_id::<Part>(parts[0].id, Part::name().set("#0 washer".to_owned()))
        .await?;
    reports.delete_one(Part::id_field().eq(parts[1].id)).await?;
    let log = db.commands().take();
    let own: Vec<&Document> = READS.iter().flat_map(|name| named(&log, name)).collect();
    assert!(!own.is_empty(), "the writes read nothing: {log:?}");
    for command in own {
        assert!(
            mode(command).is_none_or(|m| m == "primary" || m == "primaryPreferred"),
            "an own read followed the caller's preference: {command}"
        );
    }
    // The preference of a query wins over the handle's.
    let _: Vec<Part> = reports
        .find(Part::qty().eq(94))
        .read_preference(ReadPreference::Primary)
        .await?;
    let find = common::last_command(&db, "find");
    assert_ne!(mode(&find).as_deref(), Some("secondaryPreferred"), "{find}");
    Ok(())
}

#[tokio::test]
async fn a_handles_read_concern_reaches_the_callers_reads_only() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, _) = catalog(&db).await?;
    let majority = db.odm().clone().with_read_concern(ReadConcern::majority());

    let _: Vec<Part> = majority.find(Part::qty().eq(94)).await?;
    let find = common::last_command(&db, "find");
    assert_eq!(
        find.get_document("readConcern")
            .unwrap()
            .get_str("level")
            .unwrap(),
        "majority",
        "{find}"
    );
    db.commands().clear();
    majority.insert_one(&product(&parts)).await?;
    let log = db.commands().take();
    let fill = named(&log, "find").next().expect("the fill's find");
    assert!(fill.get("readConcern").is_none(), "{fill}");
    Ok(())
}

#[tokio::test]
async fn a_handles_write_concern_reaches_every_write_and_the_commit() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, product) = catalog(&db).await?;
    let durable = db
        .odm()
        .clone()
        .with_write_concern(WriteConcern::majority());

    // A cascade without a transaction: the rename and the copy's update, both acknowledged by
    // a majority.
    durable
        .update_by_id::<Part>(parts[0].id, Part::name().set("#0 washer".to_owned()))
        .await?;
    let log = db.commands().take();
    let writes: Vec<(&str, Option<String>)> = log
        .iter()
        .filter(|c| ["update", "findAndModify", "insert", "delete"].contains(&c.name.as_str()))
        .map(|c| (c.name.as_str(), w(c.command.as_ref().unwrap())))
        .collect();
    assert!(writes.len() >= 2, "{writes:?}");
    assert!(
        writes.iter().all(|(_, w)| w.as_deref() == Some("majority")),
        "{writes:?}"
    );
    let stored = common::stored_one(&db, "products", product.id)
        .await
        .expect("stored");
    assert_eq!(
        stored.get_array("parts").unwrap()[0]
            .as_document()
            .unwrap()
            .get_str("name")
            .unwrap(),
        "#0 washer"
    );

    // The same cascade in the ODM's own transaction: its writes carry no concern (the server
    // refuses one inside a transaction), the commit carries the handle's.
    if !durable.supports_transactions().await? {
        return Ok(());
    }
    durable
        .update_by_id::<Part>(parts[0].id, Part::name().set("#0 gasket".to_owned()))
        .transaction(TransactionMode::Always)
        .await?;
    let log = db.commands().take();
    for name in ["update", "findAndModify"] {
        for command in named(&log, name) {
            assert_eq!(w(command), None, "{command}");
        }
    }
    let commit = named(&log, "commitTransaction")
        .last()
        .expect("a commit was sent");
    assert_eq!(w(commit).as_deref(), Some("majority"), "{commit}");
    Ok(())
}

#[tokio::test]
async fn a_writes_own_concern_wins_and_reaches_its_maintenance() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, product) = catalog(&db).await?;
    let one = || {
        WriteConcern::builder()
            .w(Acknowledgment::Nodes(1))
            .journal(true)
            .build()
    };
    let durable = db
        .odm()
        .clone()
        .with_write_concern(WriteConcern::majority());

    durable
        .update_by_id::<Part>(parts[0].id, Part::name().set("#0 washer".to_owned()))
        .write_concern(one())
        .await?;
    let log = db.commands().take();
    let cascade: Vec<&SentCommand> = log
        .iter()
        .filter(|c| c.name == "update" || c.name == "findAndModify")
        .collect();
    assert!(
        cascade
            .iter()
            .any(|c| c.command.as_ref().unwrap().get_str("update").ok() == Some("products")),
        "the copy was not updated: {cascade:?}"
    );
    for c in &cascade {
        let command = c.command.as_ref().unwrap();
        assert_eq!(w(command).as_deref(), Some("1"), "{command}");
        assert!(command
            .get_document("writeConcern")
            .unwrap()
            .get_bool("j")
            .unwrap());
    }

    // Every write builder takes one.
    let extra = part(9);
    durable.insert_one(&extra).write_concern(one()).await?;
    assert_eq!(
        w(&common::last_command(&db, "insert")).as_deref(),
        Some("1")
    );
    durable
        .insert_many([&part(10), &part(11)])
        .write_concern(one())
        .await?;
    assert_eq!(
        w(&common::last_command(&db, "insert")).as_deref(),
        Some("1")
    );
    let mut renamed = extra.clone();
    renamed.name = "#9 bolt".into();
    durable.replace_one(&renamed).write_concern(one()).await?;
    assert_eq!(
        w(&common::last_command(&db, "update")).as_deref(),
        Some("1")
    );
    durable
        .find_one_and_update(Part::id_field().eq(extra.id), Part::qty().inc(1))
        .write_concern(one())
        .await?;
    assert_eq!(
        w(&common::last_command(&db, "findAndModify")).as_deref(),
        Some("1")
    );
    durable
        .delete_one(Product::id_field().eq(product.id))
        .write_concern(one())
        .await?;
    // Its delete rule (the parts' reference nullified) runs in a transaction where there are
    // transactions: the commit carries the concern then.
    let log = db.commands().take();
    let acknowledged = named(&log, "commitTransaction")
        .last()
        .or_else(|| named(&log, "delete").last())
        .expect("a delete was sent");
    assert_eq!(w(acknowledged).as_deref(), Some("1"), "{acknowledged}");
    // Without one, the handle's again.
    durable
        .update_by_id::<Part>(extra.id, Part::qty().inc(1))
        .await?;
    assert_eq!(
        w(&common::last_command(&db, "update")).as_deref(),
        Some("majority")
    );
    let stored = common::stored_one(&db, "parts", extra.id)
        .await
        .expect("stored");
    assert_eq!(stored.get_str("name").unwrap(), "#9 bolt");
    assert_eq!(stored.get_i64("qty").unwrap(), 96);
    assert!(common::stored_one(&db, "products", product.id)
        .await
        .is_none());
    Ok(())
}

/// A model whose writes a majority acknowledges, whatever the handle says.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "ledger_authors", write_concern = "majority")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

/// A model whose queries prefer a secondary, copying its author's name.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "ledger_posts", read_preference = "secondaryPreferred")]
struct Post {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade")]
    author: Ref<Author>,
    #[denormalize(from = "Author", via = "author", fields = "name")]
    #[serde(default)]
    author_name: String,
}

#[tokio::test]
async fn a_models_defaults_sit_between_the_handles_and_the_operations() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Author {
        id: 1,
        name: "Ann".into(),
    })
    .await?;
    let post = Post {
        id: 1,
        author: Ref::new(1),
        author_name: String::new(),
    };
    db.commands().clear();
    odm.insert_one(&post).await?;
    let log = db.commands().take();
    // The fill reads the author on the primary; the insert itself has no model concern.
    let fill = named(&log, "find").next().expect("the fill's find");
    assert!(
        mode(fill).is_none_or(|m| m != "secondaryPreferred"),
        "{fill}"
    );
    assert_eq!(w(named(&log, "insert").next().unwrap()), None);

    // The model's preference on its queries, over the handle's; the query's over both.
    let nearest = odm.clone().with_read_preference(ReadPreference::Nearest {
        options: Default::default(),
    });
    let found: Vec<Post> = nearest.find(Post::id_field().eq(1)).await?;
    assert_eq!(found[0].author_name, "Ann");
    let find = common::last_command(&db, "find");
    assert_eq!(mode(&find).as_deref(), Some("secondaryPreferred"), "{find}");
    let _: Vec<Author> = nearest.find(Author::id_field().eq(1)).await?;
    let find = common::last_command(&db, "find");
    assert_eq!(mode(&find).as_deref(), Some("nearest"), "{find}");
    let _: Vec<Post> = nearest
        .find(Post::id_field().eq(1))
        .read_preference(ReadPreference::Primary)
        .await?;
    let find = common::last_command(&db, "find");
    assert_ne!(mode(&find).as_deref(), Some("secondaryPreferred"), "{find}");

    // The author's concern on its rename and on the cascade into the posts it feeds.
    db.commands().clear();
    odm.update_by_id::<Author>(1, Author::name().set("Anne".to_owned()))
        .await?;
    let log = db.commands().take();
    let written: Vec<(String, Option<String>)> = log
        .iter()
        .filter(|c| c.name == "update" || c.name == "findAndModify")
        .map(|c| {
            let command = c.command.as_ref().unwrap();
            let coll = command
                .get_str(c.name.as_str())
                .unwrap_or_default()
                .to_owned();
            (coll, w(command))
        })
        .collect();
    assert!(
        written.iter().any(|(coll, _)| coll == "ledger_posts"),
        "{written:?}"
    );
    assert!(
        written
            .iter()
            .all(|(_, w)| w.as_deref() == Some("majority")),
        "{written:?}"
    );
    let stored = common::stored_one(&db, "ledger_posts", 1)
        .await
        .expect("stored");
    assert_eq!(stored.get_str("author_name").unwrap(), "Anne");
    // A write's own concern wins over its model's.
    odm.update_by_id::<Author>(1, Author::name().set("Ann".to_owned()))
        .write_concern(WriteConcern::builder().w(Acknowledgment::Nodes(1)).build())
        .await?;
    let log = db.commands().take();
    let rename = log
        .iter()
        .find(|c| c.name == "update" || c.name == "findAndModify")
        .and_then(|c| c.command.as_ref())
        .unwrap();
    assert_eq!(w(rename).as_deref(), Some("1"), "{rename}");
    Ok(())
}

/// A kind of an enum of kinds that declares the write concern of its collection.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Entry")]
struct Deposit {
    #[serde(rename = "_id")]
    id: i32,
    amount: i64,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "ledger_entries", write_concern = "majority")]
#[serde(tag = "type")]
enum Entry {
    Deposit(Deposit),
}

#[tokio::test]
async fn a_kind_writes_with_its_enums_concern() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&Deposit { id: 1, amount: 10 }).await?;
    assert_eq!(
        w(&common::last_command(&db, "insert")).as_deref(),
        Some("majority")
    );
    db.odm()
        .update_by_id::<Deposit>(1, Deposit::amount().inc(5))
        .await?;
    assert_eq!(
        w(&common::last_command(&db, "update")).as_deref(),
        Some("majority")
    );
    let stored = common::stored_one(&db, "ledger_entries", 1)
        .await
        .expect("stored");
    assert_eq!(stored.get_i64("amount").unwrap(), 15);
    Ok(())
}
