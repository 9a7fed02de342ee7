//! The subset pattern: a movie's listing fields in `movies`, the rest in `movie_details` under
//! the same `_id`, written and deleted together; and a post keeping its highest-rated comments,
//! exact whatever rating changes.

mod common;

use std::time::Duration;

use common::{sent, stored, stored_one};
use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;
use odm::testing::TestDb;
use odm::{Error, TransactionMode};

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "movies")]
struct Movie {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    year: i32,
    #[embed]
    imdb: Imdb,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Imdb {
    rating: f64,
    votes: i64,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "movie_details", subset_of = "Movie")]
struct MovieDetails {
    #[serde(rename = "_id")]
    id: i64,
    plot: String,
    directors: Vec<String>,
}

/// A pair with string ids, for ids that look like operators or paths.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pages")]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    title: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "page_bodies", subset_of = "Page")]
struct PageBody {
    #[serde(rename = "_id")]
    id: String,
    body: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "posts")]
struct Post {
    #[serde(rename = "_id")]
    id: ObjectId,
    title: String,
    #[denormalize(
        from = "Comment",
        via = "post",
        fields = "author, text, rating",
        top = 3,
        sort = "-rating"
    )]
    #[serde(default)]
    top_comments: Vec<TopComment>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct TopComment {
    #[serde(rename = "_id")]
    id: Ref<Comment>,
    author: String,
    text: String,
    rating: i64,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[parent(on_delete = "cascade")]
    post: Ref<Post>,
    author: String,
    text: String,
    rating: i64,
}

fn movie(id: i64) -> (Movie, MovieDetails) {
    (
        Movie {
            id,
            title: format!("Movie {id}"),
            year: 1890 + id as i32,
            imdb: Imdb {
                rating: 5.0 + (id % 5) as f64,
                votes: 100 * id,
            },
        },
        MovieDetails {
            id,
            plot: format!("The plot of movie {id}."),
            directors: vec![format!("Director {id}")],
        },
    )
}

fn movies(ids: impl IntoIterator<Item = i64>) -> (Vec<Movie>, Vec<MovieDetails>) {
    ids.into_iter().map(movie).unzip()
}

/// The ids stored in `collection`, in `_id` order.
async fn ids_in(db: &TestDb, collection: &str) -> Vec<Bson> {
    stored(db, collection)
        .await
        .into_iter()
        .filter_map(|mut d| d.remove("_id"))
        .collect()
}

/// `(command, collection it names)` for each command sent since the last call.
fn sent_to(db: &TestDb) -> Vec<(String, String)> {
    db.commands()
        .take()
        .into_iter()
        .map(|c| {
            let target = c
                .command
                .as_ref()
                .and_then(|d| d.get_str(&c.name).ok())
                .unwrap_or("")
                .to_owned();
            (c.name, target)
        })
        .collect()
}

fn ints(ids: &[i64]) -> Vec<Bson> {
    ids.iter().map(|i| Bson::Int64(*i)).collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[tokio::test]
async fn a_pair_is_inserted_in_one_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    let (m, d) = movie(1);
    db.odm().supports_transactions().await?;
    db.commands().take();
    db.odm().subset::<MovieDetails>().insert(&m, &d).await?;
    assert_eq!(
        sent_to(&db),
        pairs(&[
            ("insert", "movie_details"),
            ("insert", "movies"),
            ("commitTransaction", "")
        ])
    );
    assert_eq!(
        stored_one(&db, "movies", 1_i64).await,
        Some(
            doc! { "_id": 1_i64, "title": "Movie 1", "year": 1891, "imdb": { "rating": 6.0, "votes": 100_i64 } }
        )
    );
    assert_eq!(
        stored_one(&db, "movie_details", 1_i64).await,
        Some(doc! { "_id": 1_i64, "plot": "The plot of movie 1.", "directors": ["Director 1"] })
    );
    Ok(())
}

#[tokio::test]
async fn without_a_transaction_the_details_land_first_and_a_failed_main_takes_them_back(
) -> odm::Result<()> {
    let db = common::db().await?;
    let pair = db
        .odm()
        .subset::<MovieDetails>()
        .transaction(TransactionMode::Never);
    let (m, d) = movies([1, 2]);
    pair.insert_many(&m, &d).await?;
    assert_eq!(
        sent_to(&db),
        pairs(&[("insert", "movie_details"), ("insert", "movies")])
    );
    // Movie 3 exists without details (written behind the ODM's back); the pair [3, 4] then
    // writes details 3 and 4, and the ordered main insert stops at the duplicate 3.
    let (m3, _) = movie(3);
    db.odm().insert_one(&m3).await?;
    let (m, d) = movies([3, 4]);
    db.commands().take();
    let err = pair.insert_many(&m, &d).await.unwrap_err();
    assert!(
        matches!(&err, Error::DuplicateKey { collection, .. } if collection == "movies"),
        "{err}"
    );
    assert_eq!(
        sent_to(&db),
        pairs(&[
            ("insert", "movie_details"),
            ("insert", "movies"),
            ("find", "movies"),
            ("delete", "movie_details")
        ])
    );
    // Details 4 had no main document: taken back. Details 3 completes the existing movie 3.
    assert_eq!(ids_in(&db, "movies").await, ints(&[1, 2, 3]));
    assert_eq!(ids_in(&db, "movie_details").await, ints(&[1, 2, 3]));
    assert!(pair.verify().await?.is_clean());
    Ok(())
}

#[tokio::test]
async fn in_a_transaction_a_failed_main_insert_writes_neither_side() -> odm::Result<()> {
    let db = common::db().await?;
    let (m3, _) = movie(3);
    db.odm().insert_one(&m3).await?;
    let (m, d) = movies([3, 4]);
    let err = db
        .odm()
        .subset::<MovieDetails>()
        .insert_many(&m, &d)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::DuplicateKey { .. }), "{err}");
    assert_eq!(ids_in(&db, "movies").await, ints(&[3]));
    assert!(ids_in(&db, "movie_details").await.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_pair_whose_ids_differ_is_refused_before_anything_is_sent() -> odm::Result<()> {
    let db = common::db().await?;
    let (m, _) = movie(1);
    let (_, d) = movie(2);
    db.commands().take();
    let err = db
        .odm()
        .subset::<MovieDetails>()
        .insert(&m, &d)
        .await
        .unwrap_err();
    match &err {
        Error::SubsetMismatch { collection, id, .. } => {
            assert_eq!(
                (collection.as_str(), id.as_str()),
                ("movie_details", "{ _id: 2 }")
            );
        }
        other => panic!("{other}"),
    }
    assert!(err
        .to_string()
        .contains("its main document in `movies` has `_id` 1"));
    let (m, d) = movies([1, 2]);
    let err = db
        .odm()
        .subset::<MovieDetails>()
        .insert_many(&m, &d[..1])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SubsetMismatch { .. }), "{err}");
    assert!(sent(&db).is_empty());
    assert!(stored(&db, "movies").await.is_empty());
    Ok(())
}

#[tokio::test]
async fn deleting_takes_both_sides_main_first() -> odm::Result<()> {
    let db = common::db().await?;
    let (m, d) = movies(1..=6);
    db.odm()
        .subset::<MovieDetails>()
        .insert_many(&m, &d)
        .await?;
    db.commands().take();
    let deleted = db
        .odm()
        .subset::<MovieDetails>()
        .transaction(TransactionMode::Never)
        .delete(Movie::year().lt(1894))
        .await?;
    assert_eq!(deleted, 3);
    assert_eq!(
        sent_to(&db),
        pairs(&[
            ("find", "movies"),
            ("delete", "movies"),
            ("delete", "movie_details")
        ])
    );
    let left = ints(&[4, 5, 6]);
    assert_eq!(ids_in(&db, "movies").await, left);
    assert_eq!(ids_in(&db, "movie_details").await, left);
    // In a transaction: the same commands, then the commit.
    let deleted = db
        .odm()
        .subset::<MovieDetails>()
        .delete(Movie::id_field().eq(5))
        .await?;
    assert_eq!(deleted, 1);
    assert_eq!(sent(&db), ["find", "delete", "delete", "commitTransaction"]);
    assert_eq!(ids_in(&db, "movie_details").await, ints(&[4, 6]));
    Ok(())
}

#[tokio::test]
async fn the_details_of_many_movies_are_one_in_query() -> odm::Result<()> {
    let db = common::db().await?;
    let (m, d) = movies(1..=40);
    let pair = db.odm().subset::<MovieDetails>();
    pair.insert_many(&m, &d).await?;
    // Movie 41 has no details.
    let (m41, _) = movie(41);
    db.odm().insert_one(&m41).await?;
    let listing = db
        .odm()
        .find(Movie::year().gte(1900))
        .sort(Movie::id_field().asc())
        .await?;
    assert_eq!(listing.len(), 32);
    db.commands().take();
    let details = pair.details_of(&listing).await?;
    let cmd = common::last_command(&db, "find");
    assert_eq!(cmd.get_str("find").ok(), Some("movie_details"));
    let ids: Vec<Bson> = (10..=41_i64).map(Bson::Int64).collect();
    assert_eq!(
        cmd.get_document("filter").ok(),
        Some(&doc! { "_id": { "$in": ids } })
    );
    assert_eq!(details.len(), 32);
    for (movie, details) in listing.iter().zip(&details) {
        match movie.id {
            41 => assert_eq!(details, &None),
            id => assert_eq!(details.as_ref(), Some(&d[id as usize - 1])),
        }
    }
    // Nothing to load, nothing sent.
    assert!(pair.details_of(&[]).await?.is_empty());
    assert!(sent(&db).is_empty());
    Ok(())
}

#[tokio::test]
async fn an_interrupted_write_leaves_details_that_verify_finds_and_repair_deletes(
) -> odm::Result<()> {
    let db = common::db().await?;
    let (m, d) = movies(1..=3);
    let pair = db.odm().subset::<MovieDetails>();
    pair.insert_many(&m, &d).await?;
    // An insert stopped after its first write, and a delete after its first.
    let (_, d7) = movie(7);
    db.odm().insert_one(&d7).await?;
    db.raw()
        .collection::<Document>("movies")
        .delete_one(doc! { "_id": 2_i64 })
        .await?;
    // A main document written behind the ODM's back.
    db.raw()
        .collection::<Document>("movies")
        .insert_one(doc! { "_id": 9_i64, "title": "No details", "year": 1999, "imdb": { "rating": 1.0, "votes": 1_i64 } })
        .await?;
    db.commands().take();
    let report = pair.verify().await?;
    assert_eq!(sent(&db), ["aggregate", "aggregate"]);
    assert_eq!(report.details_without_main, ints(&[2, 7]));
    assert_eq!(report.main_without_details, ints(&[9]));
    assert_eq!(
        report.to_string(),
        "movies / movie_details: 2 details without main, 1 main without details, 0 deleted"
    );
    let report = pair.repair().await?;
    assert_eq!(report.deleted, 2);
    assert_eq!(
        sent(&db),
        ["aggregate", "aggregate", "delete", "commitTransaction"]
    );
    assert_eq!(ids_in(&db, "movie_details").await, ints(&[1, 3]));
    // The main document without details is reported, not deleted.
    assert_eq!(ids_in(&db, "movies").await, ints(&[1, 3, 9]));
    let again = pair.transaction(TransactionMode::Never).repair().await?;
    assert_eq!((again.deleted, again.main_without_details.len()), (0, 1));
    Ok(())
}

#[tokio::test]
async fn malformed_details_are_a_typed_error_naming_the_document() -> odm::Result<()> {
    let db = common::db().await?;
    let (m, d) = movies([1, 2]);
    let pair = db.odm().subset::<MovieDetails>();
    pair.insert_many(&m, &d).await?;
    db.raw()
        .collection::<Document>("movie_details")
        .update_one(doc! { "_id": 2_i64 }, doc! { "$set": { "plot": 17 } })
        .await?;
    match pair.details_of(&m).await {
        Err(Error::Decode {
            collection,
            id,
            path,
            ..
        }) => assert_eq!(
            (collection.as_str(), id.as_str(), path.as_str()),
            ("movie_details", "{ _id: 2 }", "plot")
        ),
        other => panic!("{other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn ids_that_look_like_operators_or_paths_are_values() -> odm::Result<()> {
    let db = common::db().await?;
    let ids = ["$where", "a.b", "{\"$gt\": \"\"}", "$"];
    let (pages, bodies): (Vec<Page>, Vec<PageBody>) = ids
        .iter()
        .map(|id| {
            (
                Page {
                    id: (*id).into(),
                    title: format!("title of {id}"),
                },
                PageBody {
                    id: (*id).into(),
                    body: format!("body of {id}"),
                },
            )
        })
        .unzip();
    let pair = db.odm().subset::<PageBody>();
    pair.insert_many(&pages, &bodies).await?;
    let loaded = pair.details_of(&pages).await?;
    assert_eq!(loaded, bodies.iter().cloned().map(Some).collect::<Vec<_>>());
    assert_eq!(pair.delete(Page::id_field().eq("$where")).await?, 1);
    let left: Vec<Bson> = ["$", "a.b", "{\"$gt\": \"\"}"]
        .iter()
        .map(|s| Bson::String((*s).into()))
        .collect();
    assert_eq!(ids_in(&db, "page_bodies").await, left);
    assert_eq!(ids_in(&db, "pages").await, left);
    Ok(())
}

// ---- Posts keeping their highest-rated comments ----

/// The top three comments of `post` as the comments say (by rating, then `_id`, both
/// descending, the order the array keeps), read with the raw driver.
async fn truth(db: &TestDb, post: ObjectId) -> Vec<Bson> {
    db.raw()
        .collection::<Document>("comments")
        .find(doc! { "post": post })
        .sort(doc! { "rating": -1, "_id": -1 })
        .limit(3)
        .await
        .expect("raw find")
        .try_collect::<Vec<_>>()
        .await
        .expect("raw cursor")
        .into_iter()
        .map(|c| {
            Bson::Document(doc! {
                "_id": c.get("_id").cloned().unwrap_or(Bson::Null),
                "author": c.get("author").cloned().unwrap_or(Bson::Null),
                "text": c.get("text").cloned().unwrap_or(Bson::Null),
                "rating": c.get("rating").cloned().unwrap_or(Bson::Null),
            })
        })
        .collect()
}

/// The post's stored summary, read with the raw driver.
async fn summary(db: &TestDb, post: ObjectId) -> Vec<Bson> {
    stored_one(db, "posts", post)
        .await
        .expect("post")
        .get_array("top_comments")
        .cloned()
        .unwrap_or_default()
}

async fn post_with_comments(db: &TestDb, ratings: &[i64]) -> odm::Result<(Post, Vec<Comment>)> {
    let post = Post {
        id: ObjectId::new(),
        title: "Schema design".into(),
        top_comments: vec![],
    };
    db.odm().insert_one(&post).await?;
    let comments: Vec<Comment> = ratings
        .iter()
        .enumerate()
        .map(|(i, r)| Comment {
            id: ObjectId::new(),
            post: Ref::new(post.id),
            author: format!("reader{i}"),
            text: format!("comment {i}"),
            rating: *r,
        })
        .collect();
    db.odm().insert_many(&comments).await?;
    Ok((post, comments))
}

#[tokio::test]
async fn a_post_keeps_its_three_highest_rated_comments() -> odm::Result<()> {
    let db = common::db().await?;
    let (post, c) = post_with_comments(&db, &[4, 9, 1, 7, 9, 2]).await?;
    let top = summary(&db, post.id).await;
    assert_eq!(top, truth(&db, post.id).await);
    let ids: Vec<_> = top
        .iter()
        .map(|s| s.as_document().and_then(|d| d.get_object_id("_id").ok()))
        .collect();
    // 9, 9 (the later `_id` first), 7.
    assert_eq!(ids, [Some(c[4].id), Some(c[1].id), Some(c[3].id)]);
    Ok(())
}

#[tokio::test]
async fn a_rating_change_in_or_out_of_the_top_keeps_the_summary_exact() -> odm::Result<()> {
    let db = common::db().await?;
    let (post, c) = post_with_comments(&db, &[4, 9, 1, 7, 8, 2]).await?;
    db.odm().supports_transactions().await?;
    db.commands().take();
    // A comment outside the top three rises into it.
    db.odm()
        .update_by_id::<Comment>(c[0].id, Comment::rating().set(10))
        .await?;
    // One update of the comment, then: one `find` of its post (before the write), the
    // update, one `aggregate` of the post's top three and one `update` of the post, in a
    // transaction: the same whatever the number of comments.
    assert_eq!(
        sent(&db),
        ["find", "update", "aggregate", "update", "commitTransaction"]
    );
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    // A comment inside the top falls out of it: the fourth comes in.
    db.odm()
        .update_by_id::<Comment>(c[1].id, Comment::rating().set(0))
        .await?;
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    // A change within the top reorders it; outside, it leaves it as it is.
    db.odm()
        .update_by_id::<Comment>(c[3].id, Comment::rating().inc(5))
        .await?;
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    db.odm()
        .update_by_id::<Comment>(c[2].id, Comment::rating().set(3))
        .await?;
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    // A comment's text in the top changes in the summary too.
    db.odm()
        .update_by_id::<Comment>(c[3].id, Comment::text().set("edited".to_owned()))
        .await?;
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    Ok(())
}

#[tokio::test]
async fn a_many_comment_update_recomputes_each_affected_post_once() -> odm::Result<()> {
    let db = common::db().await?;
    let mut posts = Vec::new();
    for _ in 0..4 {
        posts.push(post_with_comments(&db, &[5, 3, 8, 1, 6]).await?);
    }
    db.odm().supports_transactions().await?;
    db.commands().take();
    // reader1's comments (rated 3) on every post rise to the top.
    let n = db
        .odm()
        .update_many(Comment::author().eq("reader1"), Comment::rating().inc(10))
        .await?;
    assert_eq!(n.modified_count, 4);
    let names = sent(&db);
    assert_eq!(
        names,
        [
            "find",
            "update",
            "aggregate",
            "update",
            "update",
            "update",
            "update",
            "commitTransaction"
        ]
    );
    for (post, _) in &posts {
        assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    }
    // Deleting the top comment brings in the next.
    let top = posts[0].1[1].id;
    db.odm().delete_one(Comment::id_field().eq(top)).await?;
    assert_eq!(
        summary(&db, posts[0].0.id).await,
        truth(&db, posts[0].0.id).await
    );
    Ok(())
}

/// Two rating changes whose recomputations of one post's top three interleave: one leaves the
/// top as it was (a comment outside it falls further), the other, reading a snapshot taken
/// before the first committed, recomputes the top with the first comment's old rating. The
/// first recomputation writes the post all the same, so the second meets a write conflict and
/// is run again from a snapshot that has the first change.
#[tokio::test]
async fn a_recomputation_that_changes_nothing_still_conflicts_with_a_stale_one() -> odm::Result<()>
{
    let db = common::db().await?;
    if !db.odm().supports_transactions().await? {
        return Ok(());
    }
    // By rating, then `_id` descending: c1 10, c2 9, c4 5; c3 5 is fourth.
    let (post, c) = post_with_comments(&db, &[10, 9, 5, 5]).await?;
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    let third = c[2].id;
    let (odm, armed) = common::act_after_next_find(&db, move |database| async move {
        // After the other update's first read: c3 falls from 5 to 4, outside the top.
        Odm::new(database)
            .with_catalog(common::catalog())
            .update_by_id::<Comment>(third, Comment::rating().set(4))
            .await
            .expect("the concurrent rating change");
    })
    .await?;
    armed.store(true, std::sync::atomic::Ordering::SeqCst);
    // c1 falls out of the top: c3 comes in, at 4 and not at the 5 of the older snapshot.
    odm.update_by_id::<Comment>(c[0].id, Comment::rating().set(1))
        .await?;
    assert!(
        !armed.load(std::sync::atomic::Ordering::SeqCst),
        "the concurrent change ran"
    );
    let top = summary(&db, post.id).await;
    assert_eq!(top, truth(&db, post.id).await);
    let ratings: Vec<i64> = top
        .iter()
        .filter_map(|s| s.as_document()?.get_i64("rating").ok())
        .collect();
    assert_eq!(ratings, [9, 5, 4]);
    // The marker the write leaves nothing of.
    let stored = stored_one(&db, "posts", post.id).await.expect("the post");
    assert!(!stored.contains_key("__odm_claim"), "{stored}");
    Ok(())
}

/// Many writers change ratings of comments of a few posts at once; afterwards every post's
/// summary is exactly its top three, computed from the comments with the raw driver.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_rating_changes_leave_every_summary_exact() -> odm::Result<()> {
    const WRITERS: u64 = 12;
    const CHANGES: usize = 25;
    const ROUNDS: u64 = 3;
    let db = common::db().await?;
    let mut posts = Vec::new();
    for p in 0..2_i64 {
        let ratings: Vec<i64> = (0..8).map(|i| (i * 7 + p) % 10).collect();
        posts.push(post_with_comments(&db, &ratings).await?);
    }
    let comments: Vec<ObjectId> = posts
        .iter()
        .flat_map(|(_, c)| c.iter().map(|c| c.id))
        .collect();
    let odm = db
        .odm()
        .clone()
        .with_retry_deadline(Duration::from_secs(60));
    for round in 0..ROUNDS {
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            let (odm, comments) = (odm.clone(), comments.clone());
            writers.push(tokio::spawn(async move {
                // A fixed pseudo-random sequence per writer and round: bounded and repeatable.
                let mut x = (round * WRITERS + w) * 2_654_435_761 + 1;
                for _ in 0..CHANGES {
                    x = x
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    let c = comments[(x >> 33) as usize % comments.len()];
                    let rating = ((x >> 13) % 20) as i64;
                    let update = if x.is_multiple_of(3) {
                        Comment::rating().inc(rating - 10)
                    } else {
                        Comment::rating().set(rating)
                    };
                    odm.update_by_id::<Comment>(c, update).await?;
                }
                Ok::<_, Error>(())
            }));
        }
        for w in writers {
            w.await.expect("writer")?;
        }
        for (post, _) in &posts {
            assert_eq!(
                summary(&db, post.id).await,
                truth(&db, post.id).await,
                "round {round}"
            );
        }
    }
    Ok(())
}

/// An `Odm` on `db`'s database whose next command named `name`, once `armed` is set, is
/// followed, before the driver goes on, by `act` through a client of its own (on a thread and
/// runtime of its own).
async fn act_after_next(
    db: &TestDb,
    name: &'static str,
    act: impl Fn(odm::Odm) -> futures_util::future::BoxFuture<'static, ()> + Send + Sync + 'static,
) -> odm::Result<(odm::Odm, std::sync::Arc<std::sync::atomic::AtomicBool>)> {
    use odm::mongodb::event::command::CommandEvent;
    use odm::mongodb::event::EventHandler;
    use odm::mongodb::options::ClientOptions;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let uri = odm::testing::test_uri()?;
    let armed = Arc::new(AtomicBool::new(false));
    let mut options = ClientOptions::parse(&uri).await?;
    let (trigger, db_name, act) = (armed.clone(), db.name().to_owned(), Arc::new(act));
    options.command_event_handler = Some(EventHandler::callback(move |ev: CommandEvent| {
        let CommandEvent::Succeeded(done) = ev else {
            return;
        };
        if done.command_name != name || !trigger.swap(false, Ordering::SeqCst) {
            return;
        }
        let (db_name, act) = (db_name.clone(), act.clone());
        common::with_own_client(uri.clone(), move |client| async move {
            act(odm::Odm::new(client.database(&db_name)).with_catalog(common::catalog())).await;
        })
        .join()
        .expect("the concurrent write");
    }));
    let client = odm::mongodb::Client::with_options(options)?;
    Ok((
        odm::Odm::new(client.database(db.name())).with_catalog(common::catalog()),
        armed,
    ))
}

/// The worst moment: another rating change lands, summary and all, between the recomputation
/// reading a post's comments and writing its summary. The recomputation's transaction then
/// conflicts on the post and runs again, so the summary holds both changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_change_between_reading_and_writing_a_summary_is_not_lost() -> odm::Result<()> {
    let db = common::db().await?;
    let (post, c) = post_with_comments(&db, &[4, 9, 1, 7, 8, 2]).await?;
    let other = c[2].id;
    let (odm, armed) = act_after_next(&db, "aggregate", move |odm| {
        Box::pin(async move {
            odm.update_by_id::<Comment>(other, Comment::rating().set(20))
                .await
                .expect("the concurrent rating change");
        })
    })
    .await?;
    armed.store(true, std::sync::atomic::Ordering::SeqCst);
    odm.update_by_id::<Comment>(c[0].id, Comment::rating().set(15))
        .await?;
    assert!(
        !armed.load(std::sync::atomic::Ordering::SeqCst),
        "the change ran"
    );
    let top = summary(&db, post.id).await;
    assert_eq!(top, truth(&db, post.id).await);
    let ratings: Vec<_> = top
        .iter()
        .filter_map(|s| s.as_document().and_then(|d| d.get_i64("rating").ok()))
        .collect();
    assert_eq!(ratings, [20, 15, 9]);
    Ok(())
}

/// A comment's change and its post's summary land together or not at all. Here a validator
/// on `posts` refuses a summary holding a rating of 100 or more, so the recomputation fails
/// after the comment's own update was sent: the transaction both run in is aborted, and the
/// comment keeps its rating (outside one, it would hold the new rating under a stale summary).
/// The same for a replacement.
#[tokio::test]
async fn a_summary_that_cannot_be_written_takes_the_source_change_back() -> odm::Result<()> {
    let db = common::db().await?;
    if !db.odm().supports_transactions().await? {
        return Ok(());
    }
    let (post, c) = post_with_comments(&db, &[4, 9, 1, 7]).await?;
    db.raw()
        .run_command(doc! {
            "collMod": "posts",
            "validator": { "$jsonSchema": { "properties": { "top_comments": {
                "items": { "properties": { "rating": { "maximum": 99 } } },
            } } } },
        })
        .await
        .expect("collMod");
    let before = stored_one(&db, "comments", c[0].id).await;
    let refused = db
        .odm()
        .update_by_id::<Comment>(c[0].id, Comment::rating().set(150))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    db.commands().take();
    let mut replaced = c[0].clone();
    replaced.rating = 150;
    let refused = db.odm().replace_one(&replaced).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(
        sent(&db),
        ["find", "update", "aggregate", "update", "abortTransaction"]
    );
    assert_eq!(stored_one(&db, "comments", c[0].id).await, before);
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);
    // A rating the validator accepts lands, with its summary.
    db.odm()
        .update_by_id::<Comment>(c[0].id, Comment::rating().set(50))
        .await?;
    let top = summary(&db, post.id).await;
    assert_eq!(top, truth(&db, post.id).await);
    assert_eq!(
        top[0].as_document().and_then(|d| d.get_i64("rating").ok()),
        Some(50)
    );
    Ok(())
}

/// A rating change and its summary, with the network failing under them: the reply of the
/// commit is lost twice (the ODM commits again), or the connection dies right after the
/// comment's update (the ODM runs the transaction again). Either way the increment lands once
/// and the summary holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_increment_lands_once_when_the_network_fails_under_it() -> odm::Result<()> {
    let db = common::db().await?;
    if !db.odm().supports_transactions().await? {
        return Ok(());
    }
    let (post, c) = post_with_comments(&db, &[4, 9, 1, 7]).await?;
    let rating = |db: &TestDb| {
        let db = db.raw().clone();
        let id = c[0].id;
        async move {
            db.collection::<Document>("comments")
                .find_one(doc! { "_id": id })
                .await
                .expect("raw find")
                .and_then(|d| d.get_i64("rating").ok())
        }
    };
    let proxy = odm::testing::FaultProxy::start().await?;
    let odm = proxy.odm(db.name()).await?.with_catalog(common::catalog());

    proxy.lose_replies("commitTransaction", 2);
    odm.update_by_id::<Comment>(c[0].id, Comment::rating().inc(10))
        .await?;
    assert_eq!(proxy.count_of("commitTransaction"), 3);
    assert_eq!(rating(&db).await, Some(14));
    assert_eq!(summary(&db, post.id).await, truth(&db, post.id).await);

    proxy.lose_replies("aggregate", 1);
    odm.update_by_id::<Comment>(c[0].id, Comment::rating().inc(10))
        .await?;
    // Run again (more than once when the first attempt's transaction, which the server has
    // not aborted yet, still holds the comment).
    assert!(proxy.count_of("aggregate") >= 2);
    assert_eq!(rating(&db).await, Some(24));
    let top = summary(&db, post.id).await;
    assert_eq!(top, truth(&db, post.id).await);
    assert_eq!(
        top[0].as_document().and_then(|d| d.get_i64("rating").ok()),
        Some(24)
    );
    Ok(())
}

/// The main side once `plot` has moved into it (the schema change of the book's chapter).
#[derive(Deserialize, Debug, PartialEq)]
struct MovieWithPlot {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    plot: String,
}

/// Moving a field from one side to the other is a migration of the stored documents: the
/// book's two commands, run here with the raw driver, then both sides read back.
#[tokio::test]
async fn moving_a_field_to_the_main_side_is_two_commands() -> odm::Result<()> {
    let db = common::db().await?;
    let (m, d) = movies(1..=3);
    db.odm()
        .subset::<MovieDetails>()
        .insert_many(&m, &d)
        .await?;
    // ANCHOR: move_field
    // 1. Copy `plot` from each details document into its movie (one `aggregate` with `$merge`
    //    on `_id`; a details document without a movie is left out).
    let details = db.raw().collection::<Document>("movie_details");
    details
        .aggregate([
            doc! { "$project": { "_id": 1, "plot": 1 } },
            doc! { "$merge": { "into": "movies", "on": "_id", "whenMatched": "merge", "whenNotMatched": "discard" } },
        ])
        .await?;
    // 2. Once the code reading `plot` from `movies` is deployed, remove it from the details.
    details
        .update_many(doc! {}, doc! { "$unset": { "plot": "" } })
        .await?;
    // ANCHOR_END: move_field
    let moved = db
        .odm()
        .find(Movie::id_field().lte(2))
        .sort(Movie::id_field().asc())
        .into_type::<MovieWithPlot>()
        .await?;
    assert_eq!(
        moved,
        [
            MovieWithPlot {
                id: 1,
                title: "Movie 1".into(),
                plot: "The plot of movie 1.".into()
            },
            MovieWithPlot {
                id: 2,
                title: "Movie 2".into(),
                plot: "The plot of movie 2.".into()
            },
        ]
    );
    assert_eq!(
        stored_one(&db, "movie_details", 3_i64).await,
        Some(doc! { "_id": 3_i64, "directors": ["Director 3"] })
    );
    Ok(())
}
