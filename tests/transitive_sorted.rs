//! A copy of a copy that is the sort key of a latest-N array: renaming the member can change
//! which entries are the board's last two by name, so the arrays are recomputed rather than
//! updated in place. (Models of their own, apart from the blog's: the recomputation sends one `update` per
//! board, which the blog's command counts do not include.)

mod common;

use common::stored_one;
use odm::bson::{doc, Bson};
use odm::prelude::*;

mod board {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "members")]
    pub struct Member {
        #[serde(rename = "_id")]
        pub id: i32,
        pub name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "entries")]
    pub struct Entry {
        #[serde(rename = "_id")]
        pub id: i32,
        #[reference(on_delete = "restrict")]
        pub member: Ref<Member>,
        #[denormalize(from = "Member", via = "member", fields = "name")]
        #[serde(default)]
        pub member_name: String,
        #[parent(on_delete = "cascade")]
        pub board: Ref<Board>,
    }

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct EntrySummary {
        pub member_name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "boards")]
    pub struct Board {
        #[serde(rename = "_id")]
        pub id: i32,
        /// The last two entries by their copy of the member's name.
        #[denormalize(
            from = "Entry",
            via = "board",
            fields = "member_name",
            latest = 2,
            sort = "member_name"
        )]
        #[serde(default)]
        pub last_by_name: Vec<EntrySummary>,
    }
}

use board::{Board, Entry, Member};

#[tokio::test]
async fn renaming_a_sort_key_two_levels_down_recomputes_the_array() -> odm::Result<()> {
    let db = common::db().await?;
    let members: Vec<Member> = ["Amy", "Ben", "Cat"]
        .iter()
        .zip(1..)
        .map(|(name, id)| Member {
            id,
            name: (*name).into(),
        })
        .collect();
    db.odm().insert_many(&members).await?;
    db.odm()
        .insert_one(&Board {
            id: 1,
            last_by_name: Vec::new(),
        })
        .await?;
    let entries: Vec<Entry> = members
        .iter()
        .map(|m| Entry {
            id: m.id * 10,
            member: Ref::new(m.id),
            member_name: String::new(),
            board: Ref::new(1),
        })
        .collect();
    db.odm().insert_many(&entries).await?;
    let last = |names: &[(i32, &str)]| -> Vec<Bson> {
        names
            .iter()
            .map(|(id, n)| Bson::Document(doc! {"_id": id, "member_name": n}))
            .collect()
    };
    let stored = stored_one(&db, "boards", 1).await.unwrap();
    assert_eq!(
        stored.get_array("last_by_name").unwrap(),
        &last(&[(20, "Ben"), (30, "Cat")])
    );

    db.odm()
        .update_by_id::<Member>(1, Member::name().set("Zoe"))
        .await?;
    let stored = stored_one(&db, "boards", 1).await.unwrap();
    assert_eq!(
        stored.get_array("last_by_name").unwrap(),
        &last(&[(30, "Cat"), (10, "Zoe")]),
        "Amy, renamed Zoe, is now among the last two by name"
    );
    let report = db.odm().verify_copies().await?;
    assert!(report.is_consistent(), "{report}");
    Ok(())
}
