//! Making a handle: the engine's state, with the list of maintainers that prepare the ODM's own
//! writes (the engine sits below them and names none).

use mongodb::Database;

use crate::engine::Odm;

impl Odm {
    /// Wraps a driver database. The [retry deadline](Odm::retry_deadline) is 30 s (the
    /// driver's default server selection timeout; the database does not tell its client's);
    /// set it with [`Odm::with_retry_deadline`].
    ///
    /// ```no_run
    /// # async fn run() -> odm::Result<()> {
    /// // A client built by the application, with its own options.
    /// let client = odm::mongodb::Client::with_uri_str("mongodb://localhost:27017").await?;
    /// let odm = odm::Odm::new(client.database("library"));
    /// # let _ = odm;
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(db: Database) -> Self {
        Odm::assemble(db, crate::pipeline::own)
    }
}
