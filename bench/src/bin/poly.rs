//! Poly: (1) 1,000 feed entries whose subject is a polymorphic reference (a DBRef to a book, an
//! author or a user; 2,000 targets), three ways, in one run on one server: (a) odm populate,
//! (b) hand-written driver code doing the same job (`find` the entries, group the DBRef ids by
//! `$ref`, one `find({_id: {$in: ids}})` per collection, concurrently, stitch), (c) one
//! `find_one` per entry; and the entries' decode alone, the DBRef into the `PolyRef` enum
//! against a plain struct. (2) 10,000 books of three kinds in one collection (single-collection
//! inheritance), read by odm into the enum of kinds against the driver decoding the same
//! documents into a hand-written internally tagged serde enum; then the decode alone, from the
//! same in-memory documents, so that the server's time does not hide the ratio.
//!
//! `cargo xtask bench poly` runs it (release build).

use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use odm::bson::{doc, oid::ObjectId, RawDocumentBuf};
use odm::prelude::*;
use odm_bench::{median, show, show_commands, Bench, Lcg};

const BOOKS: usize = 700;
const AUTHORS: usize = 700;
const USERS: usize = 600;
const ENTRIES: usize = 1_000;
const SHELF: usize = 10_000;

/// The feed: entries about books, authors or users.
mod feed {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(collection = "books")]
    pub struct Book {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub title: String,
        pub isbn: String,
        pub pages: i32,
        pub price: f64,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(collection = "authors")]
    pub struct Author {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub name: String,
        pub born: i32,
        pub bio: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(collection = "users")]
    pub struct User {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub username: String,
        pub email: String,
        pub joined: i64,
    }

    /// What an entry is about.
    #[derive(PolyRef, Debug, Clone)]
    pub enum Subject {
        Book(Ref<Book>),
        Author(Ref<Author>),
        User(Ref<User>),
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(collection = "feed")]
    pub struct FeedEntry {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub verb: String,
        pub at: i64,
        #[reference(poly)]
        pub subject: Subject,
    }
}

/// What hand-written code decodes: the same fields, the DBRef as a plain serde struct.
mod hand {
    use odm::bson::oid::ObjectId;
    use odm::serde::Deserialize;

    #[derive(Deserialize, Debug)]
    pub struct DbRef {
        #[serde(rename = "$ref")]
        pub collection: String,
        #[serde(rename = "$id")]
        pub id: ObjectId,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    pub struct FeedEntry {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub verb: String,
        pub at: i64,
        pub subject: DbRef,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    pub struct Book {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub title: String,
        pub isbn: String,
        pub pages: i32,
        pub price: f64,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    pub struct Author {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub name: String,
        pub born: i32,
        pub bio: String,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    pub struct User {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub username: String,
        pub email: String,
        pub joined: i64,
    }

    /// A loaded subject.
    #[derive(Debug)]
    pub enum Subject {
        Book(std::sync::Arc<Book>),
        Author(std::sync::Arc<Author>),
        User(std::sync::Arc<User>),
    }

    /// The seed's books of several kinds, as a plain internally tagged serde enum.
    #[derive(Deserialize, Debug)]
    #[serde(tag = "type", rename_all = "snake_case")]
    #[allow(dead_code)]
    pub enum ShelfBook {
        Single(SingleBook),
        Series(SeriesBook),
        Audio(AudioBook),
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    pub struct SingleBook {
        #[serde(rename = "_id")]
        pub id: i64,
        pub title: String,
        pub author: String,
        pub tags: Vec<String>,
        pub pages: i32,
        pub isbn: String,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    pub struct SeriesBook {
        #[serde(rename = "_id")]
        pub id: i64,
        pub title: String,
        pub author: String,
        pub tags: Vec<String>,
        pub pages: i32,
        pub series_title: String,
        pub volume: i32,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    pub struct AudioBook {
        #[serde(rename = "_id")]
        pub id: i64,
        pub title: String,
        pub author: String,
        pub tags: Vec<String>,
        pub narrator: String,
        pub minutes: i32,
    }
}

/// The seed's books of several kinds in one collection.
mod shelf {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(collection = "shelf", common = "title, author, tags")]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum Book {
        Single(SingleBook),
        Series(SeriesBook),
        Audio(AudioBook),
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(kind_of = "Book")]
    pub struct SingleBook {
        #[serde(rename = "_id")]
        pub id: i64,
        pub title: String,
        pub author: String,
        pub tags: Vec<String>,
        pub pages: i32,
        pub isbn: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(kind_of = "Book")]
    pub struct SeriesBook {
        #[serde(rename = "_id")]
        pub id: i64,
        pub title: String,
        pub author: String,
        pub tags: Vec<String>,
        pub pages: i32,
        pub series_title: String,
        pub volume: i32,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone)]
    #[odm(kind_of = "Book")]
    pub struct AudioBook {
        #[serde(rename = "_id")]
        pub id: i64,
        pub title: String,
        pub author: String,
        pub tags: Vec<String>,
        pub narrator: String,
        pub minutes: i32,
    }
}

use feed::{Author, Book, FeedEntry, Subject, User};

async fn seed_feed(bench: &Bench) -> odm::Result<()> {
    let mut rng = Lcg(11);
    let books: Vec<Book> = (0..BOOKS)
        .map(|i| Book {
            id: ObjectId::new(),
            title: format!("The Wizard Chase, part {i}"),
            isbn: format!("978{:010}", 1_857_150_193 + i),
            pages: 100 + rng.below(600) as i32,
            price: 4.99 + rng.below(20) as f64,
        })
        .collect();
    let authors: Vec<Author> = (0..AUTHORS)
        .map(|i| Author {
            id: ObjectId::new(),
            name: format!("Author #{i}"),
            born: 1900 + rng.below(100) as i32,
            bio: "Wrote some books about wizards, and a few about the sea.".into(),
        })
        .collect();
    let users: Vec<User> = (0..USERS)
        .map(|i| User {
            id: ObjectId::new(),
            username: format!("reader{i}"),
            email: format!("reader{i}@example.com"),
            joined: 1_600_000_000 + rng.below(100_000_000) as i64,
        })
        .collect();
    let verbs = ["liked", "reviewed", "followed", "shared"];
    let entries: Vec<FeedEntry> = (0..ENTRIES)
        .map(|i| {
            let pick = rng.below((BOOKS + AUTHORS + USERS) as u64) as usize;
            let subject = if pick < BOOKS {
                Subject::Book(Ref::new(books[pick].id))
            } else if pick < BOOKS + AUTHORS {
                Subject::Author(Ref::new(authors[pick - BOOKS].id))
            } else {
                Subject::User(Ref::new(users[pick - BOOKS - AUTHORS].id))
            };
            FeedEntry {
                id: ObjectId::new(),
                verb: verbs[i % verbs.len()].into(),
                at: 1_700_000_000 + i as i64,
                subject,
            }
        })
        .collect();
    bench.odm.insert_many(&books).await?;
    bench.odm.insert_many(&authors).await?;
    bench.odm.insert_many(&users).await?;
    bench.odm.insert_many(&entries).await?;
    Ok(())
}

/// What was loaded, comparable between the ways: (entry, collection, target, its label).
type Summary = Vec<(ObjectId, &'static str, ObjectId, String)>;

fn summary_of_odm(feed: &[FeedEntry]) -> odm::Result<Summary> {
    let mut out = Vec::with_capacity(feed.len());
    for e in feed {
        out.push(match &e.subject {
            Subject::Book(r) => (e.id, "books", *r.id(), r.loaded()?.title.clone()),
            Subject::Author(r) => (e.id, "authors", *r.id(), r.loaded()?.name.clone()),
            Subject::User(r) => (e.id, "users", *r.id(), r.loaded()?.username.clone()),
        });
    }
    out.sort();
    Ok(out)
}

fn summary_of_hand(feed: &[(hand::FeedEntry, hand::Subject)]) -> Summary {
    let mut out: Summary = feed
        .iter()
        .map(|(e, s)| match s {
            hand::Subject::Book(b) => (e.id, "books", b.id, b.title.clone()),
            hand::Subject::Author(a) => (e.id, "authors", a.id, a.name.clone()),
            hand::Subject::User(u) => (e.id, "users", u.id, u.username.clone()),
        })
        .collect();
    out.sort();
    out
}

/// (a) odm.
async fn odm_populate(bench: &Bench) -> odm::Result<Vec<FeedEntry>> {
    bench
        .odm
        .find::<FeedEntry>(Filter::all())
        .populate(FeedEntry::subject())
        .await
}

/// One `{_id: {$in: ids}}` find on `collection` (none for no ids), by id.
async fn load<T>(bench: &Bench, collection: &str, ids: Vec<ObjectId>) -> odm::Result<Vec<T>>
where
    T: odm::serde::de::DeserializeOwned + Send + Sync,
{
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(bench
        .db
        .collection::<T>(collection)
        .find(doc! { "_id": { "$in": ids } })
        .await?
        .try_collect()
        .await?)
}

fn by_id<T>(docs: Vec<T>, id: impl Fn(&T) -> ObjectId) -> HashMap<ObjectId, Arc<T>> {
    docs.into_iter().map(|d| (id(&d), Arc::new(d))).collect()
}

/// (b) The same job written by hand with the driver.
async fn hand_written(bench: &Bench) -> odm::Result<Vec<(hand::FeedEntry, hand::Subject)>> {
    let entries: Vec<hand::FeedEntry> = bench
        .db
        .collection::<hand::FeedEntry>("feed")
        .find(doc! {})
        .await?
        .try_collect()
        .await?;
    // The distinct ids of each collection, in first-seen order.
    let mut seen = HashSet::new();
    let (mut books, mut authors, mut users) = (Vec::new(), Vec::new(), Vec::new());
    for e in &entries {
        let r = &e.subject;
        if !seen.insert((r.collection.as_str(), r.id)) {
            continue;
        }
        match r.collection.as_str() {
            "books" => books.push(r.id),
            "authors" => authors.push(r.id),
            "users" => users.push(r.id),
            other => return Err(odm::Error::Unsupported(format!("a DBRef to `{other}`"))),
        }
    }
    let (books, authors, users) = futures_util::future::try_join3(
        load::<hand::Book>(bench, "books", books),
        load::<hand::Author>(bench, "authors", authors),
        load::<hand::User>(bench, "users", users),
    )
    .await?;
    let books = by_id(books, |b| b.id);
    let authors = by_id(authors, |a| a.id);
    let users = by_id(users, |u| u.id);
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let r = &e.subject;
        let loaded = match r.collection.as_str() {
            "books" => books.get(&r.id).cloned().map(hand::Subject::Book),
            "authors" => authors.get(&r.id).cloned().map(hand::Subject::Author),
            _ => users.get(&r.id).cloned().map(hand::Subject::User),
        };
        match loaded {
            Some(s) => out.push((e, s)),
            None => {
                return Err(odm::Error::Unsupported(format!(
                    "dangling DBRef to `{}` {}",
                    r.collection, r.id
                )))
            }
        }
    }
    Ok(out)
}

/// (c) One `find_one` per entry's reference.
async fn naive(bench: &Bench) -> odm::Result<Vec<(hand::FeedEntry, hand::Subject)>> {
    let entries: Vec<hand::FeedEntry> = bench
        .db
        .collection::<hand::FeedEntry>("feed")
        .find(doc! {})
        .await?
        .try_collect()
        .await?;
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let filter = doc! { "_id": e.subject.id };
        let coll = e.subject.collection.as_str();
        let loaded = match coll {
            "books" => bench
                .db
                .collection::<hand::Book>(coll)
                .find_one(filter)
                .await?
                .map(|d| hand::Subject::Book(Arc::new(d))),
            "authors" => bench
                .db
                .collection::<hand::Author>(coll)
                .find_one(filter)
                .await?
                .map(|d| hand::Subject::Author(Arc::new(d))),
            _ => bench
                .db
                .collection::<hand::User>(coll)
                .find_one(filter)
                .await?
                .map(|d| hand::Subject::User(Arc::new(d))),
        };
        if let Some(s) = loaded {
            out.push((e, s));
        }
    }
    Ok(out)
}

fn line(name: &str, d: Duration, commands: &[String]) {
    println!(
        "  {name:<36} {:>10}   commands: {}",
        show(d),
        show_commands(commands)
    );
}

fn ratio(x: Duration, y: Duration) -> f64 {
    x.as_secs_f64() / y.as_secs_f64()
}

async fn poly_populate(bench: &Bench, runs: usize, naive_runs: usize) -> odm::Result<()> {
    // Correctness, once: every subject loaded, the same by every way.
    let expected = summary_of_odm(&odm_populate(bench).await?)?;
    assert_eq!(expected.len(), ENTRIES);
    assert_eq!(summary_of_hand(&hand_written(bench).await?), expected);
    assert_eq!(summary_of_hand(&naive(bench).await?), expected);
    let distinct: HashSet<(&str, ObjectId)> = expected.iter().map(|s| (s.1, s.2)).collect();
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    let (mut a_cmds, mut b_cmds, mut c_cmds) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        let (t, cmds, out) = bench.measure(|| odm_populate(bench)).await;
        assert_eq!(black_box(out?).len(), ENTRIES);
        a.push(t);
        a_cmds = cmds;
        let (t, cmds, out) = bench.measure(|| hand_written(bench)).await;
        assert_eq!(black_box(out?).len(), ENTRIES);
        b.push(t);
        b_cmds = cmds;
    }
    for _ in 0..naive_runs {
        let (t, cmds, out) = bench.measure(|| naive(bench)).await;
        assert_eq!(black_box(out?).len(), ENTRIES);
        c.push(t);
        c_cmds = cmds;
    }
    let (a, b, c) = (median(a), median(b), median(c));
    println!();
    println!(
        "populate {ENTRIES} feed entries x 1 polymorphic reference ({} distinct of {} books, {} authors, {} users); medians of {runs} runs ((c): {naive_runs})",
        distinct.len(),
        BOOKS,
        AUTHORS,
        USERS
    );
    line("(a) odm populate", a, &a_cmds);
    line("(b) hand-written $in per collection", b, &b_cmds);
    line("(c) find_one per reference", c, &c_cmds);
    println!(
        "  a/b = {:.3} (target <= 1.05)    c/a = {:.0} (target >= 20)",
        ratio(a, b),
        ratio(c, a)
    );
    Ok(())
}

async fn seed_shelf(bench: &Bench) -> odm::Result<()> {
    use shelf::{AudioBook, Book, SeriesBook, SingleBook};
    let mut rng = Lcg(5);
    let tags = ["fantasy", "classic", "sea", "wizards", "crime", "poetry"];
    let books: Vec<Book> = (0..SHELF as i64)
        .map(|id| {
            let title = format!("The Wizard Chase, edition {id}");
            let author = format!("Author #{}", rng.below(700));
            let tags: Vec<String> = (0..1 + rng.below(3))
                .map(|_| tags[rng.below(tags.len() as u64) as usize].to_owned())
                .collect();
            match rng.below(10) {
                0..=4 => Book::Single(SingleBook {
                    id,
                    title,
                    author,
                    tags,
                    pages: 100 + rng.below(600) as i32,
                    isbn: format!("978{:010}", 1_857_150_193 + id),
                }),
                5..=7 => Book::Series(SeriesBook {
                    id,
                    title,
                    author,
                    tags,
                    pages: 100 + rng.below(600) as i32,
                    series_title: format!("The Wizard's Trilogy #{}", id % 97),
                    volume: 1 + rng.below(7) as i32,
                }),
                _ => Book::Audio(AudioBook {
                    id,
                    title,
                    author,
                    tags,
                    narrator: format!("Narrator #{}", rng.below(50)),
                    minutes: 120 + rng.below(900) as i32,
                }),
            }
        })
        .collect();
    bench.odm.insert_many(&books).await?;
    Ok(())
}

/// (single, series, audio) counts.
fn kinds_of_odm(books: &[shelf::Book]) -> (usize, usize, usize) {
    books.iter().fold((0, 0, 0), |(s, r, a), b| match b {
        shelf::Book::Single(_) => (s + 1, r, a),
        shelf::Book::Series(_) => (s, r + 1, a),
        shelf::Book::Audio(_) => (s, r, a + 1),
    })
}

fn kinds_of_hand(books: &[hand::ShelfBook]) -> (usize, usize, usize) {
    books.iter().fold((0, 0, 0), |(s, r, a), b| match b {
        hand::ShelfBook::Single(_) => (s + 1, r, a),
        hand::ShelfBook::Series(_) => (s, r + 1, a),
        hand::ShelfBook::Audio(_) => (s, r, a + 1),
    })
}

async fn odm_shelf(bench: &Bench) -> odm::Result<Vec<shelf::Book>> {
    bench.odm.find::<shelf::Book>(Filter::all()).await
}

async fn hand_shelf(bench: &Bench) -> odm::Result<Vec<hand::ShelfBook>> {
    Ok(bench
        .db
        .collection::<hand::ShelfBook>("shelf")
        .find(doc! {})
        .await?
        .try_collect()
        .await?)
}

async fn mixed_decode(bench: &Bench, runs: usize) -> odm::Result<()> {
    let kinds = kinds_of_odm(&odm_shelf(bench).await?);
    assert_eq!(kinds.0 + kinds.1 + kinds.2, SHELF);
    assert_eq!(kinds_of_hand(&hand_shelf(bench).await?), kinds);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut a_cmds, mut b_cmds) = (vec![], vec![]);
    for _ in 0..runs {
        let (t, cmds, out) = bench.measure(|| odm_shelf(bench)).await;
        assert_eq!(black_box(out?).len(), SHELF);
        a.push(t);
        a_cmds = cmds;
        let (t, cmds, out) = bench.measure(|| hand_shelf(bench)).await;
        assert_eq!(black_box(out?).len(), SHELF);
        b.push(t);
        b_cmds = cmds;
    }
    let (a, b) = (median(a), median(b));
    println!();
    println!(
        "read {SHELF} books of 3 kinds from one collection ({} single, {} series, {} audio); medians of {runs} runs",
        kinds.0, kinds.1, kinds.2
    );
    line("(a) odm find::<Book> (enum of kinds)", a, &a_cmds);
    line("(b) driver find, hand serde enum", b, &b_cmds);
    println!("  a/b = {:.3} (target <= 1.05)", ratio(a, b));

    // The decode alone, from the same bytes.
    let raw: Vec<RawDocumentBuf> = bench
        .db
        .collection::<RawDocumentBuf>("shelf")
        .find(doc! {})
        .await?
        .try_collect()
        .await?;
    let (a, b) = decode_alone::<shelf::Book, hand::ShelfBook>(&raw, runs);
    println!(
        "  decode alone, the same {SHELF} documents from memory (bson::deserialize_from_slice):"
    );
    println!("    {:<34} {:>10}", "(a) odm's enum of kinds", show(a));
    println!("    {:<34} {:>10}", "(b) hand serde enum", show(b));
    println!("    a/b = {:.3} (target <= 1.05)", ratio(a, b));
    Ok(())
}

/// Medians of decoding every document of `raw` into `A`, then into `B`, `runs` times,
/// interleaved.
fn decode_alone<A, B>(raw: &[RawDocumentBuf], runs: usize) -> (Duration, Duration)
where
    A: odm::serde::de::DeserializeOwned,
    B: odm::serde::de::DeserializeOwned,
{
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        for d in raw {
            let v: A = odm::bson::deserialize_from_slice(d.as_bytes()).expect("decodes");
            black_box(v);
        }
        a.push(t.elapsed());
        let t = Instant::now();
        for d in raw {
            let v: B = odm::bson::deserialize_from_slice(d.as_bytes()).expect("decodes");
            black_box(v);
        }
        b.push(t.elapsed());
    }
    (median(a), median(b))
}

/// The feed entries' decode alone: the DBRef into the `PolyRef` enum against a plain struct.
async fn feed_decode(bench: &Bench, runs: usize) -> odm::Result<()> {
    let raw: Vec<RawDocumentBuf> = bench
        .db
        .collection::<RawDocumentBuf>("feed")
        .find(doc! {})
        .await?
        .try_collect()
        .await?;
    let (a, b) = decode_alone::<FeedEntry, hand::FeedEntry>(&raw, runs);
    println!();
    println!(
        "decode alone, the {} feed entries from memory; medians of {runs} runs",
        raw.len()
    );
    println!("    {:<34} {:>10}", "(a) odm FeedEntry (PolyRef)", show(a));
    println!(
        "    {:<34} {:>10}",
        "(b) hand struct, DBRef struct",
        show(b)
    );
    println!("    a/b = {:.3}", ratio(a, b));
    Ok(())
}

#[tokio::main]
async fn main() -> odm::Result<()> {
    let bench = Bench::start("poly").await?;
    seed_feed(&bench).await?;
    poly_populate(&bench, 21, 3).await?;
    feed_decode(&bench, 41).await?;
    seed_shelf(&bench).await?;
    mixed_decode(&bench, 21).await?;
    bench.finish().await
}
