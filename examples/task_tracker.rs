//! The task tracker of seed 000: people and tasks referenced both ways (two-way referencing).
//!
//! A person lists the ids of the tasks they own, and each task names its owner. Inserting a
//! task adds it to its owner's list; reassigning a task must change both sides: in a transaction where the deployment has them, otherwise in
//! a fixed order whose interruption `verify_inverse` finds and repairs. Deleting a person who
//! still owns tasks is refused (`restrict`); deleting a task removes it from its owner's list
//! (`pull`). Notes on the project are deleted softly (`#[odm(soft_delete)]`): marked, kept,
//! and skipped by every query. Every step prints what it did and the commands it sent; ObjectIds are shown by
//! the name of their document (`ObjectId(kate)`).
//!
//! Run it with `cargo run -p odm-examples --example task_tracker`: it uses `MONGODB_URI` when
//! set, else starts the local development server (`cargo xtask examples` installs it).

#[path = "common/mod.rs"]
mod common;

use common::{list, say, say_lines};
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;
use odm::relations::InverseIssue;
use odm::{Error, TransactionMode};

// ANCHOR: person
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "people")]
struct Person {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    /// The tasks this person owns: the "one" side of the two-way reference, kept in step with
    /// `Task::owner`. Deleting a task pulls its id from here.
    #[reference(many, max = 1000, inverse = "owner", on_delete = "pull")]
    tasks: Vec<Ref<Task>>,
}
// ANCHOR_END: person

// ANCHOR: task
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "tasks")]
struct Task {
    #[serde(rename = "_id")]
    id: ObjectId,
    description: String,
    due_date: DateTime,
    /// The owner: the source of truth of the two-way reference. No `on_delete`: the default,
    /// `restrict`, refuses to delete a person who still owns tasks.
    #[parent(inverse = "tasks")]
    owner: Ref<Person>,
}
// ANCHOR_END: task

/// A note on the project: deleting it keeps it, marked with the time of the delete.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "notes", soft_delete)]
struct Note {
    #[serde(rename = "_id")]
    id: i32,
    text: String,
    deleted_at: Option<DateTime>,
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
    let (odm, steps) = common::connect("task_tracker").await?;

    steps.start("Create the indexes the references need");
    let report = odm.sync_indexes().await?;
    say_lines(&report);
    steps.sent();

    steps.start("Insert Kate Monster and Bob, then Kate's four tasks: they join her list");
    // ANCHOR: insert
    let kate = person("Kate Monster");
    let bob = person("Bob");
    let tasks = [
        task("Write lesson plan", "2014-04-01", &kate),
        task("Grade papers", "2014-04-03", &kate),
        task("Buy supplies", "2014-04-04", &kate),
        task("Call parents", "2014-04-07", &kate),
    ];
    odm.insert_many([&kate, &bob]).await?;
    // Each task names its owner; the insert adds it to the owner's list too.
    odm.insert_many(&tasks).await?;
    // ANCHOR_END: insert
    let [lesson_plan, grading, supplies, _calls] = &tasks;
    steps.name(kate.id, "kate");
    steps.name(bob.id, "bob");
    for (t, name) in tasks
        .iter()
        .zip(["lesson_plan", "grading", "supplies", "calls"])
    {
        steps.name(t.id, name);
    }
    say("people: kate, bob; tasks: lesson_plan, grading, supplies, calls (all Kate's)");
    steps.sent();

    steps.start("Give Bob a new task: inserting it adds it to his list, in one transaction");
    // ANCHOR: add_task
    let errand = task("Pick up chalk", "2014-04-02", &bob);
    odm.insert_one(&errand).await?;
    // ANCHOR_END: add_task
    steps.name(errand.id, "chalk");
    say("Bob's list first, then the task: without a transaction, in that order");
    steps.sent();

    steps.start("Read both sides: a person's tasks, and each task's owner");
    // ANCHOR: both_sides
    let kate_loaded = odm
        .get::<Person>(kate.id)
        .populate(Person::tasks().populate().sort(Task::due_date().asc()))
        .await?
        .expect("inserted");
    let all_tasks = odm
        .find(Filter::all())
        .sort(Task::due_date().asc())
        .populate(Task::owner())
        .await?;
    // ANCHOR_END: both_sides
    let mut owned = Vec::new();
    for t in &kate_loaded.tasks {
        owned.push(t.loaded()?.description.clone());
    }
    list("Kate's tasks", owned);
    for t in &all_tasks {
        say(format_args!(
            "{:<18} due {}  owner {}",
            t.description,
            day(t.due_date),
            t.owner.loaded()?.name
        ));
    }
    steps.sent();

    steps.start("Reassign \"Write lesson plan\" to Bob, in a transaction");
    // ANCHOR: reassign
    // In a transaction where the deployment has them (`moved.in_transaction`).
    let moved = odm.reassign(Task::owner(), lesson_plan.id, bob.id).await?;
    assert!(moved.changed);
    // ANCHOR_END: reassign
    say(format_args!(
        "previous owner: {}; changed: {}; in a transaction: {}",
        shown_owner(&steps, moved.previous),
        moved.changed,
        moved.in_transaction
    ));
    steps.sent();

    steps.start("Reassign \"Grade papers\" to Bob without a transaction: the fixed order");
    // ANCHOR: reassign_never
    let moved = odm
        .reassign(Task::owner(), grading.id, bob.id)
        .transaction(TransactionMode::Never)
        .await?;
    assert!(moved.changed && !moved.in_transaction);
    // ANCHOR_END: reassign_never
    say(format_args!(
        "previous owner: {}; changed: {}; in a transaction: {}",
        shown_owner(&steps, moved.previous),
        moved.changed,
        moved.in_transaction
    ));
    say("1. add to Bob's list  2. set the task's owner  3. pull from Kate's list  4. add to Bob's list again, read the owner back");
    steps.sent();

    steps.start("A reassignment interrupted after its second write (simulated)");
    // ANCHOR: interrupted
    // Steps 1 and 2 of the fixed order, written with the driver alone; the process "dies"
    // before step 3, so Kate still lists the task.
    let people = odm.database().collection::<Document>("people");
    let tasks_raw = odm.database().collection::<Document>("tasks");
    people
        .update_one(
            doc! { "_id": bob.id },
            doc! { "$addToSet": { "tasks": supplies.id } },
        )
        .await?;
    tasks_raw
        .update_one(
            doc! { "_id": supplies.id },
            doc! { "$set": { "owner": bob.id } },
        )
        .await?;
    // ANCHOR_END: interrupted
    say("\"Buy supplies\" names Bob, and both Bob and Kate list it");
    steps.sent();

    steps.start("Verify the two sides: the sweep finds the half-done reassignment");
    // ANCHOR: verify
    let report = odm.verify_inverse(Task::owner()).await?;
    // ANCHOR_END: verify
    say_lines(steps.named(&report));
    for issue in &report.issues {
        if let InverseIssue::ExtraInParent { parent, child } = issue {
            say(format_args!(
                "extra: {} in {}",
                steps.show(child),
                steps.show(parent)
            ));
        }
    }
    steps.sent();

    steps.start("Verify and repair: the task's own owner is the source of truth");
    // ANCHOR: repair
    let repaired = odm.verify_inverse(Task::owner()).repair(true).await?;
    assert_eq!(repaired.parents_repaired, 1);
    let again = odm.verify_inverse(Task::owner()).await?;
    assert!(again.is_consistent());
    // ANCHOR_END: repair
    say_lines(steps.named(&repaired));
    say(format_args!("then: {}", again.to_string().trim_end()));
    steps.sent();

    steps.start("Delete Kate, who still owns a task: `restrict` refuses");
    // ANCHOR: restrict
    let refused = odm.delete_one(Person::id().eq(kate.id)).await;
    let Err(Error::DeleteRestricted(why)) = refused else {
        panic!("Kate still owns a task, got {refused:?}");
    };
    // ANCHOR_END: restrict
    say(format_args!("refused: {why}"));
    say(format_args!(
        "still there: {}",
        odm.get::<Person>(kate.id).await?.is_some()
    ));
    steps.sent();

    steps.start("Delete Kate's tasks (`pull` empties her list), then Kate");
    // ANCHOR: delete_tasks
    let deleted_tasks = odm.delete_many(Task::owner().refers_to(kate.id)).await?;
    let deleted_people = odm.delete_one(Person::id().eq(kate.id)).await?;
    // ANCHOR_END: delete_tasks
    say(format_args!(
        "tasks deleted: {deleted_tasks}; people deleted: {deleted_people}"
    ));
    steps.sent();

    steps.start("Delete a note softly: one update marks it, every query skips it");
    let note = |id, text: &str| Note {
        id,
        text: text.to_owned(),
        deleted_at: None,
    };
    odm.insert_many(&[note(1, "Room booked"), note(2, "Order the supplies")])
        .await?;
    steps.log().clear();
    // ANCHOR: soft_delete
    let marked = odm.delete_one(Note::id_field().eq(1)).await?;
    let live = odm.count(Filter::<Note>::all()).await?;
    // ANCHOR_END: soft_delete
    say(format_args!("notes marked: {marked}; live notes: {live}"));
    steps.sent();
    let stored = odm
        .database()
        .collection::<Document>("notes")
        .count_documents(doc! {})
        .await?;
    say(format_args!("notes stored, read with the driver: {stored}"));
    assert_eq!((marked, live, stored), (1, 1, 2));

    steps.start("List the deleted notes, restore the note, then delete and purge it");
    // ANCHOR: restore
    let bin = odm.find(Filter::<Note>::all().only_deleted()).await?;
    let restored = odm.restore(Note::id_field().eq(1)).await?;
    odm.delete_one(Note::id_field().eq(1)).await?;
    let purged = odm.purge(Note::id_field().eq(1)).await?;
    // ANCHOR_END: restore
    say(format_args!(
        "deleted notes listed: {}; restored: {restored}; purged: {purged}",
        bin.len()
    ));
    steps.sent();
    assert_eq!((bin.len(), restored, purged), (1, 1, 1));

    let final_bob = odm
        .get::<Person>(bob.id)
        .populate(Person::tasks().populate().sort(Task::due_date().asc()))
        .await?
        .expect("inserted");
    let mut names = Vec::new();
    for t in &final_bob.tasks {
        names.push(t.loaded()?.description.clone());
    }
    println!();
    list("Bob's tasks at the end", names);

    common::drop_database(&odm).await
}

fn person(name: &str) -> Person {
    Person {
        id: ObjectId::new(),
        name: name.into(),
        tasks: Vec::new(),
    }
}

fn task(description: &str, due: &str, owner: &Person) -> Task {
    let due_date = DateTime::parse_rfc3339_str(format!("{due}T00:00:00Z")).expect("a date");
    Task {
        id: ObjectId::new(),
        description: description.into(),
        due_date,
        owner: Ref::new(owner.id),
    }
}

fn day(date: DateTime) -> String {
    let full = date.try_to_rfc3339_string().unwrap_or_default();
    full.get(..10).unwrap_or(&full).to_owned()
}

fn shown_owner(steps: &common::Steps, previous: Option<ObjectId>) -> String {
    previous.map_or_else(
        || "none".to_owned(),
        |id| steps.show(&odm::bson::Bson::ObjectId(id)),
    )
}
