use odm::prelude::*;

// The server refuses a unique hashed index; a unique one beside it is declared apart.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "squads")]
struct Squad {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique, kind = "hashed")]
    team: String,
}

fn main() {}
