use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
#[odm(collection = "publishers")]
struct Publisher {
    name: String,
}

fn main() {}
