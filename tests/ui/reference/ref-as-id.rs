use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
struct User {
    #[serde(rename = "_id")]
    id: i32,
}

#[derive(Model, Serialize, Deserialize)]
struct Profile {
    #[serde(rename = "_id")]
    user: Ref<User>,
    bio: String,
}

fn main() {}
