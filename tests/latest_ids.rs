//! A latest-N summary can name the source's `_id` that every stored summary carries.

mod common;

use common::stored_one;
use odm::bson::{doc, DateTime};
use odm::prelude::*;

// ANCHOR: summary
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct RecentMessage {
    /// The message this summary stands for (every stored summary carries its `_id`).
    #[serde(rename = "_id")]
    id: Ref<Message>,
    time: DateTime,
    message: String,
}
// ANCHOR_END: summary

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "machines")]
struct Machine {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[denormalize(
        from = "Message",
        via = "machine",
        fields = "time, message",
        latest = 3,
        sort = "-time"
    )]
    #[serde(default)]
    recent: Vec<RecentMessage>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "messages")]
struct Message {
    #[serde(rename = "_id")]
    id: ObjectId,
    time: DateTime,
    message: String,
    #[parent(on_delete = "cascade")]
    machine: Ref<Machine>,
}

#[tokio::test]
async fn a_latest_summary_can_carry_the_source_id_as_a_field() -> odm::Result<()> {
    let db = common::db().await?;
    let machine = Machine {
        id: ObjectId::new(),
        name: "goofy.example.com".into(),
        recent: vec![],
    };
    db.odm().insert_one(&machine).await?;
    let mut sent = Vec::new();
    for minute in [5_i64, 1, 4, 2, 3] {
        let m = Message {
            id: ObjectId::new(),
            time: DateTime::from_millis(minute * 60_000),
            message: format!("cpu is on fire! {minute}"),
            machine: Ref::new(machine.id),
        };
        db.odm().insert_one(&m).await?;
        sent.push(m);
    }
    // Stored: the newest three, each with the message's `_id`.
    let raw = stored_one(&db, "machines", machine.id)
        .await
        .expect("stored");
    let ids: Vec<_> = raw
        .get_array("recent")
        .expect("recent")
        .iter()
        .map(|s| s.as_document().expect("summary").get("_id").cloned())
        .collect();
    let newest = |minute: i64| {
        sent.iter()
            .find(|m| m.time == DateTime::from_millis(minute * 60_000))
            .map(|m| odm::bson::Bson::ObjectId(m.id))
    };
    assert_eq!(ids, [newest(5), newest(4), newest(3)]);

    // Read through the model, the summary names its source and can be followed.
    let loaded = db.odm().get::<Machine>(machine.id).await?.expect("machine");
    let named: Vec<ObjectId> = loaded.recent.iter().map(|s| *s.id.id()).collect();
    assert_eq!(
        named,
        [5, 4, 3].map(|m| newest(m).and_then(|b| b.as_object_id()).expect("id"))
    );
    let first = db.odm().get::<Message>(*loaded.recent[0].id.id()).await?;
    assert_eq!(
        first.map(|m| m.message),
        Some("cpu is on fire! 5".to_owned())
    );

    // Deleting a message takes it out; the next newest comes in, still with its id.
    db.odm()
        .delete_one(Message::id_field().eq(*loaded.recent[0].id.id()))
        .await?;
    let raw = stored_one(&db, "machines", machine.id)
        .await
        .expect("stored");
    let times: Vec<_> = raw
        .get_array("recent")
        .expect("recent")
        .iter()
        .map(|s| {
            let s = s.as_document().expect("summary");
            (s.get("_id").cloned(), s.get_datetime("time").ok().copied())
        })
        .collect();
    assert_eq!(
        times,
        [4_i64, 3, 2].map(|m| (newest(m), Some(DateTime::from_millis(m * 60_000))))
    );
    assert_eq!(
        db.raw()
            .collection::<odm::bson::Document>("messages")
            .count_documents(doc! {})
            .await?,
        4
    );
    Ok(())
}
