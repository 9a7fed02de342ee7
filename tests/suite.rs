//! The integration tests, one module per file, in one test binary: linking one binary
//! against the driver instead of one per file is most of what a test run saves. Each
//! module's handles work with its own models (`common::db`), as if it were alone.
//! `ui` (compile-fail), `missing_server` (which changes the environment) and `registry`
//! (which counts the models linked into its program) are binaries of their own.
//!
//! A file's modules are its own: the model files under `common/` are included by each test
//! file that uses them, so that each file's models are types of its own, in its catalog.
#![allow(clippy::duplicate_mod, clippy::module_inception)]

#[path = "aggregation.rs"]
mod aggregation;
#[path = "background_cascades.rs"]
mod background_cascades;
#[path = "background_chains.rs"]
mod background_chains;
#[path = "background_plan.rs"]
mod background_plan;
#[path = "bad_data.rs"]
mod bad_data;
#[path = "big_data.rs"]
mod big_data;
#[path = "book.rs"]
mod book;
#[path = "bounds.rs"]
mod bounds;
#[path = "buckets.rs"]
mod buckets;
#[path = "bulk_writes.rs"]
mod bulk_writes;
#[path = "concurrency.rs"]
mod concurrency;
#[path = "copies_elsewhere.rs"]
mod copies_elsewhere;
#[path = "copy_cycle.rs"]
mod copy_cycle;
#[path = "counters.rs"]
mod counters;
#[path = "crud.rs"]
mod crud;
#[path = "delete_rules.rs"]
mod delete_rules;
#[path = "denormalize.rs"]
mod denormalize;
#[path = "diagram.rs"]
mod diagram;
#[path = "doc_paths.rs"]
mod doc_paths;
#[path = "element_paths.rs"]
mod element_paths;
#[path = "errors.rs"]
mod errors;
#[path = "expanded.rs"]
mod expanded;
#[path = "explain_kinds.rs"]
mod explain_kinds;
#[path = "explain_shapes.rs"]
mod explain_shapes;
#[path = "find_one_and.rs"]
mod find_one_and;
#[path = "follower.rs"]
mod follower;
#[path = "geo.rs"]
mod geo;
#[path = "handle_options.rs"]
mod handle_options;
#[path = "harness.rs"]
mod harness;
#[path = "hostile.rs"]
mod hostile;
#[path = "hygiene.rs"]
mod hygiene;
#[path = "index_options.rs"]
mod index_options;
#[path = "index_use.rs"]
mod index_use;
#[path = "indexes.rs"]
mod indexes;
#[path = "kinds.rs"]
mod kinds;
#[path = "kinds_rules.rs"]
mod kinds_rules;
#[path = "latest_ids.rs"]
mod latest_ids;
#[path = "layers.rs"]
mod layers;
#[path = "migrations.rs"]
mod migrations;
#[path = "operators.rs"]
mod operators;
#[path = "own_writes.rs"]
mod own_writes;
#[path = "paging.rs"]
mod paging;
#[path = "paths.rs"]
mod paths;
#[path = "patterns.rs"]
mod patterns;
#[path = "plain_keys.rs"]
mod plain_keys;
#[path = "poly.rs"]
mod poly;
#[path = "populate.rs"]
mod populate;
#[path = "populate_plans.rs"]
mod populate_plans;
#[path = "progress.rs"]
mod progress;
#[path = "quotas_and_queues.rs"]
mod quotas_and_queues;
#[path = "races.rs"]
mod races;
#[path = "read_options.rs"]
mod read_options;
#[path = "reference_ring.rs"]
mod reference_ring;
#[path = "restore_and_purge.rs"]
mod restore_and_purge;
#[path = "search.rs"]
mod search;
#[path = "shard.rs"]
mod shard;
#[path = "shard_hashed.rs"]
mod shard_hashed;
#[path = "soft_delete.rs"]
mod soft_delete;
#[path = "statistic_buckets.rs"]
mod statistic_buckets;
#[path = "streaming.rs"]
mod streaming;
#[path = "subset.rs"]
mod subset;
#[path = "time_series.rs"]
mod time_series;
#[path = "tracing.rs"]
mod tracing;
#[path = "transactions.rs"]
mod transactions;
#[path = "transitive.rs"]
mod transitive;
#[path = "transitive_sorted.rs"]
mod transitive_sorted;
#[path = "trees.rs"]
mod trees;
#[path = "two_way.rs"]
mod two_way;
#[path = "two_way_writes.rs"]
mod two_way_writes;
#[path = "validators.rs"]
mod validators;
#[path = "versioning.rs"]
mod versioning;
#[path = "watch.rs"]
mod watch;
#[path = "write_options.rs"]
mod write_options;
