//! Shared benchmark plumbing: a database per run, timing with medians, and command counts.
//!
//! Run every benchmark with `cargo xtask bench` (release build, local dev server, or the
//! server named by `MONGODB_URI`).

pub mod latency;
pub mod odm_perf;

use std::future::Future;
use std::time::{Duration, Instant};

use odm::mongodb::options::ClientOptions;
use odm::mongodb::{Client, Database};
use odm::monitor::CommandLog;
use odm::Odm;

/// `uri` (one `host:port`, direct connection) rewritten to go through a [`latency::proxy`].
async fn through_proxy(uri: &str, rtt: Duration) -> odm::Result<String> {
    let rest = uri
        .strip_prefix("mongodb://")
        .expect("ODM_BENCH_RTT_US needs a mongodb:// URI");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (host, tail) = rest.split_at(end);
    assert!(
        !host.contains(',') && !host.contains('@'),
        "ODM_BENCH_RTT_US needs one host and no credentials in the URI"
    );
    let local = latency::proxy(host.to_owned(), rtt)
        .await
        .map_err(|e| odm::Error::Unsupported(format!("cannot start the proxy: {e}")))?;
    let tail = if tail.contains("directConnection") {
        tail.to_owned()
    } else if tail.contains('?') {
        format!("{tail}&directConnection=true")
    } else {
        format!(
            "{}?directConnection=true",
            tail.trim_end_matches('/').to_owned() + "/"
        )
    };
    Ok(format!("mongodb://{local}{tail}"))
}

/// A database for one benchmark run, dropped by [`Bench::finish`], with a logged client.
#[derive(Debug)]
pub struct Bench {
    /// The `Odm` on the benchmark database.
    pub odm: Odm,
    /// The same database for hand-written driver code (same client).
    pub db: Database,
    /// The commands the client sent.
    pub log: CommandLog,
}

impl Bench {
    /// Connects (starting the local dev server unless `MONGODB_URI` is set) and picks a fresh
    /// database.
    pub async fn start(name: &str) -> odm::Result<Bench> {
        let mut uri = odm::testing::test_uri()?;
        if let Some(rtt) = latency::round_trip() {
            uri = through_proxy(&uri, rtt).await?;
            println!("round trip added by a proxy: {} µs", rtt.as_micros());
        }
        let mut options = ClientOptions::parse(&uri).await?;
        let log = CommandLog::new();
        log.attach(&mut options);
        let client = Client::with_options(options)?;
        let db = client.database(&format!("odm_bench_{name}_{}", std::process::id()));
        db.drop().await?;
        println!("server: {uri}");
        Ok(Bench {
            odm: Odm::new(db.clone()),
            db,
            log,
        })
    }

    /// Drops the benchmark database.
    pub async fn finish(self) -> odm::Result<()> {
        self.db.drop().await?;
        Ok(())
    }

    /// Runs `f` once and returns how long it took and the commands it sent.
    pub async fn measure<F, Fut, T>(&self, f: F) -> (Duration, Vec<String>, T)
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        self.log.clear();
        let started = Instant::now();
        let out = f().await;
        let elapsed = started.elapsed();
        (elapsed, self.log.names(), out)
    }
}

/// The median of some durations.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// `12.3 ms` / `2.41 s`.
pub fn show(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}

/// `2 (find, find)` or `20001 (find x20001)`; in order, runs of one name counted, or totals
/// per name when there would be more than 12 runs.
pub fn show_commands(names: &[String]) -> String {
    let mut groups: Vec<(String, usize)> = Vec::new();
    for n in names {
        match groups.last_mut() {
            Some((last, count)) if last == n => *count += 1,
            _ => groups.push((n.clone(), 1)),
        }
    }
    // A long alternation (batches of getMore, update, commit) is shown as totals per name.
    if groups.len() > 12 {
        let mut totals: Vec<(String, usize)> = Vec::new();
        for n in names {
            match totals.iter_mut().find(|(t, _)| t == n) {
                Some((_, count)) => *count += 1,
                None => totals.push((n.clone(), 1)),
            }
        }
        groups = totals;
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(n, c)| if c == 1 { n } else { format!("{n} x{c}") })
        .collect();
    format!("{} ({})", names.len(), parts.join(", "))
}

/// A small deterministic generator (no dependency, same data every run).
#[derive(Debug)]
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}
