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
//! it; arguments (parts of the operations' names) run only those. `HOT_PATH_ONLY=odm` (or
//! `driver`) times one side alone after the common warm-up, for a profiler or a syscall count.
//! The last two columns are the allocations per operation of each side (a counting global
//! allocator; reallocations count).

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use odm::bson::{doc, oid::ObjectId};
use odm::mongodb::{Collection, Database};
use odm::prelude::*;
use odm_bench::odm_perf::data;
use odm_bench::odm_perf::models::*;

/// The system allocator, counting allocations: how many each operation makes is printed next to
/// its CPU (the runtime's one thread makes them all; the server is another process).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; the counter is a side
// effect only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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

/// The client CPU of `op`, in microseconds, and the allocations it made (reallocations
/// included).
async fn cpu_of<F: Future<Output = odm::Result<()>>>(op: F) -> odm::Result<(f64, u64)> {
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let start = thread_cpu();
    op.await?;
    let cpu = (thread_cpu() - start).as_secs_f64() * 1e6;
    Ok((cpu, ALLOCATIONS.load(Ordering::Relaxed) - allocations))
}

/// The per-operation CPU of both sides over `pairs` alternating pairs, and their allocations.
#[derive(Default)]
struct Pairs {
    odm: Vec<f64>,
    driver: Vec<f64>,
    odm_allocations: u64,
    driver_allocations: u64,
}

impl Pairs {
    fn push_odm(&mut self, (cpu, allocations): (f64, u64)) {
        self.odm.push(cpu);
        self.odm_allocations += allocations;
    }

    fn push_driver(&mut self, (cpu, allocations): (f64, u64)) {
        self.driver.push(cpu);
        self.driver_allocations += allocations;
    }
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
        let per_op = |n: u64, ops: usize| n as f64 / ops.max(1) as f64;
        println!(
            "{name:<24} {:>8.1} {:>8.1} {:>+9.2} ± {:<5.2} {:>+8.2} {:>7} {:>6.1} {:>6.1}",
            Self::median(&self.odm),
            Self::median(&self.driver),
            mean,
            half,
            self.median_difference(),
            self.odm.len(),
            per_op(self.odm_allocations, self.odm.len()),
            per_op(self.driver_allocations, self.driver.len()),
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
    // One side alone, for profilers and syscall counts (`HOT_PATH_ONLY=odm` or `driver`); the
    // other side's figures are the same ones, so that the difference reads 0.
    let only = std::env::var("HOT_PATH_ONLY").ok();
    if let Some(side) = only.as_deref().filter(|s| ["odm", "driver"].contains(s)) {
        for i in 0..n {
            match side {
                "odm" => out.push_odm(cpu_of(odm_op(i)).await?),
                _ => out.push_driver(cpu_of(driver_op(i)).await?),
            }
        }
        let (cpu, allocations) = match side {
            "odm" => (out.odm.clone(), out.odm_allocations),
            _ => (out.driver.clone(), out.driver_allocations),
        };
        (out.odm, out.driver) = (cpu.clone(), cpu);
        (out.odm_allocations, out.driver_allocations) = (allocations, allocations);
        return Ok(out);
    }
    for i in 0..n {
        if i % 2 == 0 {
            out.push_odm(cpu_of(odm_op(i)).await?);
            out.push_driver(cpu_of(driver_op(i)).await?);
        } else {
            out.push_driver(cpu_of(driver_op(i)).await?);
            out.push_odm(cpu_of(odm_op(i)).await?);
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
    set: fn(String) -> odm::Update<T>,
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
            odm.update_by_id::<T>(id(&mine[i]), set(value)).await?;
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
        "{:<24} {:>8} {:>8} {:>17} {:>8} {:>7} {:>13}",
        "operation", "odm", "driver", "odm - driver", "", "pairs", "allocs/op"
    );
    println!(
        "{:<24} {:>8} {:>8} {:>17} {:>8} {:>7} {:>6} {:>6}",
        "", "us (p50)", "us (p50)", "us (mean, 95 %)", "(p50)", "", "odm", "driver"
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
