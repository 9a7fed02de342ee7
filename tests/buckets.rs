//! Buckets (the library workshop's exercise 2): a user's reviews in one document per month,
//! added with one upsert, removed with one `$pull`, the newest N read across buckets.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::{last_command, sent, stored};
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;

// ANCHOR: models
/// One review, stored inside the bucket of its user and month.
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Review {
    id: ObjectId,
    rating: i32,
    text: String,
    created_at: DateTime,
}

/// A user's reviews of one month.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "reviews",
    bucket(
        key = "user",
        period = "month",
        every = "month",
        items = "reviews",
        time = "created_at"
    )
)]
struct UserReviews {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    month: DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}
// ANCHOR_END: models

/// The same reviews, at most 2 per bucket (the general bucket pattern: a full bucket makes the
/// next add open another for the same user and month).
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "capped_reviews",
    bucket(
        key = "user",
        period = "month",
        every = "month",
        items = "reviews",
        time = "created_at",
        max = 2
    )
)]
struct CappedReviews {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    month: DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}

/// A deterministic sequence of small numbers (no randomness in tests).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn at(s: &str) -> DateTime {
    DateTime::parse_rfc3339_str(s).expect("date")
}

fn review(text: &str, created_at: DateTime) -> Review {
    Review {
        id: ObjectId::new(),
        rating: 3,
        text: text.into(),
        created_at,
    }
}

/// `n` reviews by `users` users over the 36 months from January 2010, shuffled.
fn reviews(n: usize, users: u64, seed: u64) -> Vec<(String, Review)> {
    let mut rng = Lcg(seed);
    let mut out: Vec<(String, Review)> = (0..n)
        .map(|i| {
            let user = format!("user{}", rng.below(users));
            let month = rng.below(36);
            let time = format!(
                "{}-{:02}-{:02}T00:00:00Z",
                2010 + month / 12,
                1 + month % 12,
                1 + rng.below(28)
            );
            let ms = at(&time).timestamp_millis() + rng.below(86_400_000) as i64;
            (
                user,
                review(&format!("review {i}"), DateTime::from_millis(ms)),
            )
        })
        .collect();
    // Fisher-Yates with the same generator: the insert order is unrelated to time.
    for i in (1..out.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        out.swap(i, j);
    }
    out
}

/// The newest `n` of `user`'s reviews, computed in memory: by time, then id, descending.
fn truth(all: &[(String, Review)], user: &str, n: usize) -> Vec<Review> {
    let mut mine: Vec<Review> = all
        .iter()
        .filter(|(u, _)| u == user)
        .map(|(_, r)| r.clone())
        .collect();
    mine.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| b.id.bytes().cmp(&a.id.bytes()))
    });
    mine.truncate(n);
    mine
}

/// Adds every review from 8 concurrent writers.
async fn add_all<B: odm::bucket::Bucket<Key = String, Item = Review>>(
    db: &TestDb,
    all: &[(String, Review)],
) -> odm::Result<()> {
    let all = Arc::new(all.to_vec());
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (odm, all) = (db.odm().clone(), all.clone());
        tasks.push(tokio::spawn(async move {
            for (user, r) in all.iter().skip(w).step_by(8) {
                odm.buckets::<B>().add(user, r).await?;
            }
            Ok::<(), odm::Error>(())
        }));
    }
    for t in tasks {
        t.await.expect("writer")?;
    }
    Ok(())
}

#[tokio::test]
async fn an_add_is_one_upsert_into_the_bucket_of_its_user_and_month() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes_of::<UserReviews>().await?;
    sent(&db);
    let first = review("This book is excellent!", at("2012-10-10T21:14:07.096Z"));
    let second = review(
        "I didn't really enjoy this book.",
        at("2012-10-11T20:12:50.594Z"),
    );
    let third = review("An average read.", at("2012-11-13T12:26:11.502Z"));
    let added = odm.buckets::<UserReviews>().add("bob", &first).await?;
    assert_eq!(added.period, at("2012-10-01T00:00:00Z"));
    assert!(added.opened.is_some());
    let update = last_command(&db, "update");
    let u = &update.get_array("updates").unwrap()[0];
    assert_eq!(
        u.as_document().unwrap().get_document("q").unwrap(),
        &doc! {"user": {"$eq": "bob"}, "month": {"$eq": at("2012-10-01T00:00:00Z")}}
    );
    assert_eq!(u.as_document().unwrap().get_bool("upsert").ok(), Some(true));
    for r in [&second, &third] {
        let again = odm.buckets::<UserReviews>().add("bob", r).await?;
        assert_eq!(sent(&db), ["update"]);
        assert_eq!(again.opened.is_some(), r.text == "An average read.");
    }
    let buckets = stored(&db, "reviews").await;
    assert_eq!(buckets.len(), 2);
    let october = buckets
        .iter()
        .find(|b| b.get_datetime("month").ok() == Some(&at("2012-10-01T00:00:00Z")))
        .expect("October");
    assert_eq!(october.get_str("user").ok(), Some("bob"));
    assert_eq!(october.get_i32("count").ok(), Some(2));
    let texts: Vec<&str> = october
        .get_array("reviews")
        .unwrap()
        .iter()
        .map(|r| r.as_document().unwrap().get_str("text").unwrap())
        .collect();
    // Newest first, whatever the order of the adds.
    assert_eq!(
        texts,
        [
            "I didn't really enjoy this book.",
            "This book is excellent!"
        ]
    );
    let indexes = common::listed_indexes(&db, "reviews").await;
    let index = indexes
        .iter()
        .find(|i| i.get_str("name").ok() == Some("user_1_month_-1"))
        .expect("the bucket index");
    assert_eq!(
        index.get_document("key").ok(),
        Some(&doc! {"user": 1, "month": -1})
    );
    assert_eq!(index.get_bool("unique").ok(), Some(true));
    Ok(())
}

#[tokio::test]
async fn the_newest_ten_of_5000_reviews_equal_the_truth_for_every_user() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes_of::<UserReviews>().await?;
    let all = reviews(5_000, 50, 7);
    add_all::<UserReviews>(&db, &all).await?;
    let log = db.commands().take();
    assert_eq!(log.len(), 5_000 + 2, "one update per review");
    let buckets = stored(&db, "reviews").await;
    let total: i32 = buckets.iter().map(|b| b.get_i32("count").unwrap()).sum();
    assert_eq!(total, 5_000);
    assert!(buckets.len() <= 50 * 36);
    let mut finds = 0;
    let mut most = 0;
    for u in 0..50 {
        let user = format!("user{u}");
        let newest = odm.buckets::<UserReviews>().newest(&user, 10).await?;
        assert_eq!(newest, truth(&all, &user, 10), "{user}");
        let commands = sent(&db);
        assert!(commands.iter().all(|c| c == "find"), "{commands:?}");
        finds += commands.len();
        most = most.max(commands.len());
    }
    // About 2.8 reviews per user and month: 3 to 5 buckets per user, read in 2 or 3 rounds.
    println!("newest 10 of 50 users: {finds} finds, at most {most} for one user");
    assert!(most <= 4, "at most {most} finds");
    assert!(finds <= 50 * 3, "{finds} finds");
    Ok(())
}

#[tokio::test]
async fn capped_buckets_hold_at_most_max_items_and_newest_still_equals_the_truth() -> odm::Result<()>
{
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes_of::<CappedReviews>().await?;
    let all = reviews(1_500, 15, 11);
    add_all::<CappedReviews>(&db, &all).await?;
    let buckets = stored(&db, "capped_reviews").await;
    let mut items = 0;
    for b in &buckets {
        let len = b.get_array("reviews").unwrap().len();
        assert!(len <= 2, "{b}");
        assert_eq!(b.get_i32("count").unwrap() as usize, len, "{b}");
        items += len;
    }
    assert_eq!(items, 1_500);
    sent(&db);
    for u in 0..15 {
        let user = format!("user{u}");
        for n in [1, 3, 10, 25] {
            let newest = odm.buckets::<CappedReviews>().newest(&user, n).await?;
            assert_eq!(newest, truth(&all, &user, n), "{user} {n}");
        }
    }
    let indexes = common::listed_indexes(&db, "capped_reviews").await;
    let index = indexes
        .iter()
        .find(|i| i.get_str("name").ok() == Some("user_1_month_-1__id_-1"))
        .expect("the bucket index");
    assert_eq!(
        index.get_document("key").ok(),
        Some(&doc! {"user": 1, "month": -1, "_id": -1})
    );
    assert_eq!(
        index.get_bool("unique").ok(),
        None,
        "several buckets per month"
    );
    Ok(())
}

#[tokio::test]
async fn concurrent_adds_to_one_bucket_lose_nothing() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    for round in 0..3 {
        let month = format!("2012-{:02}-15T12:00:00Z", 3 + round);
        let mut tasks = Vec::new();
        for i in 0..24 {
            let odm = db.odm().clone();
            let r = review(&format!("{round}/{i}"), at(&month));
            tasks.push(tokio::spawn(async move {
                odm.buckets::<UserReviews>().add("bob", &r).await?;
                odm.buckets::<CappedReviews>().add("bob", &r).await
            }));
        }
        for t in tasks {
            t.await.expect("writer")?;
        }
    }
    let open = stored(&db, "reviews").await;
    assert_eq!(open.len(), 3, "one bucket per month");
    for b in &open {
        assert_eq!(b.get_i32("count").ok(), Some(24));
        assert_eq!(b.get_array("reviews").unwrap().len(), 24);
    }
    let capped = stored(&db, "capped_reviews").await;
    let mut per_month: HashMap<DateTime, usize> = HashMap::new();
    for b in &capped {
        let len = b.get_array("reviews").unwrap().len();
        assert!(
            len <= 2 && b.get_i32("count").unwrap() as usize == len,
            "{b}"
        );
        *per_month
            .entry(*b.get_datetime("month").unwrap())
            .or_default() += len;
    }
    assert_eq!(per_month.len(), 3);
    assert!(per_month.values().all(|n| *n == 24), "{per_month:?}");
    Ok(())
}

#[tokio::test]
async fn two_adds_racing_for_the_last_slot_fill_it_and_open_a_new_bucket() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    for day in 1..=12 {
        let time = at(&format!("2012-10-{day:02}T08:00:00Z"));
        // Hours apart within one month: one bucket per day-pair would be wrong, so use months.
        let time = DateTime::from_millis(time.timestamp_millis() + day * 31 * 86_400_000);
        let first = review("first", time);
        odm.buckets::<CappedReviews>().add("ann", &first).await?;
        let (a, b) = (review("a", time), review("b", time));
        let (x, y) = tokio::join!(
            odm.buckets::<CappedReviews>().add("ann", &a),
            odm.buckets::<CappedReviews>().add("ann", &b)
        );
        let opened = [x?.opened, y?.opened];
        assert_eq!(
            opened.iter().filter(|o| o.is_some()).count(),
            1,
            "one of the two finds the bucket full and opens another"
        );
    }
    let buckets = stored(&db, "capped_reviews").await;
    assert_eq!(buckets.len(), 24);
    let mut counts: Vec<i32> = buckets
        .iter()
        .map(|b| b.get_i32("count").unwrap())
        .collect();
    counts.sort_unstable();
    assert_eq!(counts, [vec![1; 12], vec![2; 12]].concat());
    Ok(())
}

#[tokio::test]
async fn a_review_is_removed_by_its_id_with_one_pull() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let keep = review("keep", at("2012-10-10T21:14:07Z"));
    let gone = review("gone", at("2012-10-11T20:12:50Z"));
    let older = review("older", at("2012-09-11T20:12:50Z"));
    for r in [&keep, &gone, &older] {
        odm.buckets::<UserReviews>().add("bob", r).await?;
    }
    sent(&db);
    let buckets = odm.buckets::<UserReviews>();
    assert!(
        buckets
            .remove("bob", gone.id, Some(gone.created_at))
            .await?
    );
    let update = last_command(&db, "update");
    let u = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(
        u.get_document("q").unwrap(),
        &doc! {
            "user": {"$eq": "bob"},
            "month": {"$eq": at("2012-10-01T00:00:00Z")},
            "reviews.id": {"$eq": gone.id},
        }
    );
    assert_eq!(
        u.get_document("u").unwrap(),
        &doc! {"$pull": {"reviews": {"id": {"$eq": gone.id}}}, "$inc": {"count": -1}}
    );
    // Without the time: the same single update, without the month.
    assert!(buckets.remove("bob", older.id, None).await?);
    assert_eq!(sent(&db), ["update"]);
    // Twice, or another user's id: nothing matches, nothing changes.
    assert!(
        !buckets
            .remove("bob", gone.id, Some(gone.created_at))
            .await?
    );
    assert!(!buckets.remove("ann", keep.id, None).await?);
    let stored = stored(&db, "reviews").await;
    let counts: Vec<(i32, usize)> = stored
        .iter()
        .map(|b| {
            (
                b.get_i32("count").unwrap(),
                b.get_array("reviews").unwrap().len(),
            )
        })
        .collect();
    assert!(
        counts.contains(&(1, 1)) && counts.contains(&(0, 0)),
        "{counts:?}"
    );
    // The emptied September bucket is skipped: the second round finds no bucket to read.
    sent(&db);
    assert_eq!(buckets.newest("bob", 10).await?, vec![keep]);
    assert_eq!(sent(&db), ["find", "find"]);
    Ok(())
}

#[tokio::test]
async fn one_find_reads_the_newest_bucket_when_it_holds_enough() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let mut all = Vec::new();
    for day in 1..=12 {
        for month in ["2012-09", "2012-10"] {
            let r = review(
                &format!("{month}-{day}"),
                at(&format!("{month}-{day:02}T10:00:00Z")),
            );
            odm.buckets::<UserReviews>().add("bob", &r).await?;
            all.push(("bob".to_owned(), r));
        }
    }
    sent(&db);
    let newest = odm.buckets::<UserReviews>().newest("bob", 10).await?;
    assert_eq!(newest, truth(&all, "bob", 10));
    let log = db.commands().take();
    assert_eq!(log.len(), 1, "one find, its cursor closed with its batch");
    let find = log[0].command.clone().unwrap();
    assert_eq!(
        find.get_document("filter").ok(),
        Some(&doc! {"user": {"$eq": "bob"}, "count": {"$gt": 0}})
    );
    assert_eq!(find.get_document("sort").ok(), Some(&doc! {"month": -1}));
    assert_eq!(
        find.get_document("projection").ok(),
        Some(&doc! {"reviews": {"$slice": 10_i64}})
    );
    assert_eq!(find.get_i64("limit").ok(), Some(1));
    // 15 of them: the first bucket holds 12, the second round asks for one more.
    assert_eq!(
        odm.buckets::<UserReviews>().newest("bob", 15).await?,
        truth(&all, "bob", 15)
    );
    assert_eq!(sent(&db), ["find", "find"]);
    // More than there are: every bucket, then the cursor ends short of its limit.
    assert_eq!(
        odm.buckets::<UserReviews>().newest("bob", 100).await?.len(),
        24
    );
    assert!(odm
        .buckets::<UserReviews>()
        .newest("bob", 0)
        .await?
        .is_empty());
    assert!(odm
        .buckets::<UserReviews>()
        .newest("nobody", 10)
        .await?
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn hostile_user_names_reach_their_own_buckets_only() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes_of::<UserReviews>().await?;
    // With the seed's string ids (`"bob-201210"`, read with `/^bob-/`) these collide or match
    // each other: `bob-2012` in month 10 and `bob` in month 201210, `bob.*` as a pattern.
    let users = [
        "bob",
        "bob.*",
        "bob-2012",
        "bob-",
        "a-2012",
        "^bob",
        "",
        "$where",
        "{\"$gt\": \"\"}",
        "bob\u{0}x",
        "b.o.b",
    ];
    let mut all = Vec::new();
    for (i, user) in users.iter().enumerate() {
        for m in 0..3 {
            let r = review(
                &format!("{user}/{m}"),
                at(&format!("2012-{:02}-0{}T10:00:00Z", 10 + m / 2, 1 + i % 9)),
            );
            odm.buckets::<UserReviews>().add(*user, &r).await?;
            all.push((user.to_string(), r));
        }
    }
    for user in users {
        let newest = odm.buckets::<UserReviews>().newest(user, 10).await?;
        assert_eq!(newest, truth(&all, user, 10), "{user:?}");
    }
    let stored = stored(&db, "reviews").await;
    let mut names: Vec<&str> = stored.iter().map(|b| b.get_str("user").unwrap()).collect();
    names.sort_unstable();
    names.dedup();
    let mut expected = users.to_vec();
    expected.sort_unstable();
    assert_eq!(names, expected, "stored as given");
    // Removing by another user's key removes nothing.
    let (_, bobs) = &all[0];
    assert!(
        !odm.buckets::<UserReviews>()
            .remove("bob.*", bobs.id, None)
            .await?
    );
    assert!(
        !odm.buckets::<UserReviews>()
            .remove("^bob", bobs.id, None)
            .await?
    );
    Ok(())
}

#[tokio::test]
async fn malformed_buckets_are_typed_errors_naming_the_bucket_and_the_field() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let month = at("2012-10-01T00:00:00Z");
    let bad_count = ObjectId::new();
    let bad_item = ObjectId::new();
    let raw = db.raw().collection::<Document>("reviews");
    raw.insert_one(doc! {
        "_id": bad_count, "user": "bob", "month": month, "count": "three", "reviews": []
    })
    .await
    .expect("raw insert");
    raw.insert_one(doc! {
        "_id": bad_item, "user": "ann", "month": month, "count": 1,
        "reviews": [{"id": ObjectId::new(), "rating": 5, "text": "x", "created_at": "yesterday"}]
    })
    .await
    .expect("raw insert");
    let r = review("new", at("2012-10-13T12:26:11Z"));
    match odm.buckets::<UserReviews>().add("bob", &r).await {
        Err(odm::Error::Decode {
            collection,
            id,
            path,
            ..
        }) => {
            assert_eq!(collection, "reviews");
            assert!(id.contains(&bad_count.to_hex()), "{id}");
            assert_eq!(path, "count");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    match odm.buckets::<UserReviews>().newest("ann", 10).await {
        Err(odm::Error::Decode {
            collection,
            id,
            path,
            ..
        }) => {
            assert_eq!(collection, "reviews");
            assert!(id.contains(&bad_item.to_hex()), "{id}");
            assert_eq!(path, "reviews.0.created_at");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    Ok(())
}

/// Without `max`, the `update` refused with a duplicate key (what two adds opening the same
/// bucket at once cause) is sent once more, and a duplicate that persists is returned; with
/// `max`, a duplicate cannot come from a race and is returned at once. A unique index of the
/// collection on the user alone refuses a second month of the same user.
#[tokio::test]
async fn a_duplicate_key_is_sent_once_more_without_max_then_returned() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    for collection in ["reviews", "capped_reviews"] {
        db.raw()
            .collection::<Document>(collection)
            .create_index(
                odm::mongodb::IndexModel::builder()
                    .keys(doc! { "user": 1 })
                    .options(
                        odm::mongodb::options::IndexOptions::builder()
                            .unique(true)
                            .name("one_bucket_per_user".to_owned())
                            .build(),
                    )
                    .build(),
            )
            .await?;
    }
    let october = review("October", at("2012-10-11T10:00:00Z"));
    let november = review("November", at("2012-11-11T10:00:00Z"));
    odm.buckets::<UserReviews>().add("bob", &october).await?;
    odm.buckets::<CappedReviews>().add("bob", &october).await?;
    db.commands().clear();

    let err = odm
        .buckets::<UserReviews>()
        .add("bob", &november)
        .await
        .expect_err("the user's index refuses a second month");
    assert!(
        matches!(&err, odm::Error::DuplicateKey { collection, index, .. }
            if collection == "reviews" && index == "one_bucket_per_user"),
        "{err:?}"
    );
    assert_eq!(sent(&db), ["update", "update"], "one retry, no more");

    let err = odm
        .buckets::<CappedReviews>()
        .add("bob", &november)
        .await
        .expect_err("the user's index refuses a second month");
    assert!(
        matches!(&err, odm::Error::DuplicateKey { collection, .. } if collection == "capped_reviews"),
        "{err:?}"
    );
    assert_eq!(sent(&db), ["update"], "with max: no retry");
    for collection in ["reviews", "capped_reviews"] {
        let stored = stored(&db, collection).await;
        assert_eq!(
            stored.len(),
            1,
            "{collection}: nothing inserted: {stored:?}"
        );
        assert_eq!(stored[0].get_i32("count").ok(), Some(1), "{collection}");
    }
    Ok(())
}

/// `.session(..)` runs adds, removes and reads in the caller's transaction: the transaction
/// reads its own items; aborted, nothing landed; committed, the bucket holds them.
#[tokio::test]
async fn buckets_run_in_the_callers_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let buckets = odm.buckets::<UserReviews>();
    let first = review("first", at("2012-10-11T10:00:00Z"));
    let second = review("second", at("2012-10-12T10:00:00Z"));
    // ANCHOR: session
    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    buckets.add("bob", &first).session(&mut session).await?;
    buckets.add("bob", &second).session(&mut session).await?;
    // ANCHOR_END: session
    assert!(
        buckets
            .remove("bob", first.id, None)
            .session(&mut session)
            .await?
    );
    let newest = buckets.newest("bob", 10).session(&mut session).await?;
    assert_eq!(newest, vec![second.clone()], "the transaction's own items");
    assert!(
        buckets.newest("bob", 10).await?.is_empty(),
        "not yet visible outside"
    );
    session.abort_transaction().await?;
    assert!(
        stored(&db, "reviews").await.is_empty(),
        "aborted: nothing added"
    );

    session.start_transaction().await?;
    buckets.add("bob", &first).session(&mut session).await?;
    session.commit_transaction().await?;
    assert_eq!(buckets.newest("bob", 10).await?, vec![first]);
    Ok(())
}
