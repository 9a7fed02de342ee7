use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Line {
    qty: i32,
}

// Two fields compared hold the same type, one value each; a remainder is an integer's.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i32,
    total: i32,
    paid: f64,
    code: String,
    #[embed(max = 10)]
    lines: Vec<Line>,
}

fn main() {
    let _ = Order::total().lt_field(&Order::paid());
    let _ = Order::lines().qty().gt_field(&Order::total());
    let _ = Order::code().modulo(2, 0);
    let _ = Order::paid().modulo(2, 0);
}
