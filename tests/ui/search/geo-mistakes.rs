use odm::geo::Point;
use odm::prelude::*;

// A nearness query needs a 2dsphere index on the model; a geospatial filter needs a place.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "branches")]
struct Branch {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    at: Point,
}

async fn queries(odm: &Odm, here: Point) {
    let _ = Branch::at().near(here, ..=5_000.0);
    let _ = odm.nearest(Branch::at(), here);
    let _ = Branch::name().within_circle(here, 100.0);
}

fn main() {
    let _ = queries;
}
