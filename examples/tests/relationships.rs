//! The tests shown in the guide's "Populate" and "Delete rules and two-way consistency"
//! chapters: the number of commands populate sends, batching, nested and same-level paths,
//! and an interrupted reassignment found and repaired. Each test gets a database of its own.

use std::time::Duration;

use odm::bson::{doc, Bson, Document};
use odm::populate::Plan;
use odm::prelude::*;
use odm::relations::InverseIssue;
use odm::testing::TestDb;
use odm::{Error, TransactionMode};

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "suppliers")]
struct Supplier {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[reference(on_delete = "nullify")]
    supplier: Option<Ref<Supplier>>,
}

// ANCHOR: product
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[reference(many, max = 200, on_delete = "pull")]
    parts: Vec<Ref<Part>>,
    /// A second relation of the same level.
    #[reference(on_delete = "nullify")]
    maker: Option<Ref<Supplier>>,
}
// ANCHOR_END: product

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "people")]
struct Person {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[reference(many, max = 1000, inverse = "owner", on_delete = "pull")]
    tasks: Vec<Ref<Task>>,
}

#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "tasks")]
struct Task {
    #[serde(rename = "_id")]
    id: ObjectId,
    description: String,
    #[parent(inverse = "tasks")]
    owner: Ref<Person>,
}

/// Eight parts (each with a supplier) and 100 products of three parts each.
async fn catalog(db: &TestDb) -> odm::Result<(Vec<Part>, Vec<Product>)> {
    let acme = Supplier {
        id: ObjectId::new(),
        name: "Acme".into(),
    };
    let parts: Vec<Part> = (0..8)
        .map(|i| Part {
            id: ObjectId::new(),
            name: format!("part {i}"),
            supplier: Some(Ref::new(acme.id)),
        })
        .collect();
    let products: Vec<Product> = (0..100)
        .map(|i| Product {
            id: ObjectId::new(),
            name: format!("product {i}"),
            parts: (i..i + 3).map(|j| Ref::new(parts[j % 8].id)).collect(),
            maker: Some(Ref::new(acme.id)),
        })
        .collect();
    db.odm().insert_one(&acme).await?;
    db.odm().insert_many(&parts).await?;
    db.odm().insert_many(&products).await?;
    db.commands().clear();
    Ok((parts, products))
}

/// The collection each command was sent to.
fn targets(db: &TestDb) -> Vec<String> {
    db.commands()
        .take()
        .iter()
        .filter_map(|c| c.command.as_ref()?.get_str(&c.name).ok().map(str::to_owned))
        .collect()
}

// ANCHOR: one_find_per_level
#[tokio::test]
async fn populate_sends_one_find_whatever_the_number_of_products() -> odm::Result<()> {
    let db = TestDb::new().await?;
    catalog(&db).await?;

    let products = db
        .odm()
        .find(Filter::<Product>::all())
        .populate(Product::parts())
        .await?;

    assert_eq!(products.len(), 100);
    assert!(products.iter().all(|p| p.parts.iter().all(Ref::is_loaded)));
    // 300 references to 8 distinct parts: one find of the products, one of the parts.
    let sent = db.commands().take();
    assert_eq!(sent.len(), 2);
    let parts_find = sent[1].command.as_ref().expect("documents are logged");
    let ids = parts_find
        .get_document("filter")
        .and_then(|f| f.get_document("_id"))
        .and_then(|i| i.get_array("$in"))
        .map(Vec::len);
    assert_eq!(ids.ok(), Some(8));
    Ok(())
}
// ANCHOR_END: one_find_per_level

// ANCHOR: batch_size
#[tokio::test]
async fn batch_size_splits_the_ids_into_several_finds() -> odm::Result<()> {
    let db = TestDb::new().await?;
    catalog(&db).await?;

    let parts = Product::parts().populate().batch_size(3);
    db.odm()
        .find(Filter::<Product>::all())
        .populate(parts)
        .await?;

    // 8 ids, at most 3 per find: batches of 3, 3 and 2.
    assert_eq!(targets(&db), ["products", "parts", "parts", "parts"]);
    Ok(())
}
// ANCHOR_END: batch_size

// ANCHOR: levels
#[tokio::test]
async fn one_find_per_relation_and_level() -> odm::Result<()> {
    let db = TestDb::new().await?;
    catalog(&db).await?;

    // Two relations of the first level, fetched concurrently; one of the second level.
    db.odm()
        .find(Filter::<Product>::all())
        .populate(Product::parts().populate().then(Part::supplier()))
        .populate(Product::maker())
        .await?;

    let mut sent = targets(&db);
    assert_eq!(sent.remove(0), "products");
    sent.sort();
    assert_eq!(sent, ["parts", "suppliers", "suppliers"]);
    Ok(())
}
// ANCHOR_END: levels

// ANCHOR: filter
#[tokio::test]
async fn a_filtered_populate_leaves_the_others_unloaded() -> odm::Result<()> {
    let db = TestDb::new().await?;
    catalog(&db).await?;

    let only_part_1 = Product::parts()
        .populate()
        .filter(Part::name().eq("part 1"));
    let product = db
        .odm()
        .find_one(Product::name().eq("product 0"))
        .populate(only_part_1)
        .await?
        .expect("inserted");

    // product 0 has parts 0, 1 and 2: only part 1 is loaded, and that is not an error.
    let loaded: Vec<bool> = product.parts.iter().map(Ref::is_loaded).collect();
    assert_eq!(loaded, [false, true, false]);
    Ok(())
}
// ANCHOR_END: filter

// ANCHOR: sorted_batches
#[tokio::test]
async fn a_sorted_populate_must_fit_in_one_find() -> odm::Result<()> {
    let db = TestDb::new().await?;
    catalog(&db).await?;

    let sorted = Product::parts()
        .populate()
        .sort(Part::name().desc())
        .batch_size(3);
    let result = db
        .odm()
        .find(Filter::<Product>::all())
        .populate(sorted)
        .await;

    assert!(matches!(result, Err(Error::Unsupported(_))), "{result:?}");
    Ok(())
}
// ANCHOR_END: sorted_batches

// ANCHOR: limit_per_parent
#[tokio::test]
async fn each_product_loads_its_first_two_parts_by_name() -> odm::Result<()> {
    let db = TestDb::new().await?;
    catalog(&db).await?;

    let first_two = Product::parts()
        .populate()
        .sort(Part::name().asc())
        .limit_per_parent(2);
    let products = db
        .odm()
        .find(Product::name().eq("product 7"))
        .populate(first_two)
        .populate_plan(Plan::Lookup)
        .await?;

    // Product 7 holds parts 7, 0 and 1: parts 0 and 1 come first by name and are loaded;
    // part 7 stays in the array, unloaded.
    let parts = &products[0].parts;
    assert_eq!(parts[0].loaded()?.name, "part 0");
    assert_eq!(parts[1].loaded()?.name, "part 1");
    assert!(!parts[2].is_loaded());
    // One aggregate: `$sort` and `$limit` inside the `$lookup`, two parts per product.
    assert_eq!(db.commands().names(), ["aggregate"]);
    Ok(())
}
// ANCHOR_END: limit_per_parent

// ANCHOR: children_without_limit
#[tokio::test]
async fn children_without_a_limit_is_one_find() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let kate = Person {
        id: ObjectId::new(),
        name: "Kate Monster".into(),
        tasks: Vec::new(),
    };
    db.odm().insert_one(&kate).await?;
    for description in ["Write lesson plan", "Grade papers"] {
        db.odm().insert_one(&task(description, &kate)).await?;
    }
    db.commands().clear();

    let people = [kate];
    let tasks = db.odm().children(Task::owner(), &people).await?;

    assert_eq!(tasks.of(&people[0]).len(), 2);
    assert_eq!(db.commands().names(), ["find"]);
    Ok(())
}
// ANCHOR_END: children_without_limit

fn task(description: &str, owner: &Person) -> Task {
    Task {
        id: ObjectId::new(),
        description: description.into(),
        owner: Ref::new(owner.id),
    }
}

/// Kate owns one task; Bob owns none.
async fn two_people(db: &TestDb) -> odm::Result<(Person, Person, Task)> {
    let mut kate = Person {
        id: ObjectId::new(),
        name: "Kate Monster".into(),
        tasks: Vec::new(),
    };
    let bob = Person {
        id: ObjectId::new(),
        name: "Bob".into(),
        tasks: Vec::new(),
    };
    let plan = task("Write lesson plan", &kate);
    kate.tasks.push(Ref::new(plan.id));
    db.odm().insert_many([&kate, &bob]).await?;
    db.odm().insert_one(&plan).await?;
    Ok((kate, bob, plan))
}

// ANCHOR: interrupted
#[tokio::test]
async fn an_interrupted_reassignment_is_found_and_repaired() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let (_kate, bob, plan) = two_people(&db).await?;

    // The fixed order, stopped after its first write (Bob's list).
    let interrupted = db
        .odm()
        .reassign(Task::owner(), plan.id, bob.id)
        .transaction(TransactionMode::Never)
        .fail_after_writes(1)
        .await;
    assert!(interrupted.is_err());

    // The task still names Kate: Bob lists a task that is not his.
    let report = db.odm().verify_inverse(Task::owner()).await?;
    assert_eq!(
        report.issues,
        [InverseIssue::ExtraInParent {
            parent: Bson::ObjectId(bob.id),
            child: Bson::ObjectId(plan.id),
        }]
    );

    let repaired = db.odm().verify_inverse(Task::owner()).repair(true).await?;
    assert_eq!(repaired.parents_repaired, 1);
    assert!(db
        .odm()
        .verify_inverse(Task::owner())
        .await?
        .is_consistent());
    Ok(())
}
// ANCHOR_END: interrupted

// ANCHOR: interrupted_transaction
#[tokio::test]
async fn an_interrupted_transaction_changes_nothing() -> odm::Result<()> {
    let db = TestDb::new().await?;
    if !db.odm().supports_transactions().await? {
        eprintln!("skipped: a standalone server has no transactions");
        return Ok(());
    }
    let (kate, bob, plan) = two_people(&db).await?;

    let interrupted = db
        .odm()
        .reassign(Task::owner(), plan.id, bob.id)
        .fail_after_writes(2)
        .await;
    assert!(interrupted.is_err());

    // Aborted: the task is still Kate's, and both sides agree.
    let stored = db.raw().collection::<Document>("tasks");
    let owner = stored.find_one(doc! { "_id": plan.id }).await?;
    assert_eq!(
        owner.and_then(|t| t.get_object_id("owner").ok()),
        Some(kate.id)
    );
    assert!(db
        .odm()
        .verify_inverse(Task::owner())
        .await?
        .is_consistent());
    Ok(())
}
// ANCHOR_END: interrupted_transaction

// ANCHOR: delete_in_session
#[tokio::test]
async fn delete_rules_run_in_the_callers_transaction() -> odm::Result<()> {
    let db = TestDb::new().await?;
    if !db.odm().supports_transactions().await? {
        eprintln!("skipped: a standalone server has no transactions");
        return Ok(());
    }
    let (kate, _bob, plan) = two_people(&db).await?;
    let odm = db.odm();

    let mut session = odm.start_session().await?;
    session.start_transaction().await?;
    odm.delete_one(Task::id().eq(plan.id))
        .session(&mut session)
        .await?;
    session.abort_transaction().await?;

    // Nothing happened: the task is there, and Kate still lists it.
    let kate_now = odm.get::<Person>(kate.id).await?.expect("inserted");
    assert_eq!(kate_now.tasks, [Ref::new(plan.id)]);
    assert_eq!(odm.count(Task::id().eq(plan.id)).await?, 1);
    Ok(())
}
// ANCHOR_END: delete_in_session

// ANCHOR: caller_retry
/// Hands a task over and renames it, in one transaction of the caller's own. odm does not
/// retry inside it; on a transient error (a write conflict) the caller aborts and runs the
/// whole transaction again, with a short pause, for as long as it sees fit.
async fn hand_over(odm: &Odm, task: ObjectId, to: ObjectId, name: &str) -> odm::Result<u32> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut session = odm.start_session().await?;
        session.start_transaction().await?;
        let outcome = async {
            odm.reassign(Task::owner(), task, to)
                .session(&mut session)
                .await?;
            odm.update_by_id::<Task>(task, Task::description().set(name.to_owned()))
                .session(&mut session)
                .await?;
            session.commit_transaction().await?;
            Ok::<_, Error>(())
        }
        .await;
        match outcome {
            Ok(()) => return Ok(attempts),
            Err(e) if e.is_transient() && attempts < 10 => {
                let _ = session.abort_transaction().await;
                tokio::time::sleep(Duration::from_millis(10 * u64::from(attempts))).await;
            }
            Err(e) => return Err(e),
        }
    }
}
// ANCHOR_END: caller_retry

#[tokio::test]
async fn a_caller_retries_its_own_transaction_on_a_transient_error() -> odm::Result<()> {
    let db = TestDb::new().await?;
    if !db.odm().supports_transactions().await? {
        eprintln!("skipped: a standalone server has no transactions");
        return Ok(());
    }
    let (kate, bob, plan) = two_people(&db).await?;

    // Another transaction holds Kate's document for 200 ms: the first attempt conflicts.
    let mut other = db.raw().client().start_session().await?;
    other.start_transaction().await?;
    db.raw()
        .collection::<Document>("people")
        .update_one(doc! {"_id": kate.id}, doc! {"$set": {"name": "Kate M."}})
        .session(&mut other)
        .await?;
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        other.abort_transaction().await
    });

    // ANCHOR: retry_deadline
    let odm = db.odm().clone().with_retry_deadline(Duration::from_secs(5));
    // ANCHOR_END: retry_deadline
    let attempts = hand_over(&odm, plan.id, bob.id, "Write the lesson plan").await?;
    release.await.expect("release")?;
    assert!(attempts > 1, "the first attempt met the write conflict");
    let task = db.odm().get::<Task>(plan.id).await?.expect("inserted");
    assert_eq!(task.owner, Ref::new(bob.id));
    assert_eq!(task.description, "Write the lesson plan");
    Ok(())
}
