//! Copies of copies: renaming a user reaches the comments' copy of the name (level 1), the
//! posts' latest comments and the replies copying that copy (level 2), and the notifications
//! copying the replies' copy (level 3), in the same write, without a repair.

#[path = "common/blog.rs"]
mod blog;
mod common;

use blog::{Comment, Notification, Post, Reply, ReplyCard, User};
use common::{sent, stored, stored_one};
use std::collections::HashMap;

use odm::bson::{doc, Bson, DateTime};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::TransactionMode;

const ANN: &str = "Ann";
const BOB: &str = "Bob";

fn user(name: &str) -> User {
    User {
        id: ObjectId::new(),
        display_name: name.into(),
    }
}

fn comment(author: &User, post: &Post, n: i64) -> Comment {
    Comment {
        id: ObjectId::new(),
        author: Ref::new(author.id),
        // Deliberately wrong: the ODM takes the copy from the user.
        author_name: "stale".into(),
        post: Ref::new(post.id),
        body: format!("comment {n}"),
        time: DateTime::from_millis(1_700_000_000_000 + n),
    }
}

/// `posts` posts, each with six comments alternately by Ann and Bob: the oldest, Ann's, falls
/// out of the latest five, of which Ann wrote two and Bob three.
async fn blog(db: &TestDb, posts: usize) -> odm::Result<(User, User)> {
    let (ann, bob) = (user(ANN), user(BOB));
    db.odm().insert_many([&ann, &bob]).await?;
    let posts: Vec<Post> = (0..posts)
        .map(|n| Post {
            id: ObjectId::new(),
            title: format!("post {n}"),
            latest_comments: Vec::new(),
        })
        .collect();
    db.odm().insert_many(&posts).await?;
    let comments: Vec<Comment> = posts
        .iter()
        .flat_map(|p| {
            let (ann, bob) = (&ann, &bob);
            (0..6).map(move |n| comment(if n % 2 == 0 { ann } else { bob }, p, n))
        })
        .collect();
    db.odm().insert_many(&comments).await?;
    Ok((ann, bob))
}

/// Every copy of a user's name at levels 1 and 2, read back with the raw driver: each equals
/// the user's name as stored, and Ann's is `name`.
async fn every_level_holds(db: &TestDb, ann: &User, name: &str) {
    let users: HashMap<ObjectId, String> = stored(db, "users")
        .await
        .iter()
        .map(|u| {
            let id = u.get_object_id("_id").unwrap();
            (id, u.get_str("display_name").unwrap().to_owned())
        })
        .collect();
    assert_eq!(users[&ann.id], name);
    let mut by_comment = HashMap::new();
    for c in stored(db, "comments").await {
        let want = &users[&c.get_object_id("author").unwrap()];
        assert_eq!(c.get_str("author_name").unwrap(), want, "level 1: {c}");
        by_comment.insert(c.get_object_id("_id").unwrap(), want.clone());
    }
    for p in stored(db, "posts").await {
        let latest = p.get_array("latest_comments").unwrap();
        assert!(latest.len() <= 5);
        for s in latest.iter().filter_map(Bson::as_document) {
            let want = &by_comment[&s.get_object_id("_id").unwrap()];
            assert_eq!(s.get_str("author_name").unwrap(), want, "level 2: {p}");
        }
    }
}

/// The rename sends, without a transaction: the rename (findAndModify), level 1 (update
/// comments), level 2 (find the comments renamed: 600, so a getMore after the first 101; then
/// one update of the replies copying them and one of the posts' latest comments), level 3
/// (find the replies renamed: there are none here, so nothing more), and the re-read of the
/// user that confirms the cascade. 1,000 copies (600 comments, 400 summaries in 200 posts) in
/// 8 commands.
const RENAME: [&str; 8] = [
    "findAndModify",
    "update",
    "find",
    "getMore",
    "update",
    "find",
    "update",
    "find",
];

#[tokio::test]
async fn renaming_a_user_reaches_the_copies_of_its_copies() -> odm::Result<()> {
    let db = common::db().await?;
    let (ann, _) = blog(&db, 200).await?;
    every_level_holds(&db, &ann, ANN).await;
    db.odm().supports_transactions().await?;
    db.commands().clear();

    db.odm()
        .update_by_id::<User>(ann.id, User::display_name().set("Ann Smith"))
        .await?;
    let commands = db.commands().take();
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, RENAME, "a bounded number of commands for 600 copies");
    // Level 2 of the latest comments: one update in place, keyed on the renamed comments.
    let latest = commands
        .iter()
        .filter(|c| c.name == "update")
        .filter_map(|c| c.command.as_ref())
        .find(|c| c.get_str("update").is_ok_and(|coll| coll == "posts"))
        .expect("an update of the posts");
    let u = latest.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap();
    assert_eq!(
        u.get_document("u").unwrap(),
        &doc! {"$set": {"latest_comments.$[copy].author_name": "Ann Smith"}}
    );
    assert_eq!(u.get_array("arrayFilters").unwrap().len(), 1);

    every_level_holds(&db, &ann, "Ann Smith").await;
    let report = db.odm().verify_copies().await?;
    assert!(report.is_consistent(), "{report}");
    assert_eq!(report.repairs, 0);
    Ok(())
}

#[tokio::test]
async fn renaming_in_a_transaction_reaches_them_too() -> odm::Result<()> {
    let db = common::db().await?;
    let (ann, _) = blog(&db, 200).await?;
    db.odm().supports_transactions().await?;
    db.commands().clear();

    db.odm()
        .update_by_id::<User>(ann.id, User::display_name().set("Ann Smith"))
        .transaction(TransactionMode::Always)
        .await?;
    let names = sent(&db);
    let mut want = RENAME[..7].to_vec();
    want.push("commitTransaction");
    assert_eq!(names, want, "the same levels, then the commit");

    every_level_holds(&db, &ann, "Ann Smith").await;
    let report = db.odm().verify_copies().await?;
    assert!(report.is_consistent(), "{report}");
    Ok(())
}

/// A user, a comment of theirs on a post, a reply to it, and a notification of the reply.
async fn chain(db: &TestDb) -> odm::Result<(User, Reply, Notification)> {
    let ann = user(ANN);
    db.odm().insert_one(&ann).await?;
    let post = Post {
        id: ObjectId::new(),
        title: "post".into(),
        latest_comments: Vec::new(),
    };
    db.odm().insert_one(&post).await?;
    let c = comment(&ann, &post, 1);
    db.odm().insert_one(&c).await?;
    let reply = Reply {
        id: ObjectId::new(),
        comment: Ref::new(c.id),
        comment_author: String::new(),
        body: "me too".into(),
    };
    db.odm().insert_one(&reply).await?;
    let note = Notification {
        id: ObjectId::new(),
        reply: ReplyCard {
            id: Ref::new(reply.id),
            comment_author: String::new(),
        },
    };
    db.odm().insert_one(&note).await?;
    Ok((ann, reply, note))
}

async fn chain_holds(db: &TestDb, reply: &Reply, note: &Notification, name: &str) {
    let r = stored_one(db, "replies", reply.id).await.unwrap();
    assert_eq!(r.get_str("comment_author").unwrap(), name, "level 2: {r}");
    let n = stored_one(db, "notifications", note.id).await.unwrap();
    assert_eq!(
        n.get_document("reply")
            .unwrap()
            .get_str("comment_author")
            .unwrap(),
        name,
        "level 3: {n}"
    );
}

#[tokio::test]
async fn a_rename_reaches_the_third_level() -> odm::Result<()> {
    for mode in [TransactionMode::Never, TransactionMode::Always] {
        let db = common::db().await?;
        let (ann, reply, note) = chain(&db).await?;
        chain_holds(&db, &reply, &note, ANN).await;
        db.odm().supports_transactions().await?;
        db.commands().clear();

        db.odm()
            .update_by_id::<User>(ann.id, User::display_name().set("Ann Smith"))
            .transaction(mode)
            .await?;
        let names = sent(&db);
        // Level 3 adds one update of the notifications after the find of the replies.
        assert_eq!(
            names.iter().filter(|n| *n == "update").count(),
            4,
            "{names:?}"
        );
        chain_holds(&db, &reply, &note, "Ann Smith").await;
        let report = db.odm().verify_copies().await?;
        assert!(report.is_consistent(), "{mode:?}: {report}");
    }
    Ok(())
}

/// Two tasks renaming the same user over and over: every level ends equal to the user's final
/// name.
async fn concurrent_renames(mode: TransactionMode) -> odm::Result<()> {
    let db = common::db().await?;
    let (ann, _) = blog(&db, 10).await?;
    let (chained, reply, note) = chain(&db).await?;
    let odm = db.odm();
    let renamer = |task: usize| {
        let (a, b) = (ann.id, chained.id);
        async move {
            for i in 0..15 {
                let name = format!("name {task}.{i}");
                odm.update_by_id::<User>(a, User::display_name().set(name.clone()))
                    .transaction(mode)
                    .await
                    .map(drop)?;
                odm.update_by_id::<User>(b, User::display_name().set(name))
                    .transaction(mode)
                    .await
                    .map(drop)?;
            }
            Ok::<(), odm::Error>(())
        }
    };
    let (one, two) = tokio::join!(renamer(1), renamer(2));
    one?;
    two?;
    every_level_holds(&db, &ann, &name_of(&db, ann.id).await).await;
    chain_holds(&db, &reply, &note, &name_of(&db, chained.id).await).await;
    let report = db.odm().verify_copies().await?;
    assert!(report.is_consistent(), "{mode:?}: {report}");
    Ok(())
}

async fn name_of(db: &TestDb, id: ObjectId) -> String {
    stored_one(db, "users", id)
        .await
        .unwrap()
        .get_str("display_name")
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn concurrent_renames_leave_no_level_stale() -> odm::Result<()> {
    concurrent_renames(TransactionMode::Never).await
}

#[tokio::test]
async fn concurrent_renames_in_transactions_leave_no_level_stale() -> odm::Result<()> {
    concurrent_renames(TransactionMode::Always).await
}

#[test]
fn the_plan_prints_every_level() {
    let plan = odm::denormalize::cascade_plan_in::<User>(&common::catalog());
    let levels: Vec<(usize, &str, &str)> = plan
        .steps
        .iter()
        .map(|s| (s.level, s.collection, s.copy_of.as_str()))
        .collect();
    assert_eq!(
        levels,
        [
            (1, "comments", "users.display_name"),
            (2, "posts", "comments.author_name"),
            (2, "replies", "comments.author_name"),
            (3, "notifications", "replies.comment_author"),
        ]
    );
    let printed = plan.to_string();
    for line in [
        "level 2: `comments.author_name` is copied in turn: find comments",
        "update_many posts (Post)",
        "update  { $set: { \"latest_comments.$[copy].author_name\": <new author_name> } }, arrayFilters [{ \"copy._id\": { $in: <ids of the comments written> } }]",
        "level 3: `replies.comment_author` is copied in turn: find replies",
        "update  { $set: { \"reply.comment_author\": <new comment_author> } }",
        "1 findAndModify + 4 update(s) + 2 find(s) for the copies of copies",
    ] {
        assert!(printed.contains(line), "{line}\n{printed}");
    }
    assert_eq!(plan.cycle, None);
}

/// A comment given another author takes the new author's name (level 1, through the
/// reference); its copies follow as they would a rename.
#[tokio::test]
async fn a_copy_refilled_through_its_reference_reaches_its_copies() -> odm::Result<()> {
    let db = common::db().await?;
    let (_, reply, note) = chain(&db).await?;
    let bob = user(BOB);
    db.odm().insert_one(&bob).await?;
    let comment = *reply.comment.id();

    db.odm()
        .update_by_id::<Comment>(comment, Comment::author().set(Ref::new(bob.id)))
        .await?;
    let c = stored_one(&db, "comments", comment).await.unwrap();
    assert_eq!(c.get_str("author_name").unwrap(), BOB, "level 1: {c}");
    let post = stored_one(&db, "posts", c.get_object_id("post").unwrap())
        .await
        .unwrap();
    let summary = post.get_array("latest_comments").unwrap()[0]
        .as_document()
        .unwrap();
    assert_eq!(
        summary.get_str("author_name").unwrap(),
        BOB,
        "level 2: {post}"
    );
    chain_holds(&db, &reply, &note, BOB).await;
    let report = db.odm().verify_copies().await?;
    assert!(report.is_consistent(), "{report}");
    Ok(())
}

/// The sweep compares each level with the level above, and repairs them top down: a reply and
/// its notification both left stale (equal to each other) are both repaired in one sweep.
#[tokio::test]
async fn the_sweep_checks_each_level_against_the_one_above() -> odm::Result<()> {
    let db = common::db().await?;
    let (_, reply, note) = chain(&db).await?;
    db.raw()
        .collection::<odm::bson::Document>("replies")
        .update_one(
            doc! {"_id": reply.id},
            doc! {"$set": {"comment_author": "Zed"}},
        )
        .await
        .unwrap();
    db.raw()
        .collection::<odm::bson::Document>("notifications")
        .update_one(
            doc! {"_id": note.id},
            doc! {"$set": {"reply.comment_author": "Zed"}},
        )
        .await
        .unwrap();

    let report = db.odm().verify_copies().await?;
    let issues: Vec<(&str, &str, &Bson)> = report
        .issues
        .iter()
        .map(|i| (i.collection, i.path.as_str(), &i.expected))
        .collect();
    // The notification equals the reply it copies; only the reply differs from its comment.
    assert_eq!(
        issues,
        [("replies", "comment_author", &Bson::String(ANN.into()))]
    );

    let repaired = db.odm().verify_copies().repair(true).await?;
    assert_eq!(
        repaired.repairs, 2,
        "the reply, then its notification: {repaired}"
    );
    chain_holds(&db, &reply, &note, ANN).await;
    assert!(db.odm().verify_copies().await?.is_consistent());
    Ok(())
}

/// A replacement and a find-and-modify of the user cascade through every level as an update
/// does.
#[tokio::test]
async fn a_replacement_and_a_find_one_and_update_reach_every_level() -> odm::Result<()> {
    let db = common::db().await?;
    let (ann, reply, note) = chain(&db).await?;
    let renamed = User {
        id: ann.id,
        display_name: "Ann Replaced".into(),
    };
    db.odm().replace_one(&renamed).await?;
    every_level_holds(&db, &ann, "Ann Replaced").await;
    chain_holds(&db, &reply, &note, "Ann Replaced").await;

    db.odm()
        .find_one_and_update::<User>(
            User::id_field().eq(ann.id),
            User::display_name().set("Ann Found"),
        )
        .await?;
    every_level_holds(&db, &ann, "Ann Found").await;
    chain_holds(&db, &reply, &note, "Ann Found").await;
    assert!(db.odm().verify_copies().await?.is_consistent());
    Ok(())
}

/// A dependent the server refuses at one level (a reply pushed past 16 MB) does not stop the
/// other copies of that level: the posts' latest comments still follow the rename.
#[tokio::test]
async fn a_refused_copy_at_one_level_does_not_stop_its_neighbours() -> odm::Result<()> {
    let db = common::db().await?;
    let ann = User {
        id: ObjectId::new(),
        display_name: "Ann".into(),
    };
    db.odm().insert_one(&ann).await?;
    let post = Post {
        id: ObjectId::new(),
        title: "p".into(),
        latest_comments: Vec::new(),
    };
    db.odm().insert_one(&post).await?;
    let comment = Comment {
        id: ObjectId::new(),
        author: Ref::new(ann.id),
        author_name: String::new(),
        post: Ref::new(post.id),
        body: "c".into(),
        time: DateTime::from_millis(1_700_000_000_000),
    };
    db.odm().insert_one(&comment).await?;
    // A reply just under 16 MiB, written around the ODM: a longer copied name does not fit.
    let mut big = doc! {
        "_id": ObjectId::new(), "comment": comment.id, "comment_author": "Ann", "body": "b",
    };
    big.insert("blob", "x".repeat(16 * 1024 * 1024 - 4 * 1024));
    db.raw()
        .collection::<odm::bson::Document>("replies")
        .insert_one(big)
        .await?;

    let long = "n".repeat(8 * 1024);
    let err = db
        .odm()
        .update_by_id::<User>(ann.id, User::display_name().set(long.clone()))
        .transaction(TransactionMode::Never)
        .await
        .expect_err("the big reply cannot take the longer name");
    assert!(err.to_string().contains("replies"), "{err}");

    let stored_comment = stored_one(&db, "comments", comment.id).await.unwrap();
    assert_eq!(stored_comment.get_str("author_name").unwrap(), long);
    let stored_post = stored_one(&db, "posts", post.id).await.unwrap();
    let summary = stored_post.get_array("latest_comments").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(summary.get_str("author_name").unwrap(), long, "{summary}");
    Ok(())
}
