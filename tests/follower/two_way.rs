//! Two-way references written from one side by another program: the children's references
//! changed (moved, inserted, replaced, deleted), before and while a follower runs. The
//! follower keeps the parents' arrays to the children's references; read back raw.

use odm::bson::{doc, Bson, Document};

use super::common;
use super::gaps::{other_program, sent_to};

mod models {
    use odm::prelude::*;

    /// A two-way reference, declared on the parents' side: a crew lists its sailors (two at
    /// most), each sailor names its crew.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "crews")]
    pub struct Crew {
        #[serde(rename = "_id")]
        pub id: i64,
        #[reference(many, max = 2, inverse = "crew", on_delete = "pull")]
        pub members: Vec<Ref<Sailor>>,
    }

    /// A two-way reference declared on the children's side, with room to spare: a team lists
    /// its players, each player names its team.
    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "teams")]
    pub struct Team {
        #[serde(rename = "_id")]
        pub id: i64,
        #[reference(many, max = 1000, on_delete = "pull")]
        #[serde(default)]
        pub players: Vec<Ref<Player>>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "players")]
    pub struct Player {
        #[serde(rename = "_id")]
        pub id: i64,
        #[parent(inverse = "players")]
        pub team: Ref<Team>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "sailors")]
    pub struct Sailor {
        #[serde(rename = "_id")]
        pub id: i64,
        #[parent]
        pub crew: Ref<Crew>,
    }
}

async fn members(db: &odm::testing::TestDb) -> Vec<(i64, Vec<i64>)> {
    super::stored(db, "crews")
        .await
        .iter()
        .map(|c| {
            let list = c
                .get_array("members")
                .map(|a| a.iter().filter_map(Bson::as_i64).collect())
                .unwrap_or_default();
            (c.get_i64("_id").unwrap(), list)
        })
        .collect()
}

/// Another program moves sailors between crews by writing only the sailor's `crew` (an
/// update, a replacement, an insert, a delete): the follower lists each sailor in the crew it
/// names and in no other. A crew whose bounded array is full keeps the sailor out and is
/// reported, the sailor left in its old crew (one too many, never none); a crew whose array is
/// not one is reported. Applied twice, nothing changes.
#[tokio::test]
async fn raw_moves_of_children_keep_two_way_arrays_exact() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    raw("crews")
        .insert_many([
            doc! { "_id": 1_i64, "members": [1_i64, 2_i64] },
            doc! { "_id": 2_i64, "members": [3_i64] },
            doc! { "_id": 3_i64, "members": [4_i64, 5_i64] },
            doc! { "_id": 4_i64, "members": "junk" },
        ])
        .await
        .expect("raw");
    raw("sailors")
        .insert_many([
            doc! { "_id": 1_i64, "crew": 1_i64 },
            doc! { "_id": 2_i64, "crew": 1_i64 },
            doc! { "_id": 3_i64, "crew": 2_i64 },
            doc! { "_id": 4_i64, "crew": 3_i64 },
            doc! { "_id": 5_i64, "crew": 3_i64 },
        ])
        .await
        .expect("raw");
    super::started(&db).await?;
    let position = super::token(&db).await;

    // One move: what it costs.
    // ANCHOR: two_way
    raw("sailors")
        .update_one(doc! { "_id": 1_i64 }, doc! { "$set": { "crew": 2_i64 } })
        .await
        .expect("raw");
    db.commands().clear();
    let report = super::follow(&db).await?;
    assert_eq!(report.two_way_parents, 2, "{report:?}");
    assert_eq!(
        sent_to(&db, &["sailors", "crews"]),
        ["find sailors", "update crews", "find crews", "update crews"]
    );
    assert_eq!(members(&db).await[..2], [(1, vec![2]), (2, vec![3, 1])]);
    // ANCHOR_END: two_way

    // A replacement, an insert, a delete, a move into a full crew, one into a malformed one.
    raw("sailors")
        .replace_one(doc! { "_id": 3_i64 }, doc! { "crew": 1_i64 })
        .await
        .expect("raw");
    raw("sailors")
        .insert_one(doc! { "_id": 6_i64, "crew": 2_i64 })
        .await
        .expect("raw");
    raw("sailors")
        .delete_one(doc! { "_id": 2_i64 })
        .await
        .expect("raw");
    raw("sailors")
        .update_one(doc! { "_id": 1_i64 }, doc! { "$set": { "crew": 3_i64 } })
        .await
        .expect("raw");
    raw("sailors")
        .update_one(doc! { "_id": 5_i64 }, doc! { "$set": { "crew": 4_i64 } })
        .await
        .expect("raw");
    let report = super::follow(&db).await?;
    let mut bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    bad.sort();
    assert_eq!(
        bad,
        [
            ("crews", "{ _id: 3 }", "members"),
            ("crews", "{ _id: 4 }", "members"),
        ],
        "{report:?}"
    );
    // Sailor 1 stays listed by crew 2 (crew 3 is full); sailor 5 by crew 3 (crew 4's array
    // is not one).
    let expected = [(1, vec![3]), (2, vec![1, 6]), (3, vec![4, 5]), (4, vec![])];
    assert_eq!(members(&db).await, expected);
    assert_eq!(
        raw("crews")
            .find_one(doc! { "_id": 4_i64 })
            .await
            .expect("raw")
            .unwrap()
            .get_str("members")
            .ok(),
        Some("junk")
    );

    // Every event again (a restart before the position was stored): nothing changes.
    let again = super::replayed_from(&db, position, &["crews"]).await?;
    assert_eq!(again.two_way_parents, 0, "{again:?}");
    Ok(())
}

/// Another program moves players between teams, from a client of its own, while a follower
/// runs in a task: once the follower has caught up, each team lists exactly the players that
/// name it, each player once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_while_the_follower_runs_converge_on_the_children_references() -> odm::Result<()> {
    const PLAYERS: i64 = 40;
    let db = common::db().await?;
    let other = other_program(&db).await;
    other
        .collection::<Document>("teams")
        .insert_many((0..4_i64).map(|t| {
            let players: Vec<i64> = (0..PLAYERS).filter(|p| p % 4 == t).collect();
            doc! { "_id": t, "players": players }
        }))
        .await
        .expect("raw");
    other
        .collection::<Document>("players")
        .insert_many((0..PLAYERS).map(|p| doc! { "_id": p, "team": p % 4 }))
        .await
        .expect("raw");
    super::started(&db).await?;
    let follower = db
        .odm()
        .follower()
        .batch_size(25)
        .max_wait(std::time::Duration::from_millis(50));
    let task = tokio::spawn(follower.run());
    let name = db.name().to_owned();
    let uri = odm::testing::test_uri()?;
    let moves = common::with_own_client(uri, move |client| async move {
        let players = client.database(&name).collection::<Document>("players");
        let mut seed = 7_u64;
        for _ in 0..400 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (player, team) = ((seed >> 33) as i64 % PLAYERS, (seed >> 20) as i64 % 4);
            players
                .update_one(doc! { "_id": player }, doc! { "$set": { "team": team } })
                .await
                .expect("raw move");
        }
    });
    while !moves.is_finished() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    moves.join().expect("the other program");
    db.odm()
        .wait_for_follower(std::time::Duration::from_secs(60))
        .await?;
    task.abort();

    let players = super::stored(&db, "players").await;
    for team in super::stored(&db, "teams").await {
        let t = team.get_i64("_id").unwrap();
        let mut listed: Vec<i64> = team
            .get_array("players")
            .unwrap()
            .iter()
            .map(|p| p.as_i64().unwrap())
            .collect();
        listed.sort();
        let naming: Vec<i64> = players
            .iter()
            .filter(|p| p.get_i64("team").ok() == Some(t))
            .map(|p| p.get_i64("_id").unwrap())
            .collect();
        assert_eq!(listed, naming, "team {t}");
    }
    Ok(())
}

/// Another program moves a player into a team whose document is at the server's 16 MiB limit:
/// the team cannot list one more player. It is reported (collection, `_id`, path) and left as
/// it is, the player listed where it was; the other team of the same batch lists its player,
/// and the follower's position moves on (a second run has nothing to do).
#[tokio::test]
async fn a_parent_at_the_size_limit_is_reported_and_the_rest_applied() -> odm::Result<()> {
    let db = common::db().await?;
    let other = other_program(&db).await;
    let raw = |c: &str| other.collection::<Document>(c);
    // 42 bytes of document around the padding: 16 MiB - 5 bytes in all, so that one more
    // 64-bit element (11 bytes) passes the limit.
    let pad = "x".repeat(16 * 1024 * 1024 - 42 - 5);
    raw("teams")
        .insert_many([
            doc! { "_id": 1_i64, "players": [] },
            doc! { "_id": 2_i64, "players": [], "pad": pad },
        ])
        .await
        .expect("raw");
    super::started(&db).await?;
    raw("players")
        .insert_many([
            doc! { "_id": 10_i64, "team": 1_i64 },
            doc! { "_id": 20_i64, "team": 2_i64 },
        ])
        .await
        .expect("raw");
    let report = super::follow(&db).await?;
    let bad: Vec<(&str, &str, &str)> = report
        .bad_documents
        .iter()
        .map(|b| (b.collection.as_str(), b.id.as_str(), b.path.as_str()))
        .collect();
    assert_eq!(bad, [("teams", "{ _id: 2 }", "players")], "{report:?}");
    let listed = |team: &Document| -> Vec<i64> {
        team.get_array("players")
            .map(|a| a.iter().filter_map(Bson::as_i64).collect())
            .unwrap_or_default()
    };
    let teams = super::stored(&db, "teams").await;
    assert_eq!(listed(&teams[0]), [10]);
    assert_eq!(listed(&teams[1]), Vec::<i64>::new(), "left as it was");
    assert_eq!(super::follow(&db).await?.events, 0, "the position moved on");
    Ok(())
}
