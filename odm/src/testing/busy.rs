//! A machine that is also busy: threads that keep the CPU turning while a test or a benchmark
//! runs, as a compiler beside the server would.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Threads spinning on the CPU until dropped, or for `at_most` whatever happens.
#[derive(Debug)]
pub struct BusyCpu {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyCpu {
    /// Starts `n` spinning threads, each stopping when this is dropped or after `at_most`.
    pub fn threads(n: usize, at_most: Duration) -> BusyCpu {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let until = Instant::now() + at_most;
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        BusyCpu { stop, threads }
    }
}

impl Drop for BusyCpu {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
