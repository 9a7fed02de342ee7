//! Shard keys (`#[odm(shard_key(...))]`): the key's index and `shardCollection` from
//! `sync_indexes`, the key in the filters of the ODM's writes of loaded documents, upserts
//! refused without it, a key the ODM computes on insert, and the routing report. Against the
//! development server (a replica set) nothing is sharded: the commands are read from the
//! command log. With `MONGODB_URI` naming a `mongos`, the same tests check the sharded side
//! (and with `ODM_TEST_SHARDED=1` they require it: see [`common::is_mongos`]).

mod common;

use common::{filter_in, is_mongos, listed_indexes, sent, sent_filter, stored_one};
use odm::bson::{doc, spec::BinarySubtype, Binary, Bson, DateTime, Document};
use odm::prelude::*;
use odm::shard::{shard_collection_command, RouteVerdict, RoutingReport, ShardSync};
use odm::testing::TestDb;
use odm::Error;

#[path = "../examples/catalog_shards/models.rs"]
mod models;

use models::{Event, Host, Image, LogMsg, Part, PartSummary, Product, Source};

/// A key that updates may change (`mutable`): its path is writable. (A hashed key is
/// declared `hashed = "queue"`: see `shard_hashed.rs`.)
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "tickets", shard_key(keys = "queue", mutable))]
struct Ticket {
    #[serde(rename = "_id")]
    id: i32,
    queue: String,
}

// ANCHOR: renamed
/// A key inside an embedded document whose fields serde renames: `keys` names the Rust
/// fields, the key's index and the filters the stored path (`origin.hostName`).
#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Origin {
    host_name: String,
    user_agent: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "visits", shard_key(keys = "origin.host_name"))]
struct Visit {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    origin: Origin,
    page: String,
}
// ANCHOR_END: renamed

/// A user's reviews of one month, in buckets sharded by the bucket's key: each add's upsert
/// names the user, so it is routed.
#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct Review {
    id: ObjectId,
    rating: i32,
    at: DateTime,
}

// ANCHOR: bucket
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "review_buckets",
    bucket(
        key = "user",
        period = "month",
        every = "month",
        items = "reviews",
        time = "at"
    ),
    shard_key(keys = "user")
)]
struct ReviewBucket {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    month: DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}
// ANCHOR_END: bucket

/// Counters of a book's recommendations per day, sharded by the book: each event's upsert
/// names it. (Sharded by a field the upsert cannot name, a bucket or counter model does not
/// compile: see `ui/shard/bucket-sharded-outside-its-upsert.rs`.)
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "book_recs",
    counters(key = "book", day = "day"),
    shard_key(keys = "book")
)]
struct BookRecs {
    #[serde(rename = "_id")]
    id: ObjectId,
    book: i32,
    day: DateTime,
    total: i64,
    hour: odm::counters::Hours,
}

/// The string at `outer.inner` of a stored document.
fn string_at<'a>(doc: &'a Document, path: &str) -> &'a str {
    let (outer, inner) = path.split_once('.').expect("a dotted path");
    doc.get_document(outer).unwrap().get_str(inner).unwrap()
}

/// Deletes the loaded `doc`, checking the filter the delete sent.
async fn delete_sends<T: odm::Model + Serialize>(db: &TestDb, doc: &T, filter: Document) {
    db.commands().clear();
    assert_eq!(db.odm().delete_document(doc).await.unwrap(), 1);
    assert_eq!(sent_filter(db, "delete", T::COLLECTION), filter);
}

fn product(id: i32, category: &str, number: i64, parts: &[&Part]) -> Product {
    Product {
        id,
        category: category.to_owned(),
        name: format!("product {id}"),
        catalog_number: number,
        parts: parts
            .iter()
            .map(|p| PartSummary {
                id: Ref::new(p.id),
                name: String::new(),
            })
            .collect(),
    }
}

#[tokio::test]
async fn sync_creates_the_key_index_and_shards_only_on_a_mongos() {
    let db = common::db().await.unwrap();
    let mongos = is_mongos(&db).await;
    db.commands().clear();
    let report = db.odm().sync_indexes().await.unwrap();
    let names = sent(&db);
    let sharded: Vec<&str> = report
        .sharding
        .iter()
        .map(|s| match s {
            ShardSync::Sharded { collection, .. } | ShardSync::NotSharded { collection, .. } => {
                collection.as_str()
            }
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        sharded,
        [
            "book_recs",
            "chores",
            "events",
            "film_details",
            "films",
            "gadgets",
            "hosts",
            "images",
            "logmsg",
            "products",
            "regions",
            "review_buckets",
            "tickets",
            "visits"
        ]
    );
    // The key's index first, whatever the server.
    let index_names = |docs: Vec<Document>| -> Vec<String> {
        docs.iter()
            .map(|d| d.get_str("name").unwrap().to_owned())
            .collect()
    };
    assert!(index_names(listed_indexes(&db, "logmsg").await).contains(&"host_1_time_1".to_owned()));
    assert!(index_names(listed_indexes(&db, "tickets").await).contains(&"queue_1".to_owned()));
    assert!(
        index_names(listed_indexes(&db, "events").await).contains(&"source.host_1_at_1".to_owned())
    );
    assert!(index_names(listed_indexes(&db, "images").await).contains(&"segment_1".to_owned()));
    assert!(
        index_names(listed_indexes(&db, "visits").await).contains(&"origin.hostName_1".to_owned())
    );
    // The key's own index is created, though the unique `category_1_catalog_number_1` starts
    // with the key too: the key is declared as an index of its own (shardCollection wants one).
    assert!(index_names(listed_indexes(&db, "products").await).contains(&"category_1".to_owned()));
    let shard_commands = names
        .iter()
        .filter(|n| *n == "shardCollection" || *n == "enableSharding")
        .count();
    if mongos {
        assert!(report
            .sharding
            .iter()
            .all(|s| matches!(s, ShardSync::Sharded { .. })));
        // `enableSharding` once, then one `shardCollection` per collection.
        assert_eq!(shard_commands, 1 + sharded.len(), "{names:?}");
    } else {
        for s in &report.sharding {
            let ShardSync::NotSharded { reason, .. } = s else {
                panic!("sharded on a server that is not a mongos: {s}");
            };
            assert!(reason.contains("not a mongos"), "{reason}");
        }
        assert_eq!(shard_commands, 0, "{names:?}");
        assert_eq!(
            names.iter().filter(|n| *n == "hello").count(),
            1,
            "{names:?}"
        );
        assert!(
            report
                .to_string()
                .contains("products: not sharded (key { \"category\": 1 })"),
            "{report}"
        );
    }
}

#[tokio::test]
async fn the_shard_collection_command_names_the_declared_key() {
    let key = <Product as odm::Model>::entry().shard_key.unwrap();
    assert_eq!(
        shard_collection_command("shop", "products", &key),
        doc! { "shardCollection": "shop.products", "key": { "category": 1 } }
    );
    let key = <LogMsg as odm::Model>::entry().shard_key.unwrap();
    assert_eq!(
        shard_collection_command("ops", "logmsg", &key),
        doc! { "shardCollection": "ops.logmsg", "key": { "host": 1, "time": 1 } }
    );
    let key = <Host as odm::Model>::entry().shard_key.unwrap();
    assert_eq!(key.key_document(), doc! { "_id": 1 });
    assert!(<Part as odm::Model>::entry().shard_key.is_none());
}

#[tokio::test]
async fn saving_and_deleting_a_loaded_document_filter_on_its_shard_key() {
    let db = common::db().await.unwrap();
    let odm = db.odm();
    let bolt = Part {
        id: 1,
        partno: "B-1".into(),
        name: "bolt".into(),
    };
    odm.insert_one(&bolt).await.unwrap();
    odm.insert_one(&product(10, "fasteners", 1234, &[&bolt]))
        .await
        .unwrap();
    let mut loaded = odm.get::<Product>(10).await.unwrap().unwrap();
    db.commands().clear();
    loaded.name = "bolt kit".into();
    odm.replace_one(&loaded).await.unwrap();
    let q = sent_filter(&db, "update", "products");
    assert_eq!(q, doc! { "_id": 10, "category": "fasteners" });
    assert_eq!(
        stored_one(&db, "products", 10)
            .await
            .unwrap()
            .get_str("name")
            .unwrap(),
        "bolt kit"
    );
    // A replacement that changes the key matches nothing: the document is not moved.
    loaded.category = "tools".into();
    let r = odm.replace_one(&loaded).await.unwrap();
    assert_eq!(r.matched_count, 0);
    loaded.category = "fasteners".into();
    delete_sends(&db, &loaded, doc! { "_id": 10, "category": "fasteners" }).await;
    assert!(stored_one(&db, "products", 10).await.is_none());
}

#[tokio::test]
async fn an_upsert_without_the_full_key_is_refused_before_anything_is_sent() {
    let db = common::db().await.unwrap();
    let odm = db.odm();
    db.commands().clear();
    let err = odm
        .update_one(
            Product::name().eq("shifter"),
            Product::name().set("shifter".to_owned()),
        )
        .upsert(true)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ShardKeyMissing { collection, missing, .. } if collection == "products" && missing[..] == ["category"]),
        "{err}"
    );
    let err = odm
        .update_one(
            LogMsg::host().eq(Ref::new(1)) & LogMsg::time().gt(DateTime::from_millis(0)),
            LogMsg::message().set("up".to_owned()),
        )
        .upsert(true)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ShardKeyMissing { missing, .. } if missing[..] == ["time"]),
        "{err}"
    );
    assert!(err.to_string().contains("`logmsg`"), "{err}");
    let err = odm
        .find_one_and_update(
            Product::name().eq("shifter"),
            Product::name().set("shifter".to_owned()),
        )
        .upsert(true)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ShardKeyMissing { missing, .. } if missing[..] == ["category"]),
        "findAndModify too: {err}"
    );
    assert_eq!(sent(&db), Vec::<String>::new());
    // With the full key, pinned by equality, it is sent and lands; a hostile value is matched
    // literally.
    let r = odm
        .update_one(
            Product::id_field().eq(7) & Product::category().eq("$where"),
            Product::name().set("odd".to_owned()),
        )
        .upsert(true)
        .await
        .unwrap();
    assert!(r.upserted_id.is_some());
    let stored = stored_one(&db, "products", 7).await.unwrap();
    assert_eq!(stored.get_str("category").unwrap(), "$where");
}

#[tokio::test]
async fn a_computed_key_is_filled_on_insert_and_names_the_document_in_writes() {
    let db = common::db().await.unwrap();
    let odm = db.odm();
    let image = Image {
        id: 1,
        uploaded: DateTime::from_millis(1_715_000_000_000), // 2024-05-06
        data: Binary {
            subtype: BinarySubtype::Generic,
            bytes: b"abc".to_vec(),
        },
        segment: "anything".into(),
    };
    odm.insert_one(&image).await.unwrap();
    let stored = stored_one(&db, "images", 1).await.unwrap();
    assert_eq!(
        stored.get_str("segment").unwrap(),
        "2024-05-900150983cd24fb0d6963f7d28e17f72"
    );
    // The in-memory copy still holds the placeholder: a save recomputes the key.
    db.commands().clear();
    assert_eq!(odm.replace_one(&image).await.unwrap().matched_count, 1);
    assert_eq!(
        sent_filter(&db, "update", "images"),
        doc! { "_id": 1, "segment": "2024-05-900150983cd24fb0d6963f7d28e17f72" }
    );
    // A document whose date is not a date: a typed error naming collection, `_id`, field.
    db.raw()
        .collection::<Document>("images")
        .insert_one(doc! { "_id": 2, "uploaded": "May", "data": Bson::Binary(image.data.clone()), "segment": 5 })
        .await
        .unwrap();
    let err = odm.get::<Image>(2).await.unwrap_err();
    assert!(
        matches!(&err, Error::Decode { collection, path, .. } if collection == "images" && path == "uploaded"),
        "{err}"
    );
    let bad: Image = odm::bson::deserialize_from_document(doc! {
        "_id": 3, "uploaded": DateTime::from_millis(0), "data": Bson::Binary(image.data.clone())
    })
    .unwrap();
    assert_eq!(odm.insert_one(&bad).await.unwrap(), 3);
}

#[tokio::test]
async fn generated_writes_carry_the_key_when_they_know_it() {
    let db = common::db().await.unwrap();
    let odm = db.odm();
    odm.insert_one(&Host {
        id: 1,
        name: "goofy".into(),
        logmsgs: vec![],
    })
    .await
    .unwrap();
    db.commands().clear();
    // The latest-N push finds the host by `_id`, its shard key: routed.
    odm.insert_one(&LogMsg {
        id: 1,
        host: Ref::new(1),
        time: DateTime::from_millis(1000),
        message: "up".into(),
    })
    .await
    .unwrap();
    let q = sent_filter(&db, "update", "hosts");
    assert!(q.contains_key("_id"), "{q}");
    let host = stored_one(&db, "hosts", 1).await.unwrap();
    assert_eq!(host.get_array("logmsgs").unwrap().len(), 1);
    // A log message saved after loading: `{_id, host, time}`.
    let mut msg = odm.get::<LogMsg>(1).await.unwrap().unwrap();
    msg.message = "down".into();
    db.commands().clear();
    odm.replace_one(&msg).await.unwrap();
    let q = sent_filter(&db, "update", "logmsg");
    assert_eq!(
        q,
        doc! { "_id": 1, "host": 1, "time": DateTime::from_millis(1000) }
    );
    // A mutable key is writable through its path.
    odm.insert_one(&Ticket {
        id: 1,
        queue: "triage".into(),
    })
    .await
    .unwrap();
    odm.update_one(
        Ticket::id_field().eq(1) & Ticket::queue().eq("triage"),
        Ticket::queue().set("done".to_owned()),
    )
    .await
    .unwrap();
    assert_eq!(
        stored_one(&db, "tickets", 1)
            .await
            .unwrap()
            .get_str("queue")
            .unwrap(),
        "done"
    );
}

#[tokio::test]
async fn the_routing_report_says_what_scatters_and_why() {
    let report = RoutingReport::in_catalog::<Product>(&common::catalog());
    let text = report.to_string();
    assert!(
        text.starts_with("routing of `Product` (products sharded by `category`):"),
        "{text}"
    );
    assert!(
        text.contains("cascade of Part.name into products.parts scatters: the filter lacks products' shard key `category`"),
        "{text}"
    );
    assert!(
        text.contains("replace_one (save) of a loaded Product is routed: the filter names products' shard key `category`"),
        "{text}"
    );
    assert!(
        text.contains("get of Product scatters")
            && text.contains("update_by_id of Product scatters"),
        "{text}"
    );
    // A part's delete pulls its summaries from the products by `parts.id`: listed on both
    // sides, as the scatter it is.
    let pulled = "delete of a Part: its summaries pulled from products.parts scatters: the filter lacks products' shard key `category`";
    assert!(text.contains(pulled), "{text}");
    let parts = RoutingReport::in_catalog::<Part>(&common::catalog()).to_string();
    assert!(parts.contains(pulled), "{parts}");
    let logs = RoutingReport::in_catalog::<LogMsg>(&common::catalog());
    let text = logs.to_string();
    assert!(
        text.contains("push of a LogMsg onto hosts.logmsgs (through `host`) is routed: the filter names hosts' shard key `_id`"),
        "{text}"
    );
    let hosts = RoutingReport::in_catalog::<Host>(&common::catalog()).to_string();
    assert!(
        hosts.contains("delete of a Host: cascade on logmsg.host, deleted by reference scatters: the filter lacks `time` of logmsg's shard key `{host, time}`"),
        "{hosts}"
    );
    assert!(
        hosts.contains("recompute of hosts.logmsgs (the latest logmsg): the latest read scatters: the filter lacks `time` of logmsg's shard key `{host, time}`"),
        "{hosts}"
    );
    let parts = RoutingReport::in_catalog::<Part>(&common::catalog());
    assert_eq!(parts.key, None);
    assert!(
        parts
            .routes
            .iter()
            .any(|r| r.collection == "products"
                && matches!(r.verdict, RouteVerdict::Scattered { .. }))
    );
    // A background cascade: the intent, the worker's walk (by the reference: scattered) and
    // its batches (by the ids and categories it read: routed).
    let makers = RoutingReport::in_catalog::<Maker>(&common::catalog()).to_string();
    for line in [
        "background cascade of Maker.name into gadgets.maker_name: the intent goes to one shard: `odm_cascades` is not sharded",
        "background cascade of Maker.name into gadgets.maker_name: the worker's walk scatters: the filter lacks gadgets' shard key `category`",
        "background cascade of Maker.name into gadgets.maker_name: each batch is routed: the filter names gadgets' shard key `category`",
    ] {
        assert!(makers.contains(line), "{line}\n{makers}");
    }
    assert!(!makers.contains("\n  cascade of Maker.name"), "{makers}");
    let gadgets = RoutingReport::in_catalog::<Gadget>(&common::catalog()).to_string();
    for line in [
        "update_many of Gadgets whose fields are copied: each chunk is routed: the filter names gadgets' shard key `category`",
        "background cascade of Maker.name into gadgets.maker_name: each batch is routed",
        "populate of Gadget.maker by the lookup plan (never chosen by `Plan::Auto` on a sharded cluster) goes to one shard: `makers` is not sharded",
    ] {
        assert!(gadgets.contains(line), "{line}\n{gadgets}");
    }
    // The cascade plan says it too, for the sharded dependent only.
    let plan = odm::denormalize::cascade_plan_in::<Part>(&common::catalog()).to_string();
    assert!(
        plan.contains("routing scatters: the filter lacks products' shard key `category`"),
        "{plan}"
    );
}

/// A tree of regions, sharded by `zone`.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(
    collection = "regions",
    tree(on_delete = "cascade"),
    shard_key(keys = "zone")
)]
struct Region {
    #[serde(rename = "_id")]
    id: i32,
    zone: String,
    parent: Option<Ref<Region>>,
    ancestors: Vec<Ref<Region>>,
}

/// A move takes ids, and its two `findAndModify`s (marking the new parent, setting the node)
/// would name `_id` alone, which a sharded cluster before MongoDB 7.1 refuses: each reads the
/// document's shard key first (one `find` projecting it) and names it.
#[tokio::test]
async fn a_tree_move_names_the_shard_keys_of_the_node_and_its_new_parent() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let region = |id: i32, zone: &str, parent: Option<i32>| Region {
        id,
        zone: zone.to_owned(),
        parent: parent.map(Ref::new),
        ancestors: Vec::new(),
    };
    odm.insert_one(&region(1, "eu", None)).await?;
    odm.insert_one(&region(2, "eu", Some(1))).await?;
    odm.insert_one(&region(3, "us", None)).await?;
    if !odm.supports_transactions().await? {
        return Ok(());
    }
    db.commands().clear();
    odm.tree::<Region>().move_under(2, 3).await?;
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "find",
            "findAndModify",
            "find",
            "findAndModify",
            "update",
            "update",
            "commitTransaction"
        ]
    );
    let queries: Vec<Document> = commands
        .iter()
        .filter(|c| c.name == "findAndModify")
        .filter_map(|c| c.command.as_ref()?.get_document("query").ok().cloned())
        .collect();
    assert_eq!(
        queries,
        [
            doc! { "_id": 3, "zone": "us" },
            doc! { "_id": 2, "zone": "eu" },
        ]
    );
    // The last `update` removes the new parent's mark: by its id and the zone read with it.
    let unmark = commands
        .iter()
        .rfind(|c| c.name == "update")
        .and_then(|c| c.command.as_ref())
        .and_then(|c| c.get_array("updates").ok())
        .and_then(|u| u[0].as_document())
        .and_then(|u| u.get_document("q").ok())
        .cloned()
        .expect("an update");
    assert_eq!(unmark.get_i32("_id").ok(), Some(3), "{unmark}");
    assert!(
        and_of(&unmark).contains(&doc! { "zone": { "$in": ["us"] } }),
        "{unmark}"
    );
    // An insert under a parent marks and unmarks it the same way, inside a transaction.
    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    db.commands().clear();
    odm.insert_one(&region(4, "us", Some(3)))
        .session(&mut session)
        .await?;
    session.commit_transaction().await?;
    let commands = db.commands().take();
    let unmark = commands
        .iter()
        .filter(|c| c.name == "update")
        .filter_map(|c| {
            c.command.as_ref()?.get_array("updates").ok()?[0]
                .as_document()
                .cloned()
        })
        .filter_map(|u| u.get_document("q").ok().cloned())
        .find(|q| q.get_i32("_id").ok() == Some(3))
        .expect("the parent's mark removed");
    assert!(
        and_of(&unmark).contains(&doc! { "zone": { "$in": ["us"] } }),
        "{unmark}"
    );
    let report = RoutingReport::in_catalog::<Region>(&common::catalog()).to_string();
    assert!(
        report.contains("tree move of a Region: the new parent's mark removed is routed"),
        "{report}"
    );
    let moved = stored_one(&db, "regions", 2).await.unwrap();
    assert_eq!(moved.get_i32("parent").ok(), Some(3));
    assert_eq!(
        moved.get_array("ancestors").ok(),
        Some(&vec![Bson::Int32(3)])
    );
    Ok(())
}

/// A key inside an embedded document (`source.host`): the key and its index name the stored
/// path, a loaded document's save and delete pin it (read from inside the embedded document),
/// an upsert is refused without it, the routing report routes what names it.
#[tokio::test]
async fn a_key_inside_an_embedded_document_is_pinned_by_its_path() {
    let key = <Event as odm::Model>::entry().shard_key.unwrap();
    assert_eq!(key.key_document(), doc! { "source.host": 1, "at": 1 });
    assert_eq!(
        shard_collection_command("ops", "events", &key),
        doc! { "shardCollection": "ops.events", "key": { "source.host": 1, "at": 1 } }
    );

    let db = common::db().await.unwrap();
    let odm = db.odm();
    let at = DateTime::from_millis(1_700_000_000_000);
    let event = Event {
        id: 1,
        source: Source {
            host: "web-1".into(),
            application: "api".into(),
        },
        at,
        message: "up".into(),
    };
    odm.insert_one(&event).await.unwrap();
    let mut loaded = odm.get::<Event>(1).await.unwrap().unwrap();
    loaded.message = "down".into();
    db.commands().clear();
    odm.replace_one(&loaded).await.unwrap();
    assert_eq!(
        sent_filter(&db, "update", "events"),
        doc! { "_id": 1, "source.host": "web-1", "at": at }
    );
    let stored = stored_one(&db, "events", 1).await.unwrap();
    assert_eq!(stored.get_str("message").unwrap(), "down");
    assert_eq!(string_at(&stored, "source.app"), "api");

    // An update by `_id` alone does not know the key: it is sent as it is (and scatters).
    db.commands().clear();
    odm.update_by_id::<Event>(1, Event::message().set("up again".to_owned()))
        .await
        .unwrap();
    assert_eq!(sent_filter(&db, "update", "events"), doc! { "_id": 1 });

    // An upsert must name the whole key, the embedded field by its path.
    let err = odm
        .update_one(
            Event::id_field().eq(2) & Event::at().eq(at),
            Event::message().set("new".to_owned()),
        )
        .upsert(true)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ShardKeyMissing { missing, .. } if missing[..] == ["source.host"]),
        "{err}"
    );
    odm.update_one(
        Event::id_field().eq(2) & Event::source().host().eq("web-2") & Event::at().eq(at),
        Event::message().set("new".to_owned()),
    )
    .upsert(true)
    .await
    .unwrap();
    let upserted = stored_one(&db, "events", 2).await.unwrap();
    assert_eq!(string_at(&upserted, "source.host"), "web-2");

    delete_sends(
        &db,
        &loaded,
        doc! { "_id": 1, "source.host": "web-1", "at": at },
    )
    .await;

    let report = RoutingReport::in_catalog::<Event>(&common::catalog()).to_string();
    for line in [
        "replace_one (save) of a loaded Event is routed: the filter names events' shard key `{source.host, at}`",
        "get of Event scatters: the filter lacks events' shard key `{source.host, at}`",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
}

#[tokio::test]
async fn a_key_through_renamed_embedded_fields_uses_the_stored_path() {
    let key = <Visit as odm::Model>::entry().shard_key.unwrap();
    assert_eq!(key.key_document(), doc! { "origin.hostName": 1 });

    let db = common::db().await.unwrap();
    let odm = db.odm();
    let visit = Visit {
        id: 1,
        origin: Origin {
            host_name: "web-1".into(),
            user_agent: "curl".into(),
        },
        page: "/".into(),
    };
    odm.insert_one(&visit).await.unwrap();
    let mut loaded = odm.get::<Visit>(1).await.unwrap().unwrap();
    loaded.page = "/parts".into();
    db.commands().clear();
    odm.replace_one(&loaded).await.unwrap();
    assert_eq!(
        sent_filter(&db, "update", "visits"),
        doc! { "_id": 1, "origin.hostName": "web-1" }
    );
    let stored = stored_one(&db, "visits", 1).await.unwrap();
    assert_eq!(stored.get_str("page").unwrap(), "/parts");
    assert_eq!(
        stored.get_document("origin").unwrap(),
        &doc! { "hostName": "web-1", "userAgent": "curl" }
    );

    // An upsert is refused without the stored path, and the typed path names it.
    let err = odm
        .update_one(Visit::id_field().eq(2), Visit::page().set("/".to_owned()))
        .upsert(true)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ShardKeyMissing { missing, .. } if missing[..] == ["origin.hostName"]),
        "{err}"
    );
    odm.update_one(
        Visit::id_field().eq(2) & Visit::origin().host_name().eq("web-2"),
        Visit::page().set("/".to_owned()),
    )
    .upsert(true)
    .await
    .unwrap();
    let upserted = stored_one(&db, "visits", 2).await.unwrap();
    assert_eq!(string_at(&upserted, "origin.hostName"), "web-2");

    delete_sends(&db, &loaded, doc! { "_id": 1, "origin.hostName": "web-1" }).await;
    assert!(stored_one(&db, "visits", 1).await.is_none());
}

#[tokio::test]
async fn bucket_and_counter_upserts_name_the_key() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let review = Review {
        id: ObjectId::new(),
        rating: 5,
        at: DateTime::from_millis(1_714_521_600_000),
    };

    // Sharded by the bucket's key: the add's upsert pins it, and is sent.
    db.commands().clear();
    odm.buckets::<ReviewBucket>().add("kate", &review).await?;
    let filter = sent_filter(&db, "update", "review_buckets");
    assert_eq!(
        filter.get("user"),
        Some(&Bson::Document(doc! { "$eq": "kate" })),
        "{filter}"
    );
    assert_eq!(
        db.raw()
            .collection::<Document>("review_buckets")
            .count_documents(doc! {})
            .await?,
        1
    );

    // A counter sharded by its key: the event's upsert pins the book, and is sent.
    db.commands().clear();
    odm.counters::<BookRecs>()
        .record(7, DateTime::from_millis(1_714_521_600_000))
        .await?;
    let filter = sent_filter(&db, "update", "book_recs");
    assert_eq!(filter.get("book"), Some(&Bson::Int32(7)), "{filter}");
    let stored = common::stored(&db, "book_recs").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].get_i32("book").unwrap(), 7);
    Ok(())
}

// ANCHOR: carried
/// Makers, unsharded; gadgets, sharded by category, copy their maker's name in the background;
/// listings copy a gadget's name.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "makers")]
struct Maker {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "gadgets", shard_key(keys = "category"))]
struct Gadget {
    #[serde(rename = "_id")]
    id: i32,
    category: String,
    name: String,
    #[reference]
    maker: Ref<Maker>,
    #[denormalize(from = "Maker", via = "maker", fields = "name", cascade = "background")]
    maker_name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "listings")]
struct Listing {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    gadget: Ref<Gadget>,
    #[denormalize(from = "Gadget", via = "gadget", fields = "name")]
    gadget_name: String,
}
// ANCHOR_END: carried

/// Two makers' gadgets in three categories, and a listing of each gadget.
async fn gadgets(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    odm.sync_indexes().await?;
    odm.cascade_worker().create_index().await?;
    for (id, name) in [(1, "Acme"), (2, "Globex")] {
        odm.insert_one(&Maker {
            id,
            name: name.into(),
        })
        .await?;
    }
    for (id, category, maker) in [
        (1, "tools", 1),
        (2, "toys", 1),
        (3, "tools", 1),
        (4, "garden", 2),
    ] {
        odm.insert_one(&Gadget {
            id,
            category: category.into(),
            name: format!("gadget {id}"),
            maker: Ref::new(maker),
            maker_name: String::new(),
        })
        .await?;
        odm.insert_one(&Listing {
            id,
            gadget: Ref::new(id),
            gadget_name: String::new(),
        })
        .await?;
    }
    db.commands().clear();
    Ok(())
}

/// The `$and` of a filter, as sent.
fn and_of(filter: &Document) -> Vec<Document> {
    filter
        .get_array("$and")
        .map(|a| a.iter().filter_map(|c| c.as_document().cloned()).collect())
        .unwrap_or_default()
}

/// Documents read by id and then written back by id carry their shard key: the batches of a
/// background cascade into gadgets name the categories of the gadgets they hold, and so do
/// the chunks of an update of many gadgets and the read of their new values, so that a
/// cluster sends each to the shards holding those categories, not to every shard.
#[tokio::test]
async fn writes_back_by_id_carry_the_shard_key_values_read_with_the_ids() -> odm::Result<()> {
    let db = common::db().await?;
    if !db.odm().supports_transactions().await? {
        return Ok(());
    }
    gadgets(&db).await?;
    let categories = doc! { "category": { "$in": ["tools", "toys"] } };

    // A background cascade: the worker reads the gadgets' ids with their categories.
    db.odm()
        .update_by_id::<Maker>(1, Maker::name().set("Acme Corp".to_owned()))
        .await?;
    db.commands().clear();
    db.odm().cascade_worker().run_until_idle().await?;
    let log = db.commands().take();
    let walk = log
        .iter()
        .filter_map(|c| c.command.as_ref())
        .find(|c| c.get_str("find").is_ok_and(|n| n == "gadgets"))
        .expect("the walk over gadgets");
    assert_eq!(
        walk.get_document("projection").unwrap(),
        &doc! { "_id": 1, "category": 1 }
    );
    let filter = filter_in(&log, "update", "gadgets");
    assert_eq!(
        filter.get_document("_id").unwrap(),
        &doc! { "$in": [1, 2, 3] }
    );
    assert!(and_of(&filter).contains(&categories), "{filter}");
    for id in 1..=3 {
        let stored = stored_one(&db, "gadgets", id).await.unwrap();
        assert_eq!(stored.get_str("maker_name").unwrap(), "Acme Corp");
    }
    let globex = stored_one(&db, "gadgets", 4).await.unwrap();
    assert_eq!(globex.get_str("maker_name").unwrap(), "Globex");

    // An update of many gadgets that listings copy: the ids are read with the categories,
    // and each chunk's update and the read of the new names carry them.
    db.odm()
        .update_many::<Gadget>(
            Gadget::maker().refers_to(1),
            Gadget::name().set("recalled".to_owned()),
        )
        .await?;
    let log = db.commands().take();
    let on_gadgets = |name: &str| -> Vec<Document> {
        log.iter()
            .filter(|c| c.name == name)
            .filter_map(|c| c.command.clone())
            .filter(|c| c.get_str(name).is_ok_and(|n| n == "gadgets"))
            .collect()
    };
    let finds = on_gadgets("find");
    assert_eq!(
        finds[0].get_document("projection").unwrap(),
        &doc! { "_id": 1, "category": 1 }
    );
    let q = filter_in(&log, "update", "gadgets");
    assert!(and_of(&q).contains(&categories), "{q}");
    let reread = finds[1].get_document("filter").unwrap();
    assert!(and_of(reread).contains(&categories), "{reread}");
    for id in 1..=3 {
        let listing = stored_one(&db, "listings", id).await.unwrap();
        assert_eq!(listing.get_str("gadget_name").unwrap(), "recalled");
    }
    let untouched = stored_one(&db, "listings", 4).await.unwrap();
    assert_eq!(untouched.get_str("gadget_name").unwrap(), "gadget 4");
    Ok(())
}

/// Films, sharded by genre, and their details, sharded by `_id`: a subset pair.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "films", shard_key(keys = "genre"))]
struct Film {
    #[serde(rename = "_id")]
    id: i32,
    genre: String,
    title: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(
    collection = "film_details",
    subset_of = "Film",
    shard_key(keys = "_id")
)]
struct FilmDetails {
    #[serde(rename = "_id")]
    id: i32,
    plot: String,
}

/// Deleting films with their details: the main documents' deletes name the genres read with
/// their ids; the details' deletes name their ids, their shard key.
#[tokio::test]
async fn a_subset_delete_names_the_genres_read_with_the_ids() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let films = [(1, "noir"), (2, "comedy"), (3, "noir"), (4, "western")];
    for (id, genre) in films {
        odm.subset::<FilmDetails>()
            .insert(
                &Film {
                    id,
                    genre: genre.into(),
                    title: format!("film {id}"),
                },
                &FilmDetails {
                    id,
                    plot: format!("plot {id}"),
                },
            )
            .await?;
    }
    db.commands().clear();
    let deleted = odm
        .subset::<FilmDetails>()
        .delete(Film::id_field().lte(3))
        .await?;
    assert_eq!(deleted, 3);
    let log = db.commands().take();
    let delete_on = |collection: &str| filter_in(&log, "delete", collection);
    let films_q = delete_on("films");
    assert!(
        and_of(&films_q).contains(&doc! { "genre": { "$in": ["noir", "comedy"] } }),
        "{films_q}"
    );
    assert_eq!(
        delete_on("film_details").get_document("_id").unwrap(),
        &doc! { "$in": [1, 2, 3] }
    );
    let left: Vec<i32> = common::stored(&db, "films")
        .await
        .iter()
        .map(|d| d.get_i32("_id").unwrap())
        .collect();
    assert_eq!(left, [4]);
    assert_eq!(common::stored(&db, "film_details").await.len(), 1);

    let report = RoutingReport::of_subset_in::<FilmDetails>(&common::catalog()).to_string();
    for line in [
        "subset delete of Films: each chunk of the main documents is routed: the filter names films' shard key `genre`",
        "subset delete of Films: the FilmDetails of each chunk is routed: the filter names film_details' shard key `_id`",
        "details_of Films is routed",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    Ok(())
}

/// Crew members and their chores, sharded by team: a two-way reference.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "crew")]
struct Crew {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference(many, max = 100, inverse = "owner", on_delete = "pull")]
    chores: Vec<Ref<Chore>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "chores", shard_key(keys = "team"))]
struct Chore {
    #[serde(rename = "_id")]
    id: i32,
    team: String,
    description: String,
    #[parent(inverse = "chores")]
    owner: Ref<Crew>,
}

/// Kate and Bob, and Kate's chore 7 in the kitchen.
async fn crew_and_chore(odm: &Odm) -> odm::Result<()> {
    for (id, name) in [(1, "Kate"), (2, "Bob")] {
        odm.insert_one(&Crew {
            id,
            name: name.into(),
            chores: Vec::new(),
        })
        .await?;
    }
    odm.insert_one(&Chore {
        id: 7,
        team: "kitchen".into(),
        description: "dishes".into(),
        owner: Ref::new(1),
    })
    .await?;
    Ok(())
}

/// The `q` of the first `findAndModify` on `collection` in `log`.
fn find_and_modify_query(log: &[odm::monitor::SentCommand], collection: &str) -> Document {
    log.iter()
        .filter_map(|c| c.command.as_ref())
        .find(|c| c.get_str("findAndModify").is_ok_and(|n| n == collection))
        .unwrap_or_else(|| panic!("no findAndModify on {collection}"))
        .get_document("query")
        .unwrap()
        .clone()
}

/// The `findAndModify` commands the ODM sends by `_id` name the document's shard key, read
/// first: a sharded cluster before MongoDB 7.1 refuses one without it. An update by id of a
/// source whose fields are copied, and a two-way move of a child.
#[tokio::test]
async fn find_and_modify_by_id_reads_and_names_the_shard_key() -> odm::Result<()> {
    let db = common::db().await?;
    if !db.odm().supports_transactions().await? {
        return Ok(());
    }
    gadgets(&db).await?;
    let odm = db.odm();

    odm.update_by_id::<Gadget>(2, Gadget::name().set("kite".to_owned()))
        .await?;
    let log = db.commands().take();
    let read = log
        .iter()
        .filter_map(|c| c.command.as_ref())
        .find(|c| c.get_str("find").is_ok_and(|n| n == "gadgets"))
        .expect("the key's read");
    assert_eq!(read.get_document("filter").unwrap(), &doc! { "_id": 2 });
    assert_eq!(
        read.get_document("projection").unwrap(),
        &doc! { "category": 1 }
    );
    assert_eq!(
        find_and_modify_query(&log, "gadgets"),
        doc! { "_id": 2, "category": "toys" }
    );
    let listing = stored_one(&db, "listings", 2).await.unwrap();
    assert_eq!(listing.get_str("gadget_name").unwrap(), "kite");

    crew_and_chore(odm).await?;
    db.commands().clear();
    odm.reassign(Chore::owner(), 7, 2).await?;
    let log = db.commands().take();
    assert_eq!(
        find_and_modify_query(&log, "chores"),
        doc! { "_id": 7, "team": "kitchen" }
    );
    let report = RoutingReport::in_catalog::<Chore>(&common::catalog()).to_string();
    assert!(
        report.contains("two-way move of Chore.owner: the Chore is routed: the filter names chores' shard key `team`"),
        "{report}"
    );
    let report = RoutingReport::in_catalog::<Gadget>(&common::catalog()).to_string();
    assert!(
        report.contains("update_by_id of a Gadget whose fields are copied: the update is routed")
            && report.contains(
                "update_by_id of a Gadget whose fields are copied: its shard key read scatters"
            ),
        "{report}"
    );
    let chore = stored_one(&db, "chores", 7).await.unwrap();
    assert_eq!(chore.get_i32("owner").unwrap(), 2);
    let bob = stored_one(&db, "crew", 2).await.unwrap();
    assert_eq!(bob.get_array("chores").unwrap(), &vec![Bson::Int32(7)]);
    let kate = stored_one(&db, "crew", 1).await.unwrap();
    assert!(kate.get_array("chores").unwrap().is_empty());
    Ok(())
}

/// A model whose documents feed a latest-N array (a log message, sharded by `{host, time}`),
/// deleted through its delete plan: the read of its ids takes the key's values, and the
/// `delete` names them, as the routing report says.
#[tokio::test]
async fn a_delete_with_rules_names_the_shard_key_values_read_with_the_ids() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let host = Host {
        id: 1,
        name: "www.example.com".into(),
        logmsgs: Vec::new(),
    };
    odm.insert_one(&host).await?;
    let at = DateTime::from_millis(1_000);
    let msg = LogMsg {
        id: 7,
        host: Ref::new(1),
        time: at,
        message: "up".into(),
    };
    odm.insert_one(&msg).await?;
    let loaded = odm.get::<LogMsg>(msg.id).await?.expect("stored");
    db.commands().clear();
    assert_eq!(odm.delete_document(&loaded).await?, 1);
    let q = sent_filter(&db, "delete", "logmsg");
    assert_eq!(q.get_document("_id").unwrap(), &doc! { "$in": [7] });
    let and = and_of(&q);
    assert!(and.contains(&doc! { "host": { "$in": [1] } }), "{q}");
    assert!(and.contains(&doc! { "time": { "$in": [at] } }), "{q}");
    assert!(stored_one(&db, "logmsg", msg.id).await.is_none());
    let report = RoutingReport::in_catalog::<LogMsg>(&common::catalog()).to_string();
    assert!(
        report.contains("delete_document of a loaded LogMsg: the delete, by the id and shard key read is routed"),
        "{report}"
    );
    Ok(())
}

#[path = "shard/drift.rs"]
mod drift;
