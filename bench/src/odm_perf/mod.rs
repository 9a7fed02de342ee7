//! The MongoDB ODM Performance Benchmark (v1.0 of the specification): its models, its datasets,
//! and its measurement rules (iterations, median, nearest-rank percentiles, MB/s by the task's
//! size), with the client's CPU time per operation measured alongside.

pub mod data;
pub mod models;

use std::time::Duration;

/// The percentiles the specification records.
pub const PERCENTILES: [usize; 8] = [10, 25, 50, 75, 90, 95, 98, 99];

/// The `p`th percentile of `sorted` (ascending) by the specification's nearest-rank rule:
/// index `int(N * p / 100) - 1`, the first element when that is below zero.
pub fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).saturating_sub(1)]
}

/// The CPU time this process has used so far (user and system, every thread; a local server
/// is another process, not counted).
pub fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The timings of one side of a task: the wall clock and the client CPU time of each iteration.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    /// Wall-clock time per iteration.
    pub wall: Vec<Duration>,
    /// Client CPU time per iteration.
    pub cpu: Vec<Duration>,
}

impl Samples {
    /// Wall-clock times, ascending.
    pub fn sorted(&self) -> Vec<Duration> {
        let mut s = self.wall.clone();
        s.sort_unstable();
        s
    }

    /// The median wall-clock time (the 50th percentile by the nearest-rank rule).
    pub fn median(&self) -> Duration {
        percentile(&self.sorted(), 50)
    }

    /// The median client CPU time of an iteration.
    pub fn median_cpu(&self) -> Duration {
        let mut s = self.cpu.clone();
        s.sort_unstable();
        percentile(&s, 50)
    }

    /// Megabytes (10^6 bytes) per second at the median, for a task of `bytes`.
    pub fn mb_per_s(&self, bytes: u64) -> f64 {
        bytes as f64 / 1e6 / self.median().as_secs_f64()
    }
}

/// A fresh database named `odm_bench_{name}_{pid}` on the test server (`MONGODB_URI`, or the
/// dev server), written with `w: 1` as the specification asks, and the server's URI.
pub async fn connect(name: &str) -> odm::Result<(odm::mongodb::Database, String)> {
    use odm::mongodb::options::{Acknowledgment, DatabaseOptions, WriteConcern};
    let uri = odm::testing::test_uri()?;
    let client = odm::mongodb::Client::with_uri_str(&uri).await?;
    let options = DatabaseOptions::builder()
        .write_concern(WriteConcern::builder().w(Acknowledgment::Nodes(1)).build())
        .build();
    let db =
        client.database_with_options(&format!("odm_bench_{name}_{}", std::process::id()), options);
    db.drop().await?;
    Ok((db, uri))
}
