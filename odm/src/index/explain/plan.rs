//! Reading an `explain` reply: the stages of its winning plans, whatever the server's layout.
//!
//! MongoDB nests the stages of `queryPlanner.winningPlan` through `inputStage` (one child) and
//! `inputStages` (several, as under an `$or`); from 5.1, a query run by the slot-based engine
//! puts that tree under `winningPlan.queryPlan` beside a `slotBasedPlan`; a sharded collection
//! has one `winningPlan` per shard (`winningPlan.shards[].winningPlan`), and an aggregation one
//! per `$cursor` stage (`stages[0].$cursor.queryPlanner.winningPlan`). An index is named by
//! `indexName` (or only `keyPattern`), a point read of `_id` can be `IDHACK` (before 8.0) or
//! `EXPRESS_IXSCAN` (8.0). Every such layout is walked here, never the rejected plans.

use bson::{Bson, Document};

/// What the winning plans of one `explain` reply read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Winning {
    /// Whether the reply holds a winning plan at all.
    pub(crate) reported: bool,
    /// Whether a stage scans a whole collection (`COLLSCAN`).
    pub(crate) scan: bool,
    /// Whether a stage reads nothing because the collection does not exist (`EOF`).
    pub(crate) eof: bool,
    /// The indexes read, by name (`_id_` for an `IDHACK`), in the order met.
    pub(crate) indexes: Vec<String>,
    /// The stages of the first winning plan, outermost first (`FETCH`, `IXSCAN`): with
    /// several children, the first one's line.
    pub(crate) stages: Vec<String>,
}

/// The winning plans of `reply` (an `explain` command's answer).
pub(crate) fn winning(reply: &Document) -> Winning {
    let mut plans = Vec::new();
    collect_winning(reply, &mut plans);
    let mut out = Winning {
        reported: !plans.is_empty(),
        ..Winning::default()
    };
    if let Some(first) = plans.first() {
        line_of(first, &mut out.stages);
    }
    for plan in plans {
        out.walk(plan);
    }
    out
}

fn collect_winning<'a>(doc: &'a Document, out: &mut Vec<&'a Document>) {
    for (key, value) in doc {
        match (key.as_str(), value) {
            ("rejectedPlans", _) => {}
            ("winningPlan", Bson::Document(plan)) => {
                // A sharded plan holds the shards' own winning plans: those are read.
                let before = out.len();
                collect_winning(plan, out);
                if out.len() == before {
                    out.push(plan);
                }
            }
            (_, Bson::Document(d)) => collect_winning(d, out),
            (_, Bson::Array(items)) => {
                for d in items.iter().filter_map(Bson::as_document) {
                    collect_winning(d, out);
                }
            }
            _ => {}
        }
    }
}

/// The stages from `plan` down its first children: `queryPlan`, then `inputStage` or the first
/// of `inputStages` (or of `shards`).
fn line_of(plan: &Document, out: &mut Vec<String>) {
    let mut at = Some(plan);
    while let Some(stage) = at {
        if let Ok(inner) = stage.get_document("queryPlan") {
            at = Some(inner);
            continue;
        }
        if let Ok(name) = stage.get_str("stage") {
            out.push(name.to_owned());
        }
        at = stage.get_document("inputStage").ok().or_else(|| {
            ["inputStages", "shards"]
                .iter()
                .find_map(|k| stage.get_array(k).ok()?.first()?.as_document())
        });
    }
}

impl Winning {
    fn walk(&mut self, plan: &Document) {
        let stage = plan.get_str("stage").unwrap_or_default();
        match stage {
            "COLLSCAN" => self.scan = true,
            "EOF" => self.eof = true,
            _ => {}
        }
        let name = plan
            .get_str("indexName")
            .map(str::to_owned)
            .ok()
            .or_else(|| match plan.get("keyPattern") {
                _ if stage == "IDHACK" => Some("_id_".to_owned()),
                Some(Bson::Document(key)) if stage.contains("SCAN") => Some(key_name(key)),
                Some(Bson::String(key)) if stage.contains("SCAN") => Some(key.clone()),
                _ => None,
            });
        if let Some(name) = name {
            if !self.indexes.contains(&name) {
                self.indexes.push(name);
            }
        }
        for value in plan.values() {
            match value {
                Bson::Document(d) => self.walk(d),
                Bson::Array(items) => {
                    for d in items.iter().filter_map(Bson::as_document) {
                        self.walk(d);
                    }
                }
                _ => {}
            }
        }
    }
}

/// An index's default name from its key pattern (`{a: 1, b: -1}` is `a_1_b_-1`).
fn key_name(key: &Document) -> String {
    crate::catalog::default_index_name(key.iter().map(|(k, v)| {
        let kind = match v {
            Bson::Int32(n) => n.to_string(),
            Bson::Int64(n) => n.to_string(),
            Bson::Double(n) => (*n as i64).to_string(),
            Bson::String(s) => s.clone(),
            other => other.to_string(),
        };
        (k.clone(), kind)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn classic_nested_input_stages() {
        let reply = doc! { "queryPlanner": {
            "winningPlan": { "stage": "FETCH", "inputStage": {
                "stage": "IXSCAN", "indexName": "parts.id_1", "keyPattern": { "parts.id": 1 },
            } },
            "rejectedPlans": [{ "stage": "COLLSCAN" }],
        } };
        let w = winning(&reply);
        assert!(w.reported && !w.scan && !w.eof);
        assert_eq!(w.indexes, ["parts.id_1"]);
        assert_eq!(w.stages, ["FETCH", "IXSCAN"]);
    }

    #[test]
    fn slot_based_query_plan_and_shards() {
        let reply = doc! { "queryPlanner": { "winningPlan": {
            "queryPlan": { "stage": "COLLSCAN", "filter": { "a": 1 } },
            "slotBasedPlan": { "slots": "..." },
        } } };
        let w = winning(&reply);
        assert!(w.scan);
        assert_eq!(w.stages, ["COLLSCAN"]);

        let sharded = doc! { "queryPlanner": { "winningPlan": {
            "stage": "SHARD_MERGE",
            "shards": [
                { "shardName": "a", "winningPlan": { "stage": "IDHACK" } },
                { "shardName": "b", "winningPlan": { "stage": "EXPRESS_IXSCAN", "keyPattern": "{ _id: 1 }" } },
            ],
        } } };
        let w = winning(&sharded);
        assert!(!w.scan);
        assert_eq!(w.indexes, ["_id_", "{ _id: 1 }"]);
        assert_eq!(w.stages, ["IDHACK"]);
    }

    #[test]
    fn or_branches_and_missing_plans() {
        let reply = doc! { "queryPlanner": { "winningPlan": {
            "stage": "SUBPLAN", "inputStage": { "stage": "OR", "inputStages": [
                { "stage": "IXSCAN", "keyPattern": { "a": 1 } },
                { "stage": "COLLSCAN" },
            ] },
        } } };
        let w = winning(&reply);
        assert!(w.scan);
        assert_eq!(w.indexes, ["a_1"]);
        assert_eq!(w.stages, ["SUBPLAN", "OR", "IXSCAN"]);
        assert!(!winning(&doc! { "ok": 1 }).reported);
    }
}
