use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize)]
struct Source {
    host: String,
    app: String,
}

#[derive(Model, Serialize, Deserialize)]
#[odm(collection = "events", shard_key(keys = "source.host"))]
struct Event {
    #[serde(rename = "_id")]
    id: i32,
    #[embed]
    source: Source,
}

async fn rewrite(odm: &Odm) -> odm::Result<()> {
    // The host would move the document to another shard. The embedded document that holds a
    // key field is fixed as a whole (its paths cannot tell the key's field from the others):
    // `app` is refused too. Without `mutable`, replace the document.
    odm.update_one(Event::id_field().eq(1), Event::source().host().set("h2".to_owned()))
        .await?;
    odm.update_one(Event::id_field().eq(1), Event::source().app().set("api".to_owned()))
        .await?;
    Ok(())
}

fn main() {
    let _ = rewrite;
}
