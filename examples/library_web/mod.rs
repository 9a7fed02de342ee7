//! The library's web service, shared by the example `library_web` and its test: the models,
//! the routes, their error responses, and the connection's timeouts.

pub mod app;
pub mod connect;
pub mod error;
pub mod models;
