//! Index use of the queries odm generates, asked of the live database: every query shape of
//! the catalog's models ([`query_shapes`]) explained by the server, and those it would answer
//! by scanning a whole collection.

mod declared;
mod plan;
mod shapes;

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

use bson::{doc, Document};

use crate::catalog::{Catalog, IndexSpec};
use crate::{Error, Odm, Result};

pub(crate) use plan::winning;
use plan::Winning;
pub use shapes::query_shapes;

/// The feature of odm that sends a query shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryFeature {
    /// `populate` of a reference: the targets by `_id`.
    Populate,
    /// The children of parents (`#[parent]`), by their reference.
    Children,
    /// A latest-N array: the push onto the parent, the recompute from the children.
    Latest,
    /// A copy taken from its sources on insert: the sources by `_id`.
    Fill,
    /// A cascade of copies: the dependents by the copy's id path.
    Cascade,
    /// A delete rule: the documents referencing the deleted ones.
    DeleteRule,
    /// A tree of documents: children, roots, descendants, moves, the tree's delete rule.
    Tree,
    /// A subset pair: the details by `_id`.
    Subset,
}

impl QueryFeature {
    /// Its name in a report: `populate`, `children`, `latest`, `fill`, `cascade`,
    /// `delete rule`, `tree`, `subset`.
    pub fn name(self) -> &'static str {
        match self {
            QueryFeature::Populate => "populate",
            QueryFeature::Children => "children",
            QueryFeature::Latest => "latest",
            QueryFeature::Fill => "fill",
            QueryFeature::Cascade => "cascade",
            QueryFeature::DeleteRule => "delete rule",
            QueryFeature::Tree => "tree",
            QueryFeature::Subset => "subset",
        }
    }
}

/// The command a shape is sent with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShapeCommand {
    /// A read (`find`, or an `aggregate` or a count whose first stage is this filter).
    Find,
    /// A write of the matched documents (`update`, one or many).
    Update,
}

impl ShapeCommand {
    /// `find` or `update`, as the command is named.
    pub fn name(self) -> &'static str {
        match self {
            ShapeCommand::Find => "find",
            ShapeCommand::Update => "update",
        }
    }
}

/// One feature that sends a query shape, and for which model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShapeSource {
    /// The feature.
    pub feature: QueryFeature,
    /// The model whose operation sends it, by type name (the holder for populate and
    /// children, the source for copies, the deleted model for a delete rule, the tree's).
    pub model: String,
    /// What sends it, in words: `cascade of Part.name into products.parts`.
    pub what: String,
}

/// A query odm generates, with a placeholder where a run puts its values.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct QueryShape {
    /// The collection it reads or writes.
    pub collection: String,
    /// Its command.
    pub command: ShapeCommand,
    /// The filter as shown, placeholders as `?`: `{ parts.id: { $in: [?] } }`, and the sort
    /// when it has one.
    pub shape: String,
    /// The filter explained: each placeholder a value of the type of the ids it stands for
    /// (from the model's validator; an `ObjectId` when it declares none).
    pub filter: Document,
    /// The sort it is sent with, when the order matters to the query (a latest-N recompute).
    pub sort: Option<Document>,
    /// Every feature that sends it.
    pub sources: Vec<ShapeSource>,
}

/// What the winning plan of a shape reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// It reads through these indexes (by name), never the whole collection.
    Index(Vec<String>),
    /// It scans the whole collection (a `COLLSCAN` stage, possibly beside index scans).
    CollectionScan,
    /// The collection does not exist: nothing is read (an `EOF` plan).
    NoCollection,
    /// The server answered without a plan naming an index or a scan.
    Unreported,
    /// The server refused to explain the shape: its message.
    Refused(String),
}

/// One query shape, explained.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExplainedShape {
    /// The shape.
    pub shape: QueryShape,
    /// What the winning plan reads.
    pub access: Access,
    /// The winning plan's stages, outermost first (`FETCH`, `IXSCAN`); the first child's line
    /// where a stage has several.
    pub stages: Vec<String>,
    /// A declared index that would serve the shape, by name: its first key is a field the
    /// filter names, and its partial filter, if any, holds every document the filter matches
    /// (a kind's index serves that kind's queries only); `_id_` for a filter on `_id`. `None`:
    /// no model declares one.
    pub declared: Option<String>,
    /// For a shape the server would scan the collection for, and whose index is declared:
    /// what the database holds of that index, as `listIndexes` reports it. `None` for the
    /// other shapes, which are not checked.
    pub index: Option<IndexState>,
}

/// What the database holds of the declared index of a shape the server scans for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexState {
    /// `listIndexes` shows no index of its name or keys: a sync creates it.
    Missing,
    /// An index of its name or keys exists and differs from the declaration: how (the
    /// differences [`SyncReport`](crate::index::SyncReport) reports).
    Differs(Vec<String>),
    /// It exists as declared, and the planner did not choose it: hidden from the planner when
    /// `hidden`, else it judged a scan cheaper (an empty or small collection) or the filter
    /// does not let it use the index.
    Unchosen {
        /// Whether the index is hidden (`hidden: true`): the planner never uses it.
        hidden: bool,
    },
}

impl fmt::Display for IndexState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexState::Missing => f.write_str("missing"),
            IndexState::Differs(how) => write!(f, "differs: {}", how.join("; ")),
            IndexState::Unchosen { hidden: true } => f.write_str("hidden from the planner"),
            IndexState::Unchosen { hidden: false } => f.write_str("present, not chosen"),
        }
    }
}

impl ExplainedShape {
    /// Whether the shape is a problem: the server would scan the whole collection for it.
    pub fn is_problem(&self) -> bool {
        self.access == Access::CollectionScan
    }
}

/// The query shapes of a handle's models, explained: see [`Odm::explain_shapes`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ShapeReport {
    /// Every shape, by collection and shape.
    pub shapes: Vec<ExplainedShape>,
}

impl ShapeReport {
    /// The shapes the server would answer by scanning a whole collection.
    pub fn problems(&self) -> impl Iterator<Item = &ExplainedShape> {
        self.shapes.iter().filter(|s| s.is_problem())
    }

    /// Whether no shape scans a collection.
    pub fn is_clean(&self) -> bool {
        self.problems().next().is_none()
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Access::Index(names) => write!(f, "IXSCAN {}", names.join(", ")),
            Access::CollectionScan => f.write_str("COLLSCAN"),
            Access::NoCollection => f.write_str("no collection"),
            Access::Unreported => f.write_str("no plan reported"),
            Access::Refused(message) => write!(f, "refused: {message}"),
        }
    }
}

impl fmt::Display for ShapeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let problems = self.problems().count();
        writeln!(
            f,
            "{} query shapes explained, {problems} collection scans",
            self.shapes.len()
        )?;
        for s in &self.shapes {
            let q = &s.shape;
            let mark = if s.is_problem() { "PROBLEM " } else { "" };
            writeln!(
                f,
                "  {mark}{} {} {}: {}",
                q.command.name(),
                q.collection,
                q.shape,
                s.access
            )?;
        }
        Ok(())
    }
}

/// Index use on the handle.
impl Odm {
    /// Explains every query shape odm generates for the models of the handle's catalog (see
    /// [`query_shapes`]) against the live database, and reports which ones the server would
    /// answer with a collection scan.
    ///
    /// Sends one `explain` (verbosity `queryPlanner`) per shape: a read shape as a `find`, a
    /// write shape as an `update` with `multi`, which the server plans and never runs; then,
    /// when a shape would scan its collection and has a declared index, one `listIndexes` per
    /// collection holding such shapes, to tell a missing index from one the planner did not
    /// choose ([`ExplainedShape::index`]). See [`ExplainShapes`].
    ///
    /// ```no_run
    /// # async fn run(odm: &odm::Odm) -> odm::Result<()> {
    /// let report = odm.explain_shapes().await?;
    /// for scan in report.problems() {
    ///     println!("{} {}: collection scan", scan.shape.collection, scan.shape.shape);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn explain_shapes(&self) -> ExplainShapes<'_> {
        ExplainShapes {
            odm: self,
            models: Vec::new(),
        }
    }
}

/// Builder returned by [`Odm::explain_shapes`]; `.await` it.
///
/// Sends one `explain` per query shape, in the order of the report, then one `listIndexes` per
/// collection where a shape with a declared index would be a collection scan. A shape the
/// server refuses to explain is reported as [`Access::Refused`]; any other failure (an unreachable
/// server) ends the run with its error.
#[must_use = "the shapes are explained when awaited"]
#[derive(Debug)]
pub struct ExplainShapes<'a> {
    odm: &'a Odm,
    models: Vec<String>,
}

impl ExplainShapes<'_> {
    /// Only the shapes sent by the operations of these models (by type name, `Part`) or on
    /// their collections; every shape when none is named. A name no model of the catalog has
    /// is an [`Error::Unsupported`] naming the known ones.
    pub fn models<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.models.extend(names.into_iter().map(Into::into));
        self
    }

    async fn run(self) -> Result<ShapeReport> {
        let catalog = self.odm.catalog();
        let wanted = wanted_collections(catalog, &self.models)?;
        let db = self.odm.own_database();
        let mut report = ShapeReport::default();
        let mut specs = Vec::new();
        for shape in query_shapes(catalog, db.name()) {
            let chosen = self.models.is_empty()
                || wanted.contains(&shape.collection.as_str())
                || shape.sources.iter().any(|s| self.models.contains(&s.model));
            if !chosen {
                continue;
            }
            let reply = db.run_command(explain_command(&shape)).await;
            let (access, stages) = match reply {
                Ok(reply) => access_of(&winning(&reply)),
                Err(e) => match &*e.kind {
                    mongodb::error::ErrorKind::Command(c) => {
                        (Access::Refused(c.message.clone()), Vec::new())
                    }
                    _ => return Err(Error::from_driver(&shape.collection, e)),
                },
            };
            let spec = declared::declared_for(catalog, &shape);
            report.shapes.push(ExplainedShape {
                shape,
                access,
                stages,
                declared: spec.as_ref().map(IndexSpec::name),
                index: None,
            });
            specs.push(spec);
        }
        self.check_indexes(&mut report, &specs).await?;
        Ok(report)
    }

    /// The state of the declared index of each problem: one `listIndexes` per collection
    /// holding one, none when there is no problem.
    async fn check_indexes(
        &self,
        report: &mut ShapeReport,
        specs: &[Option<IndexSpec>],
    ) -> Result<()> {
        let mut listed: Vec<(String, Vec<Document>)> = Vec::new();
        for (shape, spec) in report.shapes.iter_mut().zip(specs) {
            let Some(spec) = spec.as_ref().filter(|_| shape.is_problem()) else {
                continue;
            };
            let collection = &shape.shape.collection;
            let at = match listed.iter().position(|(c, _)| c == collection) {
                Some(at) => at,
                None => {
                    let existing = super::list_indexes(self.odm, collection).await?;
                    listed.push((collection.clone(), existing));
                    listed.len() - 1
                }
            };
            shape.index = Some(declared::state(&listed[at].1, spec));
        }
        Ok(())
    }
}

impl<'a> IntoFuture for ExplainShapes<'a> {
    type Output = Result<ShapeReport>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;
    fn into_future(self) -> Self::IntoFuture {
        let span = crate::trace::operation_span!("explain_shapes", "*");
        crate::trace::boxed(span, self.run(), |r: &ShapeReport| {
            Some(r.shapes.len() as u64)
        })
    }
}

/// The collections of the models named, checked against the catalog.
fn wanted_collections<'c>(catalog: &'c Catalog, names: &[String]) -> Result<Vec<&'c str>> {
    names
        .iter()
        .map(|name| {
            catalog
                .models()
                .iter()
                .find(|m| m.type_name == name)
                .map(|m| m.collection)
                .ok_or_else(|| {
                    let known: Vec<&str> = catalog.models().iter().map(|m| m.type_name).collect();
                    Error::Unsupported(format!(
                        "no model `{name}` in the catalog (known: {})",
                        known.join(", ")
                    ))
                })
        })
        .collect()
}

/// The field odm's explained updates set: the planner needs an update, which is never run.
const EXPLAIN_FIELD: &str = "__odm_explain";

/// The `explain` of one shape, verbosity `queryPlanner`.
fn explain_command(shape: &QueryShape) -> Document {
    let (c, filter) = (shape.collection.as_str(), shape.filter.clone());
    let explained = match shape.command {
        ShapeCommand::Find => {
            let mut find = doc! { "find": c, "filter": filter };
            if let Some(sort) = &shape.sort {
                find.insert("sort", sort.clone());
            }
            find
        }
        ShapeCommand::Update => doc! { "update": c, "updates": [{
            "q": filter, "u": { "$set": { EXPLAIN_FIELD: true } }, "multi": true,
        }] },
    };
    doc! { "explain": explained, "verbosity": "queryPlanner" }
}

fn access_of(w: &Winning) -> (Access, Vec<String>) {
    let access = if !w.reported {
        Access::Unreported
    } else if w.scan {
        Access::CollectionScan
    } else if !w.indexes.is_empty() {
        Access::Index(w.indexes.clone())
    } else if w.eof {
        Access::NoCollection
    } else {
        Access::Unreported
    };
    (access, w.stages.clone())
}
