use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "customers")]
struct Customer {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Embed, Serialize, Deserialize)]
struct CustomerSummary {
    id: Ref<Customer>,
    name: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i32,
    #[denormalize(from = "Customer", fields = "name")]
    customer: CustomerSummary,
}

fn main() {
    // Queries on the summary's fields are fine; writing one is the ODM's job.
    let _ = Order::customer().name().eq("Ada");
    let _ = Order::customer().name().set("Grace");
}
