//! Copies that copy each other in a circle: `left.name` copies `right.name`, which copies
//! `left.name`. Cascading them would never end, so the registry refuses them: every write that
//! would cascade along the circle fails with `Error::CopyCycle` naming it, before anything is
//! sent. (The models of this file only: its handles' catalog is the file's, so the cycle is not
//! in any other test's.)

mod common;

use common::stored_one;
use odm::prelude::*;
use odm::Update;

mod circle {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "left")]
    pub struct Left {
        #[serde(rename = "_id")]
        pub id: i32,
        #[reference(on_delete = "nullify")]
        pub right: Option<Ref<Right>>,
        #[denormalize(from = "Right", via = "right", fields = "name")]
        #[serde(default)]
        pub name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "right")]
    pub struct Right {
        #[serde(rename = "_id")]
        pub id: i32,
        #[reference(on_delete = "nullify")]
        pub left: Option<Ref<Left>>,
        #[denormalize(from = "Left", via = "left", fields = "name")]
        #[serde(default)]
        pub name: String,
    }
}

use circle::{Left, Right};

#[test]
fn the_registry_names_the_cycle() {
    let err = odm::denormalize::check_copies_in(&common::catalog()).unwrap_err();
    let odm::Error::CopyCycle { cycle } = &err else {
        panic!("{err}");
    };
    assert_eq!(cycle.first(), cycle.last());
    let mut names = cycle[1..].to_vec();
    names.sort();
    assert_eq!(names, ["left.name", "right.name"]);
    let message = err.to_string();
    assert!(
        message.starts_with("denormalized copies form a cycle: ")
            && message.contains("left.name <- right.name")
            && message.ends_with("; nothing was written"),
        "{message}"
    );
}

#[tokio::test]
async fn a_write_that_would_cascade_around_the_cycle_is_refused() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .insert_one(&Left {
            id: 1,
            right: None,
            name: String::new(),
        })
        .await?;
    db.odm()
        .insert_one(&Right {
            id: 1,
            left: Some(Ref::new(1)),
            name: String::new(),
        })
        .await?;
    // No update can write a copy, raw ones included.
    let update = Update::<Left>::raw(odm::bson::doc! { "$set": { "name": "loop" } });
    let err = db
        .odm()
        .update_by_id::<Left>(1, update)
        .await
        .expect_err("a copy is never written by hand");
    assert!(matches!(err, odm::Error::CopyWrite { .. }), "{err}");
    // Pointing `left.right` at a document takes `left.name` from it, which would cascade to
    // `right.name`, then back.
    let err = db
        .odm()
        .update_by_id::<Left>(1, Left::right().set(Some(Ref::new(1))))
        .await
        .expect_err("a cascade around a cycle");
    assert!(matches!(err, odm::Error::CopyCycle { .. }), "{err}");
    let left = stored_one(&db, "left", 1).await.unwrap();
    assert_eq!(left.get_str("name").unwrap(), "", "nothing was written");
    assert!(
        left.get("right")
            .is_none_or(|r| *r == odm::bson::Bson::Null),
        "{left}"
    );
    Ok(())
}
