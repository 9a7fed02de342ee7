//! Transactions: the caller's ([`Odm::transaction`] runs a body of ODM operations in one
//! transaction, its attempts handed a [`Tx`]) and the ODM's own, both retried when the server
//! says to (see `retry`), and whether an operation runs in one ([`TransactionMode`]).

mod retry;

use crate::{Error, Odm, Result};
use futures_util::future::BoxFuture;
pub use retry::Tx;
pub(crate) use retry::{
    cut_off, in_transaction, transaction_loop, unsupported, wait, worth_aborting,
};

/// Whether a multi-document operation runs in a transaction.
///
/// A transaction the ODM opens itself is retried as a whole when the server reports a
/// transient error (a write conflict with a concurrent transaction), with backoff, until
/// [`Odm::retry_deadline`]; any other error aborts it and is returned. Inside the caller's
/// session nothing is retried: the error is returned, and [`Error::is_transient`] tells the
/// caller whether to run its transaction again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransactionMode {
    /// In a transaction when the deployment supports one (a replica set or sharded cluster),
    /// else in the documented fixed order.
    #[default]
    Auto,
    /// Always in a transaction; an error on a standalone server.
    Always,
    /// Never in a transaction: the fixed order. For [`Reassign`](crate::relations::Reassign), concurrent moves of the same
    /// child converge on the child's reference without a repair; an interrupted one leaves the
    /// child listed by one parent too many, which [`Odm::verify_inverse`](crate::Odm::verify_inverse) repairs.
    Never,
}

impl Odm {
    /// Runs `body` in a transaction and commits it: every operation of the body given
    /// `.session(tx.session())` lands with the others or not at all.
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize)]
    /// # #[odm(collection = "books")]
    /// # struct Book { #[serde(rename = "_id")] id: i32, copies: i32 }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// odm.transaction(async |tx| {
    ///     odm.update_by_id::<Book>(1, Book::copies().inc(-1))
    ///         .session(tx.session())
    ///         .await?;
    ///     odm.update_by_id::<Book>(2, Book::copies().inc(1))
    ///         .session(tx.session())
    ///         .await?;
    ///     Ok(())
    /// })
    /// .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Retries, as for the transactions the ODM opens itself (see the guide's transactions
    /// chapter): an error labelled `TransientTransactionError` (a write conflict with a
    /// concurrent transaction, a failover), from the body or from the commit, aborts the
    /// attempt and runs the whole body again in a new transaction, after a backoff; a commit
    /// whose result is unknown (`UnknownTransactionCommitResult`) is committed again. Both stop
    /// at [`Odm::retry_deadline`], counted from the first attempt, with the last error. So the
    /// body may run several times: it must not consume what it captures (clone what it hands
    /// over), and effects outside the database are repeated. [`Tx::attempt`] says which run
    /// this is.
    ///
    /// Any other error of the body (or an error it makes up, returned as an `odm::Error`) aborts
    /// the transaction and is returned: nothing of the body lands. The body must return the
    /// errors of its operations rather than swallow them: the server may have aborted the
    /// transaction already.
    ///
    /// Inside the body, operations that open a transaction of their own when run alone
    /// (`reassign`, deletes with rules, tree moves, cascades in a transaction, latest-N
    /// recomputations, subset pairs) run their commands in this one instead: they join it, and
    /// their errors are retried with the body.
    ///
    /// Commands: the first time an `Odm` (or a clone) is asked, one `hello` (whether the
    /// deployment runs transactions, as [`Odm::supports_transactions`]); then per attempt
    /// those of the body, then `commitTransaction` (or `abortTransaction` after an error of
    /// the body). A deployment without transactions (a standalone server) is
    /// [`Error::TransactionsUnsupported`](crate::Error::TransactionsUnsupported), before the
    /// body runs. [`Odm::without_transactions`] does not change this method: asking for a
    /// transaction is asking for one.
    ///
    /// The body is an async closure. Should the compiler find the returned future not `Send`
    /// where it must be (a known limitation of async closures with borrowed captures, reported
    /// as "implementation of `Send` is not general enough"), use [`Odm::transaction_with`].
    pub async fn transaction<R, F>(&self, mut body: F) -> Result<R>
    where
        F: AsyncFnMut(&mut Tx) -> Result<R>,
    {
        self.refuse_without_transactions("Odm::transaction").await?;
        transaction_loop!(self, "Odm::transaction", |tx| body(&mut tx).await)
    }

    /// [`Odm::transaction`] with the body written as a closure returning a boxed future, and
    /// what it needs passed as `context` (borrowed for each attempt): the form whose future is
    /// always `Send`, like the driver's `StartTransaction::and_run`.
    ///
    /// ```no_run
    /// # use odm::prelude::*;
    /// # #[derive(Model, Serialize, Deserialize)]
    /// # #[odm(collection = "books")]
    /// # struct Book { #[serde(rename = "_id")] id: i32, copies: i32 }
    /// # async fn run(odm: &Odm) -> odm::Result<()> {
    /// let (from, to) = (1, 2);
    /// odm.transaction_with(&(odm, from, to), |tx, (odm, from, to)| {
    ///     Box::pin(async move {
    ///         odm.update_by_id::<Book>(*from, Book::copies().inc(-1))
    ///             .session(tx.session())
    ///             .await?;
    ///         odm.update_by_id::<Book>(*to, Book::copies().inc(1))
    ///             .session(tx.session())
    ///             .await?;
    ///         Ok(())
    ///     })
    /// })
    /// .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Same retries and commands as [`Odm::transaction`].
    pub async fn transaction_with<C, R, F>(&self, context: &C, mut body: F) -> Result<R>
    where
        C: Sync + ?Sized,
        R: Send,
        F: for<'s> FnMut(&'s mut Tx, &'s C) -> BoxFuture<'s, Result<R>>,
    {
        self.refuse_without_transactions("Odm::transaction_with")
            .await?;
        transaction_loop!(self, "Odm::transaction_with", |tx| body(&mut tx, context)
            .await)
    }

    /// [`Error::TransactionsUnsupported`] on a deployment that is neither a replica set nor a
    /// sharded cluster. The driver would start the transaction on a standalone server that has
    /// sessions, and some such servers run its commands without one: checked here, with the
    /// `hello` of [`Odm::supports_transactions`] (once per `Odm`).
    async fn refuse_without_transactions(&self, operation: &str) -> Result<()> {
        if self.deployment_has_transactions().await? {
            return Ok(());
        }
        Err(Error::TransactionsUnsupported {
            operation: operation.to_owned(),
            message: "the server's `hello` names no replica set and no `mongos`".to_owned(),
        })
    }
}

/// A transaction too large for the server (MongoDB's `TransactionTooLarge`, or a storage
/// engine that cannot hold it).
pub(crate) fn is_too_large(e: &crate::Error) -> bool {
    let code = match e.driver_error() {
        Some(d) => match &*d.kind {
            mongodb::error::ErrorKind::Command(c) => Some(c.code),
            mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(w)) => {
                Some(w.code)
            }
            _ => None,
        },
        _ => None,
    };
    matches!(code, Some(334 | 388 | 290))
        || matches!(e, crate::Error::Unsupported(m) if m.contains("too large for one transaction"))
}
