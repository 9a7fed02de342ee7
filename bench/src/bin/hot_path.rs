//! What odm adds to a plain write, one operation at a time: for models with no copies, tree,
//! versions, shard key or other maintainer (the ODM Performance Benchmark's flat small and flat
//! large documents; the nested large one's bounded array concerns the bounds maintainer), each
//! insert, update by `_id`, replacement and delete is
//! sent once by odm and once by hand-written driver code sending the identical command, the two
//! alternating (odm first on even pairs, the driver first on odd ones), and the client CPU time
//! of each operation is read from the thread's own clock (`CLOCK_THREAD_CPUTIME_ID`; the
//! runtime has one thread, on which the driver's own tasks run too, and the server is another
//! process). Prints, per operation, the median CPU of each side and the mean of the per-pair
//! differences (odm − driver) with its 95 % interval: what odm costs beyond the driver, with
//! the noise of a shared machine averaged over thousands of pairs rather than compared between
//! runs.
//!
//! `cargo xtask bench hot_path` runs it (release build). `HOT_PATH_PAIRS` (default 4,000) sizes
//! it; arguments (parts of the operations' names) run only those.

use std::future::Future;
use std::time::Duration;

use odm::bson::{doc, oid::ObjectId};
use odm::mongodb::{Collection, Database};
use odm::prelude::*;
use odm_bench::odm_perf::data;
use odm_bench::odm_perf::models::*;

/// The CPU time this thread has used so far.
fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime writes into the zeroed struct it is given and reads nothing else.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts
    };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The client CPU of `op`, in microseconds.
async fn cpu_of<F: Future<Output = odm::Result<()>>>(op: F) -> odm::Result<f64> {
    let start = thread_cpu();
    op.await?;
    Ok((thread_cpu() - start).as_secs_f64() * 1e6)
}

/// The per-operation CPU of both sides over `pairs` alternating pairs.
#[derive(Default)]
struct Pairs {
    odm: Vec<f64>,
    driver: Vec<f64>,
}

impl Pairs {
    fn median(samples: &[f64]) -> f64 {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    }

    /// The mean of the per-pair differences and the half-width of its 95 % interval.
    fn difference(&self) -> (f64, f64) {
        let d: Vec<f64> = self
            .odm
            .iter()
            .zip(&self.driver)
            .map(|(a, b)| a - b)
            .collect();
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, 1.96 * (var / n).sqrt())
    }

    /// The median of the per-pair differences, which a stall of the machine in one
    /// operation of a pair moves less than it moves the mean.
    fn median_difference(&self) -> f64 {
        let d: Vec<f64> = self
            .odm
            .iter()
            .zip(&self.driver)
            .map(|(a, b)| a - b)
            .collect();
        Self::median(&d)
    }

    fn print(&self, name: &str) {
        let (mean, half) = self.difference();
        println!(
            "{name:<24} {:>8.1} {:>8.1} {:>+9.2} ± {:<5.2} {:>+8.2} {:>7}",
            Self::median(&self.odm),
            Self::median(&self.driver),
            mean,
            half,
            self.median_difference(),
            self.odm.len(),
        );
    }
}

/// Runs `pairs` pairs of `odm_op(i)` and `driver_op(i)`, alternating which goes first.
async fn pairs<A, B, FA, FB>(n: usize, mut odm_op: A, mut driver_op: B) -> odm::Result<Pairs>
where
    A: FnMut(usize) -> FA,
    B: FnMut(usize) -> FB,
    FA: Future<Output = odm::Result<()>>,
    FB: Future<Output = odm::Result<()>>,
{
    let mut out = Pairs::default();
    // Warm-up, untimed: connections, caches, the first allocation of every buffer.
    for i in 0..n.min(200) {
        odm_op(n + i).await?;
        driver_op(n + i).await?;
    }
    for i in 0..n {
        if i % 2 == 0 {
            out.odm.push(cpu_of(odm_op(i)).await?);
            out.driver.push(cpu_of(driver_op(i)).await?);
        } else {
            out.driver.push(cpu_of(driver_op(i)).await?);
            out.odm.push(cpu_of(odm_op(i)).await?);
        }
    }
    Ok(out)
}

/// The operation `name`, when it is wanted: its pairs run and printed. Returns whether it ran.
async fn measure<A, B, FA, FB>(
    name: &str,
    wanted: &dyn Fn(&str) -> bool,
    n: usize,
    odm_op: A,
    driver_op: B,
) -> odm::Result<bool>
where
    A: FnMut(usize) -> FA,
    B: FnMut(usize) -> FB,
    FA: Future<Output = odm::Result<()>>,
    FB: Future<Output = odm::Result<()>>,
{
    if !wanted(name) {
        return Ok(false);
    }
    pairs(n, odm_op, driver_op).await?.print(name);
    Ok(true)
}

/// One model's case: its name, the dataset's document, a copy with a new `_id`, and the
/// update of one field (odm's, and the field's path for the driver's).
struct Case<'d, T> {
    label: &'static str,
    doc: &'d T,
    renew: fn(&T) -> T,
    set: fn(&str) -> odm::Update<T>,
    path: &'static str,
}

/// The four writes of one model: insert, update of one field by `_id`, replacement, delete by
/// `_id`.
async fn writes<T: Model<Id = ObjectId> + Clone>(
    odm: &odm::Odm,
    db: &Database,
    n: usize,
    case: Case<'_, T>,
    wanted: &dyn Fn(&str) -> bool,
) -> odm::Result<()> {
    let Case {
        label,
        doc,
        renew,
        set,
        path,
    } = case;
    let coll: Collection<T> = db.collection(T::COLLECTION);
    let raw = coll.clone_with_type::<odm::bson::Document>();
    // Enough documents for the warm-up and the timed pairs of both sides.
    let docs: Vec<T> = (0..2 * (n + n.min(200))).map(|_| renew(doc)).collect();
    let id = |d: &T| *d.document_id().expect("the documents have ids");
    let half = docs.len() / 2;
    let (mine, theirs) = docs.split_at(half);

    let name = format!("{label} insert");
    let inserted = measure(
        &name,
        wanted,
        n,
        |i| async move {
            odm.insert_one(&mine[i]).await?;
            Ok(())
        },
        |i| {
            let coll = &coll;
            async move {
                coll.insert_one(&theirs[i]).await?;
                Ok(())
            }
        },
    )
    .await?;
    if !inserted {
        odm.insert_many(&docs).await?;
    }

    measure(
        &format!("{label} update"),
        wanted,
        n,
        |i| async move {
            let value = format!("odm {i}");
            odm.update_by_id::<T>(id(&mine[i]), set(&value)).await?;
            Ok(())
        },
        |i| {
            let raw = &raw;
            async move {
                let value = format!("drv {i}");
                raw.update_one(
                    doc! { "_id": id(&theirs[i]) },
                    doc! { "$set": { path: value } },
                )
                .await?;
                Ok(())
            }
        },
    )
    .await?;

    measure(
        &format!("{label} replace"),
        wanted,
        n,
        |i| async move {
            odm.replace_one(&mine[i]).await?;
            Ok(())
        },
        |i| {
            let coll = &coll;
            async move {
                let d = &theirs[i];
                coll.replace_one(doc! { "_id": id(d) }, d).await?;
                Ok(())
            }
        },
    )
    .await?;

    measure(
        &format!("{label} delete"),
        wanted,
        n,
        |i| async move {
            odm.delete_one(T::id_field().eq(id(&mine[i]))).await?;
            Ok(())
        },
        |i| {
            let raw = &raw;
            async move {
                raw.delete_one(doc! { "_id": id(&theirs[i]) }).await?;
                Ok(())
            }
        },
    )
    .await?;
    coll.drop().await?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> odm::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wanted = |name: &str| args.is_empty() || args.iter().any(|a| name.contains(a.as_str()));
    let n = std::env::var("HOT_PATH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &usize| *n > 1)
        .unwrap_or(4_000);
    let dir = data::dir();
    let load_error = |e: String| odm::Error::Unsupported(e);
    let small = data::load::<SmallDoc>(&dir, "small_doc.json").map_err(load_error)?;
    let large = data::load::<LargeDoc>(&dir, "large_doc.json").map_err(load_error)?;
    let nested = data::load::<LargeDocNested>(&dir, "large_doc_nested.json").map_err(load_error)?;

    let (db, uri) = odm_bench::odm_perf::connect("hot_path").await?;
    let odm = odm::Odm::new(db.clone());
    println!("server: {uri}; {n} pairs per operation, alternating");
    println!(
        "{:<24} {:>8} {:>8} {:>17} {:>8} {:>7}",
        "operation", "odm", "driver", "odm - driver", "", "pairs"
    );
    println!(
        "{:<24} {:>8} {:>8} {:>17} {:>8}",
        "", "us (p50)", "us (p50)", "us (mean, 95 %)", "(p50)"
    );
    let case = Case {
        label: "small",
        doc: &small.doc,
        renew: |d| SmallDoc {
            id: ObjectId::new(),
            ..d.clone()
        },
        set: |v| SmallDoc::field1().set(v),
        path: "field1",
    };
    writes(&odm, &db, n, case, &wanted).await?;
    let case = Case {
        label: "large",
        doc: &large.doc,
        renew: |d| LargeDoc {
            id: ObjectId::new(),
            ..d.clone()
        },
        set: |v| LargeDoc::field1().set(v),
        path: "field1",
    };
    writes(&odm, &db, n, case, &wanted).await?;
    let case = Case {
        label: "nested",
        doc: &nested.doc,
        renew: |d| LargeDocNested {
            id: ObjectId::new(),
            ..d.clone()
        },
        set: |v| LargeDocNested::embedded_str_doc_1().field1().set(v),
        path: "embedded_str_doc_1.field1",
    };
    writes(&odm, &db, n, case, &wanted).await?;
    db.drop().await?;
    Ok(())
}
