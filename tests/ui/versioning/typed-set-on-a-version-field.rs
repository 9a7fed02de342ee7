use odm::prelude::*;

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    #[odm(version)]
    version: u64,
}

async fn bump(odm: &Odm) -> odm::Result<()> {
    odm.update_by_id::<Book>(1, Book::version().set(2)).await?;
    Ok(())
}

fn main() {}
