//! The workshop's exercise 6 (at most 10 recommendations per user: a quota kept in the
//! document) through [`odm::counters::Quota`], and exercise 3 (the loan queue: claim by
//! priority with `findAndModify`, approve, time out after seven days) through
//! `find_one_and_update` and `update_many`, under concurrency.

mod common;

use std::collections::BTreeSet;

use common::{sent, stored, stored_one};
use odm::bson::{doc, Bson, DateTime};
use odm::counters::{Quota, Taken};
use odm::prelude::*;

// ANCHOR: user_recs
/// A user's remaining and given recommendations (the seed's `user_recs`).
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "user_recs")]
struct UserRecs {
    #[serde(rename = "_id")]
    id: String,
    remaining: i32,
    books: Vec<i32>,
}
// ANCHOR_END: user_recs

/// A quota spent on strings, for hostile items.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "tags_left")]
struct TagsLeft {
    #[serde(rename = "_id")]
    id: i32,
    left: i64,
    tags: Vec<String>,
}

fn recommendations() -> Quota<UserRecs, i32, i32> {
    Quota::new(UserRecs::remaining(), UserRecs::books())
}

/// The seed's example: bob has 8 left and recommended 3 and 10; recommending 4 is one update
/// that leaves 7 and `[3, 10, 4]`; recommending 4 again is refused and changes nothing.
#[tokio::test]
async fn taking_a_unit_is_one_conditional_update() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&UserRecs {
        id: "bob".into(),
        remaining: 8,
        books: vec![3, 10],
    })
    .await?;
    db.commands().clear();
    let quota = recommendations();
    assert_eq!(quota.take(odm, "bob", 4).await?, Taken::Taken);
    let commands = db.commands().take();
    assert_eq!(commands.len(), 1);
    let update = commands[0].command.clone().expect("logged with documents");
    let statement = update.get_array("updates").expect("updates")[0]
        .as_document()
        .expect("a statement")
        .clone();
    assert_eq!(
        statement.get_document("q").expect("q"),
        &doc! { "_id": "bob", "remaining": { "$gt": 0 }, "books": { "$ne": 4 } }
    );
    assert_eq!(
        statement.get_document("u").expect("u"),
        &doc! { "$inc": { "remaining": -1 }, "$push": { "books": 4 } }
    );
    assert_eq!(
        stored_one(&db, "user_recs", "bob").await,
        Some(doc! { "_id": "bob", "remaining": 7, "books": [3, 10, 4] })
    );

    assert_eq!(quota.take(odm, "bob", 4).await?, Taken::AlreadyGiven);
    assert_eq!(sent(&db), vec!["update", "find"]);
    assert_eq!(quota.take(odm, "ann", 4).await?, Taken::NotFound);
    assert_eq!(
        stored_one(&db, "user_recs", "bob").await,
        Some(doc! { "_id": "bob", "remaining": 7, "books": [3, 10, 4] })
    );

    assert!(quota.give_back(odm, "bob", 10).await?);
    assert!(!quota.give_back(odm, "bob", 10).await?);
    assert_eq!(
        stored_one(&db, "user_recs", "bob").await,
        Some(doc! { "_id": "bob", "remaining": 8, "books": [3, 4] })
    );
    Ok(())
}

/// 100 concurrent attempts on a quota of 10, each for another book: exactly 10 succeed, the
/// document reads back with 0 left and exactly those 10 books; 20 concurrent attempts for one
/// book: exactly one succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_quota_of_ten_under_a_hundred_concurrent_attempts() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_many(&[
        UserRecs {
            id: "bob".into(),
            remaining: 10,
            books: Vec::new(),
        },
        UserRecs {
            id: "kate".into(),
            remaining: 10,
            books: Vec::new(),
        },
    ])
    .await?;
    db.commands().clear();
    let mut attempts = Vec::new();
    for book in 0..100 {
        let odm = odm.clone();
        attempts.push(tokio::spawn(async move {
            let taken = recommendations().take(&odm, "bob", book).await?;
            Ok::<_, odm::Error>((book, taken))
        }));
    }
    let mut succeeded = BTreeSet::new();
    let mut exhausted = 0;
    for a in attempts {
        match a.await.expect("attempt")? {
            (book, Taken::Taken) => {
                succeeded.insert(book);
            }
            (_, Taken::Exhausted) => exhausted += 1,
            (book, other) => panic!("book {book}: {other:?}"),
        }
    }
    assert_eq!(succeeded.len(), 10);
    assert_eq!(exhausted, 90);
    assert_eq!(db.commands().count_of("update"), 100);
    assert_eq!(db.commands().count_of("find"), 90, "one find per refusal");
    let bob = stored_one(&db, "user_recs", "bob").await.expect("bob");
    assert_eq!(bob.get_i32("remaining").ok(), Some(0));
    let books: BTreeSet<i32> = bob
        .get_array("books")
        .expect("books")
        .iter()
        .map(|b| b.as_i32().expect("a book"))
        .collect();
    assert_eq!(books, succeeded);
    assert_eq!(bob.get_array("books").map(Vec::len).ok(), Some(10));

    let mut same = Vec::new();
    for _ in 0..20 {
        let odm = odm.clone();
        same.push(tokio::spawn(async move {
            recommendations().take(&odm, "kate", 4).await
        }));
    }
    let mut outcomes = Vec::new();
    for s in same {
        outcomes.push(s.await.expect("attempt")?);
    }
    assert_eq!(outcomes.iter().filter(|t| **t == Taken::Taken).count(), 1);
    assert_eq!(
        outcomes
            .iter()
            .filter(|t| **t == Taken::AlreadyGiven)
            .count(),
        19
    );
    assert_eq!(
        stored_one(&db, "user_recs", "kate").await,
        Some(doc! { "_id": "kate", "remaining": 9, "books": [4] })
    );
    Ok(())
}

/// Items are values: one that looks like an operator or a path is compared and stored as
/// given, and is not confused with another.
#[tokio::test]
async fn hostile_items_are_values() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&TagsLeft {
        id: 1,
        left: 10,
        tags: vec!["a.b".into()],
    })
    .await?;
    let quota = Quota::new(TagsLeft::left(), TagsLeft::tags());
    for tag in ["$gt", "a.b", "{\"$ne\": null}", "$gt", "a"] {
        quota.take(odm, 1, tag).await?;
    }
    assert_eq!(
        stored(&db, "tags_left").await,
        vec![doc! {
            "_id": 1,
            "left": Bson::Int64(7),
            "tags": ["a.b", "$gt", "{\"$ne\": null}", "a"],
        }]
    );
    assert!(quota.give_back(odm, 1, "$gt").await?);
    assert!(!quota.give_back(odm, 1, "$ne").await?);
    Ok(())
}

/// A quota spent on embedded documents: `Quota::new` takes the typed paths of the embedded
/// array as the accessor returns them.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "pick_lists")]
struct Picks {
    #[serde(rename = "_id")]
    id: i32,
    left: i32,
    #[embed(max = 10)]
    picks: Vec<Pick>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Pick {
    book: i32,
    note: String,
}

#[tokio::test]
async fn a_quota_takes_the_paths_of_an_embedded_array() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Picks {
        id: 1,
        left: 1,
        picks: Vec::new(),
    })
    .await?;
    let quota = Quota::new(Picks::left(), Picks::picks());
    let pick = |book| Pick {
        book,
        note: "a favourite".into(),
    };
    assert_eq!(
        quota.take(odm, 1, pick(3)).await?,
        odm::counters::Taken::Taken
    );
    assert_eq!(
        quota.take(odm, 1, pick(4)).await?,
        odm::counters::Taken::Exhausted
    );
    assert_eq!(
        stored(&db, "pick_lists").await,
        vec![doc! { "_id": 1, "left": 0, "picks": [{ "book": 3, "note": "a favourite" }] }]
    );
    Ok(())
}

// ANCHOR: loan
/// A loan request (the workshop's exercise 3), as in the library example.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "loans", index(keys = "pending, -priority"))]
struct Loan {
    #[serde(rename = "_id")]
    id: LoanId,
    pending: bool,
    approved: bool,
    priority: i32,
    started: Option<DateTime>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct LoanId {
    borrower: String,
    book: i32,
}
// ANCHOR_END: loan

/// Claims the waiting request of highest priority: one `findAndModify`.
async fn claim(odm: &Odm) -> odm::Result<Option<Loan>> {
    odm.find_one_and_update(
        Loan::pending().eq(false) & Loan::approved().eq(false),
        Loan::pending()
            .set(true)
            .and(Loan::started().set(Some(DateTime::now()))),
    )
    .sort(Loan::priority().desc())
    .return_new()
    .await
}

/// 20 workers claim 1,000 requests until none is left: each request is claimed exactly once,
/// each worker's claims come in priority order, and every request reads back pending with its
/// start time; one `findAndModify` per claim, plus one that finds nothing per worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_workers_claim_a_thousand_requests_once_each() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.sync_indexes_of::<Loan>().await?;
    let requests: Vec<Loan> = (0..1000)
        .map(|i| Loan {
            id: LoanId {
                borrower: format!("user{}", i % 37),
                book: i,
            },
            pending: false,
            approved: false,
            priority: (i * 7919) % 10,
            started: None,
        })
        .collect();
    odm.insert_many(&requests).await?;
    db.commands().clear();
    let mut workers = Vec::new();
    for _ in 0..20 {
        let odm = odm.clone();
        workers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(loan) = claim(&odm).await? {
                mine.push(loan);
            }
            Ok::<_, odm::Error>(mine)
        }));
    }
    let mut claimed = Vec::new();
    for w in workers {
        let mine = w.await.expect("worker")?;
        assert!(
            mine.windows(2).all(|w| w[0].priority >= w[1].priority),
            "a worker takes the highest priority first"
        );
        claimed.extend(mine);
    }
    assert_eq!(claimed.len(), 1000);
    let ids: BTreeSet<LoanId> = claimed.iter().map(|l| l.id.clone()).collect();
    assert_eq!(ids.len(), 1000, "no request claimed twice");
    assert_eq!(db.commands().count_of("findAndModify"), 1020);
    let all = stored(&db, "loans").await;
    assert!(all
        .iter()
        .all(|d| d.get_bool("pending").ok() == Some(true) && d.get_datetime("started").is_ok()));
    Ok(())
}

/// Approving is one update by `_id`; the requests pending for more than seven days go back to
/// the queue with one `update_many`, the others are left alone.
#[tokio::test]
async fn approve_and_time_out_after_seven_days() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let day = 24 * 3600 * 1000;
    let now = DateTime::now();
    let loan = |book: i32, days_ago: Option<i64>| Loan {
        id: LoanId {
            borrower: "bob".into(),
            book,
        },
        pending: days_ago.is_some(),
        approved: false,
        priority: 1,
        started: days_ago.map(|d| now.saturating_add_millis(-d * day)),
    };
    odm.insert_many(&[
        loan(1, Some(8)),
        loan(2, Some(6)),
        loan(3, Some(9)),
        loan(4, None),
    ])
    .await?;
    db.commands().clear();
    // ANCHOR: approve_timeout
    odm.update_by_id::<Loan>(
        LoanId {
            borrower: "bob".into(),
            book: 3,
        },
        Loan::pending().set(false).and(Loan::approved().set(true)),
    )
    .await?;
    let week_ago = DateTime::now().saturating_add_millis(-7 * 24 * 3600 * 1000);
    let timed_out = odm
        .update_many(
            Loan::pending().eq(true) & Loan::started().lt(Some(week_ago)),
            Loan::pending().set(false).and(Loan::approved().set(false)),
        )
        .await?;
    // ANCHOR_END: approve_timeout
    assert_eq!(sent(&db), vec!["update", "update"]);
    assert_eq!(timed_out.modified_count, 1);
    let states: Vec<(i32, bool, bool)> = stored(&db, "loans")
        .await
        .iter()
        .map(|d| {
            let id = d.get_document("_id").expect("_id");
            (
                id.get_i32("book").expect("book"),
                d.get_bool("pending").expect("pending"),
                d.get_bool("approved").expect("approved"),
            )
        })
        .collect();
    let mut states = states;
    states.sort();
    assert_eq!(
        states,
        vec![
            (1, false, false),
            (2, true, false),
            (3, false, true),
            (4, false, false)
        ]
    );
    // The timed-out request is back in the queue; the approved one is not.
    let next = claim(odm).await?.expect("two requests wait");
    assert!(matches!(next.id.book, 1 | 4));
    Ok(())
}

/// `.session(..)` runs the quota's commands in the caller's transaction: aborted, nothing
/// landed; committed, the unit is spent and the book listed.
#[tokio::test]
async fn a_quota_runs_in_the_callers_transaction() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&UserRecs {
        id: "bob".into(),
        remaining: 8,
        books: vec![3],
    })
    .await?;
    let quota = recommendations();
    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    assert_eq!(
        quota.take(odm, "bob", 4).session(&mut session).await?,
        Taken::Taken
    );
    assert_eq!(
        quota.take(odm, "bob", 4).session(&mut session).await?,
        Taken::AlreadyGiven,
        "the transaction's own write is seen by its find"
    );
    session.abort_transaction().await?;
    assert_eq!(
        stored_one(&db, "user_recs", "bob").await,
        Some(doc! { "_id": "bob", "remaining": 8, "books": [3] }),
        "aborted: nothing spent"
    );
    session.start_transaction().await?;
    assert!(!quota.give_back(odm, "bob", 4).session(&mut session).await?);
    assert_eq!(
        quota.take(odm, "bob", 4).session(&mut session).await?,
        Taken::Taken
    );
    session.commit_transaction().await?;
    assert_eq!(
        stored_one(&db, "user_recs", "bob").await,
        Some(doc! { "_id": "bob", "remaining": 7, "books": [3, 4] })
    );
    Ok(())
}
