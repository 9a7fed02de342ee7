use odm::prelude::*;

// A text search needs a text index on the model, with or without its score.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "volumes")]
struct Volume {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
}

async fn queries(odm: &Odm) {
    let _ = odm.find(Filter::<Volume>::text("whaling")).await;
    let _ = odm.search::<Volume>("whaling");
}

fn main() {
    let _ = queries;
}
