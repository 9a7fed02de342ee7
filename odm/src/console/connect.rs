//! `--uri`, `--db` and `--connect-timeout`: the console on another server or database than
//! the application's, and a dead server told in seconds.
//!
//! The application hands the console a handle: its catalog, its settings (retry deadline, page
//! key, transactions turned off, populate plan, observer) and its client. `--db` keeps the
//! client (its connection pool) and works on another database. `--uri` connects a new client
//! as [`Odm::connect`] does, on `--db`, else the URI's database (`mongodb://host/shop`), else
//! the handed handle's, and keeps the catalog and the settings: the handed client is not used.
//! `--connect-timeout` bounds how long a server is waited for: with `--uri`, it is the new
//! client's server selection and connect timeouts (so every command of the run fails that fast
//! when the server goes away); without, the handed client's timeouts are its own (they cannot
//! change once it is built), and the console sends one `ping` first, given that long.

use std::time::Duration;

use clap::Args;
use mongodb::options::ClientOptions;

use super::errors::{Failure, Kind};
use crate::{Error, Odm};

#[derive(Args, Debug, Default)]
pub(super) struct Connection {
    /// Connects to this server instead of the application's (a connection string); the
    /// application's models and settings are kept.
    #[arg(long, global = true, value_name = "URI")]
    uri: Option<String>,
    /// Works on this database instead of the application's.
    #[arg(long, global = true, value_name = "NAME")]
    db: Option<String>,
    /// Fails after this many seconds (decimals allowed) when no server answers, instead of the
    /// client's server selection timeout (30 s unless the connection string says otherwise).
    #[arg(long, global = true, value_name = "SECONDS", value_parser = seconds)]
    connect_timeout: Option<Duration>,
}

/// `--connect-timeout`'s value: a positive number of seconds.
fn seconds(given: &str) -> std::result::Result<Duration, String> {
    let secs: f64 = given
        .parse()
        .map_err(|_| format!("`{given}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("`{given}` is not a positive number of seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The handle the command runs with: `odm` itself, or as the options say.
pub(super) async fn connection(odm: Odm, c: &Connection) -> Result<Odm, Failure> {
    if let Some(uri) = &c.uri {
        return reconnect(&odm, uri, c).await.map_err(|e| Failure::of(&e));
    }
    let odm = match &c.db {
        Some(name) => odm.on_database(odm.client().database(name), None),
        None => odm,
    };
    if let Some(timeout) = c.connect_timeout {
        ping(&odm, timeout).await?;
    }
    Ok(odm)
}

/// A new client at `uri`, with the handle's catalog and settings.
async fn reconnect(odm: &Odm, uri: &str, c: &Connection) -> crate::Result<Odm> {
    let mut options = ClientOptions::parse(uri).await?;
    if let Some(timeout) = c.connect_timeout {
        options.server_selection_timeout = Some(timeout);
        options.connect_timeout = Some(timeout);
    }
    let name =
        c.db.clone()
            .or_else(|| options.default_database.clone())
            .unwrap_or_else(|| odm.database().name().to_owned());
    let mongos = crate::engine::watch_mongos(&mut options);
    let client = mongodb::Client::with_options(options)?;
    Ok(odm.on_database(client.database(&name), Some(mongos)))
}

/// One `ping`, given `timeout` to be answered.
async fn ping(odm: &Odm, timeout: Duration) -> Result<(), Failure> {
    let ping = odm.database().run_command(bson::doc! { "ping": 1 });
    match tokio::time::timeout(timeout, ping).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(Failure::of(&Error::from(e))),
        Err(_) => Err(Failure {
            kind: Kind::Unreachable,
            message: format!(
                "no server could be reached (none answered within --connect-timeout {})",
                timeout.as_secs_f64()
            ),
        }),
    }
}
