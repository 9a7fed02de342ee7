//! The library workshop's exercise 2: "display the 10 most recent reviews by a user, making
//! efficient use of memory and disk seeks". A user's reviews are stored in monthly buckets, one
//! document per user and month; a review is added with one upsert and deleted with one `$pull`,
//! and the newest ten are read from the fewest buckets, newest month first. Every step prints
//! what it did and the commands it sent.
//!
//! Part of the library example (`cargo run -p odm-examples --example library`), whose steps
//! it continues, in a database of its own.

use crate::common::{say, Steps};
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;

// ANCHOR: models
/// One review, stored in the bucket of its user and month.
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Review {
    id: ObjectId,
    rating: i32,
    text: String,
    created_at: DateTime,
}

/// A user's reviews of one month: `{_id, user, month, count, reviews: [...]}`.
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
    /// The first instant of the month: 2012-10-01T00:00:00Z.
    month: DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}
// ANCHOR_END: models

// ANCHOR: capped
/// The general bucket pattern: at most 2 reviews per bucket (tiny, to show the effect), a full
/// bucket makes the next add open another one for the same user and month.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(
    collection = "review_pages",
    bucket(
        key = "user",
        period = "month",
        every = "month",
        items = "reviews",
        time = "created_at",
        max = 2
    )
)]
struct ReviewPage {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    month: DateTime,
    count: u32,
    #[embed]
    reviews: Vec<Review>,
}
// ANCHOR_END: capped

fn at(s: &str) -> DateTime {
    DateTime::parse_rfc3339_str(s).expect("a valid date")
}

/// A review with a fresh id, named in the printed commands.
fn review(steps: &Steps, name: &str, rating: i32, text: &str, created_at: &str) -> Review {
    let r = Review {
        id: ObjectId::new(),
        rating,
        text: text.into(),
        created_at: at(created_at),
    };
    steps.name(r.id, name);
    r
}

pub async fn run(library: &Odm, steps: &Steps) -> odm::Result<()> {
    let odm = crate::common::part(library, "reviews");
    let raw = odm.database().collection::<Document>("reviews");
    let show = |d: &Document| steps.show(&d.clone().into());

    steps.start("Create the indexes: the buckets are found by user and month");
    odm.sync_indexes_of::<UserReviews>()
        .and::<ReviewPage>()
        .await?;
    steps.sent();

    steps.start("Bob reviews two books in October 2012: the first add opens the bucket");
    let excellent = review(
        steps,
        "excellent",
        5,
        "This book is excellent!",
        "2012-10-10T21:14:07.096Z",
    );
    let enjoy = review(
        steps,
        "enjoy",
        2,
        "I didn't really enjoy this book.",
        "2012-10-11T20:12:50.594Z",
    );
    // ANCHOR: add
    let added = odm.buckets::<UserReviews>().add("bob", &excellent).await?;
    // ANCHOR_END: add
    assert!(added.opened.is_some());
    let again = odm.buckets::<UserReviews>().add("bob", &enjoy).await?;
    assert!(again.opened.is_none());
    steps.sent();
    let bucket = raw
        .find_one(doc! {"user": "bob"})
        .await?
        .expect("bob's bucket");
    steps.name(
        bucket.get_object_id("_id").expect("an ObjectId"),
        "bob-201210",
    );
    say(format_args!("stored: {}", show(&bucket)));

    steps.start("\"An average read.\": added to the bucket of its month, newest first");
    let average = review(
        steps,
        "average",
        3,
        "An average read.",
        "2012-10-13T12:26:11.502Z",
    );
    odm.buckets::<UserReviews>().add("bob", &average).await?;
    steps.sent();
    let bucket = raw
        .find_one(doc! {"user": "bob"})
        .await?
        .expect("bob's bucket");
    say(format_args!("stored: {}", show(&bucket)));

    steps.start(
        "Bob's reviews of the months before, and users whose names look like ids or patterns",
    );
    let mut bobs = vec![average.clone(), enjoy.clone(), excellent.clone()];
    for (i, month) in ["2012-09", "2012-08", "2012-07"].iter().enumerate() {
        for day in 0..3 {
            let r = review(
                steps,
                &format!("{}{}", ["sep", "aug", "jul"][i], day + 1),
                4,
                "Another good one.",
                &format!("{month}-{:02}T10:00:00Z", 20 - 5 * day - i),
            );
            odm.buckets::<UserReviews>().add("bob", &r).await?;
            bobs.push(r);
        }
    }
    // With the seed's string ids, `bob-2012` in October is `bob-2012-10` and `bob` in a
    // month written 2012-10 is `bob-201210`; `/^bob-/` matches both, and `bob.*` is a pattern.
    for user in ["bob-2012", "bob.*"] {
        let r = review(steps, user, 1, "Not mine, Bob's!", "2012-10-20T09:00:00Z");
        odm.buckets::<UserReviews>().add(user, &r).await?;
    }
    say("12 reviews of bob in 4 buckets, 1 each of `bob-2012` and `bob.*`");
    let buckets = raw.count_documents(doc! {}).await?;
    assert_eq!(buckets, 6);

    steps.start("The 10 most recent reviews by bob: newest month first, each bucket cut to 10");
    // ANCHOR: newest
    let newest = odm.buckets::<UserReviews>().newest("bob", 10).await?;
    // ANCHOR_END: newest
    steps.sent();
    let texts: Vec<String> = newest
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r.created_at.try_to_rfc3339_string().unwrap_or_default(),
                r.text
            )
        })
        .collect();
    for t in &texts {
        say(t);
    }
    bobs.sort_by_key(|b| std::cmp::Reverse(b.created_at));
    assert_eq!(newest, bobs[..10]);

    steps
        .start("Bob deletes \"I didn't really enjoy this book.\": one $pull on its month's bucket");
    // ANCHOR: remove
    let removed = odm
        .buckets::<UserReviews>()
        .remove("bob", enjoy.id, Some(enjoy.created_at))
        .await?;
    // ANCHOR_END: remove
    assert!(removed);
    steps.sent();
    let bucket = raw
        .find_one(doc! {"user": "bob", "month": at("2012-10-01T00:00:00Z")})
        .await?
        .expect("bob's bucket");
    say(format_args!("stored: {}", show(&bucket)));

    steps.start("Without the review's date: the same $pull, looking through all of bob's buckets");
    let first = &bobs[3];
    assert!(
        odm.buckets::<UserReviews>()
            .remove("bob", first.id, None)
            .await?
    );
    steps.sent();

    steps.start(
        "At most 2 reviews per bucket: October's three reviews fill one bucket and open another",
    );
    for r in [&excellent, &enjoy, &average] {
        odm.buckets::<ReviewPage>().add("bob", r).await?;
    }
    steps.sent();
    let pages = odm.database().collection::<Document>("review_pages");
    let mut cursor = pages.find(doc! {}).sort(doc! {"count": -1}).await?;
    let mut n = 0;
    while cursor.advance().await? {
        let page = Document::try_from(cursor.current()).expect("a document");
        n += 1;
        steps.name(
            page.get_object_id("_id").expect("an ObjectId"),
            &format!("page{n}"),
        );
        say(format_args!("stored: {}", show(&page)));
    }

    steps.start(
        "The newest 2: the first bucket read may not hold them, so the rest of its month is read",
    );
    let newest = odm.buckets::<ReviewPage>().newest("bob", 2).await?;
    steps.sent();
    assert_eq!(newest, [average.clone(), enjoy.clone()]);
    say("newest 2: \"An average read.\", \"I didn't really enjoy this book.\"");

    crate::common::drop_database(&odm).await
}
