//! Seed 000/001's denormalized schemas: part names copied into products (many -> one), the
//! product's name and catalog number copied into its parts (one -> many), the host's address
//! copied into its log messages, and the last log messages kept on the host.

#![allow(dead_code)]

pub mod parts {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "parts")]
    pub struct Part {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub partno: String,
        pub name: String,
        /// Quantity on hand: changes often, so it is never copied (rule of thumb 5).
        #[frequently_updated]
        pub qty: i64,
        #[reference(on_delete = "nullify")]
        pub product: Option<Ref<super::products::Product>>,
        #[denormalize(from = "super::products::Product", via = "product", fields = "name")]
        #[serde(default)]
        pub product_name: String,
        #[denormalize(
            from = "super::products::Product",
            via = "product",
            fields = "catalog_number"
        )]
        #[serde(default)]
        pub product_catalog_number: i64,
    }
}

pub mod products {
    use odm::prelude::*;

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct PartSummary {
        pub id: Ref<super::parts::Part>,
        pub name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "products")]
    pub struct Product {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub name: String,
        pub manufacturer: String,
        pub catalog_number: i64,
        #[denormalize(from = "super::parts::Part", fields = "name", max = 200)]
        pub parts: Vec<PartSummary>,
    }
}

pub mod logs {
    use odm::bson::DateTime;
    use odm::prelude::*;

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct LogSummary {
        pub time: DateTime,
        pub message: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "hosts")]
    pub struct Host {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub name: String,
        #[index(unique)]
        pub ipaddr: String,
        #[denormalize(
            from = "LogMsg",
            via = "host",
            fields = "time, message",
            latest = 100,
            sort = "time"
        )]
        #[serde(default)]
        pub logmsgs: Vec<LogSummary>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "logmsg")]
    pub struct LogMsg {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub time: DateTime,
        pub message: String,
        #[parent(on_delete = "cascade")]
        pub host: Ref<Host>,
        #[denormalize(from = "Host", via = "host", fields = "ipaddr")]
        #[serde(default)]
        pub ipaddr: String,
    }
}

/// Seed 000's people and tasks, two-way, with the owner's name copied into each task.
pub mod tasks {
    use odm::bson::DateTime;
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "people")]
    pub struct Person {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub name: String,
        #[reference(many, max = 1000, inverse = "owner", on_delete = "pull")]
        pub tasks: Vec<Ref<Task>>,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "tasks")]
    pub struct Task {
        #[serde(rename = "_id")]
        pub id: ObjectId,
        pub description: String,
        pub due_date: DateTime,
        #[parent(inverse = "tasks")]
        pub owner: Ref<Person>,
        /// Shown in every task list without reading the person.
        #[denormalize(from = "Person", via = "owner", fields = "name")]
        #[serde(default)]
        pub owner_name: String,
    }
}

/// The workshop's books with their author's name cached: a required author, an optional
/// co-author.
pub mod books {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "authors")]
    pub struct Author {
        #[serde(rename = "_id")]
        pub id: i32,
        pub first_name: String,
        pub last_name: String,
    }

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct AuthorName {
        pub id: Ref<Author>,
        pub first_name: String,
        pub last_name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "books")]
    pub struct Book {
        #[serde(rename = "_id")]
        pub id: i32,
        pub title: String,
        #[denormalize(from = "Author", fields = "first_name, last_name")]
        pub author: AuthorName,
        #[denormalize(from = "Author", fields = "first_name, last_name")]
        pub co_author: Option<AuthorName>,
    }
}

/// Members and their chores: deleting a member deletes its chores, each of which holds a
/// required summary of the member.
pub mod chores {
    use odm::prelude::*;

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "members")]
    pub struct Member {
        #[serde(rename = "_id")]
        pub id: i32,
        pub name: String,
    }

    #[derive(Embed, Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct MemberCard {
        pub id: Ref<Member>,
        pub name: String,
    }

    #[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[odm(collection = "chores")]
    pub struct Chore {
        #[serde(rename = "_id")]
        pub id: i32,
        #[parent(on_delete = "cascade")]
        pub member: Ref<Member>,
        #[denormalize(from = "Member", fields = "name")]
        pub card: MemberCard,
    }
}
