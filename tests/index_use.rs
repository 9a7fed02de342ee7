//! Index use you can assert: every query the ODM generates for a few representative models
//! (the parts catalog with its copies and log messages, a tree whose names are copied, review
//! buckets) is explained by the server, and none scans a collection.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use denorm::logs::{Host, LogMsg};
use denorm::parts::Part;
use denorm::products::{PartSummary, Product};
use odm::bson::{doc, DateTime};
use odm::prelude::*;
use odm::testing::{Plan, TestDb};

/// A tree of subjects whose name books copy.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "subjects", tree(on_delete = "lift"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "filed_books")]
struct FiledBook {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference(on_delete = "restrict")]
    subject: Ref<Subject>,
    #[denormalize(from = "Subject", via = "subject", fields = "name")]
    #[serde(default)]
    subject_name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone)]
struct Review {
    id: ObjectId,
    rating: i32,
    created_at: DateTime,
}

/// A user's reviews of one month.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "reviews",
    bucket(
        key = "user",
        period = "month",
        every = "month",
        items = "reviews",
        time = "created_at"
    )
)]
struct UserReviews {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    month: DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}

fn subject(id: &str, parent: Option<&str>) -> Subject {
    Subject {
        id: id.into(),
        name: id.to_uppercase(),
        parent: parent.map(|p| Ref::new(p.to_owned())),
        ancestors: vec![],
    }
}

fn part(n: usize, product: Option<ObjectId>) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("P-{n}"),
        name: format!("part {n}"),
        qty: 1,
        product: product.map(Ref::new),
        product_name: String::new(),
        product_catalog_number: 0,
    }
}

// ANCHOR: assert_indexed
/// The queries sent since the last call, explained, asserted to use indexes only, and to be
/// at least `explained` of them.
async fn assert_indexed(db: &TestDb, what: &str, explained: usize) -> odm::Result<()> {
    let report = db.explain_sent().await?;
    assert!(report.is_clean(), "{what}: {report}");
    assert!(
        report.explained.len() >= explained,
        "{what}: at least {explained} queries: {report}"
    );
    Ok(())
}
// ANCHOR_END: assert_indexed

#[tokio::test]
async fn the_parts_catalog_queries_use_indexes() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    db.commands().clear();

    // Inserts: the copies' sources found by _id; the latest-N push by the parent's _id.
    let fan = Product {
        id: ObjectId::new(),
        name: "Fan".into(),
        manufacturer: "Acme".into(),
        catalog_number: 1,
        parts: vec![],
    };
    odm.insert_one(&fan).await?;
    let parts: Vec<Part> = (0..4).map(|n| part(n, Some(fan.id))).collect();
    odm.insert_many(&parts).await?;
    let summaries = parts
        .iter()
        .map(|p| PartSummary {
            id: Ref::new(p.id),
            name: String::new(),
        })
        .collect();
    let blower = Product {
        id: ObjectId::new(),
        name: "Blower".into(),
        manufacturer: "Acme".into(),
        catalog_number: 2,
        parts: summaries,
    };
    odm.insert_one(&blower).await?;
    let host = Host {
        id: ObjectId::new(),
        name: "www".into(),
        ipaddr: "10.0.0.1".into(),
        logmsgs: vec![],
    };
    odm.insert_one(&host).await?;
    let msgs: Vec<LogMsg> = (0..3)
        .map(|n| LogMsg {
            id: ObjectId::new(),
            time: DateTime::from_millis(1_000 * n),
            message: format!("m{n}"),
            host: Ref::new(host.id),
            ipaddr: String::new(),
        })
        .collect();
    odm.insert_many(&msgs).await?;
    assert_indexed(&db, "inserts", 3).await?;

    // Finds by declared indexes, populate ($in by _id), children (by the parent reference).
    odm.find_id(Host::ipaddr().eq("10.0.0.1")).await?;
    odm.find(LogMsg::host().refers_to(host.id)).await?;
    odm.find(Part::product().refers_to(fan.id))
        .populate(Part::product())
        .await?;
    odm.children(LogMsg::host(), std::slice::from_ref(&host))
        .await?;
    odm.children(LogMsg::host(), std::slice::from_ref(&host))
        .limit_per_parent(2)
        .await?;
    odm.count(LogMsg::host().refers_to(host.id)).await?;
    assert_indexed(&db, "finds", 6).await?;

    // Cascades: a product's name to its parts, a part's name to the products' summaries, a
    // host's address to its messages; moving a part's reference refills its copy.
    odm.update_by_id(fan.id, Product::name().set("Fan II"))
        .await?;
    odm.update_by_id(parts[0].id, Part::name().set("blade"))
        .await?;
    odm.update_by_id(host.id, Host::ipaddr().set("10.0.0.2"))
        .await?;
    odm.update_by_id(parts[1].id, Part::product().set(Some(Ref::new(blower.id))))
        .await?;
    odm.update_by_id(msgs[0].id, LogMsg::message().set("changed"))
        .await?;
    assert_indexed(&db, "cascades", 5).await?;

    // ANCHOR: catalog_deletes
    // Delete rules: a part's summaries pulled, a product's references nullified, a host's
    // messages deleted with it.
    odm.delete_one(Part::id_field().eq(parts[2].id)).await?;
    odm.delete_one(Product::id_field().eq(fan.id)).await?;
    odm.delete_one(Host::id_field().eq(host.id)).await?;
    assert_indexed(&db, "delete rules", 3).await?;
    // ANCHOR_END: catalog_deletes
    Ok(())
}

#[tokio::test]
async fn the_tree_queries_use_indexes() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    db.commands().clear();
    let nodes = [
        subject("lit", None),
        subject("1920s", Some("lit")),
        subject("jazz", Some("1920s")),
        subject("ny", Some("jazz")),
        subject("poetry", Some("lit")),
    ];
    for node in &nodes {
        odm.insert_one(node).await?;
    }
    odm.insert_one(&FiledBook {
        id: 1,
        title: "Gatsby".into(),
        subject: Ref::new("jazz".to_owned()),
        subject_name: String::new(),
    })
    .await?;
    let tree = odm.tree::<Subject>();
    tree.descendants("1920s").await?;
    tree.children("1920s").await?;
    tree.roots().await?;
    tree.ancestors("ny").await?;
    tree.move_under("jazz", "poetry").await?;
    odm.update_by_id("jazz", Subject::name().set("Jazz Age"))
        .await?;
    odm.delete_one(Subject::id_field().eq("ny")).await?;
    odm.delete_one(Subject::id_field().eq("poetry")).await?;
    assert_indexed(&db, "tree", 8).await?;
    Ok(())
}

#[tokio::test]
async fn the_bucket_queries_use_indexes() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    db.commands().clear();
    for n in 0..5 {
        let review = Review {
            id: ObjectId::new(),
            rating: 3,
            created_at: DateTime::from_millis(86_400_000 * 20 * n),
        };
        odm.buckets::<UserReviews>().add("bob", &review).await?;
    }
    let newest = odm.buckets::<UserReviews>().newest("bob", 3).await?;
    assert_eq!(newest.len(), 3);
    assert_indexed(&db, "buckets", 6).await?;
    Ok(())
}

#[tokio::test]
async fn a_query_on_a_field_without_an_index_is_reported() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    odm.insert_many(&[part(1, None), part(2, None)]).await?;
    db.commands().clear();
    // ANCHOR: scan
    odm.find(Part::name().eq("part 1")).await?;
    odm.update_many(Part::qty().gt(0), Part::qty().inc(1))
        .await?;
    odm.find(Part::id_field().eq(ObjectId::new())).await?;
    let report = db.explain_sent().await?;
    assert!(!report.is_clean(), "{report}");
    let scans: Vec<(&str, &str)> = report
        .scans()
        .map(|e| (e.command.as_str(), e.collection.as_str()))
        .collect();
    assert_eq!(scans, [("find", "parts"), ("update", "parts")], "{report}");
    let first = report.scans().next().unwrap();
    assert_eq!(first.query, doc! { "name": "part 1" });
    // ANCHOR_END: scan
    assert_eq!(report.explained[2].plan, Plan::Indexed(vec!["_id_".into()]));
    Ok(())
}
