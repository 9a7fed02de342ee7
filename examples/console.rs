//! The operations console (`odm::console`, the `console` feature) over the parts catalog.
//!
//! With arguments, this program is the console: `cargo run -p odm-examples --example console --
//! verify --json`. It connects to `MONGODB_URI` (else the local development server) and to the
//! database named by `ODM_CONSOLE_DB` (else `odm_console`).
//!
//! Without arguments, it runs a short scripted session on a database of its own: it seeds the
//! catalog, runs `sync --dry-run`, `explain`, `sync`, `explain` again and `verify`, plants a
//! stale copy behind the ODM's back, runs `verify` and `repair`, lists, runs and reverts the
//! migrations, and prints the cascade plan of `Part` and the diagram, each with its exit code;
//! then it drops the database. It exits 0 when
//! every exit code was the one expected.

#[path = "common/mod.rs"]
mod common;
#[path = "console/models.rs"]
mod models;

use std::process::ExitCode;

use models::{Part, Product};
use odm::bson::doc;
use odm::console::Console;
use odm::progress::{Observer, Progress};
use odm::Odm;

// ANCHOR: console
/// The console of this application: every command works on the models linked into the
/// program; `plan` and `routing` show the models named here, `migrate` the migrations added
/// (the second with a down step, which `migrate revert` runs).
fn console(odm: Odm) -> Console {
    Console::new(odm)
        .model::<Part>()
        .model::<Product>()
        .migration(1, "every part has a product name", |odm: Odm| async move {
            let parts = odm.database().collection::<odm::bson::Document>("parts");
            let changed = parts
                .update_many(
                    doc! { "product_name": { "$exists": false } },
                    doc! { "$set": { "product_name": "" } },
                )
                .await?;
            // What it changed: `migrate run` shows the count beside its time.
            Ok(changed)
        })
        .migration(2, "parts are stocked unless told", |odm: Odm| async move {
            let parts = odm.database().collection::<odm::bson::Document>("parts");
            let filter = doc! { "stocked": { "$exists": false } };
            Ok(parts
                .update_many(filter, doc! { "$set": { "stocked": true } })
                .await?)
        })
        .down(|odm: Odm| async move {
            let parts = odm.database().collection::<odm::bson::Document>("parts");
            let filter = doc! { "stocked": { "$exists": true } };
            Ok(parts
                .update_many(filter, doc! { "$unset": { "stocked": "" } })
                .await?)
        })
}
// ANCHOR_END: console

#[tokio::main]
async fn main() -> ExitCode {
    if std::env::args_os().len() > 1 {
        return as_console().await;
    }
    let result = demo().await;
    common::shutdown().await;
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

// ANCHOR: main
/// The console's binary: connect as the application does, hand the handle over, return the
/// console's exit code (0 all is well, 1 something to act on, 2 failed).
async fn as_console() -> ExitCode {
    let uri = std::env::var("MONGODB_URI").ok().filter(|u| !u.is_empty());
    let uri = match uri.map_or_else(odm::testing::test_uri, Ok) {
        Ok(uri) => uri,
        Err(e) => return failed(e),
    };
    let db = std::env::var("ODM_CONSOLE_DB").unwrap_or_else(|_| "odm_console".to_owned());
    let odm = match Odm::connect(&uri, &db).await {
        Ok(odm) => odm,
        Err(e) => return failed(e),
    };
    let client = odm.client().clone();
    let code = console(odm).run().await;
    // The driver's clean-up finishes before the runtime stops (bounded: see `common`).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), client.shutdown()).await;
    code
}
// ANCHOR_END: main

fn failed(e: odm::Error) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(odm::console::FAILED)
}

/// Runs one command of the console as its binary would, prints it and its exit code, and
/// says whether the code is the one expected.
async fn step(odm: &Odm, command: &str, expected: u8) -> bool {
    println!("\n$ console {command}");
    let args = std::iter::once("console").chain(command.split_whitespace());
    let code = console(odm.clone()).exit_code_with(args).await;
    println!("(exit code {code})");
    code == expected
}

async fn demo() -> odm::Result<bool> {
    let (odm, _steps) = common::connect("console").await?;
    models::seed(&odm).await?;
    let mut ok = true;
    // ANCHOR: session
    ok &= step(&odm, "sync --dry-run", 1).await; // the indexes are missing
    ok &= step(&odm, "explain", 1).await; // so the cascades would scan collections
    ok &= step(&odm, "sync", 0).await;
    ok &= step(&odm, "sync --dry-run", 0).await;
    ok &= step(&odm, "explain", 0).await;
    ok &= step(&odm, "verify", 0).await;
    // ANCHOR_END: session
    // A copy written behind the ODM's back: the product's summary of the fuse.
    odm.database()
        .collection::<odm::bson::Document>("products")
        .update_one(
            doc! { "_id": 10, "parts.id": 2 },
            doc! { "$set": { "parts.$.name": "fuze" } },
        )
        .await?;
    println!("\nThe summary of part 2 in product 10 now says `fuze`.");
    ok &= step(&odm, "verify", 1).await;
    ok &= step(&odm, "repair", 0).await;
    println!("\nThe same sweep from the application's code, its progress heard on a channel:");
    verify_with_progress(&odm).await?;
    // ANCHOR: migrate
    ok &= step(&odm, "migrate status", 0).await;
    ok &= step(&odm, "migrate run --dry-run", 1).await; // two would run
    ok &= step(&odm, "migrate run", 0).await;
    ok &= step(&odm, "migrate revert --dry-run", 1).await;
    ok &= step(&odm, "migrate revert", 0).await; // the second, which has a down step
    ok &= step(&odm, "migrate revert", 2).await; // the first has none: refused
    ok &= step(&odm, "migrate run", 0).await;
    // ANCHOR_END: migrate
    ok &= step(&odm, "plan Part", 0).await;
    ok &= step(&odm, "diagram", 0).await;
    common::drop_database(&odm).await?;
    Ok(ok)
}

// ANCHOR: progress
/// A sweep run by the application itself, whose progress goes to a channel that another task
/// (a log, a status page) reads: one report when each piece starts, after each batch (at most
/// every 100 ms), and when it ends.
async fn verify_with_progress(odm: &Odm) -> odm::Result<()> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let shown = tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            if p.finished {
                println!(
                    "  {}: {} of {} {}",
                    p.phase,
                    p.done,
                    p.total.unwrap_or(0),
                    p.unit.name()
                );
            }
        }
    });
    let observed = odm.clone().with_progress(Observer::channel(tx));
    let report = observed.verify_copies().batch_size(2).await?;
    drop(observed); // the last sender: the reading task ends
    let _ = shown.await;
    println!(
        "  {} documents checked, consistent: {}",
        report.documents_checked,
        report.is_consistent()
    );
    Ok(())
}
// ANCHOR_END: progress
