//! `sync_validators`: installs each model's validator, reports one that differs.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

use bson::{doc, Bson, Document};

use super::{diff, Validated};
use crate::{Error, Model, Odm, Result};

/// Validator sync on the handle.
impl Odm {
    /// Installs the `$jsonSchema` validator generated from every model of the handle's
    /// [catalog](crate::Catalog) (by default, every model linked into the program) on its
    /// collection. See [`SyncValidators`] for the commands it sends.
    pub fn sync_validators(&self) -> SyncValidators<'_> {
        let mut targets: Vec<(String, Document)> = Vec::new();
        for e in self.catalog().models() {
            if let Some(validator) = e.validator {
                if !targets.iter().any(|(c, _)| c == e.collection) {
                    targets.push((e.collection.to_owned(), super::validator_of(validator)));
                }
            }
        }
        SyncValidators {
            odm: self,
            targets,
            replace_differing: false,
            level: None,
        }
    }

    /// Like [`Odm::sync_validators`], for one model's collection only (for a kind, its enum's
    /// validator, which covers every kind of the collection).
    pub fn sync_validators_of<T: Model + Validated>(&self) -> SyncValidators<'_> {
        SyncValidators {
            odm: self,
            targets: vec![(T::COLLECTION.to_owned(), T::validator())],
            replace_differing: false,
            level: None,
        }
    }
}

/// Builder returned by [`Odm::sync_validators`]; `.await` it.
///
/// Sends, per collection: one `listCollections` (filtered by name); then one `create` with the
/// validator when the collection does not exist, one `collMod` with it when the collection has
/// no validator, nothing when the stored validator equals the declared one (numbers compared by
/// value, keys in any order). A validator that differs is reported with each difference and
/// left as it is, unless [`replace_differing`](Self::replace_differing) asks for a `collMod`.
/// The validation action is the server's default, `error`: a document that fails is refused
/// with [`Error::DocumentInvalid`]. The level is the server's default, `strict` (every insert
/// and update is checked), unless [`validation_level`](Self::validation_level) sends one; a
/// stored level other than the one set is reported as a difference.
#[must_use = "the sync runs when awaited"]
#[derive(Debug)]
pub struct SyncValidators<'a> {
    odm: &'a Odm,
    targets: Vec<(String, Document)>,
    replace_differing: bool,
    level: Option<ValidationLevel>,
}

/// Which writes the server checks against the validator (`validationLevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidationLevel {
    /// Every insert and update (the server's default).
    Strict,
    /// Inserts, and updates of documents that already pass: documents stored before the
    /// validator (older schema versions) can still be updated until a migration rewrites them.
    Moderate,
}

impl ValidationLevel {
    fn name(self) -> &'static str {
        match self {
            ValidationLevel::Strict => "strict",
            ValidationLevel::Moderate => "moderate",
        }
    }
}

impl<'a> SyncValidators<'a> {
    /// Also syncs model `T`'s validator.
    pub fn and<T: Model + Validated>(mut self) -> Self {
        if !self.targets.iter().any(|(c, _)| c == T::COLLECTION) {
            self.targets
                .push((T::COLLECTION.to_owned(), T::validator()));
        }
        self
    }

    /// Replaces a stored validator that differs from the declared one with a `collMod` (off by
    /// default: the difference is only reported).
    pub fn replace_differing(mut self, yes: bool) -> Self {
        self.replace_differing = yes;
        self
    }

    /// Sets the validation level sent with the validator and compared with the stored one
    /// (default: none sent, the server's `strict`).
    pub fn validation_level(mut self, level: ValidationLevel) -> Self {
        self.level = Some(level);
        self
    }

    async fn run(self) -> Result<ValidatorReport> {
        let mut targets = self.targets;
        targets.sort_by(|a, b| a.0.cmp(&b.0));
        let mut report = ValidatorReport::default();
        let mut progress = self.odm.track(
            crate::progress::Task::Sync,
            crate::progress::Unit::Collections,
            || "validators".to_owned(),
            Some(targets.len() as u64),
        );
        for (collection, validator) in targets {
            let outcome = sync_one(
                self.odm,
                &collection,
                validator,
                self.level,
                self.replace_differing,
            )
            .await?;
            report.collections.push(ValidatorSync {
                collection,
                outcome,
            });
            progress.advance(1);
        }
        progress.finish();
        Ok(report)
    }
}

impl<'a> IntoFuture for SyncValidators<'a> {
    type Output = Result<ValidatorReport>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("sync_validators", "*");
        crate::trace::boxed(span, self.run(), |_| None)
    }
}

async fn sync_one(
    odm: &Odm,
    collection: &str,
    validator: Document,
    level: Option<ValidationLevel>,
    replace: bool,
) -> Result<ValidatorOutcome> {
    let db = odm.own_database();
    let reply = db
        .run_command(doc! { "listCollections": 1, "filter": { "name": collection } })
        .await
        .map_err(|e| Error::from_driver(collection, e))?;
    let listed = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .ok()
        .and_then(|b| b.first())
        .and_then(Bson::as_document)
        .cloned();
    let Some(listed) = listed else {
        let mut create = doc! { "create": collection, "validator": validator };
        if let Some(level) = level {
            create.insert("validationLevel", level.name());
        }
        db.run_command(create)
            .await
            .map_err(|e| Error::from_driver(collection, e))?;
        return Ok(ValidatorOutcome::Created);
    };
    let options = listed.get_document("options").ok();
    let found_level = options
        .and_then(|o| o.get_str("validationLevel").ok())
        .unwrap_or("strict");
    let found = options
        .and_then(|o| o.get_document("validator").ok())
        .filter(|v| !v.is_empty())
        .cloned();
    let Some(found) = found else {
        coll_mod(odm, collection, validator, level).await?;
        return Ok(ValidatorOutcome::Installed);
    };
    let mut differences =
        diff::differences(&Bson::Document(validator.clone()), &Bson::Document(found));
    if let Some(level) = level.filter(|l| l.name() != found_level) {
        differences.push(format!(
            "validationLevel: declared {}, found {found_level}",
            level.name()
        ));
    }
    if differences.is_empty() {
        return Ok(ValidatorOutcome::Unchanged);
    }
    if replace {
        coll_mod(odm, collection, validator, level).await?;
    }
    Ok(ValidatorOutcome::Differs {
        differences,
        replaced: replace,
    })
}

async fn coll_mod(
    odm: &Odm,
    collection: &str,
    validator: Document,
    level: Option<ValidationLevel>,
) -> Result<()> {
    let mut command = doc! { "collMod": collection, "validator": validator };
    if let Some(level) = level {
        command.insert("validationLevel", level.name());
    }
    odm.own_database()
        .run_command(command)
        .await
        .map(|_| ())
        .map_err(|e| Error::from_driver(collection, e))
}

/// What [`Odm::sync_validators`] did for one collection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ValidatorOutcome {
    /// The collection did not exist: created with the validator.
    Created,
    /// The collection had no validator: the declared one was installed.
    Installed,
    /// The stored validator is the declared one.
    Unchanged,
    /// The stored validator differs: each difference, with its path; replaced only when asked.
    Differs {
        /// `path: declared X, found Y`, one per difference.
        differences: Vec<String>,
        /// Whether the declared validator replaced it.
        replaced: bool,
    },
}

/// One collection's line of a [`ValidatorReport`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ValidatorSync {
    /// The collection.
    pub collection: String,
    /// What was found and done.
    pub outcome: ValidatorOutcome,
}

/// The outcome of [`Odm::sync_validators`]; printable.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ValidatorReport {
    /// One entry per collection, sorted by name.
    pub collections: Vec<ValidatorSync>,
}

impl ValidatorReport {
    /// The outcome for `collection`, if it was synced.
    pub fn outcome(&self, collection: &str) -> Option<&ValidatorOutcome> {
        self.collections
            .iter()
            .find(|c| c.collection == collection)
            .map(|c| &c.outcome)
    }

    /// True when every stored validator already was the declared one.
    pub fn is_in_sync(&self) -> bool {
        self.collections
            .iter()
            .all(|c| c.outcome == ValidatorOutcome::Unchanged)
    }
}

impl fmt::Display for ValidatorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.collections {
            match &c.outcome {
                ValidatorOutcome::Created => {
                    writeln!(f, "{}: created with its validator", c.collection)?
                }
                ValidatorOutcome::Installed => {
                    writeln!(f, "{}: validator installed", c.collection)?
                }
                ValidatorOutcome::Unchanged => {
                    writeln!(f, "{}: validator unchanged", c.collection)?
                }
                ValidatorOutcome::Differs {
                    differences,
                    replaced,
                } => {
                    let what = if *replaced {
                        "replaced"
                    } else {
                        "left as it is"
                    };
                    writeln!(f, "{}: validator differs ({what}):", c.collection)?;
                    for d in differences {
                        writeln!(f, "  {d}")?;
                    }
                }
            }
        }
        Ok(())
    }
}
