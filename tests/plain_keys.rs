//! Keys known while compiling: a model whose every key is a field name (its own and its
//! embedded types') is written without a run-time look at its keys (`Model::plain_keys`);
//! every other model (a map, a free-form document, a value serde writes with the
//! application's own function, a document written as another type) is still checked, and a
//! key that MongoDB would read as an operator or a path is refused with nothing written.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::stored;
use odm::bson::{doc, DateTime, Document};
use odm::prelude::*;
use odm::{Embed, Error, Model};

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Spec {
    pub size: i32,
    pub note: Option<String>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pk_plain")]
pub struct Plain {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[serde(rename = "label")]
    pub name: String,
    pub qty: i64,
    pub at: DateTime,
    pub tags: Vec<String>,
    #[embed]
    pub spec: Spec,
    #[embed(max = 10)]
    pub more: Vec<Spec>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pk_maps")]
pub struct WithMap {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub attrs: HashMap<String, i64>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Inner {
    pub attrs: BTreeMap<String, String>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pk_holders")]
pub struct Holder {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[embed]
    pub inner: Option<Inner>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pk_loose")]
pub struct Loose {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub extra: Document,
}

/// Writes a number as `{"$where": n}`: the application's own function, whose keys the derive
/// cannot see.
fn as_operator<S: odm::serde::Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
    use odm::serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    map.serialize_entry("$where", n)?;
    map.end()
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pk_custom")]
pub struct Custom {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[serde(serialize_with = "as_operator")]
    pub n: i64,
}

/// Written as a map of the application's making.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pk_opaque")]
#[serde(into = "BTreeMap<String, i64>")]
pub struct Opaque {
    #[serde(rename = "_id")]
    pub id: i64,
}

impl From<Opaque> for BTreeMap<String, i64> {
    fn from(o: Opaque) -> Self {
        BTreeMap::from([("_id".to_owned(), o.id), ("$inc".to_owned(), 1)])
    }
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Question {
    pub text: String,
    #[embed(max = 3)]
    pub answers: Vec<Answer>,
}

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    #[embed(max = 3)]
    pub follow_ups: Vec<Question>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "pk_surveys")]
pub struct Survey {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[embed]
    pub first: Question,
}

#[test]
fn only_keys_known_while_compiling_are_plain() {
    assert!(<Spec as Embed>::plain_keys(&mut Vec::new()));
    assert!(Plain::plain_keys());
    assert!(!WithMap::plain_keys());
    assert!(!<Inner as Embed>::plain_keys(&mut Vec::new()));
    assert!(!Holder::plain_keys(), "it holds a type with a map");
    assert!(!Loose::plain_keys());
    assert!(!Custom::plain_keys());
    assert!(!Opaque::plain_keys());
    // Types holding each other: their keys are their fields'.
    assert!(Survey::plain_keys());
}

#[tokio::test]
async fn a_plain_model_is_written_as_it_was() -> odm::Result<()> {
    let db = common::db().await?;
    let spec = Spec {
        size: 3,
        note: None,
    };
    let plain = Plain {
        id: ObjectId::new(),
        name: "grommet".into(),
        qty: 94,
        at: DateTime::from_millis(1_700_000_000_000),
        tags: vec!["a.b".into(), "$where".into()], // values, not keys
        spec: spec.clone(),
        more: vec![spec],
    };
    db.commands().clear();
    db.odm().insert_one(&plain).await?;
    assert_eq!(common::sent(&db), ["insert"]);
    let raw = stored(&db, "pk_plain").await;
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0].get_str("label").ok(), Some("grommet"));
    assert_eq!(raw[0].get_array("tags").map(Vec::len).ok(), Some(2));
    let back: Vec<Plain> = db.odm().find(Plain::qty().eq(94)).await?;
    assert_eq!(back, [plain]);
    Ok(())
}

#[tokio::test]
async fn every_other_model_is_still_checked_and_nothing_is_written() -> odm::Result<()> {
    let db = common::db().await?;
    let refused = |r: odm::Result<ObjectId>, key: &str| match r {
        Err(Error::InvalidKey { key: k, .. }) => assert_eq!(k, key),
        other => panic!("{key} was not refused: {other:?}"),
    };
    let map = WithMap {
        id: ObjectId::new(),
        attrs: HashMap::from([("$gt".to_owned(), 1)]),
    };
    refused(db.odm().insert_one(&map).await, "$gt");
    let holder = Holder {
        id: ObjectId::new(),
        inner: Some(Inner {
            attrs: BTreeMap::from([("a.b".to_owned(), "x".to_owned())]),
        }),
    };
    refused(db.odm().insert_one(&holder).await, "a.b");
    let loose = Loose {
        id: ObjectId::new(),
        extra: doc! { "ok": { "$where": "1" } },
    };
    refused(db.odm().insert_one(&loose).await, "$where");
    let custom = Custom {
        id: ObjectId::new(),
        n: 7,
    };
    refused(db.odm().insert_one(&custom).await, "$where");
    let opaque = db.odm().insert_one(&Opaque { id: 1 }).await;
    assert!(
        matches!(&opaque, Err(Error::InvalidKey { key, .. }) if key == "$inc"),
        "{opaque:?}"
    );
    for collection in [
        "pk_maps",
        "pk_holders",
        "pk_loose",
        "pk_custom",
        "pk_opaque",
    ] {
        assert!(stored(&db, collection).await.is_empty(), "{collection}");
    }
    Ok(())
}
