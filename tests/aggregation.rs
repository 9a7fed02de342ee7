//! Typed aggregation against a real server: `$match` with typed filters, `$sort`, `$skip`,
//! `$limit`, `$project` into a view, `$group` with every typed accumulator by a field or a
//! compound key, `$unwind` of an array, `$lookup` along declared references both ways,
//! `distinct`, a raw stage with a typed output, kinds, hostile values kept literal, and decode
//! errors naming collection, `_id` and field. Every pipeline is one `aggregate` (plus its
//! `getMore`s), checked in the command log.

mod common;

use common::{last_command, sent};
use odm::aggregate::{add_to_set, avg, count, first, last, lit, max, min, month, push, sum, year};
use odm::bson::{doc, Bson, DateTime, Document};
use odm::prelude::*;
use odm::testing::TestDb;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    #[reference]
    product: Ref<Product>,
    quantity: i32,
    price: f64,
    tags: Vec<String>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    product: Ref<Product>,
    stars: i32,
    at: DateTime,
}

/// Two products, five parts, four reviews over three months; the log emptied.
async fn catalog(db: &TestDb) -> odm::Result<()> {
    let odm = db.odm();
    let products = [(1, "bicycle"), (2, "scooter")].map(|(id, name)| Product {
        id,
        name: name.to_owned(),
    });
    odm.insert_many(&products).await?;
    let parts = [
        (1, "frame", 1, 2, 120.0, vec!["steel"]),
        (2, "wheel", 1, 6, 40.0, vec!["rubber", "steel"]),
        (3, "bell", 1, 10, 5.0, vec![]),
        (4, "deck", 2, 3, 60.0, vec!["wood"]),
        (5, "wheel", 2, 4, 30.0, vec!["rubber"]),
    ]
    .map(|(id, name, product, quantity, price, tags)| Part {
        id,
        name: name.to_owned(),
        product: Ref::new(product),
        quantity,
        price,
        tags: tags.into_iter().map(str::to_owned).collect(),
    });
    odm.insert_many(&parts).await?;
    let day = |y: i32, m: u8, d: u8| {
        DateTime::builder()
            .year(y)
            .month(m)
            .day(d)
            .build()
            .expect("a date")
    };
    let reviews = [
        (1, 1, 5, day(2024, 1, 3)),
        (2, 1, 3, day(2024, 1, 20)),
        (3, 2, 4, day(2024, 2, 1)),
        (4, 1, 4, day(2024, 3, 9)),
    ]
    .map(|(id, product, stars, at)| Review {
        id,
        product: Ref::new(product),
        stars,
        at,
    });
    odm.insert_many(&reviews).await?;
    db.commands().clear();
    Ok(())
}

#[derive(Deserialize, Debug, PartialEq)]
struct PartsPerProduct {
    #[serde(rename = "_id")]
    product: Ref<Product>,
    parts: i64,
    stock: i64,
    mean_price: f64,
    cheapest: f64,
    dearest: f64,
    names: Vec<String>,
    distinct_names: Vec<String>,
    first_name: String,
    last_name: String,
}

#[tokio::test]
async fn group_by_a_reference_with_every_accumulator() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let per_product: Vec<PartsPerProduct> = db
        .odm()
        .aggregate::<Part>()
        .sort(Part::id_field().asc())
        .group(odm::group!(PartsPerProduct {
            by product: Part::product(),
            parts: count(),
            stock: sum(Part::quantity()),
            mean_price: avg(Part::price()),
            cheapest: min(Part::price()),
            dearest: max(Part::price()),
            names: push(Part::name()),
            distinct_names: add_to_set(Part::name()),
            first_name: first(Part::name()),
            last_name: last(Part::name()),
        }))
        .sort(odm::view_field!(PartsPerProduct, stock).desc())
        .await?;
    assert_eq!(per_product.len(), 2);
    let bicycle = &per_product[0];
    assert_eq!(bicycle.product, Ref::new(1));
    assert_eq!((bicycle.parts, bicycle.stock), (3, 18));
    assert_eq!(bicycle.mean_price, 55.0);
    assert_eq!((bicycle.cheapest, bicycle.dearest), (5.0, 120.0));
    assert_eq!(bicycle.names, ["frame", "wheel", "bell"]);
    let mut set = bicycle.distinct_names.clone();
    set.sort();
    assert_eq!(set, ["bell", "frame", "wheel"]);
    assert_eq!(
        (&*bicycle.first_name, &*bicycle.last_name),
        ("frame", "bell")
    );
    assert_eq!((per_product[1].parts, per_product[1].stock), (2, 7));

    let command = last_command(&db, "aggregate");
    let pipeline = command.get_array("pipeline").expect("a pipeline");
    assert_eq!(
        pipeline[1],
        Bson::Document(doc! { "$group": {
            "_id": "$product",
            "parts": { "$sum": 1 },
            "stock": { "$sum": "$quantity" },
            "mean_price": { "$avg": "$price" },
            "cheapest": { "$min": "$price" },
            "dearest": { "$max": "$price" },
            "names": { "$push": "$name" },
            "distinct_names": { "$addToSet": "$name" },
            "first_name": { "$first": "$name" },
            "last_name": { "$last": "$name" },
        } })
    );
    assert_eq!(
        pipeline[2],
        Bson::Document(doc! { "$sort": { "stock": -1 } })
    );
    Ok(())
}

#[derive(Deserialize, Debug, PartialEq)]
struct Month {
    year: i32,
    month: i32,
}

#[derive(Deserialize, Debug, PartialEq)]
struct ReviewsPerMonth {
    #[serde(rename = "_id")]
    month: Month,
    reviews: i64,
    stars: f64,
}

#[tokio::test]
async fn group_by_a_compound_key_of_date_parts() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let months: Vec<ReviewsPerMonth> = db
        .odm()
        .aggregate::<Review>()
        .filter(Review::product().eq(Ref::new(1)))
        .group(odm::group!(ReviewsPerMonth {
            by month: { year: year(Review::at()), month: month(Review::at()) },
            reviews: count(),
            stars: avg(Review::stars()),
        }))
        .sort(odm::view_field!(ReviewsPerMonth, month.month as "_id.month").desc())
        .await?;
    let shown: Vec<(i32, i32, i64, f64)> = months
        .iter()
        .map(|m| (m.month.year, m.month.month, m.reviews, m.stars))
        .collect();
    assert_eq!(shown, [(2024, 3, 1, 4.0), (2024, 1, 2, 4.0)]);
    assert_eq!(sent(&db), ["aggregate"]);
    Ok(())
}

#[derive(Deserialize, Debug, PartialEq)]
struct Line {
    name: String,
    price: f64,
}

#[tokio::test]
async fn match_sort_skip_limit_and_project_into_a_view() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let lines: Vec<Line> = db
        .odm()
        .aggregate::<Part>()
        .filter(Part::price().gte(10.0) & Part::tags().contains("rubber"))
        .sort(Part::price().desc())
        .skip(0)
        .limit(1)
        .project(odm::project!(Line {
            name: Part::name(),
            price: Part::price()
        }))
        .await?;
    assert_eq!(
        lines,
        [Line {
            name: "wheel".into(),
            price: 40.0
        }]
    );
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline"),
        &vec![
            Bson::Document(doc! { "$match": { "$and": [
                { "price": { "$gte": 10.0 } },
                { "tags": "rubber" },
            ] } }),
            Bson::Document(doc! { "$sort": { "price": -1 } }),
            Bson::Document(doc! { "$skip": 0_i64 }),
            Bson::Document(doc! { "$limit": 1_i64 }),
            Bson::Document(doc! { "$project": { "_id": 0, "name": "$name", "price": "$price" } }),
        ]
    );
    Ok(())
}

#[derive(Deserialize, Debug, PartialEq)]
struct Tagged {
    #[serde(rename = "_id")]
    id: i32,
    tag: String,
}

#[derive(Deserialize, Debug, PartialEq)]
struct PerTag {
    #[serde(rename = "_id")]
    tag: String,
    parts: Vec<i32>,
}

#[tokio::test]
async fn unwind_an_array_into_a_view_then_group() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let per_tag: Vec<PerTag> = db
        .odm()
        .aggregate::<Part>()
        .sort(Part::id_field().asc())
        .unwind(&Part::tags(), odm::view_field!(Tagged, tag))
        .group(odm::group!(PerTag {
            by tag: odm::view_field!(Tagged, tag),
            parts: push(odm::view_field!(Tagged, id as "_id")),
        }))
        .sort(odm::view_field!(PerTag, tag as "_id").asc())
        .await?;
    let shown: Vec<(&str, &[i32])> = per_tag
        .iter()
        .map(|t| (t.tag.as_str(), t.parts.as_slice()))
        .collect();
    assert_eq!(
        shown,
        [
            ("rubber", &[2, 5][..]),
            ("steel", &[1, 2][..]),
            ("wood", &[4][..])
        ]
    );
    let command = last_command(&db, "aggregate");
    let pipeline = command.get_array("pipeline").expect("a pipeline");
    assert_eq!(pipeline[1], Bson::Document(doc! { "$unwind": "$tags" }));
    assert_eq!(
        pipeline[2],
        Bson::Document(doc! { "$addFields": { "tag": "$tags" } })
    );

    // Unwound in place: the element under the array's own name, no `$addFields`.
    #[derive(Deserialize)]
    struct InPlace {
        tags: String,
    }
    let unwound: Vec<InPlace> = db
        .odm()
        .aggregate::<Part>()
        .unwind(&Part::tags(), odm::view_field!(InPlace, tags))
        .await?;
    assert_eq!(unwound.len(), 5);
    assert!(unwound.iter().all(|u| !u.tags.is_empty()));
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline"),
        &vec![Bson::Document(doc! { "$unwind": "$tags" })]
    );
    Ok(())
}

#[derive(Deserialize, Debug)]
struct PartWithProduct {
    name: String,
    product: Vec<Product>,
}

#[derive(Deserialize, Debug)]
struct ProductWithParts {
    name: String,
    parts: Vec<Part>,
}

#[tokio::test]
async fn lookup_along_a_declared_reference_both_ways() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let lines: Vec<PartWithProduct> = db
        .odm()
        .aggregate::<Part>()
        .filter(Part::name().eq("wheel"))
        .sort(Part::id_field().asc())
        .lookup(&Part::product(), odm::view_field!(PartWithProduct, product))
        .await?;
    let shown: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l.name.as_str(), l.product[0].name.as_str()))
        .collect();
    assert_eq!(shown, [("wheel", "bicycle"), ("wheel", "scooter")]);
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline")[2],
        Bson::Document(doc! { "$lookup": {
            "from": "products", "localField": "product", "foreignField": "_id", "as": "product",
        } })
    );

    let products: Vec<ProductWithParts> = db
        .odm()
        .aggregate::<Product>()
        .sort(Product::id_field().asc())
        .lookup_referrers(&Part::product(), odm::view_field!(ProductWithParts, parts))
        .await?;
    let shown: Vec<(&str, usize)> = products
        .iter()
        .map(|p| (p.name.as_str(), p.parts.len()))
        .collect();
    assert_eq!(shown, [("bicycle", 3), ("scooter", 2)]);
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline")[1],
        Bson::Document(doc! { "$lookup": {
            "from": "parts", "localField": "_id", "foreignField": "product", "as": "parts",
        } })
    );
    Ok(())
}

#[derive(Deserialize, Debug, PartialEq)]
struct Echo {
    #[serde(rename = "_id")]
    key: String,
    names: Vec<String>,
    marks: Vec<String>,
}

#[tokio::test]
async fn hostile_values_stay_literal() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let hostile = Part {
        id: 9,
        name: "$where".into(),
        product: Ref::new(1),
        quantity: 1,
        price: 1.0,
        tags: vec!["$$ROOT".into()],
    };
    db.odm().insert_one(&hostile).await?;
    let echoed: Vec<Echo> = db
        .odm()
        .aggregate::<Part>()
        .filter(Part::name().eq("$where") | Part::tags().contains("$$ROOT"))
        .group(odm::group!(Echo {
            by key: lit("$$ROOT"),
            names: push(Part::name()),
            marks: push(lit("$name")),
        }))
        .await?;
    assert_eq!(
        echoed,
        [Echo {
            key: "$$ROOT".into(),
            names: vec!["$where".into()],
            marks: vec!["$name".into()],
        }]
    );
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline")[1],
        Bson::Document(doc! { "$group": {
            "_id": { "$literal": "$$ROOT" },
            "names": { "$push": "$name" },
            "marks": { "$push": { "$literal": "$name" } },
        } })
    );
    // A path taken from input cannot name an operator or a variable.
    let err = odm::Field::<Part, String>::at_path("$$ROOT").expect_err("refused");
    assert!(matches!(err, odm::Error::InvalidPath { .. }), "{err}");
    // The stored documents are untouched.
    let stored = common::stored_one(&db, "parts", 9).await.expect("stored");
    assert_eq!(stored.get_str("name").ok(), Some("$where"));
    assert_eq!(common::stored(&db, "parts").await.len(), 6);
    Ok(())
}

#[derive(Deserialize, Debug, PartialEq)]
struct Total {
    n: i64,
}

#[tokio::test]
async fn raw_stage_with_a_typed_output_and_batches() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let total: Vec<Total> = db
        .odm()
        .aggregate::<Part>()
        .filter(Part::product().eq(Ref::new(1)))
        .stage(doc! { "$count": "n" })
        .output::<Total>()
        .await?;
    assert_eq!(total, [Total { n: 3 }]);
    assert_eq!(sent(&db), ["aggregate"]);

    // Five parts two at a time: one `aggregate`, then a `getMore` per further batch.
    let all: Vec<Part> = db.odm().aggregate::<Part>().batch_size(2).await?;
    assert_eq!(all.len(), 5);
    assert_eq!(sent(&db), ["aggregate", "getMore", "getMore"]);

    // Inside a session.
    let mut session = db.odm().start_session().await?;
    let some: Vec<Part> = db
        .odm()
        .aggregate::<Part>()
        .limit(2)
        .session(&mut session)
        .await?;
    assert_eq!(some.len(), 2);
    let command = last_command(&db, "aggregate");
    assert!(command.contains_key("lsid"));
    Ok(())
}

#[tokio::test]
async fn a_result_that_does_not_decode_names_collection_id_and_field() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    db.raw()
        .collection::<Document>("parts")
        .update_one(doc! { "_id": 3 }, doc! { "$set": { "price": "cheap" } })
        .await?;
    let err = db
        .odm()
        .aggregate::<Part>()
        .sort(Part::id_field().asc())
        .project(odm::project!(Line {
            name: Part::name(),
            price: Part::price()
        }))
        .await
        .expect_err("a string price");
    // The view has no `_id`: the error says so.
    match &err {
        odm::Error::Decode {
            collection,
            id,
            path,
            ..
        } => assert_eq!(
            (collection.as_str(), id.as_str(), path.as_str()),
            ("parts", "<no _id>", "price")
        ),
        other => panic!("{other}"),
    }
    let err = db
        .odm()
        .aggregate::<Part>()
        .await
        .expect_err("a string price");
    match &err {
        odm::Error::Decode {
            collection,
            id,
            path,
            ..
        } => assert_eq!(
            (collection.as_str(), id.as_str(), path.as_str()),
            ("parts", "{ _id: 3 }", "price")
        ),
        other => panic!("{other}"),
    }
    Ok(())
}

#[tokio::test]
async fn distinct_values_and_elements() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let mut names: Vec<String> = db
        .odm()
        .distinct(&Part::name())
        .filter(Part::price().lt(100.0))
        .await?;
    names.sort();
    assert_eq!(names, ["bell", "deck", "wheel"]);
    let command = last_command(&db, "distinct");
    assert_eq!(command.get_str("key").ok(), Some("name"));
    assert_eq!(
        command.get_document("query").ok(),
        Some(&doc! { "price": { "$lt": 100.0 } })
    );
    let mut tags: Vec<String> = db.odm().distinct_elements(&Part::tags()).await?;
    tags.sort();
    assert_eq!(tags, ["rubber", "steel", "wood"]);
    assert_eq!(sent(&db), ["distinct"]);

    db.raw()
        .collection::<Document>("parts")
        .update_one(doc! { "_id": 3 }, doc! { "$set": { "quantity": "many" } })
        .await?;
    let err = db
        .odm()
        .distinct(&Part::quantity())
        .await
        .expect_err("a string quantity");
    assert!(
        matches!(&err, odm::Error::Decode { collection, path, .. }
            if collection == "parts" && path == "quantity"),
        "{err}"
    );
    Ok(())
}

/// Two kinds in one collection.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "items", common = "name")]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item {
    Tool(Tool),
    Toy(Toy),
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Item")]
struct Tool {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(kind_of = "Item")]
struct Toy {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
}

#[tokio::test]
async fn a_kind_sees_its_own_documents_only() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Tool {
        id: 1,
        name: "hammer".into(),
    })
    .await?;
    odm.insert_one(&Toy {
        id: 2,
        name: "kite".into(),
    })
    .await?;
    db.commands().clear();
    let tools: Vec<Tool> = odm.aggregate::<Tool>().await?;
    assert_eq!(tools.len(), 1);
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline")[0],
        Bson::Document(doc! { "$match": { "type": "tool" } })
    );
    // A raw filter naming the discriminator cannot widen the kind.
    let tools: Vec<Tool> = odm
        .aggregate::<Tool>()
        .filter(Filter::raw(doc! { "type": "toy" }))
        .await?;
    assert!(tools.is_empty());
    let names: Vec<String> = odm.distinct(&Toy::name()).await?;
    assert_eq!(names, ["kite"]);
    // Every kind through the base.
    let mut names: Vec<String> = odm.distinct(&Item::name()).await?;
    names.sort();
    assert_eq!(names, ["hammer", "kite"]);
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "loans")]
struct Loan {
    #[serde(rename = "_id")]
    id: i32,
    #[reference]
    tool: Ref<Tool>,
    #[reference]
    #[serde(with = "odm::dbref")]
    product: Ref<Product>,
}

#[derive(Deserialize, Debug)]
struct LoanOf<R> {
    joined: Vec<R>,
}

#[derive(Deserialize, Debug)]
struct ToolWithLoans {
    #[serde(rename = "_id")]
    id: i32,
    loans: Vec<Loan>,
}

/// A `$lookup` into a kind joins documents of that kind only: the kind's discriminator is
/// matched in the lookup's sub-pipeline, so a loan whose `tool` names a toy (stored in the same
/// collection) joins nothing. The other way, loans join the tools they name.
#[tokio::test]
async fn a_lookup_into_a_kind_joins_that_kind_only() -> odm::Result<()> {
    let db = common::db().await?;
    let odm = db.odm();
    odm.insert_one(&Tool {
        id: 1,
        name: "hammer".into(),
    })
    .await?;
    odm.insert_one(&Toy {
        id: 2,
        name: "kite".into(),
    })
    .await?;
    // Loan 20 names the toy's id as a tool: a reference to the wrong kind.
    for (id, tool) in [(10, 1), (11, 1), (20, 2)] {
        db.raw()
            .collection::<Document>("loans")
            .insert_one(
                doc! { "_id": id, "tool": tool, "product": { "$ref": "products", "$id": 1 } },
            )
            .await
            .expect("raw insert");
    }
    db.commands().clear();
    let joined: Vec<LoanOf<Tool>> = odm
        .aggregate::<Loan>()
        .sort(Loan::id().asc())
        .lookup(&Loan::tool(), odm::view_field!(LoanOf<Tool>, joined))
        .await?;
    let names: Vec<Vec<&str>> = joined
        .iter()
        .map(|l| l.joined.iter().map(|t| t.name.as_str()).collect())
        .collect();
    assert_eq!(names, [vec!["hammer"], vec!["hammer"], vec![]]);
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline")[1],
        Bson::Document(doc! { "$lookup": {
            "from": "items",
            "localField": "tool",
            "foreignField": "_id",
            "as": "joined",
            "pipeline": [{ "$match": { "type": "tool" } }],
        } })
    );
    let tools: Vec<ToolWithLoans> = odm
        .aggregate::<Tool>()
        .lookup_referrers(&Loan::tool(), odm::view_field!(ToolWithLoans, loans))
        .await?;
    assert_eq!(tools.len(), 1, "the toy is not a tool");
    assert_eq!(tools[0].id, 1);
    let mut loans: Vec<i32> = tools[0].loans.iter().map(|l| l.id).collect();
    loans.sort();
    assert_eq!(loans, [10, 11]);
    Ok(())
}

/// A shelf lists products as an array of DBRefs.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: i32,
    #[reference(many, max = 100)]
    #[serde(with = "odm::dbref")]
    products: Vec<Ref<Product>>,
}

#[derive(Deserialize, Debug)]
struct ShelfOf {
    #[serde(rename = "_id")]
    id: i32,
    joined: Vec<Product>,
}

#[derive(Deserialize, Debug)]
struct ProductWithLoans {
    #[serde(rename = "_id")]
    id: i32,
    loans: Vec<Loan>,
}

/// A `$lookup` along DBRefs joins by `$id`, for the DBRefs whose `$ref` names the target's
/// collection: one DBRef or an array of them, a DBRef into another collection (or with a
/// hostile id) joining nothing; and the other way, from the products to the loans naming them.
#[tokio::test]
async fn a_lookup_along_dbrefs_joins_by_their_id() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let odm = db.odm();
    let loans = db.raw().collection::<Document>("loans");
    loans
        .insert_many([
            doc! { "_id": 1, "tool": 1, "product": { "$ref": "products", "$id": 2 } },
            // Another collection's document with the same id: not a product.
            doc! { "_id": 2, "tool": 1, "product": { "$ref": "parts", "$id": 1 } },
            doc! { "_id": 3, "tool": 1, "product": { "$ref": "products", "$id": { "$gt": 0 } } },
        ])
        .await
        .expect("raw insert");
    db.raw()
        .collection::<Document>("shelves")
        .insert_one(doc! { "_id": 1, "products": [
            { "$ref": "products", "$id": 1 }, { "$ref": "products", "$id": 2 }, { "$ref": "parts", "$id": 2 },
        ] })
        .await
        .expect("raw insert");
    db.commands().clear();
    #[derive(Deserialize, Debug)]
    struct Joined {
        #[serde(rename = "_id")]
        id: i32,
        joined: Vec<Product>,
    }
    let joined: Vec<Joined> = odm
        .aggregate::<Loan>()
        .sort(Loan::id().asc())
        .lookup(&Loan::product(), odm::view_field!(Joined, joined))
        .await?;
    let names: Vec<(i32, Vec<&str>)> = joined
        .iter()
        .map(|l| (l.id, l.joined.iter().map(|p| p.name.as_str()).collect()))
        .collect();
    assert_eq!(names, [(1, vec!["scooter"]), (2, vec![]), (3, vec![])]);
    assert_eq!(sent(&db), ["aggregate"]);

    let shelves: Vec<ShelfOf> = odm
        .aggregate::<Shelf>()
        .lookup(&Shelf::products(), odm::view_field!(ShelfOf, joined))
        .await?;
    let mut names: Vec<&str> = shelves[0].joined.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    assert_eq!((shelves[0].id, names), (1, vec!["bicycle", "scooter"]));

    let products: Vec<ProductWithLoans> = odm
        .aggregate::<Product>()
        .sort(Product::id().asc())
        .lookup_referrers(&Loan::product(), odm::view_field!(ProductWithLoans, loans))
        .await?;
    let loans: Vec<(i32, Vec<i32>)> = products
        .iter()
        .map(|p| (p.id, p.loans.iter().map(|l| l.id).collect()))
        .collect();
    assert_eq!(loans, [(1, vec![]), (2, vec![1])]);
    Ok(())
}

#[tokio::test]
async fn count_what_a_pipeline_yields() -> odm::Result<()> {
    let db = common::db().await?;
    catalog(&db).await?;
    let tags = db
        .odm()
        .aggregate::<Part>()
        .unwind(&Part::tags(), odm::view_field!(Tagged, tag))
        .count()
        .await?;
    assert_eq!(tags, 5);
    let command = last_command(&db, "aggregate");
    assert_eq!(
        command.get_array("pipeline").expect("a pipeline").last(),
        Some(&Bson::Document(doc! { "$count": "count" }))
    );
    // Nothing to count: the server returns no document at all.
    let none = db
        .odm()
        .aggregate::<Part>()
        .filter(Part::name().eq("anvil"))
        .count()
        .await?;
    assert_eq!(none, 0);
    assert_eq!(sent(&db), ["aggregate"]);
    Ok(())
}
