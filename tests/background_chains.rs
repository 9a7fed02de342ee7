//! A copy of a background copy: the worker's write of a copy is a cascade like any other, so
//! whatever copies the copy it writes follows, in the same transaction as each batch. Read
//! back with the raw driver.

mod common;

use common::stored;
use odm::bson::Document;
use odm::prelude::*;
use odm::testing::TestDb;

/// A product, renamed.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "chain_products")]
struct Product {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

// ANCHOR: chain
/// An order copies its product's name, in the background.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "chain_orders")]
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

/// An invoice copies the order's copy at once; a shipping label copies it in the background.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "chain_invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    #[reference]
    order: Ref<Order>,
    #[denormalize(from = "Order", via = "order", fields = "product_name")]
    product_name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "chain_labels")]
struct Label {
    #[serde(rename = "_id")]
    id: i64,
    #[reference]
    order: Ref<Order>,
    #[denormalize(
        from = "Order",
        via = "order",
        fields = "product_name",
        cascade = "background"
    )]
    product_name: String,
}
// ANCHOR_END: chain

/// The `product_name` of every document of `collection`, in `_id` order.
async fn names(db: &TestDb, collection: &str) -> Vec<String> {
    stored(db, collection)
        .await
        .iter()
        .map(|d: &Document| d.get_str("product_name").unwrap_or("<missing>").to_owned())
        .collect()
}

#[tokio::test]
async fn the_worker_carries_a_rename_down_to_the_copies_of_its_copy() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    odm.cascade_worker().create_index().await?;
    odm.insert_one(&Product {
        id: 1,
        name: "fan".into(),
    })
    .await?;
    let orders: Vec<Order> = (0..25)
        .map(|i| Order {
            id: i,
            product: Ref::new(1),
            product_name: String::new(),
        })
        .collect();
    odm.insert_many(&orders).await?;
    let invoices: Vec<Invoice> = (0..25)
        .map(|i| Invoice {
            id: i,
            order: Ref::new(i),
            product_name: String::new(),
        })
        .collect();
    odm.insert_many(&invoices).await?;
    let labels: Vec<Label> = (0..25)
        .map(|i| Label {
            id: i,
            order: Ref::new(i),
            product_name: String::new(),
        })
        .collect();
    odm.insert_many(&labels).await?;
    for collection in ["chain_orders", "chain_invoices", "chain_labels"] {
        assert_eq!(
            names(&db, collection).await,
            vec!["fan"; 25],
            "{collection}"
        );
    }

    odm.update_by_id::<Product>(1, Product::name().set("blower"))
        .await?;
    assert_eq!(names(&db, "chain_orders").await, vec!["fan"; 25]);
    db.commands().clear();
    let report = odm.cascade_worker().batch_size(10).run_until_idle().await?;
    assert_eq!((report.applied, report.batches, report.written), (1, 3, 25));
    for collection in ["chain_orders", "chain_invoices", "chain_labels"] {
        assert_eq!(
            names(&db, collection).await,
            vec!["blower"; 25],
            "{collection}"
        );
    }
    // Each batch: the intent held, the orders, then one `find` of the orders written and one
    // `update` per copy of theirs, in the batch's transaction.
    let batch: Vec<(String, String)> = db
        .commands()
        .take()
        .into_iter()
        .map(|c| {
            let collection = c.command.as_ref().and_then(|d| d.get_str(&c.name).ok());
            (c.name.clone(), collection.unwrap_or_default().to_owned())
        })
        .skip_while(|(name, collection)| !(name == "update" && collection == "odm_cascades"))
        .take(6)
        .collect();
    let expected = [
        ("update", "odm_cascades"),
        ("update", "chain_orders"),
        ("find", "chain_orders"),
        ("update", "chain_invoices"),
        ("update", "chain_labels"),
        ("commitTransaction", ""),
    ];
    let mut sorted = batch.clone();
    sorted[3..5].sort();
    assert_eq!(
        sorted,
        expected.map(|(n, c)| (n.to_owned(), c.to_owned())),
        "{batch:?}"
    );
    Ok(())
}
