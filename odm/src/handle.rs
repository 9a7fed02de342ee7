//! The [`Odm`] handle.

use std::sync::Arc;
use std::time::Duration;

use mongodb::options::ClientOptions;
use mongodb::{Client, ClientSession, Collection, Database};
use tokio::sync::OnceCell;

use crate::model::Model;
use crate::ops::{
    Count, Delete, Find, FindOne, FindOneAndUpdate, InsertMany, InsertOne, Replace, UpdateOp,
};
use crate::path::Value;
use crate::populate::{Children, RefPath, SingleRef};
use crate::query::Filter;
use crate::relations::{Reassign, VerifyInverse};
use crate::update::Update;
use crate::{Error, Result};

/// The entry point: a MongoDB database and the typed operations on the models stored in it.
///
/// Cheap to clone (it wraps the driver's `Database`, which is reference-counted). Every
/// operation is a builder: set options, optionally `.session(&mut session)` to run it inside a
/// caller's session or transaction, then `.await` it. Each documents the commands it sends.
#[derive(Debug, Clone)]
pub struct Odm {
    db: Database,
    transactions: Arc<OnceCell<bool>>,
    retry_deadline: Duration,
    /// The key sealing page tokens (`Odm::with_page_key`); `None`: the built-in one.
    pub(crate) page_key: Option<Arc<[u8]>>,
    /// [`Odm::without_transactions`]: `Auto` takes the deployment to have none.
    fixed_order: bool,
    populate_plan: crate::populate::Plan,
    /// Whether `hello` said `mongos`, once a `hello` was sent.
    mongos: Arc<std::sync::OnceLock<bool>>,
    /// The sessions of the ODM's transactions that the connection or the server left open
    /// (see [`crate::retry::Tx::begin`]), ended with `killSessions` before the next one.
    pub(crate) cut_off: Arc<std::sync::Mutex<Vec<bson::Document>>>,
    /// The database's name as decoding knows it (see [`crate::decode::Reading`]).
    pub(crate) database_name: crate::reference::dbref::DbName,
    /// The writes this handle's transactions keep conflicting on (see [`crate::contention`]).
    pub(crate) contention: Arc<crate::contention::Contention>,
    /// The models this handle works with.
    catalog: Arc<crate::schema::Catalog>,
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
    /// Wraps a driver database. The [retry deadline](Odm::retry_deadline) is 30 s (the
    /// driver's default server selection timeout; the database does not tell its client's);
    /// set it with [`Odm::with_retry_deadline`].
    pub fn new(db: Database) -> Self {
        Odm {
            database_name: crate::reference::dbref::DbName::of(db.name()),
            db,
            transactions: Arc::default(),
            retry_deadline: default_deadline(None),
            page_key: None,
            fixed_order: false,
            populate_plan: crate::populate::Plan::Auto,
            mongos: Arc::default(),
            cut_off: Arc::default(),
            contention: Arc::default(),
            catalog: crate::schema::Catalog::linked(),
        }
    }

    /// The models this handle works with: by default every model linked into the program (see
    /// [`Catalog`](crate::Catalog)).
    pub fn catalog(&self) -> &crate::schema::Catalog {
        &self.catalog
    }

    /// The same handle, working with the models of `catalog` only: their copies, references,
    /// delete rules, latest-N arrays, shard keys and indexes, and no other model's.
    pub fn with_catalog(mut self, catalog: crate::schema::Catalog) -> Self {
        self.catalog = Arc::new(catalog);
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
    /// transaction mode is [`TransactionMode::Auto`](crate::relations::TransactionMode::Auto)
    /// (the default) then runs in its documented fixed order, and
    /// [`Odm::supports_transactions`] is `false` without asking the server. For an application
    /// that wants no transactions on a replica set, and for testing the fixed-order paths there.
    /// Operations told [`TransactionMode::Always`](crate::relations::TransactionMode::Always),
    /// or run in a caller's session, are not changed.
    pub fn without_transactions(mut self) -> Self {
        self.fixed_order = true;
        self
    }

    /// The same handle with another default [populate plan](crate::populate::Plan) for its
    /// queries (default [`Plan::Auto`](crate::populate::Plan::Auto)); a query's own
    /// [`populate_plan`](crate::ops::Find::populate_plan) wins over it.
    pub fn with_populate_plan(mut self, plan: crate::populate::Plan) -> Self {
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
    pub fn populate_plan(&self) -> crate::populate::Plan {
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

    /// The driver database, for anything `odm` does not cover.
    pub fn database(&self) -> &Database {
        &self.db
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

    /// Inserts one document. Sends one `insert`.
    ///
    /// The `_id` is generated client-side when the document has none (`Option` id left `None`)
    /// and its type is `ObjectId`; otherwise a missing id is an [`Error::MissingId`]. Keys
    /// starting with `$` or containing `.` are refused before anything is sent. A unique-index
    /// violation is an [`Error::DuplicateKey`] naming the index and the value.
    pub fn insert_one<'a, T: Model>(&'a self, doc: &'a T) -> InsertOne<'a, T> {
        InsertOne::new(self, doc)
    }

    /// Inserts many documents, in order. Sends one `insert` per 100,000 documents or 48 MB (the
    /// driver splits larger batches); nothing for an empty list.
    pub fn insert_many<'a, T: Model>(
        &'a self,
        docs: impl IntoIterator<Item = &'a T>,
    ) -> InsertMany<'a, T> {
        InsertMany::new(self, docs.into_iter().collect())
    }

    /// Finds the documents matching `filter`. Sends one `find`, plus one `getMore` per further
    /// batch (the first batch holds 101 documents, the next ones up to 16 MB each).
    pub fn find<T: Model>(&self, filter: Filter<T>) -> Find<'_, T> {
        Find::new(self, filter)
    }

    /// Finds the first document matching `filter`. Sends one `find` (with `limit: 1`).
    pub fn find_one<T: Model>(&self, filter: Filter<T>) -> FindOne<'_, T> {
        FindOne::new(self, filter)
    }

    /// Finds the document with this `_id`. Sends one `find`.
    pub fn get<T: Model>(&self, id: impl Value<T::Id>) -> FindOne<'_, T> {
        FindOne::new(self, T::id_field().eq(id))
    }

    /// The `_id` of the first document matching `filter`, projecting only `_id`: how a
    /// caller that knows a natural key finds the document to write to (the seed looks a host up
    /// by `ipaddr`). Sends one `find`.
    pub fn find_id<T: Model>(&self, filter: Filter<T>) -> crate::ops::FindId<'_, T> {
        crate::ops::FindId::new(self, filter)
    }

    /// Counts the documents matching `filter`. Sends one `aggregate` (what `countDocuments` is).
    pub fn count<T: Model>(&self, filter: Filter<T>) -> Count<'_, T> {
        Count::new(self, filter)
    }

    /// Updates the first document matching `filter`. Sends one `update`; a push onto a bounded
    /// array that matches nothing adds one `aggregate` (a count) to tell a full array from a
    /// missing document. Denormalized copies add commands: see [`UpdateOp`].
    pub fn update_one<T: Model>(&self, filter: Filter<T>, update: Update<T>) -> UpdateOp<'_, T> {
        UpdateOp::new(self, filter, update, false)
    }

    /// Updates every document matching `filter`. Sends one `update` (with `multi: true`); a push
    /// onto a bounded array first sends two `aggregate`s (the documents with room, the full
    /// ones), refuses the whole update if any matching document is full, and reports
    /// ([`Error::BoundExceeded`]) documents that filled up while it ran. Denormalized copies add
    /// commands: see [`UpdateOp`].
    pub fn update_many<T: Model>(&self, filter: Filter<T>, update: Update<T>) -> UpdateOp<'_, T> {
        UpdateOp::new(self, filter, update, true)
    }

    /// Updates the document with this `_id`. Sends one `update` (denormalized copies add
    /// commands: see [`UpdateOp`]).
    pub fn update_by_id<T: Model>(
        &self,
        id: impl Value<T::Id>,
        update: Update<T>,
    ) -> UpdateOp<'_, T> {
        UpdateOp::new(self, T::id_field().eq(id), update, false)
    }

    /// Replaces the stored document that has `doc`'s `_id` with `doc`. Sends one `update`
    /// (denormalized copies change this: see [`Replace`]).
    pub fn replace_one<'a, T: Model>(&'a self, doc: &'a T) -> Replace<'a, T> {
        Replace::new(self, doc)
    }

    /// Deletes the first document matching `filter`, applying the delete rules of every
    /// reference to the model. When nothing references it: one `delete`. Otherwise see
    /// [`relations`](crate::relations) for the plan (one `find` for the ids, one command per
    /// referencing field) and the transaction it runs in.
    pub fn delete_one<T: Model>(&self, filter: Filter<T>) -> Delete<'_, T> {
        Delete::new(self, filter, false)
    }

    /// Deletes every document matching `filter`, applying the delete rules like
    /// [`Odm::delete_one`].
    pub fn delete_many<T: Model>(&self, filter: Filter<T>) -> Delete<'_, T> {
        Delete::new(self, filter, true)
    }

    /// Atomically updates the first document matching `filter` (in `sort` order) and returns it,
    /// as it was before the update or, with `.return_new()`, after. Sends one `findAndModify`
    /// (denormalized copies add commands: see [`FindOneAndUpdate`]).
    /// This is the seed's loan queue: take the highest-priority pending request and mark it.
    pub fn find_one_and_update<T: Model>(
        &self,
        filter: Filter<T>,
        update: Update<T>,
    ) -> FindOneAndUpdate<'_, T> {
        FindOneAndUpdate::new(self, filter, update)
    }

    /// The children of `parents` through the parent reference `link` (the reverse of a
    /// `#[parent]` field: `odm.children(LogMsg::host(), &hosts)`), with a per-parent sort and
    /// limit. Sends one `find`, or with `.limit_per_parent(n)` one `aggregate`, whatever the
    /// number of parents. See [`Children`](crate::populate::Children).
    pub fn children<'a, C: Model, W, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
        parents: &[P],
    ) -> Children<'a, C, P> {
        Children::new(self, link.as_ref(), parents)
    }

    /// Like [`Odm::children`], from the parents' ids rather than whole parent documents (ids
    /// the caller holds, or read with a projection); look the groups up with
    /// [`ChildrenOf::of_id`](crate::populate::ChildrenOf::of_id). Sends the same commands.
    pub fn children_of_ids<'a, C: Model, W, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
        ids: impl IntoIterator<Item = impl Value<P::Id>>,
    ) -> Children<'a, C, P> {
        Children::of_ids(self, link.as_ref(), ids)
    }

    /// Moves `child` to the parent `to` through the two-way reference `link` (the child's side,
    /// e.g. `Task::owner()`), updating both sides. See [`Reassign`] for the transaction, the
    /// fixed order without one, and the commands sent.
    pub fn reassign<'a, C: Model, W: SingleRef<P>, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
        child: impl Value<C::Id>,
        to: impl Value<P::Id>,
    ) -> Reassign<'a, C, P> {
        Reassign::new(self, link.as_ref(), child, to)
    }

    /// Checks (and with `.repair(true)` fixes) that every parent's array lists exactly the
    /// children whose reference `link` names it. See [`VerifyInverse`] for the commands.
    pub fn verify_inverse<'a, C: Model, W: SingleRef<P>, P: Model>(
        &'a self,
        link: impl AsRef<RefPath<C, W, P>>,
    ) -> VerifyInverse<'a, C, P> {
        VerifyInverse::new(self, link.as_ref())
    }

    /// Finds (and with `.repair(true)` fixes) every denormalized copy that differs from its
    /// source. See [`VerifyCopies`](crate::denormalize::VerifyCopies) for the commands.
    pub fn verify_copies(&self) -> crate::denormalize::VerifyCopies<'_> {
        crate::denormalize::VerifyCopies::new(self)
    }

    pub(crate) fn raw_collection<T: Model>(&self) -> Collection<bson::RawDocumentBuf> {
        self.db.collection(T::COLLECTION)
    }

    pub(crate) fn driver_error<T: Model>(e: mongodb::error::Error) -> Error {
        Error::from_driver(T::COLLECTION, e)
    }
}

/// The default of [`Odm::retry_deadline`]: the driver's server selection timeout (30 s unless
/// the connection string says otherwise), the time the driver itself gives an operation to
/// find a server.
fn default_deadline(server_selection_timeout: Option<Duration>) -> Duration {
    server_selection_timeout.unwrap_or(Duration::from_secs(30))
}
