//! The cascade plan of copies cascaded in the background says what is sent: the intent the
//! update records in its transaction, then the walk and the batches' updates the cascade
//! worker sends later, with the copies of copies below them. Checked against the commands the
//! update and the worker really send, and against what lands.

mod common;

use odm::bson::{doc, Bson, Document};
use odm::denormalize::{SentBy, INTENTS};
use odm::monitor::SentCommand;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bp_parts")]
struct Part {
    #[serde(rename = "_id")]
    id: String,
    name: String,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct PartSummary {
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bp_products")]
struct Product {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[denormalize(from = "Part", fields = "name", max = 50, cascade = "background")]
    parts: Vec<PartSummary>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bp_orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    #[reference]
    product: Ref<Product>,
    #[denormalize(
        from = "Product",
        via = "product",
        fields = "name",
        cascade = "background"
    )]
    product_name: String,
}

/// A copy of the orders' copy: written by the worker's batches of orders, level 2.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "bp_invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    #[reference]
    order: Ref<Order>,
    #[denormalize(from = "Order", via = "order", fields = "product_name")]
    product_name: String,
}

/// The statements of the `update` commands sent on `collection`.
fn statements<'c>(sent: &'c [SentCommand], collection: &str) -> Vec<&'c Document> {
    sent.iter()
        .filter(|c| c.name == "update")
        .filter_map(|c| c.command.as_ref())
        .filter(|c| c.get_str("update").ok() == Some(collection))
        .flat_map(|c| c.get_array("updates").into_iter().flatten())
        .filter_map(Bson::as_document)
        .collect()
}

#[tokio::test]
async fn a_background_copy_is_planned_as_an_intent_then_the_workers_batches() -> odm::Result<()> {
    let plan = odm::denormalize::cascade_plan_in::<Part>(&common::catalog());
    let [step] = plan.steps.as_slice() else {
        panic!("one step expected:\n{plan}");
    };
    assert_eq!(step.sent_by, SentBy::Worker, "{plan}");
    assert_eq!(step.collection, "bp_products");
    assert_eq!(step.filter, "{ _id: { $in: [<ids of the batch>] } }");
    assert_eq!(
        step.update,
        r#"{ $set: { "parts.$[copy].name": <new name> } }, arrayFilters [{ copy.id: <id> }]"#
    );
    assert_eq!(step.index, "_id_");
    let walk = step.walk.as_ref().expect("the worker's walk");
    assert_eq!(walk.filter, "{ parts.id: { $in: [<id>] } }");
    assert_eq!(walk.index, "parts.id_1");
    let [intent] = plan.intents.as_slice() else {
        panic!("one intent expected:\n{plan}");
    };
    assert_eq!(intent.collection, INTENTS);
    assert_eq!(
        intent.filter,
        r#"{ _id: { source: "bp_parts", id: <id> } }"#
    );
    assert_eq!(
        intent.update,
        r#"{ $inc: { seq: 1 }, $set: { at: <now> }, $setOnInsert: { since: <now> }, $addToSet: { copies: { $each: ["bp_products.parts"] } } }"#
    );
    let printed = plan.to_string();
    for line in [
        "    in the update's transaction, the intent of the background cascade (no copy written):\n    update odm_cascades (upsert)\n",
        "    later, by the cascade worker: find bp_products { parts.id: { $in: [<id>] } } (their _id, through parts.id_1), then per batch of them, in a transaction:\n    update_many bp_products (Product)\n",
        "1 findAndModify + 1 update of odm_cascades (the intent) + commitTransaction, in one transaction\n",
    ] {
        assert!(printed.contains(line), "no {line:?} in\n{printed}");
    }

    // What the update sends: the plan's three commands, the intent's statement, no copy.
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    odm.supports_transactions().await?;
    odm.insert_one(&Part {
        id: "p1".into(),
        name: "grommet".into(),
    })
    .await?;
    for id in 1..=3 {
        odm.insert_one(&Product {
            id,
            name: format!("product {id}"),
            parts: vec![PartSummary {
                id: Ref::new("p1".to_owned()),
                name: String::new(),
            }],
        })
        .await?;
    }
    db.commands().clear();
    odm.update_by_id::<Part>("p1", Part::name().set("zinc grommet"))
        .await?;
    let sent = db.commands().take();
    let names: Vec<&str> = sent.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["findAndModify", "update", "commitTransaction"]);
    let recordeds = statements(&sent, INTENTS);
    let [recorded] = recordeds.as_slice() else {
        panic!("one intent statement: {sent:?}");
    };
    assert_eq!(
        recorded.get_document("q").unwrap(),
        &doc! { "_id": { "source": "bp_parts", "id": "p1" } }
    );
    assert_eq!(
        recorded
            .get_document("u")
            .unwrap()
            .get_document("$addToSet")
            .unwrap(),
        &doc! { "copies": { "$each": ["bp_products.parts"] } }
    );
    assert!(statements(&sent, "bp_products").is_empty());
    let still = common::stored(&db, "bp_products").await;
    assert!(still.iter().all(|p| p.get_array("parts").unwrap()[0]
        .as_document()
        .unwrap()
        .get_str("name")
        .ok()
        == Some("grommet")));

    // What the worker sends: the plan's walk, then the plan's update of a batch.
    odm.cascade_worker().run_until_idle().await?;
    let sent = db.commands().take();
    let walk = sent
        .iter()
        .filter(|c| c.name == "find")
        .filter_map(|c| c.command.as_ref())
        .find(|c| c.get_str("find").ok() == Some("bp_products"))
        .expect("the walk");
    assert_eq!(
        walk.get_document("filter").unwrap(),
        &doc! { "parts.id": { "$in": ["p1"] } }
    );
    let batchs = statements(&sent, "bp_products");
    let [batch] = batchs.as_slice() else {
        panic!("one batch: {sent:?}");
    };
    assert_eq!(
        batch.get_document("q").unwrap(),
        &doc! { "_id": { "$in": [1_i64, 2_i64, 3_i64] } }
    );
    assert_eq!(
        batch.get_document("u").unwrap(),
        &doc! { "$set": { "parts.$[copy].name": "zinc grommet" } }
    );
    assert_eq!(
        batch.get_array("arrayFilters").unwrap(),
        &vec![Bson::Document(doc! { "copy.id": "p1" })]
    );
    for p in common::stored(&db, "bp_products").await {
        let summary = p.get_array("parts").unwrap()[0]
            .as_document()
            .unwrap()
            .clone();
        assert_eq!(summary, doc! { "id": "p1", "name": "zinc grommet" }, "{p}");
    }
    Ok(())
}

/// A flat copy cascaded in the background and the copy of it below: the worker's batch writes
/// both, in its transaction; the request only records the intent.
#[tokio::test]
async fn the_copies_of_a_background_copy_are_planned_in_the_workers_batches() -> odm::Result<()> {
    let plan = odm::denormalize::cascade_plan_in::<Product>(&common::catalog());
    let steps: Vec<(usize, &str, SentBy)> = plan
        .steps
        .iter()
        .map(|s| (s.level, s.collection, s.sent_by))
        .collect();
    assert_eq!(
        steps,
        [
            (1, "bp_orders", SentBy::Worker),
            (2, "bp_invoices", SentBy::Worker)
        ],
        "{plan}"
    );
    let orders = &plan.steps[0];
    assert!(
        orders.filter.starts_with(
            "{ _id: { $in: [<ids of the batch>] }, $and: [{ $and: [{ product: { $in: [<id>] } }"
        ),
        "{plan}"
    );
    assert_eq!(orders.update, "{ $set: { product_name: <new name> } }");
    let printed = plan.to_string();
    assert!(
        printed.contains("then the cascade worker, per source:")
            && printed.contains("+ 1 update(s) + 1 find(s) for the copies of copies"),
        "{printed}"
    );
    assert!(
        !printed.contains("then 1 find re-reading the source"),
        "{printed}"
    );

    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    odm.supports_transactions().await?;
    odm.insert_one(&Product {
        id: 1,
        name: "fan".into(),
        parts: vec![],
    })
    .await?;
    odm.insert_one(&Order {
        id: 10,
        product: Ref::new(1),
        product_name: String::new(),
    })
    .await?;
    odm.insert_one(&Invoice {
        id: 100,
        order: Ref::new(10),
        product_name: String::new(),
    })
    .await?;
    db.commands().clear();
    odm.update_by_id::<Product>(1, Product::name().set("blower"))
        .await?;
    assert_eq!(
        common::sent(&db),
        ["findAndModify", "update", "commitTransaction"]
    );
    odm.cascade_worker().run_until_idle().await?;
    let sent = db.commands().take();
    let orders = statements(&sent, "bp_orders");
    let [order] = orders.as_slice() else {
        panic!("one batch of orders: {sent:?}");
    };
    assert_eq!(
        order.get_document("u").unwrap(),
        &doc! { "$set": { "product_name": "blower" } }
    );
    assert_eq!(statements(&sent, "bp_invoices").len(), 1, "{sent:?}");
    let invoice = common::stored(&db, "bp_invoices").await;
    assert_eq!(invoice[0].get_str("product_name").ok(), Some("blower"));
    Ok(())
}
