use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct Supplier {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Embed, Serialize, Deserialize)]
struct Note {
    text: String,
}

#[derive(Model, Serialize, Deserialize)]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "nullify")]
    supplier: Ref<Supplier>,
    #[reference(many, max = 9000)]
    parts: Vec<Ref<Part>>,
    #[embed]
    notes: Vec<Note>,
    #[parent(on_delete = "remove")]
    maker: Ref<Supplier>,
}

fn main() {}
