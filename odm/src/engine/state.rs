//! The handle's state: the database, the catalog of models, the settings, and what it has
//! learnt of the deployment. The operations live with their builders (`ops`, `handle`).

use std::sync::Arc;
use std::time::Duration;

use mongodb::options::ClientOptions;
use mongodb::{Client, ClientSession, Collection, Database};
use tokio::sync::OnceCell;

use crate::model::Model;
use crate::{Error, Result};

/// The entry point: a MongoDB database and the typed operations on the models stored in it.
///
/// Cheap to clone (it wraps the driver's `Database`, which is reference-counted). Every
/// operation is a builder: set options, optionally `.session(&mut session)` to run it inside a
/// caller's session or transaction, then `.await` it. Each documents the commands it sends.
///
/// ```no_run
/// use odm::prelude::*;
///
/// #[derive(Model, Serialize, Deserialize, Debug)]
/// #[odm(collection = "authors")]
/// struct Author {
///     #[serde(rename = "_id")]
///     id: Option<ObjectId>,
///     #[index]
///     last_name: String,
/// }
///
/// # async fn run() -> odm::Result<()> {
/// let odm = Odm::connect("mongodb://localhost:27017", "library").await?;
/// odm.sync_indexes().await?;
/// let id = odm
///     .insert_one(&Author { id: None, last_name: "Miller".into() })
///     .await?;
/// let millers: Vec<Author> = odm.find(Author::last_name().eq("Miller")).await?;
/// # let _ = (id, millers);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Odm {
    /// The database of the caller's operations, with the handle's defaults
    /// ([`Odm::with_read_preference`] and the like).
    db: Database,
    /// The database of the ODM's own reads and writes for a write (see [`pinned`]).
    own_db: Database,
    /// A handle made for one write's concern, or for its model's ([`Odm::writing`]): the
    /// writes on it keep its concern.
    settled: bool,
    transactions: Arc<OnceCell<bool>>,
    retry_deadline: Duration,
    /// The key sealing page tokens (`Odm::with_page_key`); `None`: the built-in one.
    pub(crate) page_key: Option<Arc<[u8]>>,
    /// [`Odm::without_transactions`]: `Auto` takes the deployment to have none.
    fixed_order: bool,
    populate_plan: super::Plan,
    /// Whether `hello` said `mongos`, once a `hello` was sent.
    mongos: Arc<std::sync::OnceLock<bool>>,
    /// The sessions of the ODM's transactions that the connection or the server left open
    /// (see [`crate::transaction::Tx::begin`]), ended with `killSessions` before the next one.
    pub(crate) cut_off: Arc<std::sync::Mutex<Vec<bson::Document>>>,
    /// The database's name as decoding knows it (see [`crate::decode::Reading`]).
    pub(crate) database_name: crate::decode::DbName,
    /// The writes this handle's transactions keep conflicting on (see [`crate::contention`]).
    pub(crate) contention: Arc<crate::contention::Contention>,
    /// The models this handle works with.
    catalog: Arc<crate::catalog::Catalog>,
    /// Who hears of the progress of long work ([`Odm::with_progress`]).
    progress: Option<crate::progress::Observer>,
    /// The driver's collections of the catalog's models, made once (see `collections.rs`).
    collections: Arc<std::sync::OnceLock<super::collections::Collections>>,
    /// How the maintainers prepare the ODM's own writes (see [`super::Own`]).
    own: super::own::OwnStages,
}

/// Installs, when `options` has none, an SDAM handler that records the type of the first server
/// the driver's monitoring describes: a `mongos`, or anything else it knows. The populate cost
/// rule then knows a sharded cluster before this handle sends any command of its own.
pub(crate) fn watch_mongos(options: &mut ClientOptions) -> Arc<std::sync::OnceLock<bool>> {
    use mongodb::event::sdam::SdamEvent;
    use mongodb::ServerType;
    let mongos: Arc<std::sync::OnceLock<bool>> = Arc::default();
    if options.sdam_event_handler.is_none() {
        let seen = Arc::clone(&mongos);
        options.sdam_event_handler = Some(mongodb::event::EventHandler::callback(
            move |event: SdamEvent| {
                if let SdamEvent::ServerDescriptionChanged(changed) = event {
                    match changed.new_description.server_type() {
                        ServerType::Unknown => {}
                        kind => {
                            let _ = seen.set(kind == ServerType::Mongos);
                        }
                    }
                }
            },
        ));
    }
    mongos
}

impl Odm {
    /// A handle on `db` whose own writes the maintainers prepare with `own` (the handle's
    /// constructors give the list of maintainers; see [`Odm::new`]).
    pub(crate) fn assemble(db: Database, own: super::own::OwnStages) -> Self {
        Odm {
            database_name: crate::decode::DbName::of(db.name()),
            own_db: pinned(&db),
            settled: false,
            db,
            transactions: Arc::default(),
            retry_deadline: default_deadline(None),
            page_key: None,
            fixed_order: false,
            populate_plan: super::Plan::Auto,
            mongos: Arc::default(),
            cut_off: Arc::default(),
            contention: Arc::default(),
            catalog: crate::catalog::Catalog::linked(),
            progress: None,
            collections: Arc::default(),
            own,
        }
    }

    /// How the maintainers prepare this handle's own writes.
    pub(crate) fn own_stages(&self) -> super::own::OwnStages {
        self.own
    }

    /// The models this handle works with: by default every model linked into the program (see
    /// [`Catalog`](crate::Catalog)).
    pub fn catalog(&self) -> &crate::catalog::Catalog {
        &self.catalog
    }

    /// The same handle, working with the models of `catalog` only: their copies, references,
    /// delete rules, latest-N arrays, shard keys and indexes, and no other model's.
    pub fn with_catalog(mut self, catalog: crate::catalog::Catalog) -> Self {
        self.catalog = Arc::new(catalog);
        self.collections = Arc::default();
        self
    }

    /// How long an operation that runs its own transaction (`reassign`, a delete with rules, a
    /// cascade in a transaction, a latest-N recomputation) keeps retrying transient errors
    /// (write conflicts with concurrent transactions) before returning the last one; also how
    /// long a cascade without a transaction keeps catching up with concurrent updates. Counted
    /// from the operation's first attempt. Errors that are not transient are never retried,
    /// whatever the deadline.
    ///
    /// Default: the server selection timeout of the connection string given to
    /// [`Odm::connect`] (`serverSelectionTimeoutMS`, 30 s when absent).
    pub fn retry_deadline(&self) -> Duration {
        self.retry_deadline
    }

    /// The same handle with another [retry deadline](Odm::retry_deadline). `Duration::ZERO`
    /// turns the retries off: every operation makes one attempt.
    pub fn with_retry_deadline(mut self, deadline: Duration) -> Self {
        self.retry_deadline = deadline;
        self
    }

    /// The same handle, taking the deployment to have no transactions: every operation whose
    /// transaction mode is [`TransactionMode::Auto`](crate::transaction::TransactionMode::Auto)
    /// (the default) then runs in its documented fixed order, and
    /// [`Odm::supports_transactions`] is `false` without asking the server. For an application
    /// that wants no transactions on a replica set, and for testing the fixed-order paths there.
    /// Operations told [`TransactionMode::Always`](crate::transaction::TransactionMode::Always),
    /// or run in a caller's session, are not changed.
    pub fn without_transactions(mut self) -> Self {
        self.fixed_order = true;
        self
    }

    /// The same handle, reporting the progress of its long work (the verify and repair sweeps,
    /// syncs, migrations, the cascade worker, the follower, cascades) to `observer`; see
    /// [`progress`](crate::progress) for what is reported and what it costs.
    ///
    /// ```no_run
    /// use odm::progress::Observer;
    /// # async fn run(odm: odm::Odm) -> odm::Result<()> {
    /// let odm = odm.with_progress(Observer::new(|p| eprintln!("{p}")));
    /// odm.verify_copies().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_progress(mut self, observer: crate::progress::Observer) -> Self {
        self.progress = Some(observer);
        self
    }

    /// The observer of this handle's long work, if any ([`Odm::with_progress`]).
    pub fn progress(&self) -> Option<&crate::progress::Observer> {
        self.progress.as_ref()
    }

    /// Starts reporting a piece of long work (a no-op without an observer).
    pub(crate) fn track(
        &self,
        task: crate::progress::Task,
        unit: crate::progress::Unit,
        phase: impl FnOnce() -> String,
        total: Option<u64>,
    ) -> crate::progress::Tracker {
        crate::progress::Tracker::start(self.progress.as_ref(), task, unit, phase, total)
    }

    /// The same handle, its queries sent by `preference` unless they say otherwise (a
    /// query's own [`read_preference`](crate::ops::Find::read_preference) wins): a handle for
    /// reports on `secondaryPreferred`, sharing the connection pool with the one it is made
    /// from. The ODM's own reads for a write (a cascade's source read, a delete plan, a fill,
    /// the follower's checks) still go to the primary. Sends nothing.
    ///
    /// ```no_run
    /// use odm::options::ReadPreference;
    /// # fn run(odm: odm::Odm) {
    /// let reports = odm.with_read_preference(ReadPreference::SecondaryPreferred {
    ///     options: Default::default(),
    /// });
    /// # let _ = reports;
    /// # }
    /// ```
    pub fn with_read_preference(self, preference: crate::options::ReadPreference) -> Self {
        let criteria = crate::options::SelectionCriteria::ReadPreference(preference);
        let (_, concern, write) = self.database_options();
        self.on_options((Some(criteria), concern, write), false)
    }

    /// The same handle, its queries read with `concern` unless they say otherwise (`majority`:
    /// only what a majority of the replica set acknowledged), sharing the pool. The ODM's own
    /// reads for a write keep the client's read concern, so as never to read a state older
    /// than the write they feed. Sends nothing.
    pub fn with_read_concern(self, concern: crate::options::ReadConcern) -> Self {
        let (criteria, _, write) = self.database_options();
        self.on_options((criteria, Some(concern), write), false)
    }

    /// The same handle, its writes acknowledged by `concern` (`w: "majority"`, a `wtimeout`)
    /// unless an operation says otherwise: the caller's writes, the ODM's own writes for them
    /// (copies, counts, two-way arrays, delete rules), and the commit of the transactions the
    /// ODM runs (a write inside a transaction takes no write concern of its own: the commit
    /// carries it). Shares the pool. Sends nothing.
    ///
    /// ```no_run
    /// use odm::options::WriteConcern;
    /// # fn run(odm: odm::Odm) {
    /// let durable = odm.with_write_concern(WriteConcern::majority());
    /// # let _ = durable;
    /// # }
    /// ```
    pub fn with_write_concern(self, concern: crate::options::WriteConcern) -> Self {
        let (criteria, read, _) = self.database_options();
        self.on_options((criteria, read, Some(concern)), true)
    }

    /// The handle's read preference, read concern and write concern, as its database has them.
    fn database_options(&self) -> DbOptions {
        (
            self.db.selection_criteria().cloned(),
            self.db.read_concern().cloned(),
            self.db.write_concern().cloned(),
        )
    }

    /// The handle on its database made again with `options` (and the ODM's own database too
    /// when `own`, for a write concern): the collections made so far are made again.
    fn on_options(mut self, (criteria, read, write): DbOptions, own: bool) -> Self {
        let options = mongodb::options::DatabaseOptions::builder()
            .selection_criteria(criteria)
            .read_concern(read)
            .write_concern(write)
            .build();
        self.db = self
            .db
            .client()
            .database_with_options(self.db.name(), options);
        if own {
            self.own_db = pinned(&self.db);
        }
        self.collections = Arc::default();
        self
    }

    /// `command` (a write the ODM builds itself, sent outside any transaction) with the
    /// handle's write concern, when it has one: the driver adds a database's concern to its own
    /// write commands but not to a command run as it is.
    pub(crate) fn with_own_concern(&self, mut command: bson::Document) -> bson::Document {
        if let Some(concern) = self.own_db.write_concern() {
            if let Ok(concern) = bson::serialize_to_bson(concern) {
                command.insert("writeConcern", concern);
            }
        }
        command
    }

    /// The write concern of the ODM's own transactions' commits: the handle's
    /// ([`Odm::with_write_concern`]), `None` for the client's.
    pub(crate) fn transaction_options(&self) -> Option<mongodb::options::TransactionOptions> {
        let concern = self.own_db.write_concern()?;
        Some(
            mongodb::options::TransactionOptions::builder()
                .write_concern(concern.clone())
                .build(),
        )
    }

    /// The same handle with another default [populate plan](super::Plan) for its
    /// queries (default [`Plan::Auto`](super::Plan::Auto)); a query's own
    /// [`populate_plan`](crate::ops::Find::populate_plan) wins over it.
    pub fn with_populate_plan(mut self, plan: super::Plan) -> Self {
        self.populate_plan = plan;
        self
    }

    /// Connected to a sharded cluster, as far as this handle knows: the driver's monitoring
    /// described a `mongos` (a handle made by [`Odm::connect`]), or its `hello` (sent by
    /// [`Odm::supports_transactions`], which operations that may run a transaction call, and by
    /// a query whose populate the cost rule would send as one `$lookup` while this is not known
    /// yet) said so. Sends nothing.
    pub(crate) fn is_sharded(&self) -> bool {
        self.mongos.get().copied().unwrap_or(false)
    }

    /// The default populate plan of this handle's queries.
    pub fn populate_plan(&self) -> super::Plan {
        self.populate_plan
    }

    /// Whether the deployment runs transactions (a replica set or a sharded cluster). Sends one
    /// `hello` the first time it is asked, per `Odm` (and its clones); none afterwards.
    pub async fn supports_transactions(&self) -> Result<bool> {
        if self.fixed_order {
            return Ok(false);
        }
        self.deployment_has_transactions().await
    }

    /// Whether the deployment runs transactions, whatever [`Odm::without_transactions`] says:
    /// one `hello` the first time it is asked, per `Odm` (and its clones).
    pub(crate) async fn deployment_has_transactions(&self) -> Result<bool> {
        self.transactions
            .get_or_try_init(|| async {
                let hello = self.db.run_command(bson::doc! { "hello": 1 }).await?;
                let replica_set = hello.get_str("setName").is_ok();
                let mongos = hello.get_str("msg").is_ok_and(|m| m == "isdbgrid");
                let _ = self.mongos.set(mongos);
                Ok::<bool, Error>(replica_set || mongos)
            })
            .await
            .copied()
    }

    /// Connects to `uri` and uses the database `db_name`.
    ///
    /// Parsing the URI may resolve DNS (`mongodb+srv://`); no command is sent until the first
    /// operation.
    ///
    /// ```no_run
    /// # async fn run() -> odm::Result<()> {
    /// let odm = odm::Odm::connect("mongodb://localhost:27017/?replicaSet=rs0", "library").await?;
    /// # let _ = odm;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(uri: &str, db_name: &str) -> Result<Self> {
        let mut options = ClientOptions::parse(uri).await?;
        let deadline = default_deadline(options.server_selection_timeout);
        let mongos = watch_mongos(&mut options);
        let client = Client::with_options(options)?;
        Ok(Odm::watched(client.database(db_name), mongos).with_retry_deadline(deadline))
    }

    /// Whether this handle knows if it talks to a `mongos`: from the driver's monitoring (a
    /// handle made by [`Odm::connect`]) or from its `hello`.
    pub(crate) fn knows_deployment(&self) -> bool {
        self.mongos.get().is_some()
    }

    /// The handle on `db`, told by the driver's monitoring of `options`' client whether it
    /// talks to a `mongos` (see [`watch_mongos`]).
    pub(crate) fn watched(db: Database, mongos: Arc<std::sync::OnceLock<bool>>) -> Self {
        let mut odm = Odm::new(db);
        odm.mongos = mongos;
        odm
    }

    /// This handle's catalog and settings (retry deadline, page key, transactions turned off,
    /// populate plan, observer) on `db`. With `mongos`, `db` is another client's, told by its
    /// monitoring whether it talks to a `mongos` ([`watch_mongos`]), and what this handle
    /// learnt of its deployment starts again; without, `db` is this handle's client's, whose
    /// deployment is the same. (What the console's `--uri` and `--db` run with.)
    #[cfg(feature = "console")]
    pub(crate) fn on_database(
        &self,
        db: Database,
        mongos: Option<Arc<std::sync::OnceLock<bool>>>,
    ) -> Self {
        let same_client = mongos.is_none();
        let mut odm = Odm::new(db);
        odm.mongos = mongos.unwrap_or_else(|| Arc::clone(&self.mongos));
        if same_client {
            odm.transactions = Arc::clone(&self.transactions);
        }
        odm.retry_deadline = self.retry_deadline;
        odm.page_key = self.page_key.clone();
        odm.fixed_order = self.fixed_order;
        odm.populate_plan = self.populate_plan;
        odm.catalog = Arc::clone(&self.catalog);
        odm.progress = self.progress.clone();
        odm
    }

    /// The driver database, for anything `odm` does not cover, with the handle's defaults
    /// ([`Odm::with_read_preference`], [`Odm::with_read_concern`], [`Odm::with_write_concern`]).
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// The database of the ODM's own reads and writes for a write (a cascade's source read, a
    /// delete plan, a fill, the follower's checks): on the primary whatever the handle's read
    /// preference, with the handle's write concern.
    pub(crate) fn own_database(&self) -> &Database {
        &self.own_db
    }

    /// `T`'s collection in [`Odm::own_database`], for a read that feeds a write.
    pub(crate) fn own_collection<T: Model>(&self) -> Collection<bson::RawDocumentBuf> {
        self.own_db.collection(T::COLLECTION)
    }

    /// The driver client.
    pub fn client(&self) -> &Client {
        self.db.client()
    }

    /// The model's collection as a typed driver collection.
    pub fn collection<T: Model>(&self) -> Collection<T> {
        self.db.collection(T::COLLECTION)
    }

    /// Starts a client session, for running several operations in one transaction. Sends no
    /// command (sessions are created lazily by the driver).
    pub async fn start_session(&self) -> Result<ClientSession> {
        Ok(self.client().start_session().await?)
    }

    pub(crate) fn raw_collection<T: Model>(&self) -> Collection<bson::RawDocumentBuf> {
        match self.slot(T::COLLECTION) {
            Some(slot) => slot.collection(&self.db, T::COLLECTION).clone(),
            None => super::collections::made(&self.db, T::COLLECTION, &T::entry().defaults),
        }
    }

    /// The handle a write of `T` runs on, for the write concern `T` declares
    /// (`#[odm(write_concern = "majority")]`, or its enum of kinds for a kind) to reach everything the write sends: this one
    /// when `T` declares none or this handle has it already; else the handle with it, made
    /// once per handle and model ([`Writing::Cached`]), or for a model outside the catalog
    /// the concern to make one with.
    pub(crate) fn writing<T: Model>(&self) -> Writing<'_> {
        if self.settled {
            return Writing::This;
        }
        let Some(concern) = T::DEFAULTS.write_concern() else {
            return Writing::This;
        };
        match self.slot(T::COLLECTION) {
            Some(slot) => Writing::Cached(slot.concerned(|| self.for_write(concern))),
            None => Writing::Make(concern),
        }
    }

    /// The handle of a write whose concern is `concern` (its own or its model's): the writes
    /// sent on it keep that concern, whatever their models declare.
    pub(crate) fn for_write(&self, concern: crate::options::WriteConcern) -> Odm {
        let mut odm = self.clone().with_write_concern(concern);
        odm.settled = true;
        odm
    }

    /// The handle's own collection of `T`, made once, when `T` is one of its catalog's models.
    pub(crate) fn cached_collection<T: Model>(&self) -> Option<&Collection<bson::RawDocumentBuf>> {
        self.slot(T::COLLECTION)
            .map(|slot| self.slot_collection(slot, T::COLLECTION))
    }

    /// The collection of `T`'s `slot` typed with `T`, for a write the driver serializes itself;
    /// `None` when `T` shares its collection with another model that asked first.
    pub(crate) fn typed_collection<'s, T: Model>(
        &'s self,
        slot: &'s super::collections::Slot,
    ) -> Option<&'s Collection<T>> {
        slot.typed(&self.db, T::COLLECTION)
    }

    /// The collection of `slot` (named `collection`), made on the first call.
    pub(crate) fn slot_collection<'s>(
        &'s self,
        slot: &'s super::collections::Slot,
        collection: &str,
    ) -> &'s Collection<bson::RawDocumentBuf> {
        slot.collection(&self.db, collection)
    }

    /// What the handle keeps of `collection`, when one of its catalog's models is stored there.
    pub(crate) fn slot(&self, collection: &str) -> Option<&super::collections::Slot> {
        self.collections
            .get_or_init(|| super::collections::Collections::of(&self.catalog))
            .slot(collection)
    }

    pub(crate) fn driver_error<T: Model>(e: mongodb::error::Error) -> Error {
        Error::from_driver(T::COLLECTION, e)
    }
}

/// A database's read preference, read concern and write concern (`None`: the client's).
type DbOptions = (
    Option<crate::options::SelectionCriteria>,
    Option<crate::options::ReadConcern>,
    Option<crate::options::WriteConcern>,
);

/// The handle a write runs on (see [`Odm::writing`]).
pub(crate) enum Writing<'a> {
    This,
    Cached(&'a Odm),
    Make(mongodb::options::WriteConcern),
}

/// The database of the ODM's own work beside `db` (same client, same name): reads on the primary,
/// whatever `db`'s read preference says (a copy filled from a secondary's lagging source, a
/// delete plan missing the children inserted a moment ago, would be wrong for good), with
/// `db`'s write concern, and the client's read concern (a majority read concern would read a
/// state older than the write it feeds).
fn pinned(db: &Database) -> Database {
    let options = mongodb::options::DatabaseOptions::builder()
        .selection_criteria(mongodb::options::SelectionCriteria::ReadPreference(
            mongodb::options::ReadPreference::Primary,
        ))
        .write_concern(db.write_concern().cloned())
        .build();
    db.client().database_with_options(db.name(), options)
}

/// The default of [`Odm::retry_deadline`]: the driver's server selection timeout (30 s unless
/// the connection string says otherwise), the time the driver itself gives an operation to
/// find a server.
fn default_deadline(server_selection_timeout: Option<Duration>) -> Duration {
    server_selection_timeout.unwrap_or(Duration::from_secs(30))
}
