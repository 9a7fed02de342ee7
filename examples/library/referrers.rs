//! The library workshop's exercise 7, statistic buckets: each book's listing page records the
//! website that referred the reader, and each referring domain is counted on its own.
//!
//! Solution A keeps an array of `{domain, count}` and increments the matched element with the
//! positional `$`; a domain seen for the first time is added where it is still missing, so that
//! concurrent writers never list it twice. Solution B keeps a map of domain -> count, whose keys
//! odm stores escaped (`google%2Ecom`) and reads back as they were. Also here: the typed paths
//! to array elements (`$`, `$[]`, `$[e0]` with array filters) and `$elemMatch`.
//!
//! Part of the library example (`cargo run -p odm-examples --example library`), whose steps
//! it continues, in a database of its own.

use std::collections::HashMap;

use crate::common::{say, Steps};
use odm::bson::{doc, Document};
use odm::keyed::Keyed;
use odm::prelude::*;

// ANCHOR: solution_a
#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Referrer {
    domain: String,
    count: i64,
}

/// Solution A: `{book: 1, referrers: [{domain: "google.com", count: 4}, ...]}`.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "book_refs")]
struct BookRefs {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    book: i64,
    #[embed(max = 200)]
    referrers: Vec<Referrer>,
}
// ANCHOR_END: solution_a

// ANCHOR: solution_b
/// Solution B: `{book: 1, referrers: {"google%2Ecom": 5, "yahoo%2Ecom": 1}}`.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "book_ref_counts")]
struct BookRefCounts {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    book: i64,
    #[serde(default)]
    referrers: Keyed<HashMap<String, i64>>,
}
// ANCHOR_END: solution_b

// ANCHOR: record_a
/// One referral of `book` from `domain`, solution A. One `update` when the domain is listed;
/// two when it is new; when another writer lists it between the two, the insert of an empty
/// document (refused as a duplicate) and the increment again.
async fn record_a(odm: &Odm, book: i64, domain: &str) -> odm::Result<()> {
    let listed = BookRefs::book().eq(book) & BookRefs::referrers().domain().eq(domain);
    let unlisted = BookRefs::book().eq(book) & BookRefs::referrers().domain().ne(domain);
    loop {
        // The common case: `$` is the element the filter's `referrers.domain` matched.
        let bumped = odm
            .update_one(
                listed.clone(),
                BookRefs::referrers().matched().count().inc(1),
            )
            .await?;
        if bumped.matched_count == 1 {
            return Ok(());
        }
        // Added only where it is still missing: the filter and the push are one atomic write,
        // so of two writers adding the same domain, one matches nothing.
        let element = Referrer {
            domain: domain.to_owned(),
            count: 1,
        };
        let added = odm
            .update_one(unlisted.clone(), BookRefs::referrers().push(element))
            .await?;
        if added.matched_count == 1 {
            return Ok(());
        }
        // Listed meanwhile by another writer, or the book has no document yet.
        let empty = BookRefs {
            id: ObjectId::new(),
            book,
            referrers: Vec::new(),
        };
        match odm.insert_one(&empty).await {
            Err(e) if !e.is_duplicate_key() => return Err(e),
            _ => {}
        }
    }
}
// ANCHOR_END: record_a

// ANCHOR: record_b
/// One referral of `book` from `domain`, solution B: one upserting `update`, and one more when a
/// concurrent writer inserted the book's document first (the unique index on `book` refused
/// the second insert; MongoDB 4.2+ retries such an upsert itself).
async fn record_b(odm: &Odm, book: i64, domain: &str) -> odm::Result<()> {
    let bump = || {
        odm.update_one(
            BookRefCounts::book().eq(book),
            BookRefCounts::referrers().key(domain).inc(1),
        )
        .upsert(true)
    };
    match bump().await {
        Err(e) if e.is_duplicate_key() => bump().await.map(drop),
        other => other.map(drop),
    }
}
// ANCHOR_END: record_b

async fn raw_one(odm: &Odm, collection: &str) -> odm::Result<Document> {
    let found = odm
        .database()
        .collection::<Document>(collection)
        .find_one(doc! {})
        .projection(doc! { "_id": 0 })
        .await?;
    Ok(found.unwrap_or_default())
}

pub async fn run(library: &Odm, steps: &Steps) -> odm::Result<()> {
    let odm = &crate::common::part(library, "referrers");
    steps.start("Indexes: each book has one document of each solution");
    odm.sync_indexes_of::<BookRefs>()
        .and::<BookRefCounts>()
        .await?;
    steps.sent();

    // Solution A.
    steps.start("Solution A: the seed's book_refs document");
    let seed = BookRefs {
        id: ObjectId::new(),
        book: 1,
        referrers: vec![
            Referrer {
                domain: "google.com".into(),
                count: 4,
            },
            Referrer {
                domain: "yahoo.com".into(),
                count: 1,
            },
        ],
    };
    steps.name(seed.id, "book_refs_1");
    odm.insert_one(&seed).await?;
    steps.sent();

    steps.start("Solution A: a referral from google.com, listed");
    record_a(odm, 1, "google.com").await?;
    steps.sent();
    let stored = raw_one(odm, "book_refs").await?;
    say(format_args!("stored: {}", steps.show(&stored.into())));

    steps.start("Solution A: a referral from bing.com, new");
    record_a(odm, 1, "bing.com").await?;
    steps.sent();
    let book = odm.find_one(BookRefs::book().eq(1)).await?.expect("book 1");
    assert_eq!(
        book.referrers
            .iter()
            .map(|r| (r.domain.as_str(), r.count))
            .collect::<Vec<_>>(),
        [("google.com", 5), ("yahoo.com", 1), ("bing.com", 1)]
    );
    say("referrers: google.com 5, yahoo.com 1, bing.com 1");

    steps.start("Solution A: 8 writers record 40 referrals of 5 domains at once");
    let domains = [
        "google.com",
        "yahoo.com",
        "bing.com",
        "duckduckgo.com",
        "a.b",
    ];
    let mut writers = tokio::task::JoinSet::new();
    for w in 0..8 {
        let odm = odm.clone();
        writers.spawn(async move {
            for i in 0..5 {
                record_a(&odm, 1, domains[(w + i) % domains.len()]).await?;
            }
            Ok::<(), odm::Error>(())
        });
    }
    while let Some(joined) = writers.join_next().await {
        joined.expect("writer ran to the end")?;
    }
    let book = odm.find_one(BookRefs::book().eq(1)).await?.expect("book 1");
    let total: i64 = book.referrers.iter().map(|r| r.count).sum();
    assert_eq!(book.referrers.len(), 5, "each domain listed once");
    assert_eq!(total, 7 + 40);
    say(format_args!(
        "{} domains listed once each, {total} referrals in all",
        book.referrers.len()
    ));

    // Element paths.
    steps.start("Every element: $[]");
    odm.update_one(
        BookRefs::book().eq(1),
        BookRefs::referrers().each().count().set(0),
    )
    .await?;
    steps.sent();

    steps.start("The elements meeting a condition: $[e0] and its array filter");
    let update = BookRefs::referrers()
        .each_where(|r| r.domain().eq("google.com") | r.domain().eq("bing.com"))
        .count()
        .inc(10);
    say(format_args!("{update:?}"));
    odm.update_one(BookRefs::book().eq(1), update).await?;
    steps.sent();

    steps.start("Books with one referrer both google.com and above 5 ($elemMatch)");
    let filter = BookRefs::referrers().any(|r| r.domain().eq("google.com") & r.count().gt(5));
    let n = odm.count(filter).await?;
    steps.sent();
    assert_eq!(n, 1);
    say(format_args!("{n} book"));

    // Solution B.
    steps.start("Solution B: the first referral of book 1, from bing.com, upserts the document");
    record_b(odm, 1, "bing.com").await?;
    steps.sent();

    steps.start("Solution B: referrals from google.com, yahoo.com and google_com");
    for d in ["google.com", "google.com", "yahoo.com", "google_com"] {
        record_b(odm, 1, d).await?;
    }
    let stored = raw_one(odm, "book_ref_counts").await?;
    say(format_args!("stored: {}", steps.show(&stored.into())));
    let book = odm
        .find_one(BookRefCounts::book().eq(1))
        .await?
        .expect("book 1");
    let mut read: Vec<(&String, &i64)> = book.referrers.iter().collect();
    read.sort();
    say(format_args!("read back: {read:?}"));
    assert_eq!(book.referrers["google.com"], 2);
    assert_eq!(book.referrers["google_com"], 1);

    steps.start("Solution B: keys that are paths or operators elsewhere");
    for d in ["$where", "a.b", "%2E", ""] {
        record_b(odm, 1, d).await?;
    }
    steps.sent();
    let book = odm
        .find_one(BookRefCounts::referrers().key("$where").eq(1))
        .await?
        .expect("book 1");
    steps.sent();
    for d in ["$where", "a.b", "%2E", ""] {
        assert_eq!(book.referrers[d], 1, "{d:?}");
    }
    say("each read back as it was written");
    crate::common::drop_database(odm).await
}
