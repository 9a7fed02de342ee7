//! A proxy between a client and the test server that fails the way a network or a server does.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

use crate::{Error, Odm, Result};

/// A TCP proxy in front of the test server that can be told to fail: lose the replies of chosen
/// commands (the command reaches the server and runs; the connection closes before its reply
/// comes back, so the client cannot know whether it landed), pause (connections stay open and
/// nothing passes either way, as when the server's process is stopped or the network hangs,
/// until [`resume`](FaultProxy::resume); [`pause_after`](FaultProxy::pause_after) a chosen
/// command, to stop an operation between two of its commands), or die (every connection
/// closed, no new one accepted). Every other byte passes unchanged.
///
/// It is how the ODM's own tests reach the cases a real deployment meets and a test server
/// never does on its own: a commit whose result is unknown, a write whose reply is lost, a
/// server gone or stopped mid-operation. Connect a handle through it with [`FaultProxy::odm`]; read back
/// through [`TestDb::raw`](super::TestDb::raw), which does not go through the proxy.
///
/// ```no_run
/// # async fn f(db: &odm::testing::TestDb) -> odm::Result<()> {
/// let proxy = odm::testing::FaultProxy::start().await?;
/// let odm = proxy.odm(db.name()).await?;
/// // The next commit reaches the server, and its reply is lost.
/// proxy.lose_replies("commitTransaction", 1);
/// # Ok(()) }
/// ```
///
/// Needs a test URI of the form `mongodb://host:port/...` (one host), as the local server's is.
#[derive(Debug)]
pub struct FaultProxy {
    uri: String,
    state: Arc<State>,
}

/// Per command name, how many more of those commands a fault still waits for.
#[derive(Debug, Default)]
struct Countdowns(Mutex<Vec<(String, u32)>>);

impl Countdowns {
    fn list(&self) -> std::sync::MutexGuard<'_, Vec<(String, u32)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `n` to what `name` waits for.
    fn add(&self, name: &str, n: u32) {
        let mut list = self.list();
        match list.iter_mut().find(|(c, _)| c == name) {
            Some((_, left)) => *left += n,
            None => list.push((name.to_owned(), n)),
        }
    }

    /// Makes `name` wait for `n`, whatever it waited for before.
    fn set(&self, name: &str, n: u32) {
        let mut list = self.list();
        list.retain(|(c, _)| c != name);
        list.push((name.to_owned(), n));
    }

    /// Counts one `name` down: how many are left after it, or `None` when it waited for none.
    fn tick(&self, name: &str) -> Option<u32> {
        let mut list = self.list();
        let (_, left) = list.iter_mut().find(|(c, left)| c == name && *left > 0)?;
        *left -= 1;
        Some(*left)
    }
}

#[derive(Debug, Default)]
struct State {
    /// Commands whose replies are to be lost, each of those counted down.
    lose: Countdowns,
    /// How many commands of each name went through.
    seen: Mutex<std::collections::HashMap<String, usize>>,
    /// The accept loop and every connection's tasks, aborted by `cut`.
    tasks: Mutex<Vec<AbortHandle>>,
    cut: AtomicBool,
    /// True while paused: no message passes in either direction.
    paused: tokio::sync::watch::Sender<bool>,
    /// Commands after which to pause: the one that counts its name down to zero.
    pause_after: Countdowns,
}

impl State {
    /// Waits while the proxy is paused.
    async fn unpaused(&self) {
        let mut paused = self.paused.subscribe();
        // The sender lives as long as the state, which this borrows.
        let _ = paused.wait_for(|p| !*p).await;
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, Vec<AbortHandle>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes `name` as seen; true when its reply is to be lost.
    fn lose_reply_of(&self, name: &str) -> bool {
        *self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_default() += 1;
        self.lose.tick(name).is_some()
    }
}

impl FaultProxy {
    /// A proxy in front of the test server ([`test_uri`](super::test_uri)), listening on a free
    /// local port.
    pub async fn start() -> Result<FaultProxy> {
        let uri = super::test_uri()?;
        let server = server_address(&uri).ok_or_else(|| {
            Error::TestServer(format!(
                "a fault proxy needs a test URI with one host and port (mongodb://host:port/...), not {uri}"
            ))
        })?;
        FaultProxy::to(server).await
    }

    /// A proxy in front of the server at `server`.
    pub async fn to(server: SocketAddr) -> Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| Error::TestServer(format!("cannot listen for a fault proxy: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| Error::TestServer(format!("fault proxy address: {e}")))?;
        let state = Arc::new(State::default());
        let shared = state.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if shared.cut.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(upstream) = TcpStream::connect(server).await else {
                    continue;
                };
                relay(&shared, client, upstream);
            }
        });
        state.tasks().push(accept.abort_handle());
        Ok(FaultProxy {
            uri: format!("mongodb://{address}/?directConnection=true"),
            state,
        })
    }

    /// The connection string of the proxy (`mongodb://127.0.0.1:PORT/?directConnection=true`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// A handle on the database `db_name` through the proxy ([`Odm::connect`]: its retry
    /// deadline is the driver's server selection timeout, 30 s).
    pub async fn odm(&self, db_name: &str) -> Result<Odm> {
        Odm::connect(&self.uri, db_name).await
    }

    /// The next `n` commands named `command` (`commitTransaction`, `update`, ...) are passed to
    /// the server, which runs them; then, instead of their reply, the client's connection is
    /// closed. Adds to what an earlier call asked for.
    pub fn lose_replies(&self, command: &str, n: u32) {
        self.state.lose.add(command, n);
    }

    /// How many commands named `command` went through the proxy (whether or not their replies
    /// were lost).
    pub fn count_of(&self, command: &str) -> usize {
        self.state
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(command)
            .copied()
            .unwrap_or(0)
    }

    /// The server stops answering, as a stopped process or a hung network does: connections
    /// stay open, and nothing passes in either direction (a message already on its way waits)
    /// until [`resume`](Self::resume). New connections are accepted and hang the same way.
    pub fn pause(&self) {
        self.state.paused.send_replace(true);
    }

    /// Pauses (as [`pause`](Self::pause)) right after the `n`-th next command named `command`
    /// has reached the server: the server runs it, and its reply is held with everything else,
    /// as when the server stops just then. The way to stop an operation of several commands
    /// between two of them. Replaces what an earlier call asked for `command`.
    pub fn pause_after(&self, command: &str, n: u32) {
        self.state.pause_after.set(command, n.max(1));
    }

    /// Lets the messages held by [`pause`](Self::pause) through, in order, and every later one.
    pub fn resume(&self) {
        self.state.paused.send_replace(false);
    }

    /// The server dies, as its clients see it: every connection is closed and no new one is
    /// accepted (a connection attempt is closed at once).
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        for t in self.state.tasks().drain(..) {
            t.abort();
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.cut();
    }
}

/// Relays one client connection to the server in two tasks; the replies of commands chosen by
/// `state` are not relayed, and the connection is closed instead.
fn relay(state: &Arc<State>, client: TcpStream, upstream: TcpStream) {
    let (mut client_in, mut client_out) = client.into_split();
    let (mut server_in, mut server_out) = upstream.into_split();
    // Set when the command just passed on is one whose reply is to be lost: requests and
    // replies alternate on a connection that runs commands.
    let lose_next = Arc::new(AtomicBool::new(false));
    let (requests_state, lose) = (state.clone(), lose_next.clone());
    let requests = tokio::spawn(async move {
        while let Some(message) = read_message(&mut client_in).await {
            requests_state.unpaused().await;
            let mut pause = false;
            if let Some(name) = command_name(&message) {
                if requests_state.lose_reply_of(name) {
                    lose.store(true, Ordering::SeqCst);
                }
                pause = requests_state.pause_after.tick(name) == Some(0);
            }
            if pause {
                // Paused before the command goes on (it has passed the wait already), so that
                // its reply cannot slip through first.
                requests_state.paused.send_replace(true);
            }
            if server_out.write_all(&message).await.is_err() {
                break;
            }
        }
    });
    let replies_state = state.clone();
    let replies = tokio::spawn(async move {
        while let Some(message) = read_message(&mut server_in).await {
            replies_state.unpaused().await;
            if lose_next.load(Ordering::SeqCst) {
                let _ = client_out.shutdown().await;
                break;
            }
            if client_out.write_all(&message).await.is_err() {
                break;
            }
        }
    });
    let mut tasks = state.tasks();
    tasks.push(requests.abort_handle());
    tasks.push(replies.abort_handle());
}

/// One whole wire message (its length first), or `None` at the end of the stream.
async fn read_message(from: &mut (impl AsyncRead + Unpin)) -> Option<Vec<u8>> {
    let mut length = [0u8; 4];
    from.read_exact(&mut length).await.ok()?;
    let n = usize::try_from(i32::from_le_bytes(length)).ok()?.max(4);
    let mut message = length.to_vec();
    message.resize(n, 0);
    from.read_exact(&mut message[4..]).await.ok()?;
    Some(message)
}

/// The command an `OP_MSG` runs: the first key of its body. Header (16 bytes, the opcode at
/// 12), flags (4), section kind 0 (1), the body's length (4), its first element's type (1),
/// then the key.
fn command_name(message: &[u8]) -> Option<&str> {
    const OP_MSG: i32 = 2013;
    let opcode = i32::from_le_bytes(message.get(12..16)?.try_into().ok()?);
    if opcode != OP_MSG || *message.get(20)? != 0 {
        return None;
    }
    let key = message.get(26..)?;
    let end = key.iter().position(|b| *b == 0)?;
    std::str::from_utf8(&key[..end]).ok()
}

/// The one host of `uri` (`mongodb://[user@]host:port/...`), resolved.
fn server_address(uri: &str) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    let rest = uri.strip_prefix("mongodb://")?;
    let hosts = rest.split(['/', '?']).next()?;
    let host = hosts.rsplit('@').next()?;
    if host.contains(',') {
        return None;
    }
    host.to_socket_addrs().ok()?.next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op_msg(body: &bson::Document) -> Vec<u8> {
        let body = bson::serialize_to_vec(body).expect("body");
        let mut m = Vec::new();
        m.extend(((16 + 4 + 1 + body.len()) as i32).to_le_bytes());
        m.extend(1i32.to_le_bytes());
        m.extend(0i32.to_le_bytes());
        m.extend(2013i32.to_le_bytes());
        m.extend(0u32.to_le_bytes());
        m.push(0);
        m.extend(body);
        m
    }

    #[test]
    fn the_command_is_the_first_key_of_an_op_msg_body() {
        let m = op_msg(&bson::doc! { "commitTransaction": 1, "$db": "admin" });
        assert_eq!(command_name(&m), Some("commitTransaction"));
        // Truncated or another opcode: no name, no panic.
        for n in 0..m.len() {
            let _ = command_name(&m[..n]);
        }
        let mut other = m.clone();
        other[12..16].copy_from_slice(&2012i32.to_le_bytes());
        assert_eq!(command_name(&other), None);
    }

    #[test]
    fn only_a_single_host_uri_has_an_address() {
        assert_eq!(
            server_address("mongodb://127.0.0.1:27017/?directConnection=true"),
            Some("127.0.0.1:27017".parse().unwrap())
        );
        assert_eq!(
            server_address("mongodb://u:p@127.0.0.1:1/db"),
            Some("127.0.0.1:1".parse().unwrap())
        );
        assert_eq!(server_address("mongodb://a:1,b:2/"), None);
        assert_eq!(server_address("mongodb+srv://cluster.example.com/"), None);
    }
}
