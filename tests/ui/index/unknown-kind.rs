use odm::prelude::*;

// `2d` (flat coordinates) is not one of the kinds odm declares.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "places")]
struct Place {
    #[serde(rename = "_id")]
    id: i32,
    #[index(kind = "2d")]
    location: Vec<f64>,
}

fn main() {}
