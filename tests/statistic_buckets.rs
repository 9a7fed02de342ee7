//! Seed 004, exercise 7: the referring domains of each book, counted. Solution A keeps an
//! array of `{domain, count}` and increments with the positional `$`, adding a domain at most
//! once under concurrency; solution B keeps a map of domain -> count (`Keyed`), whose keys are
//! stored escaped and read back as they were.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{last_command, sent, stored};
use futures_util::future::try_join_all;
use odm::bson::{doc, Bson, Document};
use odm::keyed::escape_key;
use odm::keyed::Keyed;
use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Referrer {
    domain: String,
    count: i64,
}

/// Solution A: `{book: 1, referrers: [{domain: "google.com", count: 4}, ...]}`.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "book_refs")]
struct BookRefs {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    book: i64,
    #[embed(
        max = 600,
        allow_large = "every domain referring a book is counted in place; the test sends 500"
    )]
    referrers: Vec<Referrer>,
}

/// Solution A with room for two domains.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "short_refs")]
struct ShortRefs {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    book: i64,
    #[embed(max = 2)]
    referrers: Vec<Referrer>,
}

/// Solution B: `{book: 1, referrers: {"google%2Ecom": 5, "yahoo%2Ecom": 1}}`.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "book_ref_counts")]
struct BookRefCounts {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    book: i64,
    #[serde(default)]
    referrers: Keyed<HashMap<String, i64>>,
}

/// Solution B in key order.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "sorted_ref_counts")]
struct SortedRefCounts {
    #[serde(rename = "_id")]
    id: i64,
    referrers: Keyed<BTreeMap<String, i64>>,
}

/// One referral of `book` from `domain` (solution A): one `update` when the domain is listed,
/// two when it is new; see `record_b` for the map.
async fn record_a(odm: &Odm, book: i64, domain: &str) -> odm::Result<()> {
    let listed = BookRefs::book().eq(book) & BookRefs::referrers().domain().eq(domain);
    let unlisted = BookRefs::book().eq(book) & BookRefs::referrers().domain().ne(domain);
    loop {
        let bumped = odm
            .update_one(
                listed.clone(),
                BookRefs::referrers().matched().count().inc(1),
            )
            .await?;
        if bumped.matched_count == 1 {
            return Ok(());
        }
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
        // Another writer listed it meanwhile, or the book has no document yet.
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

/// One referral of `book` from `domain` (solution B): one upserting `update`; a second when a
/// concurrent upsert inserted the book's document first.
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

/// 500 domains, the hostile ones first: paths, operators, the escape sequence itself, the
/// empty key, a NUL byte, unicode.
fn domains() -> Vec<String> {
    let hostile = [
        "a.b",
        "$where",
        "..",
        ".",
        "$",
        "%",
        "%2E",
        "%25",
        "%zz",
        "",
        "a\0b",
        "日本.jp",
        "referrers.$[e0]",
        "google_com",
        "google.com",
    ];
    let mut all: Vec<String> = hostile.iter().map(|s| (*s).to_owned()).collect();
    let mut n = 0;
    while all.len() < 500 {
        all.push(format!("d{n}.example.com"));
        n += 1;
    }
    all
}

/// The referrals each of the 20 writers records, and the true count per domain.
fn referrals() -> (Vec<Vec<String>>, HashMap<String, i64>) {
    let domains = domains();
    let mut truth = HashMap::new();
    let writers = (0..20)
        .map(|w| {
            (0..150)
                .map(|i| {
                    // Every writer reaches the hostile keys; the rest spread over all 500.
                    let d = domains[(i * 7 + w * 13) % domains.len()].clone();
                    *truth.entry(d.clone()).or_insert(0) += 1;
                    d
                })
                .collect()
        })
        .collect();
    (writers, truth)
}

#[tokio::test]
async fn solution_a_increments_the_matched_element_in_one_update() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
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
    db.odm().insert_one(&seed).await?;
    sent(&db);
    record_a(db.odm(), 1, "google.com").await?;
    let update = last_command(&db, "update");
    assert_eq!(
        update.get_array("updates").unwrap()[0]
            .as_document()
            .unwrap()
            .get_document("q")
            .unwrap(),
        // `book & referrers.domain` as one document: some servers refuse the positional `$`
        // after a top-level `$and`.
        &doc! { "book": 1_i64, "referrers.domain": "google.com" }
    );
    record_a(db.odm(), 1, "google.com").await?;
    assert_eq!(sent(&db), ["update"]);
    // A new domain: the increment matches nothing, the guarded push adds it.
    record_a(db.odm(), 1, "bing.com").await?;
    assert_eq!(sent(&db), ["update", "update"]);
    let stored = stored(&db, "book_refs").await;
    assert_eq!(
        stored[0].get_array("referrers").unwrap(),
        &vec![
            Bson::Document(doc! { "domain": "google.com", "count": 6_i64 }),
            Bson::Document(doc! { "domain": "yahoo.com", "count": 1_i64 }),
            Bson::Document(doc! { "domain": "bing.com", "count": 1_i64 }),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn solution_a_creates_the_book_document_on_first_referral() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    sent(&db);
    record_a(db.odm(), 1, "google.com").await?;
    // Increment and push match nothing (the push's bound check tells "no room" from "no
    // document"), the empty document is inserted, the increment still finds no domain, and
    // the push adds it.
    assert_eq!(
        sent(&db),
        [
            "update",
            "update",
            "aggregate",
            "insert",
            "update",
            "update"
        ]
    );
    // A concurrent first referral finds the document there: the insert is refused.
    let err = db
        .odm()
        .insert_one(&BookRefs {
            id: ObjectId::new(),
            book: 1,
            referrers: Vec::new(),
        })
        .await
        .unwrap_err();
    assert!(err.is_duplicate_key(), "{err}");
    let stored = stored(&db, "book_refs").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(
        stored[0].get_array("referrers").unwrap(),
        &vec![Bson::Document(
            doc! { "domain": "google.com", "count": 1_i64 }
        )]
    );
    Ok(())
}

#[tokio::test]
async fn solution_a_a_full_array_takes_no_new_domain() -> odm::Result<()> {
    let db = common::db().await?;
    let full = ShortRefs {
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
    db.odm().insert_one(&full).await?;
    let unlisted = ShortRefs::book().eq(1) & ShortRefs::referrers().domain().ne("bing.com");
    let err = db
        .odm()
        .update_one(
            unlisted,
            ShortRefs::referrers().push(Referrer {
                domain: "bing.com".into(),
                count: 1,
            }),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::BoundExceeded { path, max: 2, .. } if path == "referrers"),
        "{err}"
    );
    // The listed domains still count.
    db.odm()
        .update_one(
            ShortRefs::book().eq(1) & ShortRefs::referrers().domain().eq("yahoo.com"),
            ShortRefs::referrers().matched().count().inc(1),
        )
        .await?;
    let stored = stored(&db, "short_refs").await;
    assert_eq!(
        stored[0].get_array("referrers").unwrap(),
        &vec![
            Bson::Document(doc! { "domain": "google.com", "count": 4_i64 }),
            Bson::Document(doc! { "domain": "yahoo.com", "count": 2_i64 }),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn solution_a_concurrent_writers_list_each_domain_once() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    let (writers, truth) = referrals();
    let odm = db.odm();
    try_join_all(writers.iter().map(|domains| async move {
        for d in domains {
            record_a(odm, 1, d).await?;
        }
        Ok::<(), odm::Error>(())
    }))
    .await?;
    let stored = stored(&db, "book_refs").await;
    assert_eq!(stored.len(), 1, "one document for the book");
    let listed: Vec<(String, i64)> = stored[0]
        .get_array("referrers")
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_document().unwrap();
            (
                r.get_str("domain").unwrap().to_owned(),
                r.get_i64("count").unwrap(),
            )
        })
        .collect();
    assert_eq!(listed.len(), truth.len(), "each domain listed once");
    let as_map: HashMap<String, i64> = listed.iter().cloned().collect();
    assert_eq!(as_map.len(), listed.len(), "no duplicate entry");
    assert_eq!(as_map, truth);
    assert_eq!(listed.iter().map(|(_, c)| c).sum::<i64>(), 20 * 150);
    // Read back through odm: the same domains.
    let book = db.odm().find_one(BookRefs::book().eq(1)).await?.unwrap();
    let read: HashMap<String, i64> = book
        .referrers
        .into_iter()
        .map(|r| (r.domain, r.count))
        .collect();
    assert_eq!(read, truth);
    Ok(())
}

#[tokio::test]
async fn solution_b_upserts_an_escaped_key() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    sent(&db);
    let update = BookRefCounts::referrers().key("bing.com").inc(1);
    assert_eq!(
        update.as_document(),
        &doc! { "$inc": { "referrers.bing%2Ecom": 1_i64 } }
    );
    for d in ["google.com", "google.com", "yahoo.com", "google.com"] {
        record_b(db.odm(), 1, d).await?;
    }
    assert_eq!(sent(&db), ["update", "update", "update", "update"]);
    let raw = stored(&db, "book_ref_counts").await;
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0].get_i64("book").unwrap(), 1);
    assert_eq!(
        raw[0].get_document("referrers").unwrap(),
        &doc! { "google%2Ecom": 3_i64, "yahoo%2Ecom": 1_i64 }
    );
    let book = db
        .odm()
        .find_one(BookRefCounts::referrers().key("google.com").gte(3))
        .await?
        .unwrap();
    assert_eq!(
        *book.referrers,
        HashMap::from([("google.com".to_owned(), 3), ("yahoo.com".to_owned(), 1)])
    );
    // `google_com`, the seed's spelling of `google.com`, is another key.
    record_b(db.odm(), 1, "google_com").await?;
    let book = db
        .odm()
        .find_one(BookRefCounts::book().eq(1))
        .await?
        .unwrap();
    assert_eq!(book.referrers["google.com"], 3);
    assert_eq!(book.referrers["google_com"], 1);
    Ok(())
}

#[tokio::test]
async fn solution_b_concurrent_writers_count_hostile_keys_exactly() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().sync_indexes().await?;
    let (writers, truth) = referrals();
    let odm = db.odm();
    try_join_all(writers.iter().map(|domains| async move {
        for d in domains {
            record_b(odm, 1, d).await?;
        }
        Ok::<(), odm::Error>(())
    }))
    .await?;
    let raw = stored(&db, "book_ref_counts").await;
    assert_eq!(raw.len(), 1, "one document for the book");
    // Raw: every stored key is the escaped original, a legal field name.
    let stored_keys: HashMap<String, i64> = raw[0]
        .get_document("referrers")
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
        .collect();
    let escaped: HashMap<String, i64> = truth.iter().map(|(k, v)| (escape_key(k), *v)).collect();
    assert_eq!(stored_keys, escaped);
    for key in stored_keys.keys() {
        assert!(!key.is_empty() && !key.contains('.') && !key.starts_with('$'));
    }
    // Through odm: the original keys, and the exact totals.
    let book = db
        .odm()
        .find_one(BookRefCounts::book().eq(1))
        .await?
        .unwrap();
    assert_eq!(book.referrers.0, truth);
    assert_eq!(book.referrers.values().sum::<i64>(), 20 * 150);
    for hostile in ["a.b", "$where", "", "%2E", "a\0b"] {
        let n = db
            .odm()
            .count(BookRefCounts::referrers().key(hostile).eq(truth[hostile]))
            .await?;
        assert_eq!(n, 1, "{hostile:?}");
    }
    Ok(())
}

#[tokio::test]
async fn whole_maps_are_escaped_on_every_write_and_unescaped_on_read() -> odm::Result<()> {
    let db = common::db().await?;
    let keys = ["a.b", "$where", "..", "", "%", "%2E", "日本.jp"];
    let map: BTreeMap<String, i64> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| ((*k).to_owned(), i as i64))
        .collect();
    let mut doc = SortedRefCounts {
        id: 1,
        referrers: Keyed(map.clone()),
    };
    db.odm().insert_one(&doc).await?;
    let raw = stored(&db, "sorted_ref_counts").await;
    let expected: Document = map
        .iter()
        .map(|(k, v)| (escape_key(k), Bson::Int64(*v)))
        .collect();
    assert_eq!(raw[0].get_document("referrers").unwrap(), &expected);
    assert_eq!(db.odm().get::<SortedRefCounts>(1).await?, Some(doc.clone()));
    // Replace and a typed `$set` of the whole map escape too.
    doc.referrers.insert("$inc".into(), 99);
    db.odm().replace_one(&doc).await?;
    assert_eq!(db.odm().get::<SortedRefCounts>(1).await?, Some(doc.clone()));
    let mut other = map.clone();
    other.insert("x.y.z".into(), 7);
    db.odm()
        .update_by_id::<SortedRefCounts>(1, SortedRefCounts::referrers().set(Keyed(other.clone())))
        .await?;
    let raw = stored(&db, "sorted_ref_counts").await;
    assert_eq!(
        raw[0]
            .get_document("referrers")
            .unwrap()
            .get_i64("x%2Ey%2Ez")
            .unwrap(),
        7
    );
    let read = db.odm().get::<SortedRefCounts>(1).await?.unwrap();
    assert_eq!(read.referrers.0, other);
    Ok(())
}

#[tokio::test]
async fn a_stored_key_no_key_escapes_to_is_a_decode_error() -> odm::Result<()> {
    let db = common::db().await?;
    db.raw()
        .collection::<Document>("sorted_ref_counts")
        .insert_one(doc! { "_id": 7_i64, "referrers": { "google_com": 1_i64, "bad%zz": 2_i64 } })
        .await
        .unwrap();
    let err = db.odm().get::<SortedRefCounts>(7).await.unwrap_err();
    match &err {
        odm::Error::Decode {
            collection,
            id,
            path,
            message,
        } => {
            assert_eq!(collection, "sorted_ref_counts");
            assert!(id.contains('7'), "{id}");
            assert_eq!(path, "referrers");
            assert!(message.contains("bad%zz"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn a_plain_map_with_a_dotted_key_is_refused() -> odm::Result<()> {
    #[derive(Model, Serialize, Deserialize, Debug)]
    #[odm(collection = "plain_counts")]
    struct PlainCounts {
        #[serde(rename = "_id")]
        id: i64,
        referrers: HashMap<String, i64>,
    }
    let db = common::db().await?;
    let doc = PlainCounts {
        id: 1,
        referrers: HashMap::from([("google.com".to_owned(), 1)]),
    };
    let err = db.odm().insert_one(&doc).await.unwrap_err();
    assert!(
        matches!(&err, odm::Error::InvalidKey { key, .. } if key == "google.com"),
        "{err}"
    );
    assert!(stored(&db, "plain_counts").await.is_empty());
    Ok(())
}
