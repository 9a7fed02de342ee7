//! Matching strings by part: a literal prefix, literal user text anywhere, and the program's
//! own regular expressions; user text with every character a pattern gives a meaning to is
//! matched as itself, read back from the server.

mod common;

use odm::bson::Bson;
use odm::prelude::*;
use odm::Pattern;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "handles")]
struct Handle {
    #[serde(rename = "_id")]
    id: i32,
    #[index]
    name: String,
    nick: Option<String>,
}

const NAMES: [&str; 9] = [
    "Ann",
    "Anne",
    "An.n",
    ".*",
    "(a+)+$",
    r"a\b",
    "$x",
    "x\0y",
    "two words",
];

async fn handles() -> odm::Result<odm::testing::TestDb> {
    let db = common::db().await?;
    let all: Vec<Handle> = NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| Handle {
            id: i as i32,
            name: (*name).to_owned(),
            nick: (i % 2 == 0).then(|| format!("nick {name}")),
        })
        .collect();
    db.odm().insert_many(&all).await?;
    Ok(db)
}

/// The names of the handles `filter` finds, sorted.
async fn names(db: &odm::testing::TestDb, filter: Filter<Handle>) -> odm::Result<Vec<String>> {
    let mut found: Vec<String> = db
        .odm()
        .find(filter)
        .await?
        .into_iter()
        .map(|h| h.name)
        .collect();
    found.sort();
    Ok(found)
}

#[tokio::test]
async fn a_prefix_is_anchored_and_literal() -> odm::Result<()> {
    let db = handles().await?;
    assert_eq!(
        names(&db, Handle::name().starts_with("An")).await?,
        ["An.n", "Ann", "Anne"]
    );
    assert_eq!(
        names(&db, Handle::name().starts_with("An.")).await?,
        ["An.n"]
    );
    let find = common::last_command(&db, "find");
    let regex = find
        .get_document("filter")
        .unwrap()
        .get_document("name")
        .unwrap()
        .get("$regex")
        .cloned();
    match regex {
        Some(Bson::RegularExpression(r)) => assert_eq!(r.pattern.as_str(), r"^An\."),
        other => panic!("{other:?} in {find}"),
    }
    // An optional field: `None` matches no prefix.
    let nicks: Vec<Handle> = db.odm().find(Handle::nick().starts_with("nick ")).await?;
    assert_eq!(nicks.len(), 5);
    Ok(())
}

#[tokio::test]
async fn user_text_is_matched_as_itself() -> odm::Result<()> {
    let db = handles().await?;
    for (text, expected) in [
        (".*", vec![".*"]),
        ("(a+)+$", vec!["(a+)+$"]),
        (r"\", vec![r"a\b"]),
        ("$", vec!["$x", "(a+)+$"]),
        ("\0", vec!["x\0y"]),
        ("o w", vec!["two words"]),
    ] {
        let mut expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        expected.sort();
        assert_eq!(
            names(&db, Handle::name().contains_text(text, false)).await?,
            expected,
            "contains_text({text:?})"
        );
    }
    assert_eq!(
        names(&db, Handle::name().contains_text("ANN", true)).await?,
        ["Ann", "Anne"]
    );
    assert!(names(&db, Handle::name().contains_text("ANN", false))
        .await?
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn the_programs_pattern_is_a_pattern() -> odm::Result<()> {
    let db = handles().await?;
    const WORD: Pattern = Pattern::new(r"^[a-z]+ [a-z]+$");
    assert_eq!(
        names(&db, Handle::name().matches(&WORD)).await?,
        ["two words"]
    );
    let without_case = Pattern::new("^ann?e?$").options("i");
    assert_eq!(
        names(&db, Handle::name().matches(&without_case)).await?,
        ["Ann", "Anne"]
    );
    // An option the server does not know is refused before anything is sent.
    db.commands().clear();
    let refused = db
        .odm()
        .find(Handle::name().matches(&Pattern::new("a").options("q")))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(db.commands().count_of("find"), 0);
    Ok(())
}
