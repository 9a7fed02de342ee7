//! Seed 001's parts catalog, denormalized: the product keeps the name of each of its parts
//! next to the part's id (many -> one, `parts: [{id, name}]`), and a part made for one product
//! keeps that product's name and catalog number (one -> many, `product_name`,
//! `product_catalog_number`).
//!
//! `parts_catalog` is the same catalog without copies (`parts: [ids]`, read with populate).
//! This one shows the copies filled on insert with one query, renames cascading to every copy
//! (followed by a re-read of the source, or in a transaction), summaries pushed and references
//! moved taking their copies from the source, writes to a copy refused, the cascade plan, copies corrupted
//! behind the ODM's back found and repaired by the sweep, summaries pulled when their part is
//! deleted, copies cleared when their product is, and the read/write audit of rule of thumb 5. Every step prints what it did and the
//! commands it sent; ObjectIds are shown by the name of their document (`ObjectId(grommet)`).
//!
//! Run it with `cargo run -p odm-examples --example parts_denormalized`: it uses `MONGODB_URI`
//! when set, else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{list, say, say_lines};
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::{Error, TransactionMode};

// ANCHOR: part
/// A part stands alone (rule of thumb 2). A part made for one product carries a copy of that
/// product's name and catalog number, kept up to date by the ODM (one -> many).
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    partno: String,
    name: String,
    /// Changes with every sale: copying it anywhere is a compile warning (rule of thumb 5).
    #[frequently_updated]
    qty: i64,
    cost: f64,
    price: f64,
    /// The product this part is made for; `None` for the parts every product uses.
    #[reference(on_delete = "nullify")]
    product: Option<Ref<Product>>,
    /// Copied from `product.name` on insert, and whenever the product's name changes. Empty
    /// when the part has no product (`serde(default)`).
    #[denormalize(from = "Product", via = "product", fields = "name")]
    #[serde(default)]
    product_name: String,
    /// Copied from `product.catalog_number`: one attribute per copied field.
    #[denormalize(from = "Product", via = "product", fields = "catalog_number")]
    #[serde(default)]
    product_catalog_number: i64,
}
// ANCHOR_END: part

// ANCHOR: product
/// What a product keeps of each of its parts: the id, and the name (many -> one).
#[derive(Embed, Serialize, Deserialize, Debug)]
struct PartSummary {
    /// The part's id: stored as `id`, as in the seed's `{id: ObjectId('AAAA'), name: ...}`.
    id: Ref<Part>,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    manufacturer: String,
    #[index(unique)]
    catalog_number: i64,
    /// Summaries of the parts: the names are copied from the parts on insert and whenever a
    /// part is renamed; deleting a part pulls its summary. At most 200 (rule of thumb 3).
    #[denormalize(from = "Part", fields = "name", max = 200)]
    parts: Vec<PartSummary>,
}
// ANCHOR_END: product

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
    let (odm, steps) = common::connect("parts_denormalized").await?;
    let parts_raw = odm.database().collection::<Document>("parts");
    let products_raw = odm.database().collection::<Document>("products");

    steps.start("Create the indexes: `parts.id` finds the summaries of a part");
    let report = odm.sync_indexes().await?;
    say_lines(&report);
    steps.sent();

    steps.start("Insert the four parts every product uses: they copy nothing");
    let grommet = part("123-aff-456", "#4 grommet", 94, None);
    let fan = part("456-bcd-789", "fan blade assembly", 12, None);
    let switch = part("789-cde-012", "power switch", 40, None);
    let fuse = part("345-efa-678", "thermal fuse", 75, None);
    odm.insert_many([&grommet, &fan, &switch, &fuse]).await?;
    for (p, name) in [
        (&grommet, "grommet"),
        (&fan, "fan_blade"),
        (&switch, "switch"),
        (&fuse, "fuse"),
    ] {
        steps.name(p.id, name);
    }
    steps.sent();

    steps.start("Insert three products listing their parts by id: one find fills every name");
    // ANCHOR: insert_products
    // The summaries carry the ids; the names are taken from the parts by the ODM.
    let shifter = product(
        1234,
        "left-handed smoke shifter",
        &[&grommet, &fan, &switch],
    );
    let right = product(1235, "right-handed smoke shifter", &[&grommet, &fan, &fuse]);
    let detector = product(1236, "smoke detector", &[&switch, &fuse]);
    odm.insert_many([&shifter, &right, &detector]).await?;
    // ANCHOR_END: insert_products
    steps.name(shifter.id, "product_1234");
    steps.name(right.id, "product_1235");
    steps.name(detector.id, "product_1236");
    steps.sent();

    steps.start("Product 1234 as stored: the seed's document, names next to the ids");
    let stored = products_raw
        .find_one(doc! { "catalog_number": 1234 })
        .await?
        .expect("inserted");
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("Insert the parts made for one product: one find copies its name and number");
    // ANCHOR: insert_parts
    let screw = part("012-def-345", "left-hand screw", 500, Some(&shifter));
    let rscrew = part("678-fab-901", "right-hand screw", 500, Some(&right));
    odm.insert_many([&screw, &rscrew]).await?;
    // ANCHOR_END: insert_parts
    steps.name(screw.id, "screw");
    steps.name(rscrew.id, "right_screw");
    steps.sent();

    steps.start("The left-hand screw as stored: the product's name and number are in the part");
    let stored = parts_raw
        .find_one(doc! { "_id": screw.id })
        .await?
        .expect("inserted");
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("A summary of a part that does not exist is refused, before anything is written");
    // ANCHOR: dangling
    let ghost = part("999-zzz-999", "ghost part", 0, None);
    let haunted = product(1237, "haunted detector", &[&switch, &ghost]);
    let result = odm.insert_one(&haunted).await;
    let Err(err @ Error::DanglingReference { .. }) = result else {
        panic!("a summary of a missing part must be refused, got {result:?}");
    };
    // ANCHOR_END: dangling
    steps.name(ghost.id, "ghost");
    steps.name(haunted.id, "product_1237");
    say(format_args!("refused: {}", steps.named(&err)));
    say(format_args!(
        "products stored: {}",
        products_raw.count_documents(doc! {}).await?
    ));
    steps.sent();

    steps.start("A product page: the names of its parts come with the product, one find");
    // ANCHOR: read_names
    let page = odm
        .find_one(Product::catalog_number().eq(1234))
        .await?
        .expect("inserted");
    let names = page.parts.iter().map(|p| p.name.as_str());
    // ANCHOR_END: read_names
    list(&page.name, names);
    steps.sent();

    steps.start("Any other field of the parts is still a join, by the ids in the summaries");
    // ANCHOR: read_join
    let ids = page.parts.iter().map(|p| *p.id.id());
    let stock = odm
        .find(Part::id().is_in(ids))
        .sort(Part::name().asc())
        .await?;
    // ANCHOR_END: read_join
    for p in &stock {
        say(format_args!("{:<20} qty {:>3}", p.name, p.qty));
    }
    steps.sent();

    steps.start("The stock list: every part with the product it is made for, one find");
    // ANCHOR: read_parts
    let all = odm
        .find(Filter::<Part>::all())
        .sort(Part::partno().asc())
        .await?;
    for p in &all {
        let made_for = match &p.product {
            Some(_) => format!("for {} (#{})", p.product_name, p.product_catalog_number),
            None => "used by any product".to_owned(),
        };
        say(format_args!("{} {:<20} {made_for}", p.partno, p.name));
    }
    // ANCHOR_END: read_parts
    steps.sent();

    steps.start("Rename the #4 grommet: the part, every product listing it, a re-read");
    // ANCHOR: rename_part
    odm.update_by_id::<Part>(grommet.id, Part::name().set("#4 grommet, zinc"))
        .await?;
    // ANCHOR_END: rename_part
    let listing = odm
        .find(Product::parts().id().eq(Ref::new(grommet.id)))
        .sort(Product::catalog_number().asc())
        .await?;
    for p in &listing {
        list(&p.name, p.parts.iter().map(|s| s.name.as_str()));
    }
    steps.sent();

    steps.start("Rename and renumber product 1235: one update per copied field");
    // ANCHOR: rename_product
    odm.update_one(
        Product::catalog_number().eq(1235),
        Product::name()
            .set("right-handed smoke shifter II")
            .and(Product::catalog_number().set(1335)),
    )
    .await?;
    // ANCHOR_END: rename_product
    let now = odm.get::<Part>(rscrew.id).await?.expect("inserted");
    say(format_args!(
        "{}: for {} (#{})",
        now.name, now.product_name, now.product_catalog_number
    ));
    steps.sent();

    steps.start("Sell one left-hand screw: `qty` is not copied, so nothing cascades");
    // ANCHOR: no_cascade
    odm.update_by_id::<Part>(screw.id, Part::qty().inc(-1))
        .await?;
    // ANCHOR_END: no_cascade
    steps.sent();

    steps.start("Push a summary onto product 1236: its name is taken from the part");
    // ANCHOR: push_summary
    // Whatever name the caller puts in the summary, the part's is stored.
    odm.update_by_id::<Product>(
        detector.id,
        Product::parts().push(PartSummary {
            id: Ref::new(grommet.id),
            name: "grommet?".into(),
        }),
    )
    .await?;
    // ANCHOR_END: push_summary
    let now = odm.get::<Product>(detector.id).await?.expect("inserted");
    list(&now.name, now.parts.iter().map(|s| s.name.as_str()));
    steps.sent();

    steps.start("Move the left-hand screw to product 1236 and back: its copies follow");
    // ANCHOR: move_part
    odm.update_by_id::<Part>(screw.id, Part::product().set(Some(Ref::new(detector.id))))
        .await?;
    // ANCHOR_END: move_part
    let moved = odm.get::<Part>(screw.id).await?.expect("inserted");
    say(format_args!(
        "{}: for {} (#{})",
        moved.name, moved.product_name, moved.product_catalog_number
    ));
    odm.update_by_id::<Part>(screw.id, Part::product().set(Some(Ref::new(shifter.id))))
        .await?;
    let back = odm.get::<Part>(screw.id).await?.expect("inserted");
    say(format_args!(
        "{}: for {} (#{})",
        back.name, back.product_name, back.product_catalog_number
    ));
    steps.sent();

    steps.start("Write a copy by hand: refused, nothing sent");
    // ANCHOR: copy_write
    // `Part::product_name().set(..)` does not compile; a path spelt by hand is refused here.
    let refused = odm
        .update_by_id::<Part>(
            screw.id,
            Field::<Part, String>::at_path("product_name")?.set("my own name"),
        )
        .await;
    // ANCHOR_END: copy_write
    match refused {
        Err(e @ Error::CopyWrite { .. }) => say(format_args!("refused: {e}")),
        other => panic!("expected a refusal, got {other:?}"),
    }
    steps.sent();

    steps.start("In a transaction, on request: readers never see a stale copy");
    // ANCHOR: in_transaction
    odm.update_by_id::<Part>(grommet.id, Part::name().set("#4 grommet"))
        .transaction(TransactionMode::Auto)
        .await?;
    // ANCHOR_END: in_transaction
    steps.sent();

    steps.start("The cascade plan of each model: what a change of each copied field sends");
    // ANCHOR: plan
    let part_plan = odm::denormalize::cascade_plan::<Part>();
    let product_plan = odm::denormalize::cascade_plan::<Product>();
    // ANCHOR_END: plan
    say_lines(&part_plan);
    say_lines(&product_plan);
    steps.sent();

    steps.start("Corrupt two copies with the driver alone, as another program would");
    // ANCHOR: corrupt
    products_raw
        .update_one(
            doc! { "catalog_number": 1234 },
            doc! { "$set": { "parts.1.name": "fan blade" } },
        )
        .await?;
    parts_raw
        .update_one(
            doc! { "_id": screw.id },
            doc! { "$set": { "product_name": "left-handed smoke shifter (old)" } },
        )
        .await?;
    // ANCHOR_END: corrupt
    say("product 1234 now says `fan blade`; the left-hand screw names an old product name");
    steps.sent();

    steps.start("The sweep finds them: every copy compared with its source, in batches");
    // ANCHOR: verify
    let report = odm.verify_copies().await?;
    // ANCHOR_END: verify
    say_lines(steps.named(&report));
    steps.sent();

    steps.start("The sweep with `.repair(true)`: one update per wrong copy");
    // ANCHOR: repair
    let repaired = odm.verify_copies().repair(true).await?;
    let again = odm.verify_copies().await?;
    assert!(again.is_consistent());
    // ANCHOR_END: repair
    say_lines(steps.named(&repaired));
    say(format_args!("then: {}", steps.named(&again).trim_end()));
    steps.sent();

    steps.start("Delete the thermal fuse through the ODM: its summaries are pulled");
    // ANCHOR: delete
    let deleted = odm.delete_one(Part::partno().eq("345-efa-678")).await?;
    // ANCHOR_END: delete
    let still = odm
        .count(Product::parts().id().eq(Ref::new(fuse.id)))
        .await?;
    say(format_args!(
        "parts deleted: {deleted}; products still listing it: {still}"
    ));
    steps.sent();

    steps.start("Delete product 1335: `nullify` empties the reference, and its copies go with it");
    // ANCHOR: delete_product
    odm.delete_one(Product::catalog_number().eq(1335)).await?;
    let orphan = odm.get::<Part>(rscrew.id).await?.expect("still there");
    // ANCHOR_END: delete_product
    say(format_args!(
        "{}: product {:?}, product_name {:?}, product_catalog_number {}",
        orphan.name, orphan.product, orphan.product_name, orphan.product_catalog_number
    ));
    steps.sent();

    steps.start("The read/write audit of one simulated day (rule of thumb 5)");
    // ANCHOR: audit
    odm::denormalize::reset_audit();
    // 20 views of the product list: 2 products, each carrying the names of its parts.
    for _ in 0..20 {
        odm.find(Filter::<Product>::all()).await?;
    }
    // Two part renames.
    odm.update_by_id::<Part>(fan.id, Part::name().set("fan blade assembly, 5 blades"))
        .await?;
    odm.update_by_id::<Part>(switch.id, Part::name().set("power switch, 10 A"))
        .await?;
    // The stock list, read once: 5 parts, each carrying its product's name and number.
    odm.find(Filter::<Part>::all()).await?;
    // A naming campaign renames product 1234 eight times.
    for i in 1..=8 {
        odm.update_by_id::<Product>(
            shifter.id,
            Product::name().set(format!("left-handed smoke shifter, draft {i}")),
        )
        .await?;
    }
    let audit = odm::denormalize::audit();
    // ANCHOR_END: audit
    say_lines(&audit);
    for row in audit.write_heavy() {
        say(format_args!(
            "write-heavy: {}.{} ({} read, {} written)",
            row.collection, row.path, row.reads, row.writes
        ));
    }

    common::drop_database(&odm).await
}

fn part(partno: &str, name: &str, qty: i64, made_for: Option<&Product>) -> Part {
    Part {
        id: ObjectId::new(),
        partno: partno.into(),
        name: name.into(),
        qty,
        cost: 0.94,
        price: 3.99,
        product: made_for.map(|p| Ref::new(p.id)),
        // Filled in by the ODM from the product on insert.
        product_name: String::new(),
        product_catalog_number: 0,
    }
}

// ANCHOR: new_product
/// A product listing `parts`. Each summary is built from the part's id alone: the ODM copies
/// the name from the part when the product is inserted.
fn product(catalog_number: i64, name: &str, parts: &[&Part]) -> Product {
    Product {
        id: ObjectId::new(),
        name: name.into(),
        manufacturer: "Acme Corp".into(),
        catalog_number,
        parts: parts
            .iter()
            .map(|p| PartSummary {
                id: Ref::new(p.id),
                name: String::new(),
            })
            .collect(),
    }
}
// ANCHOR_END: new_product
