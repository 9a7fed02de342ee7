//! Populate (the application-level join) and the children of parent references, against a
//! real server: what loads, and how many commands it takes.

#[path = "common/catalog.rs"]
mod catalog;
mod common;

use catalog::*;
use common::{last_command, sent};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;

struct Catalog {
    suppliers: Vec<Supplier>,
    parts: Vec<Part>,
    products: Vec<Product>,
}

/// `n_products` products, each referencing 5 of 20 parts (shared between products); parts
/// reference one of 2 suppliers.
async fn catalog(db: &TestDb, n_products: usize) -> odm::Result<Catalog> {
    let suppliers: Vec<Supplier> = ["Acme Corp", "Globex"]
        .iter()
        .map(|name| Supplier {
            id: ObjectId::new(),
            name: (*name).into(),
            country: "US".into(),
        })
        .collect();
    let parts: Vec<Part> = (0..20)
        .map(|i| Part {
            id: ObjectId::new(),
            partno: format!("{i:03}-aff-456"),
            name: format!("#{i} grommet"),
            qty: 94 - i,
            cost: 0.94,
            price: 3.99,
            supplier: Some(Ref::new(suppliers[i as usize % 2].id)),
        })
        .collect();
    let products: Vec<Product> = (0..n_products)
        .map(|i| Product {
            id: ObjectId::new(),
            name: format!("left-handed smoke shifter {i}"),
            manufacturer: "Acme Corp".into(),
            catalog_number: 1234 + i as i64,
            parts: (0..5)
                .map(|k| Ref::new(parts[(i * 3 + k * 4) % 20].id))
                .collect(),
        })
        .collect();
    db.odm().insert_many(&suppliers).await?;
    db.odm().insert_many(&parts).await?;
    db.odm().insert_many(&products).await?;
    db.commands().clear();
    Ok(Catalog {
        suppliers,
        parts,
        products,
    })
}

fn part_named<'a>(c: &'a Catalog, id: &ObjectId) -> &'a Part {
    c.parts.iter().find(|p| p.id == *id).expect("known part")
}

#[tokio::test]
async fn populate_loads_every_reference_with_one_in_query() -> odm::Result<()> {
    let db = common::db().await?;
    let c = catalog(&db, 30).await?;

    let products = db
        .odm()
        .find::<Product>(Filter::all())
        .populate(Product::parts())
        .await?;
    assert_eq!(products.len(), 30);
    let commands = db.commands().take();
    let names: Vec<_> = commands.iter().map(|c| c.name.as_str()).collect();
    if common::lookup_plan() {
        assert_eq!(names, ["aggregate"], "one aggregate for products and parts");
        check_parts(&c, &products);
        return Ok(());
    }
    assert_eq!(
        names,
        ["find", "find"],
        "one find for 30 products, one for all their parts"
    );
    let parts_query = commands[1].command.as_ref().unwrap();
    assert_eq!(parts_query.get_str("find").unwrap(), "parts");
    let ids = parts_query
        .get_document("filter")
        .unwrap()
        .get_document("_id")
        .unwrap()
        .get_array("$in")
        .unwrap();
    assert_eq!(ids.len(), 20, "ids are deduplicated across products");
    check_parts(&c, &products);
    Ok(())
}

fn check_parts(c: &Catalog, products: &[Product]) {
    for (product, stored) in products.iter().zip(&c.products) {
        assert_eq!(product.parts.len(), 5);
        for (r, expected) in product.parts.iter().zip(&stored.parts) {
            assert_eq!(r.id(), expected.id(), "order kept");
            let loaded = r.get().expect("populated");
            assert_eq!(loaded, part_named(c, r.id()));
        }
    }
}

#[tokio::test]
async fn a_reference_is_stored_as_the_bare_id_whatever_its_state() -> odm::Result<()> {
    let db = common::db().await?;
    let c = catalog(&db, 2).await?;
    let mut product = db
        .odm()
        .get::<Product>(c.products[0].id)
        .populate(Product::parts())
        .await?
        .unwrap();
    assert!(product.parts.iter().all(Ref::is_loaded));
    product.name = "renamed".into();
    db.odm().replace_one(&product).await?;
    let raw = common::stored_one(&db, "products", c.products[0].id)
        .await
        .unwrap();
    let stored: Vec<Bson> = c.products[0]
        .parts
        .iter()
        .map(|r| Bson::ObjectId(*r.id()))
        .collect();
    assert_eq!(
        raw.get_array("parts").unwrap(),
        &stored,
        "ids only, never the loaded documents"
    );
    Ok(())
}

#[tokio::test]
async fn an_unpopulated_reference_reads_as_absent_not_as_a_panic() -> odm::Result<()> {
    let db = common::db().await?;
    let c = catalog(&db, 1).await?;
    let product = db.odm().get::<Product>(c.products[0].id).await?.unwrap();
    let r = &product.parts[0];
    assert!(r.get().is_none());
    let err = r.loaded().unwrap_err();
    assert!(
        matches!(&err, odm::Error::NotPopulated { collection, .. } if collection == "parts"),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn nested_paths_take_one_query_per_level() -> odm::Result<()> {
    let db = common::db().await?;
    let c = catalog(&db, 10).await?;
    let products = db
        .odm()
        .find::<Product>(Filter::all())
        .populate(Product::parts().populate().then(Part::supplier()))
        .await?;
    common::assert_populate_sent(&db, &["find", "find", "find"]);
    for p in &products {
        for part in p.parts.iter().map(|r| r.get().unwrap()) {
            let supplier = part
                .supplier
                .as_ref()
                .unwrap()
                .get()
                .expect("second level populated");
            assert!(c.suppliers.contains(supplier));
        }
    }
    Ok(())
}

#[tokio::test]
async fn projection_filter_and_sort_apply_per_path() -> odm::Result<()> {
    let db = common::db().await?;
    let c = catalog(&db, 3).await?;
    let products = db
        .odm()
        .find::<Product>(Filter::all())
        .sort(Product::catalog_number().asc())
        .populate(
            Product::parts()
                .populate()
                .select(
                    Projection::include(&Part::name())
                        .and(&Part::partno())
                        .and(&Part::qty()),
                )
                .filter(Part::qty().gt(80))
                .sort(Part::name().desc()),
        )
        .await?;
    if common::lookup_plan() {
        let lookup = common::last_lookup_into(&db, "parts");
        assert_eq!(
            common::sub_stage(&lookup, "$project"),
            doc! {"name": 1, "partno": 1, "qty": 1, "_id": 1}
        );
        assert_eq!(
            common::sub_stage(&lookup, "$sort"),
            doc! {"name": -1, "_id": 1}
        );
        assert_eq!(
            common::sub_stage(&lookup, "$match"),
            doc! {"qty": {"$gt": 80i64}}
        );
    } else {
        let cmd = last_command(&db, "find");
        assert_eq!(
            cmd.get_document("projection").unwrap(),
            &doc! {"name": 1, "partno": 1, "qty": 1, "_id": 1}
        );
        assert_eq!(
            cmd.get_document("sort").unwrap(),
            &doc! {"name": -1, "_id": 1}
        );
    }

    for (product, stored) in products.iter().zip(&c.products) {
        let loaded: Vec<&Part> = product.parts.iter().filter_map(Ref::get).collect();
        let expected_loaded = stored
            .parts
            .iter()
            .filter(|r| part_named(&c, r.id()).qty > 80)
            .count();
        assert_eq!(
            loaded.len(),
            expected_loaded,
            "documents outside the filter stay unloaded"
        );
        assert!(
            loaded.iter().all(|p| p.qty > 80 && p.cost == 0.0),
            "projected: cost was not loaded"
        );
        let names: Vec<&str> = loaded.iter().map(|p| p.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(
            names, sorted,
            "loaded references come first, in the requested order"
        );
        assert_eq!(
            product.parts.len(),
            5,
            "no reference is dropped by a filter"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_dangling_reference_is_an_error_unless_a_policy_says_otherwise() -> odm::Result<()> {
    let db = common::db().await?;
    let c = catalog(&db, 4).await?;
    let gone = c.products[0].parts[2].id().to_owned();
    // Deleted behind the ODM's back: no delete rule ran.
    db.raw()
        .collection::<Document>("parts")
        .delete_one(doc! {"_id": gone})
        .await?;

    let err = db
        .odm()
        .find::<Product>(Filter::all())
        .populate(Product::parts())
        .await
        .unwrap_err();
    match &err {
        odm::Error::DanglingReference {
            collection,
            path,
            target,
            missing,
            ..
        } => {
            assert_eq!(
                (collection.as_str(), path.as_str(), target.as_str()),
                ("products", "parts", "parts")
            );
            assert!(missing.contains(&gone.to_hex()), "{missing}");
        }
        other => panic!("expected a dangling reference error, got {other}"),
    }

    let skipped = db
        .odm()
        .get::<Product>(c.products[0].id)
        .populate(Product::parts().populate().dangling(Dangling::Skip))
        .await?
        .unwrap();
    assert_eq!(skipped.parts.len(), 4);
    assert!(skipped
        .parts
        .iter()
        .all(|r| r.is_loaded() && *r.id() != gone));

    let kept = db
        .odm()
        .get::<Product>(c.products[0].id)
        .populate(Product::parts().populate().dangling(Dangling::Keep))
        .await?
        .unwrap();
    assert_eq!(kept.parts.len(), 5);
    assert!(!kept.parts[2].is_loaded());
    assert_eq!(*kept.parts[2].id(), gone);
    Ok(())
}

#[tokio::test]
async fn large_id_lists_are_split_into_batches() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db, 30).await?;
    let products = db
        .odm()
        .find::<Product>(Filter::all())
        .populate(Product::parts().populate().batch_size(7))
        .await?;
    assert!(products.iter().all(|p| p.parts.iter().all(Ref::is_loaded)));
    if common::lookup_plan() {
        // Nothing to split: the ids never leave the server.
        assert_eq!(sent(&db), ["aggregate"]);
        return Ok(());
    }
    let finds: Vec<Document> = db
        .commands()
        .take()
        .into_iter()
        .filter_map(|c| c.command)
        .collect();
    // The batches are sent concurrently: their order varies.
    let mut part_queries: Vec<usize> = finds
        .iter()
        .filter(|c| c.get_str("find").ok() == Some("parts"))
        .map(|c| {
            c.get_document("filter")
                .unwrap()
                .get_document("_id")
                .unwrap()
                .get_array("$in")
                .unwrap()
                .len()
        })
        .collect();
    part_queries.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(
        part_queries,
        [7, 7, 6],
        "20 distinct ids, at most 7 per query"
    );
    Ok(())
}

#[tokio::test]
async fn populate_runs_inside_the_callers_session() -> odm::Result<()> {
    let db = common::db().await?;
    let c = catalog(&db, 2).await?;
    let mut session = db.odm().start_session().await?;
    session.start_transaction().await?;
    let extra = Part {
        id: ObjectId::new(),
        partno: "new".into(),
        name: "fan blade assembly".into(),
        qty: 1,
        cost: 1.0,
        price: 2.0,
        supplier: None,
    };
    db.odm().insert_one(&extra).session(&mut session).await?;
    db.odm()
        .update_by_id::<Product>(
            c.products[0].id,
            Product::parts().push(Ref::<Part>::new(extra.id)),
        )
        .session(&mut session)
        .await?;
    let inside = db
        .odm()
        .get::<Product>(c.products[0].id)
        .populate(Product::parts())
        .session(&mut session)
        .await?
        .unwrap();
    assert_eq!(
        inside.parts[5].get().map(|p| p.name.as_str()),
        Some("fan blade assembly")
    );
    session.abort_transaction().await?;
    Ok(())
}

fn at(minute: i64) -> DateTime {
    DateTime::from_millis(1_396_000_000_000 + minute * 60_000)
}

/// The case Mongoose's `options.limit` gets wrong: a per-parent limit must not act globally.
#[tokio::test]
async fn children_of_many_parents_get_a_per_parent_limit_in_one_aggregate() -> odm::Result<()> {
    let db = common::db().await?;
    let host = |name: &str, ip: &str| Host {
        id: ObjectId::new(),
        name: name.into(),
        ipaddr: ip.into(),
    };
    let hosts = vec![
        host("goofy.example.com", "127.66.66.66"),
        host("quiet", "127.0.0.2"),
        host("old", "127.0.0.3"),
    ];
    let mut msgs = Vec::new();
    for minute in 100..110 {
        msgs.push(LogMsg {
            id: ObjectId::new(),
            time: at(minute),
            message: format!("cpu is on fire! {minute}"),
            host: Ref::new(hosts[0].id),
        });
    }
    for minute in 0..5 {
        msgs.push(LogMsg {
            id: ObjectId::new(),
            time: at(minute),
            message: format!("disk {minute}"),
            host: Ref::new(hosts[2].id),
        });
    }
    db.odm().insert_many(&hosts).await?;
    db.odm().insert_many(&msgs).await?;
    db.commands().clear();

    let latest = db
        .odm()
        .children(LogMsg::host(), &hosts)
        .sort(LogMsg::time().desc())
        .limit_per_parent(3)
        .await?;
    assert_eq!(sent(&db), ["aggregate"]);
    let counts: Vec<usize> = hosts.iter().map(|h| latest.of(h).len()).collect();
    assert_eq!(
        counts,
        [3, 0, 3],
        "the older host is not starved by the busy one"
    );
    let times: Vec<DateTime> = latest.of(&hosts[0]).iter().map(|m| m.time).collect();
    assert_eq!(times, [at(109), at(108), at(107)]);
    let times: Vec<DateTime> = latest.of(&hosts[2]).iter().map(|m| m.time).collect();
    assert_eq!(times, [at(4), at(3), at(2)]);

    let all = db
        .odm()
        .children(LogMsg::host(), &hosts)
        .sort(LogMsg::time().asc())
        .await?;
    assert_eq!(sent(&db), ["find"]);
    assert_eq!(all.total(), 15);
    assert_eq!(all.of(&hosts[0]).len(), 10);

    // From ids alone (no parent documents loaded): the same command and the same groups.
    let ids: Vec<ObjectId> = hosts.iter().map(|h| h.id).collect();
    let by_id = db
        .odm()
        .children_of_ids(LogMsg::host(), ids.iter().copied())
        .sort(LogMsg::time().desc())
        .limit_per_parent(3)
        .await?;
    assert_eq!(sent(&db), ["aggregate"]);
    let counts: Vec<usize> = ids.iter().map(|id| by_id.of_id(*id).len()).collect();
    assert_eq!(counts, [3, 0, 3]);
    let times: Vec<DateTime> = by_id.of_id(ids[0]).iter().map(|m| m.time).collect();
    assert_eq!(times, [at(109), at(108), at(107)]);
    assert!(
        by_id.of_id(ObjectId::new()).is_empty(),
        "an unknown id has none"
    );
    Ok(())
}

#[tokio::test]
async fn a_parent_reference_is_indexed_and_queried_by_its_parent() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes_of::<LogMsg>().await?;
    let listed = common::listed_indexes(&db, "logmsg").await;
    assert!(
        listed
            .iter()
            .any(|d| d.get_document("key").ok() == Some(&doc! {"host": 1})),
        "{listed:?}"
    );

    let goofy = Host {
        id: ObjectId::new(),
        name: "goofy.example.com".into(),
        ipaddr: "127.66.66.66".into(),
    };
    db.odm().insert_one(&goofy).await?;
    let msgs: Vec<LogMsg> = (0..20)
        .map(|m| LogMsg {
            id: ObjectId::new(),
            time: at(m),
            message: "cpu is on fire!".into(),
            host: Ref::new(goofy.id),
        })
        .collect();
    db.odm().insert_many(&msgs).await?;
    db.commands().clear();
    let last5 = db
        .odm()
        .find(LogMsg::host().refers_to(goofy.id))
        .sort(LogMsg::time().desc())
        .limit(5)
        .await?;
    assert_eq!(
        last5.iter().map(|m| m.time).collect::<Vec<_>>(),
        [at(19), at(18), at(17), at(16), at(15)]
    );
    assert_eq!(
        db.odm().count(LogMsg::host().refers_to(goofy.id)).await?,
        20
    );
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! {"host": goofy.id}
    );
    Ok(())
}
