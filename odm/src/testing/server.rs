//! One local server per process, started on first use and stopped at exit.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::location::{install_command, server_binary, SERVER_BIN, SERVER_ENV};

/// A running local server.
#[derive(Debug)]
pub struct TestServer {
    uri: String,
    pid: u32,
}

impl TestServer {
    /// The connection string (`mongodb://127.0.0.1:PORT/?directConnection=true`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }
}

struct Running {
    child: Child,
    dir: PathBuf,
}

static SERVER: OnceLock<Result<TestServer, String>> = OnceLock::new();
static RUNNING: Mutex<Option<Running>> = Mutex::new(None);

/// The process's local server, started on the first call (about 0.6 s) and stopped, with its
/// data directory removed, when the process exits.
pub fn local_server() -> crate::Result<&'static TestServer> {
    SERVER
        .get_or_init(start)
        .as_ref()
        .map_err(|e| crate::Error::TestServer(e.clone()))
}

/// Finds the server binary: `$ODM_TEST_SERVER`, then the pinned install in the cache directory,
/// then `secantusd-rs` on `PATH`.
pub fn find_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(SERVER_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "{SERVER_ENV} names {}, which is not a file",
                p.display()
            ))
        };
    }
    let cached = server_binary();
    if cached.is_file() {
        return Ok(cached);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(SERVER_BIN);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "the local test server `{SERVER_BIN}` is not installed (looked at ${SERVER_ENV}, {}, and PATH). \
         Install it with: {} -- or set MONGODB_URI to use a running MongoDB",
        cached.display(),
        install_command()
    ))
}

fn start() -> Result<TestServer, String> {
    let binary = find_binary()?;
    let dir = std::env::temp_dir().join(format!(
        "odm-test-server-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;

    // The server is spawned from a thread that lives as long as the process, because on Linux
    // the parent-death signal fires when the spawning *thread* ends.
    let (tx, rx) = mpsc::channel();
    let thread_dir = dir.clone();
    std::thread::Builder::new()
        .name("odm-test-server".into())
        .spawn(move || {
            let spawned = spawn(&binary, &thread_dir);
            let ok = spawned.is_ok();
            let _ = tx.send(spawned);
            if ok {
                loop {
                    std::thread::park();
                }
            }
        })
        .map_err(|e| format!("cannot start the server thread: {e}"))?;
    let (child, port) = rx
        .recv()
        .map_err(|_| "the server thread ended early".to_owned())??;
    let pid = child.id();
    *RUNNING.lock().unwrap_or_else(PoisonError::into_inner) = Some(Running { child, dir });
    register_exit_hook();
    Ok(TestServer {
        uri: format!("mongodb://127.0.0.1:{port}/?directConnection=true"),
        pid,
    })
}

fn spawn(binary: &Path, dir: &Path) -> Result<(Child, u16), String> {
    let mut cmd = Command::new(binary);
    cmd.args(["--host", "127.0.0.1", "--port", "0", "--storage-path"])
        .arg(dir)
        .args(["--log-file-max", "2MB", "--cache-size", "256M"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let mut sent = false;
        for line in lines.by_ref().map_while(Result::ok) {
            if !sent {
                if let Some(port) = line
                    .split_once("listening on ")
                    .and_then(|(_, addr)| addr.trim().rsplit(':').next()?.parse::<u16>().ok())
                {
                    let _ = tx.send(port);
                    sent = true;
                }
            }
            // Keep draining so the server never blocks on a full pipe.
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(port) => Ok((child, port)),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!(
                "{} did not report `listening on` within 60 s",
                binary.display()
            ))
        }
    }
}

#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and calls only `prctl`, which is
    // async-signal-safe; it allocates nothing and touches no lock.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

fn register_exit_hook() {
    extern "C" fn stop_server() {
        let running = RUNNING
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut r) = running {
            let _ = r.child.kill();
            let _ = r.child.wait();
            let _ = std::fs::remove_dir_all(&r.dir);
        }
    }
    // SAFETY: `stop_server` is a plain `extern "C"` function that does not unwind.
    unsafe {
        libc::atexit(stop_server);
    }
}
