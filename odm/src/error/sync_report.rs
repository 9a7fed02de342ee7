//! What `sync_indexes` reports: plain data, printable, carried by `Error::IndexSync` too.

use std::fmt;

/// What `sync_indexes` found and did for one collection.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CollectionSync {
    /// The collection.
    pub collection: String,
    /// Declared indexes that were missing and have been created.
    pub created: Vec<String>,
    /// Declared indexes that were already there as declared.
    pub unchanged: Vec<String>,
    /// Indexes whose name or keys match a declaration but whose definition differs.
    pub differing: Vec<IndexDiff>,
    /// Indexes in the database that no model declares (the `_id` index aside).
    pub extra: Vec<String>,
    /// Indexes dropped because dropping was asked for.
    pub dropped: Vec<String>,
    /// Declared indexes the server refused to create, with its reason.
    pub failed: Vec<IndexFailure>,
}

/// A declared index that could not be created.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct IndexFailure {
    /// The declared index's name.
    pub name: String,
    /// What the server said.
    pub message: String,
}

/// A declared index that the database holds in another form.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct IndexDiff {
    /// The declared index's name.
    pub name: String,
    /// Each difference, in words.
    pub differences: Vec<String>,
    /// Whether it was dropped and created again as declared (only when asked for).
    pub replaced: bool,
}

/// The outcome of [`Odm::sync_indexes`](crate::Odm::sync_indexes); printable.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SyncReport {
    /// One entry per collection, sorted by name.
    pub collections: Vec<CollectionSync>,
    /// One entry per collection a model declares a shard key for: sharded, or why not (see
    /// [`crate::shard`]).
    pub sharding: Vec<ShardSync>,
}

impl SyncReport {
    /// Names of the indexes created, as `collection.index`.
    pub fn created(&self) -> Vec<String> {
        self.collections
            .iter()
            .flat_map(|c| {
                c.created
                    .iter()
                    .map(move |n| format!("{}.{n}", c.collection))
            })
            .collect()
    }

    /// True when the database already matched the declarations.
    pub fn is_in_sync(&self) -> bool {
        self.collections.iter().all(|c| {
            c.created.is_empty()
                && c.differing.is_empty()
                && c.extra.is_empty()
                && c.failed.is_empty()
        })
    }

    /// Every index the server refused to create, as `collection.index: reason`.
    pub fn failures(&self) -> Vec<String> {
        self.collections
            .iter()
            .flat_map(|c| {
                c.failed
                    .iter()
                    .map(move |f| format!("{}.{}: {}", c.collection, f.name, f.message))
            })
            .collect()
    }
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.collections {
            writeln!(f, "{}:", c.collection)?;
            let nothing = c.created.is_empty()
                && c.unchanged.is_empty()
                && c.differing.is_empty()
                && c.extra.is_empty()
                && c.failed.is_empty();
            if nothing {
                writeln!(f, "  (no indexes declared besides _id)")?;
            }
            for n in &c.created {
                writeln!(f, "  created    {n}")?;
            }
            for n in &c.unchanged {
                writeln!(f, "  unchanged  {n}")?;
            }
            for d in &c.differing {
                let what = if d.replaced { "replaced" } else { "DIFFERS" };
                writeln!(f, "  {what:<10} {} ({})", d.name, d.differences.join("; "))?;
            }
            for n in &c.extra {
                if c.dropped.contains(n) {
                    writeln!(f, "  dropped    {n} (not declared by any model)")?;
                } else {
                    writeln!(f, "  EXTRA      {n} (not declared by any model; kept)")?;
                }
            }
            for x in &c.failed {
                writeln!(f, "  FAILED     {} ({})", x.name, x.message)?;
            }
        }
        for s in &self.sharding {
            writeln!(f, "{s}")?;
        }
        Ok(())
    }
}

/// What `sync_indexes` did about one sharded model's collection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ShardSync {
    /// `shardCollection` was sent and accepted (also when the collection was already sharded
    /// by that key: the server answers it as a success).
    Sharded {
        /// The collection.
        collection: String,
        /// The key, as sent (`{category: 1}`).
        key: bson::Document,
    },
    /// Nothing was sharded: the server is not a `mongos`.
    NotSharded {
        /// The collection.
        collection: String,
        /// The key it would have been sharded by.
        key: bson::Document,
        /// Why (`the server is a replica set member, not a mongos`).
        reason: String,
    },
}

impl fmt::Display for ShardSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardSync::Sharded { collection, key } => {
                write!(f, "{collection}: sharded by {key}")
            }
            ShardSync::NotSharded {
                collection,
                key,
                reason,
            } => write!(f, "{collection}: not sharded (key {key}): {reason}"),
        }
    }
}
