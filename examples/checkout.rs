//! A library's checkout desk: lending a book records the loan and takes a copy off the shelf in
//! one transaction (`Odm::transaction`), and a book is versioned (`#[odm(version)]`), so that two
//! librarians editing it at once cannot overwrite each other. Every step prints what it did and
//! the commands it sent.
//!
//! Run it with `cargo run -p odm-examples --example checkout`: it uses `MONGODB_URI` when set,
//! else starts the local development server (`cargo xtask examples` installs it). Transactions
//! need a replica set: the development server is one.

#[path = "common/mod.rs"]
mod common;

use common::say;
use odm::bson::DateTime;
use odm::prelude::*;
use odm::Error;

// ANCHOR: models
/// A title on the shelves: `available` copies, a version that every write increments, and the
/// times it was created and last written, all kept by the ODM.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "books")]
struct Book {
    #[serde(rename = "_id")]
    id: i32,
    title: String,
    available: i32,
    #[odm(version)]
    version: u64,
    #[odm(created_at)]
    created_at: DateTime,
    #[odm(updated_at)]
    updated_at: DateTime,
}

/// One loan of one copy.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "loans")]
struct Loan {
    #[serde(rename = "_id")]
    id: ObjectId,
    book: i32,
    member: String,
    #[odm(created_at)]
    lent_at: DateTime,
}
// ANCHOR_END: models

// ANCHOR: checkout
/// Lends a copy of `book` to `member`: the book loses a copy and the loan is recorded, both or
/// neither. Run again from the start when a concurrent checkout conflicts with it.
async fn checkout(odm: &Odm, book: i32, member: &str) -> odm::Result<ObjectId> {
    odm.transaction(async |tx| {
        let mut copy = odm
            .get::<Book>(book)
            .session(tx.session())
            .await?
            .ok_or_else(|| Error::NotFound {
                collection: "books".into(),
                what: format!("book {book}"),
            })?;
        if copy.available == 0 {
            return Err(Error::Unsupported(format!(
                "no copy of `{}` left to lend",
                copy.title
            )));
        }
        copy.available -= 1;
        // Written only over the version just read: a conflict is an error, never a lost update.
        odm.replace_one(&copy).session(tx.session()).await?;
        let loan = Loan {
            id: ObjectId::new(),
            book,
            member: member.to_owned(),
            lent_at: DateTime::now(),
        };
        odm.insert_one(&loan).session(tx.session()).await?;
        Ok(loan.id)
    })
    .await
}
// ANCHOR_END: checkout

#[tokio::main]
async fn main() -> odm::Result<()> {
    let (odm, steps) = common::connect("checkout").await?;

    steps.start("A new title, two copies: the insert stores version 0 and both timestamps");
    odm.insert_one(&Book {
        id: 1,
        title: "The Left Hand of Darkness".into(),
        available: 2,
        version: 0,
        created_at: DateTime::now(),
        updated_at: DateTime::now(),
    })
    .await?;
    steps.sent();

    // The one `hello` telling whether the deployment runs transactions, asked once per handle.
    odm.supports_transactions().await?;
    steps.start("Lend a copy to Ann: read the book, replace it at its version, record the loan");
    let loan = checkout(&odm, 1, "ann").await?;
    steps.name(loan, "ann's loan");
    steps.sent();
    let book = odm.get::<Book>(1).await?.expect("stored");
    say(format!(
        "`{}`: {} copy left, version {}",
        book.title, book.available, book.version
    ));

    steps.start("Two librarians edit the book at once: the second save is refused");
    // ANCHOR: conflict
    let mut first = odm.get::<Book>(1).await?.expect("stored");
    let mut second = first.clone();
    first.title = "The Left Hand of Darkness (1969)".into();
    odm.replace_one(&first).await?;
    second.available += 1;
    match odm.replace_one(&second).await {
        Err(Error::VersionConflict {
            expected, found, ..
        }) => say(format!(
            "refused: loaded at version {expected}, stored at {found}; load it again"
        )),
        other => panic!("expected a conflict, got {other:?}"),
    }
    // ANCHOR_END: conflict
    steps.sent();

    steps.start("Lend to Bob, then to Cy: the shelf is empty, Cy's transaction is aborted");
    checkout(&odm, 1, "bob").await?;
    match checkout(&odm, 1, "cy").await {
        Err(e) => say(format!("refused: {e}")),
        Ok(_) => panic!("lent a copy that is not there"),
    }
    steps.sent();
    let loans = odm.count(Loan::member().eq("cy".to_owned())).await?;
    say(format!("loans to cy: {loans}"));

    common::drop_database(&odm).await?;
    common::shutdown().await;
    Ok(())
}
