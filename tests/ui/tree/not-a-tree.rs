use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: String,
}

async fn children(odm: &Odm) {
    let _ = odm.tree::<Book>().children("1920s").await;
}

fn main() {}
