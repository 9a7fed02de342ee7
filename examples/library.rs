//! The library of MongoDB's schema-design workshop, end to end.
//!
//! Authors and users stand alone; a book embeds its publisher (one-to-one) and its reviews
//! (one-to-few); loan requests form a queue served with `findAndModify`; a compound unique
//! index lets each user recommend each book once; books of several kinds (series books) share
//! one collection (`library/series.rs`). Then the workshop's remaining patterns, each in a module
//! and a database of its own: subjects as a tree (`library/subjects.rs`), a user's reviews in
//! monthly buckets (`library/reviews.rs`), recommendations counted per day, hour and minute,
//! with a quota per user (`library/recommendations.rs`), and referring domains counted per
//! book (`library/referrers.rs`). Every step prints what it did and the commands it sent.
//!
//! Run it with `cargo run -p odm-examples --example library`: it uses `MONGODB_URI` when set,
//! else starts the local development server (`cargo xtask examples` installs it).
//! With `-- --diagram` it prints the Mermaid diagram of its models instead, and needs no server
//! (the guide's "Diagrams of the schema" shows it).

#[path = "common/mod.rs"]
mod common;
#[path = "library/recommendations.rs"]
mod recommendations;
#[path = "library/referrers.rs"]
mod referrers;
#[path = "library/reviews.rs"]
mod reviews;
#[path = "library/series.rs"]
mod series;
#[path = "library/subjects.rs"]
mod subjects;

use common::{list, say, say_lines, Steps};
use odm::bson::DateTime;
use odm::mongodb::options::ClientOptions;
use odm::mongodb::Client;
use odm::monitor::CommandLog;
use odm::prelude::*;

// ANCHOR: author_user
/// Stored in `authors`: the default collection name is the type name, snake-cased, plus `s`.
#[derive(Model, Serialize, Deserialize, Debug)]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    first_name: String,
    last_name: String,
}

/// Stored in `users`.
#[derive(Model, Serialize, Deserialize, Debug)]
struct User {
    #[serde(rename = "_id")]
    id: i32,
    #[index(unique)]
    username: String,
    password: String,
}
// ANCHOR_END: author_user

// ANCHOR: book
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "books", index(keys = "publisher.name"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[index]
    slug: String,
    author: i32,
    available: bool,
    #[index(unique)]
    isbn: String,
    pages: i32,
    #[embed]
    publisher: Publisher,
    #[index]
    subjects: Vec<String>,
    language: String,
    // ANCHOR: reviews
    /// One-to-few: at most 100 reviews live in the book (rule of thumb 3).
    #[embed(max = 100)]
    reviews: Vec<Review>,
    // ANCHOR_END: reviews
    /// Denormalized total of the `recommendations` documents (workshop exercise 4).
    recommendations: i32,
}

/// One-to-one: read with the book, never on its own.
#[derive(Embed, Serialize, Deserialize, Debug)]
struct Publisher {
    name: String,
    date: DateTime,
    city: String,
}

/// One-to-few: a book's reviews live in the book.
#[derive(Embed, Serialize, Deserialize, Debug)]
struct Review {
    user: i32,
    text: String,
}
// ANCHOR_END: book

// ANCHOR: loan
/// A loan request (workshop exercise 3). The `_id` is a document: one request per borrower
/// and book.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "loans", index(keys = "pending, -priority"))]
struct Loan {
    #[serde(rename = "_id")]
    id: LoanId,
    pending: bool,
    approved: bool,
    priority: i32,
    started: Option<DateTime>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
struct LoanId {
    borrower: String,
    book: i32,
}
// ANCHOR_END: loan

// ANCHOR: recommendation
/// One document per user per book (workshop exercise 4); the unique index refuses a second
/// recommendation. The `ObjectId` is generated on insert.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "recommendations", index(keys = "book, user", unique))]
struct Recommendation {
    #[serde(rename = "_id")]
    id: Option<ObjectId>,
    book: i32,
    user: i32,
}
// ANCHOR_END: recommendation

// ANCHOR: view
/// What a listing page shows: a view of `Book`, decoded from a projection.
#[derive(Deserialize, Debug)]
struct BookCard {
    title: String,
    pages: i32,
}
// ANCHOR_END: view

#[tokio::main]
async fn main() {
    // ANCHOR: diagram
    // `--diagram`: print the picture of this program's models and stop; no server needed.
    if std::env::args().any(|arg| arg == "--diagram") {
        print!("{}", odm::diagram::mermaid(&odm::Catalog::linked()));
        return;
    }
    // ANCHOR_END: diagram
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> odm::Result<()> {
    // ANCHOR: connect
    // MONGODB_URI when set, else the local development server (started on first use).
    let uri = odm::testing::test_uri()?;
    let mut options = ClientOptions::parse(&uri).await?;
    let log = CommandLog::with_documents();
    log.attach(&mut options);
    let client = Client::with_options(options)?;
    let db_name = format!("odm_library_{}", std::process::id());
    let odm = Odm::new(client.database(&db_name));
    // ANCHOR_END: connect
    common::shut_down_at_exit(&client);
    println!("odm library example: database `{db_name}` on {uri}");
    println!("Each step prints what it did and the commands it sent to the server.");
    let steps = Steps::new(log);

    steps.start("Create the indexes the models declare");
    // ANCHOR: sync_indexes
    let report = odm.sync_indexes().await?;
    // ANCHOR_END: sync_indexes
    say_lines(&report);
    steps.sent();

    steps.start("Sync the indexes again: nothing to do");
    // ANCHOR: sync_again
    let again = odm.sync_indexes().await?;
    assert!(again.is_in_sync());
    // ANCHOR_END: sync_again
    say(format_args!(
        "in sync: {}, created: {:?}",
        again.is_in_sync(),
        again.created()
    ));
    steps.sent();

    steps.start("Insert authors, users and books");
    // ANCHOR: insert
    let authors = [
        author(1, "F. Scott", "Fitzgerald"),
        author(2, "Arthur", "Miller"),
    ];
    let users = [user(1, "emily"), user(2, "bob"), user(3, "kate")];
    let books = [gatsby(), paradise(), salesman()];
    odm.insert_many(&authors).await?;
    odm.insert_many(&users).await?;
    let ids = odm.insert_many(&books).await?;
    // ANCHOR_END: insert
    say(format_args!(
        "{} authors, {} users, books {ids:?}",
        authors.len(),
        users.len()
    ));
    steps.sent();

    steps.start("Query a dotted path into the embedded publisher");
    // ANCHOR: dotted_query
    let everymans = odm
        .find(Book::publisher().name().eq("Everyman's Library"))
        .sort(Book::title().asc())
        .await?;
    // ANCHOR_END: dotted_query
    list(
        "published by Everyman's Library",
        everymans.iter().map(|b| &b.title),
    );
    steps.sent();

    steps.start("Query the multikey index on subjects");
    // ANCHOR: multikey_query
    let jazz_age = odm.find(Book::subjects().contains("Jazz Age")).await?;
    // ANCHOR_END: multikey_query
    list("about the Jazz Age", jazz_age.iter().map(|b| &b.title));
    steps.sent();

    steps.start("Sort, limit, and project into a view type");
    // ANCHOR: projection
    let longest: Vec<BookCard> = odm
        .find(Filter::all())
        .sort(Book::pages().desc())
        .limit(2)
        .projection(Projection::include(&Book::title()).and(&Book::pages()))
        .into_type::<BookCard>()
        .await?;
    // ANCHOR_END: projection
    let cards = longest
        .iter()
        .map(|c| format!("{} ({} pages)", c.title, c.pages));
    list("the two longest", cards);
    steps.sent();

    steps.start("Recommend a book, with a review: $inc and $push in one update");
    // ANCHOR: update
    let emily = 1;
    let recommendation = Recommendation {
        id: None,
        book: 1,
        user: emily,
    };
    let generated_id = odm.insert_one(&recommendation).await?;

    let review = Review {
        user: emily,
        text: "I thought this book was great!".into(),
    };
    let update = Book::recommendations()
        .inc(1)
        .and(Book::reviews().push(review));
    let result = odm.update_by_id::<Book>(1, update).await?;
    // ANCHOR_END: update
    say(format_args!("recommendation {generated_id} inserted"));
    say(format_args!(
        "books matched {}, modified {}",
        result.matched_count, result.modified_count
    ));
    steps.sent();

    steps.start("Recommend the same book twice: the unique index refuses it");
    // ANCHOR: duplicate
    let second = odm.insert_one(&recommendation).await;
    let err = second.expect_err("one recommendation per user and book");
    assert!(err.is_duplicate_key());
    // ANCHOR_END: duplicate
    say(format_args!("refused: {err}"));
    steps.sent();

    steps.start("Count a book's recommendations");
    // ANCHOR: count
    let counted = odm.count(Recommendation::book().eq(1)).await?;
    let gatsby = odm.get::<Book>(1).await?.expect("inserted above");
    // ANCHOR_END: count
    say(format_args!(
        "counted: {counted}; the total stored on the book: {}",
        gatsby.recommendations
    ));
    say(format_args!(
        "the book now embeds {} reviews",
        gatsby.reviews.len()
    ));
    steps.sent();

    steps.start("The loan queue: take the highest-priority request atomically");
    let requests = [loan("bob", 1, 1), loan("kate", 3, 3), loan("emily", 4, 2)];
    odm.insert_many(&requests).await?;
    // ANCHOR: loan_queue
    let taken = odm
        .find_one_and_update(
            Loan::pending().eq(false),
            Loan::pending()
                .set(true)
                .and(Loan::started().set(Some(DateTime::now()))),
        )
        .sort(Loan::priority().desc())
        .return_new()
        .await?
        .expect("three requests are waiting");
    // ANCHOR_END: loan_queue
    let LoanId { borrower, book } = &taken.id;
    say(format_args!(
        "taken: {borrower} for book {book} (priority {}); now pending: {}, started: {}",
        taken.priority,
        taken.pending,
        taken.started.is_some()
    ));
    // ANCHOR: loan_approve
    // The library approves the request.
    odm.update_by_id::<Loan>(
        &taken.id,
        Loan::pending().set(false).and(Loan::approved().set(true)),
    )
    .await?;

    // Requests pending for more than seven days time out.
    let week_ago = DateTime::now().saturating_add_millis(-7 * 24 * 3600 * 1000);
    let timed_out = odm
        .update_many(
            Loan::pending().eq(true) & Loan::started().lt(Some(week_ago)),
            Loan::pending().set(false).and(Loan::approved().set(false)),
        )
        .await?;
    // ANCHOR_END: loan_approve
    say(format_args!(
        "approved; requests timed out: {}",
        timed_out.modified_count
    ));
    steps.sent();

    steps.start("Delete a book");
    // ANCHOR: delete
    let deleted = odm.delete_one(Book::isbn().eq("9780141182636")).await?;
    let left = odm.count(Filter::<Book>::all()).await?;
    // ANCHOR_END: delete
    say(format_args!("deleted: {deleted}; books left: {left}"));
    steps.sent();

    series::run(&odm, &steps).await?;
    subjects::run(&odm, &steps).await?;
    reviews::run(&odm, &steps).await?;
    recommendations::run(&odm, &steps).await?;
    referrers::run(&odm, &steps).await?;

    // ANCHOR: drop
    odm.database().drop().await?;
    // ANCHOR_END: drop
    println!("\nDropped database `{db_name}`.");
    Ok(())
}

fn author(id: i32, first_name: &str, last_name: &str) -> Author {
    Author {
        id,
        first_name: first_name.into(),
        last_name: last_name.into(),
    }
}

fn user(id: i32, username: &str) -> User {
    User {
        id,
        username: username.into(),
        password: "slsjfk4odk84k209dlkdj90009283d".into(),
    }
}

fn loan(borrower: &str, book: i32, priority: i32) -> Loan {
    Loan {
        id: LoanId {
            borrower: borrower.into(),
            book,
        },
        pending: false,
        approved: false,
        priority,
        started: None,
    }
}

fn date(rfc3339: &str) -> DateTime {
    DateTime::parse_rfc3339_str(rfc3339).expect("a valid date")
}

fn everymans(date_: &str) -> Publisher {
    Publisher {
        name: "Everyman's Library".into(),
        date: date(date_),
        city: "London".into(),
    }
}

fn gatsby() -> Book {
    Book {
        id: 1,
        title: "The Great Gatsby".into(),
        slug: "9781857150193-the-great-gatsby".into(),
        author: 1,
        available: true,
        isbn: "9781857150193".into(),
        pages: 176,
        publisher: everymans("1991-09-19T00:00:00Z"),
        subjects: vec!["Love stories".into(), "1920s".into(), "Jazz Age".into()],
        language: "English".into(),
        reviews: vec![
            Review {
                user: 1,
                text: "One of the best…".into(),
            },
            Review {
                user: 2,
                text: "It's hard to…".into(),
            },
        ],
        recommendations: 0,
    }
}

fn paradise() -> Book {
    Book {
        id: 3,
        title: "This Side of Paradise".into(),
        slug: "9780679447238-this-side-of-paradise".into(),
        author: 1,
        available: true,
        isbn: "9780679447238".into(),
        pages: 352,
        publisher: everymans("1996-05-14T00:00:00Z"),
        subjects: vec!["1920s".into(), "Jazz Age".into(), "Princeton".into()],
        language: "English".into(),
        reviews: Vec::new(),
        recommendations: 0,
    }
}

fn salesman() -> Book {
    Book {
        id: 4,
        title: "Death of a Salesman".into(),
        slug: "9780141182636-death-of-a-salesman".into(),
        author: 2,
        available: false,
        isbn: "9780141182636".into(),
        pages: 112,
        publisher: Publisher {
            name: "Penguin Modern Classics".into(),
            date: date("2000-02-24T00:00:00Z"),
            city: "London".into(),
        },
        subjects: vec!["Drama".into(), "American dream".into()],
        language: "English".into(),
        reviews: Vec::new(),
        recommendations: 0,
    }
}
