//! Typed aggregation over the parts catalog and its reviews: stock per supplier with typed
//! accumulators, the parts of each product joined along the declared reference, reviews per
//! month by a compound key of date parts, a tag cloud from an unwound array, typed `distinct`,
//! and a stage of one's own with a typed output.
//!
//! Run it with `cargo run -p odm-examples --example aggregation`: it uses `MONGODB_URI` when
//! set, else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{list, say};
use odm::aggregate::{avg, count, max, month, push, sum, year};
use odm::bson::{doc, DateTime};
use odm::prelude::*;

// ANCHOR: models
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "suppliers")]
struct Supplier {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    qty: i64,
    price: f64,
    tags: Vec<String>,
    #[reference]
    supplier: Ref<Supplier>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference(many, max = 200)]
    parts: Vec<Ref<Part>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    product: Ref<Product>,
    stars: i32,
    at: DateTime,
}
// ANCHOR_END: models

// ANCHOR: stock_view
/// What the group produces: one per supplier.
#[derive(Deserialize, Debug)]
struct Stock {
    #[serde(rename = "_id")]
    supplier: Ref<Supplier>,
    parts: i64,
    units: i64,
    mean_price: f64,
    names: Vec<String>,
}
// ANCHOR_END: stock_view

// ANCHOR: stock
async fn stock_per_supplier(odm: &Odm) -> odm::Result<Vec<Stock>> {
    odm.aggregate::<Part>()
        .filter(Part::qty().gt(0))
        .group(odm::group!(Stock {
            by supplier: Part::supplier(),
            parts: count(),
            units: sum(Part::qty()),
            mean_price: avg(Part::price()),
            names: push(Part::name()),
        }))
        .sort(odm::view_field!(Stock, units).desc())
        .await
}
// ANCHOR_END: stock

// ANCHOR: lookup
/// A product with its parts, joined on the server.
#[derive(Deserialize, Debug)]
struct ProductParts {
    name: String,
    parts: Vec<Part>,
}

async fn products_with_parts(odm: &Odm) -> odm::Result<Vec<ProductParts>> {
    odm.aggregate::<Product>()
        .sort(Product::name().asc())
        .lookup(&Product::parts(), odm::view_field!(ProductParts, parts))
        .await
}
// ANCHOR_END: lookup

// ANCHOR: dbref_lookup
/// A loan of a part, referenced as a standard DBRef (`{ $ref: "parts", $id: 1 }`), as other
/// programs sharing the collection expect.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "loans")]
struct Loan {
    #[serde(rename = "_id")]
    id: i32,
    borrower: String,
    #[reference]
    #[serde(with = "odm::dbref")]
    part: Ref<Part>,
}

/// A loan with its part, joined by the DBRef's `$id`.
#[derive(Deserialize, Debug)]
struct LoanedPart {
    borrower: String,
    part: Vec<Part>,
}

async fn loans_with_parts(odm: &Odm) -> odm::Result<Vec<LoanedPart>> {
    odm.aggregate::<Loan>()
        .sort(Loan::id().asc())
        .lookup(&Loan::part(), odm::view_field!(LoanedPart, part))
        .await
}
// ANCHOR_END: dbref_lookup

// ANCHOR: per_month
#[derive(Deserialize, Debug)]
struct Month {
    year: i32,
    month: i32,
}

#[derive(Deserialize, Debug)]
struct PerMonth {
    #[serde(rename = "_id")]
    month: Month,
    reviews: i64,
    stars: f64,
    best: i32,
}

async fn reviews_per_month(odm: &Odm) -> odm::Result<Vec<PerMonth>> {
    odm.aggregate::<Review>()
        .group(odm::group!(PerMonth {
            by month: { year: year(Review::at()), month: month(Review::at()) },
            reviews: count(),
            stars: avg(Review::stars()),
            best: max(Review::stars()),
        }))
        .sort(
            odm::view_field!(PerMonth, month.year as "_id.year")
                .asc()
                .then(odm::view_field!(PerMonth, month.month as "_id.month").asc()),
        )
        .await
}
// ANCHOR_END: per_month

// ANCHOR: unwind
/// A part seen through one of its tags.
#[derive(Deserialize, Debug)]
struct Tagged {
    tag: String,
}

#[derive(Deserialize, Debug)]
struct Cloud {
    #[serde(rename = "_id")]
    tag: String,
    parts: i64,
}

async fn tag_cloud(odm: &Odm) -> odm::Result<Vec<Cloud>> {
    odm.aggregate::<Part>()
        .unwind(&Part::tags(), odm::view_field!(Tagged, tag))
        .group(odm::group!(Cloud {
            by tag: odm::view_field!(Tagged, tag),
            parts: count(),
        }))
        .sort(odm::view_field!(Cloud, tag as "_id").asc())
        .await
}
// ANCHOR_END: unwind

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("aggregation").await?;

    steps.start("Insert two suppliers, five parts, two products and five reviews");
    let suppliers = [(1, "Acme"), (2, "Globex")].map(|(id, name)| Supplier {
        id,
        name: name.to_owned(),
    });
    odm.insert_many(&suppliers).await?;
    let parts = [
        (1, "grommet", 10, 0.5, vec!["rubber"], 1),
        (2, "washer", 40, 0.1, vec!["steel"], 1),
        (3, "bolt", 25, 0.3, vec!["steel"], 2),
        (4, "gasket", 0, 2.0, vec!["rubber", "seal"], 2),
        (5, "spring", 8, 1.2, vec!["steel"], 2),
    ]
    .map(|(id, name, qty, price, tags, supplier)| Part {
        id,
        name: name.to_owned(),
        qty,
        price,
        tags: tags.into_iter().map(str::to_owned).collect(),
        supplier: Ref::new(supplier),
    });
    odm.insert_many(&parts).await?;
    let products = [
        Product {
            id: 1,
            name: "tap".into(),
            parts: vec![Ref::new(1), Ref::new(2), Ref::new(4)],
        },
        Product {
            id: 2,
            name: "hinge".into(),
            parts: vec![Ref::new(3), Ref::new(5)],
        },
    ];
    odm.insert_many(&products).await?;
    let day = |m: u8, d: u8| {
        DateTime::builder()
            .year(2024)
            .month(m)
            .day(d)
            .build()
            .expect("a date")
    };
    let reviews = [
        (1, 1, 5, day(1, 4)),
        (2, 2, 3, day(1, 19)),
        (3, 1, 4, day(2, 2)),
        (4, 1, 2, day(3, 11)),
        (5, 2, 5, day(3, 28)),
    ]
    .map(|(id, product, stars, at)| Review {
        id,
        product: Ref::new(product),
        stars,
        at,
    });
    odm.insert_many(&reviews).await?;
    steps.sent();

    steps.start("Stock per supplier: $match, $group with typed accumulators, $sort on the view");
    for s in stock_per_supplier(&odm).await? {
        say(format_args!(
            "supplier {}: {} parts, {} units, mean price {:.2} ({})",
            s.supplier.id(),
            s.parts,
            s.units,
            s.mean_price,
            s.names.join(", ")
        ));
    }
    steps.sent();

    steps.start("Each product with its parts: $lookup along the declared reference");
    for p in products_with_parts(&odm).await? {
        list(&p.name, p.parts.iter().map(|part| part.name.as_str()));
    }
    steps.sent();

    steps.start("Loans of parts stored as DBRefs: $lookup by their $id");
    odm.insert_many(&[
        Loan {
            id: 1,
            borrower: "ann".into(),
            part: Ref::new(1),
        },
        Loan {
            id: 2,
            borrower: "bob".into(),
            part: Ref::new(3),
        },
    ])
    .await?;
    steps.log().clear();
    for l in loans_with_parts(&odm).await? {
        list(&l.borrower, l.part.iter().map(|part| part.name.as_str()));
    }
    steps.sent();

    steps.start("Reviews per month: a compound key of date parts");
    for m in reviews_per_month(&odm).await? {
        say(format_args!(
            "{}-{:02}: {} reviews, {:.1} stars on average, best {}",
            m.month.year, m.month.month, m.reviews, m.stars, m.best
        ));
    }
    steps.sent();

    steps.start("A tag cloud: $unwind of the tags, then a group per tag");
    for c in tag_cloud(&odm).await? {
        say(format_args!("{}: {}", c.tag, c.parts));
    }
    steps.sent();

    steps.start("Typed distinct: the tags of the parts in stock");
    // ANCHOR: distinct
    let tags: Vec<String> = odm
        .distinct_elements(&Part::tags())
        .filter(Part::qty().gt(0))
        .await?;
    // ANCHOR_END: distinct
    list("tags", tags);
    steps.sent();

    steps.start("A stage of one's own, with a typed output");
    // ANCHOR: raw
    #[derive(Deserialize)]
    struct Total {
        units: i64,
    }
    let total: Vec<Total> = odm
        .aggregate::<Part>()
        .stage(doc! { "$group": { "_id": null, "units": { "$sum": "$qty" } } })
        .output::<Total>()
        .await?;
    // ANCHOR_END: raw
    say(format_args!("{} units in stock", total[0].units));
    steps.sent();

    common::drop_database(&odm).await
}
