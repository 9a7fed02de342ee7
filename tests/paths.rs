//! Typed paths: serde renames, dotted paths into embedded documents, arrays, and the promise
//! that user-supplied values never become operators or paths.

mod common;
#[path = "common/library.rs"]
mod library;

use std::collections::HashMap;

use common::{last_command, sent, stored};
use library::*;
use odm::bson::{doc, Document};
use odm::prelude::*;

#[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Contact {
    phone_number: String,
    #[serde(rename = "e-mail")]
    email: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
#[odm(collection = "people")]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    full_name: String,
    #[serde(rename = "SSN")]
    ssn: String,
    #[embed]
    home_contact: Contact,
    #[embed(max = 5)]
    other_contacts: Vec<Contact>,
}

fn kate() -> Person {
    Person {
        id: 1,
        full_name: "Kate Monster".into(),
        ssn: "123-456-7890".into(),
        home_contact: Contact {
            phone_number: "555-0100".into(),
            email: "kate@example.com".into(),
        },
        other_contacts: vec![Contact {
            phone_number: "555-0199".into(),
            email: "k@work.example".into(),
        }],
    }
}

#[tokio::test]
async fn generated_paths_are_the_stored_keys() -> odm::Result<()> {
    assert_eq!(Person::full_name().path(), "fullName");
    assert_eq!(Person::ssn().path(), "SSN");
    assert_eq!(
        Person::home_contact().phone_number().path(),
        "homeContact.phoneNumber"
    );
    assert_eq!(Person::home_contact().email().path(), "homeContact.e-mail");
    assert_eq!(
        Person::other_contacts().email().path(),
        "otherContacts.e-mail"
    );
    assert_eq!(Person::id().path(), "_id");

    let db = common::db().await?;
    db.odm().insert_one(&kate()).await?;
    let raw = &stored(&db, "people").await[0];
    // Every generated path resolves in the stored document.
    for path in [
        Person::full_name().path(),
        Person::ssn().path(),
        Person::home_contact().phone_number().path(),
        Person::home_contact().email().path(),
    ] {
        let mut node = raw;
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_some() {
                node = node
                    .get_document(part)
                    .unwrap_or_else(|_| panic!("{path} is not stored"));
            } else {
                assert!(node.contains_key(part), "{path} is not stored in {raw}");
            }
        }
    }

    let found = db
        .odm()
        .find(Person::home_contact().email().eq("kate@example.com"))
        .await?;
    assert_eq!(found, vec![kate()]);
    let found = db
        .odm()
        .find(Person::other_contacts().phone_number().eq("555-0199"))
        .await?;
    assert_eq!(
        found.len(),
        1,
        "a path through an array matches any element"
    );
    Ok(())
}

#[tokio::test]
async fn dotted_paths_reach_into_embedded_documents() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm().insert_many(&shelf()).await?;
    db.commands().clear();

    let scribner = db
        .odm()
        .find(Book::publisher().name().eq("Scribner"))
        .sort(Book::id().asc())
        .await?;
    assert_eq!(scribner.iter().map(|b| b.id).collect::<Vec<_>>(), [2, 4]);
    assert_eq!(
        last_command(&db, "find").get_document("filter").unwrap(),
        &doc! {"publisher.name": "Scribner"}
    );

    let reviewed_by_2 = db.odm().find(Book::reviews().user().eq(2)).await?;
    assert_eq!(reviewed_by_2.iter().map(|b| b.id).collect::<Vec<_>>(), [1]);

    let jazz = db
        .odm()
        .find(Book::subjects().contains("Jazz Age"))
        .sort(Book::id().asc())
        .await?;
    assert_eq!(jazz.iter().map(|b| b.id).collect::<Vec<_>>(), [1, 3]);
    let both = db
        .odm()
        .find(Book::subjects().contains_all(["1920s", "Jazz Age"]))
        .await?;
    assert_eq!(both.len(), 2);
    let in_list = db
        .odm()
        .count(Book::isbn().is_in(["isbn-2", "isbn-3", "nope"]))
        .await?;
    assert_eq!(in_list, 2);
    let combined = db
        .odm()
        .count(
            Book::publisher().name().eq("Scribner")
                & (Book::pages().gt(310) | Book::pages().lt(306)),
        )
        .await?;
    assert_eq!(combined, 2);
    let negated = db
        .odm()
        .count(!Book::publisher().name().eq("Scribner"))
        .await?;
    assert_eq!(negated, 3);
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "settings")]
struct Setting {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    attributes: HashMap<String, i32>,
    extra: Document,
}

fn setting(id: i32, name: &str) -> Setting {
    Setting {
        id,
        name: name.into(),
        attributes: HashMap::new(),
        extra: doc! {},
    }
}

#[tokio::test]
async fn user_values_are_matched_literally_never_as_operators() -> odm::Result<()> {
    let db = common::db().await?;
    db.odm()
        .insert_many(&[setting(1, "alpha"), setting(2, "beta")])
        .await?;

    // An attacker-controlled "value" shaped like an operator. Sent bare, it would match both
    // documents; odm wraps it in `$eq`, so it matches neither.
    let hostile = doc! {"$gt": ""};
    let raw_matches = db
        .raw()
        .collection::<Document>("settings")
        .count_documents(doc! {"name": hostile.clone()})
        .await?;
    assert_eq!(
        raw_matches, 2,
        "the bare operator would have matched everything"
    );
    let matched = db.odm().count(Setting::extra().eq(&hostile)).await?;
    assert_eq!(matched, 0);
    let hostile_name = db
        .odm()
        .count(Setting::name().eq("{\"$gt\": \"\"}"))
        .await?;
    assert_eq!(hostile_name, 0);
    Ok(())
}

#[tokio::test]
async fn keys_with_a_dollar_or_a_dot_are_refused_and_nothing_is_written() -> odm::Result<()> {
    let db = common::db().await?;
    let mut dotted = setting(1, "dotted");
    dotted.attributes.insert("a.b".into(), 1);
    let err = db.odm().insert_one(&dotted).await.unwrap_err();
    assert!(
        matches!(&err, odm::Error::InvalidKey { collection, path, key } if collection == "settings" && path == "attributes" && key == "a.b"),
        "{err}"
    );
    let mut dollar = setting(2, "dollar");
    dollar.extra = doc! {"nested": {"$where": "sleep(1000)"}};
    let err = db.odm().insert_one(&dollar).await.unwrap_err();
    assert!(
        matches!(&err, odm::Error::InvalidKey { path, key, .. } if path == "extra.nested" && key == "$where"),
        "{err}"
    );
    assert!(sent(&db).is_empty(), "refused before anything was sent");
    assert!(stored(&db, "settings").await.is_empty());

    db.odm().insert_one(&setting(3, "clean")).await?;
    let hostile: HashMap<String, i32> = [("$inc".to_owned(), 1)].into();
    let err = db
        .odm()
        .update_by_id::<Setting>(3, Setting::attributes().set(hostile))
        .await
        .unwrap_err();
    assert!(matches!(err, odm::Error::InvalidKey { .. }), "{err}");
    assert_eq!(
        stored(&db, "settings").await[0]
            .get_document("attributes")
            .unwrap(),
        &doc! {}
    );
    Ok(())
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "counters")]
struct Counter {
    #[serde(rename = "_id")]
    id: i32,
    hits: u64,
}

#[tokio::test]
async fn a_value_that_cannot_be_encoded_is_an_error_before_sending() -> odm::Result<()> {
    let db = common::db().await?;
    let err = db
        .odm()
        .find(Counter::hits().gt(u64::MAX))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, odm::Error::Encode { collection, what, .. } if collection == "counters" && what.contains("hits")),
        "{err}"
    );
    assert!(sent(&db).is_empty());
    Ok(())
}
