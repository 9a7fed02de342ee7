//! The library's web service (`examples/library_web`), tested over HTTP: each test serves the
//! router on a free local port against a database of its own, sends real requests, checks the
//! statuses and bodies, and reads back what landed with the raw driver.

#[path = "../library_web/mod.rs"]
mod web;

use std::future::Future;
use std::time::Duration;

use odm::bson::{doc, Document};
use odm::testing::{FaultProxy, TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use web::app::{self, AppState};

type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> = std::result::Result<T, E>;

/// The service on a free port, over a database seeded with three authors and five books.
struct Service {
    base: String,
    http: reqwest::Client,
    stop: oneshot::Sender<()>,
    server: JoinHandle<std::io::Result<()>>,
    db: TestDb,
}

impl Service {
    /// Serves through `db`'s own handle.
    async fn start() -> Result<Service> {
        let db = TestDb::new().await?;
        web::models::prepare(db.odm()).await?;
        let odm = db.odm().clone();
        Service::serve(db, odm).await
    }

    // ANCHOR: serve
    /// Serves through `odm`, a handle on `db`'s database (through a proxy, say).
    async fn serve(db: TestDb, odm: odm::Odm) -> Result<Service> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = oneshot::channel::<()>();
        let state = AppState { odm, page_size: 2 };
        let server = tokio::spawn(app::serve(listener, state, async {
            let _ = stopped.await;
        }));
        Ok(Service {
            base,
            http: reqwest::Client::new(),
            stop,
            server,
            db,
        })
    }
    // ANCHOR_END: serve

    /// Sends a request, with `body` as JSON; returns the status and the body (`null` when
    /// empty).
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(StatusCode, Value)> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await?;
        let status = response.status();
        let text = response.text().await?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text)?
        };
        Ok((status, body))
    }

    async fn get(&self, path: &str) -> Result<(StatusCode, Value)> {
        self.send(Method::GET, path, None).await
    }

    /// Sends a body as it is, with the JSON content type (or none).
    async fn send_raw(
        &self,
        path: &str,
        body: &'static str,
        json: bool,
    ) -> Result<(StatusCode, Value)> {
        let mut request = self.http.post(format!("{}{path}", self.base)).body(body);
        if json {
            request = request.header("content-type", "application/json");
        }
        let response = request.send().await?;
        Ok((response.status(), response.json().await?))
    }

    /// The stored document, read with the raw driver.
    async fn stored(
        &self,
        collection: &str,
        id: impl Into<odm::bson::Bson>,
    ) -> Result<Option<Document>> {
        let found = self
            .db
            .raw()
            .collection::<Document>(collection)
            .find_one(doc! { "_id": id.into() })
            .await?;
        Ok(found)
    }

    async fn count(&self, collection: &str) -> Result<u64> {
        Ok(self
            .db
            .raw()
            .collection::<Document>(collection)
            .count_documents(doc! {})
            .await?)
    }

    /// Signals the shutdown and waits for the server to return.
    async fn stop(self) -> Result {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(10), self.server).await???;
        Ok(())
    }
}

fn titles(page: &Value) -> Vec<&str> {
    page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["title"].as_str())
        .collect()
}

fn tender() -> Value {
    json!({
        "_id": "tender-is-the-night",
        "title": "Tender Is the Night",
        "isbn": "9780684801544",
        "pages": 315,
        "author": 1,
    })
}

#[tokio::test]
async fn pages_of_books_carry_their_authors_and_the_token_of_the_next() -> Result {
    let service = Service::start().await?;
    let (status, first) = service.get("/books").await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(titles(&first), ["Death of a Salesman", "Mrs Dalloway"]);
    assert_eq!(
        first["items"][0]["author"],
        json!({ "_id": 2, "name": "Arthur Miller" })
    );
    assert_eq!(first["items"][0]["version"], 0);

    let mut all: Vec<String> = titles(&first).iter().map(|t| t.to_string()).collect();
    let mut next = first["next"].clone();
    while let Some(token) = next.as_str() {
        let (status, page) = service.get(&format!("/books?after={token}")).await?;
        assert_eq!(status, StatusCode::OK);
        all.extend(titles(&page).iter().map(|t| t.to_string()));
        next = page["next"].clone();
    }
    assert_eq!(
        all,
        [
            "Death of a Salesman",
            "Mrs Dalloway",
            "Orlando",
            "The Great Gatsby",
            "This Side of Paradise"
        ]
    );

    let (status, fitzgerald) = service.get("/books?author=1").await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        titles(&fitzgerald),
        ["The Great Gatsby", "This Side of Paradise"]
    );
    assert_eq!(fitzgerald["next"], Value::Null);
    // A token is bound to its query: the unfiltered list's is refused by the filtered one.
    let token = first["next"].as_str().ok_or("a token")?;
    let (status, body) = service
        .get(&format!("/books?author=1&after={token}"))
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_page_token");
    service.stop().await
}

#[tokio::test]
async fn values_from_the_client_never_become_operators() -> Result {
    let service = Service::start().await?;
    // `{"$gt":""}` as a token, an operator as a parameter's name or value.
    for path in [
        "/books?after=%7B%22%24gt%22%3A%22%22%7D",
        "/books?author%5B%24ne%5D=1",
        "/books?author=%7B%22%24ne%22%3A1%7D",
    ] {
        let (status, body) = service.get(path).await?;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
    }
    // Ids that spell operators name no document: nothing is read, deleted or lent.
    for id in [
        "%7B%22%24ne%22%3Anull%7D",
        "%7B%22%24gt%22%3A%22%22%7D",
        "%24where",
    ] {
        let (status, body) = service.get(&format!("/books/{id}")).await?;
        assert_eq!(
            (status, &body["error"]),
            (StatusCode::NOT_FOUND, &json!("not_found"))
        );
        let (status, _) = service
            .send(Method::DELETE, &format!("/books/{id}"), None)
            .await?;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = service
            .send(Method::DELETE, &format!("/loans/{id}"), None)
            .await?;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    assert_eq!(service.count("books").await?, 5);
    // An operator where the body has a value is not the JSON of a book.
    let mut book = tender();
    book["author"] = json!({ "$ne": null });
    let (status, body) = service.send(Method::POST, "/books", Some(book)).await?;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!("invalid_json"))
    );
    // Strings that look like operators are stored, and found, as they are.
    let mut book = tender();
    book["_id"] = json!("$ne");
    book["title"] = json!("$where");
    let (status, _) = service.send(Method::POST, "/books", Some(book)).await?;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = service.get("/books/%24ne").await?;
    assert_eq!((status, &body["title"]), (StatusCode::OK, &json!("$where")));
    let stored = service.stored("books", "$ne").await?.ok_or("stored")?;
    assert_eq!(stored.get_str("title")?, "$where");
    service.stop().await
}

#[tokio::test]
async fn writes_are_checked_against_the_version_the_client_read() -> Result {
    let service = Service::start().await?;
    let response = service
        .http
        .post(format!("{}/books", service.base))
        .json(&tender())
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = response.headers().get("location").map(|l| l.to_str());
    assert_eq!(location.transpose()?, Some("/books/tender-is-the-night"));
    let created: Value = response.json().await?;
    assert_eq!(created["version"], 0);
    assert_eq!(created["author"]["name"], "F. Scott Fitzgerald");
    let stored = service
        .stored("books", "tender-is-the-night")
        .await?
        .ok_or("stored")?;
    assert_eq!(
        stored,
        doc! {
            "_id": "tender-is-the-night", "title": "Tender Is the Night", "isbn": "9780684801544",
            "pages": 315, "author": 1, "version": 0_i64,
        }
    );
    let (status, body) = service.send(Method::POST, "/books", Some(tender())).await?;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["message"], "this id is taken");
    let mut same_isbn = tender();
    same_isbn["_id"] = json!("tender-is-the-night-2");
    let (status, body) = service
        .send(Method::POST, "/books", Some(same_isbn))
        .await?;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["message"], "this isbn is taken");

    let mut change = tender();
    change.as_object_mut().ok_or("an object")?.remove("_id");
    change["pages"] = json!(317);
    change["version"] = json!(0);
    let path = "/books/tender-is-the-night";
    let (status, updated) = service
        .send(Method::PUT, path, Some(change.clone()))
        .await?;
    assert_eq!((status, &updated["version"]), (StatusCode::OK, &json!(1)));
    // The same change from a stale copy: refused, and the stored book is the first change's.
    change["pages"] = json!(999);
    let (status, body) = service
        .send(Method::PUT, path, Some(change.clone()))
        .await?;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"], "version_conflict");
    assert_eq!(body["current_version"], 1);
    let stored = service
        .stored("books", "tender-is-the-night")
        .await?
        .ok_or("stored")?;
    assert_eq!(
        (stored.get_i32("pages")?, stored.get_i64("version")?),
        (317, 1)
    );

    let (status, _) = service
        .send(Method::PUT, "/books/moby-dick", Some(change.clone()))
        .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    change["author"] = json!(99);
    change["version"] = json!(1);
    let (status, body) = service.send(Method::PUT, path, Some(change)).await?;
    assert_eq!(
        (status, &body["message"]),
        (StatusCode::NOT_FOUND, &json!("no author 99"))
    );
    // The version is odm's to keep: a new book naming one is refused.
    let mut versioned = tender();
    versioned["_id"] = json!("another");
    versioned["version"] = json!(7);
    let (status, _) = service
        .send(Method::POST, "/books", Some(versioned))
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(service.stored("books", "another").await?, None);
    service.stop().await
}

#[tokio::test]
async fn documents_the_validator_refuses_and_bad_json_are_422() -> Result {
    let service = Service::start().await?;
    let mut book = tender();
    book["isbn"] = json!("0-684-80154-X");
    let (status, body) = service.send(Method::POST, "/books", Some(book)).await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        (&body["error"], &body["field"]),
        (&json!("invalid_document"), &json!("isbn"))
    );
    assert_eq!(service.stored("books", "tender-is-the-night").await?, None);
    // A replacement too: the stored book is left as it was.
    let change = json!({
        "title": "The Great Gatsby", "isbn": "978185715019", "pages": 176, "author": 1, "version": 0,
    });
    let (status, body) = service
        .send(Method::PUT, "/books/the-great-gatsby", Some(change))
        .await?;
    assert_eq!(
        (status, &body["field"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!("isbn"))
    );
    let stored = service
        .stored("books", "the-great-gatsby")
        .await?
        .ok_or("stored")?;
    assert_eq!(
        (stored.get_str("isbn")?, stored.get_i64("version")?),
        ("9781857150193", 0)
    );

    for bad in [
        r#"{"_id": "x", "title": "#,
        r#"{"_id": "x", "title": "X"}"#,
        "[]",
    ] {
        let (status, body) = service.send_raw("/books", bad, true).await?;
        assert_eq!(
            (status, &body["error"]),
            (StatusCode::UNPROCESSABLE_ENTITY, &json!("invalid_json"))
        );
    }
    let (status, body) = service.send_raw("/books", r#"{"_id": "x"}"#, false).await?;
    assert_eq!(
        (status, &body["error"]),
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &json!("unsupported_media_type")
        )
    );
    // Past axum's limit of 2 MB a body is not read at all.
    let mut big = tender();
    big["title"] = json!("x".repeat(3 << 20));
    let (status, body) = service.send(Method::POST, "/books", Some(big)).await?;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::PAYLOAD_TOO_LARGE, &json!("invalid_body"))
    );
    assert_eq!(service.count("books").await?, 5);
    service.stop().await
}

#[tokio::test]
async fn a_lent_book_cannot_be_deleted() -> Result {
    let service = Service::start().await?;
    let loan = json!({ "book": "the-great-gatsby", "patron": "emily" });
    let (status, lent) = service.send(Method::POST, "/loans", Some(loan)).await?;
    assert_eq!(status, StatusCode::CREATED);
    let loan_id = lent["_id"].as_str().ok_or("a loan id")?;
    let oid = odm::bson::oid::ObjectId::parse_str(loan_id)?;
    let stored = service.stored("loans", oid).await?.ok_or("stored")?;
    assert_eq!(stored.get_str("book")?, "the-great-gatsby");

    let (status, body) = service
        .send(Method::DELETE, "/books/the-great-gatsby", None)
        .await?;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::CONFLICT, &json!("delete_restricted"))
    );
    assert!(service.stored("books", "the-great-gatsby").await?.is_some());

    let unknown = json!({ "book": "moby-dick", "patron": "emily" });
    let (status, _) = service.send(Method::POST, "/loans", Some(unknown)).await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(service.count("loans").await?, 1);
    for id in ["not-an-id", "000000000000000000000000"] {
        let (status, _) = service
            .send(Method::DELETE, &format!("/loans/{id}"), None)
            .await?;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    let (status, _) = service
        .send(Method::DELETE, &format!("/loans/{loan_id}"), None)
        .await?;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = service
        .send(Method::DELETE, "/books/the-great-gatsby", None)
        .await?;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
    assert_eq!(service.stored("books", "the-great-gatsby").await?, None);
    let (status, _) = service
        .send(Method::DELETE, "/books/the-great-gatsby", None)
        .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    service.stop().await
}

#[tokio::test]
async fn unknown_and_dangling_ids_are_404() -> Result {
    let service = Service::start().await?;
    let (status, body) = service.get("/books/moby-dick").await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body,
        json!({ "error": "not_found", "message": "no book moby-dick" })
    );
    let mut book = tender();
    book["author"] = json!(99);
    let (status, body) = service.send(Method::POST, "/books", Some(book)).await?;
    assert_eq!(
        (status, &body["message"]),
        (StatusCode::NOT_FOUND, &json!("no author 99"))
    );
    assert_eq!(service.stored("books", "tender-is-the-night").await?, None);

    // Virginia Woolf deleted by another program, without the delete rules: her books' author
    // is dangling.
    service
        .db
        .raw()
        .collection::<Document>("authors")
        .delete_one(doc! { "_id": 3 })
        .await?;
    let (status, body) = service.get("/books/orlando").await?;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::NOT_FOUND, &json!("dangling_reference"))
    );
    // Nothing internal in the body: no collection, no filter, no server reply.
    assert_eq!(
        body["message"],
        "the author this refers to no longer exists"
    );
    let (status, _) = service.get("/books/the-great-gatsby").await?;
    assert_eq!(status, StatusCode::OK);
    service.stop().await
}

/// Waits (at most 10 s) until `done` holds.
async fn until(done: impl Fn() -> bool) -> Result {
    until_async(|| std::future::ready(done())).await
}

async fn until_async<F: Future<Output = bool>>(done: impl Fn() -> F) -> Result {
    let wait = async {
        while !done().await {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    Ok(tokio::time::timeout(Duration::from_secs(10), wait).await?)
}

// ANCHOR: shutdown
#[tokio::test]
async fn shutdown_answers_the_requests_in_flight_then_stops() -> Result {
    let db = TestDb::new().await?;
    web::models::prepare(db.odm()).await?;
    // The service reaches the database through a proxy that can hold its commands.
    let proxy = FaultProxy::start().await?;
    let odm = proxy.odm(db.name()).await?;
    let service = Service::serve(db, odm).await?;
    let (status, _) = service.get("/books").await?;
    assert_eq!(status, StatusCode::OK);

    // The database runs the page's `find`, then holds its reply.
    let finds = proxy.count_of("find");
    proxy.pause_after("find", 1);
    let in_flight = tokio::spawn(service.http.get(format!("{}/books", service.base)).send());
    until(|| proxy.count_of("find") > finds).await?;
    let address = service.base.trim_start_matches("http://").to_owned();
    let stopping = tokio::spawn(service.stop());
    // The listener closes: new connections are refused...
    until_async(|| async { TcpStream::connect(&address).await.is_err() }).await?;
    // ... while the server waits for the request in flight.
    assert!(!stopping.is_finished());
    proxy.resume();
    let response = tokio::time::timeout(Duration::from_secs(10), in_flight).await???;
    assert_eq!(response.status(), StatusCode::OK);
    let page: Value = response.json().await?;
    assert_eq!(titles(&page), ["Death of a Salesman", "Mrs Dalloway"]);
    tokio::time::timeout(Duration::from_secs(10), stopping).await???;
    Ok(())
}
// ANCHOR_END: shutdown

// ANCHOR: outage
#[tokio::test]
async fn a_database_outage_is_503_with_retry_after_within_two_seconds() -> Result {
    let db = TestDb::new().await?;
    web::models::prepare(db.odm()).await?;
    // The service's own handle (its timeouts), through a proxy that can play the outage.
    let proxy = FaultProxy::start().await?;
    let options = odm::mongodb::options::ClientOptions::parse(proxy.uri()).await?;
    let odm = web::connect::handle(options, db.name())?;
    let service = Service::serve(db, odm).await?;
    let (status, _) = service.get("/books").await?;
    assert_eq!(status, StatusCode::OK);

    // The database goes away: its connections close and no new one is accepted.
    proxy.cut();
    for path in ["/books", "/books/the-great-gatsby"] {
        let started = std::time::Instant::now();
        let response = service
            .http
            .get(format!("{}{path}", service.base))
            .send()
            .await?;
        let waited = started.elapsed();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        let retry = response.headers().get("retry-after").map(|r| r.to_str());
        assert_eq!(retry.transpose()?, Some("2"), "{path}");
        let body: Value = response.json().await?;
        assert!(
            ["unavailable", "outcome_unknown"].contains(&body["error"].as_str().unwrap_or("")),
            "{path}: {body}"
        );
        assert!(
            waited < Duration::from_secs(3),
            "{path}: answered after {waited:?}"
        );
    }
    // Once no connection is left, it is told as an unreachable server: nothing was sent.
    let (status, body) = service.get("/books").await?;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::SERVICE_UNAVAILABLE, &json!("unavailable"))
    );
    // The stored books are untouched (read past the proxy).
    assert_eq!(service.count("books").await?, 5);
    service.stop().await
}
// ANCHOR_END: outage
