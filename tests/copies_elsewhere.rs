//! No forgotten dependents: renaming a part cascades into products, a model this file never
//! names (it lives in another module, registered by its derive).

mod common;
#[path = "common/denorm.rs"]
mod denorm;

use denorm::parts::Part;
use odm::bson::{doc, Document};
use odm::prelude::*;

#[tokio::test]
async fn a_cascade_reaches_a_model_the_updating_code_never_names() -> odm::Result<()> {
    let db = common::db().await?;
    let grommet = Part {
        id: ObjectId::new(),
        partno: "123-aff-456".into(),
        name: "#4 grommet".into(),
        qty: 94,
        product: None,
        product_name: String::new(),
        product_catalog_number: 0,
    };
    db.odm().insert_one(&grommet).await?;
    // A product written with the raw driver, as another service would.
    db.raw()
        .collection::<Document>("products")
        .insert_one(doc! {
            "name": "left-handed smoke shifter",
            "manufacturer": "Acme Corp",
            "catalog_number": 1234,
            "parts": [{"id": grommet.id, "name": "#4 grommet"}],
        })
        .await?;

    db.odm()
        .update_by_id::<Part>(grommet.id, Part::name().set("#4 grommet, zinc"))
        .await?;

    let product = db
        .raw()
        .collection::<Document>("products")
        .find_one(doc! {})
        .await?
        .unwrap();
    let summary = product.get_array("parts").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(summary, doc! {"id": grommet.id, "name": "#4 grommet, zinc"});
    assert!(common::sent(&db).contains(&"update".to_owned()));
    Ok(())
}
