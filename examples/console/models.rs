//! The parts catalog of the console's example (seed 001, denormalized as in
//! `parts_denormalized`): a product keeps the name of each of its parts, and a part made for one
//! product keeps that product's name. Shared by the example and its test.

use odm::prelude::*;

// ANCHOR: models
/// A part stands alone; one made for a product carries a copy of the product's name.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
pub struct Part {
    #[serde(rename = "_id")]
    pub id: i32,
    #[index(unique)]
    pub partno: String,
    pub name: String,
    #[reference(on_delete = "nullify")]
    pub product: Option<Ref<Product>>,
    #[denormalize(from = "Product", via = "product", fields = "name")]
    #[serde(default)]
    pub product_name: String,
}

/// What a product keeps of each of its parts.
#[derive(Embed, Serialize, Deserialize, Debug)]
pub struct PartSummary {
    pub id: Ref<Part>,
    pub name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
    #[index(unique)]
    pub catalog_number: i64,
    #[denormalize(from = "Part", fields = "name", max = 200)]
    pub parts: Vec<PartSummary>,
}
// ANCHOR_END: models

/// Two common parts, a product using them, and a part made for that product: part 3's
/// `product_name` and the product's summaries are copies.
pub async fn seed(odm: &Odm) -> odm::Result<()> {
    let part = |id: i32, partno: &str, name: &str, product: Option<i32>| Part {
        id,
        partno: partno.to_owned(),
        name: name.to_owned(),
        product: product.map(Ref::new),
        product_name: String::new(),
    };
    odm.insert_many(&[
        part(1, "123-aff-456", "#4 grommet", None),
        part(2, "345-aff-789", "fuse", None),
    ])
    .await?;
    let summary = |id: i32| PartSummary {
        id: Ref::new(id),
        name: String::new(),
    };
    let detector = Product {
        id: 10,
        name: "left-handed smoke shifter".to_owned(),
        catalog_number: 1134,
        parts: vec![summary(1), summary(2)],
    };
    odm.insert_one(&detector).await?;
    odm.insert_one(&part(3, "567-aff-123", "shifter lever", Some(10)))
        .await?;
    Ok(())
}
