//! Where the development server lives. Shared, as source, by the `testing` module and the
//! project's `xtask`, so that both agree on the version and the install directory.

use std::path::PathBuf;

/// The crate that provides the server.
pub const SERVER_CRATE: &str = "secantus-mdb";
/// The pinned server version.
pub const SERVER_VERSION: &str = "0.5.3-beta.196";
/// The server binary's name.
pub const SERVER_BIN: &str = "secantusd-rs";
/// Environment variable naming the server binary explicitly.
pub const SERVER_ENV: &str = "ODM_TEST_SERVER";

/// The per-user cache directory for development tools: `$XDG_CACHE_HOME/odm-dev`, else
/// `$HOME/.cache/odm-dev`, else a directory under the system temp dir.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("odm-dev")
}

/// The install root of the pinned server (`cargo install --root` target).
pub fn server_root() -> PathBuf {
    cache_dir().join(format!("{SERVER_CRATE}-{SERVER_VERSION}"))
}

/// Where the pinned server binary is installed.
pub fn server_binary() -> PathBuf {
    server_root().join("bin").join(SERVER_BIN)
}

/// The command that installs the pinned server where the harness looks for it.
pub fn install_command() -> String {
    format!(
        "cargo install {SERVER_CRATE} --version ={SERVER_VERSION} --ignore-rust-version --root {} (needs cmake)",
        server_root().display()
    )
}
