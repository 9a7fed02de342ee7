//! `Odm::explain_shapes`: every query shape odm generates for this file's models (the parts
//! catalog with its copies, references and log messages, and a tree), explained by the server;
//! an index dropped behind the ODM's back turns its shapes into collection scans.

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use denorm::products::{PartSummary, Product};
use odm::bson::{doc, Bson, Document};
use odm::index::{Access, QueryFeature, ShapeCommand, ShapeReport};
use odm::prelude::*;

/// A tree of subjects.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "subjects", tree(on_delete = "lift"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

/// A loan names its product as a DBRef.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "loans")]
struct Loan {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    #[serde(with = "odm::dbref")]
    product: Ref<Product>,
}

/// A shelf lists products as an array of DBRefs.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 100)]
    #[serde(with = "odm::dbref")]
    products: Vec<Ref<Product>>,
}

/// The shape of `command` on `collection` shown as `shape`.
fn shape<'r>(
    report: &'r ShapeReport,
    collection: &str,
    command: ShapeCommand,
    shape: &str,
) -> &'r odm::index::ExplainedShape {
    report
        .shapes
        .iter()
        .find(|s| {
            s.shape.collection == collection && s.shape.command == command && s.shape.shape == shape
        })
        .unwrap_or_else(|| panic!("no {command:?} {collection} {shape} in\n{report}"))
}

#[tokio::test]
async fn every_generated_shape_uses_an_index_once_synced() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    db.commands().clear();

    // ANCHOR: explain_shapes
    let report = odm.explain_shapes().await?;
    assert!(report.is_clean(), "{report}");
    // ANCHOR_END: explain_shapes

    // One `explain` per shape, and nothing else.
    let sent = common::sent(&db);
    assert_eq!(sent.len(), report.shapes.len(), "{sent:?}");
    assert!(sent.iter().all(|c| c == "explain"), "{sent:?}");

    // The collections no model declares an index for are not created by the sync: their
    // shapes read nothing.
    for s in &report.shapes {
        let missing = ["authors", "members"].contains(&s.shape.collection.as_str());
        if missing {
            assert_eq!(s.access, Access::NoCollection, "{report}");
        } else {
            assert!(
                matches!(&s.access, Access::Index(names) if !names.is_empty()),
                "{report}"
            );
        }
        assert!(s.declared.is_some(), "no declared index for {:?}", s.shape);
    }
    for feature in [
        QueryFeature::Populate,
        QueryFeature::Children,
        QueryFeature::Latest,
        QueryFeature::Fill,
        QueryFeature::Cascade,
        QueryFeature::DeleteRule,
        QueryFeature::Tree,
    ] {
        assert!(
            report
                .shapes
                .iter()
                .any(|s| s.shape.sources.iter().any(|f| f.feature == feature)),
            "no {feature:?} shape in\n{report}"
        );
    }

    // The cascade of a part's name into the products' summaries: an update on the copy's id
    // path, read through its index, with an ObjectId (the parts' id type) in place of the ids.
    let cascade = shape(
        &report,
        "products",
        ShapeCommand::Update,
        "{ parts.id: { $in: [?] } }",
    );
    assert_eq!(cascade.access, Access::Index(vec!["parts.id_1".into()]));
    assert_eq!(cascade.declared.as_deref(), Some("parts.id_1"));
    assert_eq!(cascade.stages.last().map(String::as_str), Some("IXSCAN"));
    let ids = cascade
        .shape
        .filter
        .get_document("parts.id")
        .and_then(|c| c.get_array("$in"))
        .expect("an $in of the ids");
    assert!(matches!(ids.as_slice(), [Bson::ObjectId(_)]), "{ids:?}");
    let what: Vec<&str> = cascade
        .shape
        .sources
        .iter()
        .map(|f| f.what.as_str())
        .collect();
    assert!(
        what.contains(&"cascade of Part.name into products.parts"),
        "{what:?}"
    );

    // The populate of a reference: its target by `_id`; a tree's node ids are strings.
    let populate = shape(
        &report,
        "products",
        ShapeCommand::Find,
        "{ _id: { $in: [?] } }",
    );
    assert_eq!(populate.access, Access::Index(vec!["_id_".into()]));
    let descendants = shape(&report, "subjects", ShapeCommand::Find, "{ ancestors: ? }");
    assert_eq!(descendants.shape.filter, doc! { "ancestors": "?" });
    // References stored as DBRefs: the restrict rule's count by `$ref`, `$id` and `$db` (an
    // array's elements tested one by one in an `$expr` besides), indexed like the others.
    let dbrefs: Vec<&str> = report
        .shapes
        .iter()
        .filter(|s| ["loans", "shelves"].contains(&s.shape.collection.as_str()))
        .map(|s| s.shape.shape.as_str())
        .collect();
    assert_eq!(dbrefs.len(), 2, "{report}");
    assert!(dbrefs[0].starts_with(r#"{ product.$ref: "products", product.$id: { $in: [?] }"#));
    assert!(dbrefs[1].starts_with(r#"{ products.$ref: "products", products.$id: { $in: [?] }"#));
    Ok(())
}

#[tokio::test]
async fn a_dropped_index_makes_its_shapes_collection_scans() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    let fan = Product {
        id: ObjectId::new(),
        name: "Fan".into(),
        manufacturer: "Acme".into(),
        catalog_number: 1,
        parts: vec![PartSummary {
            id: Ref::new(ObjectId::new()),
            name: String::new(),
        }],
    };
    db.raw()
        .collection::<Product>("products")
        .insert_one(&fan)
        .await?;
    let before = common::stored(&db, "products").await;

    // The parts that reference a product: found by the delete rule (nullify) and the cascade
    // of its name, through the index on the reference.
    let by_product = "{ product: { $in: [?] } }";
    let report = odm.explain_shapes().models(["Product"]).await?;
    let holders = shape(&report, "parts", ShapeCommand::Update, by_product);
    assert_eq!(holders.access, Access::Index(vec!["product_1".into()]));
    assert!(holders.shape.sources.len() >= 2, "{:?}", holders.shape);
    assert!(report.is_clean(), "{report}");

    // ANCHOR: dropped
    db.raw()
        .run_command(doc! { "dropIndexes": "parts", "index": "product_1" })
        .await?;
    db.raw()
        .run_command(doc! { "dropIndexes": "products", "index": "parts.id_1" })
        .await?;
    let report = odm.explain_shapes().models(["Product"]).await?;
    let problems: Vec<(&str, &str)> = report
        .problems()
        .map(|s| (s.shape.collection.as_str(), s.shape.shape.as_str()))
        .collect();
    assert_eq!(
        problems,
        [
            ("parts", by_product),
            ("products", "{ parts.id: { $in: [?] } }")
        ],
        "{report}"
    );
    // ANCHOR_END: dropped
    let holders = shape(&report, "parts", ShapeCommand::Update, by_product);
    assert_eq!(holders.access, Access::CollectionScan);
    assert!(
        holders.stages.contains(&"COLLSCAN".to_owned()),
        "{holders:?}"
    );
    // The index is still declared: a sync brings it back.
    assert_eq!(holders.declared.as_deref(), Some("product_1"));

    // Explaining an update plans it and never runs it.
    assert_eq!(common::stored(&db, "products").await, before);
    let marked = db
        .raw()
        .collection::<Document>("parts")
        .count_documents(doc! { "__odm_explain": { "$exists": true } })
        .await?;
    assert_eq!(marked, 0);

    odm.sync_indexes().await?;
    assert!(odm.explain_shapes().await?.is_clean());
    Ok(())
}

#[tokio::test]
async fn the_shapes_of_one_model_and_an_unknown_name() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let all = odm::index::query_shapes(odm.catalog(), db.name());
    db.commands().clear();
    // Before any sync the collections do not exist: nothing is read, nothing is a problem.
    let report = odm.explain_shapes().models(["Subject"]).await?;
    assert_eq!(db.commands().count_of("explain"), report.shapes.len());
    assert!(!report.shapes.is_empty() && report.shapes.len() < all.len());
    assert!(report
        .shapes
        .iter()
        .all(|s| s.shape.collection == "subjects" && s.access == Access::NoCollection));
    assert!(report.is_clean());

    let unknown = odm.explain_shapes().models(["Nothing"]).await;
    assert!(
        matches!(&unknown, Err(odm::Error::Unsupported(m)) if m.contains("Nothing") && m.contains("Subject")),
        "{unknown:?}"
    );
    Ok(())
}

/// The fields a filter names (in `$and`, `$or` and `$nor` too), `_id` aside.
fn filtered_fields(filter: &Document, out: &mut Vec<String>) {
    for (key, value) in filter {
        match (key.as_str(), value) {
            ("$and" | "$or" | "$nor", Bson::Array(items)) => {
                for d in items.iter().filter_map(Bson::as_document) {
                    filtered_fields(d, out);
                }
            }
            (k, _) if k.starts_with('$') || k == "_id" => {}
            (k, _) => out.push(k.to_owned()),
        }
    }
}

/// `(collection, filter)` of each query among the commands sent: a `find`'s or a count's
/// filter, each statement of an `update` or a `delete`, a pipeline's first `$match`, a
/// `findAndModify`'s query.
fn queries(sent: Vec<odm::monitor::SentCommand>) -> Vec<(String, Document)> {
    let mut out = Vec::new();
    for c in sent {
        let Some(command) = c.command else { continue };
        let Ok(collection) = command.get_str(&c.name) else {
            continue;
        };
        let filters: Vec<Document> = match c.name.as_str() {
            "find" => command
                .get_document("filter")
                .ok()
                .cloned()
                .into_iter()
                .collect(),
            "count" | "findAndModify" => command
                .get_document("query")
                .ok()
                .cloned()
                .into_iter()
                .collect(),
            "aggregate" => command
                .get_array("pipeline")
                .ok()
                .and_then(|p| {
                    p.first()?
                        .as_document()?
                        .get_document("$match")
                        .ok()
                        .cloned()
                })
                .into_iter()
                .collect(),
            "update" | "delete" => {
                let list = if c.name == "update" {
                    "updates"
                } else {
                    "deletes"
                };
                command
                    .get_array(list)
                    .map(|s| {
                        s.iter()
                            .filter_map(|s| s.as_document()?.get_document("q").ok().cloned())
                            .collect()
                    })
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        };
        out.extend(filters.into_iter().map(|f| (collection.to_owned(), f)));
    }
    out
}

/// The shapes cannot drift from what is sent: the catalog's features run (copies filled and
/// cascaded, references populated, children read, latest-N pushed, delete rules applied, a
/// tree read, moved and pruned), and every field their queries filter on, `_id` aside, is a
/// field of a listed shape of the same collection.
#[tokio::test]
async fn every_field_the_features_filter_on_is_a_listed_shape() -> odm::Result<()> {
    use denorm::logs::{Host, LogMsg};
    use denorm::parts::Part;

    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes().await?;
    db.commands().clear();
    let fan = Product {
        id: ObjectId::new(),
        name: "Fan".into(),
        manufacturer: "Acme".into(),
        catalog_number: 1,
        parts: vec![],
    };
    odm.insert_one(&fan).await?;
    let blade = Part {
        id: ObjectId::new(),
        partno: "P-1".into(),
        name: "blade".into(),
        qty: 1,
        product: Some(Ref::new(fan.id)),
        product_name: String::new(),
        product_catalog_number: 0,
    };
    odm.insert_one(&blade).await?;
    let blower = Product {
        id: ObjectId::new(),
        name: "Blower".into(),
        manufacturer: "Acme".into(),
        catalog_number: 2,
        parts: vec![PartSummary {
            id: Ref::new(blade.id),
            name: String::new(),
        }],
    };
    odm.insert_one(&blower).await?;
    let host = Host {
        id: ObjectId::new(),
        name: "www".into(),
        ipaddr: "10.0.0.1".into(),
        logmsgs: vec![],
    };
    odm.insert_one(&host).await?;
    let msg = LogMsg {
        id: ObjectId::new(),
        time: odm::bson::DateTime::from_millis(1_000),
        message: "up".into(),
        host: Ref::new(host.id),
        ipaddr: String::new(),
    };
    odm.insert_one(&msg).await?;
    odm.update_by_id(fan.id, Product::name().set("Fan II"))
        .await?;
    odm.update_by_id(blade.id, Part::name().set("rotor"))
        .await?;
    odm.update_by_id(host.id, Host::ipaddr().set("10.0.0.2"))
        .await?;
    odm.find(Part::product().refers_to(fan.id))
        .populate(Part::product())
        .await?;
    odm.children(LogMsg::host(), std::slice::from_ref(&host))
        .await?;
    odm.delete_one(LogMsg::id_field().eq(msg.id)).await?;
    odm.delete_one(Product::id_field().eq(fan.id)).await?;
    odm.delete_one(Part::id_field().eq(blade.id)).await?;
    odm.delete_one(Host::id_field().eq(host.id)).await?;
    for (id, parent) in [("lit", None), ("jazz", Some("lit")), ("ny", Some("jazz"))] {
        odm.insert_one(&Subject {
            id: id.into(),
            parent: parent.map(|p: &str| Ref::new(p.to_owned())),
            ancestors: vec![],
        })
        .await?;
    }
    let tree = odm.tree::<Subject>();
    tree.descendants("lit").await?;
    tree.children("lit").await?;
    tree.roots().await?;
    tree.ancestors("ny").await?;
    tree.move_to_root("jazz").await?;
    odm.delete_one(Subject::id_field().eq("jazz")).await?;

    let shapes = odm::index::query_shapes(odm.catalog(), db.name());
    let sent = queries(db.commands().take());
    assert!(sent.len() > 20, "{sent:?}");
    let mut unlisted = Vec::new();
    for (collection, filter) in &sent {
        let mut fields = Vec::new();
        filtered_fields(filter, &mut fields);
        for field in fields {
            let listed = shapes.iter().any(|s| {
                let mut named = Vec::new();
                filtered_fields(&s.filter, &mut named);
                s.collection == *collection && named.contains(&field)
            });
            if !listed {
                unlisted.push(format!("{collection} {field} (in {filter})"));
            }
        }
    }
    assert!(unlisted.is_empty(), "not among the shapes: {unlisted:#?}");
    Ok(())
}
