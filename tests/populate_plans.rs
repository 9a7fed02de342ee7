//! The two populate plans against each other: the `$in` plan (one `find` per relation and
//! level) and the lookup plan (the query and every level in one `aggregate`) give the same
//! documents, the same dangling-reference errors and the same typed output, on randomized data;
//! the commands each sends; the cost rule of `Plan::Auto`; what happens when the server refuses
//! the lookup.

mod common;
#[path = "common/feed.rs"]
mod feed;

use common::sent;
use feed::*;
use odm::bson::{doc, Document};
use odm::populate::Plan;
use odm::prelude::*;
use odm::testing::TestDb;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "regions")]
pub struct Region {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "suppliers")]
pub struct Supplier {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
    #[reference(on_delete = "nullify")]
    pub region: Option<Ref<Region>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "parts")]
pub struct Part {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
    #[serde(default)]
    pub qty: i64,
    #[reference(on_delete = "cascade")]
    pub supplier: Ref<Supplier>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "products")]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
    #[reference(many, max = 50, on_delete = "pull")]
    pub parts: Vec<Ref<Part>>,
    #[reference(on_delete = "nullify")]
    pub main: Option<Ref<Part>>,
}

/// A small deterministic generator (no dependency, the same data on every run).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// Regions, suppliers, parts and products with random references, some dangling (ids 900+
/// that do not exist), some repeated, some shared.
async fn random_catalog(db: &TestDb, seed: u64) -> odm::Result<()> {
    let mut rng = Rng(seed);
    let odm = db.odm();
    let id = |rng: &mut Rng, n: u64| {
        if rng.below(25) == 0 {
            900 + rng.below(50) as i32
        } else {
            rng.below(n) as i32
        }
    };
    let regions: Vec<Region> = (0..3)
        .map(|i| Region {
            id: i,
            name: format!("region {i}"),
        })
        .collect();
    let suppliers: Vec<Supplier> = (0..8)
        .map(|i| Supplier {
            id: i,
            name: format!("supplier {i}"),
            region: (rng.below(4) != 0).then(|| Ref::new(id(&mut rng, 3))),
        })
        .collect();
    let parts: Vec<Part> = (0..30)
        .map(|i| Part {
            id: i,
            name: format!("part {:02}", rng.below(100)),
            qty: rng.below(100) as i64,
            supplier: Ref::new(id(&mut rng, 8)),
        })
        .collect();
    let products: Vec<Product> = (0..40)
        .map(|i| Product {
            id: i,
            name: format!("product {i}"),
            parts: (0..rng.below(7))
                .map(|_| Ref::new(id(&mut rng, 30)))
                .collect(),
            main: (rng.below(3) != 0).then(|| Ref::new(id(&mut rng, 30))),
        })
        .collect();
    odm.insert_many(&regions).await?;
    odm.insert_many(&suppliers).await?;
    odm.insert_many(&parts).await?;
    odm.insert_many(&products).await?;
    db.commands().clear();
    Ok(())
}

/// What a populate returned, comparable across plans: every document with what its
/// references loaded (`Ref`'s `Debug` shows the loaded document), or the error's kind and
/// where it was met.
fn outcome<T: std::fmt::Debug>(r: odm::Result<Vec<T>>) -> String {
    match r {
        Ok(docs) => format!("{docs:#?}"),
        Err(odm::Error::DanglingReference {
            collection,
            path,
            target,
            ..
        }) => format!("dangling {collection}.{path} -> {target}"),
        Err(e) => format!("error {e}"),
    }
}

/// Asserts two outcomes equal, showing where they first differ.
fn same_outcome(by_in: &str, by_lookup: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (by_in.lines().collect(), by_lookup.lines().collect());
    if let Some(at) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        let from = at.saturating_sub(12);
        panic!(
            "the plans differ at line {at}:\n$in:\n{}\nlookup:\n{}",
            a[from..(at + 4).min(a.len())].join("\n"),
            b[from..(at + 4).min(b.len())].join("\n"),
        );
    }
}

/// The same query under both plans; asserts the same outcome and the commands each sent.
macro_rules! both_plans {
    ($db:expr, $levels:expr, |$plan:ident| $query:expr) => {{
        let $plan = Plan::In;
        let by_in = outcome($query.await);
        let in_sent = sent($db);
        let $plan = Plan::Lookup;
        let by_lookup = outcome($query.await);
        assert_eq!(sent($db), ["aggregate"], "the lookup plan: one command");
        assert!(
            in_sent.len() > $levels || by_in.starts_with("dangling"),
            "the $in plan: the query and one find per relation and level: {in_sent:?}"
        );
        assert!(in_sent.iter().all(|c| c == "find"), "{in_sent:?}");
        same_outcome(&by_in, &by_lookup);
        by_in
    }};
}

#[tokio::test]
async fn both_plans_give_the_same_documents_on_random_catalogs() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let mut dangling = 0;
    for seed in 1..=4u64 {
        for c in ["regions", "suppliers", "parts", "products"] {
            db.raw().collection::<Document>(c).drop().await?;
        }
        random_catalog(&db, seed).await?;
        let skip = || Product::parts().populate().dangling(Dangling::Skip);
        let three = || {
            skip().then(
                Part::supplier()
                    .populate()
                    .dangling(Dangling::Keep)
                    .then(Supplier::region().populate().dangling(Dangling::Skip)),
            )
        };
        let outcomes = [
            both_plans!(&db, 1, |plan| odm
                .find::<Product>(Filter::all())
                .populate(Product::parts())
                .populate_plan(plan)),
            both_plans!(&db, 1, |plan| odm
                .find::<Product>(Filter::all())
                .populate(skip())
                .populate(Product::main().populate().dangling(Dangling::Keep))
                .populate_plan(plan)),
            both_plans!(&db, 3, |plan| odm
                .find::<Product>(Filter::all())
                .sort(Product::name().desc())
                .populate(three())
                .populate_plan(plan)),
            both_plans!(&db, 2, |plan| odm
                .find::<Product>(Product::id_field().gte(10))
                .sort(Product::id_field().asc())
                .skip(3)
                .limit(20)
                .populate(
                    skip()
                        .select(Projection::include(&Part::name()).and(&Part::supplier()))
                        .filter(Part::qty().gt(30))
                        .sort(Part::name().asc())
                        .then(Part::supplier().populate().dangling(Dangling::Skip))
                )
                .populate_plan(plan)),
            both_plans!(&db, 2, |plan| odm
                .find::<Part>(Filter::all())
                .populate(Part::supplier().populate().then(Supplier::region()))
                .populate_plan(plan)),
            // Sorted by a field the projection leaves out: sorted before projecting.
            both_plans!(&db, 1, |plan| odm
                .find::<Product>(Filter::all())
                .populate(
                    skip()
                        .select(Projection::include(&Part::name()).and(&Part::supplier()))
                        .sort(Part::qty().desc())
                )
                .populate_plan(plan)),
            // Per-parent limits: sorted (limited inside the `$lookup`), as stored, with each
            // dangling policy, and under a filter with a next level.
            both_plans!(&db, 1, |plan| odm
                .find::<Product>(Filter::all())
                .populate(
                    Product::parts()
                        .populate()
                        .sort(Part::name().asc())
                        .limit_per_parent(2)
                )
                .populate_plan(plan)),
            both_plans!(&db, 1, |plan| odm
                .find::<Product>(Filter::all())
                .populate(skip().sort(Part::qty().desc()).limit_per_parent(3))
                .populate_plan(plan)),
            both_plans!(&db, 1, |plan| odm
                .find::<Product>(Filter::all())
                .populate(
                    Product::parts()
                        .populate()
                        .dangling(Dangling::Keep)
                        .limit_per_parent(2)
                )
                .populate_plan(plan)),
            both_plans!(&db, 2, |plan| odm
                .find::<Product>(Filter::all())
                .populate(
                    Product::parts()
                        .populate()
                        .filter(Part::qty().gt(20))
                        .sort(Part::name().desc())
                        .limit_per_parent(1)
                        .then(Part::supplier().populate().dangling(Dangling::Keep))
                )
                .populate_plan(plan)),
        ];
        dangling += outcomes
            .iter()
            .filter(|o| o.starts_with("dangling"))
            .count();
        assert!(outcomes[2].contains("region "), "three levels loaded");
    }
    assert!(dangling > 0, "the data has dangling references");
    Ok(())
}

#[tokio::test]
async fn both_plans_give_the_same_polymorphic_and_dbref_references() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let mut rng = Rng(7);
    let authors: Vec<Author> = (1..=4)
        .map(|id| Author {
            id,
            name: format!("author {id}"),
        })
        .collect();
    let users: Vec<User> = (1..=3)
        .map(|id| User {
            id,
            username: format!("user {id}"),
        })
        .collect();
    // The same ids in every collection: a lookup into one must not load another's.
    let books: Vec<Book> = (1..=4)
        .map(|id| Book {
            id,
            title: format!("book {id}"),
            author: Ref::new(1 + rng.below(4) as i32),
        })
        .collect();
    let subject = |rng: &mut Rng| {
        let id = 1 + rng.below(4) as i32;
        match rng.below(3) {
            0 => Subject::Book(Ref::new(id)),
            1 => Subject::Author(Ref::new(id)),
            _ => Subject::User(Ref::new(id.min(3))),
        }
    };
    let entries: Vec<FeedEntry> = (0..30)
        .map(|i| FeedEntry {
            id: i,
            verb: "liked".into(),
            subject: subject(&mut rng),
            mentions: (0..rng.below(4)).map(|_| subject(&mut rng)).collect(),
            via: (rng.below(2) == 0).then(|| subject(&mut rng)),
        })
        .collect();
    let shelves: Vec<Shelf> = (0..10)
        .map(|i| Shelf {
            id: i,
            favourite: (rng.below(2) == 0).then(|| Ref::new(1 + rng.below(4) as i32)),
            books: (0..rng.below(5))
                .map(|_| Ref::new(1 + rng.below(4) as i32))
                .collect(),
        })
        .collect();
    odm.insert_many(&authors).await?;
    odm.insert_many(&users).await?;
    odm.insert_many(&books).await?;
    odm.insert_many(&entries).await?;
    odm.insert_many(&shelves).await?;
    db.commands().clear();

    let feed = both_plans!(&db, 2, |plan| odm
        .find::<FeedEntry>(Filter::all())
        .populate(
            FeedEntry::subject()
                .populate()
                .with::<Book>(|p| p.then(Book::author()))
        )
        .populate(FeedEntry::mentions())
        .populate(
            FeedEntry::via()
                .populate()
                .with::<User>(|p| p.select(Projection::include(&User::username())))
        )
        .populate_plan(plan));
    assert!(feed.contains("author ") && feed.contains("user "));
    let shelves = both_plans!(&db, 2, |plan| odm
        .find::<Shelf>(Filter::all())
        .populate(Shelf::favourite())
        .populate(
            Shelf::books()
                .populate()
                .sort(Book::title().desc())
                .then(Book::author())
        )
        .populate_plan(plan));
    assert!(shelves.contains("book "), "arrays of DBRefs loaded");
    // Per-parent limits on a mixed array (one book and one author per entry, by title and
    // as stored) and on an array of DBRefs.
    let limited = both_plans!(&db, 1, |plan| odm
        .find::<FeedEntry>(Filter::all())
        .populate(
            FeedEntry::mentions()
                .populate()
                .with::<Book>(|p| p.sort(Book::title().desc()).limit_per_parent(1))
                .with::<Author>(|p| p.limit_per_parent(1))
        )
        .populate_plan(plan));
    assert!(limited.contains("book ") && limited.contains("author "));
    both_plans!(&db, 1, |plan| odm
        .find::<Shelf>(Filter::all())
        .populate(
            Shelf::books()
                .populate()
                .sort(Book::title().asc())
                .limit_per_parent(2)
        )
        .populate_plan(plan));
    Ok(())
}

/// A chain of three levels, for the command counts.
async fn small_chain(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    odm.insert_one(&Region {
        id: 1,
        name: "north".into(),
    })
    .await?;
    odm.insert_one(&Supplier {
        id: 1,
        name: "Acme".into(),
        region: Some(Ref::new(1)),
    })
    .await?;
    odm.insert_many(&[
        Part {
            id: 1,
            name: "bolt".into(),
            qty: 5,
            supplier: Ref::new(1),
        },
        Part {
            id: 2,
            name: "nut".into(),
            qty: 9,
            supplier: Ref::new(1),
        },
    ])
    .await?;
    odm.insert_one(&Product {
        id: 1,
        name: "shelf".into(),
        parts: vec![Ref::new(1), Ref::new(2)],
        main: Some(Ref::new(2)),
    })
    .await?;
    db.commands().clear();
    Ok(())
}

fn three_levels() -> impl odm::populate::IntoPopulate<Product> {
    Product::parts()
        .populate()
        .then(Part::supplier().populate().then(Supplier::region()))
}

#[tokio::test]
async fn the_lookup_plan_loads_three_levels_in_one_aggregate() -> odm::Result<()> {
    let db = common::db().await?;
    small_chain(&db).await?;
    let product = db
        .odm()
        .get::<Product>(1)
        .populate(three_levels())
        .populate_plan(Plan::Lookup)
        .await?
        .expect("product 1");
    let log = db.commands().take();
    assert_eq!(log.len(), 1, "one round trip");
    let command = log[0].command.clone().expect("logged with its document");
    assert_eq!(command.get_str("aggregate").unwrap(), "products");
    let pipeline = command.get_array("pipeline").unwrap();
    assert_eq!(
        pipeline[0].as_document().unwrap(),
        &doc! {"$match": {"_id": 1}}
    );
    assert_eq!(pipeline[1].as_document().unwrap(), &doc! {"$limit": 1i64});
    // What loaded is what is stored, read back with the raw driver.
    let region = common::stored_one(&db, "regions", 1).await.unwrap();
    for (r, id) in product.parts.iter().zip([1, 2]) {
        let part = r.loaded()?;
        let stored = common::stored_one(&db, "parts", id).await.unwrap();
        assert_eq!(part.name, stored.get_str("name").unwrap());
        let supplier = part.supplier.loaded()?;
        assert_eq!(supplier.name, "Acme");
        let loaded_region = supplier.region.as_ref().unwrap().loaded()?;
        assert_eq!(loaded_region.name, region.get_str("name").unwrap());
    }

    // The `$in` plan: the product, then one find per level.
    db.odm()
        .get::<Product>(1)
        .populate(three_levels())
        .populate_plan(Plan::In)
        .await?;
    assert_eq!(sent(&db), ["find", "find", "find", "find"]);
    Ok(())
}

/// A per-parent limit loads the first references in the populate's order and leaves the
/// others in the array, unloaded; the lookup plan limits inside the `$lookup` (only the first
/// documents of each parent come back), the `$in` plan loads every referenced document once.
/// Saving the document keeps every reference.
#[tokio::test]
async fn a_per_parent_limit_loads_the_first_references_and_keeps_the_others() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    let names = ["washer", "bolt", "nut", "gear", "axle"];
    let parts: Vec<Part> = (1..=5)
        .map(|id| Part {
            id,
            name: names[id as usize - 1].into(),
            qty: i64::from(id),
            supplier: Ref::new(1),
        })
        .collect();
    odm.insert_many(&parts).await?;
    // Product 2 references a part that does not exist: with fewer loaded than the limit, it
    // is found; past the limit, it is not checked.
    for (id, refs) in [
        (1, vec![1, 2, 3, 4, 5]),
        (2, vec![99, 5]),
        (3, vec![99, 1, 2]),
    ] {
        odm.insert_one(&Product {
            id,
            name: format!("product {id}"),
            parts: refs.into_iter().map(Ref::new).collect(),
            main: None,
        })
        .await?;
    }
    db.commands().clear();
    let names_of = |p: &Product| -> Vec<Option<String>> {
        p.parts
            .iter()
            .map(|r| r.get().map(|part| part.name.clone()))
            .collect()
    };
    let by_name = || {
        Product::parts()
            .populate()
            .sort(Part::name().asc())
            .limit_per_parent(2)
    };
    for plan in [Plan::In, Plan::Lookup] {
        let one = odm
            .get::<Product>(1)
            .populate(by_name())
            .populate_plan(plan)
            .await?
            .expect("product 1");
        // axle, bolt first by name; the rest follow unloaded, in their stored order.
        assert_eq!(
            one.parts.iter().map(|r| *r.id()).collect::<Vec<_>>(),
            [5, 2, 1, 3, 4],
            "{plan:?}"
        );
        assert_eq!(
            names_of(&one),
            [Some("axle".into()), Some("bolt".into()), None, None, None],
            "{plan:?}"
        );
        let log = db.commands().take();
        match plan {
            Plan::Lookup => {
                let command = log[0].command.clone().unwrap();
                let lookup = command.get_array("pipeline").unwrap()[2]
                    .as_document()
                    .unwrap()
                    .get_document("$lookup")
                    .unwrap()
                    .clone();
                assert_eq!(
                    lookup.get_array("pipeline").unwrap(),
                    &vec![
                        doc! {"$sort": {"name": 1, "_id": 1}}.into(),
                        doc! {"$limit": 2i64}.into(),
                    ]
                );
            }
            _ => {
                let find = log[1].command.clone().unwrap();
                assert_eq!(
                    find.get_document("sort").unwrap(),
                    &doc! {"name": 1, "_id": 1}
                );
                assert!(!find.contains_key("limit"), "{find}");
            }
        }
        // As stored, past a missing part: product 2 has one loaded, fewer than two, so the
        // missing part is an error; product 3 has two loaded and its missing part goes
        // unchecked.
        let err = odm
            .get::<Product>(2)
            .populate(Product::parts().populate().limit_per_parent(2))
            .populate_plan(plan)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, odm::Error::DanglingReference { missing, .. } if missing == "99"),
            "{err}"
        );
        let three = odm
            .get::<Product>(3)
            .populate(Product::parts().populate().limit_per_parent(2))
            .populate_plan(plan)
            .await?
            .expect("product 3");
        assert_eq!(
            names_of(&three),
            [None, Some("washer".into()), Some("bolt".into())]
        );
        // Saved as loaded, the product keeps all five references.
        odm.replace_one(&one).await?;
        let stored = common::stored_one(&db, "products", 1).await.unwrap();
        assert_eq!(stored.get_array("parts").unwrap().len(), 5, "{stored}");
        db.commands().clear();
    }
    Ok(())
}

/// A referenced document that does not decode, past a sorted per-parent limit: the `$in` plan
/// reads it and fails naming it; the lookup plan never reads it and loads the first ones.
#[tokio::test]
async fn a_malformed_document_past_the_limit_fails_only_the_plan_that_reads_it() -> odm::Result<()>
{
    let db = common::db().await?;
    small_chain(&db).await?;
    db.raw()
        .collection::<Document>("parts")
        .update_one(doc! { "_id": 2 }, doc! { "$set": { "qty": "nine" } })
        .await?;
    let first = || {
        Product::parts()
            .populate()
            .sort(Part::name().asc())
            .limit_per_parent(1)
    };
    let err = db
        .odm()
        .get::<Product>(1)
        .populate(first())
        .populate_plan(Plan::In)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::Decode { collection, path, .. } if collection == "parts" && path == "qty"),
        "{err}"
    );
    let product = db
        .odm()
        .get::<Product>(1)
        .populate(first())
        .populate_plan(Plan::Lookup)
        .await?
        .expect("product 1");
    assert_eq!(product.parts[0].loaded()?.name, "bolt");
    assert!(!product.parts[1].is_loaded());
    Ok(())
}

#[tokio::test]
async fn auto_chooses_by_the_cost_rule() -> odm::Result<()> {
    let db = common::db().await?;
    small_chain(&db).await?;
    let odm = db.odm().clone().with_populate_plan(Plan::Auto);
    // One document (a limit of 1), one level without options: the lookup, one round trip
    // instead of two.
    odm.get::<Product>(1).populate(Product::parts()).await?;
    assert_eq!(sent(&db), ["aggregate"]);
    // A page of at most 1,000: the lookup.
    odm.find::<Product>(Filter::all())
        .limit(odm::populate::LOOKUP_MAX_PARENTS)
        .populate(Product::parts())
        .populate(Product::main())
        .await?;
    assert_eq!(sent(&db), ["aggregate"]);
    // Next levels, or options, need sub-pipelines: `$in`.
    odm.get::<Product>(1).populate(three_levels()).await?;
    assert_eq!(sent(&db), ["find", "find", "find", "find"]);
    odm.get::<Product>(1)
        .populate(Product::parts().populate().sort(Part::name().asc()))
        .await?;
    assert_eq!(sent(&db), ["find", "find"]);
    // More parents, or no limit: the shared targets would come back once per parent; `$in`.
    odm.find::<Product>(Filter::all())
        .limit(odm::populate::LOOKUP_MAX_PARENTS + 1)
        .populate(Product::parts())
        .await?;
    assert_eq!(sent(&db), ["find", "find"]);
    odm.find::<Product>(Filter::all())
        .populate(Product::parts())
        .await?;
    assert_eq!(sent(&db), ["find", "find"]);
    // In a session: `$in` (a refused aggregate would abort the transaction).
    let mut session = odm.start_session().await?;
    odm.get::<Product>(1)
        .populate(Product::parts())
        .session(&mut session)
        .await?;
    assert_eq!(sent(&db), ["find", "find"]);
    // Nothing to populate: a plain find.
    odm.get::<Product>(1).await?;
    assert_eq!(sent(&db), ["find"]);
    Ok(())
}

/// The cost rule never chooses the lookup plan on a sharded cluster, so it must know what the
/// handle talks to before its first lookup: a handle made by `Odm::connect` (or a `TestDb`'s)
/// learns it from the driver's monitoring and sends nothing more; one wrapping a driver
/// database asks once, with `hello`, before its first lookup.
#[tokio::test]
async fn the_cost_rule_knows_the_deployment_before_its_first_lookup() -> odm::Result<()> {
    let db = common::db().await?;
    small_chain(&db).await?;
    fn get(odm: &odm::Odm) -> odm::ops::FindOne<'_, Product> {
        odm.get::<Product>(1)
            .populate(Product::parts())
            .populate_plan(Plan::Auto)
    }
    get(db.odm()).await?;
    assert_eq!(sent(&db), ["aggregate"], "known from the monitoring");
    let wrapped = odm::Odm::new(db.odm().database().clone()).with_catalog(common::catalog());
    get(&wrapped).await?;
    assert_eq!(sent(&db), ["hello", "aggregate"], "asked once");
    get(&wrapped).await?;
    assert_eq!(sent(&db), ["aggregate"]);
    // A plan named by the query needs no rule, and no `hello`.
    let forced = odm::Odm::new(db.odm().database().clone()).with_catalog(common::catalog());
    forced
        .get::<Product>(1)
        .populate(Product::parts())
        .populate_plan(Plan::Lookup)
        .await?;
    assert_eq!(sent(&db), ["aggregate"]);
    Ok(())
}

#[tokio::test]
async fn the_handles_plan_applies_unless_the_query_names_one() -> odm::Result<()> {
    let db = common::db().await?;
    small_chain(&db).await?;
    let odm = db.odm().clone().with_populate_plan(Plan::Lookup);
    assert_eq!(odm.populate_plan(), Plan::Lookup);
    odm.find::<Product>(Filter::all())
        .populate(Product::parts())
        .await?;
    assert_eq!(sent(&db), ["aggregate"]);
    odm.find::<Product>(Filter::all())
        .populate(Product::parts())
        .populate_plan(Plan::In)
        .await?;
    assert_eq!(sent(&db), ["find", "find"]);
    Ok(())
}

/// Parts of 1 MB: a product referencing 20 of them is past the 16 MB of one document once its
/// parts are looked up into it.
async fn oversized(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    small_chain(db).await?;
    let big: Vec<Part> = (10..30)
        .map(|id| Part {
            id,
            name: "x".repeat(1024 * 1024),
            qty: 1,
            supplier: Ref::new(1),
        })
        .collect();
    odm.insert_many(&big).await?;
    db.raw()
        .collection::<Document>("products")
        .update_one(
            doc! {"_id": 1},
            doc! {"$set": {"parts": (10..30).collect::<Vec<i32>>()}},
        )
        .await?;
    db.commands().clear();
    Ok(())
}

#[tokio::test]
async fn a_refused_lookup_is_a_typed_error_when_forced_and_falls_back_under_auto() -> odm::Result<()>
{
    let db = common::db().await?;
    oversized(&db).await?;
    let err = db
        .odm()
        .get::<Product>(1)
        .populate(Product::parts())
        .populate_plan(Plan::Lookup)
        .await
        .expect_err("past 16 MB");
    match &err {
        odm::Error::LookupRefused {
            collection, code, ..
        } => {
            assert_eq!(collection, "products");
            assert_ne!(*code, 0);
        }
        other => panic!("expected LookupRefused, got {other}"),
    }
    assert_eq!(sent(&db), ["aggregate"]);

    let odm = db.odm().clone().with_populate_plan(Plan::Auto);
    let product = odm
        .get::<Product>(1)
        .populate(Product::parts())
        .await?
        .expect("product 1");
    assert!(product.parts.iter().all(Ref::is_loaded));
    let commands = sent(&db);
    assert_eq!(
        commands[..3],
        ["aggregate", "find", "find"],
        "the refused aggregate, then the $in plan (and the getMores of 20 MB of parts)"
    );
    assert!(commands[3..].iter().all(|c| c == "getMore"), "{commands:?}");
    Ok(())
}

#[tokio::test]
async fn a_malformed_document_met_by_a_lookup_names_collection_id_and_field() -> odm::Result<()> {
    let db = common::db().await?;
    small_chain(&db).await?;
    db.raw()
        .collection::<Document>("suppliers")
        .update_one(doc! {"_id": 1}, doc! {"$set": {"name": 42}})
        .await?;
    let err = db
        .odm()
        .get::<Product>(1)
        .populate(three_levels())
        .populate_plan(Plan::Lookup)
        .await
        .expect_err("a number where a name is expected");
    let text = err.to_string();
    assert!(
        text.contains("suppliers") && text.contains("name") && text.contains('1'),
        "{text}"
    );
    Ok(())
}
