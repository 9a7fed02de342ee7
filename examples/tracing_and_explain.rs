//! Seed 001's parts catalog seen from the outside: every operation as a `tracing` span printed
//! when it closes (the cascade of a product's new name into its parts nested under the update,
//! with the commands it sent), then the queries the example sent explained by the server, to
//! check that each one reads an index, and one that does not.
//!
//! Run it with `cargo run -p odm-examples --example tracing_and_explain`: it uses `MONGODB_URI`
//! when set, else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::say;
use odm::mongodb::options::ClientOptions;
use odm::mongodb::Client;
use odm::monitor::CommandLog;
use odm::prelude::*;
use tracing_subscriber::fmt::format::FmtSpan;

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    #[index]
    partno: String,
    qty: i64,
    #[reference]
    product: Option<Ref<Product>>,
    #[denormalize(from = "Product", via = "product", fields = "name")]
    #[serde(default)]
    product_name: String,
}

#[tokio::main]
async fn main() {
    let result = run().await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

// ANCHOR: subscriber
/// Prints every `odm` span when it closes, with its fields (`commands`, `documents`,
/// `duration_us`, ...), steps indented under their operation.
fn print_spans() {
    tracing_subscriber::fmt()
        .with_span_events(FmtSpan::CLOSE)
        .with_env_filter("odm=info")
        .without_time()
        .with_ansi(false)
        .with_target(false)
        .init();
}
// ANCHOR_END: subscriber

// ANCHOR: connect
/// A handle whose spans count their commands (`odm::trace::count_commands`), on a client that
/// also logs what it sends, for `explain_sent` to explain afterwards.
async fn connect(uri: &str, db: &str) -> odm::Result<(Odm, CommandLog)> {
    let mut options = ClientOptions::parse(uri).await?;
    let log = CommandLog::with_documents();
    log.attach(&mut options);
    odm::trace::count_commands(&mut options);
    let client = Client::with_options(options)?;
    Ok((Odm::new(client.database(db)), log))
}
// ANCHOR_END: connect

async fn run() -> odm::Result<()> {
    let uri = odm::testing::test_uri()?;
    let db = format!("odm_tracing_and_explain_{}", std::process::id());
    println!("odm tracing_and_explain example: database `{db}` on {uri}");
    print_spans();
    let (odm, log) = connect(&uri, &db).await?;
    common::shut_down_at_exit(odm.client());

    println!("\n1. Indexes, a product and its parts: one span per operation");
    odm.sync_indexes().await?;
    odm.insert_one(&Product {
        id: 1,
        name: "left-handed smoke shifter".into(),
    })
    .await?;
    for (id, partno) in [(1, "123-aff-456"), (2, "456-bfe-789")] {
        odm.insert_one(&Part {
            id,
            partno: partno.into(),
            qty: 94,
            product: Some(Ref::new(1)),
            product_name: String::new(),
        })
        .await?;
    }

    println!("\n2. A new product name: the update's span, the cascade's under it");
    // ANCHOR: rename
    odm.update_by_id::<Product>(1, Product::name().set("smoke detector"))
        .await?;
    // ANCHOR_END: rename
    let parts = odm.find(Part::product().eq(Ref::new(1))).await?;
    for part in &parts {
        say(format_args!(
            "part {}: product_name = {}",
            part.partno, part.product_name
        ));
    }

    println!("\n3. What the server would do with each query sent so far");
    // ANCHOR: explain
    let report = odm::testing::explain_sent(odm.database(), &log.take()).await?;
    for e in &report.explained {
        say(format_args!(
            "{} on {}: {:?}",
            e.command, e.collection, e.plan
        ));
    }
    say(format_args!(
        "every query reads an index: {}",
        report.is_clean()
    ));
    // ANCHOR_END: explain

    println!("\n4. A query on a field without an index scans the collection");
    odm.find(Part::qty().gt(10)).await?;
    let report = odm::testing::explain_sent(odm.database(), &log.take()).await?;
    for e in report.scans() {
        say(format_args!(
            "{} on {} scans: {}",
            e.command, e.collection, e.query
        ));
    }

    common::drop_database(&odm).await
}
