use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Publisher {
    #[index]
    name: String,
}

fn main() {}
