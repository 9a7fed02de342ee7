//! Models and data shared by the integration tests: the library schema of the schema-design
//! workshop (authors, books with an embedded publisher and reviews, users, loans).

#![allow(dead_code)]

pub mod library;
