//! Every model linked into the program is known to the runtime without a registration step:
//! `sync_indexes()` finds models in modules the calling code never names. A handle given a
//! catalog of named models works with those alone.

use odm::testing::TestDb;

mod catalog {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug)]
    #[odm(collection = "parts")]
    pub struct Part {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        #[index(unique)]
        pub partno: String,
        pub name: String,
        pub qty: i64,
    }

    pub mod products {
        use odm::prelude::*;

        /// Lists parts; a deleted part is pulled from the list (a delete rule of `Part`'s
        /// deletes, when this model is in the handle's catalog).
        #[derive(Model, Serialize, Deserialize, Debug)]
        pub struct Product {
            #[serde(rename = "_id")]
            pub id: ObjectId,
            pub name: String,
            #[reference(many, max = 100, on_delete = "pull")]
            pub parts: Vec<Ref<super::Part>>,
        }
    }

    pub mod hosts {
        use odm::prelude::*;

        #[derive(Model, Serialize, Deserialize, Debug)]
        pub struct Host {
            #[serde(rename = "_id")]
            pub id: ObjectId,
            pub name: String,
            #[index(unique)]
            pub ipaddr: String,
        }
    }
}

#[test]
fn the_registry_lists_every_model() {
    let models: Vec<(&str, &str)> = odm::registered_models()
        .iter()
        .map(|m| (m.collection, m.type_name))
        .collect();
    assert_eq!(
        models,
        [
            ("hosts", "Host"),
            ("parts", "Part"),
            ("products", "Product")
        ]
    );
}

#[tokio::test]
async fn sync_indexes_reaches_models_it_was_never_told_about() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let report = db.odm().sync_indexes().await?;
    assert_eq!(
        report.created(),
        ["hosts.ipaddr_1", "parts.partno_1", "products.parts_1"]
    );
    for (collection, index) in [("hosts", "ipaddr_1"), ("parts", "partno_1")] {
        let listed = db
            .raw()
            .run_command(odm::bson::doc! {"listIndexes": collection})
            .await?;
        let batch = listed
            .get_document("cursor")
            .unwrap()
            .get_array("firstBatch")
            .unwrap();
        let found = batch
            .iter()
            .filter_map(|b| b.as_document())
            .find(|d| d.get_str("name").ok() == Some(index));
        assert!(
            found.is_some_and(|d| d.get_bool("unique").unwrap_or(false)),
            "{collection}: {batch:?}"
        );
    }
    Ok(())
}

use catalog::products::Product;
use catalog::Part;
use odm::bson::{doc, oid::ObjectId, Document};
use odm::{Catalog, Model};

/// A part, and a product listing it, stored through `odm`.
async fn part_in_a_product(odm: &odm::Odm) -> odm::Result<(ObjectId, ObjectId)> {
    let part = Part {
        id: ObjectId::new(),
        partno: format!("{}", ObjectId::new()),
        name: "#4 grommet".into(),
        qty: 10,
    };
    let product = Product {
        id: ObjectId::new(),
        name: "left-handed smoke shifter".into(),
        parts: vec![odm::Ref::new(part.id)],
    };
    odm.insert_one(&part).await?;
    odm.insert_one(&product).await?;
    Ok((part.id, product.id))
}

/// The parts a product lists, read back raw.
async fn listed(db: &TestDb, product: ObjectId) -> odm::Result<usize> {
    let stored = db
        .raw()
        .collection::<Document>("products")
        .find_one(doc! { "_id": product })
        .await?
        .expect("stored");
    Ok(stored.get_array("parts").map_or(0, Vec::len))
}

#[test]
fn a_catalog_holds_the_models_it_is_given() {
    let linked = Catalog::linked();
    assert_eq!(linked.models().len(), 3);
    assert_eq!(linked.references_to("parts").len(), 1);
    let parts_only = Catalog::new().with::<Part>().with::<Part>();
    let names: Vec<&str> = parts_only.models().iter().map(|m| m.type_name).collect();
    assert_eq!(names, ["Part"], "a model named twice is held once");
    assert!(parts_only.references_to("parts").is_empty());
    let both = Catalog::new().with::<Product>().with::<Part>();
    assert_eq!(both.references_to("parts")[0].from, "products");
}

#[tokio::test]
async fn two_handles_with_different_catalogs_in_one_process() -> odm::Result<()> {
    // The whole program: deleting a part pulls it from the products listing it.
    let db = TestDb::new().await?;
    let (part, product) = part_in_a_product(db.odm()).await?;
    db.commands().clear();
    assert_eq!(db.odm().delete_one(Part::id_field().eq(part)).await?, 1);
    assert_eq!(listed(&db, product).await?, 0);
    assert!(
        db.commands().count() > 1,
        "the delete rule's commands were sent"
    );

    // A handle that knows only `Part`: the same delete is one `delete`, and the product
    // keeps listing the part (no rule of a model outside its catalog applies).
    // ANCHOR: named_catalog
    let db = TestDb::new()
        .await?
        .with_catalog(Catalog::new().with::<Part>());
    // ANCHOR_END: named_catalog
    let (part, product) = part_in_a_product(db.odm()).await?;
    db.commands().clear();
    assert_eq!(db.odm().delete_one(Part::id_field().eq(part)).await?, 1);
    assert_eq!(db.commands().names(), ["delete"]);
    assert_eq!(listed(&db, product).await?, 1);

    // And its `sync_indexes` covers its own models only.
    let report = db.odm().sync_indexes().await?;
    assert_eq!(report.created(), ["parts.partno_1"]);
    Ok(())
}
