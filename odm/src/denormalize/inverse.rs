//! The sweep of one two-way reference, by collection names and paths: each parent's array of
//! children compared with the children that name it, and repaired from them. The typed
//! [`VerifyInverse`](crate::relations::VerifyInverse) and [`Odm::verify_copies`] run it.

use std::collections::{HashMap, HashSet};
use std::fmt;

use bson::{doc, Bson, Document};
use mongodb::options::FindOptions;

use crate::document::IdKey;
use crate::engine::{Effect, Own};
use crate::{Odm, Result};

/// One disagreement between the two sides of a two-way reference.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InverseIssue {
    /// The child names the parent, but the parent's array does not list the child.
    MissingFromParent {
        /// The parent's `_id`.
        parent: Bson,
        /// The child's `_id`.
        child: Bson,
    },
    /// The parent's array lists a child that names another parent (or does not exist).
    ExtraInParent {
        /// The parent's `_id`.
        parent: Bson,
        /// The listed child's `_id`.
        child: Bson,
    },
}

/// The outcome of [`Odm::verify_inverse`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct InverseReport {
    /// Parents read.
    pub parents_checked: u64,
    /// Disagreements found.
    pub issues: Vec<InverseIssue>,
    /// Parents updated to fix them (0 unless repairing).
    pub parents_repaired: u64,
}

impl InverseReport {
    /// True when both sides agree everywhere.
    pub fn is_consistent(&self) -> bool {
        self.issues.is_empty()
    }
}

impl fmt::Display for InverseReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} parents checked, {} issue(s), {} parent(s) repaired",
            self.parents_checked,
            self.issues.len(),
            self.parents_repaired
        )?;
        for issue in &self.issues {
            match issue {
                InverseIssue::MissingFromParent { parent, child } => writeln!(
                    f,
                    "  parent {parent} does not list child {child}, which names it"
                )?,
                InverseIssue::ExtraInParent { parent, child } => writeln!(
                    f,
                    "  parent {parent} lists child {child}, which names another parent"
                )?,
            }
        }
        Ok(())
    }
}

/// The sweep of one two-way reference, by collection names and paths.
pub(crate) struct Sweep<'a> {
    pub(crate) odm: &'a Odm,
    pub(crate) child: &'a str,
    pub(crate) link: String,
    pub(crate) parent: &'a str,
    pub(crate) inverse: String,
    pub(crate) batch_size: usize,
    pub(crate) repair: bool,
}

impl Sweep<'_> {
    pub(crate) async fn run(self) -> Result<InverseReport> {
        let inverse = self.inverse.clone();
        let projection = doc! { "_id": 1, inverse.as_str(): 1 };
        let work = crate::sweep::Work::of(self.repair, || {
            format!(
                "two-way {}.{} <-> {}.{}",
                self.child, self.link, self.parent, self.inverse
            )
        });
        let mut batches =
            crate::sweep::Batches::open(self.odm, self.parent, projection, self.batch_size, work)
                .await?;
        let mut report = InverseReport::default();
        while let Some(batch) = batches.next().await? {
            self.check_batch(&inverse, batch, &mut report).await?;
        }
        Ok(report)
    }

    async fn check_batch(
        &self,
        inverse: &str,
        batch: Vec<Document>,
        report: &mut InverseReport,
    ) -> Result<()> {
        let ids: Vec<Bson> = batch.iter().filter_map(|d| d.get("_id").cloned()).collect();
        let mut named = Vec::new();
        for chunk in crate::batch::chunks(ids) {
            let options = FindOptions::builder()
                .projection(doc! { "_id": 1, self.link.as_str(): 1 })
                .build();
            let filter = crate::literal::is_in(&self.link, chunk);
            named.extend(
                crate::engine::find_documents(self.odm, self.child, filter, options, None).await?,
            );
        }
        let mut expected: HashMap<IdKey, Vec<Bson>> = HashMap::new();
        for child in named {
            let (Some(id), Some(parent)) = (child.get("_id"), child.get(&self.link)) else {
                continue;
            };
            expected
                .entry(IdKey::of(parent))
                .or_default()
                .push(id.clone());
        }
        for parent in batch {
            report.parents_checked += 1;
            let Some(pid) = parent.get("_id").cloned() else {
                continue;
            };
            let listed: Vec<Bson> = parent.get_array(inverse).cloned().unwrap_or_default();
            let listed_keys: HashSet<IdKey> = listed.iter().map(IdKey::of).collect();
            let should: Vec<Bson> = expected.remove(&IdKey::of(&pid)).unwrap_or_default();
            let should_keys: HashSet<IdKey> = should.iter().map(IdKey::of).collect();
            let missing: Vec<Bson> = should
                .into_iter()
                .filter(|c| !listed_keys.contains(&IdKey::of(c)))
                .collect();
            let extra: Vec<Bson> = listed
                .into_iter()
                .filter(|c| !should_keys.contains(&IdKey::of(c)))
                .collect();
            for child in &missing {
                report.issues.push(InverseIssue::MissingFromParent {
                    parent: pid.clone(),
                    child: child.clone(),
                });
            }
            for child in &extra {
                report.issues.push(InverseIssue::ExtraInParent {
                    parent: pid.clone(),
                    child: child.clone(),
                });
            }
            if self.repair && !(missing.is_empty() && extra.is_empty()) {
                if !missing.is_empty() {
                    let add = doc! { "$addToSet": { inverse: { "$each": missing } } };
                    self.repair_parent(&pid, add).await?;
                }
                if !extra.is_empty() {
                    let pull = crate::literal::pull_all(inverse, extra);
                    self.repair_parent(&pid, pull).await?;
                }
                report.parents_repaired += 1;
            }
        }
        Ok(())
    }

    /// One update of the parent `id`'s array: the array is derived from the children's
    /// references, so no writer's version moves.
    async fn repair_parent(&self, id: &Bson, update: Document) -> Result<()> {
        let by_id = crate::literal::eq("_id", id.clone());
        let write = Own::update(
            self.parent,
            by_id,
            update,
            Effect::Derived,
            "two-way repair",
        )
        .one()
        .showing(crate::error::show_id(Some(id)));
        self.odm.write_own(write, None).await.map(|_| ())
    }
}
