//! The library as a web service (axum): books listed a page at a time with their authors, keyset
//! pages continued with a token, creates and updates checked against the version the client
//! read, deletes refused while a loan refers to the book, and every odm error answered with its
//! HTTP status and a JSON body (`library_web/error.rs`). The routes are in `library_web/app.rs`,
//! the models in `library_web/models.rs`; the test `tests/library_web.rs` serves the same router.
//!
//! Run it with `cargo run -p odm-examples --example library_web`: it uses `MONGODB_URI` when
//! set, else starts the local development server (`cargo xtask examples` installs it). It
//! starts the service on a free port, sends it a scripted session of requests, printing each
//! with its answer and the commands it sent to the database, then shuts the service down
//! gracefully. With `-- --serve` it serves on `127.0.0.1:3000` (or `LIBRARY_WEB_ADDR`) until
//! ctrl-c or SIGTERM instead.

#[path = "common/mod.rs"]
mod common;
#[path = "library_web/mod.rs"]
mod web;

use common::{say, Steps};
use odm::mongodb::options::ClientOptions;
use odm::monitor::CommandLog;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use web::app::{self, AppState};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() {
    let serve = std::env::args().any(|arg| arg == "--serve");
    let result = run(serve).await;
    common::shutdown().await;
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run(serve: bool) -> Result<(), Error> {
    let (odm, steps) = connect().await?;
    steps.start("Install the indexes and validators the models declare, then authors and books");
    web::models::prepare(&odm).await?;
    say("3 authors, 5 books");
    steps.sent();

    // ANCHOR: main
    // The page tokens are sealed with the service's own key when it has one (the same on
    // every instance), so that only the service issues them.
    let odm = match std::env::var("LIBRARY_WEB_PAGE_KEY") {
        Ok(key) => odm.with_page_key(key),
        Err(_) => odm,
    };
    let state = AppState {
        odm: odm.clone(),
        page_size: 3,
    };
    let result = if serve {
        let addr = std::env::var("LIBRARY_WEB_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
        let listener = TcpListener::bind(&addr).await?;
        println!(
            "\nServing on http://{}; ctrl-c to stop.",
            listener.local_addr()?
        );
        app::serve(listener, state, shutdown_signal()).await?;
        Ok(())
    } else {
        // A free port; the session below is the client, and says when to stop.
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(app::serve(listener, state, async {
            let _ = stopped.await;
        }));
        let session = session(&Client::new(base, &steps)).await;
        let _ = stop.send(());
        server.await??;
        session
    };
    // ANCHOR_END: main
    println!("\nThe service stopped: every request in flight was answered first.");
    common::drop_database(&odm).await?;
    result
}

/// [`common::connect`], with the service's timeouts (`library_web/connect.rs`): a database
/// outage is answered with 503 in about a second and a half.
async fn connect() -> Result<(odm::Odm, Steps), Error> {
    let uri = odm::testing::test_uri()?;
    let mut options = ClientOptions::parse(&uri).await?;
    let log = CommandLog::with_documents();
    log.attach(&mut options);
    let db_name = format!("odm_library_web_{}", std::process::id());
    let odm = web::connect::handle(options, &db_name)?;
    common::shut_down_at_exit(odm.client());
    println!("odm library_web example: database `{db_name}` on {uri}");
    println!("Each step prints what it did and the commands it sent to the server.");
    Ok((odm, Steps::new(log)))
}

// ANCHOR: shutdown_signal
/// Completes on ctrl-c, or on SIGTERM (what a service manager or an orchestrator sends).
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                terminate.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
// ANCHOR_END: shutdown_signal

/// The scripted session: each request with its answer and the commands it sent.
async fn session(client: &Client<'_>) -> Result<(), Error> {
    read(client).await?;
    write(client).await?;
    lend_and_delete(client).await
}

/// Pages, a token altered, one book, an id spelling an operator.
async fn read(client: &Client<'_>) -> Result<(), Error> {
    let first = client
        .send(
            "The first page of books, each with its author",
            Method::GET,
            "/books",
            None,
        )
        .await?;
    let next = first["next"].as_str().ok_or("a second page")?.to_owned();
    client
        .send(
            "The next page: the token as `after`",
            Method::GET,
            &format!("/books?after={next}"),
            None,
        )
        .await?;
    client
        .send(
            "A token that was altered",
            Method::GET,
            &format!("/books?after={}", altered(&next)),
            None,
        )
        .await?;
    client
        .send(
            "One book, with its author",
            Method::GET,
            "/books/the-great-gatsby",
            None,
        )
        .await?;
    client
        .send(
            "An id that spells an operator is a value: it names no book",
            Method::GET,
            "/books/%7B%22%24ne%22%3Anull%7D",
            None,
        )
        .await?;
    Ok(())
}

/// A book created, refused twice, changed, and changed again from a stale copy.
async fn write(client: &Client<'_>) -> Result<(), Error> {
    let tender = json!({
        "_id": "tender-is-the-night",
        "title": "Tender Is the Night",
        "isbn": "9780684801544",
        "pages": 315,
        "author": 1,
    });
    client
        .send(
            "Create a book",
            Method::POST,
            "/books",
            Some(tender.clone()),
        )
        .await?;
    let mut bad_isbn = tender.clone();
    bad_isbn["_id"] = json!("the-beautiful-and-damned");
    bad_isbn["isbn"] = json!("0-684-80154-X");
    client
        .send(
            "An ISBN the collection's validator refuses",
            Method::POST,
            "/books",
            Some(bad_isbn),
        )
        .await?;
    let mut bad_json = tender.clone();
    bad_json["pages"] = json!("many");
    client
        .send(
            "JSON that is not a book",
            Method::POST,
            "/books",
            Some(bad_json),
        )
        .await?;
    let change = json!({
        "title": "Tender Is the Night",
        "isbn": "9780684801544",
        "pages": 317,
        "author": 1,
        "version": 0,
    });
    let path = "/books/tender-is-the-night";
    client
        .send(
            "Change it, at the version read (0)",
            Method::PUT,
            path,
            Some(change.clone()),
        )
        .await?;
    client
        .send(
            "The same change from a stale copy (version 0 again)",
            Method::PUT,
            path,
            Some(change),
        )
        .await?;
    Ok(())
}

/// A lent book that cannot be deleted until it is returned.
async fn lend_and_delete(client: &Client<'_>) -> Result<(), Error> {
    let loan = client
        .send(
            "Lend The Great Gatsby",
            Method::POST,
            "/loans",
            Some(json!({ "book": "the-great-gatsby", "patron": "emily" })),
        )
        .await?;
    let gatsby = "/books/the-great-gatsby";
    client
        .send("Delete it while it is lent", Method::DELETE, gatsby, None)
        .await?;
    let loan_id = loan["_id"].as_str().ok_or("a loan id")?;
    client
        .send(
            "Return it",
            Method::DELETE,
            &format!("/loans/{loan_id}"),
            None,
        )
        .await?;
    client
        .send("Delete it now", Method::DELETE, gatsby, None)
        .await?;
    Ok(())
}

/// The token with its fifth character changed.
fn altered(token: &str) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    chars[4] = if chars[4] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// Sends the session's requests to the service and prints them.
struct Client<'a> {
    http: reqwest::Client,
    base: String,
    steps: &'a Steps,
}

impl<'a> Client<'a> {
    fn new(base: String, steps: &'a Steps) -> Self {
        Client {
            http: reqwest::Client::new(),
            base,
            steps,
        }
    }

    /// Sends one request as a step of its own; prints the status, the body and the commands
    /// the service sent to the database to answer it. Returns the body (`null` when empty).
    async fn send(
        &self,
        what: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Error> {
        self.steps.start(what);
        say(format_args!("{method} {}", shortened(path)));
        if let Some(body) = &body {
            say(format_args!("  {body}"));
        }
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = &body {
            request = request.json(body);
        }
        let response = request.send().await?;
        let status = response.status();
        let text = response.text().await?;
        let answer: Value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text)?
        };
        say(format_args!("→ {}", status_line(status)));
        print_body(&answer);
        self.steps.sent();
        Ok(answer)
    }
}

fn status_line(status: StatusCode) -> String {
    let reason = status.canonical_reason().unwrap_or_default();
    format!("{} {reason}", status.as_u16())
}

/// A page's books one a line, its token cut short; any other body on one line.
fn print_body(body: &Value) {
    match body.get("items").and_then(Value::as_array) {
        Some(items) => {
            for item in items {
                say(format_args!("  {item}"));
            }
            let next = body["next"].as_str().map(shortened);
            say(format_args!(
                "  next: {}",
                next.as_deref().unwrap_or("null")
            ));
        }
        None if body.is_null() => {}
        None => say(format_args!("  {body}")),
    }
}

/// A path or token with a long token cut to its first characters.
fn shortened(text: &str) -> String {
    match text.split_once("after=") {
        Some((before, token)) => format!("{before}after={}", shortened(token)),
        None if text.len() > 24 && !text.contains('/') => format!("{}…", &text[..12]),
        None => text.to_owned(),
    }
}
