use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "categories")]
struct Category {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "category_details", tree, subset_of = "Category")]
struct CategoryDetails {
    #[serde(rename = "_id")]
    id: i64,
    parent: Option<Ref<CategoryDetails>>,
    ancestors: Vec<Ref<CategoryDetails>>,
}

fn main() {}
