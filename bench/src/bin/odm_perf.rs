//! The MongoDB ODM Performance Benchmark: every task of the specification (flat small create,
//! update, find by filter, find by foreign key; flat large create and update; nested large
//! create, update of `embedded_str_doc_1.field1`, find by `embedded_str_doc_1.unique_id`, find
//! by the first `embedded_str_doc_array` item's `unique_id`), each run by odm and by hand-written
//! driver code on the same serde types, in the same run, iterations interleaved. Prints, per
//! task, both throughputs (MB/s at the median, sized as the specification sizes the task), their
//! ratio (odm / driver, target >= 0.95), the nearest-rank percentiles, and the client CPU time
//! per operation. Then, without a server, the client CPU of the insert's encoding and of the
//! decoding of 10,000 documents, odm against plain serde.
//!
//! `cargo xtask bench odm_perf` runs it (release build). `ODM_PERF_OPS` (operations per
//! iteration, default 2,000; the specification's is 10,000) and `ODM_PERF_ITERATIONS` (timed
//! iterations per side, default 10) size it; `ODM_PERF_DATA` names another directory of the
//! three datasets. Arguments: task names (or parts of them) to run only those (and not the parts
//! without a server); `micro` for the parts without a server only; `--write-data <dir>` writes
//! the repository's datasets again.

use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use futures_util::TryStreamExt;
use odm::bson::{doc, oid::ObjectId, Document, RawDocumentBuf};
use odm::mongodb::{Collection, Database};
use odm::prelude::*;
use odm_bench::odm_perf::data::{self, Dataset};
use odm_bench::odm_perf::models::*;
use odm_bench::odm_perf::{cpu_time, percentile, Samples, PERCENTILES};

/// The specification's `updated_value` (13 bytes), which sizes the update tasks.
const UPDATED_VALUE: &str = "updated_value";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Odm,
    Driver,
}

struct Ctx {
    odm: odm::Odm,
    db: Database,
    ops: usize,
    iterations: usize,
    small: Dataset<SmallDoc>,
    small_auto: Dataset<SmallDocAutoId>,
    large: Dataset<LargeDoc>,
    nested: Dataset<LargeDocNested>,
}

struct Row {
    task: &'static str,
    bytes: u64,
    odm: Samples,
    driver: Samples,
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(default)
}

/// Runs `run` for both sides: one warm-up iteration each, then `iterations` each, interleaved
/// (odm first on even iterations, the driver first on odd ones), `after` following every
/// iteration untimed. `run` gets a number that differs at every call.
async fn pair<'f>(
    ctx: &Ctx,
    task: &'static str,
    bytes: u64,
    run: impl Fn(Side, usize) -> BoxFuture<'f, odm::Result<()>>,
    after: impl Fn(Side) -> BoxFuture<'f, odm::Result<()>>,
) -> odm::Result<Row> {
    let mut k = 0;
    for side in [Side::Odm, Side::Driver] {
        run(side, k).await?;
        after(side).await?;
        k += 1;
    }
    let mut odm = Samples::default();
    let mut driver = Samples::default();
    for i in 0..ctx.iterations {
        let order = if i % 2 == 0 {
            [Side::Odm, Side::Driver]
        } else {
            [Side::Driver, Side::Odm]
        };
        for side in order {
            let cpu = cpu_time();
            let started = Instant::now();
            run(side, k).await?;
            let wall = started.elapsed();
            let cpu = cpu_time() - cpu;
            after(side).await?;
            k += 1;
            let samples = if side == Side::Odm {
                &mut odm
            } else {
                &mut driver
            };
            samples.wall.push(wall);
            samples.cpu.push(cpu);
        }
    }
    let row = Row {
        task,
        bytes,
        odm,
        driver,
    };
    print_row(ctx, &row);
    Ok(row)
}

fn nothing<'a>(_: Side) -> BoxFuture<'a, odm::Result<()>> {
    Box::pin(async { Ok(()) })
}

async fn drop_collection(db: &Database, name: &str) -> odm::Result<()> {
    db.collection::<Document>(name).drop().await?;
    Ok(())
}

fn value(k: usize) -> String {
    format!("{UPDATED_VALUE}{k}")
}

/// Creation: `ops` models made from the dataset's document and inserted one by one; the
/// collection dropped after each iteration.
async fn create<T: Model + Clone + Sync + 'static>(
    ctx: &Ctx,
    task: &'static str,
    data: &Dataset<T>,
    make: fn(&T) -> T,
) -> odm::Result<Row> {
    let coll: Collection<T> = ctx.db.collection(T::COLLECTION);
    let coll = &coll;
    pair(
        ctx,
        task,
        data.bytes * ctx.ops as u64,
        move |side, _| {
            Box::pin(async move {
                for _ in 0..ctx.ops {
                    let doc = make(&data.doc);
                    match side {
                        Side::Odm => {
                            ctx.odm.insert_one(&doc).await?;
                        }
                        Side::Driver => {
                            coll.insert_one(&doc).await?;
                        }
                    }
                }
                Ok(())
            })
        },
        |_| Box::pin(drop_collection(&ctx.db, T::COLLECTION)),
    )
    .await
}

/// `ops` copies of `doc` inserted at once (setup, untimed).
async fn seed<T: Model + Clone>(ctx: &Ctx, doc: &T, renew: fn(&T) -> T) -> odm::Result<Vec<T>> {
    let docs: Vec<T> = (0..ctx.ops).map(|_| renew(doc)).collect();
    ctx.odm.insert_many(&docs).await?;
    Ok(docs)
}

fn small_doc(d: &SmallDoc) -> SmallDoc {
    SmallDoc {
        id: ObjectId::new(),
        ..d.clone()
    }
}

fn auto_id_doc(d: &SmallDocAutoId) -> SmallDocAutoId {
    SmallDocAutoId {
        id: None,
        ..d.clone()
    }
}

fn large_doc(d: &LargeDoc) -> LargeDoc {
    LargeDoc {
        id: ObjectId::new(),
        ..d.clone()
    }
}

/// Update: `field1` (or the nested `path`) of each of `ops` stored documents set by `_id`.
async fn update<T: Model<Id = ObjectId> + Clone + Sync + 'static>(
    ctx: &Ctx,
    task: &'static str,
    doc: &T,
    renew: fn(&T) -> T,
    odm_update: fn(&str) -> odm::Update<T>,
    path: &'static str,
) -> odm::Result<Row> {
    let ids: Vec<ObjectId> = seed(ctx, doc, renew)
        .await?
        .iter()
        .map(|d| *d.document_id().expect("seeded documents have ids"))
        .collect();
    let ids = &ids;
    let coll: Collection<Document> = ctx.db.collection(T::COLLECTION);
    let coll = &coll;
    let row = pair(
        ctx,
        task,
        UPDATED_VALUE.len() as u64 * ctx.ops as u64,
        move |side, k| {
            Box::pin(async move {
                let value = value(k);
                let mut matched = 0;
                for id in ids {
                    matched += match side {
                        Side::Odm => ctx.odm.update_by_id::<T>(*id, odm_update(&value)).await?,
                        Side::Driver => {
                            coll.update_one(doc! { "_id": id }, doc! { "$set": { path: &value } })
                                .await?
                        }
                    }
                    .matched_count;
                }
                assert_eq!(matched as usize, ids.len());
                Ok(())
            })
        },
        nothing,
    )
    .await?;
    drop_collection(&ctx.db, T::COLLECTION).await?;
    Ok(row)
}

/// Find: for each of `keys`, the documents whose `path` holds it, decoded into `T`.
async fn find<T: Model + Clone + Sync + Send + Unpin + 'static>(
    ctx: &Ctx,
    task: &'static str,
    bytes: u64,
    keys: &[ObjectId],
    odm_filter: fn(ObjectId) -> odm::Filter<T>,
    path: &'static str,
) -> odm::Result<Row> {
    let coll: Collection<T> = ctx.db.collection(T::COLLECTION);
    let coll = &coll;
    let row = pair(
        ctx,
        task,
        bytes * ctx.ops as u64,
        move |side, _| {
            Box::pin(async move {
                let mut found = 0;
                for key in keys {
                    found += match side {
                        Side::Odm => ctx.odm.find(odm_filter(*key)).await?.len(),
                        Side::Driver => coll
                            .find(doc! { path: key })
                            .await?
                            .try_collect::<Vec<T>>()
                            .await?
                            .len(),
                    };
                }
                assert_eq!(found, keys.len());
                Ok(())
            })
        },
        nothing,
    )
    .await?;
    drop_collection(&ctx.db, T::COLLECTION).await?;
    Ok(row)
}

/// Find by foreign key: for each `ForeignKey` id, the small document referencing it, with the
/// reference loaded (odm: `populate`; the driver: the same `find`, then the `$in` on the
/// referenced collection and the stitching).
async fn find_by_foreign_key(ctx: &Ctx) -> odm::Result<Row> {
    let fks: Vec<ForeignKey> = (0..ctx.ops)
        .map(|_| ForeignKey {
            id: ObjectId::new(),
            name: "foreign_key_name".to_owned(),
        })
        .collect();
    let docs: Vec<SmallDocFk> = fks
        .iter()
        .map(|fk| {
            let s = &ctx.small.doc;
            SmallDocFk {
                id: ObjectId::new(),
                field1: s.field1.clone(),
                field2: s.field2.clone(),
                field3: s.field3.clone(),
                field4: s.field4.clone(),
                field5: s.field5.clone(),
                field6: s.field6.clone(),
                field7: s.field7.clone(),
                field8: s.field8,
                field9: s.field9,
                field10: s.field10,
                field11: s.field11,
                field12: s.field12,
                field13: s.field13,
                field_fk: Ref::new(fk.id),
            }
        })
        .collect();
    ctx.odm.insert_many(&fks).await?;
    ctx.odm.insert_many(&docs).await?;
    ctx.odm.sync_indexes_of::<SmallDocFk>().await?;
    let ids: Vec<ObjectId> = fks.iter().map(|f| f.id).collect();
    let ids = &ids;
    let rows: Collection<SmallDocFkRow> = ctx.db.collection(SmallDocFk::COLLECTION);
    let keys: Collection<ForeignKey> = ctx.db.collection(ForeignKey::COLLECTION);
    let (rows, keys) = (&rows, &keys);
    let row = pair(
        ctx,
        "small find by foreign key",
        ctx.small.bytes * ctx.ops as u64,
        move |side, _| {
            Box::pin(async move {
                let mut loaded = 0;
                for id in ids {
                    loaded += match side {
                        Side::Odm => ctx
                            .odm
                            .find(SmallDocFk::field_fk().eq(Ref::new(*id)))
                            .populate(SmallDocFk::field_fk())
                            .await?
                            .iter()
                            .filter(|d| d.field_fk.is_loaded())
                            .count(),
                        Side::Driver => {
                            let found: Vec<SmallDocFkRow> = rows
                                .find(doc! { "field_fk": id })
                                .await?
                                .try_collect()
                                .await?;
                            let refs: Vec<ObjectId> = found.iter().map(|d| d.field_fk).collect();
                            let targets: Vec<ForeignKey> = keys
                                .find(doc! { "_id": { "$in": refs } })
                                .await?
                                .try_collect()
                                .await?;
                            let joined: Vec<(SmallDocFkRow, Option<&ForeignKey>)> = found
                                .into_iter()
                                .map(|d| {
                                    let target = targets.iter().find(|t| t.id == d.field_fk);
                                    (d, target)
                                })
                                .collect();
                            joined.iter().filter(|(_, t)| t.is_some()).count()
                        }
                    };
                }
                assert_eq!(loaded, ids.len());
                Ok(())
            })
        },
        nothing,
    )
    .await?;
    drop_collection(&ctx.db, SmallDocFk::COLLECTION).await?;
    drop_collection(&ctx.db, ForeignKey::COLLECTION).await?;
    Ok(row)
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn us(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}

fn print_header(ctx: &Ctx) {
    println!();
    println!(
        "{} operations per iteration, {} timed iterations per side (plus one warm-up), interleaved",
        ctx.ops, ctx.iterations
    );
    println!(
        "{:<34} {:>8} {:>10} {:>10} {:>7} {:>10} {:>10}",
        "task", "size MB", "odm MB/s", "drv MB/s", "ratio", "odm CPU", "drv CPU"
    );
    println!(
        "{:<34} {:>8} {:>10} {:>10} {:>7} {:>10} {:>10}",
        "", "", "(median)", "(median)", "odm/drv", "us/op", "us/op"
    );
}

fn print_row(ctx: &Ctx, row: &Row) {
    let odm = row.odm.mb_per_s(row.bytes);
    let driver = row.driver.mb_per_s(row.bytes);
    let per_op = |s: &Samples| us(s.median_cpu() / ctx.ops as u32);
    println!(
        "{:<34} {:>8.3} {:>10.2} {:>10.2} {:>7.3} {:>10} {:>10}",
        row.task,
        row.bytes as f64 / 1e6,
        odm,
        driver,
        odm / driver,
        per_op(&row.odm),
        per_op(&row.driver),
    );
}

fn print_percentiles(rows: &[Row]) {
    println!();
    println!(
        "iteration times, ms, nearest rank: {}",
        PERCENTILES.map(|p| format!("p{p}")).join(" ")
    );
    for row in rows {
        for (side, samples) in [("odm", &row.odm), ("driver", &row.driver)] {
            let sorted = samples.sorted();
            let cells: Vec<String> = PERCENTILES
                .iter()
                .map(|p| ms(percentile(&sorted, *p)))
                .collect();
            println!("  {:<34} {:<6} {}", row.task, side, cells.join(" "));
        }
    }
}

/// Times `rounds` rounds of `a` and `b` over `n` items, interleaved; the medians per item.
fn interleaved(rounds: usize, n: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    a();
    b();
    let mut ta = Vec::new();
    let mut tb = Vec::new();
    for i in 0..rounds {
        let time = |f: &mut dyn FnMut(), into: &mut Vec<Duration>| {
            let started = Instant::now();
            f();
            into.push(started.elapsed());
        };
        if i % 2 == 0 {
            time(&mut a, &mut ta);
            time(&mut b, &mut tb);
        } else {
            time(&mut b, &mut tb);
            time(&mut a, &mut ta);
        }
    }
    ta.sort_unstable();
    tb.sort_unstable();
    let per = |t: &[Duration]| percentile(t, 50).as_secs_f64() * 1e6 / n as f64;
    (per(&ta), per(&tb))
}

const MICRO_DOCS: usize = 10_000;
const MICRO_ROUNDS: usize = 41;

/// The insert's client work without a server: odm's encoding (serialize, check keys, the id)
/// against the driver's own serialization of the same value.
fn encode_case<T: Model>(name: &str, doc: &T) {
    let (odm, serde) = interleaved(
        MICRO_ROUNDS,
        MICRO_DOCS,
        || {
            for _ in 0..MICRO_DOCS {
                std::hint::black_box(
                    odm::testing::hooks::encode_for_insert(std::hint::black_box(doc))
                        .expect("encodes"),
                );
            }
        },
        || {
            for _ in 0..MICRO_DOCS {
                std::hint::black_box(
                    odm::bson::serialize_to_raw_document_buf(std::hint::black_box(doc))
                        .expect("encodes"),
                );
            }
        },
    );
    println!("  {name:<34} {odm:>8.2} {serde:>8.2} {:>7.3}", odm / serde);
}

/// Decoding 10,000 stored documents: odm's decoding against plain serde on the same bytes.
fn decode_case<T: Model>(name: &str, doc: &T) {
    let raw = odm::bson::serialize_to_raw_document_buf(doc).expect("encodes");
    let raws: Vec<RawDocumentBuf> = (0..MICRO_DOCS).map(|_| raw.clone()).collect();
    let database = odm::testing::hooks::Database::named("odm_perf");
    let (odm, serde) = interleaved(
        MICRO_ROUNDS,
        MICRO_DOCS,
        || {
            for r in &raws {
                std::hint::black_box(
                    odm::testing::hooks::decode::<T>(database, r).expect("decodes"),
                );
            }
        },
        || {
            for r in &raws {
                std::hint::black_box(
                    odm::bson::deserialize_from_slice::<T>(r.as_bytes()).expect("decodes"),
                );
            }
        },
    );
    println!("  {name:<34} {odm:>8.2} {serde:>8.2} {:>7.3}", odm / serde);
}

fn micro(small: &SmallDoc, auto: &SmallDocAutoId, large: &LargeDoc, nested: &LargeDocNested) {
    println!();
    println!(
        "client CPU without a server, µs per document (medians of {MICRO_ROUNDS} rounds of {MICRO_DOCS} documents, interleaved)"
    );
    println!(
        "  {:<34} {:>8} {:>8} {:>7}",
        "insert encoding", "odm", "serde", "ratio"
    );
    encode_case("small", small);
    encode_case("small, id left to the library", auto);
    encode_case("large", large);
    encode_case("large nested", nested);
    println!(
        "  {:<34} {:>8} {:>8} {:>7}",
        "decoding 10,000 documents", "odm", "serde", "ratio"
    );
    decode_case("small", small);
    decode_case("large", large);
    decode_case("large nested", nested);
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> odm::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--write-data") {
        let dir = args.get(i + 1).expect("--write-data <dir>");
        data::generate(std::path::Path::new(dir)).expect("writes the datasets");
        println!("datasets written to {dir}");
        return Ok(());
    }
    let dir = data::dir();
    let load_error = |e: String| odm::Error::Unsupported(e);
    let small = data::load::<SmallDoc>(&dir, "small_doc.json").map_err(load_error)?;
    let small_auto = data::load::<SmallDocAutoId>(&dir, "small_doc.json").map_err(load_error)?;
    let large = data::load::<LargeDoc>(&dir, "large_doc.json").map_err(load_error)?;
    let nested = data::load::<LargeDocNested>(&dir, "large_doc_nested.json").map_err(load_error)?;
    println!(
        "datasets: {} ({} bytes), {} ({} bytes), {} ({} bytes)",
        small.path.display(),
        small.bytes,
        large.path.display(),
        large.bytes,
        nested.path.display(),
        nested.bytes
    );
    let only_micro = args.iter().any(|a| a == "micro");
    let wanted: Vec<&String> = args.iter().filter(|a| *a != "micro").collect();
    if !only_micro {
        let (db, uri) = odm_bench::odm_perf::connect("odm_perf").await?;
        println!("server: {uri}");
        let ctx = Ctx {
            odm: odm::Odm::new(db.clone()),
            db,
            ops: env_usize("ODM_PERF_OPS", 2_000),
            iterations: env_usize("ODM_PERF_ITERATIONS", 10),
            small,
            small_auto,
            large,
            nested,
        };
        let run =
            |task: &str| wanted.is_empty() || wanted.iter().any(|w| task.contains(w.as_str()));
        print_header(&ctx);
        let mut rows = Vec::new();
        if run("small create") {
            rows.push(create(&ctx, "small create", &ctx.small, small_doc).await?);
        }
        if run("small create, id by the library") {
            rows.push(
                create(
                    &ctx,
                    "small create, id by the library",
                    &ctx.small_auto,
                    auto_id_doc,
                )
                .await?,
            );
        }
        if run("small update") {
            rows.push(
                update(
                    &ctx,
                    "small update",
                    &ctx.small.doc,
                    small_doc,
                    |v| SmallDoc::field1().set(v),
                    "field1",
                )
                .await?,
            );
        }
        if run("small find by filter") {
            let ids: Vec<ObjectId> = seed(&ctx, &ctx.small.doc, small_doc)
                .await?
                .iter()
                .map(|d| d.id)
                .collect();
            rows.push(
                find(
                    &ctx,
                    "small find by filter",
                    ctx.small.bytes,
                    &ids,
                    |id| SmallDoc::id().eq(id),
                    "_id",
                )
                .await?,
            );
        }
        if run("small find by foreign key") {
            rows.push(find_by_foreign_key(&ctx).await?);
        }
        if run("large create") {
            rows.push(create(&ctx, "large create", &ctx.large, large_doc).await?);
        }
        if run("large update") {
            rows.push(
                update(
                    &ctx,
                    "large update",
                    &ctx.large.doc,
                    large_doc,
                    |v| LargeDoc::field1().set(v),
                    "field1",
                )
                .await?,
            );
        }
        if run("nested create") {
            rows.push(create(&ctx, "nested create", &ctx.nested, LargeDocNested::renewed).await?);
        }
        if run("nested update embedded_str_doc_1.field1") {
            rows.push(
                update(
                    &ctx,
                    "nested update embedded_str_doc_1.field1",
                    &ctx.nested.doc,
                    LargeDocNested::renewed,
                    |v| LargeDocNested::embedded_str_doc_1().field1().set(v),
                    "embedded_str_doc_1.field1",
                )
                .await?,
            );
        }
        if run("nested find by embedded_str_doc_1.unique_id") {
            let docs = seed(&ctx, &ctx.nested.doc, LargeDocNested::renewed).await?;
            ctx.odm.sync_indexes_of::<LargeDocNested>().await?;
            let ids: Vec<ObjectId> = docs
                .iter()
                .map(|d| d.embedded_str_doc_1.unique_id)
                .collect();
            rows.push(
                find(
                    &ctx,
                    "nested find by embedded_str_doc_1.unique_id",
                    ctx.nested.bytes,
                    &ids,
                    |id| LargeDocNested::embedded_str_doc_1().unique_id().eq(id),
                    "embedded_str_doc_1.unique_id",
                )
                .await?,
            );
        }
        if run("nested find by embedded_str_doc_array.0.unique_id") {
            let docs = seed(&ctx, &ctx.nested.doc, LargeDocNested::renewed).await?;
            ctx.odm.sync_indexes_of::<LargeDocNested>().await?;
            let ids: Vec<ObjectId> = docs
                .iter()
                .map(|d| d.embedded_str_doc_array[0].unique_id)
                .collect();
            rows.push(
                find(
                    &ctx,
                    "nested find by embedded_str_doc_array.0.unique_id",
                    ctx.nested.bytes,
                    &ids,
                    |id| LargeDocNested::embedded_str_doc_array().unique_id().eq(id),
                    "embedded_str_doc_array.unique_id",
                )
                .await?,
            );
        }
        print_percentiles(&rows);
        ctx.db.drop().await?;
        if wanted.is_empty() {
            micro(
                &ctx.small.doc,
                &ctx.small_auto.doc,
                &ctx.large.doc,
                &ctx.nested.doc,
            );
        }
    } else {
        micro(&small.doc, &small_auto.doc, &large.doc, &nested.doc);
    }
    Ok(())
}
