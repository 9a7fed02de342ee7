//! The operations console (`examples/console.rs`), run as a process: exit codes, `--json`
//! output, `--help`, a stale copy planted with the raw driver, found by `verify` and fixed
//! by `repair` (read back raw), the collection scans `explain` finds until `sync`, migrations
//! listed, run and reverted (read back raw), errors said in one line with their kind,
//! `--uri`, `--db` and `--connect-timeout`, and a stdout closed before the report.

#[path = "../console/models.rs"]
mod models;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use odm::bson::{doc, Document};
use odm::console::{Console, FAILED, PROBLEMS, SUCCESS};
use odm::prelude::*;
use odm::testing::TestDb;
use serde_json::Value;

type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> = std::result::Result<T, E>;

/// The example's binary, next to this test's (`target/<profile>/examples/console`), built
/// here (once per test process) when it is missing or older than a source it is built from:
/// `cargo test --test console` builds no example, and `--all-targets` builds them as tests.
fn binary() -> Result<PathBuf> {
    static BUILT: std::sync::OnceLock<std::result::Result<PathBuf, String>> =
        std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| build().map_err(|e| e.to_string()))
        .clone()
        .map_err(Into::into)
}

fn build() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .ok_or("no target directory")?;
    let path = profile
        .join("examples")
        .join(format!("console{}", std::env::consts::EXE_SUFFIX));
    let built = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sources = [root.clone(), root.join("../odm/src")];
    if built.is_none_or(|b| sources.iter().any(|d| newer_than(d, b))) {
        let status = Command::new(env!("CARGO"))
            // The workspace's selection, as the CI's `cargo build --workspace --examples`:
            // the same features, so that nothing else is built again for it.
            .args(["build", "--quiet", "--workspace", "--example", "console"])
            .status()?;
        assert!(status.success(), "cargo build --example console failed");
    }
    Ok(path)
}

/// Whether a file under `dir` changed after `time`.
fn newer_than(dir: &std::path::Path, time: std::time::SystemTime) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            newer_than(&path, time)
        } else {
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|m| m > time)
        }
    })
}

/// Runs the console on `db`'s database (`uri`: the server, else the test server).
fn console_at(uri: &str, db: &str, args: &[&str]) -> Result<Output> {
    Ok(Command::new(binary()?)
        .args(args)
        .env("MONGODB_URI", uri)
        .env("ODM_CONSOLE_DB", db)
        .output()?)
}

fn console(db: &TestDb, args: &[&str]) -> Result<Output> {
    console_at(&odm::testing::test_uri()?, db.name(), args)
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

fn json(out: &Output) -> Result<Value> {
    Ok(serde_json::from_slice(&out.stdout)?)
}

#[tokio::test]
async fn help_on_a_subcommand() -> Result {
    let db = TestDb::new().await?;
    let out = console(&db, &["verify", "--help"])?;
    assert_eq!(code(&out), Some(0));
    let help = String::from_utf8(out.stdout)?;
    assert!(
        help.contains("Usage:") && help.contains("--batch-size"),
        "{help}"
    );
    let help = String::from_utf8(console(&db, &["--help"])?.stdout)?;
    assert!(
        help.contains("--uri") && help.contains("--connect-timeout"),
        "{help}"
    );
    assert!(help.contains("How long-running work"), "{help}");
    let out = console(&db, &["migrate", "status", "--help"])?;
    assert_eq!(code(&out), Some(0));
    assert!(String::from_utf8(out.stdout)?.contains("--check"));
    // A wrong argument is a failure, said on stderr.
    let out = console(&db, &["verfy"])?;
    assert_eq!(code(&out), Some(2));
    assert!(String::from_utf8(out.stderr)?.contains("verfy"));
    Ok(())
}

#[tokio::test]
async fn sync_dry_run_says_what_would_change_and_changes_nothing() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    let out = console(&db, &["sync", "--dry-run", "--json"])?;
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out)?;
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["in_sync"], false);
    let parts = report["indexes"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["collection"] == "parts"))
        .ok_or("no parts in the report")?;
    assert!(parts["to_create"]
        .as_array()
        .is_some_and(|a| a.contains(&"partno_1".into())));
    // Nothing was created.
    let names = db
        .raw()
        .collection::<Document>("parts")
        .list_index_names()
        .await?;
    assert_eq!(names, vec!["_id_".to_owned()]);

    let out = console(&db, &["--json", "sync"])?;
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out)?;
    assert_eq!(report["dry_run"], false);
    let names = db
        .raw()
        .collection::<Document>("parts")
        .list_index_names()
        .await?;
    assert!(names.contains(&"partno_1".to_owned()), "{names:?}");

    let out = console(&db, &["sync", "--dry-run", "--json"])?;
    assert_eq!(code(&out), Some(0));
    assert_eq!(json(&out)?["in_sync"], true);

    // An index no model declares: reported by the dry run and kept by sync (exit 1 both),
    // dropped when asked.
    let parts_raw = db.raw().collection::<Document>("parts");
    parts_raw
        .create_index(
            odm::mongodb::IndexModel::builder()
                .keys(doc! { "name": 1 })
                .build(),
        )
        .await?;
    let out = console(&db, &["sync", "--dry-run", "--json"])?;
    assert_eq!(code(&out), Some(1));
    let report = json(&out)?;
    let parts = report["indexes"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["collection"] == "parts"))
        .ok_or("no parts in the report")?;
    assert_eq!(parts["extra"], serde_json::json!(["name_1"]));
    assert_eq!(code(&console(&db, &["sync"])?), Some(1));
    assert!(parts_raw
        .list_index_names()
        .await?
        .contains(&"name_1".to_owned()));
    assert_eq!(code(&console(&db, &["sync", "--drop-extra"])?), Some(0));
    assert!(!parts_raw
        .list_index_names()
        .await?
        .contains(&"name_1".to_owned()));
    Ok(())
}

#[tokio::test]
async fn verify_finds_a_stale_copy_and_repair_fixes_it() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    let out = console(&db, &["verify", "--json"])?;
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&out)?["clean"], true);

    // The product's summary of part 2, written behind the ODM's back.
    let products = db.raw().collection::<Document>("products");
    products
        .update_one(
            doc! { "_id": 10, "parts.id": 2 },
            doc! { "$set": { "parts.$.name": "fuze" } },
        )
        .await?;

    let out = console(&db, &["verify", "--json"])?;
    assert_eq!(code(&out), Some(1));
    let report = json(&out)?;
    assert_eq!(report["clean"], false);
    let bad = report["bad_documents"]
        .as_array()
        .ok_or("no bad documents")?;
    assert_eq!(bad.len(), 1, "{report}");
    assert_eq!(bad[0]["collection"], "products");
    assert_eq!(bad[0]["id"], 10);
    assert_eq!(bad[0]["path"], "parts.name");
    // Text: the summary table and the document.
    let out = console(&db, &["verify"])?;
    let text = String::from_utf8(out.stdout)?;
    assert!(
        text.contains("check") && text.contains("products 10"),
        "{text}"
    );

    let out = console(&db, &["repair", "--json"])?;
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report = json(&out)?;
    assert_eq!(report["repaired"], 1);
    assert_eq!(report["left"], Value::Array(Vec::new()));
    let stored = products
        .find_one(doc! { "_id": 10 })
        .await?
        .ok_or("no product")?;
    let names: Vec<&str> = stored
        .get_array("parts")?
        .iter()
        .filter_map(|p| p.as_document()?.get_str("name").ok())
        .collect();
    assert_eq!(names, ["#4 grommet", "fuse"]);
    assert_eq!(code(&console(&db, &["verify"])?), Some(0));
    Ok(())
}

#[tokio::test]
async fn progress_lines_on_stderr_when_not_a_terminal() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    // The test reads stderr through a pipe: lines, not bars, and stdout keeps its JSON.
    let out = console(&db, &["verify", "--json"])?;
    assert_eq!(code(&out), Some(0));
    assert_eq!(json(&out)?["clean"], true);
    let err = String::from_utf8(out.stderr)?;
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("progress: verify copies products.parts: "))
        .collect();
    assert_eq!(lines.len(), 2, "its start and its end: {err}");
    assert!(lines[0].contains(": 0/"), "{err}");
    assert!(
        lines[1].contains(" documents, ") && lines[1].contains("done in"),
        "{err}"
    );

    let out = console(&db, &["verify", "--progress", "none"])?;
    assert_eq!(code(&out), Some(0));
    assert!(!String::from_utf8(out.stderr)?.contains("progress:"));
    // A wrong argument under --json is a JSON error too.
    let out = console(&db, &["verify", "--progress", "loud", "--json"])?;
    assert_eq!(code(&out), Some(2));
    let error = json(&out)?;
    assert!(
        error["error"].as_str().is_some_and(|e| e.contains("loud")),
        "{error}"
    );
    Ok(())
}

#[tokio::test]
async fn explain_reports_collection_scans_until_the_indexes_are_synced() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    // The collections hold documents, their declared indexes are missing: the cascades and
    // the delete rule scan them.
    let out = console(&db, &["explain", "--json"])?;
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out)?;
    assert_eq!(report["clean"], false);
    let shapes = report["shapes"].as_array().ok_or("no shapes")?;
    let scans: Vec<(&str, &str)> = shapes
        .iter()
        .filter(|s| s["problem"] == true)
        .map(|s| {
            (
                s["collection"].as_str().unwrap_or_default(),
                s["shape"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        scans,
        [
            ("parts", "{ product: { $in: [?] } }"),
            ("products", "{ parts.id: { $in: [?] } }"),
        ],
        "{report}"
    );
    assert_eq!(report["problems"], 2);
    let cascade = shapes
        .iter()
        .find(|s| s["collection"] == "products" && s["command"] == "update")
        .ok_or("no cascade into products")?;
    assert_eq!(cascade["access"], "collection scan");
    assert_eq!(cascade["declared"], "parts.id_1");
    assert!(cascade["sent_by"].as_array().is_some_and(|f| f
        .iter()
        .any(|f| f["feature"] == "cascade" && f["model"] == "Part")));
    // The text: the table and a line per problem.
    let text = String::from_utf8(console(&db, &["explain"])?.stdout)?;
    assert!(
        text.contains("COLLSCAN") && text.contains("PROBLEM products"),
        "{text}"
    );

    assert_eq!(code(&console(&db, &["sync"])?), Some(0));
    let out = console(&db, &["explain", "--json"])?;
    assert_eq!(code(&out), Some(0));
    let report = json(&out)?;
    assert_eq!(report["clean"], true);
    let shapes = report["shapes"].as_array().ok_or("no shapes")?;
    assert!(shapes.iter().all(|s| s["access"] == "index"), "{report}");

    // One model's shapes; an unknown model fails.
    let out = console(&db, &["explain", "Part", "--json"])?;
    assert_eq!(code(&out), Some(0));
    let some = json(&out)?["shapes"].as_array().map_or(0, Vec::len);
    assert!(some > 0 && some <= shapes.len());
    assert_eq!(code(&console(&db, &["explain", "Nothing"])?), Some(2));
    Ok(())
}

#[tokio::test]
async fn migrations_pending_then_run() -> Result {
    let db = TestDb::new().await?;
    let out = console(&db, &["migrate", "status", "--check", "--json"])?;
    assert_eq!(code(&out), Some(1));
    let report = json(&out)?;
    assert_eq!(report["pending"], 2);
    assert_eq!(report["migrations"][0]["state"], "pending");
    let out = console(&db, &["migrate", "run", "--json"])?;
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&out)?["applied"][0]["version"], 1);
    let out = console(&db, &["migrate", "status", "--check"])?;
    assert_eq!(code(&out), Some(0));
    Ok(())
}

#[tokio::test]
async fn migrate_dry_run_lists_what_would_run_in_order_and_runs_nothing() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    let out = console(&db, &["migrate", "run", "--dry-run", "--json"])?;
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = json(&out)?;
    assert_eq!(plan["dry_run"], true);
    let order: Vec<i64> = plan["to_run"]
        .as_array()
        .ok_or("no to_run")?
        .iter()
        .filter_map(|m| m["version"].as_i64())
        .collect();
    assert_eq!(order, [1, 2]);
    let text = String::from_utf8(console(&db, &["migrate", "run", "--dry-run"])?.stdout)?;
    let would: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("would run"))
        .collect();
    assert_eq!(
        would,
        [
            "would run  1 every part has a product name",
            "would run  2 parts are stocked unless told"
        ],
        "{text}"
    );
    // Nothing ran: no record, no part changed.
    let records = db.raw().collection::<Document>("odm_migrations");
    assert_eq!(records.count_documents(doc! {}).await?, 0);
    let parts = db.raw().collection::<Document>("parts");
    assert_eq!(parts.count_documents(doc! { "stocked": true }).await?, 0);

    // The run: a line per migration with its time and the documents it changed.
    let out = console(&db, &["migrate", "run"])?;
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout)?;
    let applied: Vec<&str> = text.lines().filter(|l| l.starts_with("applied")).collect();
    assert_eq!(applied.len(), 2, "{text}");
    assert!(
        applied[0].starts_with("applied   1 every part has a product name  (")
            && applied[0].ends_with(" ms, 0 documents)"),
        "{text}"
    );
    assert!(applied[1].ends_with(" ms, 3 documents)"), "{text}");
    assert_eq!(parts.count_documents(doc! { "stocked": true }).await?, 3);
    let out = console(&db, &["migrate", "run", "--dry-run", "--json"])?;
    assert_eq!(code(&out), Some(0));
    assert_eq!(json(&out)?["to_run"], Value::Array(Vec::new()));
    Ok(())
}

#[tokio::test]
async fn migrate_revert_runs_the_down_step_of_the_last_and_refuses_one_without() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    assert_eq!(code(&console(&db, &["migrate", "run"])?), Some(0));
    let records = db.raw().collection::<Document>("odm_migrations");
    let parts = db.raw().collection::<Document>("parts");
    let stored = records
        .find_one(doc! { "_id": 2_i64 })
        .await?
        .ok_or("no record")?;
    assert_eq!(stored.get_i64("documents")?, 3);

    let out = console(&db, &["migrate", "revert", "--dry-run", "--json"])?;
    assert_eq!(code(&out), Some(1));
    assert_eq!(json(&out)?["to_revert"]["version"], 2);
    assert_eq!(parts.count_documents(doc! { "stocked": true }).await?, 3);

    let out = console(&db, &["migrate", "revert", "--json"])?;
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reverted = json(&out)?;
    assert_eq!(reverted["reverted"]["version"], 2);
    assert_eq!(reverted["reverted"]["documents"], 3);
    assert!(reverted["reverted"]["elapsed_ms"].is_number());
    // Undone, and forgotten: the record is gone, a run applies it again.
    let stocked = doc! { "stocked": { "$exists": true } };
    assert_eq!(parts.count_documents(stocked).await?, 0);
    assert_eq!(records.count_documents(doc! { "_id": 2_i64 }).await?, 0);
    let status = json(&console(&db, &["migrate", "status", "--json"])?)?;
    assert_eq!(status["migrations"][1]["state"], "pending");

    // The first declares no down step: refused, said in one line, nothing changed.
    for args in [
        &["migrate", "revert", "--json"][..],
        &["migrate", "revert", "--dry-run", "--json"][..],
    ] {
        let out = console(&db, args)?;
        assert_eq!(code(&out), Some(2));
        let error = json(&out)?;
        assert_eq!(error["kind"], "migration", "{error}");
        let message = error["error"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("migration 1 `every part has a product name`: cannot be reverted")
                && message.contains("declares no down step"),
            "{message}"
        );
        let stderr = String::from_utf8(out.stderr)?;
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    assert_eq!(records.count_documents(doc! { "_id": 1_i64 }).await?, 1);
    assert_eq!(code(&console(&db, &["migrate", "run"])?), Some(0));
    assert_eq!(parts.count_documents(doc! { "stocked": true }).await?, 3);
    Ok(())
}

#[tokio::test]
async fn a_failed_migration_is_one_line_not_a_driver_dump() -> Result {
    let db = TestDb::new().await?;
    // A validator on `parts` that refuses the migration's write.
    let schema = doc! { "properties": { "product_name": { "bsonType": "int" } } };
    db.raw()
        .create_collection("parts")
        .validator(doc! { "$jsonSchema": schema })
        .await?;
    db.raw()
        .collection::<Document>("parts")
        .insert_one(doc! { "_id": 1, "partno": "p", "name": "n" })
        .await?;
    let out = console(&db, &["migrate", "run", "--json"])?;
    assert_eq!(code(&out), Some(2));
    let error = json(&out)?;
    assert_eq!(error["kind"], "migration", "{error}");
    let message = error["error"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("migration 1 `every part has a product name`: "),
        "{message}"
    );
    assert!(message.contains("121"), "{message}");
    for dump in ["RawDocumentBuf", "Kind:", "labels: {"] {
        assert!(!message.contains(dump), "{message}");
    }
    let record = db
        .raw()
        .collection::<Document>("odm_migrations")
        .find_one(doc! { "_id": 1_i64 })
        .await?
        .ok_or("no record")?;
    let recorded = record.get_str("error")?;
    assert!(!recorded.contains("RawDocumentBuf"), "{recorded}");
    Ok(())
}

#[tokio::test]
async fn an_unreachable_server_fails_with_2_in_one_line() -> Result {
    let uri = "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=300&connectTimeoutMS=300";
    let out = console_at(uri, "odm_console_nowhere", &["verify", "--json"])?;
    assert_eq!(code(&out), Some(2));
    let error = json(&out)?;
    assert_eq!(error["kind"], "unreachable", "{error}");
    let message = error["error"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("no server could be reached (127.0.0.1:9: "),
        "{message}"
    );
    for dump in ["Kind:", "Topology", "labels"] {
        assert!(!message.contains(dump), "{message}");
    }
    let stderr = String::from_utf8(out.stderr)?;
    assert_eq!(stderr.trim_end(), format!("error: {message}"));
    let out = console_at("not a uri", "odm_console_nowhere", &["verify"])?;
    assert_eq!(code(&out), Some(2));
    Ok(())
}

#[tokio::test]
async fn uri_db_and_connect_timeout_override_the_application() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    db.raw()
        .collection::<Document>("products")
        .update_one(
            doc! { "_id": 10, "parts.id": 2 },
            doc! { "$set": { "parts.$.name": "fuze" } },
        )
        .await?;
    let uri = odm::testing::test_uri()?;
    // The application's server is dead; `--uri` and `--db` name the test database.
    let dead = "mongodb://127.0.0.1:9/";
    let args = ["verify", "--json", "--uri", &uri, "--db", db.name()];
    let out = console_at(dead, "elsewhere", &args)?;
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&out)?["bad_documents"][0]["id"], 10);
    // `--db` alone: the application's client, another database.
    let out = console_at(&uri, "elsewhere", &["verify", "--json", "--db", db.name()])?;
    assert_eq!(code(&out), Some(1));
    // A dead server told in about the timeout, not the driver's 30 s: with `--uri` (the new
    // client's timeouts), and without (a ping given that long).
    for args in [
        &[
            "verify",
            "--json",
            "--uri",
            dead,
            "--connect-timeout",
            "0.5",
        ][..],
        &["verify", "--json", "--connect-timeout", "0.5"][..],
    ] {
        let started = std::time::Instant::now();
        let out = console_at(dead, "elsewhere", args)?;
        let waited = started.elapsed();
        assert_eq!(code(&out), Some(2), "{args:?}");
        assert_eq!(json(&out)?["kind"], "unreachable", "{args:?}");
        assert!(
            waited < std::time::Duration::from_secs(5),
            "{args:?}: {waited:?}"
        );
    }
    let out = console_at(
        &uri,
        "elsewhere",
        &["verify", "--json", "--uri", "not a uri"],
    )?;
    assert_eq!(code(&out), Some(2));
    assert_eq!(json(&out)?["kind"], "connection");
    let out = console_at(&uri, "elsewhere", &["verify", "--connect-timeout", "soon"])?;
    assert_eq!(code(&out), Some(2));
    Ok(())
}

/// Runs the console with its stdout closed before it prints, as `console diagram | head -0`.
fn with_stdout_closed(db: &TestDb, args: &[&str]) -> Result<Output> {
    let mut child = Command::new(binary()?)
        .args(args)
        .env("MONGODB_URI", odm::testing::test_uri()?)
        .env("ODM_CONSOLE_DB", db.name())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    drop(child.stdout.take());
    Ok(child.wait_with_output()?)
}

#[tokio::test]
async fn a_closed_stdout_ends_quietly_with_the_exit_code() -> Result {
    let db = TestDb::new().await?;
    models::seed(db.odm()).await?;
    db.raw()
        .collection::<Document>("products")
        .update_one(
            doc! { "_id": 10, "parts.id": 2 },
            doc! { "$set": { "parts.$.name": "fuze" } },
        )
        .await?;
    for (args, expected) in [
        (&["diagram"][..], 0),
        (&["routing", "Part", "--json"][..], 0),
        (&["verify", "--json", "--progress", "none"][..], 1),
    ] {
        let out = with_stdout_closed(&db, args)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), Some(expected), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn plan_routing_and_diagram_read_the_catalog() -> Result {
    let db = TestDb::new().await?;
    let out = console(&db, &["plan", "Product", "--json"])?;
    assert_eq!(code(&out), Some(0));
    let report = json(&out)?;
    assert_eq!(report["plans"][0]["source"], "products");
    assert_eq!(report["plans"][0]["steps"][0]["collection"], "parts");
    let out = console(&db, &["routing", "--json"])?;
    assert_eq!(code(&out), Some(0));
    assert_eq!(json(&out)?["reports"].as_array().map(Vec::len), Some(2));
    let out = console(&db, &["plan", "Nothing"])?;
    assert_eq!(code(&out), Some(2));
    let out = console(&db, &["diagram", "--json"])?;
    assert_eq!(code(&out), Some(0));
    let mermaid = json(&out)?["mermaid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(mermaid.starts_with("classDiagram"), "{mermaid}");
    Ok(())
}

#[tokio::test]
async fn the_workers_report_in_json() -> Result {
    let db = TestDb::new().await?;
    let out = console(&db, &["cascades", "status", "--json", "--check"])?;
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&out)?["pending"], 0);
    let out = console(&db, &["cascades", "run", "--json"])?;
    assert_eq!(code(&out), Some(0));
    assert_eq!(json(&out)?["applied"], 0);
    Ok(())
}

/// A tree, known to this test's catalog only: the console runs in this process.
#[derive(Model, Serialize, Deserialize, Debug)]
#[odm(collection = "subjects", tree(on_delete = "lift"))]
struct Subject {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<Ref<Subject>>,
    ancestors: Vec<Ref<Subject>>,
}

#[tokio::test]
async fn in_process_a_tree_is_verified_and_repaired() -> Result {
    let db = TestDb::new().await?;
    for (id, parent) in [
        ("science", None),
        ("physics", Some("science")),
        ("optics", Some("physics")),
    ] {
        let node = Subject {
            id: id.to_owned(),
            parent: parent.map(|p: &str| Ref::new(p.to_owned())),
            ancestors: Vec::new(),
        };
        db.odm().insert_one(&node).await?;
    }
    let run = |args: &'static [&'static str]| {
        let odm = db.odm().clone();
        async move { Console::new(odm).exit_code_with(args.iter().copied()).await }
    };
    assert_eq!(run(&["console", "verify"]).await, SUCCESS);
    let subjects = db.raw().collection::<Document>("subjects");
    subjects
        .update_one(
            doc! { "_id": "optics" },
            doc! { "$set": { "ancestors": ["science"] } },
        )
        .await?;
    assert_eq!(run(&["console", "verify"]).await, PROBLEMS);
    assert_eq!(run(&["console", "repair"]).await, SUCCESS);
    let stored = subjects
        .find_one(doc! { "_id": "optics" })
        .await?
        .ok_or("no node")?;
    let ancestors: Vec<&str> = stored
        .get_array("ancestors")?
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert_eq!(ancestors, ["science", "physics"]);
    assert_eq!(run(&["console", "verify"]).await, SUCCESS);
    assert_eq!(run(&["console", "no-such-command"]).await, FAILED);
    Ok(())
}
