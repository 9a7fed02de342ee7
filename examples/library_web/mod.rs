//! The library's web service, shared by the example `library_web` and its test: the models,
//! the routes and their error responses.

pub mod app;
pub mod error;
pub mod models;
