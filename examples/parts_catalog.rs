//! Seed 001's parts catalog: products reference their parts (one-to-many, an array of ids on
//! the "one" side), and parts reference their supplier.
//!
//! Shows the application-level join done by `populate`: one `$in` find per relation and level
//! whatever the number of products, a projection per path, a nested path, what happens to a
//! reference whose document was deleted behind the ODM's back, the `pull` and `nullify` delete
//! rules, and a push refused by the array's bound. Every step prints what it did and the
//! commands it sent; ObjectIds are shown by the name of their document (`ObjectId(grommet)`).
//!
//! Run it with `cargo run -p odm-examples --example parts_catalog`: it uses `MONGODB_URI` when
//! set, else starts the local development server (`cargo xtask examples` installs it).
//! With `-- --diagram` it prints the Mermaid diagram of its models instead, and needs no server
//! (the guide's "Diagrams of the schema" shows it).

#[path = "common/mod.rs"]
mod common;

use common::{list, say, say_lines};
use odm::bson::{doc, Bson, Document};
use odm::populate::Plan;
use odm::prelude::*;
use odm::Error;

// ANCHOR: supplier
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "suppliers")]
struct Supplier {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    country: String,
}
// ANCHOR_END: supplier

// ANCHOR: part
/// A part stands alone: it is searched and updated on its own (rule of thumb 2).
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    partno: String,
    name: String,
    qty: i64,
    #[serde(default)]
    cost: f64,
    #[serde(default)]
    price: f64,
    /// Stored as the supplier's id. Deleting the supplier sets it to `null`.
    #[reference(on_delete = "nullify")]
    supplier: Option<Ref<Supplier>>,
}
// ANCHOR_END: part

// ANCHOR: product
/// One-to-many: the product keeps an array of its parts' ids (child-referencing).
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    manufacturer: String,
    #[index(unique)]
    catalog_number: i64,
    /// Deleting a part removes its id from here. The bound is small so that the example
    /// reaches it; a real catalog would say `max = 200`.
    #[reference(many, max = 4, on_delete = "pull")]
    parts: Vec<Ref<Part>>,
}
// ANCHOR_END: product

#[tokio::main]
async fn main() {
    // ANCHOR: diagram
    // `--diagram`: print the picture of this program's models and stop; no server needed.
    if std::env::args().any(|arg| arg == "--diagram") {
        print!("{}", odm::diagram::mermaid(&odm::Catalog::linked()));
        return;
    }
    // ANCHOR_END: diagram
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("parts_catalog").await?;

    steps.start("Create the declared indexes, and those the references need");
    let report = odm.sync_indexes().await?;
    say_lines(&report);
    steps.sent();

    steps.start("Insert two suppliers, five parts and three products");
    // ANCHOR: insert
    let acme = supplier("Acme Fasteners", "USA");
    let blades = supplier("Blade Works", "Germany");
    let grommet = part("123-aff-456", "#4 grommet", 94, &acme);
    let fan = part("456-bcd-789", "fan blade assembly", 12, &blades);
    let switch = part("789-cde-012", "power switch", 40, &acme);
    let screw = part("012-def-345", "left-hand screw", 500, &acme);
    let fuse = part("345-efa-678", "thermal fuse", 75, &acme);

    let shifter = product(
        1234,
        "left-handed smoke shifter",
        &[&grommet, &fan, &switch, &screw],
    );
    let right = product(1235, "right-handed smoke shifter", &[&grommet, &fan, &fuse]);
    let detector = product(1236, "smoke detector", &[&switch, &fuse]);

    odm.insert_many([&acme, &blades]).await?;
    odm.insert_many([&grommet, &fan, &switch, &screw, &fuse])
        .await?;
    odm.insert_many([&shifter, &right, &detector]).await?;
    // ANCHOR_END: insert
    for (id, name) in [
        (acme.id, "acme"),
        (blades.id, "blade_works"),
        (grommet.id, "grommet"),
        (fan.id, "fan_blade"),
        (switch.id, "switch"),
        (screw.id, "screw"),
        (fuse.id, "fuse"),
        (shifter.id, "product_1234"),
        (right.id, "product_1235"),
        (detector.id, "product_1236"),
    ] {
        steps.name(id, name);
    }
    say("suppliers: acme, blade_works; parts: grommet, fan_blade, switch, screw, fuse");
    say("products 1234, 1235 and 1236 reference 4, 3 and 2 of the parts");
    steps.sent();

    steps.start("A product as stored: its parts are an array of ids");
    let products_raw = odm.database().collection::<Document>("products");
    let stored = products_raw
        .find_one(doc! { "catalog_number": 1234 })
        .await?
        .expect("inserted");
    say(steps.show(&Bson::Document(stored)));
    steps.sent();

    steps.start("Populate the parts of every product: one $in find, whatever the number");
    // ANCHOR: populate
    let products = odm
        .find(Filter::all())
        .sort(Product::catalog_number().asc())
        .populate(Product::parts())
        .await?;
    for product in &products {
        let mut names = Vec::new();
        for part in &product.parts {
            names.push(part.loaded()?.name.as_str());
        }
        println!("    {}: {}", product.name, names.join(", "));
    }
    // ANCHOR_END: populate
    steps.sent();

    steps.start("Load only some fields of the parts, sorted by name");
    // ANCHOR: select
    let parts = Product::parts()
        .populate()
        .select(
            Projection::include(&Part::partno())
                .and(&Part::name())
                .and(&Part::qty()),
        )
        .sort(Part::name().asc());
    let shifter_loaded = odm
        .find_one(Product::catalog_number().eq(1234))
        .populate(parts)
        .await?
        .expect("inserted");
    // ANCHOR_END: select
    for part in &shifter_loaded.parts {
        let part = part.loaded()?;
        say(format_args!(
            "{} {:<20} qty {:>3}   (not loaded: price {}, supplier {:?})",
            part.partno, part.name, part.qty, part.price, part.supplier
        ));
    }
    steps.sent();

    steps.start("The first two parts of each product by name, in one aggregate");
    // ANCHOR: limit_per_parent
    let first_two = Product::parts()
        .populate()
        .sort(Part::name().asc())
        .limit_per_parent(2);
    let products = odm
        .find(Product::catalog_number().is_in([1234, 1236]))
        .sort(Product::catalog_number().asc())
        .populate(first_two)
        .populate_plan(Plan::Lookup)
        .await?;
    // ANCHOR_END: limit_per_parent
    for product in &products {
        let shown: Vec<String> = product
            .parts
            .iter()
            .map(|r| match r.get() {
                Some(part) => part.name.clone(),
                None => "(not loaded)".to_owned(),
            })
            .collect();
        say(format_args!("{}: {}", product.name, shown.join(", ")));
    }
    steps.sent();

    steps.start("Nested: the parts of the products, and the supplier of each part");
    // ANCHOR: nested
    let parts_and_suppliers = Product::parts()
        .populate()
        .select(
            Projection::include(&Part::name())
                .and(&Part::partno())
                .and(&Part::qty())
                .and(&Part::supplier()),
        )
        .then(Part::supplier());
    let products = odm
        .find(Product::catalog_number().is_in([1234, 1236]))
        .sort(Product::catalog_number().asc())
        .populate(parts_and_suppliers)
        .await?;
    // ANCHOR_END: nested
    for product in &products {
        let mut parts = Vec::new();
        for part in &product.parts {
            let part = part.loaded()?;
            let supplier = match &part.supplier {
                Some(supplier) => supplier.loaded()?.name.as_str(),
                None => "no supplier",
            };
            parts.push(format!("{} ({supplier})", part.name));
        }
        list(&product.name, parts);
    }
    steps.sent();

    steps.start("Push a fifth part onto a product bounded to 4: refused, atomically");
    // ANCHOR: bounded_push
    let add_fuse = Product::parts().push(Ref::new(fuse.id));
    let refused = odm
        .update_one(Product::catalog_number().eq(1234), add_fuse)
        .await;
    let Err(err @ Error::BoundExceeded { .. }) = refused else {
        panic!("a fifth part must be refused, got {refused:?}");
    };

    let add_screw = Product::parts().push(Ref::new(screw.id));
    let accepted = odm
        .update_one(Product::catalog_number().eq(1236), add_screw)
        .await?;
    // ANCHOR_END: bounded_push
    say(format_args!("refused: {err}"));
    say(format_args!(
        "the smoke detector has room: matched {}, modified {}",
        accepted.matched_count, accepted.modified_count
    ));
    steps.sent();

    steps.start("Delete the thermal fuse behind the ODM's back: two products now dangle");
    // ANCHOR: raw_delete
    // Another program deletes a part with the driver alone: no delete rule runs.
    let parts_raw = odm.database().collection::<Document>("parts");
    parts_raw.delete_one(doc! { "_id": fuse.id }).await?;
    // ANCHOR_END: raw_delete
    say("deleted with the raw driver; products 1235 and 1236 still list it");
    steps.sent();

    steps.start("Populate with the default policy, Dangling::Error: a typed error");
    // ANCHOR: dangling_error
    let result = odm
        .find(Filter::all())
        .sort(Product::catalog_number().asc())
        .populate(Product::parts())
        .await;
    let Err(err @ Error::DanglingReference { .. }) = result else {
        panic!("expected a dangling reference, got {result:?}");
    };
    // ANCHOR_END: dangling_error
    say(format_args!("error: {}", steps.named(&err)));
    steps.sent();

    steps.start("Dangling::Skip: the missing part is left out of the array");
    // ANCHOR: dangling_skip
    let products = odm
        .find(Filter::all())
        .sort(Product::catalog_number().asc())
        .populate(Product::parts().populate().dangling(Dangling::Skip))
        .await?;
    // ANCHOR_END: dangling_skip
    for product in &products {
        let names = product.parts.iter().map(|p| match p.get() {
            Some(part) => part.name.clone(),
            None => format!("<missing {}>", p.id()),
        });
        list(&product.name, names);
    }
    steps.sent();

    steps.start("Dangling::Keep: the reference stays, not loaded; its id is still readable");
    // ANCHOR: dangling_keep
    let products = odm
        .find(Filter::all())
        .sort(Product::catalog_number().asc())
        .populate(Product::parts().populate().dangling(Dangling::Keep))
        .await?;
    let missing: Vec<(&str, ObjectId)> = products
        .iter()
        .flat_map(|product| product.parts.iter().map(move |part| (product, part)))
        .filter(|(_, part)| !part.is_loaded())
        .map(|(product, part)| (product.name.as_str(), *part.id()))
        .collect();
    // ANCHOR_END: dangling_keep
    for (product, id) in missing {
        say(format_args!(
            "{product} lists {}, which no longer exists",
            steps.show(&Bson::ObjectId(id))
        ));
    }
    steps.sent();

    steps.start("Repair by hand: pull the missing id from every product");
    // ANCHOR: repair_dangling
    let repaired = odm
        .update_many(
            Product::parts().refers_to(fuse.id),
            Product::parts().pull(Ref::new(fuse.id)),
        )
        .await?;
    // ANCHOR_END: repair_dangling
    say(format_args!(
        "products repaired: {}",
        repaired.modified_count
    ));
    steps.sent();

    steps.start("Delete the power switch through the ODM: `pull` removes it from the products");
    // ANCHOR: delete_pull
    let deleted = odm.delete_one(Part::partno().eq("789-cde-012")).await?;
    // ANCHOR_END: delete_pull
    let still_listed = odm.count(Product::parts().refers_to(switch.id)).await?;
    say(format_args!(
        "parts deleted: {deleted}; products still listing it: {still_listed}"
    ));
    steps.sent();

    steps.start("Delete a supplier: `nullify` leaves its parts without one");
    // ANCHOR: delete_nullify
    odm.delete_one(Supplier::name().eq("Blade Works")).await?;
    let fan_now = odm.get::<Part>(fan.id).await?.expect("still there");
    assert!(fan_now.supplier.is_none());
    // ANCHOR_END: delete_nullify
    say(format_args!(
        "{}: supplier {:?}",
        fan_now.name, fan_now.supplier
    ));
    steps.sent();

    common::drop_database(&odm).await
}

fn supplier(name: &str, country: &str) -> Supplier {
    Supplier {
        id: ObjectId::new(),
        name: name.into(),
        country: country.into(),
    }
}

fn part(partno: &str, name: &str, qty: i64, supplier: &Supplier) -> Part {
    Part {
        id: ObjectId::new(),
        partno: partno.into(),
        name: name.into(),
        qty,
        cost: 0.94,
        price: 3.99,
        supplier: Some(Ref::new(supplier.id)),
    }
}

// ANCHOR: new_product
/// A product referencing `parts`: each `Ref` holds the part's id, and is stored as it.
fn product(catalog_number: i64, name: &str, parts: &[&Part]) -> Product {
    Product {
        id: ObjectId::new(),
        name: name.into(),
        manufacturer: "Acme Corp".into(),
        catalog_number,
        parts: parts.iter().map(|p| Ref::new(p.id)).collect(),
    }
}
// ANCHOR_END: new_product
