//! Keyset pagination (`Find::page`) against a real server: one `find` per page in the typed
//! sort with `_id` breaking ties, descending and compound sorts, missing and `null` values in
//! MongoDB's order, stability while documents come and go, populate, and tokens that are
//! refused when altered or reused for another query.

mod common;

use std::collections::HashSet;

use futures_util::TryStreamExt;
use odm::bson::{doc, Bson, Document};
use odm::paging::{Page, PageToken};
use odm::prelude::*;
use odm::testing::TestDb;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "writers")]
struct Writer {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "volumes")]
struct Volume {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subtitle: Option<String>,
    year: i32,
    #[serde(default)]
    tags: Vec<String>,
    #[reference]
    writer: Ref<Writer>,
}

fn volume(id: i32, title: &str, year: i32) -> Volume {
    Volume {
        id,
        title: title.into(),
        subtitle: None,
        year,
        tags: Vec::new(),
        writer: Ref::new(id % 5),
    }
}

async fn writers(db: &TestDb) -> odm::Result<()> {
    let writers: Vec<Writer> = (0..5)
        .map(|id| Writer {
            id,
            name: format!("writer {id}"),
        })
        .collect();
    db.odm().insert_many(&writers).await?;
    Ok(())
}

/// The `_id`s of `volumes` in the order of `sort`, read with the raw driver.
async fn raw_order(db: &TestDb, filter: Document, sort: Document) -> Vec<i32> {
    let docs: Vec<Document> = db
        .raw()
        .collection::<Document>("volumes")
        .find(filter)
        .sort(sort)
        .await
        .expect("raw find")
        .try_collect()
        .await
        .expect("raw cursor");
    docs.iter()
        .map(|d| d.get_i32("_id").expect("an i32 _id"))
        .collect()
}

/// Every page of `find` (built anew for each page by `query`), `size` at a time; the commands
/// each page sent.
async fn all_pages<'a>(
    db: &'a TestDb,
    size: u32,
    query: impl Fn(&'a Odm) -> odm::ops::Find<'a, Volume>,
) -> odm::Result<(Vec<Vec<i32>>, Vec<Vec<String>>)> {
    let (mut pages, mut sent) = (Vec::new(), Vec::new());
    let mut after: Option<PageToken> = None;
    db.commands().clear();
    loop {
        let page: Page<Volume> = query(db.odm()).page(size).after(after.take()).await?;
        pages.push(page.items.iter().map(|v| v.id).collect());
        sent.push(common::sent(db));
        // The token's text is what a client keeps and sends back.
        match page.next {
            Some(t) => after = Some(PageToken::from(t.to_string())),
            None => return Ok((pages, sent)),
        }
    }
}

#[tokio::test]
async fn pages_follow_the_sort_with_one_find_each() -> odm::Result<()> {
    let db = common::db().await?;
    // Titles repeat, so that `_id` has ties to break, and the ids are not in title order.
    let volumes: Vec<Volume> = (0..25)
        .map(|i| volume((i * 7) % 25, &format!("title {}", i % 4), 1990))
        .collect();
    db.odm().insert_many(&volumes).await?;

    let (pages, sent) = all_pages(&db, 10, |odm| {
        odm.find(Filter::all()).sort(Volume::title().asc())
    })
    .await?;
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [10, 10, 5]);
    assert_eq!(
        pages.concat(),
        raw_order(&db, doc! {}, doc! {"title": 1, "_id": 1}).await
    );
    // One `find` per page, nothing else (no `getMore`, no `killCursors`).
    assert!(sent.iter().all(|s| s == &["find"]), "{sent:?}");

    // The command: the sort with `_id`, n + 1 in one batch, and after the first page the
    // last document's values, compared.
    db.commands().clear();
    let first = db
        .odm()
        .find(Filter::all())
        .sort(Volume::title().asc())
        .page(10)
        .await?;
    let last = first.items.last().expect("a full page");
    db.odm()
        .find(Filter::all())
        .sort(Volume::title().asc())
        .page(10)
        .after(first.next.clone())
        .await?;
    let find = common::last_command(&db, "find");
    assert_eq!(
        find.get_document("sort").ok(),
        Some(&doc! {"title": 1, "_id": 1})
    );
    assert_eq!(find.get_i64("limit").ok(), Some(11));
    // The driver sends one more than a batch size equal to the limit, so that the server
    // closes the cursor with the batch.
    assert_eq!(find.get_i32("batchSize").ok(), Some(12));
    assert_eq!(
        find.get_document("filter").ok(),
        Some(&doc! {"$or": [
            // After a string come the greater strings, then every bracket MongoDB sorts
            // after strings; after a number, the greater numbers, then strings and the rest.
            {"$or": [{"title": {"$gt": &last.title}}, {"title": {"$type": [
                "object", "array", "binData", "objectId", "bool", "date", "timestamp", "regex",
                "maxKey",
            ]}}]},
            {"$and": [{"title": &last.title}, {"$or": [{"_id": {"$gt": last.id}}, {"_id": {"$type": [
                "string", "symbol", "object", "array", "binData", "objectId", "bool", "date",
                "timestamp", "regex", "maxKey",
            ]}}]}]},
        ]})
    );
    Ok(())
}

#[tokio::test]
async fn descending_and_compound_sorts_page_in_mongodb_s_order() -> odm::Result<()> {
    let db = common::db().await?;
    let volumes: Vec<Volume> = (0..40)
        .map(|i| volume(i, &format!("t{}", (i * 3) % 5), 1990 + (i * 11) % 4))
        .collect();
    db.odm().insert_many(&volumes).await?;
    let filter = Volume::year().gte(1991);

    let (pages, _) = all_pages(&db, 4, |odm| {
        odm.find(filter.clone())
            .sort(Volume::year().desc().then(Volume::title().asc()))
    })
    .await?;
    assert_eq!(
        pages.concat(),
        raw_order(
            &db,
            doc! {"year": {"$gte": 1991}},
            doc! {"year": -1, "title": 1, "_id": 1}
        )
        .await
    );
    let (pages, _) = all_pages(&db, 3, |odm| {
        odm.find(Filter::all())
            .sort(Volume::title().desc().then(Volume::id().desc()))
    })
    .await?;
    assert_eq!(
        pages.concat(),
        raw_order(&db, doc! {}, doc! {"title": -1, "_id": -1}).await
    );
    Ok(())
}

#[tokio::test]
async fn missing_and_null_values_order_as_mongodb_orders_them() -> odm::Result<()> {
    let db = common::db().await?;
    let coll = db.raw().collection::<Document>("volumes");
    for i in 0..24 {
        let mut d = doc! {"_id": i, "title": "t", "year": 2000, "tags": [], "writer": 0};
        match i % 3 {
            0 => {}                                                 // missing
            1 => drop(d.insert("subtitle", Bson::Null)),            // null
            _ => drop(d.insert("subtitle", format!("s{}", i % 4))), // a value
        }
        coll.insert_one(d).await?;
    }
    for (sort, raw) in [
        (Volume::subtitle().asc(), doc! {"subtitle": 1, "_id": 1}),
        (Volume::subtitle().desc(), doc! {"subtitle": -1, "_id": 1}),
    ] {
        for size in [1, 2, 5] {
            let (pages, _) =
                all_pages(&db, size, |odm| odm.find(Filter::all()).sort(sort.clone())).await?;
            let ids = pages.concat();
            assert_eq!(
                ids,
                raw_order(&db, doc! {}, raw.clone()).await,
                "{raw} by {size}"
            );
            assert_eq!(ids.len(), 24);
        }
    }
    Ok(())
}

/// A small deterministic generator, so that the interleaving is the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

#[tokio::test]
async fn paging_while_documents_come_and_go_repeats_none_and_skips_none() -> odm::Result<()> {
    let db = common::db().await?;
    let title = |n: u64| format!("title {:03}", n);
    let mut rng = Lcg(7);
    let volumes: Vec<Volume> = (0..150)
        .map(|i| volume(i, &title(rng.next(100)), 2000))
        .collect();
    db.odm().insert_many(&volumes).await?;
    // Those with an id divisible by 3 may be deleted meanwhile; the others exist throughout.
    let throughout: HashSet<i32> = (0..150).filter(|i| i % 3 != 0).collect();
    let mut deletable: Vec<i32> = (0..150).filter(|i| i % 3 == 0).collect();
    let raw = db.raw().collection::<Document>("volumes");

    let mut seen = Vec::new();
    let mut after: Option<PageToken> = None;
    let mut next_id = 1_000;
    for _ in 0..1_000 {
        let page = db
            .odm()
            .find(Filter::all())
            .sort(Volume::title().asc())
            .page(7)
            .after(after.take())
            .await?;
        seen.extend(page.items.iter().map(|v| v.id));
        let Some(next) = page.next else { break };
        after = Some(next);
        // Between pages: new documents anywhere in the order (before and after the page
        // reached), some of them deleted again, and some of the deletable originals deleted.
        for _ in 0..4 {
            raw.insert_one(doc! {
                "_id": next_id, "title": title(rng.next(100)), "year": 2000, "tags": [],
                "writer": 0,
            })
            .await?;
            deletable.push(next_id);
            next_id += 1;
        }
        for _ in 0..3 {
            if deletable.is_empty() {
                break;
            }
            let id = deletable.swap_remove(rng.next(deletable.len() as u64) as usize);
            raw.delete_one(doc! {"_id": id}).await?;
        }
    }
    let distinct: HashSet<i32> = seen.iter().copied().collect();
    assert_eq!(distinct.len(), seen.len(), "a document came twice");
    let missed: Vec<_> = throughout.difference(&distinct).collect();
    assert!(missed.is_empty(), "skipped {missed:?}");
    Ok(())
}

#[tokio::test]
async fn each_page_is_populated_with_one_in_per_relation() -> odm::Result<()> {
    let db = common::db().await?;
    writers(&db).await?;
    let volumes: Vec<Volume> = (0..23).map(|i| volume(i, "t", 2000)).collect();
    db.odm().insert_many(&volumes).await?;

    let (pages, sent) = all_pages(&db, 10, |odm| {
        odm.find(Filter::all())
            .sort(Volume::year().asc())
            .populate(Volume::writer())
    })
    .await?;
    assert_eq!(pages.concat(), (0..23).collect::<Vec<_>>());
    assert!(sent.iter().all(|s| s == &["find", "find"]), "{sent:?}");
    let page = db
        .odm()
        .find(Filter::all())
        .populate(Volume::writer())
        .page(10)
        .await?;
    for v in &page.items {
        assert_eq!(v.writer.loaded()?.name, format!("writer {}", v.id % 5));
    }
    Ok(())
}

fn refused(result: odm::Result<Page<Volume>>) -> &'static str {
    match result {
        Err(odm::Error::InvalidPageToken { collection, reason }) => {
            assert_eq!(collection, "volumes");
            reason
        }
        Err(e) => panic!("another error: {e}"),
        Ok(p) => panic!("a page: {p:?}"),
    }
}

#[tokio::test]
async fn hostile_tokens_are_refused_before_anything_is_sent() -> odm::Result<()> {
    let db = common::db().await?;
    // Titles a careless implementation would read as operators or paths.
    let titles = ["$where", "$gt", "{$ne: null}", "a.b", "$", "", "\u{0}x"];
    let volumes: Vec<Volume> = (0..14)
        .map(|i| volume(i, titles[i as usize % titles.len()], 2000))
        .collect();
    db.odm().insert_many(&volumes).await?;
    fn by_title(odm: &Odm) -> odm::ops::Find<'_, Volume> {
        odm.find(Filter::all()).sort(Volume::title().asc())
    }
    let first = by_title(db.odm()).page(3).await?;
    let token = first.next.clone().expect("a next page");

    // Those titles page like any other: values are compared, never read as operators.
    let (pages, _) = all_pages(&db, 3, |odm| by_title(odm)).await?;
    assert_eq!(
        pages.concat(),
        raw_order(&db, doc! {}, doc! {"title": 1, "_id": 1}).await
    );

    db.commands().clear();
    // Altered: every single character changed in turn.
    let text = token.to_string();
    for i in 0..text.len() {
        let mut bytes = text.clone().into_bytes();
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        let altered = PageToken::from(String::from_utf8(bytes).expect("ascii"));
        let reason = refused(by_title(db.odm()).page(3).after(altered).await);
        assert!(
            [
                "altered, or sealed with another page key",
                "not a page token"
            ]
            .contains(&reason),
            "{reason}"
        );
    }
    // Cut short, lengthened, not a token at all.
    for garbage in [
        text[..text.len() - 4].to_owned(),
        format!("{text}AAAA"),
        String::new(),
        "{\"$gt\": \"\"}".to_owned(),
        "$where".to_owned(),
        "A".repeat(100_000),
    ] {
        let reason = refused(
            by_title(db.odm())
                .page(3)
                .after(PageToken::from(garbage))
                .await,
        );
        assert!(
            [
                "altered, or sealed with another page key",
                "not a page token"
            ]
            .contains(&reason),
            "{reason}"
        );
    }
    // Another sort, another filter, another collection.
    let other_sort = db
        .odm()
        .find::<Volume>(Filter::all())
        .sort(Volume::title().desc())
        .page(3)
        .after(token.clone())
        .await;
    let other_filter = db
        .odm()
        .find(Volume::year().eq(2000))
        .sort(Volume::title().asc())
        .page(3)
        .after(token.clone())
        .await;
    for r in [other_sort, other_filter] {
        assert_eq!(refused(r), "issued for another collection, filter or sort");
    }
    let writer_token = {
        writers(&db).await?;
        db.odm()
            .find::<Writer>(Filter::all())
            .page(1)
            .await?
            .next
            .expect("a next page")
    };
    db.commands().clear();
    let reason = refused(
        db.odm()
            .find(Filter::all())
            .page(1)
            .after(writer_token)
            .await,
    );
    assert_eq!(reason, "issued for another collection, filter or sort");
    // Sealed with another key.
    let keyed = db
        .odm()
        .clone()
        .with_page_key(b"0123456789abcdef0123456789abcdef");
    let reason = refused(by_title(&keyed).page(3).after(token.clone()).await);
    assert_eq!(reason, "altered, or sealed with another page key");
    let own = by_title(&keyed).page(3).await?.next;
    refused(by_title(db.odm()).page(3).after(own.clone()).await);
    assert_eq!(by_title(&keyed).page(3).after(own).await?.items.len(), 3);

    // Nothing was sent for any refused token.
    let sent = common::sent(&db);
    assert_eq!(sent, ["find", "find"], "only the keyed handle's own pages");
    Ok(())
}

#[tokio::test]
async fn a_sort_key_holding_an_array_is_refused() -> odm::Result<()> {
    let db = common::db().await?;
    let mut volumes: Vec<Volume> = (0..4).map(|i| volume(i, "t", 2000)).collect();
    volumes[1].tags = vec!["b".into(), "a".into()];
    db.odm().insert_many(&volumes).await?;
    let err = db
        .odm()
        .find(Filter::all())
        .sort(Volume::tags().asc())
        .page(2)
        .await
        .expect_err("an array at the page's end");
    match err {
        odm::Error::Decode {
            collection,
            id,
            path,
            ..
        } => {
            // Every volume stores `tags` as an array, the empty ones too.
            assert_eq!((collection.as_str(), path.as_str()), ("volumes", "tags"));
            assert!(id.starts_with("{ _id: "), "{id}");
        }
        e => panic!("{e}"),
    }
    Ok(())
}

#[tokio::test]
async fn a_projection_keeps_the_sort_fields() -> odm::Result<()> {
    let db = common::db().await?;
    let volumes: Vec<Volume> = (0..6)
        .map(|i| volume(i, &format!("t{}", 5 - i), 2000))
        .collect();
    db.odm().insert_many(&volumes).await?;
    fn by_title(odm: &Odm) -> odm::ops::Find<'_, Volume> {
        odm.find(Filter::all())
            .sort(Volume::title().asc())
            .projection(odm::Projection::exclude(&Volume::title()))
    }
    let first = by_title(db.odm()).page(2).await?;
    assert_eq!(first.items.iter().map(|v| v.id).collect::<Vec<_>>(), [5, 4]);
    let second = by_title(db.odm()).page(2).after(first.next).await?;
    assert_eq!(
        second.items.iter().map(|v| v.id).collect::<Vec<_>>(),
        [3, 2]
    );
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "readings")]
struct Reading {
    #[serde(rename = "_id")]
    id: i32,
    /// Any BSON value, as a collection written by other programs may hold.
    #[serde(default)]
    value: Bson,
}

/// Every page of `Reading`s sorted by `value` (`size` at a time), and the order the raw driver
/// reads them in.
async fn readings_in_pages(db: &TestDb, ascending: bool, size: u32) -> (Vec<i32>, Vec<i32>) {
    let sort = if ascending {
        Reading::value().asc()
    } else {
        Reading::value().desc()
    };
    let mut ids = Vec::new();
    let mut after: Option<PageToken> = None;
    loop {
        let page: Page<Reading> = db
            .odm()
            .find(Filter::all())
            .sort(sort.clone())
            .page(size)
            .after(after.take())
            .await
            .expect("a page");
        ids.extend(page.items.iter().map(|r| r.id));
        assert!(ids.len() <= 100, "pages never end: {ids:?}");
        match page.next {
            Some(t) => after = Some(t),
            None => break,
        }
    }
    let raw: Vec<Document> = db
        .raw()
        .collection::<Document>("readings")
        .find(doc! {})
        .sort(doc! { "value": if ascending { 1 } else { -1 }, "_id": 1 })
        .await
        .expect("raw find")
        .try_collect()
        .await
        .expect("raw cursor");
    let order = raw
        .iter()
        .map(|d| d.get_i32("_id").expect("an i32 _id"))
        .collect();
    (ids, order)
}

#[tokio::test]
async fn values_of_every_type_and_nan_page_in_mongodb_s_order() -> odm::Result<()> {
    let db = common::db().await?;
    let values = [
        Bson::Double(f64::NAN),
        Bson::Double(1.0),
        Bson::from("a"),
        Bson::Int32(5),
        Bson::from("b"),
        Bson::Boolean(true),
        Bson::Double(f64::NAN),
        Bson::Null,
        Bson::Int64(-3),
        Bson::Document(doc! { "$gt": 1 }),
        Bson::DateTime(odm::bson::DateTime::from_millis(0)),
        Bson::Boolean(false),
        Bson::Double(f64::NEG_INFINITY),
        Bson::ObjectId(odm::bson::oid::ObjectId::from_bytes([7; 12])),
        Bson::Double(2.5),
        Bson::from("a"),
    ];
    let coll = db.raw().collection::<Document>("readings");
    for (id, value) in values.iter().enumerate() {
        coll.insert_one(doc! { "_id": id as i32, "value": value.clone() })
            .await?;
    }
    // And one without the field, which sorts with `null`.
    coll.insert_one(doc! { "_id": 99 }).await?;
    for ascending in [true, false] {
        for size in [1, 2, 3, 17] {
            let (ids, order) = readings_in_pages(&db, ascending, size).await;
            assert_eq!(ids, order, "ascending {ascending}, {size} a page");
            assert_eq!(ids.len(), values.len() + 1);
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_projection_leaving_out_id_keeps_the_tie_breaker() -> odm::Result<()> {
    let db = common::db().await?;
    let volumes: Vec<Volume> = (0..5).map(|i| volume(i, "same", 2000)).collect();
    db.odm().insert_many(&volumes).await?;
    let (pages, sent) = all_pages(&db, 2, |odm| {
        odm.find(Filter::all())
            .sort(Volume::title().asc())
            .projection(
                odm::Projection::include(&Volume::title())
                    .and(&Volume::year())
                    .and(&Volume::writer())
                    .and_not(&Volume::id_field()),
            )
    })
    .await?;
    assert_eq!(pages, [vec![0, 1], vec![2, 3], vec![4]]);
    assert!(
        sent.iter().all(|s| s.len() == 1),
        "one find a page: {sent:?}"
    );
    Ok(())
}
