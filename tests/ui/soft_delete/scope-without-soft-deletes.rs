use odm::prelude::*;

// Only a model with soft deletes has deleted documents to list, restore or purge.
#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
}

async fn run(odm: &Odm) -> odm::Result<()> {
    let _ = odm.find(Book::title().eq("Dune").only_deleted()).await?;
    odm.restore(Book::id_field().eq(1)).await?;
    odm.purge(Book::id_field().eq(1)).await?;
    Ok(())
}

fn main() {
    let _ = run;
}
