//! The library's books listed page by page, by title, with their authors: keyset pagination
//! (one `find` per page, continued with an opaque token), a token that was tampered with, and
//! every book streamed with its author, a batch of books at a time.
//!
//! Run it with `cargo run -p odm-examples --example paging`: it uses `MONGODB_URI` when set,
//! else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{list, say};
use futures_util::TryStreamExt;
use odm::paging::{Page, PageToken};
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "authors")]
struct Author {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

// ANCHOR: book
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "books", index(keys = "title, id"))]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    #[reference]
    author: Ref<Author>,
}
// ANCHOR_END: book

const TITLES: [(&str, i32); 12] = [
    ("The Great Gatsby", 1),
    ("This Side of Paradise", 1),
    ("Tender Is the Night", 1),
    ("Death of a Salesman", 2),
    ("The Crucible", 2),
    ("All My Sons", 2),
    ("Mrs Dalloway", 3),
    ("To the Lighthouse", 3),
    ("Orlando", 3),
    ("The Waves", 3),
    ("Dubliners", 4),
    ("Ulysses", 4),
];

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

// ANCHOR: page
/// One page of the catalogue: the books after `token` (the first page when `None`), by title,
/// each with its author.
async fn catalogue_page(odm: &Odm, token: Option<PageToken>) -> odm::Result<Page<Book>> {
    odm.find(Filter::all())
        .sort(Book::title().asc())
        .populate(Book::author())
        .page(5)
        .after(token)
        .await
}
// ANCHOR_END: page

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("paging").await?;

    steps.start("Create the index the pages are read from, then the authors and books");
    odm.sync_indexes().await?;
    let authors = ["F. Scott Fitzgerald", "Arthur Miller", "Virginia Woolf"];
    let mut all: Vec<Author> = authors
        .iter()
        .zip(1..)
        .map(|(name, id)| Author {
            id,
            name: (*name).into(),
        })
        .collect();
    all.push(Author {
        id: 4,
        name: "James Joyce".into(),
    });
    odm.insert_many(&all).await?;
    let books: Vec<Book> = TITLES
        .iter()
        .zip(1..)
        .map(|((title, author), id)| Book {
            id,
            title: (*title).into(),
            author: Ref::new(*author),
        })
        .collect();
    odm.insert_many(&books).await?;
    say("4 authors, 12 books");
    steps.sent();

    // ANCHOR: pages
    let mut token = None;
    let mut number = 1;
    loop {
        steps.start(&format!(
            "Page {number}: five books by title, with their authors"
        ));
        let page = catalogue_page(&odm, token).await?;
        for book in &page.items {
            say(format_args!(
                "{} ({})",
                book.title,
                book.author.loaded()?.name
            ));
        }
        steps.sent();
        // The token is text, to hand to a client (a link's `?after=`) and read back.
        token = page.next.map(|t| PageToken::from(t.to_string()));
        if token.is_none() {
            say("no next page");
            break;
        }
        number += 1;
    }
    // ANCHOR_END: pages

    steps.start("A token altered by a client is refused, and nothing is sent");
    let first = catalogue_page(&odm, None).await?;
    let text = first.next.map(|t| t.to_string()).unwrap_or_default();
    // One character in the middle changed, as a client might edit a link.
    let mut altered = text.into_bytes();
    let middle = altered.len() / 2;
    altered[middle] = if altered[middle] == b'x' { b'y' } else { b'x' };
    let altered = String::from_utf8(altered).unwrap_or_default();
    steps.log().clear();
    match catalogue_page(&odm, Some(PageToken::from(altered))).await {
        Err(e) => say(e),
        Ok(_) => say("accepted?"),
    }
    steps.sent();

    steps.start("Stream every book with its author, four books (one $in) at a time");
    // ANCHOR: stream
    let mut stream = odm
        .find(Filter::all())
        .sort(Book::title().asc())
        .populate(Book::author())
        .batch_size(4)
        .stream();
    let mut by = Vec::new();
    while let Some(book) = stream.try_next().await? {
        by.push(format!("{}: {}", book.id, book.author.loaded()?.name));
    }
    // ANCHOR_END: stream
    list("books", by);
    steps.sent();

    common::drop_database(&odm).await
}
