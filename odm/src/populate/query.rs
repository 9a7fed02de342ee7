//! What a query populates: the paths its builder was given and the plan asked for, and how the
//! query runs with them (the plan chosen by the cost rule, the `$lookup` plan with its fallback,
//! the `$in` plan). The read builders (`find`, `find_one`, streams, pages) hold one as what
//! they load after their documents ([`Loads`]) and hand it their query; they decide nothing
//! about populate themselves.

use bson::Document;
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::lookup::{choose, find_with_lookup, has_sub_pipeline, is_refusal, refused};
use super::{populate_all, BoxFuture, IntoPopulate, LookupError, Plan, Shape, Step};
use crate::engine::{Loading, Loads};
use crate::{Model, Odm, Result};

/// The populate of one query: its steps, in the order they were given.
pub(crate) struct QueryPopulate<T> {
    steps: Vec<Box<dyn Step<T>>>,
}

impl<T> Default for QueryPopulate<T> {
    fn default() -> Self {
        QueryPopulate { steps: Vec::new() }
    }
}

/// Adds populate steps (one, or one per target of a polymorphic path) to what a read loads.
pub(crate) fn add_steps<T: Model>(loading: &mut Loading<T>, steps: Vec<Box<dyn Step<T>>>) {
    loading
        .get_or_default::<QueryPopulate<T>>()
        .steps
        .extend(steps);
}

/// The populate steps of a path, for a level below another ([`Populate::then`]).
///
/// [`Populate::then`]: super::Populate::then
pub(crate) fn steps_of<T: Model>(path: impl IntoPopulate<T>) -> Vec<Box<dyn Step<T>>> {
    let mut loading = Loading::default();
    path.add_to(&mut loading);
    std::mem::take(&mut loading.get_or_default::<QueryPopulate<T>>().steps)
}

impl<T: Model> QueryPopulate<T> {
    /// The plan this query runs with: the one asked for (or the handle's), or the cost rule's
    /// for [`Plan::Auto`].
    fn plan(
        &self,
        odm: &Odm,
        asked: Option<Plan>,
        options: &FindOptions,
        in_session: bool,
    ) -> Plan {
        match asked.unwrap_or(odm.populate_plan()) {
            Plan::Auto => {
                let mut shape = Shape {
                    levels: self.steps.iter().map(|s| s.levels()).max().unwrap_or(0),
                    relations: self.steps.iter().map(|s| s.relations()).sum(),
                    parents: options.limit.filter(|l| *l != 0).map(i64::unsigned_abs),
                    sharded: odm.is_sharded(),
                    in_session,
                    sub_pipelines: false,
                };
                // Sub-pipelines can only turn the `$lookup` plan into the `$in` plan: the
                // stages are built to find out only when the rest of the shape chose `$lookup`.
                if choose(&shape) == Plan::In {
                    return Plan::In;
                }
                shape.sub_pipelines = self
                    .steps
                    .iter()
                    .enumerate()
                    .any(|(i, s)| s.lookup_stages(i).map_or(true, |st| has_sub_pipeline(&st)));
                choose(&shape)
            }
            plan => plan,
        }
    }

    /// Runs the query (`filter`, the model's restrictions included) and populates its
    /// documents, with the plan of [`plan`](Self::plan). The cost rule never chooses the
    /// lookup plan on a sharded cluster: a handle that does not know yet what it talks to asks
    /// once (one `hello` per handle, only then).
    async fn run(
        &self,
        odm: &Odm,
        filter: Document,
        options: FindOptions,
        asked: Option<Plan>,
        mut session: Option<&mut ClientSession>,
    ) -> Result<Vec<T>> {
        let mut plan = self.plan(odm, asked, &options, session.is_some());
        let asked = asked.unwrap_or(odm.populate_plan());
        if plan == Plan::Lookup && asked == Plan::Auto && !odm.knows_deployment() {
            odm.deployment_has_transactions().await?;
            plan = self.plan(odm, Some(asked), &options, session.is_some());
        }
        if plan == Plan::Lookup {
            let found = find_with_lookup::<T>(
                odm,
                filter.clone(),
                &options,
                &self.steps,
                session.as_deref_mut(),
            )
            .await;
            // A refusal of the server falls back to the `$in` plan when the plan was chosen
            // rather than forced.
            match found {
                Ok(docs) => return Ok(docs),
                Err(LookupError::Failed(e)) => return Err(e),
                Err(LookupError::Refused(e)) if asked == Plan::Lookup || !is_refusal(&e) => {
                    return Err(refused::<T>(e))
                }
                Err(LookupError::Refused(_)) => {}
            }
        }
        // The `$in` plan: the query, then one `find` per relation and level.
        let mut docs =
            crate::engine::find_decoded::<T, T>(odm, filter, options, session.as_deref_mut())
                .await?;
        populate_all(odm, &mut docs, &self.steps, session).await?;
        Ok(docs)
    }
}

impl<T: Model> Loads<T> for QueryPopulate<T> {
    fn len(&self) -> usize {
        self.steps.len()
    }

    fn find<'a>(
        &'a self,
        odm: &'a Odm,
        filter: Document,
        options: FindOptions,
        plan: Option<Plan>,
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<Vec<T>>> {
        Box::pin(self.run(odm, filter, options, plan, session))
    }

    /// Populates a batch of documents already found (a stream's batch, a page): the `$in`
    /// plan, one `find` per relation and level, whatever the plan.
    fn batch<'a>(
        &'a self,
        odm: &'a Odm,
        docs: &'a mut [T],
        session: Option<&'a mut ClientSession>,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(populate_all(odm, docs, &self.steps, session))
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
