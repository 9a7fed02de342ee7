//! Every model linked into the program is known to the runtime without a registration step:
//! `sync_indexes()` finds models in modules the calling code never names.

use odm::testing::TestDb;

mod catalog {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug)]
    #[odm(collection = "parts")]
    pub struct Part {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        #[index(unique)]
        pub partno: String,
        pub name: String,
        pub qty: i64,
    }

    pub mod hosts {
        use odm::prelude::*;

        #[derive(Model, Serialize, Deserialize, Debug)]
        pub struct Host {
            #[serde(rename = "_id")]
            pub id: ObjectId,
            pub name: String,
            #[index(unique)]
            pub ipaddr: String,
        }
    }
}

#[test]
fn the_registry_lists_every_model() {
    let models: Vec<(&str, &str)> = odm::registered_models()
        .iter()
        .map(|m| (m.collection, m.type_name))
        .collect();
    assert_eq!(models, [("hosts", "Host"), ("parts", "Part")]);
}

#[tokio::test]
async fn sync_indexes_reaches_models_it_was_never_told_about() -> odm::Result<()> {
    let db = TestDb::new().await?;
    let report = db.odm().sync_indexes().await?;
    assert_eq!(report.created(), ["hosts.ipaddr_1", "parts.partno_1"]);
    for (collection, index) in [("hosts", "ipaddr_1"), ("parts", "partno_1")] {
        let listed = db
            .raw()
            .run_command(odm::bson::doc! {"listIndexes": collection})
            .await?;
        let batch = listed
            .get_document("cursor")
            .unwrap()
            .get_array("firstBatch")
            .unwrap();
        let found = batch
            .iter()
            .filter_map(|b| b.as_document())
            .find(|d| d.get_str("name").ok() == Some(index));
        assert!(
            found.is_some_and(|d| d.get_bool("unique").unwrap_or(false)),
            "{collection}: {batch:?}"
        );
    }
    Ok(())
}
