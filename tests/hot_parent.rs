//! Work that ends on one parent document, from many writers at once, on a machine that is also
//! busy: the ODM's maintenance of one parent degrades into waiting, never into failures. 100
//! deletes of log messages that feed one host's latest-100 array, 100 reassignments of tasks to
//! one owner, and 100 renames of parts whose summaries live in one product (cascades in
//! transactions), each with two threads spinning on the CPU meanwhile; every operation
//! succeeds, and what is stored is read back raw.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use std::time::Duration;

use denorm::logs::{Host, LogMsg};
use denorm::tasks::{Person, Task};
use futures_util::TryStreamExt;
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;
use odm::testing::{BusyCpu, TestDb};

const WRITERS: usize = 100;

/// Runs every future at once on the runtime's threads; returns the errors.
async fn all_at_once<F>(futures: Vec<F>) -> Vec<String>
where
    F: std::future::Future<Output = odm::Result<()>> + Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut errors = Vec::new();
    for h in handles {
        if let Err(e) = h.await.expect("no panic") {
            errors.push(e.to_string());
        }
    }
    errors
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_deletes_feeding_one_latest_array_all_succeed_on_a_busy_machine(
) -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm().clone();
    let host = Host {
        id: ObjectId::new(),
        name: "www.example.com".into(),
        ipaddr: "127.66.66.66".into(),
        logmsgs: Vec::new(),
    };
    odm.insert_one(&host).await?;
    let base = DateTime::now().timestamp_millis();
    let messages: Vec<LogMsg> = (0..2 * WRITERS as i64)
        .map(|n| LogMsg {
            id: ObjectId::new(),
            time: DateTime::from_millis(base + n),
            message: format!("message {n}"),
            host: Ref::new(host.id),
            ipaddr: String::new(),
        })
        .collect();
    odm.insert_many(&messages).await?;

    // The newest 100, each in the host's array: every delete recomputes it.
    let busy = BusyCpu::threads(2, Duration::from_secs(120));
    let deletes = messages[WRITERS..]
        .iter()
        .map(|m| {
            let (odm, id) = (odm.clone(), m.id);
            async move { odm.delete_one(LogMsg::id().eq(id)).await.map(|_| ()) }
        })
        .collect();
    let errors = all_at_once(deletes).await;
    drop(busy);
    assert!(
        errors.is_empty(),
        "{} of {WRITERS} deletes failed, e.g. {:?}",
        errors.len(),
        errors.first()
    );

    // The array holds the newest 100 of the messages left, newest last.
    let stored = db
        .raw()
        .collection::<Document>("hosts")
        .find_one(doc! { "_id": host.id })
        .await?
        .expect("the host");
    let kept: Vec<String> = stored
        .get_array("logmsgs")
        .unwrap()
        .iter()
        .map(|s| {
            s.as_document()
                .unwrap()
                .get_str("message")
                .unwrap()
                .to_owned()
        })
        .collect();
    let left: Vec<String> = db
        .raw()
        .collection::<Document>("logmsg")
        .find(doc! { "host": host.id })
        .sort(doc! { "time": 1 })
        .await?
        .try_collect::<Vec<_>>()
        .await?
        .iter()
        .map(|d| d.get_str("message").unwrap().to_owned())
        .collect();
    assert_eq!(left.len(), WRITERS);
    assert_eq!(kept, left);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_reassignments_to_one_owner_all_succeed_on_a_busy_machine() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let odm = db.odm().clone();
    let person = |name: &str| Person {
        id: ObjectId::new(),
        name: name.into(),
        tasks: Vec::new(),
    };
    let (kate, bob) = (person("Kate"), person("Bob"));
    odm.insert_many(&[kate.clone(), bob.clone()]).await?;
    let tasks: Vec<Task> = (0..WRITERS)
        .map(|n| Task {
            id: ObjectId::new(),
            description: format!("task {n}"),
            due_date: DateTime::now(),
            owner: Ref::new(bob.id),
            owner_name: String::new(),
        })
        .collect();
    odm.insert_many(&tasks).await?;

    let busy = BusyCpu::threads(2, Duration::from_secs(120));
    let moves = tasks
        .iter()
        .map(|t| {
            let (odm, id) = (odm.clone(), t.id);
            async move { odm.reassign(Task::owner(), id, kate.id).await.map(|_| ()) }
        })
        .collect();
    let errors = all_at_once(moves).await;
    drop(busy);
    assert!(
        errors.is_empty(),
        "{} of {WRITERS} reassignments failed, e.g. {:?}",
        errors.len(),
        errors.first()
    );
    let people = db.raw().collection::<Document>("people");
    let kate_doc = people.find_one(doc! { "_id": kate.id }).await?.unwrap();
    let bob_doc = people.find_one(doc! { "_id": bob.id }).await?.unwrap();
    assert_eq!(kate_doc.get_array("tasks").unwrap().len(), WRITERS);
    assert!(bob_doc.get_array("tasks").unwrap().is_empty());
    let moved = db
        .raw()
        .collection::<Document>("tasks")
        .count_documents(doc! { "owner": kate.id, "owner_name": "Kate" })
        .await?;
    assert_eq!(moved, WRITERS as u64);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_renames_cascading_into_one_product_all_succeed_on_a_busy_machine(
) -> odm::Result<()> {
    use denorm::parts::Part;
    use denorm::products::{PartSummary, Product};
    let db = TestDb::new().await?;
    let odm = db.odm().clone();
    let parts: Vec<Part> = (0..WRITERS)
        .map(|n| Part {
            id: ObjectId::new(),
            partno: format!("p-{n}"),
            name: format!("part {n}"),
            qty: 1,
            product: None,
            product_name: String::new(),
            product_catalog_number: 0,
        })
        .collect();
    odm.insert_many(&parts).await?;
    let product = Product {
        id: ObjectId::new(),
        name: "smoke shifter".into(),
        manufacturer: "ACME".into(),
        catalog_number: 1234,
        parts: parts
            .iter()
            .map(|p| PartSummary {
                id: Ref::new(p.id),
                name: String::new(),
            })
            .collect(),
    };
    odm.insert_one(&product).await?;

    let busy = BusyCpu::threads(2, Duration::from_secs(120));
    let renames = parts
        .iter()
        .map(|p| {
            let (odm, id, name) = (odm.clone(), p.id, format!("{}, zinc", p.name));
            async move {
                odm.update_by_id::<Part>(id, Part::name().set(name))
                    .transaction(odm::TransactionMode::Always)
                    .await
                    .map(|_| ())
            }
        })
        .collect();
    let errors = all_at_once(renames).await;
    drop(busy);
    assert!(
        errors.is_empty(),
        "{} of {WRITERS} renames failed, e.g. {:?}",
        errors.len(),
        errors.first()
    );
    let stored = db
        .raw()
        .collection::<Document>("products")
        .find_one(doc! { "_id": product.id })
        .await?
        .expect("the product");
    let names: Vec<&str> = stored
        .get_array("parts")
        .unwrap()
        .iter()
        .map(|s| s.as_document().unwrap().get_str("name").unwrap())
        .collect();
    let want: Vec<String> = (0..WRITERS).map(|n| format!("part {n}, zinc")).collect();
    assert_eq!(names, want);
    Ok(())
}
