//! Helpers shared by the integration tests: a database whose handle knows the test file's
//! models, reading back what landed in the database with the raw driver, and the commands
//! sent. The models live beside this file (`library.rs`, `catalog.rs`, `denorm.rs`); each test
//! file includes the ones it uses, and this module too, so that [`catalog`] names the file's
//! models: the suite is one binary, and the models of one file must not take part in the
//! delete rules and cascades of another's.

#![allow(dead_code)]

use futures_util::TryStreamExt;
use odm::bson::{doc, Document};
use odm::testing::TestDb;

// ANCHOR: catalog
/// The module of the test file that includes this one (`suite::races`).
fn test_file() -> &'static str {
    let here = module_path!();
    here.rsplit_once("::").map_or(here, |(file, _)| file)
}

/// The models of the test file: those declared in it and in the model files it includes.
pub fn catalog() -> odm::Catalog {
    odm::Catalog::linked_in(test_file())
}

/// A fresh database (see [`TestDb::new`]) whose handle works with the test file's models.
pub async fn db() -> odm::Result<TestDb> {
    Ok(TestDb::new().await?.with_catalog(catalog()))
}
// ANCHOR_END: catalog

/// Whether `db`'s server is a `mongos` (its `hello` says `isdbgrid`). With `ODM_TEST_SHARDED=1`
/// (set by the workflow that tests a sharded cluster) it must be: a test that has a sharded
/// side then fails instead of checking the other one when the URI does not reach a `mongos`.
pub async fn is_mongos(db: &TestDb) -> bool {
    let hello = db
        .raw()
        .run_command(doc! { "hello": 1 })
        .await
        .expect("hello");
    let mongos = hello.get_str("msg").is_ok_and(|m| m == "isdbgrid");
    if std::env::var_os("ODM_TEST_SHARDED").is_some_and(|v| v == "1") {
        assert!(
            mongos,
            "ODM_TEST_SHARDED=1, but the server is not a mongos: {hello}"
        );
    }
    mongos
}

/// The stored documents of `collection`, sorted by `_id`, read with the raw driver.
pub async fn stored(db: &TestDb, collection: &str) -> Vec<Document> {
    stored_in(db.raw(), collection).await
}

/// Compares every summary in the array `array` of `dependent`'s documents with the `source`
/// document its `id` names (integer ids, the copied field `name`), read back raw, and returns
/// how many summaries it compared.
pub async fn copies_equal(
    db: &odm::mongodb::Database,
    source: &str,
    dependent: &str,
    array: &str,
) -> usize {
    let names: std::collections::HashMap<i64, String> = stored_in(db, source)
        .await
        .into_iter()
        .map(|d| {
            (
                d.get_i64("_id").unwrap(),
                d.get_str("name").unwrap().to_owned(),
            )
        })
        .collect();
    let mut compared = 0;
    for p in &stored_in(db, dependent).await {
        for s in p.get_array(array).unwrap() {
            let s = s.as_document().unwrap();
            let id = s.get_i64("id").unwrap();
            assert_eq!(s.get_str("name").unwrap(), names[&id], "{dependent} {p}");
            compared += 1;
        }
    }
    compared
}

/// Every stored document of `collection` in `db` (a database of a server of the test's own,
/// with no `TestDb`), by `_id`, read with the raw driver.
pub async fn stored_in(db: &odm::mongodb::Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! {"_id": 1})
        .await
        .expect("raw find")
        .try_collect()
        .await
        .expect("raw cursor")
}

/// The stored document with this `_id`, read with the raw driver.
pub async fn stored_one(
    db: &TestDb,
    collection: &str,
    id: impl Into<odm::bson::Bson>,
) -> Option<Document> {
    db.raw()
        .collection::<Document>(collection)
        .find_one(doc! {"_id": id.into()})
        .await
        .expect("raw find_one")
}

/// The indexes of `collection` as `listIndexes` reports them, by name.
pub async fn listed_indexes(db: &TestDb, collection: &str) -> Vec<Document> {
    let reply = db
        .raw()
        .run_command(doc! {"listIndexes": collection})
        .await
        .expect("listIndexes");
    let mut out: Vec<Document> = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("cursor.firstBatch")
        .iter()
        .filter_map(|b| b.as_document().cloned())
        .collect();
    out.sort_by(|a, b| {
        a.get_str("name")
            .unwrap_or("")
            .cmp(b.get_str("name").unwrap_or(""))
    });
    out
}

/// The commands sent since the last call, as `name` strings, and the log emptied.
pub fn sent(db: &TestDb) -> Vec<String> {
    db.commands().take().into_iter().map(|c| c.name).collect()
}

/// The last command named `name` that was sent (its full document).
pub fn last_command(db: &TestDb, name: &str) -> Document {
    db.commands()
        .take()
        .into_iter()
        .rev()
        .find(|c| c.name == name)
        .and_then(|c| c.command)
        .unwrap_or_else(|| panic!("no `{name}` command was sent"))
}

/// An `Odm` on `db`'s database whose next `find`, once `armed` is set, is followed, before the
/// driver goes on, by `act` on the same database through a client of its own (on a thread and
/// runtime of its own): the worst moment for a write that has just read what it is about to
/// write. `armed` is cleared when `act` has run.
pub async fn act_after_next_find<F, Fut>(
    db: &TestDb,
    act: F,
) -> odm::Result<(odm::Odm, std::sync::Arc<std::sync::atomic::AtomicBool>)>
where
    F: Fn(odm::mongodb::Database) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let (odm, armed, _) = act_after_next_find_pooled(db, None, act).await?;
    Ok((odm, armed))
}

/// Runs `work` with a client of its own on `uri`, on a thread and runtime of its own, as another
/// program would; returns the thread.
pub fn with_own_client<F, Fut>(uri: String, work: F) -> std::thread::JoinHandle<()>
where
    F: FnOnce(odm::mongodb::Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let client = odm::mongodb::Client::with_uri_str(&uri)
                .await
                .expect("client");
            work(client).await;
        });
    })
}

/// The commands an `Odm` of [`act_after_next_find_pooled`] sent, with their documents.
pub type SentLog = std::sync::Arc<std::sync::Mutex<Vec<odm::monitor::SentCommand>>>;

/// [`act_after_next_find`], with the commands the returned `Odm` sends kept in a log, and its
/// client keeping at most `pool` connections when given.
pub async fn act_after_next_find_pooled<F, Fut>(
    db: &TestDb,
    pool: Option<u32>,
    act: F,
) -> odm::Result<(
    odm::Odm,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    SentLog,
)>
where
    F: Fn(odm::mongodb::Database) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()>,
{
    use odm::mongodb::event::command::CommandEvent;
    use odm::mongodb::event::EventHandler;
    use odm::mongodb::options::ClientOptions;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let uri = odm::testing::test_uri()?;
    let armed = Arc::new(AtomicBool::new(false));
    let mut options = ClientOptions::parse(&uri).await?;
    options.max_pool_size = pool.or(options.max_pool_size);
    let log = SentLog::default();
    let (trigger, db_name, act) = (armed.clone(), db.name().to_owned(), Arc::new(act));
    let sent = log.clone();
    options.command_event_handler = Some(EventHandler::callback(move |ev: CommandEvent| {
        let done = match ev {
            CommandEvent::Started(started) => {
                sent.lock().unwrap().push(odm::monitor::SentCommand {
                    name: started.command_name,
                    db: started.db,
                    command: Some(started.command),
                });
                return;
            }
            CommandEvent::Succeeded(done) => done,
            _ => return,
        };
        if done.command_name != "find" || !trigger.swap(false, Ordering::SeqCst) {
            return;
        }
        let (db_name, act) = (db_name.clone(), act.clone());
        with_own_client(uri.clone(), move |client| async move {
            act(client.database(&db_name)).await;
        })
        .join()
        .expect("the concurrent write");
    }));
    let client = odm::mongodb::Client::with_options(options)?;
    Ok((
        odm::Odm::new(client.database(db.name())).with_catalog(catalog()),
        armed,
        log,
    ))
}

/// Whether every populate of this run is forced to the lookup plan
/// (`ODM_TEST_POPULATE_PLAN=lookup`): the populate tests run once under each plan, and their
/// checks of the `$in` plan's commands become checks of the one `aggregate` of the lookup plan.
pub fn lookup_plan() -> bool {
    odm::testing::populate_plan().expect("a valid populate plan") == odm::populate::Plan::Lookup
}

/// Asserts the commands a populate sent (and empties the log): `in_plan`, in any order, under
/// the `$in` plan; one `aggregate` under the lookup plan.
pub fn assert_populate_sent(db: &TestDb, in_plan: &[&str]) {
    let mut names = sent(db);
    if lookup_plan() {
        assert_eq!(names, ["aggregate"], "the lookup plan: one aggregate");
    } else {
        names.sort();
        let mut expected: Vec<&str> = in_plan.to_vec();
        expected.sort();
        assert_eq!(names, expected);
    }
}

/// The `$lookup` stages of the last `aggregate` sent, at every depth, keyed by the collection
/// they look into (empties the log).
pub fn last_lookups(db: &TestDb) -> Vec<(String, Document)> {
    fn walk(stages: &[odm::bson::Bson], out: &mut Vec<(String, Document)>) {
        for stage in stages.iter().filter_map(|s| s.as_document()) {
            if let Ok(lookup) = stage.get_document("$lookup") {
                let from = lookup.get_str("from").unwrap_or_default().to_owned();
                out.push((from, lookup.clone()));
                if let Ok(inner) = lookup.get_array("pipeline") {
                    walk(inner, out);
                }
            }
        }
    }
    let aggregate = last_command(db, "aggregate");
    let mut out = Vec::new();
    walk(
        aggregate.get_array("pipeline").expect("a pipeline"),
        &mut out,
    );
    out
}

/// The `$lookup` into `from` in the last `aggregate` (empties the log).
pub fn last_lookup_into(db: &TestDb, from: &str) -> Document {
    last_lookups(db)
        .into_iter()
        .find(|(f, _)| f == from)
        .map(|(_, l)| l)
        .unwrap_or_else(|| panic!("no $lookup into `{from}`"))
}

/// The stage named `name` (`$match`, `$project`, `$sort`) of a `$lookup`'s sub-pipeline.
pub fn sub_stage(lookup: &Document, name: &str) -> Document {
    lookup
        .get_array("pipeline")
        .expect("a sub-pipeline")
        .iter()
        .filter_map(|s| s.as_document())
        .find_map(|s| s.get_document(name).ok().cloned())
        .unwrap_or_else(|| panic!("no {name} in {lookup}"))
}

/// The `q` of the first statement of the last `name` command (`update`, `delete`) sent to
/// `collection`, from the test's command log.
pub fn sent_filter(db: &TestDb, name: &str, collection: &str) -> Document {
    filter_in(&db.commands().take(), name, collection)
}

/// [`sent_filter`] in a log already taken.
pub fn filter_in(log: &[odm::monitor::SentCommand], name: &str, collection: &str) -> Document {
    first_statement(log, name, collection)
        .get_document("q")
        .unwrap()
        .clone()
}

/// The first statement of the last `update` or `delete` (`name`) sent to `collection`.
pub fn first_statement(
    log: &[odm::monitor::SentCommand],
    name: &str,
    collection: &str,
) -> Document {
    let list = if name == "update" {
        "updates"
    } else {
        "deletes"
    };
    let cmd = log
        .iter()
        .rev()
        .filter(|c| c.name == name)
        .filter_map(|c| c.command.as_ref())
        .find(|c| c.get_str(name).is_ok_and(|n| n == collection))
        .unwrap_or_else(|| panic!("no `{name}` on `{collection}` was sent"));
    cmd.get_array(list).unwrap()[0]
        .as_document()
        .unwrap()
        .clone()
}

/// The options of a connection string that make a lost server show soon: a second to select
/// one, and the monitor's check (every half second) giving up after a second, which ends the
/// commands a paused server holds.
pub const GIVE_UP_SOON: &str =
    "serverSelectionTimeoutMS=1000&connectTimeoutMS=1000&heartbeatFrequencyMS=500";

/// The project's server started on its own (by default with `--standalone`), killed when
/// dropped.
pub struct Standalone {
    child: std::process::Child,
    dir: std::path::PathBuf,
    args: Vec<String>,
    port: u16,
    pub uri: String,
}

impl Standalone {
    pub fn start() -> Standalone {
        Standalone::start_with(&["--standalone"])
    }

    /// The project's server started on its own with `args` (`--standalone` makes it one).
    pub fn start_with(args: &[&str]) -> Standalone {
        let dir = std::env::temp_dir().join(format!(
            "odm-standalone-{}-{}",
            std::process::id(),
            odm::bson::oid::ObjectId::new()
        ));
        std::fs::create_dir_all(&dir).expect("dir");
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let (child, port) = Standalone::spawn(&dir, &args, 0);
        Standalone {
            child,
            dir,
            args,
            port,
            uri: format!("mongodb://127.0.0.1:{port}/?directConnection=true"),
        }
    }

    /// The server process on `port` (0: any), its data in `dir`, and the port it listens on.
    fn spawn(dir: &std::path::Path, args: &[String], port: u16) -> (std::process::Child, u16) {
        use std::io::BufRead;
        let binary = odm::testing::find_binary().expect("server binary");
        let mut child = std::process::Command::new(binary)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(args)
            .arg("--storage-path")
            .arg(dir)
            .args(["--log-file-max", "2MB", "--cache-size", "64M"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if !sent {
                    if let Some(port) = line
                        .split_once("listening on ")
                        .and_then(|(_, a)| a.trim().rsplit(':').next()?.parse::<u16>().ok())
                    {
                        let _ = tx.send(port);
                        sent = true;
                    }
                }
            }
        });
        let port = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the standalone server reports its port");
        (child, port)
    }

    /// Sends `signal` (a name `kill` knows: `STOP`, `CONT`) to the server process.
    pub fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal}");
    }

    /// Kills the server (SIGKILL, no shutdown of its own) and starts it again on the same port
    /// with the same data.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (child, _) = Standalone::spawn(&self.dir, &self.args, self.port);
        self.child = child;
    }
}

impl Drop for Standalone {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
