//! Bounded arrays in updates: what no guard can save is refused before sending, and raw pushes
//! are guarded as typed ones are. As a maintainer of the writes ([`Bounds`]), the guards go in
//! the filter, and a write that matched nothing is told "full" from "not found".

use bson::{Bson, Document};

use mongodb::results::UpdateResult;

use crate::engine::{ModifyCall, NextModify, NextUpdate, Step, Stepped, UpdateCall};
use crate::update::{Guard, Limit};
use crate::{Error, Model, Result};

/// The guards `update` needs on `T`'s bounded arrays: `typed` (those of typed pushes) and one
/// per raw `$push`/`$addToSet` onto a bounded array, room for as many elements as it pushes.
///
/// Refused with [`Error::BoundExceeded`] before anything is sent: a `$set`/`$setOnInsert` of a
/// whole bounded array longer than its bound, and a `$push`/`$addToSet` of more elements
/// (`$each`) than the bound, unless a `$slice` keeps the array within it.
pub(crate) fn guards_for<T: Model>(update: &Document, typed: &[Guard]) -> Result<Vec<Guard>> {
    let mut guards = typed.to_vec();
    let ops = Operators::of(update);
    for &(path, max) in (T::entry().bounds)() {
        for op in ["$set", "$setOnInsert"] {
            if let Some(Bson::Array(items)) = ops.value_of(op, path) {
                if items.len() > max as usize {
                    return Err(too_many::<T>(path, max, op, items.len()));
                }
            }
        }
        for op in ["$push", "$addToSet"] {
            let Some(value) = ops.value_of(op, path) else {
                continue;
            };
            let each = match value {
                Bson::Document(d) if d.contains_key("$each") => d,
                // One element: the typed pushes carry their guard already.
                element => {
                    if !guards.iter().any(|g| g.path == path) {
                        guards.push(Guard {
                            path: path.to_owned(),
                            limit: Limit::Room {
                                max,
                                room: 1,
                                element: (op == "$addToSet").then(|| element.clone()),
                            },
                        });
                    }
                    continue;
                }
            };
            let sliced = each
                .get("$slice")
                .and_then(|s| s.as_i64().or_else(|| s.as_i32().map(i64::from)))
                .is_some_and(|s| s.unsigned_abs() <= u64::from(max));
            if sliced {
                continue;
            }
            let n = each.get_array("$each").map_or(0, Vec::len);
            if n > max as usize {
                return Err(too_many::<T>(path, max, op, n));
            }
            // `$addToSet` may find some already there: counted as if all were new.
            if n > 0 {
                guards.push(Guard {
                    path: path.to_owned(),
                    limit: Limit::Room {
                        max,
                        room: n as u32,
                        element: None,
                    },
                });
            }
        }
    }
    Ok(guards)
}

/// The fields of the four operators that can grow an array, found in one pass over the
/// update's few operators (a plain `$set` of other fields costs one comparison per path).
struct Operators<'d>([Option<&'d Document>; 4]);

const GROWING: [&str; 4] = ["$set", "$setOnInsert", "$push", "$addToSet"];

impl<'d> Operators<'d> {
    fn of(update: &'d Document) -> Self {
        let mut found = [None; 4];
        for (op, fields) in update {
            if let (Some(at), Bson::Document(fields)) =
                (GROWING.iter().position(|g| g == op), fields)
            {
                found[at] = Some(fields);
            }
        }
        Operators(found)
    }

    /// What the update's `op` writes at `path`.
    fn value_of(&self, op: &str, path: &str) -> Option<&'d Bson> {
        let at = GROWING.iter().position(|g| *g == op)?;
        self.0[at]?.get(path)
    }
}

fn too_many<T: Model>(path: &str, max: u32, op: &str, n: usize) -> Error {
    Error::BoundExceeded {
        collection: T::COLLECTION.to_owned(),
        path: path.to_owned(),
        max,
        documents: 0,
        detail: format!("the update's `{op}` writes {n} elements; nothing was sent"),
    }
}

/// Bounded arrays: guarded pushes and the check that tells "full" from "not found".
pub(crate) mod guards {
    use bson::{doc, Document};
    use mongodb::ClientSession;

    use crate::update::{Guard, Limit};
    use crate::{Error, Model, Odm, Result};

    /// `filter` with every guard added.
    pub(crate) fn guarded(filter: Document, guards: &[Guard]) -> Document {
        if guards.is_empty() {
            return filter;
        }
        let mut all = vec![bson::Bson::Document(filter)];
        all.extend(guards.iter().map(|g| bson::Bson::Document(g.filter())));
        doc! { "$and": all }
    }

    /// The documents matching `filter`: one `aggregate`.
    pub(crate) async fn count<T: Model>(
        odm: &Odm,
        filter: Document,
        session: Option<&mut ClientSession>,
    ) -> Result<u64> {
        let coll = odm.own_collection::<T>();
        let action = coll.count_documents(filter);
        crate::engine::send!(action, session).map_err(Odm::driver_error::<T>)
    }

    /// Fails with `BoundExceeded` when documents matching `filter` have no room for a guard,
    /// `Overflow` when an increment would carry one past its field's type. One `aggregate` (a
    /// count) per guard; nothing when there are no guards.
    pub(crate) async fn refuse_full<T: Model>(
        odm: &Odm,
        filter: &Document,
        guards: &[Guard],
        mut session: Option<&mut ClientSession>,
    ) -> Result<()> {
        let coll = odm.own_collection::<T>();
        for g in guards {
            let full = doc! { "$and": [filter.clone(), { "$nor": [g.filter()] }] };
            let action = coll.count_documents(full);
            let n = crate::engine::send!(action, session.as_deref_mut())
                .map_err(Odm::driver_error::<T>)?;
            if n > 0 {
                return Err(refused::<T>(g, n, "nothing was written".to_owned()));
            }
        }
        Ok(())
    }

    /// The error of `documents` refused by `guard`.
    pub(crate) fn refused<T: Model>(guard: &Guard, documents: u64, detail: String) -> Error {
        match &guard.limit {
            Limit::Room { max, .. } => Error::BoundExceeded {
                collection: T::COLLECTION.to_owned(),
                path: guard.path.clone(),
                max: *max,
                documents,
                detail,
            },
            Limit::Range { ty, by, .. } => Error::Overflow {
                collection: T::COLLECTION.to_owned(),
                path: guard.path.clone(),
                ty: (*ty).to_owned(),
                by: *by,
                documents,
                detail,
            },
        }
    }
}

/// Bounded arrays as a maintainer of updates: an update that pushes onto one is guarded in its
/// filter, and when it matched nothing one `aggregate` per guard tells "full" from "not found".
/// An `update_many` first counts the documents with room and refuses the whole update when any
/// is full (two `aggregate`s); documents that fill up after the count are reported.
pub(crate) struct Bounds;

impl crate::engine::Maintainer for Bounds {
    /// Bounded arrays declared on the model, or guards (of typed pushes and increments) the
    /// call carries.
    fn concerns(model: &crate::engine::Described<'_>) -> bool {
        model.guarded || !(model.entry.bounds)().is_empty()
    }

    fn update<'a, T: Model>(
        mut call: UpdateCall<'a>,
        next: NextUpdate,
    ) -> Stepped<'a, UpdateCall<'a>, UpdateResult> {
        let guards = guards_for::<T>(&call.update, &call.guards)?;
        if guards.is_empty() {
            return Ok(Step::Pass(call));
        }
        let base = call.filter.clone();
        call.filter = guards::guarded(std::mem::take(&mut call.filter), &guards);
        Ok(Step::Sent(Box::pin(update_guarded::<T>(
            call, base, guards, next,
        ))))
    }

    fn modify<'a, T: Model>(
        mut call: ModifyCall<'a>,
        next: NextModify,
    ) -> Stepped<'a, ModifyCall<'a>, Option<bson::RawDocumentBuf>> {
        let guards = guards_for::<T>(&call.update, &call.guards)?;
        if guards.is_empty() {
            return Ok(Step::Pass(call));
        }
        let base = call.filter.clone();
        call.filter = guards::guarded(std::mem::take(&mut call.filter), &guards);
        Ok(Step::Sent(Box::pin(async move {
            let odm = call.odm;
            let mut session = call.session.take();
            let found = next(call.with_session(session.as_deref_mut())).await?;
            if found.is_none() {
                guards::refuse_full::<T>(odm, &base, &guards, session).await?;
            }
            Ok(found)
        })))
    }
}

/// An update with guards: for `update_many`, the count of the documents with room and the
/// refusal of the whole update if any is full, before it; after it, "full" told from "not
/// found" when nothing matched, and the documents that filled up in between reported.
async fn update_guarded<T: Model>(
    mut call: UpdateCall<'_>,
    base: Document,
    guards: Vec<Guard>,
    next: NextUpdate,
) -> Result<UpdateResult> {
    let odm = call.odm;
    let mut session = call.session.take();
    let mut with_room = None;
    if call.many {
        // Count the documents with room, then refuse the whole update, before writing, if
        // any is full: one that fills up after the count is found full by the check, one
        // that fills up after the check is missing from the update's matches: reported.
        let filter = crate::positional::filter_for_update(call.filter.clone(), &call.update);
        with_room = Some(guards::count::<T>(odm, filter, session.as_deref_mut()).await?);
        guards::refuse_full::<T>(odm, &base, &guards, session.as_deref_mut()).await?;
    }
    let result = next(call.with_session(session.as_deref_mut())).await?;
    if result.matched_count == 0 && result.upserted_id.is_none() {
        guards::refuse_full::<T>(odm, &base, &guards, session).await?;
    }
    match with_room.and_then(|n| short_of::<T>(n, result.matched_count, &guards)) {
        Some(short) => Err(short),
        None => Ok(result),
    }
}

/// The error of an `update_many` of a bounded array that updated fewer documents than had room
/// when counted (`with_room`): some filled up in between.
fn short_of<T: Model>(with_room: u64, matched: u64, guards: &[Guard]) -> Option<Error> {
    (matched < with_room).then(|| {
        let mut guard = guards[0].clone();
        guard.path = guards.iter().map(|g| g.path.as_str()).collect::<Vec<_>>().join(", ");
        let detail = format!(
            "{matched} document(s) were updated; the others changed (or stopped matching) between the count and the update"
        );
        guards::refused::<T>(&guard, with_room - matched, detail)
    })
}
