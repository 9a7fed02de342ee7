//! Text search with its score: one `find` projecting and sorting by `textScore`, the best
//! match first, each with its score. Where the server has no text search (the local dev
//! server), the command's shape is still read from the monitor and its refusal is a typed
//! error, nothing decoded as if it had matched.

mod common;

use common::last_command;
use odm::bson::doc;
use odm::prelude::*;

// ANCHOR: volume
/// A volume of the library, searched by the words of its title and summary.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "searched_volumes", index(keys = "title, summary", text))]
struct Volume {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    summary: String,
    shelf: String,
}
// ANCHOR_END: volume

/// Whether the server created the text index.
async fn text_index(db: &odm::testing::TestDb) -> odm::Result<bool> {
    match db.odm().sync_indexes_of::<Volume>().await {
        Ok(_) => Ok(true),
        Err(odm::Error::IndexSync(_)) => {
            eprintln!("note: this server has no text indexes; checking the command's shape");
            Ok(false)
        }
        Err(other) => Err(other),
    }
}

#[tokio::test]
async fn search_sorts_by_score_and_returns_it() -> odm::Result<()> {
    let db = common::db().await?;
    let supported = text_index(&db).await?;
    let volume = |id: i32, title: &str, summary: &str| Volume {
        id,
        title: title.into(),
        summary: summary.into(),
        shelf: "A".into(),
    };
    db.odm()
        .insert_many(&[
            volume(1, "Walden", "Simple living in the woods"),
            volume(2, "Moby-Dick", "A whaling voyage"),
            volume(
                3,
                "Whales",
                "Whales, whaling and the whaling voyage of whales",
            ),
        ])
        .await?;
    // ANCHOR: search
    let found = db
        .odm()
        .search::<Volume>("whaling voyage")
        .filter(Volume::shelf().eq("A"))
        .limit(10)
        .await;
    // ANCHOR_END: search
    let sent = last_command(&db, "find");
    assert_eq!(
        sent.get_document("filter").unwrap(),
        &doc! { "$text": { "$search": "whaling voyage" }, "shelf": "A" }
    );
    let score = doc! { "_odm_score": { "$meta": "textScore" } };
    assert_eq!(sent.get_document("projection").unwrap(), &score);
    assert_eq!(sent.get_document("sort").unwrap(), &score);
    match (supported, found) {
        (true, Ok(found)) => {
            let ids: Vec<i32> = found.iter().map(|s| s.document.id).collect();
            assert_eq!(ids, [3, 2], "the most matching words first");
            assert!(found[0].score > found[1].score, "{found:?}");
        }
        (false, Err(refused)) => {
            assert!(
                refused.driver_error().is_some(),
                "the server's own: {refused:?}"
            )
        }
        (supported, other) => panic!("text index {supported}: {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn search_options_are_sent_as_the_servers() -> odm::Result<()> {
    let db = common::db().await?;
    let _ = text_index(&db).await?;
    let _ = db
        .odm()
        .search::<Volume>("Walden -Thoreau \"simple living\"")
        .language("en")
        .case_sensitive(true)
        .diacritic_sensitive(false)
        .comment("search page")
        .await;
    let sent = last_command(&db, "find");
    assert_eq!(
        sent.get_document("filter").unwrap(),
        &doc! { "$text": {
            "$search": "Walden -Thoreau \"simple living\"",
            "$language": "en",
            "$caseSensitive": true,
            "$diacriticSensitive": false,
        } }
    );
    assert_eq!(sent.get_str("comment").ok(), Some("search page"));
    Ok(())
}
