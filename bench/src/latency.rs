//! A network between the benchmark and its server: a TCP proxy that delays every chunk it
//! forwards by half a round trip in each direction, so that the figures of operations that
//! differ in their number of round trips can be read as they would be across a network
//! (`ODM_BENCH_RTT_US`), not only over the loopback.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// The round trip asked for with `ODM_BENCH_RTT_US` (microseconds), if any.
pub fn round_trip() -> Option<Duration> {
    let us: u64 = std::env::var("ODM_BENCH_RTT_US").ok()?.parse().ok()?;
    (us > 0).then(|| Duration::from_micros(us))
}

/// Starts a proxy to `server` (`host:port`) adding `rtt` to each request/reply exchange;
/// returns the address to connect to instead.
pub async fn proxy(server: String, rtt: Duration) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let local = listener.local_addr()?.to_string();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let server = server.clone();
            tokio::spawn(async move {
                let Ok(upstream) = TcpStream::connect(&server).await else {
                    return;
                };
                let _ = client.set_nodelay(true);
                let _ = upstream.set_nodelay(true);
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = upstream.into_split();
                let half = rtt / 2;
                tokio::spawn(forward(client_read, server_write, half));
                tokio::spawn(forward(server_read, client_write, half));
            });
        }
    });
    Ok(local)
}

/// Copies `from` to `to`, each chunk written `delay` after it was read: chunks read while
/// earlier ones wait are held back each from its own arrival, not one after the other.
async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
) {
    let (send, mut receive) = tokio::sync::mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let writer = tokio::spawn(async move {
        while let Some((due, chunk)) = receive.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if send
            .send((Instant::now() + delay, buf[..n].to_vec()))
            .is_err()
        {
            break;
        }
    }
    drop(send);
    let _ = writer.await;
}
