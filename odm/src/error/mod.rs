//! The one error type of the crate.

mod bulk;
mod classify;
mod restricted;
mod show;
mod sync_report;

pub use bulk::{BulkFailure, BulkWritten};
pub use restricted::DeleteRestricted;
pub use sync_report::{CollectionSync, IndexDiff, IndexFailure, ShardSync, SyncReport};

use show::{join, server_said};
pub(crate) use show::{show_filter, show_id, Shown};

/// Result alias used throughout `odm`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in an `odm` operation.
///
/// Errors about stored data always name the collection, the document's `_id` and the field
/// path, so that a bad document can be found and fixed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A stored document does not decode into the model type (missing field, wrong type, ...).
    #[error(
        "cannot decode document {id} in collection `{collection}` at field `{path}`: {message}"
    )]
    Decode {
        /// Collection the document was read from.
        collection: String,
        /// The document's `_id` as the shell prints it (`{ _id: 7 }`), or `<no _id>`.
        id: String,
        /// Dotted path of the offending field (`publisher.name`, `reviews.1.user`), or `.` for
        /// the document itself.
        path: String,
        /// What the decoder said.
        message: String,
    },

    /// A document of a polymorphic model (an enum of kinds) whose discriminator names no kind
    /// (or is missing), and the model declares no catch-all variant.
    #[error(
        "document {id} in collection `{collection}` has `{field}: {value}`, which names no kind (known: {})",
        known.join(", ")
    )]
    UnknownKind {
        /// Collection the document was read from.
        collection: String,
        /// The document's `_id` as the shell prints it.
        id: String,
        /// The discriminator field (`type`).
        field: String,
        /// Its stored value as the shell prints it (`"ebook"`), or `<missing>`.
        value: String,
        /// The values of the known kinds.
        known: Box<[String]>,
    },

    /// A stored DBRef of a polymorphic reference (or of a `Ref` stored as a DBRef) names a
    /// collection none of its targets is stored in, and the reference declares no catch-all
    /// variant.
    #[error(
        "document {id} in collection `{collection}` references at `{path}` a document of `{found}`, which is none of its targets ({})",
        targets.join(", ")
    )]
    UnknownReference {
        /// Collection the document was read from.
        collection: String,
        /// The document's `_id` as the shell prints it.
        id: String,
        /// Dotted path of the reference (`subject`, `mentions.2`).
        path: String,
        /// The collection the DBRef names (`$ref`).
        found: String,
        /// The collections of the targets.
        targets: Box<[String]>,
    },

    /// A value could not be encoded as BSON (for example an integer out of BSON's range).
    #[error("cannot encode {what} for collection `{collection}`: {message}")]
    Encode {
        /// Collection the value was meant for.
        collection: String,
        /// What was being encoded (`document`, `filter value for `isbn``, ...).
        what: String,
        /// What the encoder said.
        message: String,
    },

    /// A write would have created a second document with the same value in a unique index.
    #[error("duplicate key in collection `{collection}`: index `{index}` already has {key}")]
    DuplicateKey {
        /// Collection written to.
        collection: String,
        /// Name of the unique index that refused the write (`isbn_1`).
        index: String,
        /// The duplicated key as the server reported it (`{ isbn: "9781857150193" }`).
        key: String,
        /// The driver's error, for the full server reply.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// The server refused a write because the document fails the collection's validator
    /// (code 121; see [`Odm::sync_validators`](crate::Odm::sync_validators)).
    #[error("document {id} refused by the validator of collection `{collection}` at field `{path}`: {reason}")]
    DocumentInvalid {
        /// Collection written to.
        collection: String,
        /// The refused document's `_id` as the shell prints it, or `<no _id>`.
        id: String,
        /// Dotted path of the first field that fails the schema, or `.` for the document.
        path: String,
        /// The rule that fails, in the server's words.
        reason: String,
        /// The driver's error, for the full server reply.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// A migration failed, or cannot run (added twice, or its version is recorded under another
    /// name); see [`Odm::migrations`](crate::Odm::migrations). Nothing after it ran.
    #[error("migration {version} `{name}`: {message}")]
    Migration {
        /// The migration's version.
        version: u32,
        /// Its name.
        name: String,
        /// What went wrong: the step's own error, as text.
        message: String,
    },

    /// A document or update value has a key that MongoDB would read as an operator or a path
    /// (a key starting with `$` or containing `.`). The write is refused before it is sent.
    #[error("refusing to write key `{key}` at `{path}` in collection `{collection}`: keys must not start with `$` or contain `.`")]
    InvalidKey {
        /// Collection the write was meant for.
        collection: String,
        /// Dotted path of the document holding the key (`.` for the top level).
        path: String,
        /// The key itself.
        key: String,
    },

    /// A path spelt by hand ([`Field::at_path`](crate::path::Field::at_path)) has a segment
    /// MongoDB would read as an operator or that names nothing: one starting with `$`
    /// (`$where`, `parts.$[p]`), an empty one (`a..b`), or one holding a NUL byte. Only
    /// `Filter::raw` and `Update::raw` send such paths. Nothing was sent.
    #[error("refusing path `{path}` for collection `{collection}`: segment `{segment}` is empty, starts with `$` or holds a NUL byte; use `Filter::raw` / `Update::raw` to send operators")]
    InvalidPath {
        /// Collection of the model the path was built for.
        collection: String,
        /// The whole path, as given.
        path: String,
        /// The refused segment.
        segment: String,
    },

    /// A document without an `_id` was inserted and its id type cannot be generated
    /// (only `ObjectId` ids are generated).
    #[error("document for collection `{collection}` has no `_id` and its id type cannot be generated; set the id before inserting")]
    MissingId {
        /// Collection the document was meant for.
        collection: String,
    },

    /// An update with no operators was passed; MongoDB rejects it, so it is never sent.
    #[error("empty update for collection `{collection}`: nothing to change")]
    EmptyUpdate {
        /// Collection the update was meant for.
        collection: String,
    },

    /// A reference points at a document that does not exist (populate with the default
    /// [`Dangling::Error`](crate::populate::Dangling::Error) policy).
    #[error("dangling reference: document {id} in collection `{collection}` has `{path}` = {missing}, but `{target}` has no such document")]
    DanglingReference {
        /// Collection of the referencing document.
        collection: String,
        /// The referencing document's `_id`.
        id: String,
        /// Path of the reference field.
        path: String,
        /// Collection the reference points into.
        target: String,
        /// The missing id.
        missing: String,
    },

    /// An update writes a denormalized copy directly (`parts.$[p].name`, `product_name`, a
    /// latest-N array). Copies are maintained by the ODM from their source: write the source,
    /// or the reference the copy follows, instead. Nothing was written.
    #[error("`{path}` in collection `{collection}` is a copy of `{copied_from}` kept by odm: update `{copied_from}` (or the reference the copy follows) instead; nothing was written")]
    CopyWrite {
        /// Collection holding the copy.
        collection: String,
        /// The path the update writes.
        path: String,
        /// The source collection the copy is taken from.
        copied_from: String,
    },

    /// The `#[denormalize]` fields linked into the program copy each other in a circle (`a.x`
    /// copies `b.y`, which copies `a.x`): cascading an update would never end. Every write
    /// that would cascade along the circle is refused before anything is sent; break it by
    /// copying the original field instead of a copy of it.
    #[error("denormalized copies form a cycle: {}; nothing was written", cycle.join(" <- "))]
    CopyCycle {
        /// The copies along the cycle, each as `collection.path`, each copying the next; the
        /// last is the first again.
        cycle: Vec<String>,
    },

    /// [`Ref::loaded`](crate::Ref::loaded) on a reference that was not populated.
    #[error("reference to {id} in `{collection}` was not populated")]
    NotPopulated {
        /// Collection the reference points into.
        collection: String,
        /// The referenced id.
        id: String,
    },

    /// A delete refused by an `on_delete = "restrict"` rule: names the referencing collection,
    /// field and count. Nothing was deleted.
    #[error("{0}")]
    DeleteRestricted(DeleteRestricted),

    /// A bounded array (`#[embed(max = N)]`, `#[reference(many, max = N)]`) would grow past
    /// its bound. Checked atomically on the server for pushes, before sending for inserts.
    #[error("array `{path}` in collection `{collection}` is bounded to {max} elements: {documents} document(s) have no room ({detail})")]
    BoundExceeded {
        /// Collection written to.
        collection: String,
        /// The array's path.
        path: String,
        /// Its declared bound.
        max: u32,
        /// How many documents are full.
        documents: u64,
        /// What happened to the write.
        detail: String,
    },

    /// An increment (`inc`) of an integer field narrower than 64 bits that would carry its
    /// value past the field's type (`inc(1)` of an `i32` at `i32::MAX`): the server would
    /// store a 64-bit number the document can no longer be read with. Checked atomically on
    /// the server: the update's filter keeps such documents out, and nothing is written to
    /// them.
    #[error("`inc({by})` of `{path}` in collection `{collection}` would take it past what an `{ty}` holds: {documents} document(s) left as they were ({detail})")]
    Overflow {
        /// Collection written to.
        collection: String,
        /// The field's path.
        path: String,
        /// The field's Rust type (`i32`, `u8`, ...).
        ty: String,
        /// The increment.
        by: i64,
        /// How many documents were left out.
        documents: u64,
        /// What happened to the write.
        detail: String,
    },

    /// An update of copies that the server refused (the document would pass 16 MB, the copy
    /// has the wrong shape, ...). The other copies were updated.
    #[error("copies at `{path}` in collection `{collection}` matching {filter} were not updated: {}", join(.failures))]
    CopiesNotUpdated {
        /// Collection holding the copies.
        collection: String,
        /// The copy's path.
        path: String,
        /// The filter of the refused update, as the shell prints it (ids elided past a few).
        filter: String,
        /// What the server said.
        failures: Vec<Error>,
    },

    /// Several parts of one operation failed; everything else was done. Each error names its
    /// collection, document and path.
    #[error("{} parts of the operation failed, the rest was done: {}", .0.len(), join(.0))]
    Incomplete(Vec<Error>),

    /// A document the operation needs does not exist.
    #[error("not found in collection `{collection}`: {what}")]
    NotFound {
        /// Collection searched.
        collection: String,
        /// What was looked for.
        what: String,
    },

    /// The server refused the `aggregate` of a populate forced to the lookup plan
    /// ([`Plan::Lookup`](crate::populate::Plan::Lookup)): a stage or operator it does not
    /// know, or a document past its size limit with everything it references. Nothing was
    /// populated; [`Plan::Auto`](crate::populate::Plan::Auto) falls back to the `$in` plan
    /// instead.
    #[error("the server refused the $lookup plan of a populate on `{collection}` (code {code}): {message}; use Plan::In or Plan::Auto")]
    LookupRefused {
        /// Collection of the queried documents.
        collection: String,
        /// The server's error code.
        code: i32,
        /// The server's message.
        message: String,
    },

    /// An operation `odm` refuses rather than do it wrongly; the message says what to do.
    #[error("{0}")]
    Unsupported(String),

    /// `sync_indexes` could not create some declared indexes; the report says which and why
    /// (everything else was synced).
    #[error("some indexes could not be created: {}", .0.failures().join("; "))]
    IndexSync(Box<SyncReport>),

    /// A cascade without a transaction kept meeting concurrent updates of its sources and gave
    /// up before the copies caught up: the sources' new values are stored, but the copies
    /// named here may still hold older ones. Running the same update again, or
    /// [`Odm::verify_copies`](crate::Odm::verify_copies) with `.repair(true)`, brings them
    /// back in line.
    #[error("copies of {} document(s) of `{collection}` may be stale at {}: the sources kept changing for {rounds} round(s) of cascading; ids {}", .ids.len(), .paths.join(", "), .ids.join(", "))]
    CascadeIncomplete {
        /// The source collection.
        collection: String,
        /// The `_id`s of the sources whose copies may be stale, as the shell prints them.
        ids: Vec<String>,
        /// The copies concerned, as `collection.path` (`products.parts.$.name`).
        paths: Vec<String>,
        /// How many rounds of re-reading and cascading were made.
        rounds: usize,
    },

    /// Background cascades were still pending when
    /// [`Odm::wait_for_cascades`](crate::Odm::wait_for_cascades) stopped waiting: no worker
    /// is running, the workers are behind, or some intents keep failing (`failing`; their
    /// `error` field in `odm_cascades` says why).
    #[error("{pending} background cascade(s) still pending after {waited:?} ({failing} failing); the oldest was recorded {lag:?} ago")]
    CascadeLag {
        /// Source documents whose copies are not all written.
        pending: u64,
        /// Of those, the ones whose last attempt failed.
        failing: u64,
        /// The age of the oldest write not yet applied.
        lag: std::time::Duration,
        /// How long the caller waited.
        waited: std::time::Duration,
    },

    /// The follower of writes made by other programs has not applied every event within the
    /// time [`Odm::wait_for_follower`](crate::Odm::wait_for_follower) was given: no follower
    /// is running, or it is behind.
    #[error("the follower is {behind} event(s) behind after {waited:?}; the oldest not applied is {} old", .oldest.map_or_else(|| "of unknown age".to_owned(), |d| format!("{d:?}")))]
    FollowerLag {
        /// Events not yet applied (counted up to a bound, see `FollowerStatus::behind`).
        behind: u64,
        /// The age of the oldest event not applied, by the server's clock.
        oldest: Option<std::time::Duration>,
        /// How long the caller waited.
        waited: std::time::Duration,
    },

    /// The deployment has no change streams (a standalone server): the follower cannot see
    /// other programs' writes there. Run the verify/repair sweeps on a schedule instead.
    #[error("change streams are not available: {reason}")]
    ChangeStreamsUnavailable {
        /// What the server said, and why.
        reason: String,
    },

    /// The position a change stream was to resume from is no longer in the server's history
    /// (the oplog moved past it). The follower handles it itself: it says so, runs the sweeps
    /// and starts from the present.
    #[error("the change stream cannot resume from its stored position: {message}")]
    ChangeStreamHistoryLost {
        /// What the server said.
        message: String,
    },

    /// A reassignment without a transaction kept meeting concurrent moves of the same child
    /// until [`Odm::retry_deadline`](crate::Odm::retry_deadline) passed: the child's
    /// reference is set, but the parents named here may list it wrongly.
    /// [`Odm::verify_inverse`](crate::Odm::verify_inverse) with `.repair(true)` fixes them.
    #[error("`{path}` of {} in collection `{collection}` may list child {child} wrongly: concurrent moves kept changing its parent", .parents.join(", "))]
    InverseUnsettled {
        /// The parents' collection.
        collection: String,
        /// The parents' array of children.
        path: String,
        /// The child's `_id`.
        child: String,
        /// The `_id`s of the parents that may be wrong.
        parents: Vec<String>,
    },

    /// An update (`update_one`, `update_many`, `find_one_and_update`, `update_document`) writes
    /// the reference of a two-way child, or upserts one naming its parent in the filter, which
    /// would leave the parents' arrays as they were: move a child with
    /// [`Odm::reassign`](crate::Odm::reassign), create one with an insert or a replacement,
    /// which keep both sides. Nothing was written.
    #[error("`{path}` in collection `{collection}` is one side of a two-way reference (the parents' `{array}` lists the children): move a child with `reassign(..)`, create one with `insert_one`/`insert_many`/`replace_one`, which keep both sides; nothing was written")]
    TwoWayWrite {
        /// The children's collection.
        collection: String,
        /// The path the write names.
        path: String,
        /// The parents' array of children.
        array: String,
    },

    /// A model declares a native time-series collection (`#[odm(time_series(...))]`) that
    /// could not be made one: the collection exists as an ordinary collection or with other
    /// time-series options, or the server refused to create it (a server without time-series
    /// collections); `message` says which, with the server's reply. Nothing was changed.
    #[error("time-series collection `{collection}`: {message}")]
    TimeSeries {
        /// The declared collection.
        collection: String,
        /// What was found or what the server replied.
        message: String,
    },

    /// A tree's node would become its own ancestor: moved under itself or under one of its
    /// descendants (or inserted with parents that lead back to it). Nothing was written.
    #[error("node {node} in collection `{collection}` cannot go under {parent}: that is the node itself or one of its descendants; nothing changed")]
    TreeCycle {
        /// The tree's collection.
        collection: String,
        /// The node's `_id`, as the shell prints it.
        node: String,
        /// The parent asked for.
        parent: String,
    },

    /// An update or replacement writes a tree's `parent` or `ancestors`, which the ODM keeps:
    /// move the node with [`Tree::move_under`](crate::tree::Tree::move_under) instead. Nothing
    /// was written.
    #[error("`{path}` in collection `{collection}` is kept by the tree: move the node with `tree().move_under(..)` / `move_to_root(..)` instead; nothing was written")]
    TreeWrite {
        /// The tree's collection.
        collection: String,
        /// The path the write names.
        path: String,
    },

    /// A write to a sharded collection that must name the document's full shard key (an
    /// upsert, which the server would otherwise insert on an arbitrary shard) does not: refused
    /// before anything is sent.
    #[error(
        "{operation} of {id} in sharded collection `{collection}` is refused: its filter lacks the shard key field(s) {} (an upsert must name the full shard key `{}` with equality)",
        missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
        key.join(", ")
    )]
    ShardKeyMissing {
        /// The sharded collection.
        collection: String,
        /// The document's `_id` as the shell prints it, or the filter when no `_id` is known.
        id: String,
        /// What was refused (`upsert`).
        operation: &'static str,
        /// The key's fields the filter does not pin to one value.
        missing: Box<[String]>,
        /// The whole shard key, in order.
        key: Box<[String]>,
    },

    /// The two sides given to a subset pair's insert do not pair up (different `_id`s, an
    /// unset one, or lists of different lengths). Nothing was written.
    #[error("subset pair: details {id} for collection `{collection}`: {detail}")]
    SubsetMismatch {
        /// The details' collection.
        collection: String,
        /// The details document's `_id` as the shell prints it, or `<no _id>`.
        id: String,
        /// What does not pair up.
        detail: String,
    },

    /// A [page token](crate::paging::PageToken) given to [`Paged::after`](crate::paging::Paged::after)
    /// that is not one, was altered, was issued for another collection, filter or sort, or
    /// was sealed with another [page key](crate::Odm::with_page_key). Nothing was sent.
    #[error("invalid page token for collection `{collection}`: {reason}; nothing was sent")]
    InvalidPageToken {
        /// Collection of the query the token was given to.
        collection: String,
        /// What is wrong with it: `not a page token`, `altered, or sealed with another page
        /// key`, or `issued for another collection, filter or sort`.
        reason: &'static str,
    },

    /// A write of a loaded document of a versioned model (`#[odm(version)]`) found the stored
    /// document at another version than the one loaded: someone else wrote it in between.
    /// Nothing was written; load the document again, apply the change, and write it again.
    #[error("document {id} in collection `{collection}` is at version {found}, not {expected} as loaded: it was written since; nothing was written")]
    VersionConflict {
        /// The document's collection.
        collection: String,
        /// The document's `_id` as the shell prints it.
        id: String,
        /// The version the document held when it was loaded (the value of its version field).
        expected: i64,
        /// The version stored now.
        found: i64,
    },

    /// A transaction was asked of a deployment that has none (a standalone server): MongoDB runs
    /// transactions on replica sets and sharded clusters only. Nothing was sent in it.
    #[error("{operation} needs a transaction, and this deployment has none (a standalone server; transactions need a replica set or a sharded cluster): {message}")]
    TransactionsUnsupported {
        /// What asked for the transaction (`Odm::transaction`, `reassign`, ...).
        operation: String,
        /// What the driver or the server said.
        message: String,
    },

    /// The local test server could not be found or started (feature `testing`).
    #[error("test server: {0}")]
    TestServer(String),

    /// A write the server refused or that could not be sent (a document past 16 MB, a
    /// validation failure, a write conflict, a lost connection, ...), with what it was writing.
    /// [`is_transient`](Error::is_transient), [`has_label`](Error::has_label) and
    /// [`driver_error`](Error::driver_error) see the driver's error inside.
    #[error("write to collection `{collection}` ({target}) failed: {}", server_said(.source))]
    Write {
        /// Collection written to.
        collection: String,
        /// What the write addressed: the document's `_id` (`{ _id: 7 }`) or the filter.
        target: String,
        /// The driver's error, for the full server reply.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// Writes of a bulk write ([`Odm::bulk`](crate::Odm::bulk)) failed, each named by its
    /// place in the batch. The others were written (in an ordered batch, those before the
    /// first failure; none after it), as `written` counts.
    #[error("a bulk write failed: {}", bulk::show_failures(.failures))]
    BulkWrite {
        /// What the writes that went through did.
        written: BulkWritten,
        /// The writes that failed, in order.
        failures: Vec<BulkFailure>,
    },

    /// Any other error reported by the driver or the server.
    #[error(transparent)]
    Driver(#[from] mongodb::error::Error),
}
