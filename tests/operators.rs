//! The operators beyond a comparison with a value: two fields of one document compared
//! (`$expr`), a stored value's BSON type (`$type`), an integer's remainder (`$mod`). Each
//! command's filter is read from the monitor, each result checked against documents written
//! with the raw driver, some of them as another program would write them.

mod common;

use common::last_command;
use odm::bson::spec::ElementType;
use odm::bson::{doc, Document};
use odm::prelude::*;

// ANCHOR: part
/// A part in stock (the seed's products and parts), reordered below its own threshold.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    stock: i32,
    reorder_at: i32,
    code: String,
}
// ANCHOR_END: part

async fn parts(db: &odm::testing::TestDb) -> odm::Result<()> {
    let part = |id: i32, stock: i32, reorder_at: i32| {
        doc! { "_id": id, "name": format!("part {id}"), "stock": stock, "reorder_at": reorder_at, "code": format!("P-{id}") }
    };
    db.raw()
        .collection::<Document>("parts")
        .insert_many([
            part(1, 5, 10),
            part(2, 10, 10),
            part(3, 40, 10),
            part(4, 0, 3),
            // Written by another program: the code as a number, the threshold missing.
            doc! { "_id": 5, "name": "part 5", "stock": 2, "code": 5 },
        ])
        .await?;
    db.commands().clear();
    Ok(())
}

async fn matching(db: &odm::testing::TestDb, filter: Filter<Part>) -> odm::Result<Vec<i32>> {
    let mut found: Vec<i32> = db
        .odm()
        .find(filter)
        .into_type::<Document>()
        .await?
        .iter()
        .map(|d| d.get_i32("_id").unwrap())
        .collect();
    found.sort_unstable();
    Ok(found)
}

#[tokio::test]
async fn two_fields_of_a_document_are_compared_by_the_server() -> odm::Result<()> {
    let db = common::db().await?;
    parts(&db).await?;
    // ANCHOR: expr
    let low = Part::stock().lt_field(&Part::reorder_at());
    // ANCHOR_END: expr
    assert_eq!(matching(&db, low).await?, [1, 4]);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! { "$expr": { "$lt": ["$stock", "$reorder_at"] } }
    );
    assert_eq!(
        matching(&db, Part::stock().eq_field(&Part::reorder_at())).await?,
        [2]
    );
    assert_eq!(
        matching(&db, Part::stock().gte_field(&Part::reorder_at())).await?,
        [2, 3, 5]
    );
    assert_eq!(
        matching(&db, Part::stock().gt_field(&Part::reorder_at())).await?,
        [3, 5]
    );
    assert_eq!(
        matching(&db, Part::stock().lte_field(&Part::reorder_at())).await?,
        [1, 2, 4]
    );
    assert_eq!(
        matching(&db, Part::stock().ne_field(&Part::reorder_at())).await?,
        [1, 3, 4, 5],
        "a missing threshold is below every number"
    );
    // Combined with other conditions like any filter.
    let urgent = Part::stock().lt_field(&Part::reorder_at()) & Part::stock().eq(0);
    assert_eq!(matching(&db, urgent).await?, [4]);
    Ok(())
}

#[tokio::test]
async fn a_stored_type_other_than_the_models_is_found() -> odm::Result<()> {
    let db = common::db().await?;
    parts(&db).await?;
    // ANCHOR: type
    let numbered = Part::code().has_type(ElementType::Int32);
    // ANCHOR_END: type
    assert_eq!(matching(&db, numbered).await?, [5]);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! { "code": { "$type": 16 } }
    );
    assert_eq!(
        db.odm()
            .count(Part::code().has_type(ElementType::String))
            .await?,
        4
    );
    // The model's reads of the other program's document fail, naming it; the count does not.
    let read = db.odm().find(Filter::<Part>::all()).await;
    assert!(read.is_err(), "{read:?}");
    Ok(())
}

#[tokio::test]
async fn a_remainder_is_of_an_integer_and_a_zero_divisor_is_refused_before_sending(
) -> odm::Result<()> {
    let db = common::db().await?;
    parts(&db).await?;
    // ANCHOR: mod
    let even = Part::id_field().modulo(2, 0);
    // ANCHOR_END: mod
    assert_eq!(matching(&db, even).await?, [2, 4]);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! { "_id": { "$mod": [2_i64, 0_i64] } }
    );
    assert_eq!(
        matching(&db, Part::stock().modulo(5, 0)).await?,
        [1, 2, 3, 4]
    );
    db.commands().clear();
    let refused = db.odm().count(Part::stock().modulo(0, 0)).await;
    assert!(
        matches!(&refused, Err(odm::Error::Encode { what, .. }) if what.contains("stock")),
        "{refused:?}"
    );
    assert_eq!(db.commands().count(), 0, "nothing sent");
    Ok(())
}

#[tokio::test]
async fn hostile_values_stay_values_beside_the_operators() -> odm::Result<()> {
    let db = common::db().await?;
    parts(&db).await?;
    // A name that looks like an expression is compared as a string.
    let name = "$stock";
    let filter = Part::name().eq(name) & Part::stock().lt_field(&Part::reorder_at());
    assert!(matching(&db, filter).await?.is_empty());
    let sent = last_command(&db, "find");
    let filter = sent.get_document("filter").unwrap();
    assert_eq!(
        filter,
        &doc! { "$and": [ { "name": "$stock" }, { "$expr": { "$lt": ["$stock", "$reorder_at"] } } ] }
    );
    Ok(())
}
