//! A people directory whose documents changed shape twice: old documents upgraded on read,
//! migrations planned (what a run would do), run (each with its time and the documents it
//! changed; run twice: once only) and the last reverted with its down step, then the validator
//! generated from the model installed, and a raw update that breaks it refused.
//!
//! Run it with `cargo run -p odm-examples --example migrations`: it uses `MONGODB_URI` when
//! set, else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::say;
use odm::bson::{doc, Bson, Document};
use odm::prelude::*;

/// Version 1 stored `name: "Ada Lovelace"`; version 2 split it; version 3 added `born`.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "people", schema_version = 3, upgrade = "upgrade_person")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    first: String,
    last: String,
    born: Option<i32>,
}

/// Brings a stored person from version `from` to `from + 1`.
fn upgrade_person(from: u32, doc: &mut Document) -> Result<(), String> {
    match from {
        1 => {
            let name = doc.get_str("name").map_err(|_| "no `name`")?.to_owned();
            let (first, last) = name.split_once(' ').ok_or("`name` has no space")?;
            doc.insert("first", first);
            doc.insert("last", last);
            doc.remove("name");
        }
        2 => {
            doc.insert("born", Bson::Null);
        }
        _ => {}
    }
    Ok(())
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

async fn run() -> odm::Result<()> {
    let (odm, steps) = common::connect("migrations").await?;

    steps.start("People stored by older versions of the program (version 1, 2, and none yet)");
    odm.database()
        .collection::<Document>("people")
        .insert_many([
            doc! {"_id": 1, "name": "Ada Lovelace"},
            doc! {"_id": 2, "first": "Alan", "last": "Turing", "_v": 2},
        ])
        .await?;
    steps.sent();

    steps.start("Read them: each is upgraded in memory, nothing is written");
    let people: Vec<Person> = odm.find(Filter::all()).await?;
    for p in &people {
        say(format_args!("{} {} (born {:?})", p.first, p.last, p.born));
    }
    steps.sent();

    // ANCHOR: migrations
    fn migrate(odm: &Odm) -> odm::migrations::Migrations<'_> {
        odm.migrations()
            .add(1, "store every person at version 3", |odm| async move {
                let old =
                    Filter::raw(doc! {"$or": [{"_v": {"$exists": false}}, {"_v": {"$lt": 3}}]});
                let people: Vec<Person> = odm.find(old).await?;
                for person in &people {
                    odm.replace_one(person).await?;
                }
                // What it changed, shown beside its time.
                Ok(people.len() as u64)
            })
            .add(2, "list everyone in the directory", |odm| async move {
                let people = odm.database().collection::<Document>("people");
                Ok(people
                    .update_many(doc! {}, doc! {"$set": {"listed": true}})
                    .await?)
            })
            // How migration 2 is undone, for `revert`.
            .down(|odm| async move {
                let people = odm.database().collection::<Document>("people");
                Ok(people
                    .update_many(doc! {}, doc! {"$unset": {"listed": ""}})
                    .await?)
            })
    }
    // ANCHOR_END: migrations
    // ANCHOR: run
    steps.start("What a run would do, read from the records: nothing runs");
    let plan = migrate(&odm).plan().await?;
    say(format_args!("would run, in order: {:?}", plan.to_run));
    steps.sent();

    steps.start("Run the migrations: claim each step, run it, record it finished");
    let report = migrate(&odm).await?;
    for run in &report.runs {
        say(format_args!(
            "applied {} {:?}: {:?} documents",
            run.version, run.name, run.documents
        ));
    }
    steps.sent();

    steps.start("Run them again (a second process starting, say): already done");
    let report = migrate(&odm).await?;
    say(format_args!("already done: {:?}", report.already));
    steps.sent();

    steps.start("Revert the last one applied: its down step, then its record deleted");
    if let Some(run) = migrate(&odm).revert().await? {
        say(format_args!(
            "reverted {} {:?}: {:?} documents",
            run.version, run.name, run.documents
        ));
    }
    steps.sent();

    steps.start("Revert again: migration 1 declares no down step, so it is refused");
    match migrate(&odm).revert().await {
        Err(e) => say(e),
        Ok(_) => say("not refused"),
    }
    steps.sent();
    // ANCHOR_END: run

    steps.start("Install the validator generated from the model");
    let report = odm.sync_validators().await?;
    say(report.to_string().trim_end());
    steps.sent();

    steps.start("A raw update that breaks the schema is refused by the server");
    let refused = odm
        .update_by_id::<Person>(1, Update::raw(doc! {"$set": {"first": 42}}))
        .await;
    match refused {
        Err(e) => say(e),
        Ok(_) => say("not refused"),
    }
    steps.sent();

    common::drop_database(&odm).await
}
