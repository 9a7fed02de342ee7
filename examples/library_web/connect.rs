//! The service's connection to the database: an outage told in about a second, not after the
//! driver's default of 30 s.

use std::time::Duration;

use odm::mongodb::options::ClientOptions;
use odm::mongodb::Client;
use odm::Odm;

// ANCHOR: timeouts
/// How long a request waits for a server before the service answers 503: the driver's server
/// selection timeout. The default, 30 s, is longer than a client or a load balancer waits.
pub const SERVER_SELECTION_TIMEOUT: Duration = Duration::from_millis(1500);

/// The client options of the service, unless the connection string sets them
/// (`serverSelectionTimeoutMS`, `connectTimeoutMS`): a request while the database is down
/// fails in about a second and a half, and the service answers 503 with `Retry-After`.
pub fn for_a_service(options: &mut ClientOptions) {
    options
        .server_selection_timeout
        .get_or_insert(SERVER_SELECTION_TIMEOUT);
    options
        .connect_timeout
        .get_or_insert(Duration::from_secs(1));
}

/// The service's handle on `db_name`, of a client made with `options` (parsed from its
/// connection string) given [`for_a_service`]'s timeouts; its retry deadline (how long odm's
/// own transactions retry conflicts) is the selection timeout too.
pub fn handle(mut options: ClientOptions, db_name: &str) -> odm::Result<Odm> {
    for_a_service(&mut options);
    let deadline = options
        .server_selection_timeout
        .unwrap_or(SERVER_SELECTION_TIMEOUT);
    let client = Client::with_options(options)?;
    Ok(Odm::new(client.database(db_name)).with_retry_deadline(deadline))
}
// ANCHOR_END: timeouts
