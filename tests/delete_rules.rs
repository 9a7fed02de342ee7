//! Deleting through the ODM applies every referencing field's `on_delete` rule, in every
//! referencing collection, including those of models the deleting code never names.

#[path = "common/catalog.rs"]
mod catalog;
mod common;

use catalog::*;
use common::{sent, stored};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;

fn part(n: i64, supplier: Option<ObjectId>) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("p-{n}"),
        name: format!("part {n}"),
        qty: n,
        cost: 1.0,
        price: 2.0,
        supplier: supplier.map(Ref::new),
    }
}

fn product(n: i64, parts: &[&Part]) -> Product {
    Product {
        id: ObjectId::new(),
        name: format!("product {n}"),
        manufacturer: "Acme Corp".into(),
        catalog_number: n,
        parts: parts.iter().map(|p| Ref::new(p.id)).collect(),
    }
}

#[tokio::test]
async fn pull_removes_the_id_from_every_array_that_holds_it() -> odm::Result<()> {
    let db = common::db().await?;
    let (a, b) = (part(1, None), part(2, None));
    db.odm().insert_many(&[a.clone(), b.clone()]).await?;
    db.odm()
        .insert_many(&[product(1, &[&a, &b]), product(2, &[&a]), product(3, &[&b])])
        .await?;
    db.commands().clear();

    assert_eq!(db.odm().delete_one(Part::partno().eq("p-1")).await?, 1);
    let names = sent(&db);
    assert_eq!(
        names.first().map(String::as_str),
        Some("hello"),
        "transaction support is asked once"
    );
    assert!(names.contains(&"commitTransaction".to_owned()), "{names:?}");
    for raw in stored(&db, "products").await {
        let ids = raw.get_array("parts").unwrap();
        assert!(!ids.contains(&Bson::ObjectId(a.id)), "{raw}");
    }
    let counts: Vec<usize> = stored(&db, "products")
        .await
        .iter()
        .map(|d| d.get_array("parts").unwrap().len())
        .collect();
    let mut counts_sorted = counts.clone();
    counts_sorted.sort_unstable();
    assert_eq!(counts_sorted, [0, 1, 1]);
    assert_eq!(stored(&db, "parts").await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn nullify_clears_optional_references() -> odm::Result<()> {
    let db = common::db().await?;
    let acme = Supplier {
        id: ObjectId::new(),
        name: "Acme Corp".into(),
        country: "US".into(),
    };
    db.odm().insert_one(&acme).await?;
    db.odm()
        .insert_many(&[
            part(1, Some(acme.id)),
            part(2, Some(acme.id)),
            part(3, None),
        ])
        .await?;
    db.odm().delete_one(Supplier::id().eq(acme.id)).await?;
    for raw in stored(&db, "parts").await {
        assert_eq!(raw.get("supplier"), Some(&Bson::Null), "{raw}");
    }
    assert!(stored(&db, "suppliers").await.is_empty());
    Ok(())
}

#[tokio::test]
async fn cascade_deletes_the_children_of_the_deleted_parent() -> odm::Result<()> {
    let db = common::db().await?;
    let hosts = [
        Host {
            id: ObjectId::new(),
            name: "goofy.example.com".into(),
            ipaddr: "127.66.66.66".into(),
        },
        Host {
            id: ObjectId::new(),
            name: "other".into(),
            ipaddr: "127.0.0.2".into(),
        },
    ];
    db.odm().insert_many(&hosts).await?;
    let msgs: Vec<LogMsg> = (0..6)
        .map(|i| LogMsg {
            id: ObjectId::new(),
            time: DateTime::from_millis(i),
            message: "cpu is on fire!".into(),
            host: Ref::new(hosts[(i % 2) as usize].id),
        })
        .collect();
    db.odm().insert_many(&msgs).await?;

    db.commands().clear();
    assert_eq!(
        db.odm()
            .delete_one(Host::ipaddr().eq("127.66.66.66"))
            .await?,
        1
    );
    // Nothing references log messages, so they are deleted by their `host`, without reading
    // their ids: one `find` for the host's id, two deletes, and the transaction's commit.
    let commands = db.commands().take();
    let names: Vec<&str> = commands
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| *n != "hello")
        .collect();
    assert_eq!(names, ["find", "delete", "delete", "commitTransaction"]);
    let by_host = commands
        .iter()
        .filter_map(|c| c.command.as_ref())
        .find(|c| c.get_str("delete").ok() == Some("logmsg"))
        .unwrap();
    let q = by_host.get_array("deletes").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("q")
        .unwrap();
    assert_eq!(q, &doc! {"host": {"$in": [hosts[0].id]}});
    let left = stored(&db, "logmsg").await;
    assert_eq!(left.len(), 3);
    assert!(left
        .iter()
        .all(|m| m.get_object_id("host").unwrap() == hosts[1].id));
    assert_eq!(stored(&db, "hosts").await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn restrict_refuses_and_deletes_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    let kate = Person {
        id: ObjectId::new(),
        name: "Kate Monster".into(),
        tasks: vec![],
    };
    let task = Task {
        id: ObjectId::new(),
        description: "Write lesson plan".into(),
        due_date: DateTime::now(),
        owner: Ref::new(kate.id),
    };
    db.odm()
        .insert_one(&Person {
            tasks: vec![Ref::new(task.id)],
            ..kate.clone()
        })
        .await?;
    db.odm().insert_one(&task).await?;

    let err = db
        .odm()
        .delete_one(Person::id().eq(kate.id))
        .await
        .unwrap_err();
    match &err {
        odm::Error::DeleteRestricted(r) => {
            assert_eq!(
                (
                    r.collection.as_str(),
                    r.referenced_by.as_str(),
                    r.path.as_str(),
                    r.count
                ),
                ("people", "tasks", "owner", 1)
            );
        }
        other => panic!("expected a restricted delete, got {other}"),
    }
    assert!(
        err.to_string()
            .contains("1 document(s) in `tasks` reference them through `owner`"),
        "{err}"
    );
    assert_eq!(stored(&db, "people").await.len(), 1);
    assert_eq!(stored(&db, "tasks").await.len(), 1);

    // Deleting the task pulls it from its owner's list (Person.tasks is `on_delete = "pull"`),
    // after which the person can go.
    db.odm().delete_one(Task::id().eq(task.id)).await?;
    assert!(stored(&db, "people").await[0]
        .get_array("tasks")
        .unwrap()
        .is_empty());
    assert_eq!(db.odm().delete_one(Person::id().eq(kate.id)).await?, 1);
    Ok(())
}

#[tokio::test]
async fn delete_many_applies_the_rules_to_every_deleted_document() -> odm::Result<()> {
    let db = common::db().await?;
    let parts: Vec<Part> = (1..=4).map(|n| part(n, None)).collect();
    db.odm().insert_many(&parts).await?;
    db.odm()
        .insert_one(&product(1, &parts.iter().collect::<Vec<_>>()))
        .await?;
    assert_eq!(db.odm().delete_many(Part::qty().lte(3)).await?, 3);
    let raw = &stored(&db, "products").await[0];
    assert_eq!(
        raw.get_array("parts").unwrap(),
        &vec![Bson::ObjectId(parts[3].id)]
    );
    Ok(())
}

#[tokio::test]
async fn a_delete_inside_the_callers_transaction_rolls_back_with_it() -> odm::Result<()> {
    let db = common::db().await?;
    let a = part(1, None);
    db.odm().insert_one(&a).await?;
    db.odm().insert_one(&product(1, &[&a])).await?;
    let mut session = db.odm().start_session().await?;
    session.start_transaction().await?;
    db.odm()
        .delete_one(Part::id().eq(a.id))
        .session(&mut session)
        .await?;
    session.abort_transaction().await?;
    assert_eq!(stored(&db, "parts").await.len(), 1);
    assert_eq!(
        stored(&db, "products").await[0]
            .get_array("parts")
            .unwrap()
            .len(),
        1
    );
    Ok(())
}

#[tokio::test]
async fn a_model_nothing_references_is_deleted_with_one_command() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&product(1, &[])).await?;
    db.commands().clear();
    db.odm().delete_many::<Product>(Filter::all()).await?;
    assert_eq!(sent(&db), ["delete"]);
    assert!(db
        .raw()
        .collection::<Document>("products")
        .find_one(doc! {})
        .await?
        .is_none());
    Ok(())
}

/// Racks hold servers (deleted with their rack); an open alert on a server forbids deleting it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "racks")]
struct Rack {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "servers")]
struct Server {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade")]
    rack: Ref<Rack>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "alerts")]
struct Alert {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "restrict")]
    server: Ref<Server>,
}

#[tokio::test]
async fn a_restrict_reached_through_a_cascade_names_the_whole_chain() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_one(&Rack { id: 1 }).await?;
    db.odm()
        .insert_many(&[
            Server {
                id: 10,
                rack: Ref::new(1),
            },
            Server {
                id: 11,
                rack: Ref::new(1),
            },
        ])
        .await?;
    db.odm()
        .insert_many(&[
            Alert {
                id: 100,
                server: Ref::new(10),
            },
            Alert {
                id: 101,
                server: Ref::new(11),
            },
            Alert {
                id: 102,
                server: Ref::new(11),
            },
        ])
        .await?;
    let err = db.odm().delete_one(Rack::id().eq(1)).await.unwrap_err();
    let odm::Error::DeleteRestricted(r) = &err else {
        panic!("expected a restricted delete, got {err}");
    };
    assert_eq!(r.chain, [r#"`racks` { "_id": 1 }"#, "`servers` (rack)"]);
    assert_eq!(
        err.to_string(),
        r#"cannot delete: deleting `racks` { "_id": 1 } cascades to `servers` (rack), which is restricted by `alerts.server`: 3 document(s) reference it (on_delete = "restrict")"#
    );
    assert_eq!(stored(&db, "racks").await.len(), 1, "nothing was deleted");
    assert_eq!(stored(&db, "servers").await.len(), 2);
    Ok(())
}

/// Kits of parts, each listing summaries of its parts (copied from them).
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct KitPart {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "kits")]
struct Kit {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Part", fields = "name", max = 50)]
    parts: Vec<KitPart>,
}

/// The summaries of a deleted part are pulled by one `update` of the kits, sent once the
/// delete is visible (after the commit): it takes out the summaries stored before the delete
/// and those of an insert racing it alike. The products' reference rule is its own `update`,
/// in the transaction.
#[tokio::test]
async fn the_summaries_of_a_deleted_document_are_pulled_by_one_command() -> odm::Result<()> {
    let db = common::db().await?;
    let (a, b) = (part(1, None), part(2, None));
    db.odm().insert_many(&[a.clone(), b.clone()]).await?;
    db.odm().insert_one(&product(1, &[&a, &b])).await?;
    let summary = |p: &Part| KitPart {
        id: Ref::new(p.id),
        name: String::new(),
    };
    db.odm()
        .insert_many(&[
            Kit {
                id: 1,
                parts: vec![summary(&a), summary(&b)],
            },
            Kit {
                id: 2,
                parts: vec![summary(&a)],
            },
        ])
        .await?;
    db.commands().clear();

    assert_eq!(db.odm().delete_one(Part::id().eq(a.id)).await?, 1);
    let log = db.commands().take();
    let shown: Vec<String> = log
        .iter()
        .filter(|c| c.name != "hello")
        .map(|c| {
            let on = c.command.as_ref().and_then(|d| d.get_str(&c.name).ok());
            format!("{} {}", c.name, on.unwrap_or_default())
        })
        .collect();
    assert_eq!(
        shown,
        [
            "find parts",
            "update products",
            "delete parts",
            "commitTransaction ",
            "update kits",
        ],
        "one pull of the kits' summaries, after the commit"
    );
    let pull = common::filter_in(&log, "update", "kits");
    assert_eq!(pull, doc! { "parts.id": { "$in": [a.id] } });

    let kits = stored(&db, "kits").await;
    let ids = |k: &Document| -> Vec<Bson> {
        k.get_array("parts")
            .unwrap()
            .iter()
            .map(|s| s.as_document().unwrap().get("id").unwrap().clone())
            .collect()
    };
    assert_eq!(ids(&kits[0]), [Bson::ObjectId(b.id)]);
    assert!(ids(&kits[1]).is_empty());
    assert_eq!(
        stored(&db, "products").await[0].get_array("parts").unwrap(),
        &vec![Bson::ObjectId(b.id)]
    );
    Ok(())
}
