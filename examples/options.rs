//! The driver's options on odm's operations: a members directory where emails are looked up
//! without case (a collation), a report query with a comment for the profiler, a time bound
//! and a majority read, an index named by a hint, a handle for reports on a secondary, and
//! writes a majority acknowledges (declared on a model, or given to one write).
//!
//! Run it with `cargo run -p odm-examples --example options`: it uses `MONGODB_URI` when set,
//! else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use std::time::Duration;

use common::say;
use odm::options::{Collation, CollationStrength, Hint, ReadConcern, ReadPreference, WriteConcern};
use odm::prelude::*;

// ANCHOR: model
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "members")]
struct Member {
    #[serde(rename = "_id")]
    id: i32,
    #[index]
    email: String,
    name: String,
    team: String,
}
// ANCHOR_END: model

// ANCHOR: defaults
/// Every change to a member's role is kept in the audit log, which a majority of the replica
/// set must acknowledge: declared once on the model, for each of its writes and everything odm
/// writes for them.
#[derive(Model, Serialize, Deserialize, Debug, Clone)]
#[odm(collection = "audit", write_concern = "majority")]
struct AuditEntry {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    member: Ref<Member>,
    change: String,
}
// ANCHOR_END: defaults

// ANCHOR: collation
/// Strings compared without case: `strength: 2` tells letters apart, not their case.
fn without_case() -> Collation {
    Collation::builder()
        .locale("en")
        .strength(CollationStrength::Secondary)
        .build()
}

/// The member whose email is `email`, whatever its case.
async fn by_email(odm: &Odm, email: &str) -> odm::Result<Option<Member>> {
    odm.find_one(Member::email().eq(email))
        .collation(without_case())
        .await
}
// ANCHOR_END: collation

// ANCHOR: report
/// A team's members for a nightly report: named in the profiler and in `currentOp`, bounded
/// to two seconds of the server's time, and reading only what a majority acknowledged.
async fn team_report(odm: &Odm, team: &str) -> odm::Result<Vec<Member>> {
    odm.find(Member::team().eq(team))
        .sort(Member::name().asc())
        .comment("nightly team report")
        .max_time(Duration::from_secs(2))
        .read_concern(ReadConcern::majority())
        .await
}
// ANCHOR_END: report

// ANCHOR: hint
/// How many members have an email of the team's domain, counted along the email index.
async fn count_by_email_index(odm: &Odm, email: &str) -> odm::Result<u64> {
    odm.count(Member::email().eq(email))
        .hint(Hint::Name("email_1".to_owned()))
        .await
}
// ANCHOR_END: hint

// ANCHOR: search
/// The members whose name starts with what the user typed, matched literally (`.*` finds only
/// a name that starts with `.*`): an anchored prefix, which the index on `name` serves.
async fn names_starting(odm: &Odm, typed: &str) -> odm::Result<Vec<Member>> {
    odm.find(Member::name().starts_with(typed)).await
}

/// The members whose email holds what the user typed, whatever its case.
async fn emails_containing(odm: &Odm, typed: &str) -> odm::Result<Vec<Member>> {
    odm.find(Member::email().contains_text(typed, true)).await
}

/// The program's own pattern: a `&'static str`, never the user's text.
const CORE_DOMAIN: odm::Pattern = odm::Pattern::new(r"@example\.org$");
// ANCHOR_END: search

// ANCHOR: handle
/// A handle for reports: its queries prefer a secondary, sharing the pool of `odm`. The reads
/// odm sends for a write made on it still go to the primary.
fn reports(odm: &Odm) -> Odm {
    odm.clone()
        .with_read_preference(ReadPreference::SecondaryPreferred {
            options: Default::default(),
        })
}
// ANCHOR_END: handle

// ANCHOR: write
/// Renames a member, acknowledged by a majority: this write's own concern, over the handle's.
async fn rename(odm: &Odm, id: i32, name: &str) -> odm::Result<()> {
    odm.update_by_id::<Member>(id, Member::name().set(name.to_owned()))
        .write_concern(WriteConcern::majority())
        .await?;
    Ok(())
}
// ANCHOR_END: write

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
    let (odm, steps) = common::connect("options").await?;

    steps.start("Insert three members and create the email index");
    let members = [
        (1, "Ann@Example.org", "Ann", "core"),
        (2, "bob@example.org", "Bob", "core"),
        (3, "cy@example.org", "Cy", "web"),
    ]
    .map(|(id, email, name, team)| Member {
        id,
        email: email.to_owned(),
        name: name.to_owned(),
        team: team.to_owned(),
    });
    odm.insert_many(&members).await?;
    odm.sync_indexes().await?;
    steps.sent();

    steps.start("Look up ann@example.org without case: the find carries the collation");
    let ann = by_email(&odm, "ann@example.org").await?;
    say(format_args!(
        "found: {}",
        ann.map_or("nobody".to_owned(), |m| m.name)
    ));
    steps.sent();

    steps.start("The core team's report: comment, maxTimeMS and a majority read concern");
    let names: Vec<String> = team_report(&odm, "core")
        .await?
        .into_iter()
        .map(|m| m.name)
        .collect();
    say(format_args!("core: {}", names.join(", ")));
    steps.sent();

    steps.start("Count along the email index, named by a hint");
    let n = count_by_email_index(&odm, "bob@example.org").await?;
    say(format_args!("members with bob@example.org: {n}"));
    steps.sent();

    steps.start("Search: a literal prefix, literal text without case, the program's pattern");
    let an = names_starting(&odm, "An").await?.len();
    let dots = names_starting(&odm, ".*").await?.len();
    let example = emails_containing(&odm, "EXAMPLE").await?.len();
    let core = odm.count(Member::email().matches(&CORE_DOMAIN)).await?;
    say(format_args!(
        "\"An\": {an}, \".*\": {dots}, \"EXAMPLE\": {example}, @example.org: {core}"
    ));
    steps.sent();

    steps.start("The web team from the reports handle: the find prefers a secondary");
    let web: Vec<Member> = reports(&odm).find(Member::team().eq("web")).await?;
    say(format_args!("web: {}", web.len()));
    steps.sent();

    steps.start("Rename Cy with a majority write concern");
    rename(&odm, 3, "Cyrus").await?;
    steps.sent();

    steps.start("Audit the rename: the model's write concern, with nothing said at the call");
    odm.insert_one(&AuditEntry {
        id: 1,
        member: Ref::new(3),
        change: "renamed Cy to Cyrus".to_owned(),
    })
    .await?;
    steps.sent();
    Ok(())
}
