//! The smallest odm program: one model with an index, one insert, one query.
//!
//! Run it with `cargo run -p odm-examples --example quickstart`: it uses `MONGODB_URI` when set,
//! else starts the local development server (`cargo xtask examples` installs it).

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
    // Your connection string, e.g. "mongodb://localhost:27017". Here: MONGODB_URI when set,
    // else the local development server.
    let uri = odm::testing::test_uri()?;
    let db_name = format!("odm_quickstart_{}", std::process::id());
    let odm = Odm::connect(&uri, &db_name).await?;

    // Creates `last_name_1` on `authors`; sends only `listIndexes` once it exists.
    let report = odm.sync_indexes().await?;
    print!("{report}");

    let author = Author {
        id: None,
        first_name: "Arthur".into(),
        last_name: "Miller".into(),
    };
    let id = odm.insert_one(&author).await?; // the ObjectId generated for `_id`

    let found = odm.find(Author::last_name().eq("Miller")).await?;
    println!("inserted {id}; found {found:?}");

    odm.database().drop().await?;
    // Closes the connections before the runtime stops (the driver ends its tasks cleanly).
    odm.client().clone().shutdown().await;
    Ok(())
}
// ANCHOR_END: all
