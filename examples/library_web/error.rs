//! What a request that fails answers: one status per kind of odm error, and a JSON body naming
//! what went wrong in the client's terms. What the client cannot act on (the server's replies,
//! collection internals, filters) is logged, never sent.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// Why a request failed: an error of odm, or a request the service could not read.
#[derive(Debug)]
pub enum ApiError {
    /// An operation of odm failed.
    Odm(odm::Error),
    /// The body is not JSON, or not the JSON this route takes.
    Json(JsonRejection),
    /// The query string is not the one this route takes.
    Query(QueryRejection),
    /// No document of this resource has this id (`what` is `book the-great-gatsby`).
    NotFound { what: String },
}

impl From<odm::Error> for ApiError {
    fn from(e: odm::Error) -> Self {
        ApiError::Odm(e)
    }
}

impl From<JsonRejection> for ApiError {
    fn from(e: JsonRejection) -> Self {
        ApiError::Json(e)
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> Self {
        ApiError::Query(e)
    }
}

/// The body of every error response: `{"error": "version_conflict", "message": "..."}`, plus
/// what the client needs to act on some of them.
#[derive(Serialize, Debug)]
pub struct ErrorBody {
    /// A stable code, for programs.
    pub error: &'static str,
    /// What went wrong, for people.
    pub message: String,
    /// The field that failed the collection's validator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The stored version, on a version conflict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<i64>,
}

fn body(error: &'static str, message: impl Into<String>) -> ErrorBody {
    ErrorBody {
        error,
        message: message.into(),
        field: None,
        current_version: None,
    }
}

// ANCHOR: into_response
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = match self {
            ApiError::Odm(e) => odm_status(e),
            ApiError::NotFound { what } => (
                StatusCode::NOT_FOUND,
                body("not_found", format!("no {what}")),
            ),
            ApiError::Json(e) => json_status(e),
            ApiError::Query(e) => (
                StatusCode::BAD_REQUEST,
                body("invalid_query", e.body_text()),
            ),
        };
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // When to come back: a client or a load balancer waits this long, then retries.
            let retry = [(header::RETRY_AFTER, RETRY_AFTER_SECONDS.to_string())];
            return (status, retry, Json(body)).into_response();
        }
        (status, Json(body)).into_response()
    }
}

/// The `Retry-After` of a 503, in seconds.
pub const RETRY_AFTER_SECONDS: u32 = 2;

/// The status and body of a body axum could not read as the route's JSON.
fn json_status(e: JsonRejection) -> (StatusCode, ErrorBody) {
    match e {
        // Not JSON, or not the JSON of this route: serde's message names the field and the
        // position, and holds nothing but what the client sent.
        JsonRejection::JsonDataError(_) | JsonRejection::JsonSyntaxError(_) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            body("invalid_json", e.body_text()),
        ),
        JsonRejection::MissingJsonContentType(_) => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            body(
                "unsupported_media_type",
                "send the body as application/json",
            ),
        ),
        // A body past the size limit (413), or one that could not be read.
        e => (e.status(), body("invalid_body", e.body_text())),
    }
}

/// The status and body of an odm error.
fn odm_status(e: odm::Error) -> (StatusCode, ErrorBody) {
    use odm::Error;
    match e {
        Error::NotFound { what, .. } => (
            StatusCode::NOT_FOUND,
            body("not_found", format!("no {what}")),
        ),
        Error::DanglingReference { path, .. } => (
            StatusCode::NOT_FOUND,
            body(
                "dangling_reference",
                format!("the {path} this refers to no longer exists"),
            ),
        ),
        Error::VersionConflict {
            expected, found, ..
        } => (
            StatusCode::CONFLICT,
            ErrorBody {
                current_version: Some(found),
                ..body(
                    "version_conflict",
                    format!(
                        "written since version {expected}: read it again, then send your change"
                    ),
                )
            },
        ),
        Error::DeleteRestricted(refused) => (
            StatusCode::CONFLICT,
            body(
                "delete_restricted",
                format!(
                    "still referred to by {} document(s) of {} through `{}`",
                    refused.count, refused.referenced_by, refused.path
                ),
            ),
        ),
        Error::DuplicateKey { index, .. } => {
            let what = if index == "_id_" {
                "id"
            } else {
                index.trim_end_matches("_1")
            };
            (
                StatusCode::CONFLICT,
                body("duplicate", format!("this {what} is taken")),
            )
        }
        Error::DocumentInvalid { path, reason, .. } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorBody {
                field: Some(path.clone()),
                ..body(
                    "invalid_document",
                    format!("`{path}` is not valid: {reason}"),
                )
            },
        ),
        Error::InvalidPageToken { .. } => (
            StatusCode::BAD_REQUEST,
            body(
                "invalid_page_token",
                "not a token of this list: start again from the first page",
            ),
        ),
        // The database is down or unreachable: nothing was sent, so the request can be sent
        // again as it is once it is back.
        e if e.is_unreachable() => {
            eprintln!("library_web: database unreachable: {e}");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                body(
                    "unavailable",
                    "the database cannot be reached: try again shortly",
                ),
            )
        }
        // The connection broke while the command was on its way: it may or may not have run.
        e if e.is_outcome_unknown() => {
            eprintln!("library_web: outcome unknown: {e}");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                body(
                    "outcome_unknown",
                    "the database stopped answering: read the resource back before sending a change again",
                ),
            )
        }
        e if e.is_transient() => {
            eprintln!("library_web: transient error: {e}");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                body("unavailable", "try again"),
            )
        }
        e => {
            eprintln!("library_web: internal error: {e}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                body("internal", "internal error"),
            )
        }
    }
}
// ANCHOR_END: into_response
