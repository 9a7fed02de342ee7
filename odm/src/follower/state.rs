//! The follower's one document in [`FOLLOWER`]: who holds the lease and until when, and the
//! position every event before which has been applied.
//!
//! ```text
//! { _id: "follower", owner: <holder's token>, lease: <until>, token: <resume token>,
//!   events: <applied so far>, through: <wall time of the last applied event>, at: <written> }
//! ```
//!
//! The lease is taken when free, expired or already the taker's; every position written
//! extends it, on condition that the taker still holds it, so a follower that lost it (paused
//! past its lease, then taken over) writes no position again. Its end is set and compared on
//! the server's clock (`$$NOW`), never on a follower's: followers whose clocks disagree still
//! see one holder.

use std::time::Duration;

use bson::oid::ObjectId;
use bson::{doc, Bson, Document};
use mongodb::change_stream::event::ResumeToken;

use super::FOLLOWER;
use crate::engine::{Effect, Own, Returning};
use crate::{Error, Odm, Result};

const KEY: &str = "follower";

fn collection(odm: &Odm) -> mongodb::Collection<Document> {
    odm.own_database().collection::<Document>(FOLLOWER)
}

/// The lease's end, as an expression of the server's clock: `$$NOW` plus `lease` (in
/// milliseconds, through `$toLong` and `$toDate`, which every server with update pipelines
/// has). The
/// followers' own clocks are never compared: two followers whose clocks disagree still agree
/// on who holds the lease.
fn until(lease: Duration) -> Bson {
    let ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
    Bson::Document(doc! { "$toDate": { "$add": [{ "$toLong": "$$NOW" }, ms] } })
}

/// `value` as a literal of an update pipeline (a resume token or a time is never read as an
/// expression).
fn literal(value: impl Into<Bson>) -> Bson {
    Bson::Document(doc! { "$literal": value.into() })
}

/// What the document says.
#[derive(Debug, Default, Clone)]
pub(crate) struct Stored {
    pub(crate) token: Option<ResumeToken>,
    pub(crate) owner: Option<ObjectId>,
    pub(crate) lease: Option<bson::DateTime>,
    pub(crate) events: u64,
    pub(crate) through: Option<bson::DateTime>,
    /// How many positions were stored: each store requires the count it last read or wrote,
    /// so that a store the server lost (a crash before its write was durable) is noticed.
    pub(crate) stores: i64,
}

fn malformed(path: &str, message: impl Into<String>) -> Error {
    Error::Decode {
        collection: FOLLOWER.to_owned(),
        id: crate::error::show_id(Some(&Bson::from(KEY))),
        path: path.to_owned(),
        message: message.into(),
    }
}

fn read(doc: &Document) -> Result<Stored> {
    let token = match doc.get("token") {
        None | Some(Bson::Null) => None,
        Some(t) => Some(
            bson::deserialize_from_bson::<ResumeToken>(t.clone()).map_err(|e| {
                malformed("token", format!("not a change stream's resume token: {e}"))
            })?,
        ),
    };
    let events = match doc.get("events") {
        None => 0,
        Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
        Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
        Some(other) => {
            return Err(malformed(
                "events",
                format!("expected a count, found {other}"),
            ))
        }
    };
    let stores = match doc.get("stores") {
        None => 0,
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(other) => {
            return Err(malformed(
                "stores",
                format!("expected a count, found {other}"),
            ))
        }
    };
    Ok(Stored {
        token,
        owner: doc.get_object_id("owner").ok(),
        lease: doc.get_datetime("lease").ok().copied(),
        events,
        through: doc.get_datetime("through").ok().copied(),
        stores,
    })
}

/// The document as it is (the default when there is none). One `find`.
pub(crate) async fn load(odm: &Odm) -> Result<Stored> {
    let found = collection(odm)
        .find_one(doc! { "_id": KEY })
        .await
        .map_err(|e| Error::from_driver(FOLLOWER, e))?;
    match found {
        Some(d) => read(&d),
        None => Ok(Stored::default()),
    }
}

/// Takes the lease for `owner` when it is free, expired or already `owner`'s; `None` when
/// another follower holds it. Expiry is read on the server's clock (`$$NOW`), and the new
/// lease written on it: a follower whose clock runs ahead cannot take a lease that has not
/// expired. One `findAndModify` with an update pipeline (an upsert; a held lease makes it a
/// duplicate key, told from other errors).
pub(crate) async fn acquire(odm: &Odm, owner: ObjectId, lease: Duration) -> Result<Option<Stored>> {
    let filter = doc! {
        "_id": KEY,
        "$or": [
            { "owner": { "$exists": false } },
            { "owner": owner },
            { "$expr": { "$lt": ["$lease", "$$NOW"] } },
        ],
    };
    let update = vec![doc! { "$set": { "owner": owner, "lease": until(lease) } }];
    let write = Own::update(FOLLOWER, filter, update, Effect::Derived, "follower lease");
    let returning = Returning {
        which: Some(mongodb::options::ReturnDocument::After),
        ..Returning::default()
    };
    match odm.modify_own(write.one().upsert(), returning, None).await {
        Ok(Some(d)) => read(&d).map(Some),
        Ok(None) => Ok(None),
        Err(e) if e.is_duplicate_key() => Ok(None),
        Err(e) => Err(e),
    }
}

/// What storing a position found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advanced {
    /// Stored; the count of stores is now the one given plus one.
    Stored,
    /// Another follower holds the lease.
    LeaseLost,
    /// The lease is still this follower's, but the document is not as this follower last
    /// wrote it: the server lost writes it had acknowledged (it was killed before they were
    /// durable), this follower's last stores among them. The position stored is an older one.
    RolledBack,
}

/// Writes the position reached after `applied` more events (`through`: the last one's wall
/// time), extending the lease on the server's clock, while `owner` holds it and the document
/// counts `stores` stores, as this follower last left it. One `update` (an update pipeline:
/// the lease and `at` are `$$NOW` on the server); one `find` more when it matched nothing, to
/// tell a lost lease from writes the server lost.
pub(crate) async fn advance(
    odm: &Odm,
    owner: ObjectId,
    lease: Duration,
    stores: i64,
    token: Option<&ResumeToken>,
    applied: u64,
    through: Option<bson::DateTime>,
) -> Result<Advanced> {
    let token = match token {
        Some(t) => bson::serialize_to_bson(t).map_err(|e| Error::Encode {
            collection: FOLLOWER.to_owned(),
            what: "resume token".to_owned(),
            message: e.to_string(),
        })?,
        None => Bson::Null,
    };
    let applied = i64::try_from(applied).unwrap_or(i64::MAX);
    let mut set = doc! {
        "token": literal(token),
        "lease": until(lease),
        "at": "$$NOW",
        "events": { "$add": [{ "$ifNull": ["$events", 0_i64] }, applied] },
        "stores": { "$add": [{ "$ifNull": ["$stores", 0_i64] }, 1_i64] },
    };
    if let Some(t) = through {
        set.insert("through", literal(t));
    }
    let update = vec![doc! { "$set": set }];
    let unchanged = match stores {
        // A document written before stores were counted has no count.
        0 => doc! { "$in": [Bson::Null, 0_i64] },
        n => doc! { "$eq": n },
    };
    let filter = doc! { "_id": KEY, "owner": owner, "stores": unchanged };
    let write = Own::update(
        FOLLOWER,
        filter,
        update,
        Effect::Derived,
        "follower position",
    );
    let result = odm.write_own(write.one(), None).await?;
    if result.matched == 1 {
        return Ok(Advanced::Stored);
    }
    Ok(match load(odm).await?.owner {
        Some(o) if o == owner => Advanced::RolledBack,
        _ => Advanced::LeaseLost,
    })
}

/// Gives the lease up (a follower stopping, or ending on an error): the holder and the lease's
/// end are taken out, so that no follower is named as holding it. One `update`, matching only
/// while `owner` holds it.
pub(crate) async fn release(odm: &Odm, owner: ObjectId) -> Result<()> {
    let filter = doc! { "_id": KEY, "owner": owner };
    let unset = doc! { "$unset": { "owner": "", "lease": "" } };
    let write = Own::update(FOLLOWER, filter, unset, Effect::Derived, "follower lease");
    odm.write_own(write.one(), None).await.map(|_| ())
}
