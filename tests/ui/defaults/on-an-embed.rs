use odm::prelude::*;

// An embedded document is read and written with the document holding it.
#[derive(Embed, Serialize, Deserialize)]
#[odm(read_preference = "secondaryPreferred")]
struct Address {
    street: String,
}

fn main() {}
