//! The server-side populate plan: the query and every populate level in ONE `aggregate`, each
//! relation a `$lookup` with its projection, filter, sort and next levels in its sub-pipeline.
//!
//! The `$in` plan ([`Plan::In`]) sends one `find` for the documents, then one `find` per relation
//! and level (`{_id: {$in: distinct ids}}`); the lookup plan ([`Plan::Lookup`]) sends one
//! `aggregate` on the documents' collection:
//!
//! ```text
//! [ {$match: filter}, {$sort}, {$skip}, {$limit}, {$project},
//!   {$lookup: {from: "parts", localField: "parts", foreignField: "_id", as: "__odm_p0",
//!              pipeline: [ {$match: filter and kind}, {$sort}, {$limit: per parent},
//!                          {$project}, {$lookup: {from: "suppliers", ...}} ]}} ]
//! ```
//!
//! A reference inside embedded documents or stored as a DBRef is looked up through the ids that
//! an `$addFields` computes (`$reduce` over the path, `$getField` for `$id`), rather than through
//! `localField: "items.part"`: some servers resolve such a path through an array of
//! sub-documents to nothing, silently.
//!
//! [`Plan::Auto`] chooses by the rule of [`choose`].

use std::collections::HashMap;
use std::sync::Arc;

use bson::{doc, Bson, Document, RawBsonRef, RawDocument, RawDocumentBuf};
use mongodb::options::FindOptions;
use mongodb::ClientSession;

use super::step::{with_id, ById, Fetched, Step};
use super::Populate;
use crate::decode::{decode, Reading};
use crate::document::IdKey;
use crate::model::Model;
use crate::{Error, Odm, Result};

pub use crate::engine::Plan;

/// What the cost rule knows of a query before sending it.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Levels of the deepest populate path (`parts` → 1, `parts.then(supplier)` → 2).
    pub levels: usize,
    /// Relations over all levels (each is one `find` of the `$in` plan).
    pub relations: usize,
    /// The most documents the query can return: its `limit` (`find_one`: 1), if it has one.
    pub parents: Option<u64>,
    /// Connected to a sharded cluster (`mongos`), where a target may be sharded.
    pub sharded: bool,
    /// Inside the caller's session, where a refused `aggregate` would abort its transaction.
    pub in_session: bool,
    /// Some `$lookup` of the lookup plan needs a sub-pipeline (a projection, filter, sort,
    /// kind or next level) or ids computed by an `$addFields` (DBRefs, a path through
    /// embedded documents).
    pub sub_pipelines: bool,
}

/// Parents under which [`Plan::Auto`] uses the lookup plan.
pub const LOOKUP_MAX_PARENTS: u64 = 1_000;

/// The cost rule of [`Plan::Auto`]. The `$in` plan costs `1 + levels` round trips (the
/// relations of a level run concurrently) and sends each distinct id once; the lookup plan
/// costs one round trip, but returns a referenced document once per parent that references it
/// (its bytes grow with parents × references, the `$in` plan's with distinct ids), and a
/// `$lookup` with a sub-pipeline (a projection, filter, sort, kind or next level inside it)
/// was measured 40 to 50 times slower than the `$in` plan on the development server, which
/// runs such a sub-pipeline without the `_id` index (`cargo xtask bench populate_plans`).
/// The distinct ids
/// are only known once the parents are read, so the rule bounds them by the parents the query
/// can return:
///
/// 1. sharded cluster → `In` (`$lookup` into a sharded collection runs on the shards for every
///    parent, scatter-gather; the `$in` finds are routed by `_id` or scattered once per
///    relation). A handle made by [`Odm::connect`](crate::Odm::connect) knows it from the
///    driver's monitoring; another sends one `hello` before its first query this rule would
///    send as a lookup;
/// 2. inside a session → `In` (a lookup the server refused could not be retried: the refusal
///    aborts the transaction);
/// 3. no `limit`, or one above [`LOOKUP_MAX_PARENTS`] → `In` (nothing bounds the copies of a
///    shared target);
/// 4. a next level (`levels > 1`), a sub-pipeline in any `$lookup` (a projection, filter,
///    sort and per-parent limit, kind), or ids computed by an `$addFields` (DBRefs, paths
///    through embedded documents; not measured) → `In`;
/// 5. otherwise (a page or `find_one`, relations of one level without options) → `Lookup`:
///    one round trip instead of two, measured 0.58 of the `$in` plan's time for 100 parents ×
///    20 references.
pub fn choose(shape: &Shape) -> Plan {
    if shape.relations == 0
        || shape.sharded
        || shape.in_session
        || shape.levels > 1
        || shape.sub_pipelines
    {
        return Plan::In;
    }
    match shape.parents {
        Some(n) if n <= LOOKUP_MAX_PARENTS => Plan::Lookup,
        _ => Plan::In,
    }
}

/// Prefix of the fields the pipeline adds (looked-up documents, computed ids); left out when
/// the documents are decoded.
const PREFIX: &str = "__odm_";

pub(crate) fn looked_up_field(index: usize) -> String {
    format!("{PREFIX}p{index}")
}

fn ids_field(index: usize) -> String {
    format!("{PREFIX}k{index}")
}

/// The ids stored at `path` (through embedded documents and arrays of them; for DBRefs, the
/// `$id` of those whose `$ref` is `dbref_to`), as one flat array without nulls.
fn ids_expression(path: &str, dbref_to: Option<&str>) -> Bson {
    let mut current = Bson::Array(vec![Bson::String("$$ROOT".into())]);
    for segment in path.split('.') {
        current = Bson::Document(doc! { "$reduce": {
            "input": current,
            "initialValue": [],
            "in": { "$concatArrays": ["$$value", { "$let": {
                "vars": { "v": { "$getField": { "field": segment, "input": "$$this" } } },
                "in": { "$cond": [{ "$isArray": "$$v" }, "$$v", ["$$v"]] },
            }}]},
        }});
    }
    if let Some(collection) = dbref_to {
        let get =
            |key: &str| doc! { "$getField": { "field": { "$literal": key }, "input": "$$this" } };
        current = Bson::Document(doc! { "$map": {
            "input": { "$filter": {
                "input": current,
                "cond": { "$eq": [{ "$type": "$$this" }, "object"] },
            }},
            "in": { "$cond": [{ "$eq": [get("$ref"), collection] }, get("$id"), null] },
        }});
    }
    Bson::Document(doc! { "$filter": { "input": current, "cond": { "$ne": ["$$this", null] } } })
}

/// The stages that look up `index`'th step's documents into [`looked_up_field`]`(index)`.
pub(crate) fn lookup_stages<Root: Model, T: Model>(
    p: &Populate<Root, T>,
    index: usize,
) -> Result<Vec<Document>> {
    let mut stages = Vec::new();
    let local = if p.dbref || p.path.contains('.') {
        let field = ids_field(index);
        stages.push(doc! { "$addFields": { &field: ids_expression(&p.path, p.dbref.then_some(T::COLLECTION)) } });
        field
    } else {
        p.path.clone()
    };
    let mut pipeline = Vec::new();
    let filter = match &p.filter {
        Some(f) => f.clone().into_document(T::COLLECTION)?,
        None => Document::new(),
    };
    let filter = match T::entry().kind {
        Some(kind) => kind.restrict(filter),
        None => filter,
    };
    if !filter.is_empty() {
        pipeline.push(doc! { "$match": filter });
    }
    // Sorted before the projection, as a `find` sorts: the projection may leave the sort's
    // fields out. Limited per parent only when sorted: unsorted, the limit keeps the first
    // references in their stored order, which the `$lookup`'s output does not follow.
    if let Some(sort) = &p.sort {
        pipeline.push(doc! { "$sort": sort.clone() });
        if let Some(n) = p.limit {
            pipeline.push(doc! { "$limit": i64::try_from(n).unwrap_or(i64::MAX) });
        }
    }
    if let Some(projection) = &p.projection {
        pipeline.push(doc! { "$project": with_id(projection.clone()) });
    }
    for (i, child) in p.children.iter().enumerate() {
        pipeline.extend(child.lookup_stages(i)?);
    }
    let mut lookup = doc! {
        "from": T::COLLECTION,
        "localField": &local,
        "foreignField": "_id",
    };
    if !pipeline.is_empty() {
        lookup.insert("pipeline", pipeline);
    }
    lookup.insert("as", looked_up_field(index));
    stages.push(doc! { "$lookup": lookup });
    if local != p.path {
        stages.push(doc! { "$project": { local: 0 } });
    }
    Ok(stages)
}

/// Whether `stages` are more than a plain `$lookup`: a sub-pipeline, or ids computed by an
/// `$addFields` (a path through embedded documents, DBRefs).
pub(crate) fn has_sub_pipeline(stages: &[Document]) -> bool {
    stages.iter().any(|s| {
        s.contains_key("$addFields")
            || s.get_document("$lookup")
                .is_ok_and(|l| l.contains_key("pipeline"))
    })
}

/// `raw` without the fields the pipeline added (borrowed as is when it has none).
fn without_added(raw: &RawDocument) -> Result<std::borrow::Cow<'_, RawDocument>> {
    let added = raw
        .iter()
        .any(|e| e.is_ok_and(|(k, _)| k.as_str().starts_with(PREFIX)));
    if !added {
        return Ok(std::borrow::Cow::Borrowed(raw));
    }
    let mut out = RawDocumentBuf::new();
    for element in raw {
        let (key, value) = element.map_err(|e| raw_error(None, &e.to_string()))?;
        if !key.as_str().starts_with(PREFIX) {
            out.append(key, value);
        }
    }
    Ok(std::borrow::Cow::Owned(out))
}

fn raw_error(collection: Option<&str>, message: &str) -> Error {
    Error::Encode {
        collection: collection.unwrap_or_default().to_owned(),
        what: "looked-up documents".to_owned(),
        message: message.to_owned(),
    }
}

/// Decodes the documents the `$lookup` of `p` put under `field` of each of `raws` (one per
/// document of `docs`), populates their next levels from their own looked-up fields, and
/// attaches them as the `$in` plan would: the same dangling-reference policy, order and
/// sharing (a document referenced by several parents is decoded once and shared).
pub(crate) fn attach_looked_up<Root: Model, T: Model>(
    p: &Populate<Root, T>,
    odm: &Odm,
    docs: &mut [Root],
    raws: &[&RawDocument],
    field: &str,
) -> Result<()> {
    let reading = Reading::of::<T>(odm);
    let mut index: HashMap<IdKey, usize> = HashMap::new();
    let mut fresh: Vec<T> = Vec::new();
    let mut fresh_raws: Vec<&RawDocument> = Vec::new();
    let mut per_parent: Vec<Vec<IdKey>> = Vec::with_capacity(raws.len());
    for raw in raws {
        let array = raw
            .get_array(field)
            .map_err(|e| raw_error(Some(T::COLLECTION), &e.to_string()))?;
        let mut keys = Vec::new();
        for item in array {
            let item = item.map_err(|e| raw_error(Some(T::COLLECTION), &e.to_string()))?;
            let RawBsonRef::Document(d) = item else {
                continue;
            };
            let Some(id) = d.get("_id").ok().flatten() else {
                continue;
            };
            let key = match id {
                RawBsonRef::ObjectId(oid) => IdKey::ObjectId(oid.bytes()),
                other => IdKey::of(
                    &Bson::try_from(other)
                        .map_err(|e| raw_error(Some(T::COLLECTION), &e.to_string()))?,
                ),
            };
            if !index.contains_key(&key) {
                index.insert(key.clone(), fresh.len());
                fresh.push(decode::<T>(&reading, &without_added(d)?)?);
                fresh_raws.push(d);
            }
            keys.push(key);
        }
        per_parent.push(keys);
    }
    for (i, child) in p.children.iter().enumerate() {
        child.attach_looked_up(odm, &mut fresh, &fresh_raws, &looked_up_field(i))?;
    }
    let shared: Vec<Arc<T>> = fresh.into_iter().map(Arc::new).collect();
    for (doc, keys) in docs.iter_mut().zip(per_parent) {
        let mut by_id = HashMap::with_capacity(keys.len());
        for (rank, key) in keys.into_iter().enumerate() {
            let shared = Arc::clone(&shared[index[&key]]);
            by_id.insert(key, (rank, shared));
        }
        let fetched = Fetched::new(ById { docs: by_id });
        Step::<Root>::attach(p, std::slice::from_mut(doc), fetched)?;
    }
    Ok(())
}

/// Why a lookup failed: the server refused the pipeline (which the `$in` plan may do
/// without), or anything else.
pub(crate) enum LookupError {
    Refused(mongodb::error::Error),
    Failed(Error),
}

impl From<Error> for LookupError {
    fn from(e: Error) -> Self {
        LookupError::Failed(e)
    }
}

/// The query and its populate in one `aggregate` (plus `getMore`s).
pub(crate) async fn find_with_lookup<T: Model>(
    odm: &Odm,
    filter: Document,
    options: &FindOptions,
    steps: &[Box<dyn Step<T>>],
    session: Option<&mut ClientSession>,
) -> std::result::Result<Vec<T>, LookupError> {
    let mut pipeline = vec![doc! { "$match": filter }];
    if let Some(sort) = &options.sort {
        pipeline.push(doc! { "$sort": sort.clone() });
    }
    if let Some(skip) = options.skip {
        pipeline.push(doc! { "$skip": i64::try_from(skip).unwrap_or(i64::MAX) });
    }
    // A find's limit of 0 is no limit; a negative one is a limit in one batch.
    if let Some(limit) = options.limit.filter(|l| *l != 0) {
        pipeline.push(doc! { "$limit": i64::try_from(limit.unsigned_abs()).unwrap_or(i64::MAX) });
    }
    if let Some(projection) = &options.projection {
        pipeline.push(doc! { "$project": projection.clone() });
    }
    for (i, step) in steps.iter().enumerate() {
        pipeline.extend(step.lookup_stages(i)?);
    }
    let coll = odm.raw_collection::<T>();
    let mut action = coll.aggregate(pipeline);
    if let Some(n) = options.batch_size {
        action = action.batch_size(n);
    }
    let mut raws: Vec<RawDocumentBuf> = Vec::new();
    let refused = LookupError::Refused;
    match session {
        None => {
            let mut cursor = action.await.map_err(refused)?;
            while cursor.advance().await.map_err(refused)? {
                raws.push(cursor.current().to_owned());
            }
        }
        Some(s) => {
            let mut cursor = action.session(&mut *s).await.map_err(refused)?;
            while cursor.advance(s).await.map_err(refused)? {
                raws.push(cursor.current().to_owned());
            }
        }
    }
    let reading = Reading::of::<T>(odm);
    let mut docs = Vec::with_capacity(raws.len());
    for raw in &raws {
        docs.push(decode::<T>(&reading, &without_added(raw)?)?);
    }
    let refs: Vec<&RawDocument> = raws.iter().map(|r| r.as_ref()).collect();
    for (i, step) in steps.iter().enumerate() {
        step.attach_looked_up(odm, &mut docs, &refs, &looked_up_field(i))?;
    }
    Ok(docs)
}

/// A refusal by the server as the error a forced lookup returns.
pub(crate) fn refused<T: Model>(e: mongodb::error::Error) -> Error {
    match &*e.kind {
        mongodb::error::ErrorKind::Command(c) => Error::LookupRefused {
            collection: T::COLLECTION.to_owned(),
            code: c.code,
            message: c.message.clone(),
        },
        _ => Odm::driver_error::<T>(e),
    }
}

/// Whether the server refused the command itself (an unknown stage or operator, a result past
/// its document limit), rather than the connection failing.
pub(crate) fn is_refusal(e: &mongodb::error::Error) -> bool {
    matches!(&*e.kind, mongodb::error::ErrorKind::Command(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(parents: Option<u64>) -> Shape {
        Shape {
            levels: 1,
            relations: 2,
            parents,
            sharded: false,
            in_session: false,
            sub_pipelines: false,
        }
    }

    #[test]
    fn the_cost_rule() {
        assert_eq!(choose(&shape(Some(1))), Plan::Lookup);
        assert_eq!(choose(&shape(Some(LOOKUP_MAX_PARENTS))), Plan::Lookup);
        assert_eq!(choose(&shape(Some(LOOKUP_MAX_PARENTS + 1))), Plan::In);
        assert_eq!(choose(&shape(None)), Plan::In);
        let sharded = Shape {
            sharded: true,
            ..shape(Some(1))
        };
        assert_eq!(choose(&sharded), Plan::In);
        let session = Shape {
            in_session: true,
            ..shape(Some(1))
        };
        assert_eq!(choose(&session), Plan::In);
        let nested = Shape {
            sub_pipelines: true,
            ..shape(Some(1))
        };
        assert_eq!(choose(&nested), Plan::In);
        let deeper = Shape {
            levels: 2,
            ..shape(Some(1))
        };
        assert_eq!(choose(&deeper), Plan::In);
    }

    #[test]
    fn plans_by_name() {
        assert_eq!(Plan::parse(" Lookup"), Some(Plan::Lookup));
        assert_eq!(Plan::parse("in"), Some(Plan::In));
        assert_eq!(Plan::parse("AUTO"), Some(Plan::Auto));
        assert_eq!(Plan::parse("join"), None);
    }

    #[test]
    fn ids_through_embedded_documents_and_dbrefs() {
        let e = ids_expression("drs", Some("books")).to_string();
        assert!(e.contains("\"$literal\": \"$id\""), "{e}");
        assert!(e.contains("\"books\""), "{e}");
        assert!(e.contains("\"field\": \"drs\""), "{e}");
    }
}
