//! Seed 001's parts catalog (products referencing parts, parts referencing a supplier), the
//! host logs (log messages referencing their host), and the task tracker (people and tasks,
//! referenced both ways).

#![allow(dead_code)]

use odm::bson::DateTime;
use odm::prelude::*;

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "suppliers")]
pub struct Supplier {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub country: String,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "parts")]
pub struct Part {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[index(unique)]
    pub partno: String,
    pub name: String,
    pub qty: i64,
    #[serde(default)]
    pub cost: f64,
    #[serde(default)]
    pub price: f64,
    #[reference(on_delete = "nullify")]
    pub supplier: Option<Ref<Supplier>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "products")]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub manufacturer: String,
    pub catalog_number: i64,
    #[reference(many, max = 200, on_delete = "pull")]
    pub parts: Vec<Ref<Part>>,
}

#[derive(Model, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[odm(collection = "hosts")]
pub struct Host {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    #[index(unique)]
    pub ipaddr: String,
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
}

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
}
