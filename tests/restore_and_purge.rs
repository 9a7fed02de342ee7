//! What a soft-deleting model offers beyond the delete: the marked documents listed
//! (`with_deleted`, `only_deleted`), restored and purged; unique indexes over live documents
//! only (a deleted account's email registered again); holders marked with the document they
//! reference and restored with it (`on_soft_delete = "mark"`). What landed is read back with
//! the raw driver; commands are counted.

mod common;

use common::{last_command, listed_indexes, sent, stored, stored_one};
use odm::bson::{doc, Bson};
use odm::prelude::*;

// ANCHOR: account
/// A user's account: deleting it keeps it, marked, for thirty days of regret.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "accounts", soft_delete)]
struct Account {
    #[serde(rename = "_id")]
    id: i32,
    /// Unique among live accounts: a deleted account's email can be registered again.
    #[index(unique)]
    email: String,
    /// Unique forever: a handle once taken is never given to another account.
    #[index(unique, forever)]
    handle: String,
    deleted_at: Option<odm::bson::DateTime>,
}
// ANCHOR_END: account

// ANCHOR: posts
/// A post: deleting it marks its comments with it.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "posts", soft_delete)]
struct Post {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    deleted_at: Option<odm::bson::DateTime>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "comments", soft_delete)]
struct Comment {
    #[serde(rename = "_id")]
    id: i32,
    /// Marked when the post is soft-deleted, restored with it; deleted with it when the post
    /// is purged.
    #[reference(on_soft_delete = "mark", on_delete = "cascade")]
    post: Ref<Post>,
    text: String,
    deleted_at: Option<odm::bson::DateTime>,
}

/// A reply to a comment: marked with its comment, and so with the post.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "replies", soft_delete)]
struct Reply {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_soft_delete = "mark", on_delete = "cascade")]
    comment: Ref<Comment>,
    deleted_at: Option<odm::bson::DateTime>,
}
// ANCHOR_END: posts

/// A sign-in of an account: not soft-deleting, deleted with the account when it is purged.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "logins")]
struct Login {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(on_delete = "cascade")]
    account: Ref<Account>,
}

fn account(id: i32, email: &str, handle: &str) -> Account {
    Account {
        id,
        email: email.to_owned(),
        handle: handle.to_owned(),
        deleted_at: None,
    }
}

/// Whether the server moves a document's entry in a unique index when an update changes its
/// key, as MongoDB does (a released email can be taken again). The pinned development server
/// keeps the keys the document was inserted with.
async fn updates_move_unique_keys(db: &odm::testing::TestDb) -> bool {
    let probe = db.raw().collection::<odm::bson::Document>("unique_probe");
    let index = doc! { "key": { "k": 1 }, "name": "k", "unique": true };
    let create = doc! { "createIndexes": "unique_probe", "indexes": [index] };
    db.raw().run_command(create).await.expect("index");
    probe
        .insert_one(doc! { "_id": 1, "k": 1 })
        .await
        .expect("insert");
    let moved = doc! { "$set": { "k": 2 } };
    probe
        .update_one(doc! { "_id": 1 }, moved)
        .await
        .expect("update");
    probe.insert_one(doc! { "_id": 2, "k": 1 }).await.is_ok()
}

async fn accounts(db: &odm::testing::TestDb) -> odm::Result<()> {
    db.odm().sync_indexes().await?;
    db.odm()
        .insert_many(&[
            account(1, "ann@x.org", "ann"),
            account(2, "bob@x.org", "bob"),
            account(3, "cy@x.org", "cy"),
        ])
        .await?;
    db.odm().delete_one(Account::id_field().eq(2)).await?;
    db.commands().clear();
    Ok(())
}

fn ids(accounts: Vec<Account>) -> Vec<i32> {
    accounts.into_iter().map(|a| a.id).collect()
}

#[tokio::test]
async fn a_scope_lists_the_deleted_or_every_document() -> odm::Result<()> {
    let db = common::db().await?;
    accounts(&db).await?;
    let odm = db.odm();
    // ANCHOR: scopes
    let live = odm.find(Filter::<Account>::all()).await?;
    let bin = odm.find(Filter::<Account>::all().only_deleted()).await?;
    let every = odm.count(Filter::<Account>::all().with_deleted()).await?;
    // ANCHOR_END: scopes
    assert_eq!(ids(live), [1, 3]);
    assert_eq!(ids(bin), [2]);
    assert_eq!(every, 3);
    let handle = Account::handle().eq("bob");
    odm.find(handle.clone().only_deleted()).await?;
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! { "handle": "bob", "deleted_at": { "$ne": null } }
    );
    odm.find(handle.clone().with_deleted()).await?;
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! { "handle": "bob" }
    );
    // The scope of a combined filter is the one its parts set, in any position.
    let either = Account::handle().eq("ann") | handle.only_deleted();
    assert_eq!(ids(odm.find(either).await?), [2]);
    // A delete marks live documents whatever the scope: bob keeps the time of his delete.
    let before = stored_one(&db, "accounts", 2).await.expect("kept");
    let scoped = Account::id_field().eq(2).only_deleted();
    assert_eq!(odm.delete_one(scoped).await?, 0);
    assert_eq!(stored_one(&db, "accounts", 2).await.expect("kept"), before);
    Ok(())
}

#[tokio::test]
async fn a_restore_clears_the_mark_with_one_update() -> odm::Result<()> {
    let db = common::db().await?;
    accounts(&db).await?;
    let odm = db.odm();
    // ANCHOR: restore
    let restored = odm.restore(Account::id_field().eq(2)).await?;
    assert_eq!(restored, 1);
    // ANCHOR_END: restore
    assert_eq!(db.commands().count_of("update"), 1);
    assert_eq!(db.commands().count(), 1);
    let update = last_command(&db, "update");
    let statement = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(
        statement.get_document("q").unwrap(),
        &doc! { "_id": 2, "deleted_at": { "$ne": null } }
    );
    assert_eq!(
        statement.get_document("u").unwrap(),
        &doc! { "$set": { "deleted_at": null } }
    );
    let row = stored_one(&db, "accounts", 2).await.expect("stored");
    assert_eq!(row.get("deleted_at"), Some(&Bson::Null));
    assert_eq!(odm.get::<Account>(2).await?.map(|a| a.id), Some(2));
    // A live document, or one restored already, is not restored again.
    assert_eq!(odm.restore(Account::id_field().eq(2)).await?, 0);
    assert_eq!(odm.restore(Account::id_field().eq(1)).await?, 0);
    Ok(())
}

#[tokio::test]
async fn a_deleted_accounts_email_can_be_registered_again_and_its_restore_is_refused(
) -> odm::Result<()> {
    let db = common::db().await?;
    accounts(&db).await?;
    let odm = db.odm();
    let indexes = listed_indexes(&db, "accounts").await;
    let email = indexes
        .iter()
        .find(|i| i.get_document("key").ok() == Some(&doc! { "email": 1, "deleted_at": 1 }))
        .unwrap_or_else(|| panic!("no live-only email index in {indexes:?}"));
    assert_eq!(email.get_bool("unique").ok(), Some(true));
    assert!(
        indexes
            .iter()
            .any(|i| i.get_document("key").ok() == Some(&doc! { "handle": 1 })),
        "`forever` keeps the plain index: {indexes:?}"
    );
    // Every live duplicate is refused, and a handle stays taken after its delete.
    let twice = odm.insert_one(&account(5, "ann@x.org", "ann2")).await;
    assert!(
        matches!(twice, Err(odm::Error::DuplicateKey { .. })),
        "{twice:?}"
    );
    let taken = odm.insert_one(&account(6, "b2@x.org", "bob")).await;
    assert!(
        matches!(taken, Err(odm::Error::DuplicateKey { .. })),
        "{taken:?}"
    );
    if !updates_move_unique_keys(&db).await {
        eprintln!("this server keeps a unique index's keys as first inserted: the rest needs one that moves them on update, as MongoDB does");
        return Ok(());
    }
    // ANCHOR: register_again
    // Bob deleted his account; a new one registers with his email...
    odm.insert_one(&account(4, "bob@x.org", "bobby")).await?;
    // ...so his old account cannot come back without making the email appear twice.
    let refused = odm.restore(Account::id_field().eq(2)).await;
    assert!(
        matches!(refused, Err(odm::Error::DuplicateKey { .. })),
        "{refused:?}"
    );
    // ANCHOR_END: register_again
    let old = stored_one(&db, "accounts", 2).await.expect("kept");
    assert!(matches!(old.get("deleted_at"), Some(Bson::DateTime(_))));
    // Two deleted accounts may share an email (their times differ).
    odm.delete_one(Account::id_field().eq(4)).await?;
    let rows = stored(&db, "accounts").await;
    let bobs = rows
        .iter()
        .filter(|r| r.get_str("email").ok() == Some("bob@x.org"));
    assert_eq!(bobs.count(), 2);
    // The next sync finds every index as declared.
    let report = odm.sync_indexes_of::<Account>().await?;
    assert!(report.is_in_sync(), "{report:?}");
    assert!(report.created().is_empty(), "{report:?}");
    Ok(())
}

#[tokio::test]
async fn a_purge_removes_marked_documents_with_their_delete_rules() -> odm::Result<()> {
    let db = common::db().await?;
    accounts(&db).await?;
    let odm = db.odm();
    let logins = [(1, 1), (2, 2), (3, 2), (4, 3)];
    for (id, of) in logins {
        odm.insert_one(&Login {
            id,
            account: Ref::new(of),
        })
        .await?;
    }
    // Live accounts are not purged by default.
    assert_eq!(odm.purge(Account::id_field().eq(1)).await?, 0);
    assert!(stored_one(&db, "accounts", 1).await.is_some());
    // ANCHOR: purge
    let purged = odm.purge(Filter::<Account>::all()).await?;
    assert_eq!(purged, 1);
    // ANCHOR_END: purge
    assert!(stored_one(&db, "accounts", 2).await.is_none());
    let left: Vec<i32> = stored(&db, "logins")
        .await
        .iter()
        .map(|l| l.get_i32("_id").unwrap())
        .collect();
    assert_eq!(left, [1, 4], "the purged account's logins went with it");
    // An erasure: a live account purged at once.
    db.commands().clear();
    assert_eq!(
        odm.purge(Account::id_field().eq(3).with_deleted()).await?,
        1
    );
    assert!(stored_one(&db, "accounts", 3).await.is_none());
    assert_eq!(stored(&db, "logins").await.len(), 1);
    assert!(sent(&db).iter().any(|c| c == "delete"));
    Ok(())
}

async fn post_with_comments(db: &odm::testing::TestDb) -> odm::Result<()> {
    let odm = db.odm();
    odm.insert_many(&[
        Post {
            id: 1,
            title: "Embed or reference?".to_owned(),
            deleted_at: None,
        },
        Post {
            id: 2,
            title: "Another".to_owned(),
            deleted_at: None,
        },
    ])
    .await?;
    let comment = |id: i32, post: i32| Comment {
        id,
        post: Ref::new(post),
        text: format!("comment {id}"),
        deleted_at: None,
    };
    odm.insert_many(&[
        comment(10, 1),
        comment(11, 1),
        comment(12, 1),
        comment(20, 2),
    ])
    .await?;
    let reply = |id: i32, comment: i32| Reply {
        id,
        comment: Ref::new(comment),
        deleted_at: None,
    };
    odm.insert_many(&[reply(100, 10), reply(101, 11), reply(200, 20)])
        .await?;
    // Comment 12 was deleted on its own, before the post.
    odm.delete_one(Comment::id_field().eq(12)).await?;
    db.commands().clear();
    Ok(())
}

fn mark_of(row: &odm::bson::Document) -> Option<odm::bson::DateTime> {
    match row.get("deleted_at") {
        Some(Bson::DateTime(t)) => Some(*t),
        _ => None,
    }
}

#[tokio::test]
async fn a_soft_delete_marks_the_holders_a_rule_names_and_a_restore_brings_them_back(
) -> odm::Result<()> {
    let db = common::db().await?;
    post_with_comments(&db).await?;
    let odm = db.odm();
    let alone = stored_one(&db, "comments", 12)
        .await
        .and_then(|r| mark_of(&r));
    // ANCHOR: mark
    assert_eq!(odm.delete_one(Post::id_field().eq(1)).await?, 1);
    // ANCHOR_END: mark
    let tx = odm.supports_transactions().await?;
    let mut expected = vec!["find", "find", "update", "update", "update"];
    if tx {
        expected.push("commitTransaction");
    }
    assert_eq!(sent(&db), expected);
    let post = mark_of(&stored_one(&db, "posts", 1).await.expect("kept")).expect("marked");
    for comment in [10, 11] {
        let row = stored_one(&db, "comments", comment).await.expect("kept");
        assert_eq!(
            mark_of(&row),
            Some(post),
            "comment {comment} has the post's time"
        );
    }
    for reply in [100, 101] {
        let row = stored_one(&db, "replies", reply).await.expect("kept");
        assert_eq!(
            mark_of(&row),
            Some(post),
            "reply {reply} has the post's time"
        );
    }
    // The other post's comment and reply are live; the comment deleted before keeps its time.
    assert_eq!(
        mark_of(&stored_one(&db, "comments", 20).await.unwrap()),
        None
    );
    assert_eq!(
        mark_of(&stored_one(&db, "replies", 200).await.unwrap()),
        None
    );
    let twelve = stored_one(&db, "comments", 12)
        .await
        .and_then(|r| mark_of(&r));
    assert_eq!(twelve, alone);

    // ANCHOR: restore_holders
    assert_eq!(odm.restore(Post::id_field().eq(1)).await?, 1);
    // ANCHOR_END: restore_holders
    let comments: Vec<i32> = odm
        .find(Comment::post().eq(Ref::new(1)))
        .await?
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(
        comments,
        [10, 11],
        "comment 12 stays deleted: it went on its own"
    );
    assert_eq!(odm.count(Filter::<Reply>::all()).await?, 3);
    Ok(())
}

#[tokio::test]
async fn a_holder_deleted_alone_leaves_the_document_it_references() -> odm::Result<()> {
    let db = common::db().await?;
    post_with_comments(&db).await?;
    let odm = db.odm();
    // A comment's delete marks its replies, not its post.
    assert_eq!(odm.delete_one(Comment::id_field().eq(10)).await?, 1);
    assert!(odm.get::<Post>(1).await?.is_some());
    assert_eq!(odm.get::<Reply>(100).await?, None);
    assert!(odm.get::<Reply>(101).await?.is_some());
    // A delete of many marks each one's holders.
    assert_eq!(odm.delete_many(Filter::<Post>::all()).await?, 2);
    assert_eq!(odm.count(Filter::<Comment>::all()).await?, 0);
    assert_eq!(odm.count(Filter::<Reply>::all()).await?, 0);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_restorers_of_one_document_restore_it_once() -> odm::Result<()> {
    let db = common::db().await?;
    accounts(&db).await?;
    let restorers = (0..16).map(|_| {
        let odm = db.odm().clone();
        tokio::spawn(async move { odm.restore(Account::id_field().eq(2)).await })
    });
    let mut restored = 0;
    for restorer in restorers {
        restored += restorer.await.expect("joined")?;
    }
    assert_eq!(restored, 1);
    assert_eq!(db.odm().count(Filter::<Account>::all()).await?, 3);
    Ok(())
}

#[tokio::test]
async fn another_programs_marks_are_restored_and_purged_like_ours() -> odm::Result<()> {
    let db = common::db().await?;
    // Marked by another program with a time of its own; one live without the field at all.
    db.raw()
        .collection::<odm::bson::Document>("posts")
        .insert_many([
            doc! { "_id": 7, "title": "a", "deleted_at": odm::bson::DateTime::from_millis(5) },
            doc! { "_id": 8, "title": "b" },
        ])
        .await?;
    let odm = db.odm();
    assert_eq!(odm.count(Filter::<Post>::all().only_deleted()).await?, 1);
    assert_eq!(odm.restore(Filter::<Post>::all()).await?, 1);
    assert_eq!(odm.count(Filter::<Post>::all()).await?, 2);
    assert_eq!(odm.delete_one(Post::id_field().eq(8)).await?, 1);
    assert_eq!(odm.purge(Filter::<Post>::all()).await?, 1);
    assert!(stored_one(&db, "posts", 8).await.is_none());
    assert!(stored_one(&db, "posts", 7).await.is_some());
    Ok(())
}

#[test]
fn the_routing_report_lists_the_holders_a_soft_delete_marks() {
    let report = odm::shard::RoutingReport::in_catalog::<Post>(&common::catalog()).to_string();
    for line in [
        "find posts { _id, <its shard key> }",
        "update comments { post: { $in: <ids read> } } (a soft delete: `deleted_at` set)",
        "update posts { _id: { $in: <ids read> } } (a soft delete: `deleted_at` set)",
    ] {
        assert!(report.contains(line), "{line} in {report}");
    }
}
