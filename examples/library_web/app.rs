//! The service: its state (the shared `Odm` handle), its routes, and serving them until a
//! shutdown signal.

use std::future::Future;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use odm::paging::PageToken;
use odm::prelude::*;
use serde_json::json;
use tokio::net::TcpListener;

use super::error::ApiError;
use super::models::{Author, Book, Isbn, Loan};

// ANCHOR: state
/// What every handler is given. `Odm` is cheap to clone (it wraps the driver's reference-counted
/// `Database`, whose connection pool is shared): axum clones the state for each request, and
/// every request uses the one pool.
#[derive(Clone, Debug)]
pub struct AppState {
    pub odm: Odm,
    /// Books per page of `GET /books`.
    pub page_size: u32,
}

/// The routes of the service, on `state`.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/books", get(list_books).post(create_book))
        .route(
            "/books/{id}",
            get(get_book).put(update_book).delete(delete_book),
        )
        .route("/loans", post(create_loan))
        .route("/loans/{id}", delete(delete_loan))
        .with_state(state)
}
// ANCHOR_END: state

// ANCHOR: serve
/// Serves `state` on `listener` until `shutdown` completes; then stops accepting connections
/// and returns once the requests in flight are answered.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}
// ANCHOR_END: serve

// ANCHOR: list
/// `GET /books?after=<token>&author=<id>`. Unknown parameters are refused: `author[$ne]=1` is
/// a parameter this route does not take, not an operator.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// The `next` of the previous page; absent for the first.
    after: Option<PageToken>,
    /// Only this author's books.
    author: Option<i32>,
}

/// A page of books by title, each with its author: `{"items": [...], "next": "<token>"}`, with
/// `next` null on the last page.
async fn list_books(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let filter = match query.author {
        Some(author) => Book::author().eq(Ref::new(author)),
        None => Filter::all(),
    };
    let page = state
        .odm
        .find(filter)
        .sort(Book::title().asc())
        .populate(Book::author())
        .page(state.page_size)
        .after(query.after)
        .await?;
    // The authors written as documents, not ids; `next` as the token's text.
    Ok(Json(odm::expanded(&page)).into_response())
}
// ANCHOR_END: list

// ANCHOR: get
/// `GET /books/{id}`: the book with its author. The id is a value: whatever it spells, the
/// filter is `{_id: <that string>}`.
async fn get_book(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let book = state
        .odm
        .get::<Book>(id.as_str())
        .populate(Book::author())
        .await?
        .ok_or_else(|| not_found("book", &id))?;
    Ok(Json(odm::expanded(&book)).into_response())
}
// ANCHOR_END: get

// ANCHOR: create
/// The body of `POST /books`. The version is odm's to keep: a body naming one is refused, as
/// is any field not listed here.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct NewBook {
    #[serde(rename = "_id")]
    id: String,
    title: String,
    isbn: Isbn,
    pages: i32,
    author: i32,
}

/// `POST /books`: 201 with the book as stored (version 0) and its author.
async fn create_book(
    State(state): State<AppState>,
    body: Result<Json<NewBook>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(new) = body?;
    let author = author(&state.odm, new.author).await?;
    let book = Book {
        id: new.id,
        title: new.title,
        isbn: new.isbn,
        pages: new.pages,
        author,
        version: 0,
    };
    // A duplicate id or ISBN is a 409; an ISBN the validator refuses, a 422.
    state.odm.insert_one(&book).await?;
    let location = format!("/books/{}", book.id);
    let headers = [(header::LOCATION, location)];
    Ok((StatusCode::CREATED, headers, Json(odm::expanded(&book))).into_response())
}
// ANCHOR_END: create

// ANCHOR: update
/// The body of `PUT /books/{id}`: the book's fields, and the version they were read at.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct BookChange {
    title: String,
    isbn: Isbn,
    pages: i32,
    author: i32,
    version: u64,
}

/// `PUT /books/{id}`: replaces the book if it is still at the version the client read; 200
/// with the new version, 409 when someone wrote it since, 404 when it is gone.
async fn update_book(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<BookChange>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(change) = body?;
    let author = author(&state.odm, change.author).await?;
    let mut book = Book {
        id,
        title: change.title,
        isbn: change.isbn,
        pages: change.pages,
        author,
        version: change.version,
    };
    // One `update` whose filter names the version: written over that version only.
    let result = state.odm.replace_one(&book).await?;
    if result.matched_count == 0 {
        return Err(not_found("book", &book.id));
    }
    book.version += 1;
    Ok(Json(odm::expanded(&book)).into_response())
}
// ANCHOR_END: update

// ANCHOR: delete
/// `DELETE /books/{id}`: 204, or 409 while a loan refers to the book (`restrict`).
async fn delete_book(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    match state
        .odm
        .delete_one(Book::id_field().eq(id.as_str()))
        .await?
    {
        0 => Err(not_found("book", &id)),
        _ => Ok(StatusCode::NO_CONTENT),
    }
}
// ANCHOR_END: delete

/// The body of `POST /loans`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct NewLoan {
    book: String,
    patron: String,
}

/// `POST /loans`: 201 with the loan and its generated id; 404 for a book that does not exist.
async fn create_loan(
    State(state): State<AppState>,
    body: Result<Json<NewLoan>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(new) = body?;
    let book = state.odm.find_id(Book::id_field().eq(new.book.as_str()));
    if book.await?.is_none() {
        return Err(not_found("book", &new.book));
    }
    let loan = Loan {
        id: Some(ObjectId::new()),
        book: Ref::new(new.book),
        patron: new.patron,
    };
    state.odm.insert_one(&loan).await?;
    let id = loan.id.map(|id| id.to_hex());
    let body = json!({ "_id": id, "book": loan.book.id(), "patron": loan.patron });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

// ANCHOR: loan_id
/// `DELETE /loans/{id}`: the id must be an ObjectId's 24 hex digits; anything else names no
/// loan (404) and sends nothing.
async fn delete_loan(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let oid = ObjectId::parse_str(&id).map_err(|_| not_found("loan", &id))?;
    match state.odm.delete_one(Loan::id_field().eq(oid)).await? {
        0 => Err(not_found("loan", &id)),
        _ => Ok(StatusCode::NO_CONTENT),
    }
}
// ANCHOR_END: loan_id

/// The author `id` as a reference loaded with it, for the response; 404 when there is none.
async fn author(odm: &Odm, id: i32) -> Result<Ref<Author>, ApiError> {
    let found = odm.get::<Author>(id).await?;
    let author = found.ok_or_else(|| not_found("author", &id))?;
    Ok(Ref::to(author).unwrap_or_else(|| Ref::new(id)))
}

fn not_found(what: &str, id: &dyn std::fmt::Display) -> ApiError {
    ApiError::NotFound {
        what: format!("{what} {id}"),
    }
}
