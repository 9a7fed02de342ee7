//! Denormalized copies (seeds 000/001): filled on insert, cascaded on update, never left
//! different from their source.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use common::{sent, stored, stored_one};
use denorm::logs::{Host, LogMsg, LogSummary};
use denorm::parts::Part;
use denorm::products::{PartSummary, Product};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::TransactionMode;
use std::future::IntoFuture;

fn part(n: usize, product: Option<ObjectId>) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("{n:03}-aff-456"),
        name: format!("#{n} grommet"),
        qty: 94,
        product: product.map(Ref::new),
        product_name: String::new(),
        product_catalog_number: 0,
    }
}

fn summary(p: &Part) -> PartSummary {
    // The name is deliberately stale: the ODM takes the copy from the part.
    PartSummary {
        id: Ref::new(p.id),
        name: "stale".into(),
    }
}

fn product(n: i64, parts: &[&Part]) -> Product {
    Product {
        id: ObjectId::new(),
        name: format!("left-handed smoke shifter {n}"),
        manufacturer: "Acme Corp".into(),
        catalog_number: 1234 + n,
        parts: parts.iter().map(|p| summary(p)).collect(),
    }
}

/// The `(id, name)` of each summary of a stored product.
async fn product_names(db: &TestDb, id: ObjectId) -> Vec<(ObjectId, String)> {
    names_in(&stored_one(db, "products", id).await.unwrap())
}

fn names_in(raw: &Document) -> Vec<(ObjectId, String)> {
    raw.get_array("parts")
        .unwrap()
        .iter()
        .map(|s| {
            let s = s.as_document().unwrap();
            (
                s.get_object_id("id").unwrap(),
                s.get_str("name").unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn copies_are_filled_on_insert_with_one_query() -> odm::Result<()> {
    let db = common::db().await?;
    let parts: Vec<Part> = (0..5).map(|n| part(n, None)).collect();
    db.odm().insert_many(&parts).await?;
    db.commands().clear();

    let products: Vec<Product> = (0..3)
        .map(|n| product(n, &[&parts[n as usize], &parts[4]]))
        .collect();
    db.odm().insert_many(&products).await?;
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["find", "insert", "find"],
        "one find for the copies of every inserted product, the insert, one find re-reading \
         the parts in case a rename slipped in between"
    );
    let find = commands[0].command.as_ref().unwrap();
    assert_eq!(
        find.get_document("projection").unwrap(),
        &doc! {"_id": 1, "name": 1}
    );

    for raw in stored(&db, "products").await {
        for (id, name) in names_in(&raw) {
            let source = parts.iter().find(|p| p.id == id).unwrap();
            assert_eq!(
                name, source.name,
                "copied from the part, not the stale value"
            );
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_copy_of_a_missing_source_is_refused() -> odm::Result<()> {
    let db = common::db().await?;
    let ghost = part(9, None);
    let err = db
        .odm()
        .insert_one(&product(1, &[&ghost]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::DanglingReference { collection, target, .. } if collection == "products" && target == "parts"),
        "{err}"
    );
    assert!(stored(&db, "products").await.is_empty());
    Ok(())
}

#[tokio::test]
async fn renaming_a_part_updates_every_copy_in_one_update() -> odm::Result<()> {
    let db = common::db().await?;
    let parts: Vec<Part> = (0..3).map(|n| part(n, None)).collect();
    db.odm().insert_many(&parts).await?;
    let products: Vec<Product> = (0..4)
        .map(|n| product(n, &[&parts[0], &parts[(n % 2 + 1) as usize]]))
        .collect();
    db.odm().insert_many(&products).await?;
    db.odm().supports_transactions().await?;
    db.commands().clear();

    db.odm()
        .update_by_id::<Part>(parts[0].id, Part::name().set("#4 grommet, zinc"))
        .await?;
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["findAndModify", "update", "find"],
        "update, cascade, re-read to confirm"
    );
    let cascade = commands[1].command.as_ref().unwrap();
    let u = cascade.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap();
    assert_eq!(
        u.get_document("q").unwrap(),
        &doc! {"parts.id": {"$in": [parts[0].id]}}
    );
    assert_eq!(
        u.get_document("u").unwrap(),
        &doc! {"$set": {"parts.$[copy].name": "#4 grommet, zinc"}}
    );
    assert_eq!(
        u.get_array("arrayFilters").unwrap()[0]
            .as_document()
            .unwrap(),
        &doc! {"copy.id": {"$in": [parts[0].id]}}
    );

    for raw in stored(&db, "products").await {
        let names = names_in(&raw);
        assert_eq!(names[0], (parts[0].id, "#4 grommet, zinc".to_owned()));
        assert_ne!(
            names[1].1, "#4 grommet, zinc",
            "other parts' copies are untouched"
        );
    }
    Ok(())
}

#[tokio::test]
async fn an_update_that_touches_no_copied_field_sends_no_cascade() -> odm::Result<()> {
    let db = common::db().await?;
    let p = part(1, None);
    db.odm().insert_one(&p).await?;
    db.odm().insert_one(&product(1, &[&p])).await?;
    db.commands().clear();
    db.odm()
        .update_by_id::<Part>(p.id, Part::qty().inc(-1))
        .await?;
    assert_eq!(sent(&db), ["update"]);
    Ok(())
}

#[tokio::test]
async fn update_many_cascades_for_every_affected_source() -> odm::Result<()> {
    let db = common::db().await?;
    let parts: Vec<Part> = (0..4).map(|n| part(n, None)).collect();
    db.odm().insert_many(&parts).await?;
    db.odm()
        .insert_one(&product(1, &[&parts[0], &parts[1], &parts[2], &parts[3]]))
        .await?;
    db.odm().supports_transactions().await?;
    db.commands().clear();

    let res = db
        .odm()
        .update_many(
            Part::partno().is_in(["000-aff-456", "002-aff-456"]),
            Part::name().set("fan blade assembly"),
        )
        .await?;
    assert_eq!(res.modified_count, 2);
    // Both sources got the same new name: one cascade update serves both.
    assert_eq!(sent(&db), ["find", "update", "find", "update", "find"]);
    let names: Vec<String> = names_in(&stored(&db, "products").await[0])
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(
        names,
        [
            "fan blade assembly",
            "#1 grommet",
            "fan blade assembly",
            "#3 grommet"
        ]
    );
    Ok(())
}

#[tokio::test]
async fn one_to_many_copies_follow_the_product() -> odm::Result<()> {
    let db = common::db().await?;
    let shifter = Product {
        parts: vec![],
        ..product(1, &[])
    };
    db.odm().insert_one(&shifter).await?;
    let parts: Vec<Part> = (0..3).map(|n| part(n, Some(shifter.id))).collect();
    db.commands().clear();
    db.odm().insert_many(&parts).await?;
    assert_eq!(sent(&db), ["find", "insert", "find"]);
    for raw in stored(&db, "parts").await {
        assert_eq!(
            raw.get_str("product_name").unwrap(),
            "left-handed smoke shifter 1"
        );
        assert_eq!(raw.get_i64("product_catalog_number").unwrap(), 1235);
    }

    db.odm()
        .update_by_id::<Product>(
            shifter.id,
            Product::name()
                .set("right-handed smoke shifter")
                .and(Product::catalog_number().set(4321)),
        )
        .await?;
    for raw in stored(&db, "parts").await {
        assert_eq!(
            raw.get_str("product_name").unwrap(),
            "right-handed smoke shifter"
        );
        assert_eq!(raw.get_i64("product_catalog_number").unwrap(), 4321);
    }
    Ok(())
}

/// Fifty concurrent renames of one part (by default, no transaction: the re-read loop):
/// whatever order they land in, every copy ends equal to the part's final name.
#[tokio::test]
async fn concurrent_renames_never_leave_drift() -> odm::Result<()> {
    concurrent_renames(20, 50, TransactionMode::Never).await
}

/// `renames` concurrent renames of one part copied into `copies` products, in `mode`; every
/// copy must end equal to the part's final name.
async fn concurrent_renames(copies: i64, renames: usize, mode: TransactionMode) -> odm::Result<()> {
    let db = common::db().await?;
    let p = part(1, None);
    db.odm().insert_one(&p).await?;
    let products: Vec<Product> = (0..copies).map(|n| product(n, &[&p])).collect();
    db.odm().insert_many(&products).await?;
    let odm = db.odm();
    let renames = (0..renames).map(|i| {
        let id = p.id;
        async move {
            odm.update_by_id::<Part>(id, Part::name().set(format!("name {i}")))
                .transaction(mode)
                .await
        }
    });
    for r in futures_util::future::join_all(renames).await {
        r?;
    }
    let final_name = stored_one(&db, "parts", p.id)
        .await
        .unwrap()
        .get_str("name")
        .unwrap()
        .to_owned();
    for raw in stored(&db, "products").await {
        assert_eq!(names_in(&raw)[0].1, final_name);
    }
    Ok(())
}

#[tokio::test]
async fn the_cascade_plan_says_what_each_change_does() {
    let plan = odm::denormalize::cascade_plan_in::<Part>(&common::catalog());
    let printed = plan.to_string();
    assert!(printed.contains("when `name` changes"), "{printed}");
    assert!(
        printed.contains("update_many products (Product)"),
        "{printed}"
    );
    assert!(
        printed.contains("filter  { parts.id: { $in: <ids> } }"),
        "{printed}"
    );
    assert!(printed.contains("index   parts.id_1"), "{printed}");
    let product_plan = odm::denormalize::cascade_plan_in::<Product>(&common::catalog()).to_string();
    assert!(
        product_plan.contains("when `catalog_number` changes"),
        "{product_plan}"
    );
    assert!(
        product_plan.contains("filter  { product: { $in: <ids> } }"),
        "{product_plan}"
    );
    let logs = odm::denormalize::cascade_plan_in::<LogMsg>(&common::catalog()).to_string();
    assert!(
        logs.contains("on insert: push a summary onto hosts.logmsgs through `host`"),
        "{logs}"
    );
}

fn at(ms: i64) -> DateTime {
    DateTime::from_millis(1_396_000_000_000 + ms)
}

#[tokio::test]
async fn log_messages_copy_their_host_address_and_follow_it() -> odm::Result<()> {
    let db = common::db().await?;
    let goofy = Host {
        id: ObjectId::new(),
        name: "goofy.example.com".into(),
        ipaddr: "127.66.66.66".into(),
        logmsgs: vec![],
    };
    db.odm().insert_one(&goofy).await?;
    let msg = LogMsg {
        id: ObjectId::new(),
        time: at(0),
        message: "cpu is on fire!".into(),
        host: Ref::new(goofy.id),
        ipaddr: String::new(),
    };
    db.commands().clear();
    db.odm().insert_one(&msg).await?;
    assert_eq!(
        sent(&db),
        ["find", "insert", "update", "find"],
        "copy the address, insert, push onto the host, re-read the host's address"
    );
    let raw = stored_one(&db, "logmsg", msg.id).await.unwrap();
    assert_eq!(raw.get_str("ipaddr").unwrap(), "127.66.66.66");
    let by_ip = db.odm().find(LogMsg::ipaddr().eq("127.66.66.66")).await?;
    assert_eq!(by_ip.len(), 1, "one query by the copied field");

    db.odm()
        .update_by_id::<Host>(goofy.id, Host::ipaddr().set("127.0.0.9"))
        .await?;
    assert_eq!(
        stored_one(&db, "logmsg", msg.id)
            .await
            .unwrap()
            .get_str("ipaddr")
            .unwrap(),
        "127.0.0.9"
    );
    Ok(())
}

/// The seed's "keep the last 1000 messages on the host", with N = 100: after 2,000 inserts in
/// random time order, each host's array is the last 100 of its messages by time.
#[tokio::test]
async fn the_host_keeps_its_latest_messages_in_time_order() -> odm::Result<()> {
    let db = common::db().await?;
    let hosts: Vec<Host> = (0..3)
        .map(|i| Host {
            id: ObjectId::new(),
            name: format!("host{i}"),
            ipaddr: format!("10.0.0.{i}"),
            logmsgs: vec![],
        })
        .collect();
    db.odm().insert_many(&hosts).await?;
    let mut rng = 0x5eed_u64;
    let mut next = |n: u64| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) % n
    };
    let msgs: Vec<LogMsg> = (0..2000)
        .map(|i| {
            let host = &hosts[next(3) as usize];
            LogMsg {
                id: ObjectId::new(),
                time: at(next(1_000_000_000) as i64),
                message: format!("message {i}"),
                host: Ref::new(host.id),
                ipaddr: String::new(),
            }
        })
        .collect();
    // One at a time, as a monitoring system would, several at once.
    let odm = db.odm();
    for chunk in msgs.chunks(8) {
        let inserts = chunk.iter().map(|m| odm.insert_one(m).into_future());
        for r in futures_util::future::join_all(inserts).await {
            r?;
        }
    }
    for host in &hosts {
        let mut mine: Vec<&LogMsg> = msgs.iter().filter(|m| *m.host.id() == host.id).collect();
        mine.sort_by_key(|m| m.time);
        let expected: Vec<LogSummary> = mine[mine.len() - 100..]
            .iter()
            .map(|m| LogSummary {
                time: m.time,
                message: m.message.clone(),
            })
            .collect();
        let stored_host = db.odm().get::<Host>(host.id).await?.unwrap();
        assert_eq!(stored_host.logmsgs, expected, "{}", host.name);
    }
    assert_eq!(
        stored(&db, "logmsg").await.len(),
        2000,
        "every message is still in its own collection"
    );
    let raw: Vec<Bson> = stored_one(&db, "hosts", hosts[0].id)
        .await
        .unwrap()
        .get_array("logmsgs")
        .unwrap()
        .clone();
    assert_eq!(raw.len(), 100);
    Ok(())
}

/// The array is sorted by the summaries' own copy of the sort key (`time`, among the copied
/// `fields`, which the derive requires): after inserts in random time order, the stored array,
/// read with the raw driver, is exactly the latest 100 messages, oldest first.
#[tokio::test]
async fn the_stored_latest_array_is_the_latest_n_by_the_copied_sort_key() -> odm::Result<()> {
    let db = common::db().await?;
    let host = Host {
        id: ObjectId::new(),
        name: "goofy".into(),
        ipaddr: "10.0.0.1".into(),
        logmsgs: vec![],
    };
    db.odm().insert_one(&host).await?;
    // A fixed permutation of 250 distinct times (37 is coprime with 250): random order,
    // deterministic run.
    let msgs: Vec<LogMsg> = (0..250_i64)
        .map(|i| LogMsg {
            id: ObjectId::new(),
            time: at((i * 37) % 250 * 1000),
            message: format!("message {i}"),
            host: Ref::new(host.id),
            ipaddr: String::new(),
        })
        .collect();
    for m in &msgs {
        db.odm().insert_one(m).await?;
    }
    let mut expected: Vec<&LogMsg> = msgs.iter().collect();
    expected.sort_by_key(|m| m.time);
    let expected: Vec<(DateTime, String)> = expected[150..]
        .iter()
        .map(|m| (m.time, m.message.clone()))
        .collect();
    let raw = stored_one(&db, "hosts", host.id).await.unwrap();
    let stored: Vec<(DateTime, String)> = raw
        .get_array("logmsgs")
        .unwrap()
        .iter()
        .map(|s| {
            let s = s.as_document().unwrap();
            (
                *s.get_datetime("time").unwrap(),
                s.get_str("message").unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(stored.len(), 100);
    assert_eq!(stored, expected);
    Ok(())
}

/// In a transaction (retried on write conflicts) concurrent renames never leave drift either,
/// and readers never see a stale copy.
#[tokio::test]
async fn concurrent_renames_in_transactions_never_leave_drift_either() -> odm::Result<()> {
    concurrent_renames(10, 30, TransactionMode::Always).await
}

#[tokio::test]
async fn deleting_a_part_removes_its_summaries() -> odm::Result<()> {
    let db = common::db().await?;
    let parts: Vec<Part> = (0..2).map(|n| part(n, None)).collect();
    db.odm().insert_many(&parts).await?;
    db.odm()
        .insert_one(&product(1, &[&parts[0], &parts[1]]))
        .await?;
    db.odm().delete_one(Part::id().eq(parts[0].id)).await?;
    let left = names_in(&stored(&db, "products").await[0]);
    assert_eq!(left, [(parts[1].id, "#1 grommet".to_owned())]);
    Ok(())
}

/// The seed looks the host up by its address, projecting only `_id`, before writing.
#[tokio::test]
async fn a_host_is_found_by_its_natural_key_projecting_only_its_id() -> odm::Result<()> {
    let db = common::db().await?;
    let goofy = Host {
        id: ObjectId::new(),
        name: "goofy.example.com".into(),
        ipaddr: "127.66.66.66".into(),
        logmsgs: vec![],
    };
    db.odm().insert_one(&goofy).await?;
    db.commands().clear();
    let id = db.odm().find_id(Host::ipaddr().eq("127.66.66.66")).await?;
    assert_eq!(id, Some(goofy.id));
    let find = common::last_command(&db, "find");
    assert_eq!(find.get_document("projection").unwrap(), &doc! {"_id": 1});
    assert_eq!(db.odm().find_id(Host::ipaddr().eq("10.9.9.9")).await?, None);
    Ok(())
}

/// Copies corrupted behind the ODM's back are found by the sweep and repaired.
#[tokio::test]
async fn the_sweep_finds_and_repairs_every_drifted_copy() -> odm::Result<()> {
    let db = common::db().await?;
    let shifter = Product {
        parts: vec![],
        ..product(1, &[])
    };
    db.odm().insert_one(&shifter).await?;
    let parts: Vec<Part> = (0..4).map(|n| part(n, Some(shifter.id))).collect();
    db.odm().insert_many(&parts).await?;
    let products: Vec<Product> = (2..6)
        .map(|n| product(n, &[&parts[0], &parts[1], &parts[2]]))
        .collect();
    db.odm().insert_many(&products).await?;
    assert!(db.odm().verify_copies().await?.is_consistent());

    let raw_products = db.raw().collection::<Document>("products");
    raw_products
        .update_one(
            doc! {"_id": products[0].id},
            doc! {"$set": {"parts.1.name": "wrong"}},
        )
        .await?;
    raw_products
        .update_one(
            doc! {"_id": products[3].id},
            doc! {"$set": {"parts.0.name": "wrong", "parts.2.name": "also wrong"}},
        )
        .await?;
    db.raw()
        .collection::<Document>("parts")
        .update_one(
            doc! {"_id": parts[3].id},
            doc! {"$set": {"product_name": "stale"}},
        )
        .await?;
    // A part deleted behind the ODM's back leaves a summary of nothing.
    db.raw()
        .collection::<Document>("parts")
        .delete_one(doc! {"_id": parts[2].id})
        .await?;

    let report = db.odm().verify_copies().batch_size(2).await?;
    let mut paths: Vec<(String, String)> = report
        .issues
        .iter()
        .map(|i| (i.collection.to_owned(), i.path.clone()))
        .collect();
    paths.sort();
    // One wrong name, one wrong name in another product, four summaries of the deleted part,
    // one stale product name.
    assert_eq!(report.issues.len(), 1 + 1 + 4 + 1, "{report}");
    assert_eq!(report.issues.iter().filter(|i| i.source_missing).count(), 4);
    assert!(paths.contains(&("parts".to_owned(), "product_name".to_owned())));
    assert_eq!(report.repairs, 0, "verify alone writes nothing");

    let repaired = db.odm().verify_copies().repair(true).await?;
    assert!(repaired.repairs >= 7, "{repaired}");
    assert!(db.odm().verify_copies().await?.is_consistent());
    for raw in stored(&db, "products").await {
        if raw.get_object_id("_id").unwrap() == shifter.id {
            continue;
        }
        let names = names_in(&raw);
        assert_eq!(names.len(), 2, "the summary of the deleted part was pulled");
        for (id, name) in names {
            assert_eq!(name, parts.iter().find(|p| p.id == id).unwrap().name);
        }
    }
    assert_eq!(
        stored_one(&db, "parts", parts[3].id)
            .await
            .unwrap()
            .get_str("product_name")
            .unwrap(),
        "left-handed smoke shifter 1"
    );
    Ok(())
}

#[tokio::test]
async fn the_audit_counts_reads_against_cascade_writes() -> odm::Result<()> {
    let db = common::db().await?;
    let p = part(1, None);
    db.odm().insert_one(&p).await?;
    db.odm().insert_one(&product(1, &[&p])).await?;
    let before = odm::denormalize::audit();
    let row = |r: &odm::denormalize::AuditReport| {
        r.rows
            .iter()
            .find(|r| r.collection == "products" && r.path == "parts")
            .map_or((0, 0), |r| (r.reads, r.writes))
    };
    let (reads0, writes0) = row(&before);
    for i in 0..3 {
        db.odm()
            .update_by_id::<Part>(p.id, Part::name().set(format!("n{i}")))
            .await?;
    }
    db.odm().find::<Product>(Filter::all()).await?;
    let after = odm::denormalize::audit();
    let (reads, writes) = row(&after);
    // Other tests in this process count too: compare increments, at least.
    assert!(writes - writes0 >= 3, "{after}");
    assert!(reads - reads0 >= 1, "{after}");
    assert!(after.to_string().contains("products.parts:"), "{after}");
    Ok(())
}

#[tokio::test]
async fn a_cascade_in_a_transaction_commits_both_sides_together() -> odm::Result<()> {
    let db = common::db().await?;
    let p = part(1, None);
    db.odm().insert_one(&p).await?;
    db.odm().insert_one(&product(1, &[&p])).await?;
    db.odm().supports_transactions().await?;
    db.commands().clear();
    db.odm()
        .update_by_id::<Part>(p.id, Part::name().set("fan blade assembly"))
        .transaction(TransactionMode::Auto)
        .await?;
    assert_eq!(sent(&db), ["findAndModify", "update", "commitTransaction"]);
    assert_eq!(
        names_in(&stored(&db, "products").await[0])[0].1,
        "fan blade assembly"
    );
    Ok(())
}

#[tokio::test]
async fn deleting_a_product_clears_the_copies_taken_through_the_nullified_reference(
) -> odm::Result<()> {
    let db = common::db().await?;
    let shifter = Product {
        parts: vec![],
        ..product(1, &[])
    };
    db.odm().insert_one(&shifter).await?;
    let p = part(1, Some(shifter.id));
    db.odm().insert_one(&p).await?;
    assert_eq!(
        stored_one(&db, "parts", p.id)
            .await
            .unwrap()
            .get_str("product_name")
            .unwrap(),
        "left-handed smoke shifter 1"
    );
    db.odm().delete_one(Product::id().eq(shifter.id)).await?;
    let raw = stored_one(&db, "parts", p.id).await.unwrap();
    assert_eq!(raw.get("product"), Some(&Bson::Null));
    assert!(
        !raw.contains_key("product_name") && !raw.contains_key("product_catalog_number"),
        "{raw}"
    );
    let back = db.odm().get::<Part>(p.id).await?.unwrap();
    assert_eq!(
        (back.product_name.as_str(), back.product_catalog_number),
        ("", 0)
    );
    Ok(())
}

/// The source update and its cascade can run inside the caller's transaction: aborting it
/// takes back both.
#[tokio::test]
async fn a_cascade_joins_the_callers_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    let p = part(1, None);
    db.odm().insert_one(&p).await?;
    db.odm().insert_one(&product(1, &[&p])).await?;
    let mut session = db.odm().start_session().await?;
    session.start_transaction().await?;
    db.odm()
        .update_by_id::<Part>(p.id, Part::name().set("inside"))
        .session(&mut session)
        .await?;
    let seen = db
        .odm()
        .find::<Product>(Filter::all())
        .session(&mut session)
        .await?;
    assert_eq!(
        seen[0].parts[0].name, "inside",
        "the transaction sees its cascade"
    );
    session.abort_transaction().await?;
    assert_eq!(
        stored_one(&db, "parts", p.id)
            .await
            .unwrap()
            .get_str("name")
            .unwrap(),
        "#1 grommet"
    );
    assert_eq!(
        names_in(&stored(&db, "products").await[0])[0].1,
        "#1 grommet"
    );

    session.start_transaction().await?;
    db.odm()
        .update_by_id::<Part>(p.id, Part::name().set("committed"))
        .session(&mut session)
        .await?;
    session.commit_transaction().await?;
    assert_eq!(
        names_in(&stored(&db, "products").await[0])[0].1,
        "committed"
    );
    Ok(())
}

// Copies written by updates, replacements and find-and-modify.

/// A part and a product holding it, inserted; the command log cleared.
async fn shifter_with_parts(db: &TestDb, n: usize) -> odm::Result<(Vec<Part>, Product)> {
    let parts: Vec<Part> = (0..n).map(|i| part(i, None)).collect();
    db.odm().insert_many(&parts).await?;
    let shifter = product(1, &[&parts[0]]);
    db.odm().insert_one(&shifter).await?;
    db.commands().clear();
    Ok((parts, shifter))
}

#[tokio::test]
async fn a_pushed_summary_takes_its_copied_fields_from_the_part() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, shifter) = shifter_with_parts(&db, 3).await?;
    db.odm()
        .update_by_id::<Product>(shifter.id, Product::parts().push(summary(&parts[2])))
        .await?;
    assert_eq!(
        sent(&db),
        ["find", "update", "find"],
        "read the part's name, push, re-read the part"
    );
    assert_eq!(
        product_names(&db, shifter.id).await,
        [
            (parts[0].id, "#0 grommet".to_owned()),
            (parts[2].id, "#2 grommet".to_owned())
        ],
        "the caller's stale name was replaced by the part's"
    );

    // Setting the whole array takes every summary's name too.
    db.odm()
        .update_by_id::<Product>(
            shifter.id,
            Product::parts().set(vec![summary(&parts[1]), summary(&parts[0])]),
        )
        .await?;
    assert_eq!(
        product_names(&db, shifter.id).await,
        [
            (parts[1].id, "#1 grommet".to_owned()),
            (parts[0].id, "#0 grommet".to_owned())
        ]
    );
    Ok(())
}

#[tokio::test]
async fn pushing_a_summary_of_a_missing_part_writes_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    let (_, shifter) = shifter_with_parts(&db, 1).await?;
    let ghost = part(9, None);
    let err = db
        .odm()
        .update_by_id::<Product>(shifter.id, Product::parts().push(summary(&ghost)))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::DanglingReference { collection, path, target, missing, .. }
            if collection == "products" && path == "parts" && target == "parts"
                && missing.contains(&ghost.id.to_hex())),
        "{err}"
    );
    assert_eq!(sent(&db), ["find"], "the update was never sent");
    assert_eq!(product_names(&db, shifter.id).await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn moving_a_part_to_another_product_retakes_its_copies() -> odm::Result<()> {
    let db = common::db().await?;
    let shifter = product(1, &[]);
    let blower = product(2, &[]);
    db.odm().insert_many([&shifter, &blower]).await?;
    let grommet = part(0, Some(shifter.id));
    db.odm().insert_one(&grommet).await?;
    db.commands().clear();

    db.odm()
        .update_by_id::<Part>(grommet.id, Part::product().set(Some(Ref::new(blower.id))))
        .await?;
    assert_eq!(
        sent(&db),
        ["find", "update", "find"],
        "read the new product's copied fields, update, re-read the product"
    );
    let raw = stored_one(&db, "parts", grommet.id).await.unwrap();
    assert_eq!(
        raw.get_str("product_name").unwrap(),
        "left-handed smoke shifter 2"
    );
    assert_eq!(raw.get_i64("product_catalog_number").unwrap(), 1236);

    // Clearing the reference clears the copies it carried.
    db.odm()
        .update_by_id::<Part>(grommet.id, Part::product().set(None))
        .await?;
    let raw = stored_one(&db, "parts", grommet.id).await.unwrap();
    assert_eq!(raw.get("product"), Some(&Bson::Null));
    assert_eq!(
        raw.get("product_name"),
        None,
        "unset, as the nullify rule does"
    );
    let read = db.odm().get::<Part>(grommet.id).await?.unwrap();
    assert_eq!(
        (
            read.product,
            read.product_name.as_str(),
            read.product_catalog_number
        ),
        (None, "", 0),
        "still decodes (serde defaults)"
    );
    Ok(())
}

#[tokio::test]
async fn writes_inside_a_copy_are_refused_before_sending() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, shifter) = shifter_with_parts(&db, 1).await?;
    // `Part::product_name().set(..)` does not compile (tests/ui/denormalize); paths built by
    // hand are refused at run time.
    let attempts = [
        db.odm()
            .update_by_id::<Part>(
                parts[0].id,
                Field::<Part, String>::at_path("product_name")
                    .unwrap()
                    .set("hand-made"),
            )
            .into_future(),
        db.odm()
            .update_many::<Part>(
                Filter::all(),
                Field::<Part, i64>::at_path("product_catalog_number")
                    .unwrap()
                    .inc(1),
            )
            .into_future(),
    ];
    for attempt in attempts {
        let err = attempt.await.unwrap_err();
        assert!(
            matches!(&err, odm::Error::CopyWrite { collection, copied_from, .. }
                if collection == "parts" && copied_from == "products"),
            "{err}"
        );
        assert!(err.to_string().contains("update `products`"), "{err}");
    }
    let err = db
        .odm()
        .update_by_id::<Host>(
            ObjectId::new(),
            Field::<Host, Vec<LogSummary>>::at_path("logmsgs")
                .unwrap()
                .set(vec![]),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::CopyWrite { path, .. } if path == "logmsgs"),
        "{err}"
    );
    let err = db
        .odm()
        .update_by_id::<Product>(
            shifter.id,
            Field::<Product, String>::at_path("parts.0.name")
                .unwrap()
                .set("hand-made"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::CopyWrite { path, .. } if path == "parts.0.name"),
        "{err}"
    );
    assert!(sent(&db).is_empty(), "nothing was sent");
    assert_eq!(
        product_names(&db, shifter.id).await,
        [(parts[0].id, "#0 grommet".to_owned())]
    );
    Ok(())
}

#[tokio::test]
async fn replacing_a_part_cascades_its_new_name() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, shifter) = shifter_with_parts(&db, 1).await?;
    let renamed = Part {
        name: "fan blade assembly".into(),
        ..parts[0].clone()
    };
    db.odm().replace_one(&renamed).await?;
    assert_eq!(
        sent(&db),
        ["findAndModify", "update", "find"],
        "replace returning the old name, one cascade update, re-read the part"
    );
    assert_eq!(
        product_names(&db, shifter.id).await,
        [(parts[0].id, "fan blade assembly".to_owned())]
    );

    // A replacement that keeps the copied fields sends no cascade.
    db.commands().clear();
    db.odm()
        .replace_one(&Part {
            qty: 3,
            ..renamed.clone()
        })
        .await?;
    assert_eq!(sent(&db), ["findAndModify"]);
    Ok(())
}

#[tokio::test]
async fn a_replaced_product_takes_its_summaries_from_the_parts() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, shifter) = shifter_with_parts(&db, 2).await?;
    db.odm()
        .replace_one(&Product {
            id: shifter.id,
            ..product(1, &[&parts[1], &parts[0]])
        })
        .await?;
    assert_eq!(
        sent(&db),
        ["find", "findAndModify", "find"],
        "read the parts' names; replace (parts copy from products: a find-and-modify that \
         returns the copied fields as they were, unchanged here, so no cascade); re-read"
    );
    assert_eq!(
        product_names(&db, shifter.id).await,
        [
            (parts[1].id, "#1 grommet".to_owned()),
            (parts[0].id, "#0 grommet".to_owned())
        ]
    );
    Ok(())
}

#[tokio::test]
async fn find_one_and_update_of_a_part_cascades_too() -> odm::Result<()> {
    let db = common::db().await?;
    let (parts, shifter) = shifter_with_parts(&db, 1).await?;
    let old = db
        .odm()
        .find_one_and_update(
            Part::id().eq(parts[0].id),
            Part::name().set("fan blade assembly"),
        )
        .await?
        .unwrap();
    assert_eq!(old.name, "#0 grommet", "the document as it was");
    assert_eq!(
        sent(&db),
        ["findAndModify", "find", "update", "find"],
        "update, read the new name, cascade, re-read"
    );
    assert_eq!(
        product_names(&db, shifter.id).await,
        [(parts[0].id, "fan blade assembly".to_owned())]
    );

    db.commands().clear();
    let new = db
        .odm()
        .find_one_and_update(Part::id().eq(parts[0].id), Part::name().set("#0 washer"))
        .return_new()
        .await?
        .unwrap();
    assert_eq!(new.name, "#0 washer");
    assert_eq!(
        sent(&db),
        ["findAndModify", "update", "find"],
        "the returned document carries the new name"
    );
    assert_eq!(
        product_names(&db, shifter.id).await,
        [(parts[0].id, "#0 washer".to_owned())]
    );
    Ok(())
}

/// An `Odm` whose next `find` (once armed) is followed by a rename of `part` through another
/// client: see [`common::act_after_next_find`].
async fn rename_after_next_find(
    db: &TestDb,
    part: ObjectId,
    name: &'static str,
) -> odm::Result<(Odm, std::sync::Arc<std::sync::atomic::AtomicBool>)> {
    common::act_after_next_find(db, move |database| async move {
        Odm::new(database)
            .with_catalog(common::catalog())
            .update_by_id::<Part>(part, Part::name().set(name))
            .await
            .expect("the concurrent rename");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_between_reading_a_source_and_writing_its_copy_is_caught() -> odm::Result<()> {
    use std::sync::atomic::Ordering;
    let db = common::db().await?;
    let parts: Vec<Part> = (0..2).map(|i| part(i, None)).collect();
    db.odm().insert_many(&parts).await?;

    // Insert: the product's summary is read as "#0 grommet", then the part is renamed (and
    // the rename's cascade finds no product yet), then the product is inserted.
    let (odm, armed) = rename_after_next_find(&db, parts[0].id, "fan blade assembly").await?;
    let shifter = product(1, &[&parts[0]]);
    armed.store(true, Ordering::SeqCst);
    odm.insert_one(&shifter).await?;
    assert!(!armed.load(Ordering::SeqCst), "the rename ran");
    assert_eq!(
        product_names(&db, shifter.id).await,
        [(parts[0].id, "fan blade assembly".to_owned())],
        "the re-read after the insert saw the rename and fixed the copy"
    );

    // The same race for a pushed summary.
    let (odm, armed) = rename_after_next_find(&db, parts[1].id, "#1 washer").await?;
    armed.store(true, Ordering::SeqCst);
    odm.update_by_id::<Product>(shifter.id, Product::parts().push(summary(&parts[1])))
        .await?;
    assert_eq!(
        product_names(&db, shifter.id).await[1],
        (parts[1].id, "#1 washer".to_owned())
    );
    Ok(())
}

// Latest-N arrays when their sources change or go.

/// Two hosts; `n` messages on the first at times 0..n (ms), inserted oldest first.
async fn hosts_with_messages(db: &TestDb, n: i64) -> odm::Result<(Host, Host, Vec<LogMsg>)> {
    let host = |i: u8| Host {
        id: ObjectId::new(),
        name: format!("host{i}.example.com"),
        ipaddr: format!("127.66.66.{i}"),
        logmsgs: vec![],
    };
    let (goofy, mickey) = (host(1), host(2));
    db.odm().insert_many([&goofy, &mickey]).await?;
    let msgs: Vec<LogMsg> = (0..n)
        .map(|i| LogMsg {
            id: ObjectId::new(),
            time: at(i),
            message: format!("message {i}"),
            host: Ref::new(goofy.id),
            ipaddr: String::new(),
        })
        .collect();
    db.odm().insert_many(&msgs).await?;
    db.commands().clear();
    Ok((goofy, mickey, msgs))
}

/// The `_id`s in a host's stored `logmsgs`, in stored order.
async fn latest_ids(db: &TestDb, host: ObjectId) -> Vec<ObjectId> {
    stored_one(db, "hosts", host)
        .await
        .unwrap()
        .get_array("logmsgs")
        .unwrap()
        .iter()
        .map(|s| s.as_document().unwrap().get_object_id("_id").unwrap())
        .collect()
}

fn ids_of(msgs: &[&LogMsg]) -> Vec<ObjectId> {
    msgs.iter().map(|m| m.id).collect()
}

#[tokio::test]
async fn deleting_a_message_takes_it_off_its_host_and_brings_in_the_next_latest() -> odm::Result<()>
{
    let db = common::db().await?;
    let (goofy, _, msgs) = hosts_with_messages(&db, 103).await?;
    let all: Vec<&LogMsg> = msgs.iter().collect();
    assert_eq!(latest_ids(&db, goofy.id).await, ids_of(&all[3..]));

    // Delete the newest and one in the middle: the two before the window move in.
    db.odm()
        .delete_many(LogMsg::id().is_in([msgs[102].id, msgs[50].id]))
        .await?;
    let mut expected: Vec<&LogMsg> = all[1..102].to_vec();
    expected.retain(|m| m.id != msgs[50].id);
    assert_eq!(latest_ids(&db, goofy.id).await, ids_of(&expected));
    let names = sent(&db);
    assert!(
        names.ends_with(&[
            "aggregate".to_owned(),
            "update".to_owned(),
            "commitTransaction".to_owned()
        ]) || names.ends_with(&["aggregate".to_owned(), "update".to_owned()]),
        "recompute the host's array after the delete: {names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| *n == "aggregate").count(),
        1,
        "one aggregate for every host concerned: {names:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_message_moved_in_time_or_to_another_host_moves_in_the_arrays() -> odm::Result<()> {
    let db = common::db().await?;
    let (goofy, mickey, msgs) = hosts_with_messages(&db, 101).await?;
    let all: Vec<&LogMsg> = msgs.iter().collect();

    // The newest is moved back in time, out of the window: the oldest comes back.
    db.odm()
        .update_by_id::<LogMsg>(msgs[100].id, LogMsg::time().set(at(-1)))
        .await?;
    assert_eq!(latest_ids(&db, goofy.id).await, ids_of(&all[0..100]));
    assert_eq!(
        sent(&db),
        [
            "find",
            "update",
            "hello",
            "aggregate",
            "update",
            "commitTransaction"
        ],
        "the host before, the update, then (after asking once whether the deployment has \
         transactions) the host's array recomputed in a transaction"
    );

    // A new text is copied into the summary.
    db.odm()
        .update_by_id::<LogMsg>(msgs[99].id, LogMsg::message().set("cpu is on fire!"))
        .await?;
    let host = db.odm().get::<Host>(goofy.id).await?.unwrap();
    assert_eq!(host.logmsgs[99].message, "cpu is on fire!");

    // Moved to another host: off the first host's array, onto the second's.
    db.odm()
        .update_by_id::<LogMsg>(msgs[99].id, LogMsg::host().set(Ref::new(mickey.id)))
        .await?;
    let mut expected = all[0..99].to_vec();
    expected.insert(0, all[100]);
    assert_eq!(latest_ids(&db, goofy.id).await, ids_of(&expected));
    assert_eq!(latest_ids(&db, mickey.id).await, [msgs[99].id]);
    Ok(())
}

#[tokio::test]
async fn a_replaced_message_is_summarized_anew() -> odm::Result<()> {
    let db = common::db().await?;
    let (goofy, _, msgs) = hosts_with_messages(&db, 3).await?;
    db.odm()
        .replace_one(&LogMsg {
            message: "disk is full".into(),
            ..msgs[1].clone()
        })
        .await?;
    let host = db.odm().get::<Host>(goofy.id).await?.unwrap();
    let texts: Vec<&str> = host.logmsgs.iter().map(|s| s.message.as_str()).collect();
    assert_eq!(texts, ["message 0", "disk is full", "message 2"]);
    Ok(())
}

#[tokio::test]
async fn the_sweep_finds_and_repairs_drifted_latest_arrays() -> odm::Result<()> {
    let db = common::db().await?;
    let (goofy, mickey, msgs) = hosts_with_messages(&db, 5).await?;
    let all: Vec<&LogMsg> = msgs.iter().collect();
    // Written behind the ODM's back: a message deleted without taking its summary off the
    // host, and a stray summary pushed onto a host that has no messages.
    db.raw()
        .collection::<Document>("logmsg")
        .delete_one(doc! { "_id": msgs[4].id })
        .await?;
    db.raw()
        .collection::<Document>("hosts")
        .update_one(
            doc! { "_id": mickey.id },
            doc! { "$push": { "logmsgs": { "_id": ObjectId::new(), "time": at(9), "message": "?" } } },
        )
        .await?;
    let report = db.odm().verify_copies().of::<Host>().await?;
    let mut drifted: Vec<&Bson> = report.issues.iter().map(|i| &i.id).collect();
    drifted.sort_by_key(|b| b.to_string());
    let mut want = [Bson::ObjectId(goofy.id), Bson::ObjectId(mickey.id)];
    want.sort_by_key(|b| b.to_string());
    assert_eq!(drifted, want.iter().collect::<Vec<_>>(), "{report}");
    assert_eq!(report.repairs, 0);

    let report = db.odm().verify_copies().of::<Host>().repair(true).await?;
    assert_eq!(report.repairs, 2, "{report}");
    assert_eq!(latest_ids(&db, goofy.id).await, ids_of(&all[..4]));
    assert!(latest_ids(&db, mickey.id).await.is_empty());
    assert!(db.odm().verify_copies().await?.is_consistent());
    Ok(())
}

#[tokio::test]
async fn a_reassigned_task_takes_its_new_owners_name() -> odm::Result<()> {
    use denorm::tasks::{Person, Task};
    let db = common::db().await?;
    let person = |name: &str| Person {
        id: ObjectId::new(),
        name: name.into(),
        tasks: vec![],
    };
    let (kate, bob) = (person("Kate Monster"), person("Bob Builder"));
    db.odm().insert_many([&kate, &bob]).await?;
    let task = Task {
        id: ObjectId::new(),
        description: "Write lesson plan".into(),
        due_date: at(0),
        owner: Ref::new(kate.id),
        owner_name: String::new(),
    };
    db.odm().insert_one(&task).await?;
    db.odm()
        .update_by_id::<Person>(kate.id, Person::tasks().push(Ref::new(task.id)))
        .await?;
    let raw = stored_one(&db, "tasks", task.id).await.unwrap();
    assert_eq!(raw.get_str("owner_name").unwrap(), "Kate Monster");

    db.odm()
        .reassign(Task::owner(), task.id, bob.id)
        .transaction(TransactionMode::Never)
        .await?;
    let raw = stored_one(&db, "tasks", task.id).await.unwrap();
    assert_eq!(raw.get_str("owner_name").unwrap(), "Bob Builder");
    assert_eq!(raw.get_object_id("owner").unwrap(), bob.id);
    let bob_raw = stored_one(&db, "people", bob.id).await.unwrap();
    assert_eq!(
        bob_raw.get_array("tasks").unwrap(),
        &vec![Bson::ObjectId(task.id)]
    );
    assert!(db.odm().verify_copies().await?.is_consistent());

    // In a transaction as well.
    db.odm()
        .reassign(Task::owner(), task.id, kate.id)
        .transaction(TransactionMode::Auto)
        .await?;
    let raw = stored_one(&db, "tasks", task.id).await.unwrap();
    assert_eq!(raw.get_str("owner_name").unwrap(), "Kate Monster");
    Ok(())
}

#[tokio::test]
async fn deleting_an_author_clears_an_optional_cached_name_and_refuses_a_required_one(
) -> odm::Result<()> {
    use denorm::books::{Author, AuthorName, Book};
    let db = common::db().await?;
    let author = |id: i32, first: &str, last: &str| Author {
        id,
        first_name: first.into(),
        last_name: last.into(),
    };
    let name = |a: &Author| AuthorName {
        id: Ref::new(a.id),
        first_name: String::new(),
        last_name: String::new(),
    };
    let (kristina, mike) = (
        author(1, "Kristina", "Chodorow"),
        author(2, "Mike", "Dirolf"),
    );
    db.odm().insert_many([&kristina, &mike]).await?;
    let book = Book {
        id: 1,
        title: "MongoDB: The Definitive Guide".into(),
        author: name(&kristina),
        co_author: Some(name(&mike)),
    };
    db.odm().insert_one(&book).await?;
    let raw = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(
        raw.get_document("co_author")
            .unwrap()
            .get_str("last_name")
            .unwrap(),
        "Dirolf"
    );

    // The co-author may be absent: deleting him clears the cached name.
    assert_eq!(db.odm().delete_one(Author::id().eq(2)).await?, 1);
    let raw = stored_one(&db, "books", 1).await.unwrap();
    assert_eq!(raw.get("co_author"), Some(&Bson::Null));
    assert_eq!(db.odm().get::<Book>(1).await?.unwrap().co_author, None);

    // The author may not: the delete is refused, nothing is written.
    let err = db.odm().delete_one(Author::id().eq(1)).await.unwrap_err();
    assert!(
        matches!(&err, odm::Error::DeleteRestricted(r)
            if r.referenced_by == "books" && r.path == "author.id" && r.count == 1),
        "{err}"
    );
    assert!(stored_one(&db, "authors", 1).await.is_some());
    assert_eq!(
        stored_one(&db, "books", 1)
            .await
            .unwrap()
            .get_document("author")
            .unwrap()
            .get_str("first_name")
            .unwrap(),
        "Kristina"
    );

    // Deleted behind the ODM's back, the required summary is reported, and left for the
    // application to decide: setting it to null would make the book undecodable.
    db.raw()
        .collection::<Document>("authors")
        .delete_one(doc! { "_id": 1 })
        .await?;
    let report = db.odm().verify_copies().of::<Book>().repair(true).await?;
    assert!(
        report
            .issues
            .iter()
            .all(|i| i.source_missing && i.path.starts_with("author.")),
        "{report}"
    );
    assert_eq!(report.issues.len(), 2, "first and last name: {report}");
    assert_eq!(report.repairs, 0);
    assert!(db.odm().get::<Book>(1).await?.is_some(), "still decodes");
    Ok(())
}

#[tokio::test]
async fn a_required_summary_does_not_block_a_delete_that_takes_its_holder_too() -> odm::Result<()> {
    use denorm::chores::{Chore, Member, MemberCard};
    let db = common::db().await?;
    let kate = Member {
        id: 1,
        name: "Kate Monster".into(),
    };
    db.odm().insert_one(&kate).await?;
    let chore = Chore {
        id: 1,
        member: Ref::new(1),
        card: MemberCard {
            id: Ref::new(1),
            name: String::new(),
        },
    };
    db.odm().insert_one(&chore).await?;
    assert_eq!(db.odm().delete_one(Member::id().eq(1)).await?, 1);
    assert!(stored(&db, "members").await.is_empty());
    assert!(stored(&db, "chores").await.is_empty(), "cascaded");
    Ok(())
}

#[tokio::test]
async fn a_summary_already_taken_in_is_not_pushed_twice() -> odm::Result<()> {
    let db = common::db().await?;
    let (goofy, _, msgs) = hosts_with_messages(&db, 3).await?;
    let late = LogMsg {
        id: ObjectId::new(),
        time: at(10),
        message: "late".into(),
        host: Ref::new(goofy.id),
        ipaddr: String::new(),
    };
    // As a recomputation running between the message's insert and its push would leave it.
    db.raw()
        .collection::<Document>("hosts")
        .update_one(
            doc! { "_id": goofy.id },
            doc! { "$push": { "logmsgs": { "_id": late.id, "time": late.time, "message": "late" } } },
        )
        .await?;
    db.odm().insert_one(&late).await?;
    let all: Vec<&LogMsg> = msgs.iter().chain([&late]).collect();
    assert_eq!(latest_ids(&db, goofy.id).await, ids_of(&all));
    assert!(
        sent(&db).contains(&"aggregate".to_owned()),
        "recomputed instead"
    );
    Ok(())
}

#[tokio::test]
async fn replacing_a_host_keeps_its_latest_messages() -> odm::Result<()> {
    let db = common::db().await?;
    let (goofy, _, msgs) = hosts_with_messages(&db, 3).await?;
    // A host read before its messages arrived, written back.
    db.odm()
        .replace_one(&Host {
            name: "goofy.example.org".into(),
            ..goofy.clone()
        })
        .await?;
    let all: Vec<&LogMsg> = msgs.iter().collect();
    assert_eq!(latest_ids(&db, goofy.id).await, ids_of(&all));
    Ok(())
}

/// The network loses the reply of the cascade's `update` of the copies (a multi-document update,
/// which the driver does not send again): the rename is an error that names the copies which
/// may be stale, and the sweep then finds every copy consistent (the update had run) or
/// repairs it. Nothing is left stale behind a success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cascade_whose_reply_is_lost_is_an_error_naming_the_copies() -> odm::Result<()> {
    let db = common::db().await?;
    let parts: Vec<Part> = (0..2).map(|n| part(n, None)).collect();
    db.odm().insert_many(&parts).await?;
    let products: Vec<Product> = (0..3).map(|n| product(n, &[&parts[0]])).collect();
    db.odm().insert_many(&products).await?;
    let proxy = odm::testing::FaultProxy::start().await?;
    let odm = proxy.odm(db.name()).await?.with_catalog(common::catalog());
    odm.supports_transactions().await?;
    proxy.lose_replies("update", 1);
    let err = odm
        .update_by_id::<Part>(parts[0].id, Part::name().set("#4 grommet, zinc"))
        .await
        .expect_err("the copies' reply was lost");
    assert!(err.to_string().contains("products"), "{err}");
    assert_eq!(proxy.count_of("update"), 1, "not sent again");
    // The part was renamed; its copies may or may not be: the sweep says which.
    let renamed = stored_one(&db, "parts", parts[0].id).await.unwrap();
    assert_eq!(renamed.get_str("name").ok(), Some("#4 grommet, zinc"));
    let report = db.odm().verify_copies().repair(true).await?;
    assert!(report.bad_documents.is_empty(), "{report}");
    assert!(db.odm().verify_copies().await?.is_consistent());
    for product in &products {
        assert_eq!(
            product_names(&db, product.id).await[0].1,
            "#4 grommet, zinc"
        );
    }
    Ok(())
}
