//! An activity feed whose entries point at books, authors or users: polymorphic references
//! stored as DBRefs, and a plain reference stored as a DBRef for other tools.
#![allow(dead_code)]
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "authors")]
pub struct Author {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "users")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: i32,
    pub username: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "books")]
pub struct Book {
    #[serde(rename = "_id")]
    pub id: i32,
    pub title: String,
    #[reference(on_delete = "cascade")]
    pub author: Ref<Author>,
}

/// What a feed entry is about.
#[derive(PolyRef, Debug, Clone, PartialEq)]
pub enum Subject {
    Book(Ref<Book>),
    Author(Ref<Author>),
    User(Ref<User>),
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "feed")]
pub struct FeedEntry {
    #[serde(rename = "_id")]
    pub id: i32,
    pub verb: String,
    #[reference(poly, on_delete = "cascade")]
    pub subject: Subject,
    #[reference(poly, many, max = 10, on_delete = "pull")]
    pub mentions: Vec<Subject>,
    #[reference(poly, on_delete = "nullify")]
    pub via: Option<Subject>,
}

/// A feed entry read by a program that knows books only: the rest lands in the catch-all.
#[derive(PolyRef, Debug, Clone, PartialEq)]
pub enum BookOrOther {
    Book(Ref<Book>),
    Other(DbRef),
}

/// A note about a book, or about anything else another program stored.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "notes")]
pub struct Note {
    #[serde(rename = "_id")]
    pub id: i32,
    #[reference(poly, on_delete = "cascade")]
    pub about: BookOrOther,
}

#[derive(Deserialize, Debug)]
pub struct EntryView {
    #[serde(rename = "_id")]
    pub id: i32,
    pub subject: BookOrOther,
}

/// A plain reference stored as a DBRef, for the tools that read the collection too.
#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "shelves")]
pub struct Shelf {
    #[serde(rename = "_id")]
    pub id: i32,
    #[reference(on_delete = "nullify")]
    #[serde(with = "odm::dbref")]
    pub favourite: Option<Ref<Book>>,
    #[reference(many, max = 20, on_delete = "pull")]
    #[serde(with = "odm::dbref")]
    pub books: Vec<Ref<Book>>,
}

pub fn entry(id: i32, subject: Subject) -> FeedEntry {
    FeedEntry {
        id,
        verb: "liked".into(),
        subject,
        mentions: Vec::new(),
        via: None,
    }
}
