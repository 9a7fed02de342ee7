//! Seed 001's parts catalog, one level deeper (products → parts → suppliers → regions),
//! populated both ways: the `$in` plan (one `find` per level) and the lookup plan (the query and
//! every level in one `aggregate` with nested `$lookup`s); what `Plan::Auto` picks; a lookup the
//! server refuses.
//!
//! Run it with `cargo run -p odm-examples --example populate_plans`.

#[path = "common/mod.rs"]
mod common;

use common::say;
use odm::populate::Plan;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "regions")]
struct Region {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "suppliers")]
struct Supplier {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    region: Ref<Region>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    supplier: Ref<Supplier>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference(many, max = 50)]
    parts: Vec<Ref<Part>>,
}

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Three levels: parts, their suppliers, the suppliers' regions.
fn three_levels() -> odm::populate::Populate<Product, Part> {
    Product::parts()
        .populate()
        .then(Part::supplier().populate().then(Supplier::region()))
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("populate_plans").await?;

    steps.start("Insert a region, a supplier, two parts and a product");
    odm.insert_one(&Region {
        id: 1,
        name: "north".into(),
    })
    .await?;
    odm.insert_one(&Supplier {
        id: 1,
        name: "Acme Fasteners".into(),
        region: Ref::new(1),
    })
    .await?;
    odm.insert_many(&[
        Part {
            id: 1,
            name: "#4 grommet".into(),
            supplier: Ref::new(1),
        },
        Part {
            id: 2,
            name: "fan blade assembly".into(),
            supplier: Ref::new(1),
        },
    ])
    .await?;
    odm.insert_one(&Product {
        id: 1,
        name: "left-handed smoke shifter".into(),
        parts: vec![Ref::new(1), Ref::new(2)],
    })
    .await?;
    steps.sent();

    steps.start("Three levels with the $in plan: one find per level");
    // ANCHOR: in_plan
    let product = odm
        .get::<Product>(1)
        .populate(three_levels())
        .populate_plan(Plan::In)
        .await?
        .expect("inserted");
    // ANCHOR_END: in_plan
    let region = &product.parts[0].loaded()?.supplier.loaded()?.region;
    say(format!(
        "region of the first part's supplier: {}",
        region.loaded()?.name
    ));
    steps.sent();

    steps.start("The same with the lookup plan: one aggregate");
    // ANCHOR: lookup_plan
    let same = odm
        .get::<Product>(1)
        .populate(three_levels())
        .populate_plan(Plan::Lookup)
        .await?
        .expect("inserted");
    // ANCHOR_END: lookup_plan
    assert_eq!(format!("{same:?}"), format!("{product:?}"), "same result");
    say("the same product, parts, suppliers and regions");
    steps.sent();

    steps.start("Plan::Auto: one document, one level without options -> the lookup");
    odm.get::<Product>(1).populate(Product::parts()).await?;
    steps.sent();

    steps.start("Plan::Auto: no limit -> $in (shared parts would come back once per product)");
    odm.find::<Product>(Filter::all())
        .populate(Product::parts())
        .await?;
    steps.sent();

    steps.start("A product past 16 MB once its parts are looked up into it");
    let big: Vec<Part> = (10..30)
        .map(|id| Part {
            id,
            name: "x".repeat(1024 * 1024),
            supplier: Ref::new(1),
        })
        .collect();
    odm.insert_many(&big).await?;
    odm.insert_one(&Product {
        id: 2,
        name: "heavy".into(),
        parts: (10..30).map(Ref::new).collect(),
    })
    .await?;
    steps.log().clear();
    // ANCHOR: refused
    let forced = odm
        .get::<Product>(2)
        .populate(Product::parts())
        .populate_plan(Plan::Lookup)
        .await;
    let Err(odm::Error::LookupRefused { code, .. }) = forced else {
        panic!("a lookup past 16 MB is refused: {forced:?}")
    };
    // Plan::Auto retries with the $in plan.
    let product = odm.get::<Product>(2).populate(Product::parts()).await?;
    // ANCHOR_END: refused
    assert!(product.expect("inserted").parts.iter().all(Ref::is_loaded));
    say(format!(
        "forced: LookupRefused (code {code}); Auto: refused aggregate, then the $in plan"
    ));
    let names = steps.log().names();
    say(format!("commands: {}", names.join(", ")));
    steps.log().clear();

    common::drop_database(&odm).await
}
