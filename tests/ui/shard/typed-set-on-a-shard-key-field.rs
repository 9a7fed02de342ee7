use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "products", shard_key(keys = "category"))]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    category: String,
}

async fn recategorize(odm: &Odm) -> odm::Result<()> {
    // Would move the document to another shard: refused without `mutable`.
    odm.update_one(Product::id_field().eq(1), Product::category().set("tools".to_owned()))
        .await?;
    Ok(())
}

fn main() {
    let _ = recategorize;
}
