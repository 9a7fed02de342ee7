//! The program of the guide's "Getting started" chapter, as a user writes it: only the
//! dependencies the chapter lists and the names of `odm::prelude`.

// ANCHOR: all
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: Option<ObjectId>,
    first_name: String,
    #[index]
    last_name: String,
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let uri = std::env::var("MONGODB_URI").unwrap_or_else(|_| "mongodb://localhost:27017".into());
    let odm = Odm::connect(&uri, "getting_started").await?;

    // Creates `last_name_1` on `authors` the first time.
    print!("{}", odm.sync_indexes().await?);

    let author = Author {
        id: None,
        first_name: "Arthur".into(),
        last_name: "Miller".into(),
    };
    let id = odm.insert_one(&author).await?;
    let found: Vec<Author> = odm.find(Author::last_name().eq("Miller")).await?;
    println!("inserted {id}; found {found:?}");

    // Closes the connections before the runtime stops.
    odm.client().clone().shutdown().await;
    Ok(())
}
// ANCHOR_END: all
